"""3-3 Fusion: concat → W^O → residual, each switchable; what of each token survives, which heads reach each dim."""

from typing import Any

import torch
from torch.nn import functional as F

from dragon.analyze import rounded
from dragon.attention import MultiHeadAttention
from dragon.config import HEADS
from dragon.engine import Reading, default_dragon
from dragon.findings import Finding
from dragon.lessons.slices import head_weights
from dragon.margins import SHARE_MARGIN, accepted_buckets, bucket, edge_margin, question

STEPS = ("concat", "w_o", "residual")  # the order the block applies them
DECIMALS = 4
KEEP_EDGES = (0.2, 0.6)  # a mean cosine: < 0.2 "almost nothing", 0.2–0.6 "some", ≥ 0.6 "most" (game.KEEP_BUCKETS)
REACH_EDGES = (2, 5)  # heads reaching an output number: 1 "one", 2–4 "a few", 5+ "all of them" (game.REACH_BUCKETS)
# 3-3's second prediction (ui/rooms/rethink.py): the two keeps on another text, none of whose numbers the page has
# shown; each of these is decided by a clear margin (tests/test_rethink.py: one accepted bucket each).
AGAIN_TEXTS = {
    "zh": ("床前明月光，疑是地上霜。", "春眠不觉晓，处处闻啼鸟。", "我们提出一种新的注意力方法，实验表明它更快。",
           "你好！今天天气怎么样？"),
    "en": ("The cat sat on the mat because it was tired.", "We propose a new method; experiments show it is faster.",
           "Hello! How are you today?", "The moon is bright and I miss my home tonight."),
}
FEW = REACH_EDGES[1]  # "a few" heads: 2 to FEW - 1


def head_outputs(mha: MultiHeadAttention, reading: Reading) -> torch.Tensor:
    """(h, T, d_head): each head's weighted V at the visible tokens, from the reading's real maps."""
    x = reading.x  # (T + 1, d) sink first
    d, h, dh = mha.d_model, mha.n_heads, mha.d_head
    w_in, b_in = _cpu(mha.in_proj)  # (3d, d), (3d,) or None: packed [W_Q; W_K; W_V]
    w_v, b_v = w_in[2 * d :], None if b_in is None else b_in[2 * d :]  # the W_V rows: (d, d), (d,)
    v = F.linear(x, w_v, b_v).view(-1, h, dh).transpose(0, 1)  # 1. project: (T + 1, d) → (h, T + 1, d_head)
    return (reading.weights @ v)[:, 1:]  # 2. attend: (h, T, d_head), visible query rows


def block_output(
    mha: MultiHeadAttention,
    reading: Reading,
    w_o: bool = True,
    residual: bool = True,
    heads: torch.Tensor | None = None,
) -> torch.Tensor:
    """(T, d): the block's output at the visible tokens with W^O and the residual switched on or off.
    W^O off puts the identity in its place: the heads stay side by side in their own columns, never mixed.
    `heads` (h, T, d_head) saves recomputing head_outputs when several switches are tried."""
    heads = head_outputs(mha, reading) if heads is None else heads  # (h, T, d_head)
    x = reading.x[1:]  # (T, d) the tokens' input
    concat = heads.transpose(0, 1).reshape(x.shape)  # 3. concat: (T, h · d_head) = (T, d)
    fused = F.linear(concat, *_cpu(mha.out_proj)) if w_o else concat  # 4. W^O mixes the heads (or not)
    out = x + fused if residual else fused  # 5. residual: the input rides along
    if mha.norm is not None:
        out = F.layer_norm(out, mha.norm.normalized_shape, *_cpu(mha.norm), mha.norm.eps)
    return out


def _cpu(layer: torch.nn.Module) -> tuple[torch.Tensor, torch.Tensor | None]:
    """A layer's weight and bias as CPU tensors (the shared dragon itself stays where it is)."""
    bias = layer.bias
    return layer.weight.detach().cpu(), None if bias is None else bias.detach().cpu()


def keep(out: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """(T,): cosine of each token's output to its input — how much of what it was survives."""
    return F.cosine_similarity(out, x, dim=-1)


def head_reach(mha: MultiHeadAttention, heads: torch.Tensor, w_o: bool = True) -> torch.Tensor:
    """(h, d): each head's share of each output dim's energy over the text's tokens, from head_outputs (h, T,
    d_head) (columns sum to 1, or to 0 where no head writes anything). With W^O off, dim j carries only head
    j // d_head."""
    if w_o:
        parts = torch.stack([heads[h] @ head_weights(mha, h).w_o.T for h in range(mha.n_heads)])  # (h, T, d)
    else:
        h_, T, dh = heads.shape
        parts = torch.zeros(h_, T, h_ * dh)
        for h in range(h_):
            parts[h, :, h * dh : (h + 1) * dh] = heads[h]  # (T, d_head) in its own block of columns
    energy = parts.pow(2).sum(dim=1)  # (h, d)
    total = energy.sum(dim=0, keepdim=True)  # (1, d)
    return torch.where(total > 1e-12, energy / total.clamp_min(1e-12), torch.zeros_like(energy))


QUIET = 0.01  # an output dim whose energy is under this share of the loudest dim's: almost nothing reaches it


def quiet_dims(mha: MultiHeadAttention, heads: torch.Tensor, w_o: bool = True) -> torch.Tensor:
    """(d,) bool: the output dims almost nothing reaches (energy < QUIET × the loudest dim's). Their shares in
    head_reach are shares of almost nothing (a silent head's own block with W^O off), drawn apart, not as "many"."""
    if w_o:
        parts = torch.stack([heads[h] @ head_weights(mha, h).w_o.T for h in range(mha.n_heads)])  # (h, T, d)
        energy = parts.pow(2).sum(dim=(0, 1))  # (d,)
    else:
        energy = heads.pow(2).sum(dim=1).flatten()  # (h·d_head,): dim j is head j // d_head's own
    return energy < QUIET * energy.max().clamp_min(1e-12)


def weight_reach(mha: MultiHeadAttention, w_o: bool = True) -> torch.Tensor:
    """(h, d): each head's share of the |W^O| mass that feeds each output dim (rows of W^O, column blocks per
    head); the identity in place of W^O gives each dim to exactly one head. Depends on weights only."""
    d, dh = mha.d_model, mha.d_head
    w = mha.out_proj.weight.detach().cpu().abs() if w_o else torch.eye(d)  # (d_out, d_in)
    mass = w.view(d, mha.n_heads, dh).sum(dim=-1).T  # (h, d_out)
    return mass / mass.sum(dim=0, keepdim=True).clamp_min(1e-12)


def heads_per_dim(reach: torch.Tensor) -> float:
    """How many heads, in effect, feed an output dim (inverse Simpson index 1/Σ share², averaged over the dims
    anything reaches): 1 = one head per dim, h = all heads equally."""
    live = reach.sum(dim=0) > 0.5  # (d,) dims some head writes to
    return float((1.0 / reach[:, live].pow(2).sum(dim=0)).mean()) if live.any() else 0.0


def fusion(mha: MultiHeadAttention, reading: Reading) -> dict:
    """The four switch settings of W^O and the residual, measured on the text's tokens."""
    x = reading.x[1:]  # (T, d)
    heads = head_outputs(mha, reading)  # (h, T, d_head)
    switches, per_token = [], {}
    for w_o in (True, False):
        for residual in (True, False):
            k = keep(block_output(mha, reading, w_o, residual, heads), x)  # (T,)
            per_token[w_o, residual] = k
            switches.append(
                {"w_o": w_o, "residual": residual, "keep": round(float(k.mean()), DECIMALS),
                 "keep_per_token": rounded(k, DECIMALS)}
            )
    reach = {w_o: head_reach(mha, heads, w_o) for w_o in (True, False)}
    quiet = {w_o: quiet_dims(mha, heads, w_o) for w_o in (True, False)}
    wreach = {w_o: weight_reach(mha, w_o) for w_o in (True, False)}
    dh = mha.d_head
    return {
        "tokens": reading.tokens,
        "heads": list(HEADS[: mha.n_heads]),
        "d_model": mha.d_model,
        "d_head": dh,
        "steps": list(STEPS),
        "keep_with_residual": switches[0]["keep"],
        "keep_without_residual": switches[1]["keep"],
        "keep_per_token_with_residual": rounded(per_token[True, True], DECIMALS),
        "keep_per_token_without_residual": rounded(per_token[True, False], DECIMALS),
        "switches": switches,
        "reach": {"w_o_on": rounded(reach[True], DECIMALS), "w_o_off": rounded(reach[False], DECIMALS)},
        "quiet_dims": {"w_o_on": quiet[True].tolist(), "w_o_off": quiet[False].tolist()},
        "weight_reach": {"w_o_on": rounded(wreach[True], DECIMALS), "w_o_off": rounded(wreach[False], DECIMALS)},
        "heads_per_dim": {
            "w_o_on": round(heads_per_dim(reach[True]), 3),
            "w_o_off": round(heads_per_dim(reach[False]), 3),
        },
        "weight_heads_per_dim": {
            "w_o_on": round(heads_per_dim(wreach[True]), 3),
            "w_o_off": round(heads_per_dim(wreach[False]), 3),
        },
        "block_of_dim": [j // dh for j in range(mha.d_model)],
        "head_sizes": rounded(reading.head_sizes, DECIMALS),
    }


REACH_MIN = 0.01  # a head "writes into" an output number when it holds at least this share of the weights into it


def weight_heads(f: dict) -> int:
    """The fewest heads with weights into any one output number (W^O on): a fact of the weights, not of the text."""
    reach = torch.tensor(f["weight_reach"]["w_o_on"])  # (h, d)
    return int((reach >= REACH_MIN).sum(dim=0).min())


def weakest_weight(f: dict) -> float:
    """The smallest share of an output number's W^O weights that any head holds (W^O on)."""
    return float(torch.tensor(f["weight_reach"]["w_o_on"]).min())


def effective_heads(f: dict) -> float:
    """How many heads, in effect, make up each output number with W^O on (measured on the text)."""
    return float(f["heads_per_dim"]["w_o_on"])


def answer_key(f: dict, keep_edges: tuple[float, ...], reach_edges: tuple[float, ...]) -> tuple[list, list[int], int]:
    """3-3's right answers, from the measurement: the order, the keep buckets within 5 points of the measured
    cosine without the residual, and the bucket of how many heads have weights into each output number."""
    keep = accepted_buckets(f["keep_without_residual"], keep_edges)
    return f["steps"], keep, bucket(weight_heads(f), reach_edges)


def again_key(f: dict, keep_edges: tuple[float, ...]) -> dict[str, list[int]]:
    """3-3's second prediction on a text: the keep buckets within 5 points of the mean cosine of output to input with
    the residual off (`off`) and on (`on`)."""
    return {"off": accepted_buckets(f["keep_without_residual"], keep_edges),
            "on": accepted_buckets(f["keep_with_residual"], keep_edges)}


def read_counts(f: dict, w_o: bool = False) -> tuple[list[int], float]:
    """3-3's reading of the switches picture: how many heads reach each output number (the dims anything reaches)
    with W^O on or off, and the margin that decides it: the smallest share of a head counted minus the largest share
    of a head not counted, over the dims (1.0 with W^O off: one head holds all of a number, the others nothing)."""
    reach = torch.tensor(f["reach"]["w_o_on" if w_o else "w_o_off"])  # (h, d)
    live = reach[:, reach.sum(dim=0) > 0.5]  # (h, dims reached)
    counted = live >= REACH_MIN
    counts = counted.sum(dim=0)
    low = torch.where(counted, live, torch.ones_like(live)).min(dim=0).values
    high = torch.where(counted, torch.zeros_like(live), live).max(dim=0).values
    return counts.tolist(), float((low - high).min()) if counts.numel() else 0.0


def read_answer(f: dict, edges: tuple[float, ...]) -> int | None:
    """The reach bucket of 3-3's reading (W^O off: how many heads reach each output number), or None if the output
    numbers do not all fall in one bucket (then the question would have no single answer)."""
    buckets = {bucket(n, edges) for n in read_counts(f)[0]}
    return buckets.pop() if len(buckets) == 1 else None


# --- what 3-3 says about a measurement, as data (dragon/findings.py): each sentence with what makes it true ---


def measured(f: dict) -> dict:
    """The values 3-3's sentences are about, read off one fusion() result."""
    on = torch.tensor(f["reach"]["w_o_on"])  # (h, d)
    h = on.shape[0]
    live = on.sum(dim=0) > 0.5
    off_counts, off_margin = read_counts(f, w_o=False)
    setting = {(s["w_o"], s["residual"]): s for s in f["switches"]}
    top = on[:, live].sort(dim=0, descending=True).values  # (h, dims) shares, largest first
    return {
        "h": h,
        "keep_with": f["keep_with_residual"],
        "keep_without": f["keep_without_residual"],
        "keep_without_setting": setting[True, False]["keep"],  # the same number, as the switches show it
        "keep_buckets": accepted_buckets(f["keep_without_residual"], KEEP_EDGES),
        "keep_per_token_with": f["keep_per_token_with_residual"],
        "keep_residual_off": [setting[w, False]["keep"] for w in (True, False)],  # W^O on and off
        "weight_heads": weight_heads(f),  # fewest heads with weights into any one output number
        "weakest_weight": weakest_weight(f),
        "effective": effective_heads(f),
        "effective_off": f["heads_per_dim"]["w_o_off"],
        "silent": [i for i in range(h) if float(on[i].max()) < REACH_MIN],  # heads that send nothing to any number
        "little": float((on[:, live] < SHARE_MARGIN).sum(dim=0).float().mean()),  # heads under 5 % of a number, mean
        "top_few": float(top[: FEW - 1].sum(dim=0).mean()),  # the share the FEW - 1 = 4 largest hold, mean
        "off_counts": off_counts,  # heads reaching each number with W^O off
        "off_margin": off_margin,
        "weight_off_one_hot": bool((torch.tensor(f["weight_reach"]["w_o_off"]).max(dim=0).values == 1).all()),
    }


def near_zero(v: float) -> bool:
    """A cosine "near 0": inside the "almost nothing" answer, on either side of 0."""
    return abs(v) < KEEP_EDGES[0]


def residual_keeps(m: dict) -> bool:
    """The lesson's "the residual keeps the original information": with it most is kept, without it clearly less."""
    return m["keep_with"] >= KEEP_EDGES[1] and m["keep_with"] - m["keep_without"] >= SHARE_MARGIN


def few_and_silent(m: dict) -> bool:
    """On this text only a few heads, in effect, make up each number, and some heads send nothing at all."""
    return m["effective"] <= m["h"] / 2 and bool(m["silent"])


FINDINGS: tuple[Finding, ...] = (
    Finding("u_keep_res", lambda m: m["keep_without"] == m["keep_without_setting"]
            and bucket(m["keep_without"], KEEP_EDGES) in m["keep_buckets"],
            "residual off: the mean cosine shown (the switches' setting) and its answer bucket", always=True),
    Finding("u_reach_res", lambda m: m["weight_heads"] >= 1 and m["weakest_weight"] >= REACH_MIN,
            "W^O on: every output number has weights from that many heads, the weakest holding that share",
            always=True),
    Finding("u_reach_few", few_and_silent,
            "on this text only a few heads, in effect, make up each number, and some heads send nothing",
            group="reach"),
    Finding("u_reach_many", lambda m: not few_and_silent(m),
            "on this text that many heads, in effect, make up each number", group="reach"),
    Finding("u_hpd", lambda m: m["little"] > m["h"] / 2, "most heads send under 5 % of an output number", group="hpd"),
    Finding("u_hpd_even", lambda m: m["little"] <= m["h"] / 2, "most heads send 5 % or more of an output number",
            group="hpd"),
    Finding("u_hpd_off", lambda m: set(m["off_counts"]) == {1} and m["off_margin"] >= 1 - 1e-6
            and m["effective_off"] == 1.0 and m["weight_off_one_hot"],
            "W^O off: each output number comes from exactly one head", always=True),
    Finding("u_fact_kept", residual_keeps, "the lesson's claim holds: the residual keeps most of each token's input",
            group="fact"),
    Finding("u_fact_lost", lambda m: not residual_keeps(m), "the residual did not keep what the lesson says",
            group="fact"),
    Finding("why:3-3:mix", lambda m: m["weight_heads"] == m["h"],
            "the why: every output number has some weight from every head", always=True),
    Finding("why:3-3:few", lambda m: 2 <= m["effective"] < FEW and m["top_few"] > 0.5,
            "the why: on the text a few heads, in effect, make up most of each output number", always=True),
    Finding("why:3-3:near_zero", lambda m: all(near_zero(v) for v in m["keep_residual_off"]),
            "the why: without the residual the output hardly resembles the input (|mean cosine| < 0.2)",
            always=True),
    Finding("why:3-3:keeps", lambda m: min(m["keep_per_token_with"]) >= KEEP_EDGES[1],
            "the why: with the residual each word keeps most of what it was (every cosine ≥ 0.6)", always=True),
)


# --- the answer key: each scored question, its accepted answers, the measured value, the deciding margin ---


def questions(level: Any, lang: str) -> list[dict]:
    """3-3's questions (`level`: a fusion level): the order, what a token keeps without the residual, how many heads
    reach an output number, and the reading off the switches."""
    f = fusion(default_dragon().attention, default_dragon().read(level.text[lang], lang))
    steps, keep, reach = answer_key(f, KEEP_EDGES, REACH_EDGES)
    cos = f["keep_without_residual"]
    counts, gap = read_counts(f)  # the reading off the switches: W^O off, heads per output number
    return [
        question("order", steps, steps, None, "exact"),
        question("keep", keep, cos, edge_margin(cos, KEEP_EDGES) if len(keep) == 1 else SHARE_MARGIN, "cosine bucket"),
        question("reach", [reach], weight_heads(f), weakest_weight(f) - REACH_MIN, "share"),
        question("read", [read_answer(f, REACH_EDGES)], sorted(set(counts)), gap, "share"),
    ]

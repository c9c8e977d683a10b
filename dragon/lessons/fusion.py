"""3-3 Fusion: concat → W^O → residual, each switchable; what of each token survives, which heads reach each dim."""

import torch
from torch.nn import functional as F

from ..analyze import rounded
from ..attention import MultiHeadAttention
from ..config import HEADS
from ..engine import Reading
from ..margins import accepted_buckets, bucket
from .slices import head_weights

STEPS = ("concat", "w_o", "residual")  # the order the block applies them
DECIMALS = 4


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
            )  # fmt: skip
    reach = {w_o: head_reach(mha, heads, w_o) for w_o in (True, False)}
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

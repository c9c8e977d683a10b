"""3-5 The long scroll: full attention's time and the bytes of its T × T maps as the text grows, a sliding-window +
global sparse attention computed in O(T·w) (a banded kernel) on the same lengths, and how much of each of the dragon's
heads' links between words a window of w words keeps."""

import math
import statistics
import time
from collections.abc import Callable, Sequence

import torch
from torch.nn import functional as F

from dragon.checks import brief, whole
from dragon.config import HEADS, DragonConfig
from dragon.findings import Finding
from dragon.lessons.race import synchronize, timed
from dragon.margins import SHARE_MARGIN, question
from dragon.runtime.device import best_device

LENGTHS = (64, 128, 256, 512, 1024, 2048, 4096)  # T, from a poem to a long scroll
MAX_LENGTH = 16384  # the longest T a call may ask for (full attention's maps: h·T² numbers, 8.6 GB at 16,384)
MAX_LENGTHS = 8
WINDOW = 8  # w: each word sees the w words before it and the w after it
GLOBALS = 1  # g: the first positions, which every word sees and which see every word (the dragon's sink is one)
MAX_WINDOW = 64
REPEATS = 5  # timed calls per path and length (interleaved), medians and ranges reported
SAME = 1e-4  # the banded kernel equals the same pattern computed densely (masked) to this


def check_lengths(lengths: object) -> list[int]:
    """The lengths as sorted unique ints in 2·GLOBALS…MAX_LENGTH, or a ValueError that says what is wrong."""
    if not isinstance(lengths, list | tuple) or not lengths:
        raise ValueError(f"lengths must be a non-empty list of whole numbers, e.g. {list(LENGTHS)}")
    if len(lengths) > MAX_LENGTHS:
        raise ValueError(f"at most {MAX_LENGTHS} lengths at once, not {len(lengths)}")
    out = []
    for n in lengths:
        if isinstance(n, bool) or not isinstance(n, int | float) or (isinstance(n, float) and not n.is_integer()):
            raise ValueError(f"lengths must be whole numbers; {brief(n)} is not one")
        out.append(whole(n, "each length", 2 * GLOBALS, MAX_LENGTH))
    return sorted(set(out))


def check_window(w: object) -> int:
    return whole(w, "window", 1, MAX_WINDOW)


# --- the two ways of attending --------------------------------------------------------------------------------------


def full_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, int]:
    """softmax(QKᵀ/√d_head)V as the formula says it, every word with every word. q, k, v: (h, T, d_head).
    Returns the output (h, T, d_head) and the bytes of the score matrices it made (h × T × T, as allocated)."""
    scores = q @ k.transpose(-2, -1)  # (h, T, T): the T² that grows
    scores.mul_(1 / math.sqrt(q.shape[-1]))
    weights = softmax_in_place(scores)  # (h, T, T), the same memory
    return weights @ v, scores.numel() * scores.element_size()


def softmax_in_place(x: torch.Tensor) -> torch.Tensor:
    """softmax over the last dim, written over x (exp(x − max) / Σ): one T × T matrix made, not three."""
    x.sub_(x.amax(dim=-1, keepdim=True)).exp_()
    return x.div_(x.sum(dim=-1, keepdim=True))


def shifted(x: torch.Tensor, w: int) -> list[torch.Tensor]:
    """(h, T, d) → 2w+1 views (h, T, d): the rows s − w places away from each position (zero rows past the ends),
    slices of one padded copy: the band every word sees, one offset at a time."""
    T = x.shape[1]
    padded = F.pad(x, (0, 0, w, w))  # (h, T + 2w, d)
    return [padded[:, s : s + T] for s in range(2 * w + 1)]


def band_mask(T: int, w: int, g: int, device: torch.device) -> torch.Tensor:
    """(T, 2w+1) True where a band slot holds a real key that is not a global one (globals are counted once, apart)."""
    i = torch.arange(T, device=device)[:, None]
    j = i + torch.arange(-w, w + 1, device=device)[None, :]  # the key each slot holds
    return (j >= g) & (j < T)


def sparse_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, w: int = WINDOW, g: int = GLOBALS
) -> tuple[torch.Tensor, int]:
    """Sliding window + global attention in O(T·w): each word attends to the w words on each side and to the first g
    positions; those g positions attend to every word. q, k, v: (h, T, d_head). Returns the output (h, T, d_head) and
    the bytes of the score matrices it made (h × T × (2w+1+g), plus h × g × T for the global rows)."""
    T, dh = q.shape[1:]
    scale = 1 / math.sqrt(dh)
    # 1. every word against its band of 2w+1 keys, one offset at a time: (h, T, 2w+1), no T × T matrix anywhere
    band = torch.stack([(q * k_s).sum(-1) for k_s in shifted(k, w)], dim=-1) * scale
    band = band.masked_fill(~band_mask(T, w, g, q.device), float("-inf"))  # past the ends, or a global key
    # 2. every word against the g global keys: (h, T, g)
    glob = q @ k[:, :g].transpose(-2, -1) * scale
    # 3. one softmax over both, then the weighted values, again one offset at a time
    weights = F.softmax(torch.cat([glob, band], dim=-1), dim=-1)  # (h, T, g + 2w+1)
    out = weights[..., :g] @ v[:, :g]  # (h, T, d_head)
    for s, v_s in enumerate(shifted(v, w)):
        out += weights[..., g + s, None] * v_s
    # 4. the global positions see every word (g rows of full attention)
    out[:, :g], rows = full_rows(q[:, :g], k, v)
    return out, (band.numel() + glob.numel()) * band.element_size() + rows


def full_rows(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, int]:
    """A few query rows against every key: (h, g, d_head) and the bytes of their scores (h × g × T)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (h, g, T)
    return F.softmax(scores, dim=-1) @ v, scores.numel() * scores.element_size()


def pattern(T: int, w: int = WINDOW, g: int = GLOBALS, device: torch.device | None = None) -> torch.Tensor:
    """(T, T) True where the sparse pattern lets query i see key j: |i − j| ≤ w, or i or j among the first g."""
    i = torch.arange(T, device=device)
    near = (i[:, None] - i[None, :]).abs() <= w
    return near | (i[:, None] < g) | (i[None, :] < g)


def masked_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, w: int = WINDOW, g: int = GLOBALS
) -> torch.Tensor:
    """The same sparse pattern computed densely (T × T scores, the pattern's complement at −∞): the reference the
    banded kernel is checked against, never timed."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~pattern(q.shape[1], w, g, q.device), float("-inf"))
    return F.softmax(scores, dim=-1) @ v


# --- the measurement ------------------------------------------------------------------------------------------------


def qkv(T: int, config: DragonConfig, generator: torch.Generator, device: torch.device) -> tuple[torch.Tensor, ...]:
    """Queries, keys and values of a random text of T tokens through a fresh attention's packed projection."""
    d, h = config.d_model, config.n_heads
    x = torch.randn(T, d, generator=generator)
    w_in = torch.randn(3 * d, d, generator=generator) / math.sqrt(d)
    q, k, v = (x @ w_in.T).split(d, dim=-1)  # 3 × (T, d)
    return tuple(t.view(T, h, d // h).transpose(0, 1).contiguous().to(device) for t in (q, k, v))  # (h, T, d_head)


def measure(
    lengths: Sequence[int] = LENGTHS,
    w: int = WINDOW,
    g: int = GLOBALS,
    config: DragonConfig = DragonConfig(),
    device: torch.device | None = None,
    repeats: int = REPEATS,
    seed: int = 0,
    progress: Callable[..., object] | None = None,
) -> dict:
    """Full against sparse attention at each length: medians and ranges of `repeats` interleaved timed calls after a
    warm-up, the score matrices' bytes each made, the largest difference between the sparse output and the full one
    (what the window loses), and between the banded kernel and the same pattern computed densely (that the kernel is
    right; checked up to 1,024, where the dense reference is still small)."""
    T_list, w = check_lengths(list(lengths)), check_window(w)
    device = device or best_device()
    generator = torch.Generator().manual_seed(seed)
    started = time.perf_counter()
    rows = []
    with torch.inference_mode():
        for n, T in enumerate(T_list):
            q, k, v = qkv(T, config, generator, device)
            full_out, full_bytes = full_attention(q, k, v)
            sparse_out, sparse_bytes = sparse_attention(q, k, v, w, g)
            kernel = float((sparse_out - masked_attention(q, k, v, w, g)).abs().max()) if T <= 1024 else None
            lost = float((sparse_out - full_out).abs().max())
            largest = float(full_out.abs().max())
            del full_out, sparse_out
            full = lambda q=q, k=k, v=v: full_attention(q, k, v)  # noqa: E731
            sparse = lambda q=q, k=k, v=v: sparse_attention(q, k, v, w, g)  # noqa: E731
            t_full, t_sparse = [], []
            for _ in range(repeats):  # interleaved: noise hits both paths alike
                t_full.append(timed(full, device))
                t_sparse.append(timed(sparse, device))
            rows.append({"T": T, "full": t_full, "sparse": t_sparse, "full_bytes": full_bytes,
                         "sparse_bytes": sparse_bytes, "kernel_diff": kernel, "max_abs_diff": lost,
                         "max_abs_output": largest})
            synchronize(device)
            if progress is not None:
                progress((n + 1) / len(T_list), f"T = {T}")
    ms = lambda ts: round(statistics.median(ts) * 1e3, 4)  # noqa: E731
    span = lambda ts: [round(min(ts) * 1e3, 4), round(max(ts) * 1e3, 4)]  # noqa: E731
    return {
        "device": str(device),
        "d_model": config.d_model,
        "n_heads": config.n_heads,
        "d_head": config.d_head,
        "window": w,
        "globals": g,
        "lengths": T_list,
        "repeats": repeats,
        "full_ms": [ms(r["full"]) for r in rows],
        "sparse_ms": [ms(r["sparse"]) for r in rows],
        "full_range_ms": [span(r["full"]) for r in rows],
        "sparse_range_ms": [span(r["sparse"]) for r in rows],
        "full_bytes": [r["full_bytes"] for r in rows],
        "sparse_bytes": [r["sparse_bytes"] for r in rows],
        "kernel_diff": [r["kernel_diff"] for r in rows],
        "max_abs_diff": [r["max_abs_diff"] for r in rows],  # sparse against full: what the window loses
        "max_abs_output": [r["max_abs_output"] for r in rows],  # the full output's largest value, for scale
        "threads": torch.get_num_threads(),
        "seconds": round(time.perf_counter() - started, 3),
    }


def crossing(result: dict) -> dict:
    """Where the curves cross: the first length from which every sparse call beat every full call (the ranges apart:
    decided by more than the spread of the runs), and the lengths whose ranges overlap (no verdict there). None when
    sparse never clearly wins on the lengths measured."""
    apart = [fr[0] > sr[1] for fr, sr in zip(result["full_range_ms"], result["sparse_range_ms"], strict=True)]
    behind = [sr[0] > fr[1] for fr, sr in zip(result["full_range_ms"], result["sparse_range_ms"], strict=True)]
    first = next((i for i in range(len(apart)) if all(apart[i:])), None)
    lengths = result["lengths"]
    return {
        "from": None if first is None else lengths[first],
        "undecided": [T for T, a, b in zip(lengths, apart, behind, strict=True) if not a and not b],
        "sparse_behind": [T for T, b in zip(lengths, behind, strict=True) if b],
    }


def growth(result: dict) -> dict:
    """How each path's time and bytes grow when T doubles, between the two longest lengths measured (full: ×4 for the
    bytes, the time towards ×4; sparse: ×2)."""
    T, a, b = result["lengths"], -2, -1
    doubled = T[b] / T[a]
    return {
        "doubled": doubled,
        "full_time": result["full_ms"][b] / result["full_ms"][a],
        "sparse_time": result["sparse_ms"][b] / result["sparse_ms"][a],
        "full_bytes": result["full_bytes"][b] / result["full_bytes"][a],
        "sparse_bytes": result["sparse_bytes"][b] / result["sparse_bytes"][a],
    }


# --- the dragon's heads through a window ------------------------------------------------------------------------------


def window_shares(readings: Sequence, w: int = WINDOW, speaks: float = 0.3) -> dict:
    """For each of the dragon's heads, the share of its links between different words (attention from a word to
    another word, the sink and a word's look at itself left out) that lies within w words, over the query rows where
    the head links at least `speaks` of its attention; and how many such rows each head had."""
    w = check_window(w)
    kept, total, rows = torch.zeros(len(HEADS)), torch.zeros(len(HEADS)), torch.zeros(len(HEADS), dtype=torch.long)
    for reading in readings:
        links = reading.weights[:, 1:, 1:].float()  # (h, T, T) among the words, the sink left out
        T = links.shape[-1]
        i = torch.arange(T)
        apart = (i[:, None] - i[None, :]).abs()  # (T, T) distance in words
        links = links.masked_fill(apart == 0, 0.0)  # a word looking at itself is no link
        speaking = links.sum(-1) >= speaks  # (h, T) rows where the head links
        near = (links * (apart <= w)).sum(-1)  # (h, T)
        kept += (near * speaking).sum(-1)
        total += (links.sum(-1) * speaking).sum(-1)
        rows += speaking.sum(-1)
    return {head: {"kept": round(float(kept[n] / total[n]), 4) if total[n] > 0 else None, "rows": int(rows[n])}
            for n, head in enumerate(HEADS)}


HEAD_WINDOW = 4  # the window the dragon's heads are read through: about a Tang line (five or seven characters)


def heads_through_window(readings: Sequence, w: int = HEAD_WINDOW) -> dict:
    """Each of the dragon's heads through a window of w words on these readings (the lesson's texts: dragon/api.py
    scroll_readings): the share of its links kept, the rows it linked in, and the most and least any head keeps."""
    shares = window_shares(readings, w)
    kept = [v["kept"] for v in shares.values() if v["kept"] is not None]
    return {"window": w, "heads": shares, "most_kept": max(kept), "least_kept": min(kept)}


# --- what 3-5 may say, as data (dragon/findings.py) -----------------------------------------------------------------


def measured(result: dict, heads: dict | None = None) -> dict:
    """The values 3-5's sentences are about, read off one measurement (and the heads through the window, if given)."""
    grown = growth(result)
    return {
        **grown,
        **({} if heads is None else {"most_kept": heads["most_kept"], "least_kept": heads["least_kept"]}),
        "bytes_square": all(b == result["n_heads"] * T * T * 4 for T, b in zip(result["lengths"], result["full_bytes"],
                                                                                   strict=True)),
        "kernel_right": all(d is None or d <= SAME for d in result["kernel_diff"]),
        "lost": max(result["max_abs_diff"]),
        "cross": crossing(result)["from"],
        # the why's "slower on short texts": the medians, as the chart draws them (a single preempted 0.06 ms full call
        # can reach a window call's range on a busy machine; the medians stand ~7 × apart at T = 64)
        "short_behind": result["sparse_ms"][0] > result["full_ms"][0],
    }


FINDINGS: tuple[Finding, ...] = (
    Finding("ls_bytes",
            lambda m: m["bytes_square"] and m["full_bytes"] == m["doubled"] ** 2 and m["sparse_bytes"] < 2.2,
            "full attention's score bytes are h·T²·4 (doubling T multiplies them by four); the window's only about "
            "double", always=True),
    Finding("ls_kernel", lambda m: m["kernel_right"],
            "the banded kernel computes exactly the sparse pattern (checked against it computed densely)", always=True),
    Finding("ls_full_grows", lambda m: m["full_time"] > m["sparse_time"],
            "between the two longest lengths full attention's time grew faster than the sparse one's", always=True),
    Finding("ls_lossy", lambda m: m["lost"] > SAME,
            "the sparse output is not the full one: what lies outside the window is lost", always=True),
    Finding("ls_cross", lambda m: m["cross"] is not None, "on these lengths the sparse pattern ends up clearly faster",
            group="cross"),
    Finding("ls_no_cross", lambda m: m["cross"] is None, "on these lengths the sparse pattern never clearly wins",
            group="cross"),
    # the dragon's heads link by what words are, not where they are (it has no positions: 5-1), so a window cuts them
    Finding("ls_no_local_head", lambda m: m["most_kept"] < 0.5 - SHARE_MARGIN,
            "no head of the dragon keeps half of its links inside the window, by a clear margin", always=True),
    Finding("why:3-5:bytes", lambda m: m["bytes_square"] and m["full_bytes"] == 4 and m["sparse_bytes"] == 2,
            "the why: doubling T multiplies full attention's score bytes by four and the window's by two", always=True),
    Finding("why:3-5:time", lambda m: m["full_time"] > m["sparse_time"],
            "the why: full attention's time grows faster than the window's (between the two longest lengths)",
            always=True),
    Finding("why:3-5:short", lambda m: m["short_behind"],
            "the why: on the shortest text the window's median time was slower than full attention's", always=True),
    Finding("why:3-5:heads", lambda m: m["most_kept"] < 0.5 - SHARE_MARGIN,
            "the why: a window 4 words wide cuts most of every head's links", always=True),
)


# --- the answer key: each scored question, its accepted answers, the measured value, the deciding margin ---------

NEVER = "never"  # 3-5's crossing answer when the window never clearly wins on the lengths measured
READ_FACTORS = (2, 4, 8)  # 3-5's reading: full attention's score bytes grow by ×2, ×4 or ×8 when T doubles


def cross_answers(result: dict) -> list[str]:
    """The crossing answers the runs accept: the first length from which every sparse run beat every full run, and
    any length before it where the runs' ranges overlap (noise does not decide there); 'never' if the window never
    clearly wins."""
    cross = crossing(result)
    first = cross["from"]
    undecided = [T for T in cross["undecided"] if first is None or T < first]
    return [str(T) for T in (*undecided, *([] if first is None else [first]))] + ([NEVER] if first is None else [])


def heads_kept_answers(heads: dict, half: float = 0.5) -> list[int]:
    """How many heads keep at least half of their links inside the window, every count the share margin allows (a head
    within 5 points of one half may be counted either way)."""
    kept = [v["kept"] for v in heads["heads"].values() if v["kept"] is not None]
    surely = sum(k >= half + SHARE_MARGIN for k in kept)
    maybe = sum(k >= half - SHARE_MARGIN for k in kept)
    return list(range(surely, maybe + 1))


def bytes_factor(result: dict) -> int:
    """What the bytes table says: full attention's score bytes grow by this factor between the two longest lengths
    (a doubling: ×4, h·T² numbers)."""
    return round(result["full_bytes"][-1] / result["full_bytes"][-2])


def apart(result: dict) -> float | None:
    """How far apart the runs' ranges stand where the curves cross: the full runs' fastest over the window's slowest
    at the crossing length (over 1: every window run beat every full run there); None when the window never wins."""
    first = crossing(result)["from"]
    if first is None:
        return None
    i = result["lengths"].index(first)
    return result["full_range_ms"][i][0] / result["sparse_range_ms"][i][1]


def questions(result: dict, heads: dict) -> list[dict]:
    """3-5's questions: where the curves cross (decided by the runs' ranges), how many of the dragon's heads keep half
    of their links inside the window (decided by the share margin), and the bytes' factor read off the table."""
    cross = crossing(result)
    kept = sorted(v["kept"] for v in heads["heads"].values() if v["kept"] is not None)
    return [
        question("cross", cross_answers(result), {"from": cross["from"], "undecided": cross["undecided"],
                                                  "repeats": result["repeats"]}, apart(result), "timed ranges apart"),
        question("heads", heads_kept_answers(heads), kept, min(abs(k - 0.5) for k in kept), "share"),
        question("read", [READ_FACTORS.index(bytes_factor(result))], bytes_factor(result), None, "exact"),
    ]

"""3-2 The race: the per-head loop against all heads batched, timed on the best device; the same FLOPs."""

import functools
import statistics
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import torch

from dragon.attention import MultiHeadAttention
from dragon.checks import brief, whole
from dragon.config import DragonConfig
from dragon.findings import Finding
from dragon.margins import question
from dragon.runtime.device import best_device

if TYPE_CHECKING:
    import pandas as pd

LENGTHS = (16, 64, 256, 1024, 2048)  # default sequence lengths T
MAX_LENGTH = 2048  # longest T a call may ask for (the batched maps alone are h·T² numbers)
MAX_LENGTHS = 8  # most lengths in one call
WARMUP = 2  # untimed calls per path and length (allocator, kernel choice, caches)
BUDGET_S = 0.3  # timed seconds per length, shared by both paths: sets how many repeats fit
MIN_REPEATS, MAX_REPEATS = 3, 25
REFERENCE_RUNS = 5  # a guess is scored against the range of this many races, run once per server
SAME = 1e-4  # the two paths' outputs agree to this (max abs difference); only summation order differs


def check_lengths(lengths: object) -> list[int]:
    """The lengths as sorted unique ints in 1…MAX_LENGTH, or a ValueError that says what is wrong."""
    if not isinstance(lengths, list | tuple) or not lengths:
        raise ValueError(f"lengths must be a non-empty list of positive integers, e.g. {list(LENGTHS)}")
    if len(lengths) > MAX_LENGTHS:
        raise ValueError(f"at most {MAX_LENGTHS} lengths per race, not {len(lengths)}")
    out = []
    for n in lengths:
        if isinstance(n, bool) or not isinstance(n, int | float) or (isinstance(n, float) and not n.is_integer()):
            raise ValueError(f"lengths must be positive integers; {brief(n)} is not one")
        out.append(whole(n, "each length", 1, MAX_LENGTH))
    return sorted(set(out))


def matmuls(path: str, T: int, d: int, h: int, B: int = 1) -> list[tuple[str, int, int, int, int]]:
    """Every matrix product a path does, as (step, batch, m, k, n): batch × (m × k) @ (k × n), read off the
    shapes in attention.py. The loop does h small products where the batched path does one big one."""
    dh = d // h
    if path == "batched":
        return [
            ("project", 1, B * T, d, 3 * d),  # packed W_Q, W_K, W_V for every head
            ("scores", B * h, T, dh, T),  # QKᵀ, all heads in one batch
            ("weighted_v", B * h, T, T, dh),  # softmax · V
            ("w_o", 1, B * T, d, d),
        ]
    if path == "loop":
        per_head = [
            ("project", 1, B * T, d, dh),  # this head's W_Q
            ("project", 1, B * T, d, dh),  # W_K
            ("project", 1, B * T, d, dh),  # W_V
            ("scores", B, T, dh, T),
            ("weighted_v", B, T, T, dh),
        ]
        return per_head * h + [("w_o", 1, B * T, d, d)]
    raise ValueError(f"path must be 'loop' or 'batched', not {brief(path)}")


def flops(path: str, T: int, d: int, h: int, B: int = 1) -> int:
    """Matmul FLOPs of a path: 2 per multiply-add (torch's FlopCounterMode counts the same way)."""
    return sum(2 * b * m * k * n for _, b, m, k, n in matmuls(path, T, d, h, B))


def synchronize(device: torch.device) -> None:
    """Wait for queued GPU work, so a timer measures the work and not just its launch."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def timed(fn: Callable[[], object], device: torch.device) -> float:
    synchronize(device)
    t0 = time.perf_counter()
    fn()
    synchronize(device)
    return time.perf_counter() - t0


def race(
    lengths: Sequence[int] = LENGTHS,
    config: DragonConfig = DragonConfig(),
    device: torch.device | None = None,
    keep_maps: bool = False,
    seed: int = 0,
    progress: Callable[..., object] | None = None,
) -> dict:
    """Time forward_sequential (a Python loop over heads) against forward (all heads batched) at each length.

    Both paths run the same kernels: without keep_maps, PyTorch's fused attention (the loop gets its input as
    (1, B, T, d), so each head's q, k, v are (1, B, T, d_head), the 4-D layout the fused kernel takes, as the
    batched (B, h, T, d_head) is); with keep_maps, the explicit softmax(QKᵀ/√d_head)V that the game shows.
    Medians of interleaved repeats after a warm-up; the two outputs are compared at every length. progress(fraction,
    "T = …") after each length."""
    T_list = check_lengths(list(lengths))
    device = device or best_device()
    d, h = config.d_model, config.n_heads
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        mha = MultiHeadAttention(d, h).eval()
    mha = mha.to(device)
    g = torch.Generator().manual_seed(seed)
    started = time.perf_counter()
    rows = []
    with torch.inference_mode():
        for T in T_list:
            x = torch.randn(1, T, d, generator=g).to(device)  # (B=1, T, d)
            x4 = x[None]  # (1, B, T, d)

            def batched(x=x) -> torch.Tensor:
                return mha(x, need_weights=keep_maps).out  # (B, T, d)

            def loop(x4=x4) -> torch.Tensor:
                return mha.forward_sequential(x4, need_weights=keep_maps).out[0]  # (B, T, d)

            diff = float((batched() - loop()).abs().max())
            for _ in range(WARMUP - 1):
                batched(), loop()
            first = timed(batched, device) + timed(loop, device)
            repeats = max(MIN_REPEATS, min(MAX_REPEATS, int(BUDGET_S / max(first, 1e-9))))
            t_loop, t_batched = [], []
            for _ in range(repeats):  # interleaved: noise hits both paths alike
                t_loop.append(timed(loop, device))
                t_batched.append(timed(batched, device))
            rows.append((T, statistics.median(t_loop), statistics.median(t_batched), repeats, diff))
            if progress is not None:
                progress(len(rows) / len(T_list), f"T = {T}")
    return {
        "device": str(device),
        "kernel": "maps" if keep_maps else "fused",
        "d_model": d,
        "n_heads": h,
        "d_head": d // h,
        "lengths": T_list,
        "loop_ms": [round(r[1] * 1e3, 4) for r in rows],
        "batched_ms": [round(r[2] * 1e3, 4) for r in rows],
        "speedup": [round(r[1] / r[2], 3) for r in rows],
        "flops_loop": [flops("loop", T, d, h) for T in T_list],
        "flops_batched": [flops("batched", T, d, h) for T in T_list],
        "matmuls_loop": len(matmuls("loop", 1, d, h)),
        "matmuls_batched": len(matmuls("batched", 1, d, h)),
        "repeats": [r[3] for r in rows],
        "max_abs_diff": [r[4] for r in rows],
        "same_output": all(r[4] <= SAME for r in rows),
        "threads": torch.get_num_threads(),
        "seconds": round(time.perf_counter() - started, 3),
    }


def race_frame(result: dict) -> "pd.DataFrame":
    """The race as a long pandas frame (length, path, ms) for a line chart, one line per path."""
    import pandas as pd  # imported here: the engine starts without pandas

    return pd.DataFrame(
        [
            {"length": T, "path": path, "ms": ms}
            for path, key in (("loop", "loop_ms"), ("batched", "batched_ms"))
            for T, ms in zip(result["lengths"], result[key], strict=True)
        ]
    )


def reference(T: int, runs: int = REFERENCE_RUNS, device: torch.device | None = None) -> dict:
    """The speed-up at length T over `runs` repeated races on the device: a guess is scored against its range, so
    the same guess earns the same stars however a single race happens to come out (the API runs it once per
    server and shares it)."""
    device = device or best_device()
    speedups = [race([T], device=device, seed=i)["speedup"][0] for i in range(runs)]
    return {"length": T, "device": str(device), "runs": runs, "speedups": speedups, "lo": min(speedups),
            "hi": max(speedups)}


WORK = ("less", "same", "more")  # 3-2's reading: the batched path does less, the same or more work than the loop


def work_reading(result: dict) -> str:
    """What the table of FLOPs of a race says: the batched path does less, the same or more work than the loop."""
    a, b = sum(result["flops_batched"]), sum(result["flops_loop"])
    return "same" if a == b else "less" if a < b else "more"


# --- what 3-2 says about a race, as data (dragon/findings.py): each sentence with the condition that makes it true ---



@functools.cache
def gradients(T: int = 32, config: DragonConfig = DragonConfig(), seed: int = 0) -> dict:
    """The lesson's "gradient sharing", checked: one backward pass through the batched heads gives every head's
    gradients (the same as backward through the per-head loop), and no parameter is shared between heads: when only
    head i's output enters the loss (its gate alone on), every other head's W_Q, W_K, W_V rows receive exactly zero;
    only W^O, the matrix that mixes the heads, is common to all of them. On CPU: the check is about what is computed,
    not how fast."""
    d, h, dh = config.d_model, config.n_heads, config.d_head
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        mha = MultiHeadAttention(d, h)
    x = torch.randn(1, T, d, generator=torch.Generator().manual_seed(seed))
    target = torch.randn(1, T, d, generator=torch.Generator().manual_seed(seed + 1))

    def grads(out: torch.Tensor) -> list[torch.Tensor]:
        mha.zero_grad()
        ((out - target) ** 2).mean().backward()
        return [p.grad.clone() for p in mha.parameters()]

    batched = grads(mha(x, need_weights=False).fused)  # one backward pass: all heads at once
    looped = grads(mha.forward_sequential(x[None], need_weights=False).fused[0])  # the loop, head by head
    same = max(float((a - b).abs().max()) for a, b in zip(batched, looped, strict=True))
    leaked, own, mixer = 0, [], 0  # gradient reaching another head's projections; each head's own; heads reaching W^O
    for i in range(h):
        gates = torch.zeros(h)
        gates[i] = 1.0
        grads(mha(x, gates=gates, residual=False, need_weights=False).fused)
        w = mha.in_proj.weight.grad.view(3, h, dh, d)  # (Q/K/V, head, d_head, d): the rows each head owns
        others = torch.cat([w[:, :i], w[:, i + 1:]], dim=1)
        leaked += int(torch.count_nonzero(others))
        own.append(float(w[:, i].abs().sum()))
        mixer += bool(torch.count_nonzero(mha.out_proj.weight.grad))
    return {
        "heads": h,
        "max_abs_diff": same,  # the batched backward against the loop's, over every parameter
        "same_gradients": same <= SAME,
        "other_heads_nonzero": leaked,  # gradient entries that reached another head's W_Q, W_K, W_V: 0
        "own_heads_nonzero": sum(o > 0 for o in own),  # heads whose own projections did receive a gradient
        "out_proj_from": mixer,  # heads whose output alone sends a gradient into W^O, the one matrix they share
    }


def measured(result: dict, at: int | None = None) -> dict:
    """The values 3-2's sentences are about, read off one race (at the guessed length `at`, else the longest)."""
    T = result["lengths"][-1] if at is None else at
    i = result["lengths"].index(T)
    speedups = result["speedup"]
    one_thread = result["device"].startswith("cpu") and result.get("threads") == 1
    return {
        "at": T,
        "speedup": speedups[i],  # the loop's time over the batched time at T, to three decimals (×1.000: saved nothing)
        "flops_equal": result["flops_loop"] == result["flops_batched"],  # at every length
        "flops_at": result["flops_batched"][i],
        "flops_one_head": flops("batched", T, result["d_model"], 1),  # one head of d_head = d_model
        "pieces": (result["matmuls_loop"], result["matmuls_batched"]),
        "work": work_reading(result),
        "one_thread_short": speedups[0] if one_thread else None,  # the shortest length, timed on one CPU thread
        "gradients": gradients(),  # the lesson's "gradient sharing", checked on the same dragon's block
    }


FINDINGS: tuple[Finding, ...] = (
    Finding("r_fact", lambda m: m["flops_equal"], "the fact check: both tracks did the same FLOPs", always=True),
    Finding("r_fact_faster", lambda m: m["speedup"] > 1,
            "at the guessed length the loop took longer than the batched heads", group="fact"),
    Finding("r_fact_slower", lambda m: m["speedup"] <= 1,
            "at the guessed length the batched heads were not faster", group="fact"),
    Finding("r_pieces", lambda m: m["pieces"][1] < m["pieces"][0],
            "what differs is the pieces: the loop does more, smaller matrix products", always=True),
    Finding("r_read_result", lambda m: m["work"] != "less", "the speed is not from doing less work", always=True),
    Finding("r_grad_fact",
            lambda m: (g := m["gradients"])["same_gradients"] and g["other_heads_nonzero"] == 0
            and g["own_heads_nonzero"] == g["out_proj_from"] == g["heads"],
            "the fact check: one backward pass of the batched heads gives every head's gradients (as the loop's), no "
            "gradient reaches another head's W_Q, W_K, W_V, and every head's reaches the shared W^O", always=True),
    Finding("why:3-2:flops", lambda m: m["flops_equal"], "the why: both tracks do the same multiply-adds", always=True),
    Finding("why:3-2:pieces", lambda m: m["pieces"][1] < m["pieces"][0],
            "the why: the batched path does its work in fewer matrix products than the loop", always=True),
    Finding("why:3-2:one_thread", lambda m: m["one_thread_short"] is None or m["one_thread_short"] > 1,
            "the why: fewer calls save time even on one CPU thread (checked on races timed at one thread)",
            always=True),
)


# --- the answer key: each scored question, its accepted answers, the measured value, the deciding margin ---


def questions(reference: dict, raced: dict) -> list[dict]:
    """3-2's questions: the speed-up guess against the reference races' range, and the workload read off a race."""
    return [question("guess", [reference["lo"], reference["hi"]], reference["speedups"],
                     reference["hi"] / reference["lo"], "factor range"),
            question("work", [work_reading(raced)], "same FLOPs", None, "exact")]

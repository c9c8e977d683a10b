"""Engine speed, as ratios taken in one run: python benchmarks/engine.py (last line: JSON summary)."""

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dragon import analyze, default_dragon  # noqa: E402
from dragon.attention import MultiHeadAttention  # noqa: E402

LONGEST_LEVEL_TEXT = (  # 64 tokens once segmented: a level-sized text at the cap
    "因为昨天下了一整天的大雨，所以孩子们只能待在教室里。老师问他们：“你们想听故事吗？”"
    "大家高兴地说：“想！”于是老师讲了一条八头龙的故事，它的每个头都看着句子的不同地方。"
)


def median_time(fn, reps: int) -> float:
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def interleaved(fns: dict, reps: int, rounds: int = 5) -> dict[str, float]:
    """Median over rounds of per-round medians, the contenders taking turns (noise hits both)."""
    results: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            results[name].append(median_time(fn, reps))
    return {name: statistics.median(v) for name, v in results.items()}


def vs_torch_mha(d: int = 64, h: int = 8, T: int = 64) -> dict[str, float]:
    torch.manual_seed(0)
    ours = MultiHeadAttention(d, h).eval()
    ref = nn.MultiheadAttention(d, h, batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(ours.in_proj.weight)
        ref.in_proj_bias.copy_(ours.in_proj.bias)
        ref.out_proj.weight.copy_(ours.out_proj.weight)
        ref.out_proj.bias.copy_(ours.out_proj.bias)
    x, gates = torch.randn(1, T, d), torch.rand(h)
    with torch.inference_mode():
        t = interleaved(
            {
                "ours": lambda: ours(x, gates, residual=False),
                # same work: per-head weights returned, as the game needs them
                "torch": lambda: ref(x, x, x, need_weights=True, average_attn_weights=False),
            },
            reps=300,
        )
    return {"ours_us": t["ours"] * 1e6, "torch_us": t["torch"] * 1e6, "ratio": t["ours"] / t["torch"]}


def batched_vs_sequential(T: int, need_weights: bool, d: int = 64, h: int = 8) -> dict[str, float]:
    """The race level's question: one batched call for all heads vs a Python loop over heads."""
    torch.manual_seed(0)
    mha = MultiHeadAttention(d, h).eval()
    x = torch.randn(1, T, d)
    with torch.inference_mode():
        t = interleaved(
            {
                "batched": lambda: mha(x, need_weights=need_weights),
                "sequential": lambda: mha.forward_sequential(x, need_weights=need_weights),
            },
            reps=max(10, 6000 // T),
        )
    return {
        "batched_us": t["batched"] * 1e6,
        "sequential_us": t["sequential"] * 1e6,
        "speedup": t["sequential"] / t["batched"],
    }


def analyze_ms() -> float:
    dragon = default_dragon()
    analyze(LONGEST_LEVEL_TEXT)  # warm: jieba's dictionary and the lexicons are loaded

    def cold_text() -> None:
        dragon._cached_read.cache_clear()  # time the whole read, not a cache hit
        analyze(LONGEST_LEVEL_TEXT)

    return median_time(cold_text, 50) * 1e3


def cold_start_s(runs: int = 3) -> float:
    code = (
        "import time; t = time.perf_counter(); import dragon; dragon.analyze('昨天在公园里玩。');"
        " print(time.perf_counter() - t)"
    )
    samples = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
        samples.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(samples)


def main() -> None:
    torch.set_num_threads(max(1, torch.get_num_threads()))
    tokens = len(analyze(LONGEST_LEVEL_TEXT)["tokens"])
    mha = vs_torch_mha()
    race = {T: batched_vs_sequential(T, need_weights=False) for T in (16, 64, 256, 1024)}
    race_maps = {T: batched_vs_sequential(T, need_weights=True) for T in (16, 64, 256)}
    summary = {
        "vs_torch_mha": round(mha["ratio"], 3),
        "batched_speedup_T256": round(race[256]["speedup"], 2),
        "analyze_ms": round(analyze_ms(), 2),
        "cold_start_s": round(cold_start_s(), 2),
        "analyze_tokens": tokens,
        "ours_us_T64": round(mha["ours_us"], 1),
        "torch_mha_us_T64": round(mha["torch_us"], 1),
        "speedup_by_T": {T: round(r["speedup"], 2) for T, r in race.items()},
        "speedup_by_T_with_maps": {T: round(r["speedup"], 2) for T, r in race_maps.items()},
        "device": str(default_dragon().device),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
    }
    for name, goal, ok in (
        ("vs_torch_mha", "≤ 1.3", summary["vs_torch_mha"] <= 1.3),
        ("batched_speedup_T256", "≥ 3", summary["batched_speedup_T256"] >= 3),
        ("analyze_ms", "≤ 15", summary["analyze_ms"] <= 15),
        ("cold_start_s", "≤ 3", summary["cold_start_s"] <= 3),
    ):
        print(f"{name:22s} {summary[name]!s:>8}  goal {goal}  {'ok' if ok else 'MISSED'}")
    print(json.dumps(summary, ensure_ascii=False))


if __name__ == "__main__":
    main()

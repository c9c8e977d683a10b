"""Chapters 3–5's lessons, timed: python benchmarks/lessons.py (last line: JSON summary)."""

import json
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dragon import api  # noqa: E402
from dragon.lessons.race import race  # noqa: E402

LENGTHS = [16, 64, 256, 512, 1024, 2048]
TEXT = "昨天在公园里，那个悲伤的小女孩正在快乐地玩耍。"
EN = "The teacher told the students that they should study hard."


def seconds(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return round(time.perf_counter() - t0, 3), out


def median_ms(fn, reps: int = 20) -> float:
    fn()  # warm: the reading is cached after this, as in the game
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e3


def by_length(r: dict) -> dict:
    keys = ("loop_ms", "batched_ms", "speedup")
    return {T: {k: r[k][i] for k in keys} for i, T in enumerate(r["lengths"])}


def main() -> None:
    # first, while nothing has loaded it: the real model's cold load (vocabulary, 87 MB of weights, one warm-up pass)
    load_s, ball = seconds(lambda: api.crystal_ball(EN, "they", "students"))
    tower_s, _ = seconds(api.tower)
    grow_s, grown = seconds(api.grow)
    prune_best_s, best = seconds(api.prune_best)  # trains 4-3's model once on the CPU, then tries all 256 subsets
    fused = api.race(LENGTHS)
    maps = race(LENGTHS, keep_maps=True)
    heads = api.heads_experiment()
    scroll_s, scroll = seconds(api.long_scroll)  # 3-5 at the level's lengths 64 … 4,096, window 8
    stability_s, grid = seconds(api.stability)  # 4-5's grid: 24 short trainings
    routed = api.router()  # 4-6: 12 routed models
    T = fused["lengths"].index(1024)
    summary = {
        "device": fused["device"],
        "race_speedup_T1024": fused["speedup"][T],
        "heads_experiment_s": heads["seconds"],
        "race_by_T": by_length(fused),
        "race_maps_by_T": by_length(maps),
        "race_same_flops": fused["flops_loop"] == fused["flops_batched"],
        "race_gflops_T1024": round(fused["flops_batched"][T] / 1e9, 3),
        "race_matmuls": {"loop": fused["matmuls_loop"], "batched": fused["matmuls_batched"]},
        "race_s": fused["seconds"],
        "heads_accuracy": dict(zip(heads["heads"], heads["final_accuracy"], strict=True)),
        "heads_final_loss": dict(zip(heads["heads"], heads["final_loss"], strict=True)),
        "heads_params": heads["params"][0],
        "heads_seconds_by_model": dict(zip(heads["heads"], heads["seconds_by_model"], strict=True)),
        "heads_device": heads["device"],
        "head_math_ms": round(median_ms(lambda: api.head_math(TEXT, "zh", "玩耍", "time")), 2),
        "fusion_ms": round(median_ms(lambda: api.fusion(TEXT, "zh")), 2),
        "crystal_ball_load_s": load_s,
        "growing_up_s": grown["seconds"],
        "growing_up_wall_s": grow_s,
        "crystal_ball_ms": round(median_ms(lambda: api.crystal_ball(EN, "they", "students")), 2),
        "they_students": {k: ball["best"][k] for k in ("layer", "head", "name", "weight")},
        "tower_s": tower_s,
        "growing_up_stages": {s["stage"]: s["step"] for s in grown["stages"]},
        "growing_up_accuracy": grown["final"]["accuracy"],
        "growing_up_device": grown["device"],
        "prune_best_s": prune_best_s,
        "prune_most_off": best["most_off"],
        "positions_ms": round(median_ms(lambda: api.positions("我爱你", "zh"), reps=5), 2),
        "long_scroll_s": scroll_s,
        "long_scroll_by_T": {T: {"full_ms": f, "sparse_ms": s, "full_mb": round(fb / 2**20, 2), "sparse_mb":
                                 round(sb / 2**20, 3)} for T, f, s, fb, sb in zip(scroll["lengths"], scroll["full_ms"],
                                 scroll["sparse_ms"], scroll["full_bytes"], scroll["sparse_bytes"], strict=True)},
        "long_scroll_cross_from": scroll["crossing"]["from"],
        "long_scroll_most_kept_w4": {lang: scroll["heads"][lang]["most_kept"] for lang in ("zh", "en")},
        "stability_s": grid["seconds"],
        "stability_wall_s": stability_s,
        "stability_fails": grid["fails"],
        "stability_failures_begin": grid["failures_begin"],
        "stability_margin": grid["margin"],
        "router_s": routed["seconds"],
        "router_kept_share": routed["kept_share"],
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
    }
    cpu = summary["device"] == "cpu"
    for name, goal, ok in (
        ("heads_experiment_s", "≤ 30 on CPU" if cpu else "≤ 30", summary["heads_experiment_s"] <= 30),
        ("race_same_flops", "true", summary["race_same_flops"]),
        ("race_s", "≤ 10", summary["race_s"] <= 10),
        ("long_scroll_s", "≤ 20", summary["long_scroll_s"] <= 20),
        ("crystal_ball_load_s", "≤ 5", summary["crystal_ball_load_s"] <= 5),
        ("growing_up_s", "≤ 30", summary["growing_up_s"] <= 30),
        ("stability_s", "≤ 20", summary["stability_s"] <= 20),
        ("router_s", "≤ 20", summary["router_s"] <= 20),
    ):
        print(f"{name:22s} {summary[name]!s:>8}  goal {goal}  {'ok' if ok else 'MISSED'}")
    print(f"{'race_speedup_T1024':22s} {summary['race_speedup_T1024']!s:>8}  (measured on {summary['device']})")
    print(json.dumps(summary, ensure_ascii=False))


if __name__ == "__main__":
    main()

"""4-5 When training fails (训练不稳定): 4-3's task trained with 1 head and with 8 heads of the same width over a grid
of learning rates and seeds; which runs fail (stall or diverge), the grid of final accuracies (hyper-parameter
sensitivity), a failed and a good run's loss curves, and what makes a failed setting train, as findings."""

import math
import statistics
import time
from dataclasses import dataclass

import torch

from dragon.findings import Finding
from dragon.lessons import growing
from dragon.lessons.growing import Progress
from dragon.lessons.heads_experiment import Experiment, threads, train_one
from dragon.margins import RUNS_MARGIN, question
from dragon.runtime.device import best_device

FAIL_SHARE = 0.5  # a run fails when its loss falls by less than half of the fall its model reaches on that seed at
# its best rate of the grid (a loss that ends at chance, rises, or becomes NaN falls by nothing)
MORE_BY = 2 * RUNS_MARGIN  # one model "fails more" when it fails in this many more runs of the grid than the other
MOST = 0.5  # "failures begin" at the lowest rate where more than half of a model's seeds fail
NEAR = 0.15  # a failed run "ends about where a model that learned nothing is" when its loss ends above chance − NEAR
LIMITED = 0.5  # one head "is limited by its capacity" when its best accuracy is below half of eight heads' best
WHO = ("one", "eight", "same")  # the answers to "which fails more"
NONE = "none"  # "failures begin at no rate of the grid"
READ_FIXES = ("smaller", "more_heads", "fewer_heads")  # what might make a failed run train, read off the grid
DECIMALS = 4


@dataclass(frozen=True)
class Grid:
    """The runs: every model × rate × seed, each 4-3's task trained from scratch with Adam and a one-cycle rate (a
    tenth of the run warming up). 160 steps of 32 sequences take both models to their best at a good rate: about
    17 s for the 24 runs on one CPU thread."""

    heads: tuple[int, ...] = (1, 8)  # d_model 64 for both: d_head 64 and 8
    rates: tuple[float, ...] = (0.01, 0.03, 0.1, 0.3)  # peak learning rates, each about three times the one before
    seeds: int = 3  # seeds first_seed, first_seed + 1, …
    steps: int = 160
    batch: int = 32
    eval_size: int = 256
    curve_points: int = 20

    def experiment(self, h: int, lr: float, seed: int) -> Experiment:
        return Experiment(heads=(h,), steps=self.steps, batch=self.batch, lr=lr, seed=seed,
                          eval_size=self.eval_size, curve_points=self.curve_points)


def check_first_seed(seed: object, grid: Grid = Grid()) -> int:
    return growing.check_first_seed(seed, grid.seeds)


def chance_loss(ex: Experiment) -> float:
    """The loss of a model that has learned nothing: a uniform guess over the vocabulary."""
    return math.log(ex.vocab)


def run(seed: int = 0, grid: Grid = Grid(), device: torch.device | None = None,
        progress: Progress | None = None) -> dict:
    """Train the whole grid (seeds seed … seed + grid.seeds − 1); every run's final loss and accuracy, which failed and
    by how much the failure is decided, the accuracy grid, the two example curves; plain JSON types out."""
    seed = check_first_seed(seed, grid)
    device = device or best_device()
    seeds = [seed + k for k in range(grid.seeds)]
    total = len(grid.heads) * len(grid.rates) * len(seeds)
    started = time.perf_counter()
    runs = []
    with threads(device, Experiment().cpu_threads) as n_threads:
        for h in grid.heads:
            for lr in grid.rates:
                for s in seeds:
                    if progress is not None:  # the wait box says "run 5 of 24"
                        progress(len(runs) / total, f"run {len(runs) + 1} of {total}")
                    r = train_one(grid.experiment(h, lr, s), h, device)
                    runs.append({"heads": h, "lr": lr, "seed": s, "final_loss": r["final_loss"],
                                 "final_accuracy": r["final_accuracy"], "curve": r["curve"],
                                 "curve_steps": r["curve_steps"]})
    return judged(runs, grid, seeds) | {
        "task": {"vocab": Experiment().vocab, "length": Experiment().length, "relations": list(Experiment().relations),
                 "d_model": Experiment().d_model, "steps": grid.steps, "batch": grid.batch,
                 "schedule": "Adam, one-cycle rate (10 % warm-up)"},
        "device": str(device), "threads": n_threads, "seconds": round(time.perf_counter() - started, 3),
        "seed": seed, "computed_at": round(time.time())}  # when this server trained it (a shared grid is replayed)


def judged(runs: list[dict], grid: Grid, seeds: list[int]) -> dict:
    """Each run's share of its model's best fall of the loss on its seed, failed or not; the counts, the rate where
    failures begin, the accuracy grid and the curves of a failed and a good run."""
    chance = chance_loss(grid.experiment(grid.heads[0], grid.rates[0], seeds[0]))
    fall = {}
    for r in runs:
        loss = r["final_loss"]
        fall[id(r)] = chance - loss if math.isfinite(loss) else -math.inf
    for r in runs:
        best = max(fall[id(o)] for o in runs if o["heads"] == r["heads"] and o["seed"] == r["seed"])
        share = fall[id(r)] / best if best > 0 and math.isfinite(fall[id(r)]) else 0.0
        r["share"] = round(max(share, -1.0), DECIMALS)  # a loss far above chance: −1 (it fell by nothing)
        r["failed"] = share < FAIL_SHARE
        r["final_loss"] = round(r["final_loss"], DECIMALS) if math.isfinite(r["final_loss"]) else None
        r["final_accuracy"] = round(r["final_accuracy"], DECIMALS)
        r["curve"] = [round(v, DECIMALS) if math.isfinite(v) else None for v in r["curve"]]
    fails = {str(h): sum(r["failed"] for r in runs if r["heads"] == h) for h in grid.heads}
    begins = {}
    for h in grid.heads:
        failing = [lr for lr in grid.rates
                   if sum(r["failed"] for r in runs if r["heads"] == h and r["lr"] == lr) > MOST * len(seeds)]
        begins[str(h)] = min(failing) if failing else None
    accuracy = [[round(statistics.fmean(r["final_accuracy"] for r in runs if r["heads"] == h and r["lr"] == lr),
                       DECIMALS) for lr in grid.rates] for h in grid.heads]
    return {
        "heads": list(grid.heads), "rates": list(grid.rates), "seeds": seeds, "chance_loss": round(chance, DECIMALS),
        "runs": runs, "fails": fails, "runs_per_model": len(grid.rates) * len(seeds), "failures_begin": begins,
        "accuracy": accuracy,  # (heads × rates): the mean final accuracy over the seeds, the heat map
        "margin": round(min(abs(r["share"] - FAIL_SHARE) for r in runs), DECIMALS),  # what decides every fail
        "examples": examples(runs, grid.heads[-1], seeds[0]),
    }


def examples(runs: list[dict], h: int, seed: int) -> dict:
    """The curves of one model on one seed at its best rate and at the lowest rate where it failed (None if none)."""
    mine = [r for r in runs if r["heads"] == h and r["seed"] == seed]
    good = max(mine, key=lambda r: r["share"])
    bad = next((r for r in sorted(mine, key=lambda r: r["lr"]) if r["failed"]), None)
    pick = lambda r: None if r is None else {k: r[k] for k in ("heads", "lr", "seed", "curve", "curve_steps",  # noqa: E731
                                                              "final_loss", "final_accuracy")}
    return {"good": pick(good), "failed": pick(bad)}


# --- what the page may say of the grid, as data (dragon/findings.py); the answer key --------------------------------


def measured(result: dict) -> dict:
    h1, h8 = (str(h) for h in result["heads"])
    runs = result["runs"]
    best = {h: max(row) for h, row in zip(result["heads"], result["accuracy"], strict=True)}  # the table's best cell
    every = {h: {lr: [r["failed"] for r in runs if r["heads"] == h and r["lr"] == lr] for lr in result["rates"]}
             for h in result["heads"]}
    return {
        "fails_one": result["fails"][h1], "fails_eight": result["fails"][h8],
        "best_one": best[result["heads"][0]], "best_eight": best[result["heads"][1]],
        # each model has a rate where every seed trains and a larger one where every seed fails
        "sensitive": all(any(all(by[bad]) and not any(by[ok]) for ok in by for bad in by if bad > ok)
                         for by in every.values()),
        # every failed run's loss jumped above twice chance's on the way and ended about at chance's or above
        "rose": all((max((v for v in r["curve"] if v is not None), default=math.inf) > 2 * result["chance_loss"]
                     or None in r["curve"])
                    and (r["final_loss"] is None or r["final_loss"] > result["chance_loss"] - NEAR)
                    for r in runs if r["failed"]),
        # every failed run trains at a smaller rate of the grid (same model, same seed)
        "smaller_trains": all(any(not o["failed"] for o in runs if o["heads"] == r["heads"] and o["seed"] == r["seed"]
                                  and o["lr"] < r["lr"]) for r in runs if r["failed"]),
    }


FINDINGS: tuple[Finding, ...] = (
    Finding("fl_same", lambda m: abs(m["fails_one"] - m["fails_eight"]) < MORE_BY,
            "one head and eight heads fail about as often (within 2 runs of the grid)", group="who"),
    Finding("fl_one_more", lambda m: m["fails_one"] - m["fails_eight"] >= MORE_BY,
            "one head fails in at least 2 more runs than eight heads", group="who"),
    Finding("fl_eight_more", lambda m: m["fails_eight"] - m["fails_one"] >= MORE_BY,
            "eight heads fail in at least 2 more runs than one head (the lesson's claim)", group="who"),
    Finding("fl_sensitive", lambda m: m["sensitive"], "each model has a rate where every seed trains and a larger one "
            "where every seed fails", always=True),
    Finding("fl_smaller", lambda m: m["smaller_trains"], "every failed run trains at a smaller rate of the grid",
            always=True),
    Finding("fl_capacity", lambda m: m["best_one"] < LIMITED * m["best_eight"], "one head's best cell of the table "
            "(mean accuracy over the seeds) is below half of eight heads' best: capacity, not training, limits it",
            always=True),
    Finding("4-5.why", lambda m: m["rose"] and m["sensitive"] and m["best_one"] < LIMITED * m["best_eight"],
            "every failed run's loss jumped above twice chance's and ended near chance's or above, only a range of "
            "rates trains, and one head (at its best cell) stays below half of eight heads' best",
            always=True),
)


def who_fails_more(result: dict) -> tuple[str, int]:
    """'one', 'eight' or 'same', and by how many runs the counts decide it (the distance from MORE_BY's edge)."""
    h1, h8 = (str(h) for h in result["heads"])
    diff = result["fails"][h1] - result["fails"][h8]
    answer = "one" if diff >= MORE_BY else "eight" if -diff >= MORE_BY else "same"
    return answer, abs(abs(diff) - MORE_BY) + (1 if abs(diff) >= MORE_BY else 0)


def failures_begin(result: dict) -> list[str]:
    """The rates where failures begin (each model's, both where they differ) as the page names them; "none" when
    neither model fails at any rate of the grid."""
    begins = sorted({lr for lr in result["failures_begin"].values() if lr is not None})
    return [str(lr) for lr in begins] or [NONE]


def fixes(result: dict) -> list[int]:
    """Which of READ_FIXES makes every failed run of the grid train (indices): a smaller rate (same model, same seed),
    more heads (the 8-head run at the 1-head failure's rate and seed), fewer heads (the other way round)."""
    runs = {(r["heads"], r["lr"], r["seed"]): r for r in result["runs"]}
    h1, h8 = result["heads"]
    failed = [r for r in runs.values() if r["failed"]]
    swap = lambda r, h: not runs[(h, r["lr"], r["seed"])]["failed"]  # noqa: E731
    holds = (measured(result)["smaller_trains"],
             all(swap(r, h8) for r in failed if r["heads"] == h1),
             all(swap(r, h1) for r in failed if r["heads"] == h8))
    return [i for i, ok in enumerate(holds) if ok and failed]


def questions(result: dict) -> list[dict]:
    """Which model fails more (decided by the fail counts, MORE_BY apart), the rate where failures begin (each
    model's; both accepted where they differ) and the grid's reading, what makes a failed run train; every fail is
    decided by the share margin."""
    who, by = who_fails_more(result)
    return [question("who", [who], result["fails"], by, "runs"),
            question("rate", failures_begin(result), result["failures_begin"], result["margin"], "share"),
            question("read", fixes(result), result["fails"], result["margin"], "share")]

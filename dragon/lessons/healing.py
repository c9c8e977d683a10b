"""4-4's heal (集体觉醒, heads that cover for each other): after pruning, 4-3's model is fine-tuned for a few hundred
steps with the switched-off heads held at zero, and the same steps are given to the model with every head on; how
much of the accuracy the pruning lost comes back, measured on 4-4's held-out set (4-4's own prune stays as it is)."""

import copy
import time
from collections.abc import Callable, Sequence

import torch

from dragon.checks import whole
from dragon.findings import Finding
from dragon.lessons.growing import GatedReader, Growth, Progress, check_seed
from dragon.lessons.heads_experiment import loss_of, sample, threads
from dragon.lessons.pruning import DECIMALS, best_pruning, check_active, held_out, trained
from dragon.margins import accepted_buckets, bucket, edge_margin, question
from dragon.runtime.device import best_device

HEAL_STEPS = 300  # fine-tuning steps after pruning: a few hundred, as the lesson's "heads cover for each other"
MAX_HEAL_STEPS = 2000
HEAL_LR = 0.001  # Adam, constant: a tenth of 4-3's peak, so the heads left on adjust rather than start over
EVALS = 10  # accuracy points along the heal (the curve the page draws)
BACK_EDGES = (0.25, 0.75)  # how much of what the pruning lost comes back: little (< ¼), some, most (≥ ¾)
BACK = ("little", "some", "most")
ALL_BACK = 0.995  # "all of it came back": the page says all, not most


def check_steps(steps: object) -> int:
    return whole(steps, "steps", 10, MAX_HEAL_STEPS)


def held_out_accuracy(model: GatedReader, gates: torch.Tensor, seed: int, device: torch.device) -> float:
    ids, answers = (t.to(device) for t in held_out(seed))
    with torch.no_grad():
        logits, _ = model(ids, gates)
    return float((logits.argmax(-1) == answers).float().mean())


def fine_tune(
    model: GatedReader, gates: torch.Tensor, steps: int, seed: int, device: torch.device,
    on_eval: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Adam on 4-3's task with these gates (a head at 0 gets no gradient: it stays switched off); the held-out accuracy
    at EVALS + 1 evenly spaced steps. The same data for every gate pattern of a seed (the comparison is fair)."""
    ex = model.ex
    opt = torch.optim.Adam(model.parameters(), lr=HEAL_LR)
    g = torch.Generator().manual_seed(seed + 5)  # data none of 4-3's run or 4-4's held-out set used
    marks = {round(k * steps / EVALS) for k in range(EVALS + 1)}
    curve = []
    for step in range(steps + 1):
        if step in marks:
            model.eval()
            curve.append(held_out_accuracy(model, gates, seed, device))
            model.train()
            if on_eval is not None:
                on_eval(step, curve[-1])
        if step == steps:
            break
        ids, answers = (t.to(device) for t in sample(ex, ex.batch, g))
        logits, _ = model(ids, gates)
        loss = loss_of(logits, answers)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return curve


def heal(
    active: Sequence[int | bool], seed: int = 0, steps: int = HEAL_STEPS, device: torch.device | None = None,
    progress: Progress | None = None,
) -> dict:
    """Fine-tune 4-3's model for this seed with these heads on (1) and off (0), and again with every head on for the
    same steps on the same data: pruned, healed and full accuracy before and after, and the share of what the pruning
    lost that came back (against the full model given the same extra steps, so more training alone is not counted
    as heads covering for each other)."""
    seed, steps = check_seed(seed), check_steps(steps)
    on = check_active(active, Growth().heads)  # bad switches never start a training
    base, grown = trained(seed)
    h = base.mha.n_heads
    device = device or best_device()
    started = time.perf_counter()
    curves = {}
    with threads(device, base.ex.cpu_threads) as n_threads:
        for name, pattern in (("pruned", on), ("full", (True,) * h)):
            model = copy.deepcopy(base).to(device)
            gates = torch.tensor([float(a) for a in pattern], device=device)

            def report(step: int, acc: float, name: str = name) -> None:
                if progress is not None:
                    done = (steps if name == "full" else 0) + step
                    progress(done / (2 * steps), f"{name}: step {step} of {steps}",
                             {"series": name, "x": step, "y": round(acc, DECIMALS)})

            curves[name] = fine_tune(model, gates, steps, seed, device, report)
    before_pruned, healed = curves["pruned"][0], curves["pruned"][-1]
    before_full, full_after = curves["full"][0], curves["full"][-1]
    lost = full_after - before_pruned  # what pruning costs against the full model given the same steps
    back = (healed - before_pruned) / lost if lost > 0 else None
    return {
        "active": [int(a) for a in on],
        "off": on.count(False),
        "seed": seed,
        "steps": steps,
        "lr": HEAL_LR,
        "full_accuracy": round(before_full, DECIMALS),
        "pruned_accuracy": round(before_pruned, DECIMALS),
        "healed_accuracy": round(healed, DECIMALS),
        "full_after_accuracy": round(full_after, DECIMALS),
        "lost": round(lost, DECIMALS),
        "back_share": None if back is None else round(back, DECIMALS),
        "curve_steps": [round(k * steps / EVALS) for k in range(EVALS + 1)],
        "curves": {k: [round(a, DECIMALS) for a in v] for k, v in curves.items()},
        "relations": grown["relations"],
        "device": str(device),
        "threads": n_threads,
        "seconds": round(time.perf_counter() - started, 3),
    }


def heal_best(seed: int = 0, steps: int = HEAL_STEPS, progress: Progress | None = None) -> dict:
    """The heal of 4-4's answer for this seed: its best pruning's first pattern (the most heads off at ≥ 90 %)."""
    return heal(best_pruning(seed)["patterns"][0], seed, steps, progress=progress)


# --- what the heal may say, as data (dragon/findings.py); the answer key -------------------------------------------


def measured(result: dict) -> dict:
    return {"back": result["back_share"], "lost": result["lost"], "healed": result["healed_accuracy"],
            "pruned": result["pruned_accuracy"], "full_after": result["full_after_accuracy"],
            "full": result["full_accuracy"]}


FINDINGS: tuple[Finding, ...] = (
    Finding("hl_lost", lambda m: m["lost"] > 0, "the pruned model is below the full model given the same steps",
            always=True),
    Finding("hl_all", lambda m: m["back"] >= ALL_BACK, "all of what was lost came back (to within half a point)",
            group="back"),
    Finding("hl_most", lambda m: BACK_EDGES[1] <= m["back"] < ALL_BACK, "at least three quarters of what was lost "
            "came back, not all", group="back"),
    Finding("hl_some", lambda m: BACK_EDGES[0] <= m["back"] < BACK_EDGES[1], "between a quarter and three quarters "
            "came back", group="back"),
    Finding("hl_little", lambda m: m["back"] < BACK_EDGES[0], "less than a quarter came back", group="back"),
)


def back_bucket(share: float) -> str:
    return BACK[bucket(share, BACK_EDGES)]


def questions(results: Sequence[dict]) -> list[dict]:
    """The heal's question: how much of what the pruning lost comes back (little / some / most), over the seeds'
    heals; every bucket within the share margin (5 points) of a seed's share is accepted."""
    shares = [r["back_share"] for r in results]
    accepted = sorted({BACK[b] for s in shares for b in accepted_buckets(s, BACK_EDGES)}, key=BACK.index)
    return [question("heal_back", accepted, shares, min(edge_margin(s, BACK_EDGES) for s in shares), "share")]


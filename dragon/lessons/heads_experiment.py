"""3-4 How many heads? Small models with h ∈ {1, 2, 4, 8, 16} at one d_model, trained for real on a task of
several relations at once: equal parameters, different results."""

import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import torch
from torch import nn
from torch.nn import functional as F

from dragon.attention import MultiHeadAttention
from dragon.findings import Finding
from dragon.lessons.facts import mha_params
from dragon.margins import SHARE_MARGIN, accepted_best, lead, question
from dragon.runtime.device import best_device

if TYPE_CHECKING:
    import pandas as pd

Progress = Callable[..., object]  # (fraction done in [0, 1], what is running[, a live-curve point {series, x, y}])


@dataclass(frozen=True)
class Experiment:
    vocab: int = 16  # token ids 0…vocab-1, drawn uniformly
    length: int = 16  # tokens per sequence, read as a ring (position i - r wraps around)
    relations: tuple[int, ...] = (1, 2, 4, 7, 11, 13)  # every token must recall the tokens this many places back
    d_model: int = 64  # one width for every model
    heads: tuple[int, ...] = (1, 2, 4, 8, 16)  # the models compared: d_head = d_model / h
    steps: int = 600  # Adam steps per model (one-cycle learning rate)
    batch: int = 64  # sequences per step
    lr: float = 0.01  # peak learning rate
    eval_size: int = 512  # held-out sequences for the final loss and accuracy
    curve_points: int = 30  # points per loss curve (each the mean loss of its window of steps)
    seed: int = 0  # seeds the weights (the same for every h) and the data (the same stream for every h)
    cpu_threads: int = 1  # torch threads when training on CPU: models this small lose more to a 2nd thread's syncing
    # than they gain (measured on 2 busy cores: 11 s with one thread, 16 s with two); the results are identical

    def __post_init__(self) -> None:
        for h in self.heads:
            if self.d_model % h != 0:
                raise ValueError(f"d_model ({self.d_model}) must be divisible by every h, not by {h}")
        if not all(0 < r < self.length for r in self.relations):
            raise ValueError(f"relations must be in 1…{self.length - 1}")
        if self.steps < self.curve_points:
            raise ValueError(f"steps ({self.steps}) must be at least curve_points ({self.curve_points})")


class Reader(nn.Module):
    """Token + position embedding → one multi-head attention block (with residual) → a linear read-out per
    relation. Only h changes between models; every parameter count stays the same."""

    def __init__(self, ex: Experiment, n_heads: int):
        super().__init__()
        self.ex = ex
        self.tok = nn.Embedding(ex.vocab, ex.d_model)
        self.pos = nn.Parameter(0.5 * torch.randn(ex.length, ex.d_model))
        self.mha = MultiHeadAttention(ex.d_model, n_heads)
        self.read = nn.Linear(ex.d_model, len(ex.relations) * ex.vocab)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        B, T = ids.shape
        x = self.tok(ids) + self.pos  # (B, T, d)
        out = self.mha(x, need_weights=False).out  # (B, T, d)
        return self.read(out).view(B, T, len(self.ex.relations), self.ex.vocab)  # (B, T, relations, vocab)


def sample(ex: Experiment, n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """n sequences (n, T) and their answers (n, T, relations): answer[:, i, k] = ids[:, (i - relations[k]) % T]."""
    ids = torch.randint(ex.vocab, (n, ex.length), generator=g)  # (n, T)
    answers = torch.stack([ids.roll(r, dims=1) for r in ex.relations], dim=-1)  # (n, T, relations)
    return ids, answers


def loss_of(logits: torch.Tensor, answers: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.flatten(0, -2), answers.flatten())


def fit(
    model: nn.Module, ex: Experiment, device: torch.device, on_step: Callable[[int, float | None], None] | None = None
) -> list[torch.Tensor]:
    """Adam with a one-cycle rate (a tenth of the run warming up) for ex.steps steps of ex.batch sequences, the data
    stream seeded by ex.seed + 1 (the same for every model of a seed); each step's loss. on_step as train_one's."""
    opt = torch.optim.Adam(model.parameters(), lr=ex.lr)
    schedule = torch.optim.lr_scheduler.OneCycleLR(opt, ex.lr, total_steps=ex.steps, pct_start=0.1)
    g = torch.Generator().manual_seed(ex.seed + 1)
    losses = []
    for step in range(ex.steps):
        ids, answers = (t.to(device) for t in sample(ex, ex.batch, g))
        loss = loss_of(model(ids), answers)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        schedule.step()
        losses.append(loss.detach())
        if on_step is not None:
            window = ex.steps // ex.curve_points
            point = float(torch.stack(losses[-window:]).mean()) if (step + 1) % window == 0 else None
            on_step(step, point)
    return losses


def train_one(
    ex: Experiment, n_heads: int, device: torch.device, on_step: Callable[[int, float | None], None] | None = None
) -> dict:
    """Train one model from the seed; its loss curve, final held-out loss and accuracy (overall, per relation).
    on_step(step, loss) after each step: loss is the mean of the curve point that step completes, else None."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(ex.seed)  # the same initial embeddings and read-out for every h
        model = Reader(ex, n_heads)
    model = model.to(device)
    losses = fit(model, ex, device, on_step)
    ids, answers = (t.to(device) for t in sample(ex, ex.eval_size, torch.Generator().manual_seed(ex.seed + 2)))
    with torch.no_grad():
        logits = model(ids)
        right = (logits.argmax(-1) == answers).float()  # (n, T, relations)
        final_loss = float(loss_of(logits, answers))
    losses = torch.stack(losses).cpu()  # (steps,)
    window = ex.steps // ex.curve_points
    return {
        "params": sum(p.numel() for p in model.mha.parameters()),
        "params_total": sum(p.numel() for p in model.parameters()),
        "curve": [float(losses[i * window : (i + 1) * window].mean()) for i in range(ex.curve_points)],
        "curve_steps": [(i + 1) * window for i in range(ex.curve_points)],
        "final_loss": final_loss,
        "final_accuracy": float(right.mean()),
        "accuracy_by_relation": right.mean(dim=(0, 1)).tolist(),
    }


@contextmanager
def threads(device: torch.device, n: int) -> Iterator[int]:
    """Run with n torch threads when on CPU (restored afterwards); yields the number in force."""
    if device.type != "cpu":
        yield torch.get_num_threads()
        return
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield n
    finally:
        torch.set_num_threads(before)


def run(ex: Experiment = Experiment(), device: torch.device | None = None, progress: Progress | None = None) -> dict:
    """Train every model of the experiment in turn, reporting the fraction done; plain JSON types out."""
    device = device or best_device()
    with threads(device, ex.cpu_threads) as n_threads:
        return _run(ex, device, progress) | {"threads": n_threads}


def _run(ex: Experiment, device: torch.device, progress: Progress | None) -> dict:
    total = ex.steps * len(ex.heads)
    started = time.perf_counter()
    results, seconds = [], []
    for i, h in enumerate(ex.heads):

        def on_step(step: int, loss: float | None, i: int = i, h: int = h) -> None:
            fraction = (i * ex.steps + step + 1) / total
            if progress is not None and loss is not None:  # a point of the loss curve: the live curve grows
                progress(fraction, f"h = {h}", {"series": f"h = {h}", "x": step + 1, "y": round(loss, 4)})
            elif progress is not None and ((step + 1) % max(1, ex.steps // 20) == 0 or step + 1 == ex.steps):
                progress(fraction, f"h = {h}")

        t0 = time.perf_counter()
        results.append(train_one(ex, h, device, on_step))
        seconds.append(time.perf_counter() - t0)
    return {
        "task": {k: v for k, v in asdict(ex).items() if k not in ("heads", "d_model", "cpu_threads")},
        "d_model": ex.d_model,
        "heads": list(ex.heads),
        "d_head": [ex.d_model // h for h in ex.heads],
        "params": [r["params"] for r in results],
        "params_formula": mha_params(ex.d_model),
        "params_total": [r["params_total"] for r in results],
        "final_loss": [round(r["final_loss"], 4) for r in results],
        "final_accuracy": [round(r["final_accuracy"], 4) for r in results],
        "accuracy_by_relation": [[round(a, 4) for a in r["accuracy_by_relation"]] for r in results],
        "chance": round(1 / ex.vocab, 4),
        "curves": {"step": results[0]["curve_steps"], "loss": [[round(v, 4) for v in r["curve"]] for r in results]},
        "device": str(device),
        "seconds_by_model": [round(s, 3) for s in seconds],
        "seconds": round(time.perf_counter() - started, 3),
        "computed_at": round(time.time()),  # when this server trained it (a shared run is replayed from this record)
        "median_model_seconds": round(statistics.median(seconds), 3),
    }


def curves_frame(result: dict) -> "pd.DataFrame":
    """The loss curves as a long pandas frame (step, heads, loss) for a line chart, one line per model."""
    import pandas as pd  # imported here: the engine starts without pandas

    return pd.DataFrame(
        [
            {"step": s, "heads": f"h = {h}", "loss": v}
            for h, curve in zip(result["heads"], result["curves"]["loss"], strict=True)
            for s, v in zip(result["curves"]["step"], curve, strict=True)
        ]
    )


# --- what 3-4 says about a run, as data (dragon/findings.py): each sentence with the condition that makes it true ---


def lowest(result: dict) -> tuple[list[int], float]:
    """3-4's reading of the accuracy bars: the h with the lowest accuracy (every h within 5 points of the lowest is
    accepted) and the margin that decides it (how far the next accuracy stands above the accepted ones)."""
    acc = dict(zip(result["heads"], result["final_accuracy"], strict=True))
    accepted = accepted_best(acc, SHARE_MARGIN, most=False)
    return accepted, lead(acc, accepted, most=False)


def measured(result: dict) -> dict:
    """The values 3-4's sentences are about, read off one run."""
    acc = dict(zip(result["heads"], result["final_accuracy"], strict=True))
    best = max(acc.values())
    few = min(h for h, a in acc.items() if a >= best - SHARE_MARGIN)  # the fewest heads within 5 points of the best
    top = max(acc, key=lambda h: (acc[h], -h))  # the most accurate (the fewer heads on a tie)
    weakest = min(acc, key=lambda h: (acc[h], h))
    low, low_margin = lowest(result)
    return {
        "accuracy": acc,
        "params": result["params"],
        "params_formula": result["params_formula"],
        "relations": len(result["task"]["relations"]),
        "chance": result["chance"],
        "best": best,
        "top": top,
        "few": few,
        "gain": acc[top] - acc[few],  # what more heads than `few` still added
        "weakest": weakest,
        "lowest": low,  # the accepted answers of the reading
        "lowest_margin": low_margin,
        "one_clearly_worst": 1 in acc and low == [1] and low_margin >= SHARE_MARGIN,
        "plateau": all(a >= best - SHARE_MARGIN for h, a in acc.items() if h >= few),  # from `few` heads on, a tie
        "near_chance": [h for h, a in acc.items() if a < result["chance"] + SHARE_MARGIN],
    }


LESSON_TOO_FEW = 4  # the lesson: "too few heads (say 2–4): limited power, they cannot catch enough patterns"


def paper_shape(m: dict) -> bool:
    """Vaswani et al.'s shape: one head clearly worst, then a tie (within 5 points) from a few heads on."""
    return m["one_clearly_worst"] and m["plateau"]


FINDINGS: tuple[Finding, ...] = (
    Finding("h_all_equal", lambda m: set(m["params"]) == {m["params_formula"]},
            "every model has 4·d² + 4·d parameters in its attention block: d_head = d_model / h keeps the count (the "
            "lesson's dimension scaling)", group="params"),
    Finding("h_not_equal", lambda m: set(m["params"]) != {m["params_formula"]},
            "the models' parameter counts differ", group="params"),
    Finding("h_few_fewer", lambda m: m["few"] < m["relations"],
            "fewer heads than the task has relations came within 5 points of the best", group="few"),
    Finding("h_few_more", lambda m: m["few"] >= m["relations"],
            "only as many heads as relations, or more, came within 5 points of the best", group="few"),
    Finding("h_more_gain", lambda m: m["top"] > m["few"] and m["gain"] > 0,
            "a model with more heads than the fewest within 5 points was still more accurate", group="more"),
    Finding("h_more_none", lambda m: m["top"] == m["few"],
            "no model with more heads was more accurate than the fewest within 5 points of the best", group="more"),
    Finding("h_fact_few", lambda m: m["few"] <= LESSON_TOO_FEW,
            "against the lesson: a model of 2–4 heads came within 5 points of the best", group="lesson"),
    Finding("h_fact_many", lambda m: m["few"] > LESSON_TOO_FEW,
            "as the lesson says: it took more than 4 heads to come within 5 points of the best", group="lesson"),
    Finding("h_chance", lambda m: not m["near_chance"], "every model beat guessing by more than 5 points",
            group="chance"),
    Finding("h_chance_not", lambda m: bool(m["near_chance"]),
            "some model did no better than guessing (within 5 points)", group="chance"),
    Finding("h_vaswani", paper_shape, "the paper's shape: one head clearly worst, then a tie from a few heads on",
            group="paper"),
    Finding("h_vaswani_cmp", lambda m: not paper_shape(m),
            "the paper's numbers, with no claim about their shape against ours", group="paper"),
    Finding("why:3-4:params", lambda m: set(m["params"]) == {m["params_formula"]},
            "the why: the number of heads does not change the parameter count", always=True),
    Finding("why:3-4:one", lambda m: m["one_clearly_worst"],
            "the why: several relations at once are hard for one head (its accuracy the lowest by 5 points or more)",
            always=True),
)


# --- the answer key: each scored question, its accepted answers, the measured value, the deciding margin ---


def questions(result: dict) -> list[dict]:
    """3-4's questions on the server's run (`result`): the ranking of the head counts by accuracy (two within 5
    points are a tie, either order right), and which h the bars show lowest."""
    acc = dict(zip(result["heads"], result["final_accuracy"], strict=True))
    gaps = [abs(acc[a] - acc[b]) for a in acc for b in acc if a < b and abs(acc[a] - acc[b]) > SHARE_MARGIN]
    ties = [[a, b] for a in acc for b in acc if a < b and abs(acc[a] - acc[b]) <= SHARE_MARGIN]
    low, low_lead = lowest(result)  # the reading off the accuracy bars: which h is lowest
    return [question("ranking", sorted(acc, key=lambda h: -acc[h]), {"accuracy": acc, "ties": ties},
                     min(gaps, default=float("inf")) - SHARE_MARGIN, "share"),
            question("read", low, min(acc.values()), low_lead, "share")]

"""An exam round's variant of a level: a fresh target on the same text, checked as any shipped level is."""

import math
import random
from dataclasses import dataclass

import torch

from dragon.config import HEADS
from dragon.engine import Reading
from dragon.levels.claims import silent_heads
from dragon.levels.puzzle import MAX_ALL_EQUAL, MAX_RANDOM_MEDIAN, MIN_NEAR_MEDIAN, check
from dragon.scoring import Scorer

MAX_PUBLIC = 85.0  # what the level's public target (`explain`, every page outside the round) may score
TRIES = 60  # fresh targets drawn before a level is said to have no fair variant
LOUD = (0.6, 0.7, 0.8, 0.9, 1.0)  # a head the variant turns up
QUIET = (0.0, 0.0, 0.0, 0.1, 0.2, 0.3)  # a head it keeps down (mostly off)
SAMPLES = 2000  # random and near-target gate vectors whose medians are measured (200 samples vary by ±1.7 points)
MARGIN = 3.0  # points inside each bound: a variant passes by a clear margin, not by the samples drawn


class NoVariantError(ValueError):
    """No fresh target on this text passed the checks: the level cannot be an exam round."""


@dataclass(frozen=True)
class Variant:
    target: tuple[float, ...]
    public_score: float  # the level's public target, scored against this one
    all_equal: float
    random_median: float
    near_median: float


def draw_target(rng: random.Random, heard: list[int]) -> tuple[float, ...]:
    """Two to four of the heads that hear something turned up, the rest kept down; a silent head gets no target."""
    loud = set(rng.sample(heard, rng.randint(2, min(4, len(heard)))))
    return tuple(rng.choice(LOUD) if h in loud else rng.choice(QUIET) if h in heard else 0.0
                 for h in range(len(HEADS)))


def batch_scores(reading: Reading, gates: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The game's score (dragon/scoring.py `similarity`) of each row of `gates` (n, 8) against `target`, at once. The
    fused output is linear in the gates (u = g·P), so the distance of the unit vectors needs only the heads' 8 × 8 Gram
    matrix: ‖û − â‖² = 2 − 2 (g·P·a) / (‖u‖ ‖a‖)."""
    parts = reading.parts.flatten(1).double()  # (8, T·d)
    gram = parts @ parts.T  # (8, 8)
    g, t = gates.double(), target.double()
    toward = gram @ t  # (8,): P·a, a = t·P the target's fused output
    norms = (g @ gram * g).sum(dim=1).clamp_min(0).sqrt() * float(t @ toward).__pow__(0.5)
    cos = (g @ toward) / norms.clamp_min(1e-24)
    dist = (2.0 - 2.0 * cos).clamp_min(0).sqrt()
    return (100.0 * (1.0 - dist / math.sqrt(2.0))).clamp(0.0, 100.0)


def medians(reading: Reading, target: torch.Tensor, rng: torch.Generator, samples: int) -> tuple[float, float]:
    """The median score of `samples` random gate vectors, and of as many perturbations of the target by ±0.1."""
    random = torch.rand(samples, 8, generator=rng)
    near = (target + torch.rand(samples, 8, generator=rng) * 0.2 - 0.1).clamp(0, 1)
    return (float(batch_scores(reading, random, target).median()),
            float(batch_scores(reading, near, target).median()))


def fair(reading: Reading, target: tuple[float, ...], public: tuple[float, ...], seed: int) -> Variant | None:
    """The variant's figures when it is a fair puzzle that the public target does not answer, else None."""
    scorer = Scorer(reading, list(target))
    public_score = scorer(list(public))
    if public_score > MAX_PUBLIC:
        return None  # cheap, so first: the public answer would still pass
    all_equal = scorer([0.5] * len(HEADS))
    random_median, near_median = medians(reading, torch.tensor(target), torch.Generator().manual_seed(seed), SAMPLES)
    inside = (all_equal <= MAX_ALL_EQUAL - MARGIN and random_median <= MAX_RANDOM_MEDIAN - MARGIN
              and near_median >= MIN_NEAR_MEDIAN + MARGIN)
    if not inside or check(reading, list(target), samples=20, seed=seed).problems:  # the ascent, and the rest again
        return None
    return Variant(target, round(public_score, 2), all_equal, random_median, near_median)


def exam_variant(reading: Reading, public: tuple[float, ...], seed: int) -> Variant:
    """A fresh target for an exam round, drawn from `seed` (the round's own): every head the text leaves silent gets
    none, the puzzle conditions hold MARGIN inside their bounds (all-equal ≤ 65, random median ≤ 55, near-target ≥ 85)
    and the ascent reaches 95,
    and the public target scores ≤ MAX_PUBLIC under it. NoVariantError when TRIES draws find none."""
    silent = set(silent_heads(reading))
    heard = [h for h, name in enumerate(HEADS) if name not in silent]
    if len(heard) < 2:
        raise NoVariantError("this text leaves fewer than two heads hearing anything: no fresh target can be drawn")
    rng = random.Random(seed)
    for _ in range(TRIES):
        found = fair(reading, draw_target(rng, heard), public, seed)
        if found is not None:
            return found
    raise NoVariantError(f"no fresh target on this text passed the puzzle checks in {TRIES} draws")

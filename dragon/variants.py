"""An exam round's variant of a level: a fresh target on the same text, checked as any shipped level is."""

import random
from dataclasses import dataclass

from .claims import silent_heads
from .config import HEADS
from .engine import Reading
from .puzzle import check
from .scoring import Scorer

MAX_PUBLIC = 85.0  # what the level's public target (`explain`, every page outside the round) may score
TRIES = 60  # fresh targets drawn before a level is said to have no fair variant
LOUD = (0.6, 0.7, 0.8, 0.9, 1.0)  # a head the variant turns up
QUIET = (0.0, 0.0, 0.0, 0.1, 0.2, 0.3)  # a head it keeps down (mostly off)
CHECK_SAMPLES = 120  # random and near-target samples in the check (the shipped levels' test takes 200)


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


def fair(reading: Reading, target: tuple[float, ...], public: tuple[float, ...], seed: int) -> Variant | None:
    """The variant's figures when it is a fair puzzle that the public target does not answer, else None."""
    public_score = Scorer(reading, list(target))(list(public))
    if public_score > MAX_PUBLIC:
        return None  # cheap, so first: the public answer would still pass
    report = check(reading, list(target), samples=CHECK_SAMPLES, seed=seed)
    if report.problems:
        return None
    return Variant(target, round(public_score, 2), report.all_equal, report.random_median, report.near_median)


def exam_variant(reading: Reading, public: tuple[float, ...], seed: int) -> Variant:
    """A fresh target for an exam round, drawn from `seed` (the round's own): every head the text leaves silent gets
    none, the puzzle conditions hold (all-equal ≤ 65, random median ≤ 55, near-target ≥ 85, the ascent reaches 95),
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

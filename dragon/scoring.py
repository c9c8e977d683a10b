"""Score gates against a target, hint from the real gradient, and the goddess's ascent path."""

import math
import numbers
from dataclasses import dataclass

import numpy as np
import torch

from dragon.config import HEADS
from dragon.engine import Reading

STAR_THRESHOLDS = (70.0, 85.0, 95.0)  # ★, ★★, ★★★
PERFECT = 99.0  # at or above this score a hint may say "nothing left to tune"; below it, a hint always helps


def as_gates(values, name: str = "gates") -> torch.Tensor:
    """Validate 8 numbers in [0, 1] (no NaN, no bool, no nested list) and return them as a float tensor. A list is
    checked as sent (its length first, so a list of ten million is refused at once); a tensor or array as it is."""
    n = len(HEADS)
    if isinstance(values, list | tuple):
        if len(values) != n:
            raise ValueError(f"{name} must have {n} values (one per head), got {len(values)}")
        if not all(isinstance(v, numbers.Real) and not isinstance(v, bool | np.bool_) for v in values):
            raise ValueError(f"{name} must be a list of {n} numbers between 0 and 1")  # no bool, str, None, list
        if not all(isinstance(v, numbers.Integral) or math.isfinite(v) for v in values):
            raise ValueError(f"{name} must be finite numbers (no NaN or infinity)")
        if not all(0 <= v <= 1 for v in values):
            raise ValueError(f"{name} must each lie between 0 and 1")
        return torch.tensor([float(v) for v in values], dtype=torch.float32)
    try:
        g = torch.as_tensor(values, dtype=torch.float64).flatten()
    except (TypeError, ValueError, RuntimeError, OverflowError) as err:
        raise ValueError(f"{name} must be a list of {n} numbers between 0 and 1") from err
    if g.numel() != n:
        raise ValueError(f"{name} must have {n} values (one per head), got {g.numel()}")
    if not torch.isfinite(g).all():
        raise ValueError(f"{name} must be finite numbers (no NaN or infinity)")
    if (g < 0).any() or (g > 1).any():
        raise ValueError(f"{name} must each lie between 0 and 1")
    return g.float()


def similarity(u: torch.Tensor, v: torch.Tensor, clamp: bool = True) -> torch.Tensor:
    """100 · (1 − ‖û − v̂‖ / √2) for flattened, unit-scaled u and v; 0 when u is zero. Unclamped (clamp=False)
    it goes below 0 for vectors more than 90° apart, so the gradient still points uphill there."""
    u, v = u.flatten(), v.flatten()
    nu, nv = u.norm(), v.norm()
    if nu.item() < 1e-12 or nv.item() < 1e-12:
        return u.sum() * 0.0  # keeps the graph for autograd; the gradient there is 0
    dist = (u / nu - v / nv).norm()
    value = 100.0 * (1.0 - dist / math.sqrt(2.0))
    return value.clamp(0.0, 100.0) if clamp else value


def score(reading: Reading, gates, target) -> float:
    g, t = as_gates(gates), as_gates(target, "target")
    return float(similarity(reading.fused(g), reading.fused(t)))


class Scorer:
    """score(reading, gates, target) for one reading and target, the target's side worked out once: the same number
    for each gate vector (the live answer to a slider move asks for one)."""

    def __init__(self, reading: Reading, target) -> None:
        self.reading = reading
        self.target_out = reading.fused(as_gates(target, "target"))
        v = self.target_out.flatten()
        nv = v.norm()
        self._silent = nv.item() < 1e-12
        self._unit = v / nv

    def __call__(self, gates) -> float:
        u = self.reading.fused(as_gates(gates)).flatten()
        nu = u.norm()
        if nu.item() < 1e-12 or self._silent:
            return float(u.sum() * 0.0)
        dist = (u / nu - self._unit).norm()
        return float((100.0 * (1.0 - dist / math.sqrt(2.0))).clamp(0.0, 100.0))


def stars(value: float, hints_used: int = 0) -> int:
    """0–3 stars; each hint lowers the best reachable by one, but a win with help still earns one."""
    earned = sum(value >= s for s in STAR_THRESHOLDS)
    return min(earned, max(1, 3 - hints_used))


def gradient(
    reading: Reading, gates: torch.Tensor, target: torch.Tensor, target_out: torch.Tensor | None = None
) -> tuple[float, torch.Tensor]:
    """Score and its autograd gradient w.r.t. the gates (of the unclamped score, so a score of 0 still has one);
    `target_out`: the target's fused output, when the caller has it already."""
    g = gates.clone().requires_grad_(True)
    s = similarity(reading.fused(g), reading.fused(target) if target_out is None else target_out, clamp=False)
    (grad,) = torch.autograd.grad(s, g)
    return max(0.0, float(s.detach())), grad


def feasible(grad: torch.Tensor, gates: torch.Tensor) -> torch.Tensor:
    """Gradient with the parts that would push a gate past 0 or 1 removed."""
    blocked = ((gates >= 1.0) & (grad > 0)) | ((gates <= 0.0) & (grad < 0))
    return torch.where(blocked, torch.zeros_like(grad), grad)


Path = list[tuple[list[float], float]]


def _nudged(gates: torch.Tensor) -> torch.Tensor:
    """At all-zero gates the score is flat (0 everywhere nearby): take the gradient a hair above."""
    return gates.clamp(1e-3, 1.0) if gates.max() <= 0 else gates


def uphill(
    reading: Reading, gates: torch.Tensor, target: torch.Tensor, target_out: torch.Tensor | None = None
) -> torch.Tensor:
    """The gradient of the score at `gates`, less what would push a gate out of [0, 1]."""
    _, grad = gradient(reading, _nudged(gates), target, target_out)
    return feasible(grad, gates)


def _step(
    scorer: Scorer, gates: torch.Tensor, grad: torch.Tensor, s0: float, size: float
) -> tuple[torch.Tensor, float]:
    """One backtracking step from `gates` (scoring s0) along `grad`: (new gates, new score), never worse."""
    if grad.abs().max() < 1e-9:
        return gates, s0
    start = _nudged(gates)
    direction = grad / grad.abs().max()  # the most urgent gate moves by `size`
    for _ in range(12):
        new = _four_decimals(start + size * direction)
        s1 = scorer(new)
        if s1 > s0:
            return new, s1
        size /= 2
    return gates, s0


def _four_decimals(gates: torch.Tensor) -> torch.Tensor:
    return ((gates.clamp(0.0, 1.0) * 1e4).round() / 1e4).float()  # 4 decimals, as reported


def _toward_target(
    scorer: Scorer, gates: torch.Tensor, target: torch.Tensor, s0: float, size: float
) -> tuple[torch.Tensor, float]:
    """The fallback when the gradient finds no step: move part of the way to the target. The fused output is
    linear in the gates, so this walks the straight line to the target's output, and the angle only shrinks."""
    for _ in range(12):
        new = _four_decimals(gates + size * (target - gates))
        s1 = scorer(new)
        if s1 > s0:
            return new, s1
        size /= 2
    return gates, s0


def improve(
    reading: Reading,
    gates: torch.Tensor,
    target: torch.Tensor,
    s0: float,
    size: float = 0.25,
    grad: torch.Tensor | None = None,
    scorer: Scorer | None = None,
) -> tuple[torch.Tensor, float]:
    """A better gate vector than `gates` (scoring s0), uphill along the gradient (`grad`: uphill's, when the caller
    has it already), else straight toward the target. Each candidate is scored by one Scorer (the target's side
    worked out once: the same number as score; `scorer`: the caller's, for this reading and target)."""
    scorer = scorer or Scorer(reading, target)
    new, s1 = _step(scorer, gates, uphill(reading, gates, target) if grad is None else grad, s0, size)
    if s1 <= s0:
        new, s1 = _toward_target(scorer, gates, target, s0, size)
    return new, s1


@dataclass(frozen=True)
class Hint:
    head: str  # which head to move
    direction: int  # +1 raise, -1 lower
    gates: list[float]  # a suggested better gate vector
    score: float  # score now
    score_after: float  # score with the suggested gates
    done: bool = False  # the score is already ≥ PERFECT: nothing left to tune


def hint(reading: Reading, gates, target) -> Hint:
    """The head to move, which way, and a better gate vector; below PERFECT the hint always raises the score. The
    target's side (its fused output, its unit vector) is worked out once for the score, the gradient and the step."""
    g, t = as_gates(gates), as_gates(target, "target")
    scorer = Scorer(reading, t)
    now = scorer(g)
    grad = uphill(reading, g, t, target_out=scorer.target_out)
    if now >= PERFECT:
        h = int(grad.abs().argmax())
        return Hint(HEADS[h], 1 if grad[h] >= 0 else -1, _rounded(g), now, now, done=True)
    new, after = improve(reading, g, t, now, grad=grad, scorer=scorer)
    move = new - g
    h = int(move.abs().argmax())  # the head whose slider the better vector moves most
    return Hint(HEADS[h], 1 if move[h] >= 0 else -1, _rounded(new), now, after)


def _rounded(gates: torch.Tensor) -> list[float]:
    return [round(float(v), 4) for v in gates]


def ascent_path(reading: Reading, gates, target, steps: int = 50, goal: float = 99.5) -> Path:
    """Gradient ascent from `gates` (the goddess's demo): [(gates, score), …], the score rising."""
    g, t = as_gates(gates), as_gates(target, "target")
    path = [(_rounded(g), score(reading, g, t))]
    for _ in range(steps):
        if path[-1][1] >= goal:
            break
        g, s1 = improve(reading, g, t, path[-1][1])
        if s1 <= path[-1][1]:
            break  # the target itself: no step improves
        path.append((_rounded(g), s1))
    return path

"""Score, stars, hints and the goddess's ascent path."""

import itertools
import math
import random

import pytest
import torch

from dragon import HEADS, default_dragon
from dragon.levels.loader import load_levels
from dragon.scoring import PERFECT, Scorer, as_gates, ascent_path, gradient, hint, score, similarity, stars

TEXT = "昨天在公园里，那个悲伤的小女孩正在快乐地玩耍。"
TARGET = [0.3, 0.0, 1.0, 0.0, 0.8, 0.2, 0.0, 0.6]
SLIDER_LEVELS = [lv for c in load_levels() for lv in c.levels if lv.sliders]


@pytest.fixture(scope="module")
def reading():
    return default_dragon().read(TEXT)


def test_target_scores_100(reading) -> None:
    assert score(reading, TARGET, TARGET) == pytest.approx(100.0, abs=1e-3)


def test_score_is_scale_free_and_bounded(reading) -> None:
    half = [g / 2 for g in TARGET]
    assert score(reading, half, TARGET) == pytest.approx(100.0, abs=1e-3)
    for _ in range(20):
        s = score(reading, torch.rand(8).tolist(), TARGET)
        assert 0.0 <= s <= 100.0


def test_all_zero_gates_score_zero_not_nan(reading) -> None:
    s = score(reading, [0.0] * 8, TARGET)
    assert s == 0.0 and not math.isnan(s)
    value, grad = gradient(reading, torch.zeros(8), torch.tensor(TARGET))
    assert value == 0.0 and torch.isfinite(grad).all()


def test_formula_matches_design() -> None:
    u, v = torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])
    assert float(similarity(u, v)) == pytest.approx(0.0, abs=1e-5)  # orthogonal: distance √2
    assert float(similarity(u, u * 3)) == pytest.approx(100.0)
    w = torch.tensor([1.0, 1.0])
    assert float(similarity(u, w)) == pytest.approx(100 * (1 - math.sqrt(2 - math.sqrt(2)) / math.sqrt(2)), abs=1e-4)


def test_wrong_gates_score_less(reading) -> None:
    assert score(reading, [1.0] * 8, TARGET) < 80
    assert score(reading, [1, 1, 0, 1, 0, 0, 1, 0], TARGET) < 40


def test_stars_thresholds_and_hints() -> None:
    assert [stars(s) for s in (0, 69.9, 70, 84.9, 85, 94.9, 95, 100)] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert stars(100, hints_used=1) == 2 and stars(100, hints_used=2) == 1 and stars(100, hints_used=5) == 1
    assert stars(80, hints_used=1) == 1 and stars(50, hints_used=0) == 0


def test_ascent_path_rises_and_arrives(reading) -> None:
    path = ascent_path(reading, [0.5] * 8, TARGET, steps=50)
    scores = [s for _, s in path]
    assert all(b > a for a, b in itertools.pairwise(scores))
    assert scores[-1] >= 95 and len(path) <= 51
    assert all(0 <= g <= 1 for gates, _ in path for g in gates)


@pytest.mark.parametrize("start", [[0.5] * 8, [1.0] * 8, [0.0] * 8, [0, 1, 0, 1, 0, 1, 0, 1]])
def test_following_a_hint_raises_the_score(reading, start) -> None:
    h = hint(reading, start, TARGET)
    assert h.head in HEADS and h.direction in (1, -1)
    assert h.score_after > h.score
    assert score(reading, h.gates, TARGET) == pytest.approx(h.score_after, abs=1e-3)
    # moving only the named head the named way, a little, also helps
    i = HEADS.index(h.head)
    moved = list(map(float, start))
    moved[i] = min(1.0, max(0.0, moved[i] + 0.05 * h.direction))
    assert score(reading, moved, TARGET) > score(reading, start, TARGET)


def test_hint_at_zero_says_raise(reading) -> None:
    assert hint(reading, [0.0] * 8, TARGET).direction == 1


@pytest.mark.parametrize(
    "bad, message",
    [
        ([0.5] * 7, "8 values"),
        ([0.5] * 9, "8 values"),
        ([float("nan")] + [0.5] * 7, "finite"),
        ([float("inf")] + [0.5] * 7, "finite"),
        ([1.5] + [0.5] * 7, "between 0 and 1"),
        ([-0.1] + [0.5] * 7, "between 0 and 1"),
        (["a"] * 8, "numbers"),
        (None, "numbers"),
    ],
)
def test_bad_gates_are_clear_errors(bad, message) -> None:
    with pytest.raises(ValueError, match=message):
        as_gates(bad)


def test_fused_equals_the_real_forward(reading) -> None:
    dragon = default_dragon()
    g = torch.rand(8)
    via_parts = reading.fused(g)
    with torch.no_grad():
        via_forward = dragon.forward(reading.x, g).fused[1:]
    assert (via_parts - via_forward).abs().max() <= 1e-5


def boundary_heavy_starts(n: int, seed: int) -> torch.Tensor:
    """(n, 8) gate vectors where each gate is 0, 1 or uniform, a third each: players push sliders to the ends."""
    g = torch.Generator().manual_seed(seed)
    kind = torch.randint(0, 3, (n, 8), generator=g)
    return torch.where(kind == 0, 0.0, torch.where(kind == 1, 1.0, torch.rand(n, 8, generator=g)))


@pytest.mark.slow
@pytest.mark.parametrize("level", SLIDER_LEVELS, ids=lambda lv: lv.id)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_hints_never_lie(level, lang) -> None:
    """From 1 000 starts, every hint below PERFECT finds better gates; at PERFECT or above it says so."""
    r = default_dragon().read(level.text[lang], lang)
    target = level.target_for(lang)
    for start in boundary_heavy_starts(1000, seed=HEADS.index("time") + len(level.id)):
        h = hint(r, start, target)
        if h.score < PERFECT:
            assert not h.done and h.score_after > h.score, (start.tolist(), h)
        else:
            assert h.done and h.gates == [round(float(v), 4) for v in start]


@pytest.mark.parametrize("level", SLIDER_LEVELS, ids=lambda lv: lv.id)
def test_goddess_demo_climbs_from_any_start(level) -> None:
    r = default_dragon().read(level.text["zh"], "zh")
    target = level.target_for("zh")
    for start in boundary_heavy_starts(40, seed=7):
        path = ascent_path(r, start, target, steps=3)
        if path[0][1] < PERFECT:
            assert len(path) >= 2 and path[1][1] > path[0][1], (start.tolist(), path[:2])


def test_score_zero_still_has_a_way_up(reading) -> None:
    orthogonal = [1.0 if t == 0 else 0.0 for t in TARGET]  # every open head is one the target shuts
    assert score(reading, orthogonal, TARGET) < 1e-3
    _, grad = gradient(reading, torch.tensor(orthogonal), torch.tensor(TARGET))
    assert grad.abs().max() > 0
    h = hint(reading, orthogonal, TARGET)
    assert h.score_after > 0 and not h.done


# --- the live answer's fast paths: the same numbers, less work --------------------------------------------------


def test_plain_numbers_become_the_same_tensor_as_the_checked_path_makes() -> None:
    for values in ([0.5] * 8, [0, 1, 0.25, 1, 0, 0.3, 0.7, 1.0], [0.12345] * 8, (0.1,) * 8):
        fast = as_gates(values)
        assert fast.dtype == torch.float32 and torch.equal(fast, torch.as_tensor(values, dtype=torch.float64).float())
    for bad in ([0.5] * 7, [1.5] + [0.5] * 7, [-0.1] * 8, [float("nan")] * 8, ["0.5"] * 8, [True] + [0.5] * 7):
        with pytest.raises(ValueError):
            as_gates(bad)


@pytest.mark.parametrize("level", SLIDER_LEVELS, ids=lambda lv: lv.id)
def test_a_scorer_gives_exactly_the_score(level) -> None:
    rng = random.Random(level.id)
    for lang in ("zh", "en"):
        reading = default_dragon().read(level.text[lang], level.reads_as(lang))
        target = level.target_for(lang)
        scorer = Scorer(reading, target)
        for gates in [[0] * 8, [1] * 8, list(target), *([round(rng.random(), 2) for _ in HEADS] for _ in range(20))]:
            assert scorer(gates) == score(reading, gates, target)

"""3-5 the long scroll: the banded kernel computes exactly the sliding-window + global pattern in O(T·w) scores, full
attention's scores are h·T² numbers, the findings hold on repeated timed runs, the dragon's heads are read through a
window on the lesson's texts, and the public endpoint answers and refuses clearly."""

import math

import pytest
import torch

from dragon import api
from dragon.config import HEADS, DragonConfig
from dragon.findings import untrue
from dragon.lessons import long_scroll as ls
from dragon.levels.loader import load_levels
from dragon.margins import SHARE_MARGIN


def scroll_readings(lang: str) -> list:
    """The dragon's readings of chapter 2's texts, as 3-5 reads its heads on."""
    return [api.level_reading(lv, lang) for c in load_levels() for lv in c.levels if lv.sliders]


def qkv(T: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    return ls.qkv(T, DragonConfig(), torch.Generator().manual_seed(seed), torch.device("cpu"))


@pytest.mark.parametrize("T, w, g", [(2, 1, 1), (9, 1, 1), (50, 3, 1), (50, 3, 2), (50, 8, 1), (200, 16, 3)])
def test_the_banded_kernel_is_the_sparse_pattern_computed_densely(T: int, w: int, g: int) -> None:
    q, k, v = qkv(T)
    out, _ = ls.sparse_attention(q, k, v, w, g)
    assert torch.allclose(out, ls.masked_attention(q, k, v, w, g), atol=1e-5)


def test_a_window_as_wide_as_the_text_is_full_attention() -> None:
    q, k, v = qkv(40)
    out, _ = ls.sparse_attention(q, k, v, w=39, g=1)
    full, _ = ls.full_attention(q, k, v)
    assert torch.allclose(out, full, atol=1e-5)


def test_a_narrow_window_changes_the_output_and_the_pattern_is_what_it_says() -> None:
    q, k, v = qkv(64)
    assert not torch.allclose(ls.sparse_attention(q, k, v, 2, 1)[0], ls.full_attention(q, k, v)[0], atol=1e-3)
    seen = ls.pattern(10, w=2, g=1)
    assert seen[5].tolist() == [True, False, False, True, True, True, True, True, False, False]  # the global, 3…7
    assert seen[0].all() and seen[:, 0].all()  # the global position sees every word and every word sees it


@pytest.mark.parametrize("T", [64, 300, 1024])
def test_the_score_bytes_are_counted_from_the_tensors_made(T: int) -> None:
    q, k, v = qkv(T)
    h, w, g = DragonConfig().n_heads, 8, 1
    assert ls.full_attention(q, k, v)[1] == h * T * T * 4  # float32, every word with every word
    assert ls.sparse_attention(q, k, v, w, g)[1] == h * T * (2 * w + 1 + g) * 4 + h * g * T * 4  # O(T·w)


@pytest.mark.parametrize(
    "lengths, window, message",
    [
        ([], 8, "non-empty list"),
        (list(range(2, 11)), 8, "at most 8 lengths"),
        ([64, 1.5], 8, "1.5 is not one"),
        ([64, True], 8, "True is not one"),
        ([64, 10**400], 8, "each length must be in 2…16384"),
        ([1], 8, "each length must be in 2…16384"),
        ([64], 0, "window must be in 1…64"),
        ([64], math.nan, "window"),
    ],
)
def test_bad_lengths_and_windows_are_clear_errors(lengths: list, window: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ls.measure(lengths, window)


def test_a_short_measurement_has_every_field_and_a_right_kernel() -> None:
    r = ls.measure([64, 128], repeats=3, device=torch.device("cpu"))
    assert r["lengths"] == [64, 128] and r["repeats"] == 3 and r["device"] == "cpu"
    assert all(lo <= m <= hi for m, (lo, hi) in zip(r["full_ms"], r["full_range_ms"], strict=True))
    assert all(lo <= m <= hi for m, (lo, hi) in zip(r["sparse_ms"], r["sparse_range_ms"], strict=True))
    assert all(d <= ls.SAME for d in r["kernel_diff"])
    assert r["full_bytes"][1] == 4 * r["full_bytes"][0] and r["sparse_bytes"][1] == 2 * r["sparse_bytes"][0]


def test_where_the_curves_cross_is_decided_by_the_ranges_of_the_runs() -> None:
    apart = {"lengths": [64, 128, 256, 512], "full_range_ms": [[1, 2], [3, 5], [9, 12], [40, 50]],
             "sparse_range_ms": [[3, 4], [4, 6], [5, 7], [8, 10]]}
    assert ls.crossing(apart) == {"from": 256, "undecided": [128], "sparse_behind": [64]}
    never = {**apart, "sparse_range_ms": [[3, 4], [6, 7], [13, 14], [60, 70]]}
    assert ls.crossing(never)["from"] is None
    back_again = {**apart, "sparse_range_ms": [[3, 4], [1, 2], [13, 14], [8, 10]]}  # a win that does not last
    assert ls.crossing(back_again)["from"] == 512


def test_the_heads_through_a_window_are_shares_that_grow_with_the_window() -> None:
    readings = scroll_readings("en")
    narrow, wide = ls.window_shares(readings, 2), ls.window_shares(readings, 8)
    everything = ls.window_shares(readings, 64)  # wider than any of the lesson's texts
    for head in HEADS:
        assert 0 <= narrow[head]["kept"] <= wide[head]["kept"] <= 1
        assert everything[head]["kept"] == 1.0 and narrow[head]["rows"] > 0


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_no_head_of_the_dragon_keeps_half_its_links_in_the_window_by_a_clear_margin(lang: str) -> None:
    """The finding the page states: the dragon's heads link by what words are, not where they are."""
    heads = api.scroll_heads(lang)
    assert heads["most_kept"] < 0.5 - SHARE_MARGIN, heads


@pytest.mark.slow
def test_long_scroll_findings_hold_on_three_measurements_of_five_timed_runs_each() -> None:
    """Every sentence the level may say, on the lengths 64 … 4,096 the level times, on three measurements as the level
    makes one (each: 5 interleaved timed runs per path and length, its own random q, k, v), with the heads'
    finding."""
    heads = api.scroll_heads("zh")
    for run in range(3):
        r = ls.measure(seed=run)
        assert untrue(ls.FINDINGS, ls.measured(r, heads)) == [], (run, ls.measured(r, heads))


@pytest.mark.slow
def test_the_api_answers_with_the_crossing_and_the_heads() -> None:
    r = api.long_scroll([64, 512], 8)
    assert r["lengths"] == [64, 512] and r["window"] == 8 and set(r["crossing"]) == {"from", "undecided",
                                                                                     "sparse_behind"}
    assert set(r["heads"]) == {"zh", "en"} and set(r["heads"]["en"]["heads"]) == set(HEADS)

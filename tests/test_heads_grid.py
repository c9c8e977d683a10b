"""4-1's grid of the real model's heads (ui/widgets/heads_grid.py) and the shaded words' type colour (ui/views.ink),
without a browser: every head a button with its real weight and top words, the pick and the strongest marked in words,
and type that keeps 4.5 : 1 on every shade."""

import re

import pytest

from dragon import api
from dragon.levels.loader import get_level
from ui.rooms import slider_views as views
from ui.strings import t
from ui.widgets.heads_grid import heads_grid


@pytest.fixture(scope="module")
def crystal() -> dict:
    word, target = get_level("4-1").ask
    return api.crystal_ball(get_level("4-1").text["en"], word, target)


def test_before_the_pick_the_heads_show_colour_and_words_not_weights(crystal) -> None:
    html = heads_grid(crystal, "en")
    assert "cb-w" not in html
    labels = re.findall(r'<button [^>]*aria-label="([^"]*)">', html)
    assert len(labels) == 72 and not any(c.isdigit() for label in labels for c in label.split("→", 1)[1])
    assert 'data-reveal="question"' in html and "picked" not in html and "best" not in html


def test_after_the_pick_every_head_prints_its_weight_and_top_words(crystal) -> None:
    html = heads_grid(crystal, "en", picked=[0, 0])
    cells = re.findall(r'<button [^>]*data-pick="(\d+),(\d+)" aria-label="([^"]*)">.*?class="cb-w">([0-9.]+)<', html)
    assert len(cells) == crystal["layers"] * crystal["heads"] == 72
    tg, q = crystal["target"]["position"], crystal["position"]
    for li, hi, label, shown in cells:
        row = crystal["attention"][int(li)][int(hi)]
        assert shown == f"{row[tg]:.2f}"  # its weight on the target, as computed
        top = max(v for j, v in enumerate(row) if j != q)
        assert label.startswith(f"L{int(li) + 1} H{int(hi) + 1} → ") and label.split(", ")[0].endswith(f"{top:.2f}")


def test_the_pick_and_the_strongest_are_named_in_words(crystal) -> None:
    best = [crystal["best"]["layer"], crystal["best"]["head"]]
    other = [0, 0] if best != [0, 0] else [0, 1]
    html = heads_grid(crystal, "zh", picked=other, best_shown=True)
    assert html.count('class="cb-map picked"') == 1 and html.count('class="cb-map best"') == 1
    assert html.count(t("c_tag_picked", "zh")) == 2 and html.count(t("c_tag_best", "zh")) == 2  # shown and said
    both = heads_grid(crystal, "en", picked=best, best_shown=True)
    assert both.count('class="cb-map picked best"') == 1 and "your pick · strongest" in both
    assert "best" not in heads_grid(crystal, "en", picked=other).replace("data-pick", "")  # not shown unless asked


def contrast(rgb: tuple[int, int, int], alpha: float, ink: tuple[int, int, int]) -> float:
    def lum(c: tuple[float, ...]) -> float:
        lin = [((x / 255 + 0.055) / 1.055) ** 2.4 if x / 255 > 0.04045 else x / 255 / 12.92 for x in c]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    bg = tuple(255 * (1 - alpha) + ch * alpha for ch in rgb)
    a, b = sorted((lum(bg), lum(ink)), reverse=True)
    return (a + 0.05) / (b + 0.05)


@pytest.mark.parametrize("rgb", [views.MIX_RGB, views.OVER_RGB, views.UNDER_RGB])
def test_shaded_words_keep_their_type_readable_at_every_shade(rgb) -> None:
    for k in range(101):
        a = k / 100
        ink = (255, 255, 255) if views.ink(rgb, a) else (0, 0, 0)
        assert contrast(rgb, a, ink) >= 4.5, (rgb, a, ink)

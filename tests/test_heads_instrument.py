"""The real model's 72 heads as an instrument (sandbox and 4-1 after the pick): every head's row carried with its
numbers for the detail box, heads ranked by the weight between a word and a target word, previous- and next-word
heads labelled so (ui/widgets/heads_grid.py), all from the real attention."""

import html
import re

from dragon import api
from ui.strings import t
from ui.widgets import heads_grid

TEXT = "The scientist said that she would publish the results soon."


def test_a_previous_word_head_is_named_so_and_any_head_carries_its_row() -> None:
    r = api.crystal_ball(TEXT, "she")
    q = r["position"]
    kinds = {}
    for li, layer in enumerate(r["attention"]):
        for hi, row in enumerate(layer):
            top = max((j for j in range(len(row)) if j != q), key=lambda j: row[j])
            kinds[li, hi] = "prev" if top == q - 1 else "next" if top == q + 1 else None
            assert heads_grid.neighbour_of(row, q) == kinds[li, hi]
    best = r["best"]
    assert kinds[best["layer"], best["head"]] == "prev"  # the head sending "she" furthest only looks at "that"
    assert "next" in kinds.values() and None in kinds.values()  # every kind occurs: the label is not decoration
    row = r["attention"][1][4]
    attrs = heads_grid.look_attrs(row, q, "en")
    numbers = [float(x) for x in re.search(r'data-row="([^"]+)"', attrs).group(1).split(",")]
    assert len(numbers) == len(r["tokens"]) and max(abs(a - b) for a, b in zip(numbers, row, strict=True)) < 5e-5


def test_heads_are_ranked_by_the_weight_from_the_word_to_the_target() -> None:
    r = api.crystal_ball(TEXT, "she", "scientist")
    to = r["target"]["position"] if r.get("target") else r["tokens"].index("scientist")
    out = html.unescape(heads_grid.ranking_html(r, "en", to))
    listed = re.findall(r"<li>L(\d) H(\d+) (\d\.\d\d)", out)
    weights = sorted(((r["attention"][li][hi][to], li, hi) for li in range(6) for hi in range(12)), reverse=True)
    assert [(int(a) - 1, int(b) - 1) for a, b, _ in listed] == [(li, hi) for _, li, hi in weights[:8]]
    assert [float(w) for _, _, w in listed] == sorted((float(w) for _, _, w in listed), reverse=True)
    assert "“she”" in out and "“scientist”" in out
    assert (r["best"]["layer"], r["best"]["head"]) == (weights[0][1], weights[0][2])  # the view's head, the same one


def test_the_sandbox_view_asks_for_a_target_and_reads_any_head() -> None:
    from dragon.engine import default_dragon
    from ui.teacher import sandbox

    reading = default_dragon().read(TEXT, "en")
    out = sandbox.crystal_html("en", reading, TEXT, "she", "scientist")
    assert out.count('data-act="look"') == 72 and out.count("data-row=") == 72
    assert 'class="cb-detail"' in out and 'class="cb-rank"' in out
    assert 'data-field="target"' in out and '<option value="scientist" selected>' in out
    assert t("c_prev", "en") in out

"""Every scored answer is decided by a clear margin: explain() lists each scored question of every level that is not
a slider level, with its accepted answers and the measured margin, and the margin rule of DESIGN.md holds for all."""

import math

import pytest

from dragon import api, margins
from dragon.lessons.heads_experiment import Experiment
from dragon.levels import LANGS, all_levels

LEVELS = [lv for lv in all_levels().values() if not lv.sliders]
# what decides each kind of measured answer (DESIGN.md: a share by 5 points, a distance by 0.1 word, a timing by
# the spread of repeated runs); answers that are facts of the architecture or exact counts have no margin (None)
NEEDS = {"share": margins.SHARE_MARGIN, "share bucket": margins.SHARE_MARGIN, "cosine bucket": margins.SHARE_MARGIN,
         "words": margins.DISTANCE_MARGIN, "factor from the edge": 10.0}  # fmt: skip
EXACT = {"exact", "count", "exact accuracy"}


@pytest.fixture(scope="module", autouse=True)
def short_experiment():
    """3-4's models trained short (the margin rule is checked on whatever the run gives, as the app would)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(api, "EXPERIMENT", Experiment(steps=150, curve_points=15))
        yield


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.id)
def test_every_scored_question_is_decided_by_a_clear_margin(level, lang) -> None:
    out = api.explain(level.id, lang)
    assert out["kind"] == level.kind and isinstance(out["questions"], list)
    if level.kind != "badge":  # 5-2's stars are the player's results, not an answer
        assert out["questions"], f"{level.id}: no scored question listed"
    for q in out["questions"]:
        assert q["accepted"], (level.id, q["id"])
        if q["unit"] in EXACT:
            assert q["margin"] is None, (level.id, q)
        elif q["unit"] == "factor range":  # a timed answer: scored against the whole range of repeated runs
            lo, hi = q["accepted"]
            assert 0 < lo <= hi and q["margin"] == pytest.approx(hi / lo, abs=1e-3) and len(q["measured"]) >= 5
        else:
            need = NEEDS[q["unit"]]
            assert q["margin"] is not None and (math.isinf(q["margin"]) or q["margin"] >= need), (level.id, q)


def test_slider_levels_still_explain_their_claims() -> None:
    out = api.explain("2-1", "zh")
    assert out["kind"] == "poem" and out["claims"] and "questions" not in out


def test_explain_refuses_unknown_levels_and_languages() -> None:
    for bad in (("9-9", "zh"), ("3-1", "fr")):
        with pytest.raises(ValueError, match=r"unknown level|lang must be"):
            api.explain(*bad)

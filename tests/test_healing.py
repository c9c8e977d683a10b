"""4-4's heal: after pruning, the heads left on are fine-tuned with the switched-off heads held at zero; the share of
the lost accuracy that comes back is measured against the full model given the same steps, on three seeds, and the
heal's question is decided by its margin."""

import re

import pytest
import torch

from dragon import api, game
from dragon.findings import untrue
from dragon.lessons import healing
from dragon.lessons.pruning import best_pruning, trained
from dragon.margins import SHARE_MARGIN
from ui.rooms import registry as rooms
from ui.rooms.loading import SEED

SEEDS = (0, 1, 2)
pytestmark = pytest.mark.slow  # each heal trains two copies of 4-3's model for HEAL_STEPS steps


@pytest.fixture(scope="module")
def heals() -> list[dict]:
    """The heal of 4-4's answer (its best pruning) on each seed, as the level measures it (the server's run: the page's
    heal below finds it done)."""
    return [api.heal(None, seed) for seed in SEEDS]


def test_a_switched_off_head_stays_off_while_the_rest_are_tuned(heals: list[dict]) -> None:
    model, _ = trained(0)
    pattern = best_pruning(0)["patterns"][0]
    before = {k: v.clone() for k, v in model.state_dict().items()}
    healing.heal(pattern, 0, steps=20, device=torch.device("cpu"))
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in before.items())  # 4-3's shared model is untouched
    r = heals[0]
    assert r["active"] == pattern and r["curves"]["pruned"][0] == r["pruned_accuracy"]
    assert r["pruned_accuracy"] < r["full_accuracy"]  # the pruning cost something before the heal


@pytest.mark.parametrize("seed", SEEDS)
def test_the_heal_is_measured_against_the_full_model_given_the_same_steps(heals: list[dict], seed: int) -> None:
    r = heals[seed]
    assert r["steps"] == healing.HEAL_STEPS and len(r["curves"]["pruned"]) == len(r["curve_steps"])
    lost = r["full_after_accuracy"] - r["pruned_accuracy"]
    assert r["lost"] == pytest.approx(lost, abs=1e-4)
    assert r["back_share"] == pytest.approx((r["healed_accuracy"] - r["pruned_accuracy"]) / lost, abs=1e-3)
    assert untrue(healing.FINDINGS, healing.measured(r)) == [], r


def test_the_heals_question_is_decided_by_its_margin(heals: list[dict]) -> None:
    (q,) = healing.questions(heals)
    shares = [r["back_share"] for r in heals]
    assert q["measured"] == shares and q["accepted"]
    for share in shares:  # every seed's own bucket is accepted, and any bucket within the margin of it
        assert healing.back_bucket(share) in q["accepted"]
        for nudge in (-SHARE_MARGIN, SHARE_MARGIN):
            assert healing.back_bucket(min(max(share + nudge, 0), 1)) in q["accepted"]
    assert len(q["accepted"]) < len(healing.BACK)  # some answer is wrong: the question can be failed


@pytest.mark.parametrize("active, message",
                         [([1] * 7, "list of 8 switches"), ([1] * 7 + [2], r"1 \(on\) or 0 \(off\)")])
def test_bad_switches_are_clear_errors(active: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        healing.heal(active, 0, steps=10)


def test_bad_steps_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="steps must be in 10…2000"):
        healing.heal([1] * 8, 0, steps=5)


def test_the_page_heals_the_answers_pruning_after_the_level_and_scores_nothing(heals: list[dict]) -> None:
    """4-4 played: the answer submitted, then the heal asked (a bad guess refused), measured in the lane and checked
    against the measured share by its margin; the level's stars and the progress stay the pruning's."""
    assert SEED in SEEDS
    r = heals[SEEDS.index(SEED)]
    state, saved = {"level": "4-4", "lang": "en"}, game.save(game.new_progress())
    best = api.prune_best(SEED)
    switches = {f"h{i}": str(a) for i, a in enumerate(best["patterns"][0])}
    done = rooms.answer("submit", state, saved, switches)
    assert done["session"]["lab"]["stars"] == 3 and 'data-act="heal"' in done["lab"]["body"]
    assert rooms.answer("heal", state, saved, {"back": "most"}) == {}  # before the answer: no heal
    refused = rooms.answer("heal", done["session"], done["saved"], {"back": "all of it"})
    assert "heal" not in str(refused.get("session", {}).get("lab", {})) and "lab" in refused
    (q,) = healing.questions([r])
    for guess in healing.BACK:
        out = rooms.answer("heal", done["session"], done["saved"], {"back": guess})
        lab = out["session"]["lab"]
        assert lab["heal"] == r and lab["heal_guess"] == guess and lab["stars"] == 3 and "saved" not in out
        marked = re.search(r"Your guess: [^<]*? ([✓✗])\.", out["lab"]["body"]).group(1)
        assert (marked == "✓") == (guess in q["accepted"]), guess
        assert f"{r['healed_accuracy']:.1%}" in out["lab"]["body"]
    assert rooms.answer("heal", out["session"], done["saved"], {"back": "most"}) == {}  # one heal an attempt

"""4-5's and 4-6's seed box: 0 is the grid this server recorded, another number n trains seeds n, n + 1, n + 2 afresh
in the server's lane with the wait box in the player's language; a bad seed is refused and changes nothing. No
training here: a new seed's run is stopped before it trains (tests/lane.py)."""

import pytest

from dragon import game
from dragon.levels.loader import get_level
from tests.lane import asked_for_a_new_seed
from ui.rooms import registry as rooms
from ui.strings import t
from ui.widgets.draw import esc

PRESSES = {"4-5": ("grid", {"who": "one", "rate": "0.1"}, "stability", "w_4-5"),
           "4-6": ("route", {"k": "4"}, "routing", "w_4-6")}


@pytest.mark.parametrize("level_id", sorted(PRESSES))
@pytest.mark.parametrize("bad", ["-1", "1.5", "abc", "2147483648", "１２", ""])
def test_a_bad_seed_is_refused_in_the_players_language_and_changes_nothing(level_id: str, bad: str) -> None:
    event, answers, _, _ = PRESSES[level_id]
    for lang in ("zh", "en"):
        out = rooms.answer(event, {"level": level_id, "lang": lang}, game.save(game.new_progress()),
                           {**answers, "seed": bad})
        assert set(out) == {"lab"} and esc(t("w_seed_bad", lang)) in out["lab"]["body"]


@pytest.mark.parametrize("level_id", sorted(PRESSES))
def test_a_new_first_seed_trains_afresh_in_the_lane_and_the_wait_names_it(level_id: str) -> None:
    event, answers, key, what = PRESSES[level_id]
    for lang in ("zh", "en"):
        out, run = asked_for_a_new_seed(event, level_id, {**answers, "seed": "7"}, lang)
        assert run.key.startswith(f"{key}/seed=7/") and run.seed == 7 and run.level == level_id
        attempt = out["session"]["lab"]
        assert attempt["seed"] == 7 and attempt["answers"] == answers  # kept for when the run is done
        body = out["lab"]["body"]
        assert esc(t(what, lang, seed=t("w_seed", lang, seed=7))) in body  # the wait box, in the page's language
        assert 'data-answer="seed"' in body and 'value="7"' in body and "disabled" in body  # the box, locked


def test_the_seed_box_says_what_0_and_another_number_do() -> None:
    for level_id in PRESSES:
        for lang in ("zh", "en"):
            body = rooms.lab_props(get_level(level_id), lang, game.new_progress())["body"]
            assert esc(t("w_seeds_label", lang)) in body and 'data-answer="seed"' in body and 'value="0"' in body

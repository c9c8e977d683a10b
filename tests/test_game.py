"""Progress: pure updates, derived XP and unlocks, tamper-evident saving, export codes."""

import base64
import json

import pytest

from dragon import api, game
from dragon.levels.loader import load_levels


def test_record_keeps_the_best() -> None:
    p = game.record(game.new_progress(), "2-1", 80.0, 1)
    p = game.record(p, "2-1", 60.0, 0)
    assert p["stars"]["2-1"] == 1 and p["best"]["2-1"] == 80.0
    assert game.xp(p) == 100 + 8


def test_shown_by_the_goddess_round_trips() -> None:
    p = game.mark_shown(game.new_progress(), "2-4")
    assert game.shown(p, "2-4") and not game.shown(p, "2-1") and p["stars"] == {}
    assert game.load(game.save(p)).progress == p


def test_saves_from_before_the_shown_field_still_load() -> None:
    old = {"version": 1, "stars": {"1-1": 2}, "best": {"1-1": 66.67}, "hints": {}}
    old["sig"] = game._signature(old)
    loaded = game.load(old)
    assert loaded.notice is None and loaded.progress["stars"] == {"1-1": 2} and loaded.progress["shown"] == {}


def test_chapters_unlock_at_a_star() -> None:
    p = game.new_progress()
    assert game.unlocked_chapters(p) == {1}
    p = game.record(p, "1-1", 100, 1)
    assert game.unlocked_chapters(p) == {1}
    p = game.record(p, "1-2", 100, 2)
    assert game.unlocked_chapters(p) == {1, 2}


def test_saved_progress_round_trips() -> None:
    p = game.use_hint(game.record(game.new_progress(), "2-3", 97.5, 3), "2-3")
    loaded = game.load(json.loads(json.dumps(game.sign(p))))
    assert loaded.notice is None and loaded.progress == p


@pytest.mark.parametrize(
    "tamper",
    [
        lambda s: s["stars"].update({"2-1": 3}),  # edited without the signature
        lambda s: s.update({"sig": "0" * 16}),
        lambda s: s.update({"version": 99}),
        lambda s: s.pop("best"),
        lambda s: s["shown"].update({"2-1": 1}),
    ],
)
def test_tampered_progress_resets_with_notice(tamper) -> None:
    saved = game.sign(game.record(game.new_progress(), "2-2", 90, 2))
    tamper(saved)
    loaded = game.load(saved)
    assert loaded.notice == "damaged" and loaded.progress == game.new_progress()


@pytest.mark.parametrize("saved", ["{not json", 42, [1, 2], "null", {"stars": "x"}, "\x00"])
def test_garbage_resets_never_crashes(saved) -> None:
    loaded = game.load(saved)
    assert loaded.progress == game.new_progress()


def test_out_of_range_values_are_refused_even_when_signed() -> None:
    p = game.new_progress()
    p["stars"]["2-1"] = 7
    assert game.load(game.sign(p)).notice == "damaged"


def test_unknown_level_ids_are_dropped() -> None:
    p = game.new_progress()
    p["stars"]["99-1"] = 2
    loaded = game.load(game.sign(p))
    assert loaded.notice is None and loaded.progress["stars"] == {}


def test_export_import_code() -> None:
    p = game.record(game.new_progress(), "1-1", 100, 3)
    code = game.export_code(p)
    assert code.startswith("DRAGON1-") and game.import_code(code) == p
    for bad in ["", "hello", code[:-4] + "AAAA", "DRAGON1-!!!", "DRAGON1-" + "A" * 30000]:
        with pytest.raises(ValueError):
            game.import_code(bad)


@pytest.mark.parametrize("raw", ["null", "{}", '""'])
def test_a_code_that_carries_no_signed_progress_is_refused(raw: str) -> None:
    """A code of null, {} or "" read as 'nothing saved' (a fresh start) and so wiped the player's progress."""
    code = game.CODE_PREFIX + base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")
    with pytest.raises(ValueError):
        game.import_code(code)
    assert game.import_code(game.export_code(game.new_progress())) == game.new_progress()  # a real empty one is fine


def test_the_largest_real_progress_code_fits_the_bound() -> None:
    ids = [lv.id for c in load_levels() for lv in c.levels] + [f"t-{i:012x}" for i in range(game.MAX_TEACHER_LEVELS)]
    full = game.new_progress()
    for table, value in (("stars", 3), ("best", 99.99), ("hints", 99), ("shown", 1)):
        full[table].update(dict.fromkeys(ids, value))
    code = game.export_code(full)
    assert len(code) < game.MAX_CODE_CHARS and game.import_code(code) == full


def test_api_levels_and_play() -> None:
    levels = api.levels()
    assert [lv["id"] for lv in levels][:3] == ["1-1", "1-2", "2-1"]
    assert all({"id", "chapter", "kind", "title"} <= set(lv) and set(lv["title"]) == {"zh", "en"} for lv in levels)
    target = api.slider_level("2-1").target_for("zh")
    result = api.play("2-1", list(target))
    assert result["score"] == 100 and result["stars"] == 3
    assert "logic" in result["silent_heads"]  # no connective in the poem
    assert api.play("2-1", [0.0] * 8)["score"] == 0


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: api.play("9-9", [0.5] * 8), "unknown level"),
        (lambda: api.play("1-1", [0.5] * 8), "not a slider level"),
        (lambda: api.play("2-1", [0.5] * 7), "8 values"),
        (lambda: api.play("2-1", [float("nan")] * 8), "finite"),
        (lambda: api.play("2-1", [2.0] * 8), "between 0 and 1"),
        (lambda: api.play("2-1", [0.5] * 8, lang="fr"), "lang"),
        (lambda: api.hint("2-1", "abc"), "8 values|numbers"),
    ],
)
def test_api_bad_calls_are_clear(call, message) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_api_hint_points_uphill() -> None:
    h = api.hint("2-1", [0.5] * 8)
    assert h["head"] == "emotion" and h["direction"] == 1 and h["score_after"] > h["score"]

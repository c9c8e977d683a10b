"""UI pieces without a browser: escaping, handlers' state passing, views."""

import dataclasses

import pytest

from dragon import game
from dragon.levels import get_level
from ui import handlers
from ui.draw import esc, story_html, tokens_html, why_html

NASTY = "<script>alert(1)</script> ${alert(2)} {{x}} `y` 床前"


def test_escape_blocks_markup_and_template_syntax() -> None:
    out = esc(NASTY)
    assert "<script" not in out and "${" not in out and "{{" not in out and "`" not in out
    assert "床前" in out


def test_level_text_in_html_is_escaped() -> None:
    level = dataclasses.replace(get_level("2-1"), story={"zh": NASTY, "en": NASTY}, why={"zh": NASTY, "en": NASTY})
    for html in (story_html(level, "zh"), why_html(level, "en", True), tokens_html(NASTY.split(), "zh")):
        assert "<script" not in html and "${" not in html and "{{" not in html


def test_boot_opens_a_linked_level_in_the_linked_language() -> None:
    view = handlers.boot('{"lang": "en", "level": "2-3", "projector": true}', None)
    assert view["session"] == {"level": "2-3", "lang": "en"} and "On the Stork Tower" in view["story"]
    assert "#compare-panel,#match-panel{display:none" in view["story"]  # only the slider panel shows


@pytest.mark.parametrize("boot", ['{"level": "9-9"}', '{"level": "<b>x</b>"}', "not json", '["x"]', "x" * 5000, None])
def test_boot_survives_odd_links(boot) -> None:
    view = handlers.boot(boot, None)
    assert view["session"]["level"] == "1-1"  # a new player starts at the beginning


def test_unknown_link_says_so() -> None:
    view = handlers.boot('{"level": "<b>9-9</b>"}', None)
    assert "9-9" in view["story"] and "<b>9-9" not in view["story"]


def test_tampered_browser_value_resets_with_notice() -> None:
    saved = game.save(game.record(game.new_progress(), "1-1", 100, 3)).replace('"1-1":3', '"1-1":2')
    view = handlers.boot('{"lang": "zh"}', saved)
    assert "重新开始" in view["story"] and game.load(view["saved"]).progress == game.new_progress()


def test_move_records_progress_in_the_returned_state_only() -> None:
    saved = game.save(game.new_progress())
    session = {"level": "2-1", "lang": "zh"}
    out = handlers.move(session, saved, *get_level("2-1").target_for("zh"))
    assert "★★★" in out["gauge"]
    assert game.load(out["saved"]).progress["stars"]["2-1"] == 3
    assert game.load(saved).progress["stars"] == {}  # the input was not mutated
    other = handlers.move({"level": "2-1", "lang": "zh"}, saved, *[0.5] * 8)  # another player
    assert game.load(other.get("saved", saved)).progress["stars"].get("2-1", 0) == 0


def test_move_ignores_bad_gates_and_non_slider_levels() -> None:
    saved = game.save(game.new_progress())
    assert handlers.move({"level": "2-1", "lang": "zh"}, saved, *[float("nan")] * 8) == {}
    assert handlers.move({"level": "1-1", "lang": "zh"}, saved, *[0.5] * 8) == {}


def test_hint_caps_the_stars() -> None:
    saved = game.save(game.new_progress())
    out = handlers.hint({"level": "2-1", "lang": "en"}, saved, *[0.5] * 8)
    assert "Emotion" in out["story"] and "raise" in out["story"]
    progress = game.load(out["saved"]).progress
    assert game.hints_used(progress, "2-1") == 1
    won = handlers.move({"level": "2-1", "lang": "en"}, out["saved"], *get_level("2-1").target_for("en"))
    assert "★★☆" in won["gauge"] and game.load(won["saved"]).progress["stars"]["2-1"] == 2


def test_goddess_demo_climbs_to_the_target(monkeypatch) -> None:
    monkeypatch.setattr(handlers, "DEMO_DELAY_S", 0)
    frames = list(handlers.demo({"level": "2-4", "lang": "zh"}, game.save(game.new_progress()), *[0.5] * 8))
    assert len(frames) >= 2
    last = frames[-1]
    assert [last[f"s{i}"] for i in range(8)] != [0.5] * 8
    assert game.load(last["saved"]).progress["best"]["2-4"] >= 95
    assert game.load(last["saved"]).progress["stars"]["2-4"] == 1  # the demo counts as two hints


def test_match_and_compare_give_stars() -> None:
    saved = game.save(game.new_progress())
    out = handlers.check_match({"level": "1-2", "lang": "zh"}, saved, "time", "space", "emotion", "grammar")
    assert game.load(out["saved"]).progress["stars"]["1-2"] == 3
    out = handlers.check_match({"level": "1-2", "lang": "zh"}, saved, "time", "space", None, None)
    assert game.load(out["saved"]).progress["stars"]["1-2"] == 1
    out = handlers.check_compare({"level": "1-1", "lang": "en"}, saved, 5, 1)
    assert game.load(out["saved"]).progress["stars"]["1-1"] == 0


def test_import_code_round_trip_and_bad_code() -> None:
    progress = game.record(game.new_progress(), "1-1", 100, 3)
    code = handlers.export_code({}, game.save(progress))["code_box"]
    view = handlers.import_code(code, {"level": "1-1", "lang": "zh"}, game.save(game.new_progress()))
    assert game.load(view["saved"]).progress == progress
    bad = handlers.import_code("DRAGON1-garbage", {"level": "1-1", "lang": "en"}, game.save(progress))
    assert set(bad) == {"story"} and "nothing was changed" in bad["story"]


def test_locked_chapter_is_refused_from_the_menu() -> None:
    out = handlers.choose_level("2-1", {"level": "1-1", "lang": "en"}, game.save(game.new_progress()))
    assert "locked" in out["story"] and out["level_dd"]["value"] == "1-1"

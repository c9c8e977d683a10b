"""Chapters 4–5 without a browser: level files validated, star rules, unlocks, and every sentence the UI writes
about a number held to the real computation (the tower, the crystal ball's own sentence, positions, the badge)."""

import itertools
import re
from pathlib import Path

import pytest

from dragon import api, game
from dragon.lessons import crystal_ball as crystal_lesson
from dragon.levels import LevelError, get_level, load_chapter, load_levels
from ui import chapter4, chapter5
from ui.text import t

ASK = "ask: {word: they, target: students}"
LEVELS = Path(__file__).resolve().parent.parent / "assets" / "levels"


def test_chapters_four_and_five_load_with_their_kinds() -> None:
    kinds = {lv.id: lv.kind for c in load_levels() for lv in c.levels if c.number >= 4}
    assert kinds == {"4-1": "crystal", "4-2": "tower", "4-3": "grow", "4-4": "prune",
                     "5-1": "positions", "5-2": "badge"}  # fmt: skip
    assert get_level("4-1").ask == ("they", "students")


@pytest.mark.parametrize(
    "old, new, message",
    [
        (ASK, "ask: {word: they, target: pupils}", r"chapter4.yaml: .*ask.target: must be a word"),
        (ASK, "ask: {word: teacher, target: students}", r"ask.word: must be one of she"),
        ("kind: tower", "kind: towers", r"chapter4.yaml: levels\[1\] \(4-2\).kind: must be one of"),
    ],
)
def test_bad_level_files_name_file_and_field(tmp_path: Path, old: str, new: str, message: str) -> None:
    text = (LEVELS / "chapter4.yaml").read_text(encoding="utf-8")
    assert old in text
    bad = tmp_path / "chapter4.yaml"
    bad.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(LevelError, match=message):
        load_chapter(bad)


def test_positions_level_needs_two_words_to_swap(tmp_path: Path) -> None:
    text = (LEVELS / "chapter5.yaml").read_text(encoding="utf-8").replace("en: The dog bites the man.", "en: Hello.")
    bad = tmp_path / "chapter5.yaml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(LevelError, match=r"chapter5.yaml: levels\[0\] \(5-1\).text.en: the text needs two"):
        load_chapter(bad)


def test_star_rules_can_be_lost() -> None:
    assert game.crystal_stars(0.97, 0.97) == 3 and game.crystal_stars(0.44, 0.97) == 2
    assert game.crystal_stars(0.2, 0.97) == 1 and game.crystal_stars(0.05, 0.97) == 0
    assert [game.points_stars(p, 3) for p in range(4)] == [0, 0, 2, 3]
    assert [game.points_stars(p, 2) for p in range(3)] == [0, 1, 3]
    assert [game.points_stars(p, 4) for p in range(5)] == [0, 0, 1, 2, 3]
    assert game.prune_stars(2, 2, True) == 3 and game.prune_stars(1, 2, True) == 2
    assert game.prune_stars(3, 2, False) == 0 and game.prune_stars(0, 2, True) == 0


def test_chapter_four_opens_after_chapter_three_and_five_after_four() -> None:
    progress = game.new_progress()
    for c in load_levels():
        if c.number <= 3:
            for lv in c.levels:
                progress = game.record(progress, lv.id, 90, 1)
    assert 4 in game.unlocked_chapters(progress) and 5 not in game.unlocked_chapters(progress)
    for lv_id in ("4-1", "4-2", "4-3", "4-4"):
        progress = game.record(progress, lv_id, 90, 1)
    assert 5 in game.unlocked_chapters(progress)


def test_crystal_ball_loads_in_time() -> None:
    crystal_lesson.load()
    assert crystal_lesson.load_seconds() <= 5


def test_tower_lines_say_what_the_numbers_show() -> None:
    tw = api.tower()
    lines = chapter4.tower_lines(tw, "en")
    d = [p["distance"] for p in tw["per_layer"]]
    assert f"the nearest is layer {d.index(min(d)) + 1}" in lines[0]
    assert (lines[1] == t("tw_rises", "en")) == all(b > a for a, b in itertools.pairwise(d))
    start, lo, hi = chapter4.sink_layers(tw)
    assert all(p["special"] >= 0.4 for p in tw["per_layer"][start:]) and tw["per_layer"][start - 1]["special"] < 0.4
    assert f"From layer {start + 1} on, {lo:.0%}–{hi:.0%}" in lines[3]
    adjacent = [p["adjacent"] for p in tw["per_layer"]]
    assert (t("tw_verdict_yes", "en") in lines) == (adjacent.index(max(adjacent)) == 0)


def test_own_sentence_says_nearest_noun_only_when_it_is() -> None:
    best = api.crystal_ball(get_level("4-1").text["en"], "they", "students")["best"]
    mine = chapter4.own_sentence("The cat sat on the mat because it was tired.", "it", best)
    top = max((v, j) for j, v in enumerate(mine["row"]) if j != mine["position"])[1]
    assert mine["top"] == mine["tokens"][top] and mine["nearest_noun"] == "mat"
    said = chapter4._try_result("en", mine, best)
    assert ("“mat” is the nearest noun before it" in said) == (mine["top"] == "mat")
    assert ("The nearest noun before it is “mat”" in said) == (mine["top"] != "mat")


def test_positions_numbers_and_truth() -> None:
    p = api.positions("我爱你", "zh")
    assert chapter5.positions_truth(p) == {"free": "same", "pos": "differ"}
    html = chapter5._positions_numbers(p, "en")
    assert f"{p['max_diff_unpermuted_no_positions']:.1e}" in html and f"{p['diff_with_positions']:.3f}" in html


def test_badge_escapes_the_name() -> None:
    progress, attempt, note = chapter5.make_badge(get_level("5-2"), "en", game.new_progress(), {"level": "5-2"},
                                                  {"name": "${alert(1)}<script>"})  # fmt: skip
    body = chapter5._badge_body(get_level("5-2"), "en", progress, attempt, "")
    assert progress["stars"]["5-2"] == 3 and not note
    assert "<script>" not in body and "${" not in body and re.search(r'href="data:image/png;base64,', body)

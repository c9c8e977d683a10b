"""UI pieces without a browser: escaping, handlers' state passing, views, the panel's live answer."""

import dataclasses
import random
import re
from pathlib import Path

import pytest

from dragon import api, game
from dragon.config import HEADS
from dragon.levels.level import PANEL
from dragon.levels.loader import get_level
from dragon.scoring import score
from ui import handlers
from ui.rooms import match as quiz
from ui.rooms import slider_views as views
from ui.rooms import sliders as play
from ui.session import START_GATES, level_after
from ui.strings import STRINGS, i18n_tables, t
from ui.widgets.draw import esc, shown_score, story_html, tokens_html, why_html

NASTY = "<script>alert(1)</script> ${alert(2)} {{x}} `y` 床前"
ZH = {"level": "2-1", "lang": "zh"}


def fresh() -> str:
    return game.save(game.new_progress())


def test_escape_blocks_markup_and_template_syntax() -> None:
    out = esc(NASTY)
    assert "<script" not in out and "${" not in out and "{{" not in out and "`" not in out
    assert "床前" in out


def test_level_text_in_html_is_escaped() -> None:
    level = dataclasses.replace(get_level("2-1"), story={"zh": NASTY, "en": NASTY}, why={"zh": NASTY, "en": NASTY})
    for html in (story_html(level, "zh"), why_html(level, "en"), tokens_html(NASTY.split(), "zh")):
        assert "<script" not in html and "${" not in html and "{{" not in html


def test_every_string_in_both_languages_and_no_clash_with_gradio_keys() -> None:
    assert all(zh.strip() and en.strip() for zh, en in STRINGS.values())
    tables = i18n_tables()
    assert set(tables["en"]) == set(tables["zh-CN"])
    from ui.strings import GRADIO_STRINGS

    ours = [key for key in tables["en"] if key not in GRADIO_STRINGS]
    assert all(key.startswith("mhd_") for key in ours)  # Gradio's own keys ("code", "common"…) never clash…
    assert all(key.startswith("common.") for key in GRADIO_STRINGS)  # …except the status words Gradio leaves raw


def test_the_page_carries_every_string_gradio_shows_and_no_other() -> None:
    """gr.I18n is given the strings Gradio's components show (I18N_KEYS): every i18n_key the UI names, and only those
    (our own HTML is drawn with t() on the server)."""
    import re
    from pathlib import Path

    from ui.strings import I18N_KEYS

    ui = Path(__file__).resolve().parent.parent / "ui"
    named = {m for f in ui.rglob("*.py") for m in re.findall(r"i18n_key\(['\"]([^'\"]+)['\"]\)", f.read_text("utf-8"))}
    assert named and named == set(I18N_KEYS)
    assert set(i18n_tables()["en"]) == {f"mhd_{k}" for k in I18N_KEYS} | {"common.complete", "common.error"}


def test_boot_opens_a_linked_level_in_the_linked_language() -> None:
    view = handlers.boot('{"lang": "en", "level": "2-3", "projector": true}', None)
    assert view["session"] == {"level": "2-3", "lang": "en"} and "On the Stork Tower" in view["top"]["story"]
    assert view["panel"]["kind"] in ("silhouette", "picture") and view["quiz"]["body"] == ""
    assert view["panel"]["value"] == START_GATES and "Export progress code" in view["codes"]["export_label"]


@pytest.mark.parametrize("boot", ['{"level": "9-9"}', '{"level": "<b>x</b>"}', "not json", '["x"]', "x" * 5000, None])
def test_boot_survives_odd_links(boot) -> None:
    view = handlers.boot(boot, None)
    assert view["session"]["level"] == "1-1"  # a new player starts at the beginning


def test_unknown_link_says_so() -> None:
    view = handlers.boot('{"level": "<b>9-9</b>"}', None)
    assert "9-9" in view["top"]["notice"] and "<b>9-9" not in view["top"]["notice"]


def test_tampered_browser_value_resets_with_notice() -> None:
    saved = game.save(game.record(game.new_progress(), "1-1", 100, 3)).replace('"1-1":3', '"1-1":2')
    view = handlers.boot('{"lang": "zh"}', saved)
    assert "重新开始" in view["top"]["notice"] and game.load(view["saved"]).progress == game.new_progress()


# --- the panel's live answer (a server function) and its events --------------------------------------------


def test_live_answers_a_slider_move_with_the_engine_score() -> None:
    target = get_level("2-1").target_for("zh")
    answer = play.live({**ZH, "gates": list(target), "saved": fresh()})
    assert answer["level"] == "2-1" and answer["record"] is True
    assert 'class="score-value">100.0<' in answer["view"]["gauge"] and "★★★" in answer["view"]["gauge"]
    gates = [0.2, 0.9, 0.4, 0.1, 0.3, 0.6, 0.5, 0.7]
    s = score(api.level_reading(get_level("2-1"), "zh"), gates, target)
    assert f">{shown_score(s):.1f}<" in play.live({**ZH, "gates": gates, "saved": fresh()})["view"]["gauge"]


@pytest.mark.parametrize(
    "payload",
    [None, [], "x", {"level": "1-1", "lang": "zh", "gates": [0.5] * 8}, {**ZH, "gates": [0.5] * 7},
     {**ZH, "gates": [float("nan")] * 8}, {**ZH, "gates": [2] * 8}, {**ZH, "lang": "fr", "gates": [0.5] * 8},
     {**ZH, "gates": "abc"}, {"level": 3, "lang": "zh", "gates": [0.5] * 8}],
)
def test_live_refuses_bad_payloads_without_raising(payload) -> None:
    assert set(play.live(payload)) == {"error"}


def test_live_with_damaged_progress_still_answers() -> None:
    assert "view" in play.live({**ZH, "gates": [0.5] * 8, "saved": "garbage{{"})


def test_record_saves_in_the_returned_state_only() -> None:
    saved = fresh()
    out = play.record(ZH, saved, list(get_level("2-1").target_for("zh")))
    assert game.load(out["saved"]).progress["stars"]["2-1"] == 3 and out["panel"]["won"] == "won w3"
    assert "★★★" in out["top"]["options"] and 'data-act="next"' in out["panel"]["next"]
    assert game.load(saved).progress["stars"] == {}  # the input was not mutated
    assert play.record(ZH, saved, [0.0] * 8) != {}  # a first score of 0 is still a best
    assert play.record(ZH, out["saved"], [0.5] * 8) == {}  # no better than the record: nothing to save


def test_live_brings_back_what_record_saves() -> None:
    """A better score: the live answer carries the progress 'record' will save, so the next move counts it at once."""
    saved, gates = fresh(), [0.2, 0.9, 0.4, 0.1, 0.3, 0.6, 0.5, 0.7]
    answer = play.live({**ZH, "gates": gates, "saved": saved})
    assert answer["record"] is True and answer["saved"] == play.record(ZH, saved, gates)["saved"]
    again = play.live({**ZH, "gates": gates, "saved": answer["saved"]})
    assert again["record"] is False and "saved" not in again
    s = play.level_score(get_level("2-1"), "zh", gates)
    assert f"{shown_score(s):.1f}" in again["view"]["gauge"].split('class="best">')[1].split("<")[0]  # this score


def scores_between(low: float, high: float, count: int) -> list[list[float]]:
    """Gate vectors scoring in [low, high) on 2-1 (zh), worst first."""
    rng, found = random.Random(3), []
    while len(found) < count:
        gates = [round(rng.random(), 2) for _ in range(8)]
        if low <= play.level_score(get_level("2-1"), "zh", gates) < high:
            found.append(gates)
    return sorted(found, key=lambda g: play.level_score(get_level("2-1"), "zh", g))


def test_record_sends_the_panel_and_the_top_only_when_they_change() -> None:
    first, second = scores_between(40.2, 49.8, 2)  # better and better, no star, the XP within one ten
    out = play.record(ZH, fresh(), first)
    assert set(out) == {"saved", "top"} and "panel" not in out  # XP from the first best: the top changes
    better = play.record(ZH, out["saved"], second)
    assert set(better) == {"saved"}  # the same XP and stars: only the browser's copy of the progress
    star = play.record(ZH, better["saved"], list(get_level("2-1").target_for("zh")))
    assert {"saved", "top", "panel"} <= set(star) and star["panel"]["saved"] == star["saved"]


def test_record_ignores_bad_gates_and_non_slider_levels() -> None:
    assert play.record(ZH, fresh(), [float("nan")] * 8) == {}
    assert play.record({"level": "1-1", "lang": "zh"}, fresh(), [0.5] * 8) == {}


def test_star_caps_are_shown_before_any_help_is_used() -> None:
    panel = handlers.boot('{"lang": "en", "level": "2-4"}', None)["panel"]
    hint, demo = (
        re.search(r'data-act="hint".*?</button>', panel["actions"]),
        re.search(r'data-act="demo".*?</button>', panel["actions"]),
    )
    assert "then at most ★★☆" in hint.group(0) and "then at most ★☆☆" in demo.group(0)
    assert "Best reachable on this level: ★★★" in panel["gauge"]


def test_hint_caps_the_stars_and_marks_the_slider() -> None:
    out = play.hint({"level": "2-1", "lang": "en"}, fresh(), [0.5] * 8)
    assert "Emotion" in out["panel"]["feedback"] and "raise" in out["panel"]["feedback"]
    assert "↑" in out["panel"]["marks"][2] and "Best reachable on this level: ★★☆" in out["panel"]["gauge"]
    assert game.hints_used(game.load(out["saved"]).progress, "2-1") == 1
    won = play.record({"level": "2-1", "lang": "en"}, out["saved"], list(get_level("2-1").target_for("en")))
    assert game.load(won["saved"]).progress["stars"]["2-1"] == 2


def test_goddess_demo_shows_the_path_but_awards_nothing(monkeypatch) -> None:
    monkeypatch.setattr(play, "DEMO_DELAY_S", 0)
    mine = [0.5] * 8
    frames = list(play.demo({"level": "2-4", "lang": "en"}, fresh(), mine))
    assert len(frames) >= 3
    assert any(f["panel"]["value"] != mine for f in frames[:-1])  # the sliders climb …
    assert "not scored" in frames[0]["panel"]["gauge"]
    last = frames[-1]
    assert last["panel"]["value"] == mine  # … and go back where the player left them
    progress = game.load(last["saved"]).progress
    assert progress["stars"].get("2-4", 0) == 0 and "2-4" not in progress["best"] and game.shown(progress, "2-4")
    assert game.hints_used(progress, "2-4") == 2 and "shown by the goddess" in last["top"]["options"]


def test_reveal_shows_the_target_on_the_sliders_and_why() -> None:
    out = play.reveal({"level": "2-4", "lang": "zh"}, fresh(), [0.5] * 8)
    target = get_level("2-4").target_for("zh")
    assert all(f"--at:{v:.2f}" in mark for v, mark in zip(target, out["panel"]["marks"], strict=True))
    assert get_level("2-4").why["zh"][:10] in out["panel"]["feedback"]
    assert views.claims_html(get_level("2-4"), "zh") in out["panel"]["feedback"]  # the measured claims too
    assert game.hints_used(game.load(out["saved"]).progress, "2-4") == 2


def test_reset_puts_the_sliders_back() -> None:
    out = play.reset(ZH, fresh(), [0.9] * 8)
    assert out["panel"]["value"] == START_GATES and t("reset_says", "zh") in out["panel"]["feedback"]


def test_next_level_after_a_win() -> None:
    progress = game.record(game.record(game.new_progress(), "1-1", 100, 3), "1-2", 100, 3)
    assert level_after(get_level("1-2"), progress) == "2-1"
    assert level_after(get_level("1-1"), game.record(game.new_progress(), "1-1", 100, 1)) == "1-2"
    assert level_after(get_level("2-4"), game.new_progress()) == "2-5"  # a teacher's link: the class goes on in order
    assert level_after(get_level("2-10"), progress) is None or level_after(get_level("2-10"), progress) != "2-10"
    view = handlers.next_level({"level": "2-1", "lang": "zh"}, game.save(game.record(progress, "2-1", 90, 2)))
    assert view["session"]["level"] == "2-2"


# --- chapter 1 ----------------------------------------------------------------------------------------------

RIGHT = {"p0": "time", "p1": "space", "p2": "emotion", "p3": "grammar"}


def test_match_gives_stars_and_keeps_the_answers() -> None:
    out = quiz.check({"level": "1-2", "lang": "en"}, fresh(), RIGHT)
    assert game.load(out["saved"]).progress["stars"]["1-2"] == 3 and "4 of 4 right" in out["quiz"]["body"]
    assert 'value="time" selected' in out["quiz"]["body"]


def test_chapter_one_answers_cannot_be_farmed_by_retyping() -> None:
    wrong = quiz.check({"level": "1-2", "lang": "en"}, fresh(), {**RIGHT, "p0": "tone", "p1": "logic"})
    assert game.load(wrong["saved"]).progress["stars"]["1-2"] == 1 and "it was the Time head" in wrong["quiz"]["body"]
    again = quiz.check({"level": "1-2", "lang": "en"}, wrong["saved"], RIGHT)  # retype the answer just shown
    assert game.load(again["saved"]).progress["stars"]["1-2"] == 1 and "★☆☆" in again["quiz"]["body"]
    level = get_level("1-1")
    _, truth = views.compare_html(level, "zh")
    miss = quiz.check({"level": "1-1", "lang": "zh"}, fresh(), {"one": "40", "eight": "40"})
    assert game.load(miss["saved"]).progress["stars"]["1-1"] == 0 and "再试最多只能得 ★☆☆" in miss["quiz"]["body"]
    exact = {"one": str(len(truth["one_head_sees"])), "eight": str(len(truth["eight_heads_see"]))}
    for saved, expected in ((miss["saved"], 1), (fresh(), 3)):  # retyped after the answer was shown, or first time
        out = quiz.check({"level": "1-1", "lang": "zh"}, saved, exact)
        assert game.load(out["saved"]).progress["stars"]["1-1"] == expected


@pytest.mark.parametrize(
    "data",
    [{"one": "abc", "eight": "3"}, {"one": "-1", "eight": "3"}, {"one": "2.5", "eight": "1"},
     {"one": "1e3", "eight": "2"}, {}, None],
)
def test_bad_guesses_change_nothing(data) -> None:
    out = quiz.check({"level": "1-1", "lang": "en"}, fresh(), data)
    assert set(out) == {"quiz"} and "nothing was changed" in out["quiz"]["body"]


def test_unanswered_findings_change_nothing() -> None:
    out = quiz.check({"level": "1-2", "lang": "zh"}, fresh(), {"p0": "time", "p1": "<b>"})
    assert set(out) == {"quiz"} and "什么都没有改变" in out["quiz"]["body"]


def test_match_pickers_speak_the_players_language() -> None:
    body = handlers.boot('{"lang": "en", "level": "1-2"}', None)["quiz"]["body"]
    assert "⑤ Time" in body and "时序头" not in body
    assert "⑤ 时序头" in handlers.boot('{"lang": "zh", "level": "1-2"}', None)["quiz"]["body"]


# --- page-level events ----------------------------------------------------------------------------------------


def test_language_switch_keeps_the_level_and_starts_it_from_its_own_start() -> None:
    mine = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    out = handlers.switch_lang({"level": "2-3", "lang": "zh"}, fresh(), mine, {"lang": "en"})
    assert out["session"] == {"level": "2-3", "lang": "en"} and out["panel"]["value"] == [0.5] * 8
    assert out["panel"]["opened"] > 0  # the page takes these sliders, not the ones it had (tests/test_browser.py)
    assert "On the Stork Tower" in out["top"]["story"] and handlers.switch_lang(ZH, fresh(), mine, {"lang": "x"}) == {}


def test_import_code_round_trip_and_bad_code() -> None:
    progress = game.record(game.new_progress(), "1-1", 100, 3)
    code = handlers.export_code({}, game.save(progress))["codes"]["code"]
    assert isinstance(code, str) and code.startswith("DRAGON1-")
    view = handlers.import_code({"level": "1-1", "lang": "zh"}, fresh(), {"code": code})
    assert game.load(view["saved"]).progress == progress and "进度已导入" in view["codes"]["message"]
    bad = handlers.import_code({"level": "1-1", "lang": "en"}, game.save(progress), {"code": "DRAGON1-garbage"})
    assert set(bad) == {"codes"} and "nothing was changed" in bad["codes"]["message"]
    # the box's "imported" belongs to that moment: the next level opened, by Next or the list, closes it unsaid
    on = handlers.next_level({"level": "1-1", "lang": "zh"}, view["saved"])
    picked = handlers.choose_level({"level": "1-1", "lang": "zh"}, view["saved"], {"level": "1-2"})
    for opened in (on, picked):
        assert opened["session"]["level"] == "1-2" and opened["codes"]["message"] == "" and not opened["codes"]["open"]


# --- a progress code over other progress: asked first -------------------------------------------------------------

MINE = game.record(game.record(game.new_progress(), "1-1", 100, 3), "2-1", 80, 1)  # ★ 4 from 2 levels
THEIRS = game.record(game.new_progress(), "2-2", 96, 3)  # ★ 3 from 1 level


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_code_over_other_progress_asks_what_each_holds_and_changes_nothing(lang: str) -> None:
    out = handlers.import_code({"level": "2-1", "lang": lang}, game.save(MINE), {"code": game.export_code(THEIRS)})
    assert set(out) == {"codes"}  # nothing saved, nothing redrawn: only the question
    codes = out["codes"]
    assert codes["ask"] is True and codes["message"] == esc(t("ci_question", lang))
    assert codes["here"] == esc(t("ci_here", lang, stars=4, levels=2, xp=game.xp(MINE)))
    assert codes["there"] == esc(t("ci_code", lang, stars=3, levels=1, xp=game.xp(THEIRS)))
    assert game.import_code(codes["pending"]) == THEIRS  # what 'replace' imports is the code asked about
    assert codes["replace_label"] == esc(t("ci_replace", lang)) and codes["keep_label"] == esc(t("ci_keep", lang))


def test_replace_imports_the_code_and_keep_changes_nothing() -> None:
    asked = handlers.import_code(ZH, game.save(MINE), {"code": game.export_code(THEIRS)})["codes"]
    replaced = handlers.import_code(ZH, game.save(MINE), {"code": asked["pending"], "answer": "replace"})
    assert game.load(replaced["saved"]).progress == THEIRS and replaced["codes"]["ask"] is False
    assert replaced["codes"]["message"] == esc(t("imported", "zh")) and "★ 3/" in replaced["top"]["header"]
    kept = handlers.import_code({"level": "2-1", "lang": "en"}, game.save(MINE), {"code": "", "answer": "keep"})
    assert set(kept) == {"codes"} and kept["codes"]["message"] == esc(t("ci_kept", "en"))
    assert kept["codes"]["ask"] is False


def test_a_fresh_browser_or_the_same_progress_imports_at_once_and_a_bad_code_is_refused_even_when_confirmed() -> None:
    for saved in (None, "", fresh(), game.save(THEIRS), "garbage{{"):  # damaged counts as nothing to lose
        out = handlers.import_code(ZH, saved, {"code": game.export_code(THEIRS)})
        assert game.load(out["saved"]).progress == THEIRS and out["codes"]["ask"] is False, saved
    for answer in ("replace", None, "keep!"):
        bad = handlers.import_code(ZH, game.save(MINE), {"code": "DRAGON1-garbage", "answer": answer})
        assert set(bad) == {"codes"} and bad["codes"]["message"] == esc(t("bad_code", "zh")), answer
    for data in (None, [], {"code": 5}, {"answer": "replace"}):
        assert set(handlers.import_code(ZH, game.save(MINE), data)) == {"codes"}, data


def test_locked_chapter_is_refused_from_the_menu() -> None:
    out = handlers.choose_level({"level": "1-1", "lang": "en"}, fresh(), {"level": "2-1"})
    assert set(out) == {"top"} and "locked" in out["top"]["notice"] and out["top"]["level"] == "1-1"
    assert 'value="2-1" disabled' in out["top"]["options"]


def test_the_head_profile_shows_shares_that_add_up_to_one() -> None:
    """The bars and their tips say "each head's share of the fused output": yours and the target's add up to 1, and
    the panel line's shares are the target's bars."""
    level = get_level("2-1")
    reading = api.level_reading(level, "en")
    mine, goal = views.profiles(reading, [0.5] * 8, level.target_for("en"))
    assert abs(sum(mine) - 1) < 1e-9 and abs(sum(goal) - 1) < 1e-9
    line = views.panel_html(level, "en")
    a, b = (HEADS.index(h) for h in PANEL[level.kind])
    assert f"{goal[a]:.2f} and {goal[b]:.2f}" in line


def test_the_picker_opens_what_next_opens_and_no_more() -> None:
    """A teacher's link opened 2-1 for a new player: *Next* goes on to 2-2 (the class goes in order), so the picker
    offers 2-2 too, and opening it from the picker works; 2-3 stays locked in both."""
    link = {"level": "2-1", "lang": "en"}
    nxt = handlers.next_level(link, fresh())
    assert nxt["session"]["level"] == "2-2"
    opened = handlers.choose_level(link, fresh(), {"level": "2-1"})["top"]["options"]
    assert 'value="2-2" disabled' not in opened and 'value="2-3" disabled' in opened
    assert handlers.choose_level(link, fresh(), {"level": "2-2"})["session"]["level"] == "2-2"
    refused = handlers.choose_level(link, fresh(), {"level": "2-3"})
    assert set(refused) == {"top"} and "locked" in refused["top"]["notice"]


# --- views ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level_id", ["2-1", "2-5", "2-8", "2-10"])
def test_every_map_labels_every_token_in_full(level_id) -> None:
    for lang in ("zh", "en"):
        reading = api.level_reading(get_level(level_id), lang)
        html = views.maps_html(reading, lang)
        assert "…" not in html
        for svg in re.findall(r"<svg class=\"attn-map\".*?</svg>", html):
            labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
            assert labels == [esc(tok) for tok in reading.tokens] * 2  # columns, then rows


def test_views_have_no_svg_ids_that_could_repeat() -> None:
    view = handlers.boot('{"lang": "zh", "level": "2-1"}', None)
    assert ' id="' not in view["maps"] and ' id="' not in view["panel"]["compare"]
    ids = re.findall(r' id="([^"]+)"', view["panel"]["dragon"] + view["panel"]["actions"])
    assert len(ids) == len(set(ids)) and all(i.startswith("mhd-") for i in ids)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_one_or_eight_outlines_every_counted_cell(lang) -> None:
    """1-1 is answered by looking: every cell that counts as "looked at" (≥ 10 %) is outlined, and no other."""
    pictures, truth = views.compare_html(get_level("1-1"), lang)
    one, eight = pictures.split("</svg>")[:2]
    assert one.count('class="marked"') == len(truth["one_head_sees"])
    cols = {m for m in re.findall(r'class="marked" x="([0-9.]+)"', eight)}
    assert len(cols) == len(truth["eight_heads_see"])  # distinct words looked at by any head


def test_map_captions_are_the_claimable_words_with_their_shares() -> None:
    from dragon.levels.claims import top_words

    reading = api.level_reading(get_level("2-1"), "zh")
    html = views.maps_html(reading, "zh")
    found = top_words(reading, "semantics")
    assert found[0][0] == "明月" and f"明月 {found[0][1]:.2f}" in html  # 明月 twice: its shares add up
    assert all(f"{w} {v:.2f}" in html for w, v in found[:5])


@pytest.mark.slow
def test_picture_levels_show_where_your_fusion_differs() -> None:
    """From 2-5 on (target shown only as a picture) a third strip marks the words your fusion gives too much or
    too little; settings scoring about 86 and about 98 look visibly different, the target itself shows none."""
    import numpy as np

    from dragon import api
    from dragon.scoring import score

    level = get_level("2-5")
    reading = api.level_reading(level, "zh")
    target = np.array(level.target_for("zh"))
    rng = np.random.default_rng(0)
    found: dict[str, np.ndarray] = {}
    for _ in range(3000):
        g = np.clip(target + rng.uniform(-0.4, 0.4, 8), 0, 1)
        s = score(reading, g.tolist(), tuple(target))
        found.setdefault("86" if 85 < s < 88 else "98" if 97.5 < s < 99 else "other", g)
    far, near = (views.difference_html(reading.tokens, views.word_shares(reading, found[k]),
                                       views.word_shares(reading, target), "zh") for k in ("86", "98"))
    shade = r'class="w (?:over|under)" style="--a:([\d.]+)"'
    strength = [max(map(float, re.findall(shade, h)), default=0) for h in (far, near)]
    assert strength[0] >= 0.5 > strength[1], strength  # the far miss is drawn strong, the near one faint
    assert "太多" in far and "太少" in far
    goal = views.word_shares(reading, target)
    same = views.difference_html(reading.tokens, goal, goal, "en")
    assert "no word differs" in same
    assert 'class="hl diff"' in views.comparison(level, reading, target.tolist(), "zh")
    assert 'class="hl diff"' not in views.comparison(get_level("2-1"), api.level_reading(get_level("2-1"), "zh"),
                                                      [0.5] * 8, "zh")  # silhouette levels show the profile instead


def test_a_head_whose_words_look_only_at_themselves_names_no_link_in_its_caption() -> None:
    """相思's Semantics head speaks (each field word looks at itself) but no row gives other words more than crumbs:
    its caption says so instead of listing '，0.12' as if punctuation were what it found."""
    from dragon.config import HEADS
    from dragon.levels.claims import LINK_MASS, link_mass, silent_heads

    reading = api.level_reading(get_level("2-2"), "zh")
    i = HEADS.index("semantics")
    assert "semantics" not in silent_heads(reading) and float(link_mass(reading)[i]) < LINK_MASS / 3
    html = views.maps_html(reading, "zh")
    tile = html.split('data-head="semantics"')[1].split("</figcaption>")[0]
    assert t("looks_self", "zh") in tile and "0.12" not in tile


def test_the_links_parameters_are_declared_once() -> None:
    """ui/session.py's LINK_PARAMS is the one list: the page's scripts read it (no parameter named or capped there by
    hand), the server's link names only parameters it marks kept, and the sandbox's cap is its."""
    import json
    import re

    from ui import session, top

    root = Path(__file__).resolve().parent.parent / "assets" / "ui"
    head, top_js = ((root / name).read_text(encoding="utf-8") for name in ("head.js", "top.js"))
    named = set(re.findall(r'params\.get\("(\w+)"\)', head))
    assert named <= {"lang", "projector"}, named  # the two read before the table's cut (with the browser's memory)
    assert "window.__dragonLink" in head and "window.__dragonLink" in top_js
    assert re.findall(r"cut\(params\.get\((.*?)\)", head) == ["k"]  # each text parameter cut at the table's length
    kept = {k for k, v in session.LINK_PARAMS.items() if v.get("kept")}
    for s in ({"level": "2-1"}, {"level": "sandbox", "text": "hi", "exam": True}, {"level": "x", "custom": "T1.a"}):
        assert set(top.link_of(s)) <= kept
    assert session.MAX_SANDBOX_CHARS == session.LINK_PARAMS["text"]["chars"]
    assert json.loads(json.dumps(session.LINK_PARAMS)) == session.LINK_PARAMS  # what app.py puts in the page


def test_the_first_view_leaves_the_code_box_as_the_player_has_it() -> None:
    """A player may open the progress-code box before the first view lands (a slow connection, a busy server): the
    first view says nothing of it being open or shut, while a level opened later shuts it (the test above)."""
    for boot in ('{"lang": "en"}', '{"lang": "zh", "level": "2-1"}', '{"sandbox": true}', '{"level": "no-such"}'):
        view = handlers.boot(boot, fresh())
        assert "open" not in view["codes"] and view["codes"]["title"], boot

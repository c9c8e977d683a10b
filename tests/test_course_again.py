"""The course played again: stars earned by reasoning (no page state of a level gives its answer before ★★★, the
pick or the check, or before the player asks for it), and every number agreeing with the one beside it."""

import html
import json

import pytest

from dragon import game
from dragon.config import HEADS
from dragon.levels.level import PANEL
from dragon.levels.loader import LANGS, all_levels, get_level
from ui.rooms import heads as heads_room
from ui.rooms import sliders as play
from ui.session import START_GATES
from ui.strings import head_name

SLIDERS = [lv for lv in all_levels().values() if lv.sliders]


TARGET_SHARE = {"zh": "目标的输出分量 ", "en": "the target's output share "}  # a profile bar's words: its number


def target_phrases(level, lang: str) -> list[str]:
    """How a page would print the target's weights: 'Emotion 1', '情感头 0.6' (the panel line, the reveal), or a
    profile bar's exact target share (the weights over the head sizes: the weights themselves by division)."""
    named = [f"{head_name(h, lang)} {w:g}" for h, w in zip(HEADS, level.target_for(lang), strict=True) if w > 0]
    return [*named, html.escape(TARGET_SHARE[lang], quote=True), TARGET_SHARE[lang]]


def page_text(props: dict) -> str:
    return json.dumps(props, ensure_ascii=False)


def progress_with(level_id: str, stars: int, hints: int) -> dict:
    progress = game.record(game.new_progress(), level_id, 40.0 + 20 * stars, stars) if stars else game.new_progress()
    return game.use_hints_up_to(progress, level_id, hints)


@pytest.mark.parametrize("level", SLIDERS, ids=lambda lv: lv.id)
@pytest.mark.parametrize("lang", LANGS)
def test_no_target_number_is_on_the_page_before_three_stars(level, lang: str) -> None:
    phrases = target_phrases(level, lang)
    for stars in (0, 1, 2):
        for hints in (0, 1):
            text = page_text(play.panel_props(level, lang, list(START_GATES), progress_with(level.id, stars, hints)))
            shown = [p for p in phrases if p in text]
            assert not shown, (stars, hints, shown)
    # won at ★★★, or the answer asked for: the why's panel line gives them (so the check above can fail)
    for stars, hints in ((3, 0), (1, 2)):
        text = page_text(play.panel_props(level, lang, list(START_GATES), progress_with(level.id, stars, hints)))
        if level.show == "silhouette":  # the bars' words give the target's shares too
            assert html.escape(TARGET_SHARE[lang], quote=True) in text, (stars, hints)
        if level.kind in PANEL:  # the genres with a control-panel line: it names its two heads' target weights
            target = level.target_for(lang)
            for head in PANEL[level.kind]:
                assert f"{head_name(head, lang)} {target[HEADS.index(head)]:g}" in text, (stars, hints, head)


@pytest.mark.parametrize("lang", LANGS)
def test_the_panel_line_before_three_stars_names_the_heads_not_how_far(lang: str) -> None:
    level = next(lv for lv in SLIDERS if lv.kind == "poem" and lv.keeps_panel(lang))
    line = play.why_block(level, lang, progress_with(level.id, 1, 0))
    assert 'class="panel-line"' in line
    panel = line[line.index('class="panel-line"'):]
    panel = html.unescape(panel[panel.index(">") + 1: panel.index("</p>")])  # the line's words, not its attributes
    assert head_name("emotion", lang) in panel and head_name("tone", lang) in panel
    assert not any(c.isdigit() for c in panel.replace("★★★", ""))


def test_the_quiz_table_of_real_models_is_shown_once_every_answer_is_checked() -> None:
    from dragon import api
    from dragon.levels.loader import get_level

    level = get_level("3-4")
    facts = api.facts()
    gpt3 = next(m for m in facts["models"] if m["id"] == "gpt3-175b")
    body = heads_room.quiz_html(level, "en", {"level": "3-4"})
    assert lab_number(gpt3["total_heads"]) not in body  # the quiz asks for it: not printed beside the question
    answered = {qid: {"value": 1} for qid in level.quiz}
    assert lab_number(gpt3["total_heads"]) in heads_room.quiz_html(level, "en", {"level": "3-4", "quiz": answered})


def lab_number(n: int) -> str:
    from ui.rooms.lab import thousands

    return thousands(n)


@pytest.mark.parametrize("score, printed, stars", [(84.96, "84.9", 1), (85.0, "85.0", 2), (94.99, "94.9", 2),
                                                   (69.999, "69.9", 0), (100.0, "100.0", 3)])
def test_the_gauge_prints_the_score_the_stars_are_judged_on(score: float, printed: str, stars: int) -> None:
    from dragon.scoring import stars as stars_for
    from ui.widgets.draw import gauge_html

    assert stars_for(score) == stars
    html = gauge_html(score, stars_for(score), score, 3, "en")
    assert f'class="score-value">{printed}</text>' in html and f"Best {printed}" in html


@pytest.mark.parametrize("lang", LANGS)
def test_5_1s_word_chips_are_the_words_its_tables_use(lang: str) -> None:
    import re

    from dragon import api
    from dragon.levels.loader import get_level
    from ui.top import top_props

    level = get_level("5-1")
    chips = re.findall(r'<span class="tok">([^<]*)</span>', top_props(level, lang, game.new_progress())["story"])
    assert [html.unescape(c) for c in chips] == api.positions(level.text[lang], lang)["tokens_a"]


@pytest.mark.parametrize("level", SLIDERS, ids=lambda lv: lv.id)
@pytest.mark.parametrize("lang", LANGS)
def test_every_phrase_a_why_quotes_is_in_the_levels_text(level, lang: str) -> None:
    """A why that quotes the text quotes it exactly (a pattern like “因为……所以……” quotes each of its parts)."""
    import re

    text = level.text[lang].lower()
    for quoted in re.findall(r"“([^”]+)”", level.why[lang]):
        parts = [p.strip() for p in re.split(r"…+", quoted) if p.strip()]
        assert all(p.lower() in text for p in parts), (quoted, level.text[lang])


def test_a_repeated_word_is_told_apart_where_words_are_named() -> None:
    import numpy as np

    from ui.rooms.slider_views import difference_html, told_apart

    assert told_apart(["你", "？", "好", "？"], "zh") == ["你", "？（第 1 个）", "好", "？（第 2 个）"]
    assert told_apart(["a", "?", "b", "?", "?"], "en") == ["a", "? (1st)", "b", "? (2nd)", "? (3rd)"]
    said = difference_html(["？", "好", "？"], np.array([0.5, 0.2, 0.3]), np.array([0.4, 0.4, 0.2]), "zh")
    assert "？（第 1 个） +0.10" in said and "？（第 2 个） +0.10" in said


def test_a_kept_best_is_never_above_the_line_its_stars_were_judged_on() -> None:
    from ui.widgets.draw import gauge_html

    progress = game.record(game.new_progress(), "2-1", 84.996, 1)
    assert progress["best"]["2-1"] == 84.99
    assert "Best 84.9" in gauge_html(80.0, 0, progress["best"]["2-1"], 3, "en")
    assert game.record(progress, "2-1", 50.0, 0)["best"]["2-1"] == 84.99  # a worse score never lowers it


@pytest.mark.parametrize("lang", LANGS)
def test_1_2s_answer_map_shows_all_eight_heads_without_self_links(lang: str) -> None:
    import torch

    from dragon import api, chapter1
    from dragon.levels.loader import get_level
    from ui.rooms.slider_views import finding_rows
    from ui.strings import head_label

    level = get_level("1-2")
    truth = chapter1.finding_heads(level, lang)
    grid = finding_rows(level, lang, truth)
    for i, h in enumerate(HEADS):
        assert html.escape(head_label(i, lang) + (" ✓" if h in truth else "")) in grid, h
    reading = api.level_reading(level, lang)
    got = chapter1.received(reading)
    maps = reading.weights[:, 1:, 1:]
    assert torch.allclose(got, maps.sum(1) - torch.diagonal(maps, dim1=1, dim2=2))  # every column less its own cell


@pytest.mark.parametrize("lang", LANGS)
def test_3_3_draws_what_almost_nothing_reaches_grey_and_says_so(lang: str) -> None:
    import numpy as np

    from dragon import api
    from dragon.levels.loader import get_level
    from ui.rooms import fusion as fusion_room
    from ui.strings import t

    level = get_level("3-3")
    f = api.fusion(level.text[lang], lang)
    quiet = np.asarray(f["quiet_dims"]["w_o_off"], dtype=bool)
    assert quiet.any()  # W^O off: the numbers of a head with (almost) nothing to say
    reach = np.asarray(f["reach"]["w_o_off"])
    assert (reach[:, quiet].max(axis=0) == 1).all()  # each holds one head's full share of almost nothing
    m = fusion_room.fusion_lesson.measured(f)
    off = fusion_room.setting_html(f, m, False, False, lang, read=True)
    assert html.escape(t("u_quiet", lang, n=int(quiet.sum()), p="1")) in off
    on = fusion_room.setting_html(f, m, True, False, lang, read=True)
    assert not np.asarray(f["quiet_dims"]["w_o_on"]).any() and t("u_quiet", lang, n=0, p="1")[:8] not in on


@pytest.mark.slow
def test_the_badge_says_why_each_head_glows_and_which_levels_light_none() -> None:
    """Three stars dropped on 3-2 and 4-2 leave every head full: the badge says so, level by level, and names the
    levels that light no head (their stars count in the badge level's own stars)."""
    from dragon.lessons import badge as badge_lesson
    from ui.rooms import badge as badge_room

    progress = game.new_progress()
    levels = badge_lesson.head_levels()
    for lid in {i for ids in levels.values() for i in ids}:
        progress["stars"][lid] = 3
    progress["stars"].update({"3-2": 1, "4-2": 2})
    for lang in ("zh", "en"):
        out = badge_room.badge_panel(get_level("5-2"), lang, progress, {"level": "5-2", "made": True, "stars": 2}, "")
        table = out.split('class="badge-why"', 1)[1].split("</table>", 1)[0]
        assert table.count("<tr>") == 1 + len(levels) and table.count("100%") == len(levels)  # every head full
        for ids in levels.values():
            assert all(f"{lid} ★★★" in table for lid in ids)
        unlit = out.split('class="note badge-unlit"', 1)[1].split("</p>", 1)[0]
        assert "3-2" in unlit and "4-2" in unlit and "1-1" in unlit and "2-1" not in unlit
    progress["stars"]["2-1"] = 1  # a head's level below ★★★: that head is no longer full, and the table says why
    out = badge_room.badge_panel(get_level("5-2"), "en", progress, {"level": "5-2", "made": True, "stars": 2}, "")
    emotion = badge_lesson.mastery(progress)["emotion"]
    assert emotion < 1 and f"<td>{emotion:.0%}</td>" in out and "2-1 ★☆☆" in out


def printed_forms(value: float) -> set[str]:
    """How a page would print a measured number: 0.2889 → 0.289, 0.2889, 28.9%, 28.89%; 1.6e-07 → 1.6e-07."""
    if abs(value) < 1e-3:
        return {f"{value:.1e}", f"{value:.2e}"}
    return {f"{value:.3f}", f"{value:.4f}", f"{value:.1%}", f"{value:.2%}"}


def measured_numbers(question: dict) -> list[float]:
    """The non-integer numbers a scored question's answer is measured as (explain's answer key)."""
    m = question["measured"]
    values = m if isinstance(m, list) else list(m.values()) if isinstance(m, dict) else [m]
    flat = [v for x in values for v in (x.values() if isinstance(x, dict) else [x])]
    return [float(v) for v in flat if isinstance(v, float) and not float(v).is_integer()]


LABS = [lv for lv in all_levels().values() if lv.kind in ("formula", "race", "fusion", "heads", "scroll", "crystal",
                                                                "tower", "grow", "prune", "stability", "router",
                                                                "positions")]


@pytest.mark.slow
@pytest.mark.parametrize("level", LABS, ids=lambda lv: lv.id)
def test_no_lab_page_before_its_check_prints_a_measured_answer(level) -> None:
    """Every lab level as it opens (fresh, after a start over, at ★0–★2 with and without hints, both languages):
    none of the numbers its answers are measured as is on the page before the player has answered."""
    from dragon import api
    from ui.rooms import registry as rooms

    room = rooms.ROOMS[level.kind]
    if room.needs and not room.needs.ready():
        assert room.needs.load(lambda *_: None) is None
    for lang in LANGS:
        numbers = [v for q in api.explain(level.id, lang)["questions"] for v in measured_numbers(q)]
        forms = {f for v in numbers for f in printed_forms(v)}
        for stars in (0, 1, 2):
            for hints in (0, 1):
                progress = progress_with(level.id, stars, hints)
                text = html.unescape(room.panel(level, lang, progress, {"level": level.id}, ""))
                shown = sorted(f for f in forms if f in text)
                assert shown == [], (level.id, lang, stars, hints, shown)


@pytest.mark.parametrize("lang", LANGS)
def test_5_1s_reading_question_is_not_answered_on_its_page(lang: str) -> None:
    """After the predictions, 5-1 asks how large the largest difference is and shows the tables to read it from; no
    sentence on that page names the difference (the findings that do come with the reading's check)."""
    from dragon import api
    from ui.rooms import positions as positions_room

    level = get_level("5-1")
    p = api.positions(level.text[lang], lang)
    asked = html.unescape(positions_room.positions_panel(level, lang, game.new_progress(),
                                                   {"level": "5-1", "answers": {}, "points": 1}, ""))
    forms = printed_forms(p["max_diff_unpermuted_no_positions"])
    assert 'data-answer="read"' in asked and not [f for f in forms if f in asked]
    read = html.unescape(positions_room.positions_panel(level, lang, game.new_progress(),
                                                  {"level": "5-1", "answers": {}, "points": 1, "read": 0, "stars": 1},
                                                  ""))
    assert [f for f in forms if f in read]  # once read, the numbers are said (so the check above can fail)


@pytest.mark.parametrize("lang", LANGS)
def test_the_silhouettes_words_say_how_the_target_differs_and_how_to_get_there(lang: str) -> None:
    """Before ★★★ a bar's words say higher / lower / about the same, as the silhouette shows it; a head already at
    full that needs a higher share is told to turn the others down (a share is a part of the whole)."""
    from dragon.engine import default_dragon
    from ui.rooms import slider_views
    from ui.strings import t
    from ui.widgets import draw

    level = get_level("2-3")
    reading = default_dragon().read(level.text[lang], level.reads_as(lang))
    gates = [1.0] * len(HEADS)  # every slider at full: the target's big heads need the others turned down
    mine, goal = slider_views.profiles(reading, gates, level.target_for(lang))
    body = html.unescape(slider_views.comparison(level, reading, gates, lang, exact=False))
    for i in range(len(HEADS)):
        cue = draw.share_cue(mine[i], goal[i], lang, full=True)
        if goal[i] - mine[i] >= draw.SAME_SHARE_CUE:
            assert cue == t("cue_full", lang)
        elif mine[i] - goal[i] >= draw.SAME_SHARE_CUE:
            assert cue == t("cue_less", lang)
        assert cue in body
    assert t("cue_full", lang) in body  # this start does need it
    assert draw.share_cue(0.2, 0.5, lang) == t("cue_more", lang)  # a head not at full is simply told higher


@pytest.mark.parametrize("level", SLIDERS, ids=lambda lv: lv.id)
def test_what_each_head_finds_waits_for_three_stars(level) -> None:
    """The why and the engine's measured words are the level's answer head by head: at ★ or ★★ the panel shows
    neither (only the panel line and when the why opens); at ★★★, or once the answer was asked for, both."""
    for lang in LANGS:
        why = level.why[lang]
        for stars, hints, open_ in ((1, 0, False), (2, 0, False), (3, 0, True), (1, 2, True)):
            body = html.unescape(play.why_block(level, lang, progress_with(level.id, stars, hints)))
            assert (why in body) == open_ and ('class="claims' in body) == (open_ and bool(level.claims[lang])), stars
            assert ("why-later" in body) == (not open_)

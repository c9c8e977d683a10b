"""Changing your mind pays: a predict-then-read level passed below ★★★ asks one more prediction on a measurement its
page has not shown; right by the level's margin, the level rises to ★★★ (ui/rooms/rethink.py). Each level's pool of new
questions is decided by a clear margin, a start over draws a new one, and a class exam asks none."""

import re

import pytest

from dragon import api, game
from dragon.lessons import fusion as fusion_lesson
from dragon.lessons import heads_experiment as heads_lesson
from dragon.lessons import positions as positions_lesson
from dragon.lessons import race as race_lesson
from dragon.lessons import tower as tower_lesson
from dragon.levels.loader import get_level
from dragon.runs import RUNS
from tests.lane import answered
from ui.rooms import registry as rooms
from ui.rooms import rethinks
from ui.strings import t


def fresh() -> str:
    return game.save(game.new_progress())


def press(event: str, out: dict, data: dict | None = None, saved: str | None = None) -> dict:
    """A lab button pressed on the page `out` left (its session and saved progress), the answers `data` on it."""
    got = rooms.answer(event, out["session"], saved or out["saved"], data or {})
    return {**out, **got}


def stars_of(out: dict, level_id: str) -> int:
    return game.load(out["saved"]).progress["stars"].get(level_id, 0)


def body(out: dict) -> str:
    return out["lab"]["body"]


def section(out: dict) -> str:
    """The second prediction's part of the panel, tags left out."""
    part = body(out).split('<section class="rethink"', 1)[1].split("</section>", 1)[0]
    return re.sub(r"<[^>]+>", " ", part)


# --- 5-1 ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_pair_5_1_may_ask_is_decided_by_a_clear_margin(lang: str) -> None:
    for text in positions_lesson.AGAIN_TEXTS[lang]:
        p = api.positions(text, lang)
        key = positions_lesson.again_key(p)
        assert key == {"back": "same", "place": "differ", "heads": "differ"}, (text, key)
        assert p["text_a"] != p["text_b"]
        assert p["max_diff_unpermuted_no_positions"] < positions_lesson.SAME / 10  # far under the line
        least = min(p["max_diff_in_place_no_positions"], p["diff_with_positions_attention"])
        assert least >= 2 * positions_lesson.DIFFER


def passed_5_1_at_one_star(lang: str) -> dict:
    """5-1 played by a believer who predicted wrong (no positions: 'different'), then read the numbers right: ★."""
    start = {"session": {"level": "5-1", "lang": lang}, "saved": fresh()}
    out = press("predict", start, {"free": "differ", "pos": "same"})
    right = positions_lesson.reading_answer(api.positions(get_text("5-1", lang), lang))
    return press("check", out, {"read": str(right)})


def get_text(level_id: str, lang: str) -> str:
    return get_level(level_id).text[lang]


def asked_pair(out: dict) -> str:
    return out["session"]["lab"]["rethink"]["asked"]["text"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_believer_who_changes_their_mind_earns_three_stars_on_5_1(lang: str) -> None:
    out = passed_5_1_at_one_star(lang)
    assert stars_of(out, "5-1") == 1
    html = body(out)
    assert t("rt_title", lang) in html and 'data-act="rethink"' in html
    stars, link = html.find('class="lab-end'), html.find('href="#mhd-rethink"')
    assert 0 < stars < link < html.find('class="why') < html.find('id="mhd-rethink"')  # by the stars, a link down
    text = asked_pair(out)
    assert text in positions_lesson.AGAIN_TEXTS[lang] and text != get_text("5-1", lang)
    p = api.positions(text, lang)
    assert f"{p['max_diff_in_place_no_positions']:.1e}" not in section(out)  # none of its numbers before the check
    key = positions_lesson.again_key(p)
    won = press("rethink", out, {f"s_{k}": v for k, v in key.items()})
    assert stars_of(won, "5-1") == 3
    assert 'data-right="1"' in body(won) and 'data-stars="3"' in body(won)
    assert 'href="#mhd-rethink"' not in body(won)  # answered: nothing more to point to
    assert f"{p['max_diff_in_place_no_positions']:.1e}" in section(won)  # its measurement, after the check
    assert rooms.answer("rethink", won["session"], won["saved"], {}) == {}  # checked once


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_wrong_second_prediction_keeps_the_stars_and_asks_no_more(lang: str) -> None:
    out = passed_5_1_at_one_star(lang)
    lost = press("rethink", out, {"s_back": "differ", "s_place": "differ", "s_heads": "differ"})
    assert stars_of(lost, "5-1") == 1 and 'data-right="0"' in body(lost)
    assert 'data-act="rethink"' not in body(lost)
    assert rooms.answer("rethink", lost["session"], lost["saved"], {"s_back": "same"}) == {}


def test_a_bad_second_answer_is_refused_and_changes_nothing() -> None:
    out = passed_5_1_at_one_star("en")
    for bad in ({}, {"s_back": "same", "s_place": "maybe", "s_heads": "differ"}, {"s_back": "<b>", "s_place": 1}):
        got = rooms.answer("rethink", out["session"], out["saved"], bad)
        assert set(got) == {"lab"} and t("lab_bad", "en") in got["lab"]["body"]


@pytest.mark.slow
def test_each_new_try_draws_its_question_afresh() -> None:
    drawn = set()
    for _ in range(12):
        out = passed_5_1_at_one_star("en")
        drawn.add(asked_pair(out))
        again = press("again", out)
        assert "rethink" not in again["session"]["lab"]  # a start over asks its own later
    assert len(drawn) >= 2  # 12 draws from a pool of 5: all the same once in 5^11


def test_no_second_prediction_at_three_stars_or_when_lost() -> None:
    start = {"session": {"level": "5-1", "lang": "en"}, "saved": fresh()}
    p = api.positions(get_text("5-1", "en"), "en")
    best = press("predict", start, positions_lesson.answer_key(p))
    won = press("check", best, {"read": str(positions_lesson.reading_answer(p))})
    assert stars_of(won, "5-1") == 3 and "rethink" not in won["session"]["lab"]
    lost = press("check", press("predict", start, {"free": "differ", "pos": "same"}), {"read": "2"})
    assert stars_of(lost, "5-1") == 0 and "rethink" not in lost["session"]["lab"]


def test_a_class_exam_asks_no_second_prediction() -> None:
    out = passed_5_1_at_one_star("en")
    exam = {**out["session"], "seed": 2**40, "lab": {"level": "5-1"}}
    first = rooms.answer("predict", exam, out["saved"], {"free": "differ", "pos": "same"})
    right = positions_lesson.reading_answer(api.positions(get_text("5-1", "en"), "en"))
    read = rooms.answer("check", first["session"] | {"seed": 2**40}, first["saved"], {"read": str(right)})
    assert "rethink" not in read["session"]["lab"] and 'data-act="rethink"' not in read["lab"]["body"]


# --- 3-3 ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_text_3_3_may_ask_is_decided_by_a_clear_margin(lang: str) -> None:
    for text in fusion_lesson.AGAIN_TEXTS[lang]:
        key = fusion_lesson.again_key(api.fusion(text, lang), game.KEEP_BUCKETS)
        assert all(len(accepted) == 1 for accepted in key.values()), (text, key)  # no value near an edge


def passed_3_3_at_one_star(lang: str) -> dict:
    """3-3 by a learner who believed the residual keeps nothing and one head writes each number (both wrong)."""
    start = {"session": {"level": "3-3", "lang": lang}, "saved": fresh()}
    out = press("predict", start, {"o0": "concat", "o1": "w_o", "o2": "residual", "keep": "2", "reach": "0"})
    f = api.fusion(get_text("3-3", lang), lang)
    return press("check", out, {"read": str(fusion_lesson.read_answer(f, game.REACH_BUCKETS))})


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_believer_who_changes_their_mind_earns_three_stars_on_3_3(lang: str) -> None:
    out = passed_3_3_at_one_star(lang)
    assert stars_of(out, "3-3") == 1 and 'data-act="rethink"' in body(out)
    text = out["session"]["lab"]["rethink"]["asked"]["text"]
    assert text in fusion_lesson.AGAIN_TEXTS[lang] and text != get_text("3-3", lang)
    f = api.fusion(text, lang)
    assert f"{f['keep_with_residual']:.2f}" not in section(out)
    key = fusion_lesson.again_key(f, game.KEEP_BUCKETS)
    wrong = press("rethink", out, {"s_off": str(key["on"][0]), "s_on": str(key["off"][0])})
    assert stars_of(wrong, "3-3") == 1 and f"{f['keep_with_residual']:.2f}" in section(wrong)
    won = press("rethink", out, {"s_off": str(key["off"][0]), "s_on": str(key["on"][0])})
    assert stars_of(won, "3-3") == 3 and 'data-stars="3"' in body(won)


# --- 4-2 ------------------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_every_group_4_2_may_ask_is_decided_by_a_clear_margin() -> None:
    assert len(tower_lesson.AGAIN_GROUPS) >= 4
    shipped = set(tower_lesson.load_sentences())
    for group in tower_lesson.AGAIN_GROUPS:
        sentences = tower_lesson.load_sentences(group)
        assert len(sentences) >= 4 and not shipped & set(sentences), group.name  # sentences the page has not read
        key = tower_lesson.answer_key(tower_lesson.tower(group))
        assert key["rises"]["margin"] >= 0.1, group.name  # the distance falls by a tenth of a word or more somewhere
        for q in ("adjacent", "quiet", "nearest"):
            assert key[q]["margin"] > 0, (group.name, q)  # the accepted layers lead the rest
    with pytest.raises(ValueError):
        tower_lesson.again_group("../tower_sentences.txt")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_believer_who_changes_their_mind_earns_three_stars_on_4_2(lang: str) -> None:
    start = {"session": {"level": "4-2", "lang": lang}, "saved": fresh()}
    out = press("predict", start, {"rises": "yes", "adjacent": "6", "quiet": "6"})  # the lesson's story: all wrong
    key = tower_lesson.answer_key(api.tower())
    out = press("check", out, {"nearest": key["nearest"]["accepted"][0]})
    assert stars_of(out, "4-2") == 1 and 'data-act="rethink"' in body(out)
    group = tower_lesson.again_group(out["session"]["lab"]["rethink"]["asked"]["group"])
    other = tower_lesson.tower(group)
    assert tower_lesson.load_sentences(group)[0] in section(out)
    assert f"{other['per_layer'][0]['distance']:.2f} " not in section(out)  # its figures only after the check
    again = tower_lesson.answer_key(other)
    bad = press("rethink", out, {"s_rises": "yes", "s_adjacent": "1", "s_quiet": "1", "s_nearest": "0"})
    assert t("lab_bad", lang) in body(bad) and stars_of(bad, "4-2") == 1
    won = press("rethink", out, {f"s_{k}": v["accepted"][0] for k, v in again.items()})
    assert stars_of(won, "4-2") == 3 and f"{other['per_layer'][0]['distance']:.2f}" in section(won)


# --- 3-2 ------------------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_believer_who_changes_their_mind_earns_three_stars_on_3_2() -> None:
    level = get_level("3-2")
    assert not set(rethinks.AGAIN_LENGTHS) & set(level.lengths)  # lengths the race does not time
    start = {"session": {"level": "3-2", "lang": "en"}, "saved": fresh()}
    out = answered("race", start["session"], start["saved"], {"guess": "1000"})  # far off: no stars from the guess
    out = {**start, **out}
    out = press("check", out, {"work": race_lesson.work_reading(out["session"]["lab"]["result"])})
    assert stars_of(out, "3-2") == 1 and 'data-act="rethink"' in body(out)
    T = out["session"]["lab"]["rethink"]["asked"]["T"]
    assert T in rethinks.AGAIN_LENGTHS and f"T = {T}" in section(out)
    for bad in ("", "abc", "0", "nan"):
        refused = rooms.answer("rethink", out["session"], out["saved"], {"s_guess": bad})
        assert set(refused) == {"lab"} and "nothing was changed" in refused["lab"]["body"]
    ref = api.race_reference(T)  # the races the guess is scored against: once per server, shared
    wrong = {**out, **answered("rethink", out["session"], out["saved"], {"s_guess": str(3 * ref["hi"])})}
    assert stars_of(wrong, "3-2") == 1 and 'data-right="0"' in body(wrong)
    assert f"×{ref['lo']:.2f} to ×{ref['hi']:.2f}" in section(wrong)
    middle = f"{(ref['lo'] * ref['hi']) ** 0.5:.3f}"  # inside the range
    right = {**out, **answered("rethink", out["session"], out["saved"], {"s_guess": middle})}
    assert stars_of(right, "3-2") == 3 and 'data-right="1"' in body(right)


# --- 3-4 ------------------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_believer_who_changes_their_mind_earns_three_stars_on_3_4() -> None:
    heads = list(RUNS.sizes.experiment.heads)
    start = {"session": {"level": "3-4", "lang": "en"}, "saved": fresh()}
    believer = {f"r{i}": str(h) for i, h in enumerate(sorted(heads))}  # "one head, undivided, is best": 1, 2, 4, 8, 16
    out = {**start, **answered("train", start["session"], start["saved"], believer)}
    low = heads_lesson.lowest(out["session"]["lab"]["result"])[0][0]
    out = press("check", out, {"read": str(low)})
    assert 1 <= stars_of(out, "3-4") < 3 and 'data-act="rethink"' in body(out)
    seed = out["session"]["lab"]["rethink"]["asked"]["seed"]
    assert seed != out["session"]["lab"]["seed"] and f"({seed})" in section(out)
    refused = rooms.answer("rethink", out["session"], out["saved"], {"s_r0": "1", "s_r1": "1"})
    assert set(refused) == {"lab"} and t("h_bad", "en") in refused["lab"]["body"]
    fewest_last = {f"s_r{i}": str(h) for i, h in enumerate(sorted(heads, reverse=True))}  # 16, 8, 4, 2, 1
    got = {**out, **answered("rethink", out["session"], out["saved"], fewest_last, timeout=600)}
    r = api.heads_experiment(seed)  # trained once for that seed, in the lane: the same run
    right, total = game.rank_pairs(sorted(heads, reverse=True), dict(zip(r["heads"], r["final_accuracy"], strict=True)))
    assert stars_of(got, "3-4") == (3 if right == total else stars_of(out, "3-4"))
    assert f'data-right="{int(right == total)}"' in body(got) and f"h = 1: {r['final_accuracy'][0]:.1%}" in section(got)

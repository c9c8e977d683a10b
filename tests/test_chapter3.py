"""Chapter 3 without a browser: its level file, the unlock, the star rules, every lab's handlers, and the narration
held to the real computation (every sentence about a number is computed on the spot or checked here)."""

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from dragon import api, game, margins
from dragon.lessons import fusion as fusion_lesson
from dragon.lessons import race as race_lesson
from dragon.lessons.heads_experiment import run
from dragon.levels.loader import LevelError, get_level, load_chapter, load_levels
from dragon.runs import RUNS
from dragon.runtime.device import best_device
from dragon.runtime.shared import once
from tests.lane import answered
from ui import handlers
from ui.rooms import formula as formula_room
from ui.rooms import fusion as fusion_room
from ui.rooms import heads as heads_room
from ui.rooms import lab
from ui.rooms import race as race_room
from ui.rooms import registry as rooms
from ui.strings import t

ROOT = Path(__file__).resolve().parent.parent
CJK = re.compile(r"[\u3400-\u9fff]")
SHORT = RUNS.sizes.experiment  # the suite's short run of 3-4 (dragon/runs.py SHORT): ~4 s, the real one's shape


def fusion_key(f: dict) -> tuple:
    return fusion_lesson.answer_key(f, game.KEEP_BUCKETS, game.REACH_BUCKETS)


def fusion_right(lang: str) -> dict:
    """3-3's right answers, from the measurement itself: the reach answer is the bucket of how many heads have
    weights into each output number."""
    f = fusion_room.fusion_of(get_level("3-3"), lang)
    reach = game.bucket(fusion_lesson.weight_heads(f), game.REACH_BUCKETS)
    return {"o0": "concat", "o1": "w_o", "o2": "residual", "keep": "0", "reach": str(reach)}


def ranked(heads: list[int]) -> dict:
    """3-4's answer: the places r0, r1, … holding these head counts, first to last."""
    return {f"r{i}": str(h) for i, h in enumerate(heads)}


def fresh() -> str:
    return game.save(game.new_progress())


def session(level_id: str, lang: str = "en", lab: dict | None = None) -> dict:
    return {"level": level_id, "lang": lang, **({"lab": lab} if lab else {})}


@pytest.fixture(scope="module")
def short_result() -> dict:
    """The short run, trained once per test session (the key api.heads_experiment uses: test_fair and test_findings
    train the same run)."""
    return once(("heads", SHORT, str(best_device())), lambda: run(SHORT))


@pytest.fixture
def short_experiment(short_result: dict) -> dict:
    """The 3-4 lab trains the short experiment (its result computed once per run)."""
    assert api.heads_experiment(0) is short_result
    return short_result


# --- the level file -------------------------------------------------------------------------------------------


def test_chapter_three_has_the_five_labs() -> None:
    chapter = next(c for c in load_levels() if c.number == 3)
    assert [(lv.id, lv.kind) for lv in chapter.levels] == [
        ("3-1", "formula"), ("3-2", "race"), ("3-3", "fusion"), ("3-4", "heads"), ("3-5", "scroll")]
    formula, race = get_level("3-1"), get_level("3-2")
    assert {len(formula.rounds["zh"]), len(formula.rounds["en"])} == {3}
    assert race.guess_at in race.lengths and list(race.lengths) == sorted(race.lengths)
    assert "gpt3-total-heads" in get_level("3-4").quiz
    assert all(lv.lab and not lv.sliders for lv in chapter.levels)


GOOD = (ROOT / "assets" / "levels" / "chapter3.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "change, message",
    [
        (("{word: 悲伤, head: emotion}", "{word: 猫, head: emotion}"), r"\(3-1\)\.rounds\.zh\[0\]\.word: '猫' is not"),
        (("{word: sad, head: emotion}", "{word: sad, head: feelings}"), r"rounds\.en\[0\]\.head: must be a head id"),
        (("{word: sad, head: emotion}", "{word: sad}"), r"rounds\.en\[0\]: must be a mapping with exactly word"),
        (("lengths: [16, 64, 256, 1024]", "lengths: [64, 16, 256, 1024]"), r"\(3-2\)\.lengths: must rise"),
        (("lengths: [16, 64, 256, 1024]", "lengths: [16, 64, 256, 4096]"), r"\(3-2\)\.lengths: must be whole numbers"),
        (("guess_at: 1024", "guess_at: 512"), r"\(3-2\)\.guess_at: must be one of the lengths"),
        (("    guess_at: 1024\n", ""), r"\(3-2\)\.guess_at: is missing"),
        (("quiz: [gpt3-total-heads,", "quiz: [gpt4-heads,"), r"\(3-4\)\.quiz: 'gpt4-heads' is not a question"),
        (("kind: fusion", "kind: fission"), r"\(3-3\)\.kind: must be one of"),
    ],
)
def test_malformed_chapter_three_file_names_file_and_field(tmp_path: Path, change, message) -> None:
    path = tmp_path / "chapter3.yaml"
    assert change[0] in GOOD
    path.write_text(GOOD.replace(*change, 1), encoding="utf-8")
    with pytest.raises(LevelError, match=rf"^chapter3\.yaml: .*{message}"):
        load_chapter(path)


def test_chapter_three_unlocks_when_every_chapter_two_level_has_a_star() -> None:
    progress = game.new_progress()
    for lv in [lv for c in load_levels() if c.number in (1, 2) for lv in c.levels][:-1]:
        progress = game.record(progress, lv.id, 80, 1)
    assert 3 not in game.unlocked_chapters(progress)
    out = handlers.choose_level(session("2-1"), game.save(progress), {"level": "3-1"})
    assert set(out) == {"top"} and "locked" in out["top"]["notice"]
    last = [lv for c in load_levels() if c.number == 2 for lv in c.levels][-1]
    progress = game.record(progress, last.id, 80, 1)
    assert {1, 2, 3} <= game.unlocked_chapters(progress)
    view = handlers.choose_level(session("2-1"), game.save(progress), {"level": "3-1"})
    assert view["session"]["level"] == "3-1" and view["lab"]["kind"] == "formula" and view["panel"]["kind"] == ""


# --- the star rules ---------------------------------------------------------------------------------------------


def test_star_rules() -> None:
    assert [game.formula_stars(p, 6) for p in range(7)] == [0, 0, 1, 1, 2, 2, 3]
    assert [game.guess_stars(g, 2.0)[1] for g in (2, 3, 0.8, 4.9, 5.1, 8.1, 0.51)] == [3, 3, 2, 2, 1, 0, 1]
    assert game.guess_stars(1.0, 10.0) == (10.0, 0)
    assert game.guess_stars(1.3, 1.12, 1.56) == (1.0, 3)  # inside the range of repeated runs: no factor off
    assert game.guess_stars(8, 1.12, 1.56)[1] == 0 and game.guess_stars(0.5, 1.12, 1.56)[0] == 2.24
    assert [game.read_stars(p, True) for p in range(4)] == [1, 1, 2, 3] and game.read_stars(3, False) == 0
    edges = (0.4, 0.6, 0.9)
    assert margins.accepted_buckets(0.58, edges) == [1, 2] and margins.accepted_buckets(0.5, edges) == [1]
    assert margins.accepted_best({1: 0.199, 2: 0.165, 3: 0.12}, 0.05) == [1, 2]
    acc = {1: 0.28, 2: 0.56, 4: 0.95, 8: 0.997, 16: 0.995}  # 8 and 16 tie
    assert game.rank_pairs([16, 8, 4, 2, 1], acc) == game.rank_pairs([8, 16, 4, 2, 1], acc) == (10, 10)
    assert game.rank_pairs([1, 2, 4, 8, 16], acc) == (3, 10)  # 4, 8 and 16 lie within 5 points: any order of them
    assert [game.rank_stars(r, 10) for r in (10, 9, 8, 7, 6, 5)] == [3, 2, 2, 1, 1, 0]
    assert [game.bucket(v, game.SHARE_BUCKETS) for v in (0.1, 0.4, 0.86, 0.9, 1.0)] == [0, 1, 2, 3, 3]


# --- 3-1 inside the formula -------------------------------------------------------------------------------------


def right_answer(lang: str, i: int) -> dict:
    m = formula_room.round_math(get_level("3-1"), lang, i)
    return {"winner": str(m["winner"]), "share": str(game.bucket(max(m["weights"]), game.SHARE_BUCKETS))}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_formula_narration_is_true_of_the_real_rows(lang) -> None:
    """The why: the key with the largest score wins (softmax keeps the order), and the head with nothing to say
    parks its attention on the sink, so its output is almost nothing."""
    level = get_level("3-1")
    rows = [formula_room.round_math(level, lang, i) for i in range(len(level.rounds[lang]))]
    for m in rows:
        assert m["winner"] == int(np.argmax(m["scores"])) and abs(m["weights_sum"] - 1) < 1e-5
        assert formula_room.map_row_diff(level, lang, m) < 1e-5  # the same row as the map the game draws
        assert m["shapes"]["K"] == [len(m["tokens"]) + 1, 16]
    sink = [m for m in rows if m["winner_key"] == "⟨sink⟩"]
    assert sink and all(m["output_norm"] < 0.05 * max(r["output_norm"] for r in rows) for m in sink)
    assert "sink" in level.why["en"] and "汇点" in level.why["zh"]


def test_formula_rounds_are_scored_and_shown_after_the_check() -> None:
    state, saved = session("3-1", "zh"), fresh()
    body = handlers.boot('{"lang": "zh", "level": "3-1"}', None)["lab"]["body"]
    assert 'data-for="softmax"' in body and t("f_locked", "zh") in body  # the softmax is not sent before the check
    for bad in ({}, {"winner": "99", "share": "1"}, {"winner": "1", "share": "9"}, {"winner": "<b>", "share": "1"}):
        out = rooms.answer("check", state, saved, bad)
        assert set(out) == {"lab"} and "什么都没有改变" in out["lab"]["body"]
    assert rooms.answer("round", state, saved)["session"]["lab"].get("at", 0) == 0  # no skipping an unchecked round
    for i in range(3):
        out = rooms.answer("check", state, saved, right_answer("zh", i))
        state, saved = out["session"], out["saved"]
        assert "本轮 2/2 分" in out["lab"]["body"] and 'data-open="softmax"' in out["lab"]["body"]
        assert rooms.answer("check", state, saved, right_answer("zh", i))["session"] == state  # checked once only
        if i < 2:
            state = rooms.answer("round", state, saved)["session"]
    progress = game.load(saved).progress
    assert progress["stars"]["3-1"] == 3 and 'data-stars="3"' in out["lab"]["body"]
    again = rooms.answer("again", state, saved)  # the answers were shown: another try earns at most ★
    assert again["session"]["lab"] == {"level": "3-1"} and "★☆☆" in again["lab"]["body"]


def test_formula_wrong_answers_lose_the_level() -> None:
    state, saved = session("3-1", "en"), fresh()
    for i in range(3):
        m = formula_room.round_math(get_level("3-1"), "en", i)
        wrong = {"winner": str((m["winner"] + 1) % len(m["keys"])), "share": "0"}
        out = rooms.answer("check", state, saved, wrong)
        state, saved = out["session"], out["saved"]
        if i == 0:  # the first answer is shown: this try still earns up to ★★★, a later one at most ★
            assert game.hints_used(game.load(saved).progress, "3-1") == 2
            assert "This try can still earn ★★★" in out["lab"]["body"]
        if i < 2:
            state = rooms.answer("round", state, saved)["session"]
    assert game.load(saved).progress["stars"]["3-1"] == 0 and t("lab_lost", "en") in out["lab"]["body"]


# --- 3-2 the race ----------------------------------------------------------------------------------------------


def test_race_narration_same_flops_whatever_the_path_or_the_number_of_heads() -> None:
    """The why and the fact check: the two tracks do the same FLOPs (and so would one head of d_head = d_model)."""
    level, d, h = get_level("3-2"), 128, 8
    for T in level.lengths:
        assert race_lesson.flops("loop", T, d, h) == race_lesson.flops("batched", T, d, h) == race_lesson.flops(
            "batched", T, d, 1
        )


@pytest.mark.slow
def test_race_scores_the_guess_against_the_range_of_repeated_races_then_the_reading() -> None:
    state, saved = session("3-2"), fresh()
    for bad in ("", "abc", "0", "-3", "1e9", "nan", None):
        out = rooms.answer("race", state, saved, {"guess": bad})
        assert set(out) == {"lab"} and "nothing was changed" in out["lab"]["body"]
    out = answered("race", state, saved, {"guess": "2,5"})
    lab = out["session"]["lab"]
    r, ref = lab["result"], lab["reference"]
    now = r["speedup"][r["lengths"].index(get_level("3-2").guess_at)]
    server = api.race_reference(get_level("3-2").guess_at)  # once per server: every player, the same races
    assert server["runs"] == race_lesson.REFERENCE_RUNS == len(server["speedups"])
    # the range a guess is scored against holds the server's races and the race shown beside it
    assert ref["runs"] == server["runs"] + 1 and ref["lo"] <= now <= ref["hi"]
    assert (ref["lo"], ref["hi"]) == (min(server["lo"], now), max(server["hi"], now))
    assert lab["guess"] == 2.5 and (lab["factor"], lab["guessed"]) == game.guess_stars(2.5, ref["lo"], ref["hi"])
    assert "stars" not in lab and "3-2" not in game.load(out["saved"]).progress["stars"]  # not yet: read first
    body = out["lab"]["body"]
    measured = r["speedup"][r["lengths"].index(get_level("3-2").guess_at)]
    assert r["flops_loop"] == r["flops_batched"] and body.count(">equal<") == len(r["lengths"])
    assert f"×{measured:.2f}" in body and "CPU (" in body and "svg" in body and "sequence length T" in body
    assert f"×{ref['lo']:.2f} to ×{ref['hi']:.2f}" in body and 'data-answer="work"' in body
    assert rooms.answer("race", out["session"], out["saved"], {"guess": "3"}) == {}  # one race an attempt
    refused = rooms.answer("check", out["session"], out["saved"], {"work": "faster"})
    assert set(refused) == {"lab"} and "nothing was changed" in refused["lab"]["body"]
    read = rooms.answer("check", out["session"], out["saved"], {"work": "same"})
    lab = read["session"]["lab"]
    assert lab["stars"] == game.read_stars(lab["guessed"], True) >= 1
    assert game.load(read["saved"]).progress["stars"]["3-2"] == lab["stars"]
    wrong = rooms.answer("check", out["session"], out["saved"], {"work": "less"})
    assert wrong["session"]["lab"]["stars"] == 0 and "the speed is not from doing less work" in wrong["lab"]["body"]


@pytest.mark.slow
def test_believing_the_lesson_still_passes_the_race() -> None:
    """Guessing the lesson's ×8 is far from this machine's range, yet reading the table right passes the level."""
    out = answered("race", session("3-2"), fresh(), {"guess": "8"})
    read = rooms.answer("check", out["session"], out["saved"], {"work": "same"})
    assert read["session"]["lab"]["stars"] >= 1 and "Little T" in read["lab"]["body"] and "×8" in read["lab"]["body"]


# --- 3-3 fusion ---------------------------------------------------------------------------------------------------


def fusion_read(lang: str) -> dict:
    """3-3's reading, from the measurement itself: the reach bucket of how many heads reach each output number with
    Wᴼ off."""
    f = fusion_room.fusion_of(get_level("3-3"), lang)
    return {"read": str(fusion_lesson.read_answer(f, game.REACH_BUCKETS))}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_fusion_reach_answer_is_decided_by_the_weights_not_by_the_text(lang) -> None:
    """The reach question asks what W^O's weights decide (every head has weights into every output number), so a
    learner who learned "W^O mixes all heads" is right; the text-dependent effective count is shown, not asked."""
    f = fusion_room.fusion_of(get_level("3-3"), lang)
    n, w = fusion_lesson.effective_heads(f), fusion_lesson.weight_heads(f)
    right = fusion_right(lang)
    assert w == len(f["heads"]) and int(right["reach"]) == len(game.REACH_BUCKETS) == fusion_key(f)[2]
    assert fusion_lesson.weakest_weight(f) >= fusion_lesson.REACH_MIN + 0.05  # every head holds a clear share
    out = rooms.answer("predict", session("3-3", lang), fresh(), right)
    assert out["session"]["lab"]["points"] == 3
    body = page_text(out["lab"]["body"]).replace("&#x27;", "'")
    assert f"{n:.2f}" in body and (f"weights from {w} heads" if lang == "en" else f"{w} 个头的权重") in body
    others = [str(i) for i in range(len(game.REACH_BUCKETS) + 1) if str(i) != right["reach"]]
    for other in others:  # any other bucket loses the point
        out = rooms.answer("predict", session("3-3", lang), fresh(), {**right, "reach": other})
        assert out["session"]["lab"]["points"] == 2
    keep = f["keep_without_residual"]
    assert fusion_key(f)[1] == margins.accepted_buckets(keep, game.KEEP_BUCKETS) == [0]  # far from any edge


def test_fusion_predictions_then_the_reading_off_the_switches_passes() -> None:
    state, saved = session("3-3", "zh"), fresh()
    right = fusion_right("zh")
    for bad in ({**right, "o2": "concat"}, {**right, "keep": ""}, {**right, "reach": "7"}, {}):
        out = rooms.answer("predict", state, saved, bad)
        assert set(out) == {"lab"} and "什么都没有改变" in out["lab"]["body"]
        assert "data-switch" not in out["lab"]["body"]
    out = rooms.answer("predict", state, saved, right)
    lab_ = out["session"]["lab"]
    progress = game.load(out["saved"]).progress
    assert lab_["points"] == 3 and "stars" not in lab_ and "3-3" not in progress["stars"]  # not yet: read first
    assert game.hints_used(progress, "3-3") == 2 and lab_["cap"] == 3  # the answers are shown: another try earns ★
    body = out["lab"]["body"]
    assert body.count("data-setting=") == 4 and 'data-switch="wo"' in body and 'data-switch="res"' in body
    assert 'data-answer="read"' in body and t("u_read_q", "zh") in body and "这一次最多还能得 ★★★" in body
    assert t("u_hpd_off", "zh", n="1.00") not in body  # the sentence under the Wᴼ-off picture answers the reading
    f = fusion_room.fusion_of(get_level("3-3"), "zh")
    for s in f["switches"]:  # each setting shows its measured keep
        assert f"= {s['keep']:.2f}" in body
    assert rooms.answer("predict", out["session"], out["saved"], right)["session"] == out["session"]  # checked once
    for bad in ({}, {"read": "9"}, {"read": "x"}):
        refused = rooms.answer("check", out["session"], out["saved"], bad)
        assert set(refused) == {"lab"} and "什么都没有改变" in refused["lab"]["body"]
    read = rooms.answer("check", out["session"], out["saved"], fusion_read("zh"))
    assert read["session"]["lab"]["stars"] == 3 and game.load(read["saved"]).progress["stars"]["3-3"] == 3
    assert t("u_hpd_off", "zh", n="1.00") in read["lab"]["body"] and 'data-stars="3"' in read["lab"]["body"]
    wrong = {"read": str((int(fusion_read("zh")["read"]) + 1) % (len(game.REACH_BUCKETS) + 1))}
    lost = rooms.answer("check", out["session"], out["saved"], wrong)
    assert lost["session"]["lab"]["stars"] == 0 and t("lab_lost", "zh") in lost["lab"]["body"]


def test_believing_the_lesson_still_passes_fusion() -> None:
    """Predictions all wrong (Wᴼ first, the input kept, one head a number), yet reading the picture right passes."""
    wrong = {"o0": "w_o", "o1": "concat", "o2": "residual", "keep": "2", "reach": "0"}
    out = rooms.answer("predict", session("3-3"), fresh(), wrong)
    assert out["session"]["lab"]["points"] == 0 and "Wrong order" in out["lab"]["body"]
    read = rooms.answer("check", out["session"], out["saved"], fusion_read("en"))
    assert read["session"]["lab"]["stars"] == game.read_stars(game.points_stars(0, 3), True) == 1


# --- 3-4 how many heads? and the quiz -----------------------------------------------------------------------------


@pytest.mark.slow
def test_heads_parameters_are_counted_equal(short_result) -> None:
    """The why: the parameter count is 4·d² + 4·d whatever h (what the run found is in heads_experiment.FINDINGS)."""
    r = short_result
    d = r["d_model"]
    assert heads_room.param_counts(d, r["heads"]) == r["params"] == [4 * d * d + 4 * d] * len(r["heads"])


def lowest_read(result: dict) -> dict:
    acc = dict(zip(result["heads"], result["final_accuracy"], strict=True))
    return {"read": str(min(acc, key=acc.get))}


@pytest.mark.slow
def test_heads_ranking_is_scored_against_the_run_then_the_reading_passes(short_experiment) -> None:
    state, saved = session("3-4"), fresh()
    for bad in ({}, {f"r{i}": "1" for i in range(5)}, {"r0": "16", "r1": "8", "r2": "4", "r3": "2", "r4": "32"}):
        out = rooms.answer("train", state, saved, bad)
        assert set(out) == {"lab"} and "nothing was changed" in out["lab"]["body"]
    ranking = [16, 8, 4, 2, 1]
    answers = {f"r{i}": str(h) for i, h in enumerate(ranking)}
    out = answered("train", state, saved, answers)
    lab_ = out["session"]["lab"]
    accuracy = dict(zip(short_experiment["heads"], short_experiment["final_accuracy"], strict=True))
    pairs = game.rank_pairs(ranking, accuracy)
    assert lab_["result"] == short_experiment and lab_["pairs"] == list(pairs)
    assert "stars" not in lab_ and lab_["cap"] == game.read_stars(game.rank_stars(*pairs), True)  # still reachable
    assert "3-4" not in game.load(out["saved"]).progress["stars"]  # not yet: read the bars first
    body = out["lab"]["body"]
    assert "training step" in body and "all equal" in body and "Quiz" in body and 'data-answer="read"' in body
    assert t("h_read_q", "en") in body and "lines findings" not in body  # the findings name the answer: after it
    for bad in ({}, {"read": "3"}, {"read": "x"}):
        refused = rooms.answer("check", out["session"], out["saved"], bad)
        assert set(refused) == {"lab"} and "nothing was changed" in refused["lab"]["body"]
    read = rooms.answer("check", out["session"], out["saved"], lowest_read(short_experiment))
    assert read["session"]["lab"]["stars"] == game.read_stars(game.rank_stars(*pairs), True) >= 1
    assert game.load(read["saved"]).progress["stars"]["3-4"] == read["session"]["lab"]["stars"]
    assert "lines findings" in read["lab"]["body"] and 'class="note vaswani"' not in read["lab"]["body"]
    highest = {"read": str(max(accuracy, key=accuracy.get))}
    lost = rooms.answer("check", out["session"], out["saved"], highest)
    assert lost["session"]["lab"]["stars"] == 0 and t("lab_lost", "en") in lost["lab"]["body"]


@pytest.mark.slow  # 3-4's short run trains once per session (short_experiment)
def test_believing_the_lesson_still_passes_the_heads(short_experiment) -> None:
    """Ranking the lesson's eight heads first and one head second is far off, yet reading the bars right passes."""
    out = answered("train", session("3-4"), fresh(), ranked([8, 1, 16, 4, 2]))
    read = rooms.answer("check", out["session"], out["saved"], lowest_read(short_experiment))
    assert read["session"]["lab"]["stars"] >= 1


@pytest.mark.slow  # 3-4's short run trains once per session (short_experiment)
def test_facts_quiz_checks_answers_and_fact_checks_the_lesson(short_experiment) -> None:
    out = answered("train", session("3-4", "zh"), fresh(), ranked([16, 8, 4, 2, 1]))
    state, saved = out["session"], out["saved"]
    answers = {"q:gpt3-total-heads": "1152", "q:bert-base-total-heads": "144", "q:mha-params-768": "很多"}
    quiz = rooms.answer("quiz", state, saved, answers)
    assert set(quiz) == {"lab", "session"}  # the quiz earns no stars: progress untouched
    body = quiz["lab"]["body"]
    facts = api.facts()
    gpt3 = next(m for m in facts["models"] if m["id"] == "gpt3-175b")
    total = f"{gpt3['total_heads']:,}".replace(",", "\u2009")
    assert f"答案是 {total}" in body and f"{gpt3['layers']} 层 × {gpt3['heads']} 个头 = {total}" in body
    assert "1\u2009152" in body and "✓ 对：144" in body and "“很多”不是数字" in body
    assert "你答了 2 题，答对 1 题" in body


# --- all labs ------------------------------------------------------------------------------------------------------


def test_language_switch_keeps_what_was_done_in_the_lab() -> None:
    out = rooms.answer("predict", session("3-3", "zh"), fresh(), fusion_right("zh"))
    out = rooms.answer("check", out["session"], out["saved"], fusion_read("zh"))  # won: the level opens from the list
    switched = handlers.switch_lang(out["session"], out["saved"], [0.5] * 8, {"lang": "en"})
    assert switched["session"]["lab"] == out["session"]["lab"] and "Right order" in switched["lab"]["body"]
    other = handlers.choose_level(out["session"], out["saved"], {"level": "3-3"})  # opening a level starts afresh
    assert "lab" not in other["session"]


@pytest.mark.slow  # 3-4's short run trains once per session (short_experiment)
def test_english_labs_have_no_chinese_and_text_is_escaped(short_experiment) -> None:
    done = {
        "3-1": rooms.answer("check", session("3-1"), fresh(), right_answer("en", 0)),
        "3-3": rooms.answer("predict", session("3-3"), fresh(), fusion_right("en")),
        "3-4": answered("train", session("3-4"), fresh(), ranked([1, 2, 4, 8, 16])),
    }
    for level_id, read in (("3-3", fusion_read("en")), ("3-4", lowest_read(short_experiment))):  # and after the reading
        done[f"{level_id} read"] = rooms.answer("check", done[level_id]["session"], done[level_id]["saved"], read)
    for level_id, out in done.items():
        text = re.sub(r"<[^>]+>", " ", out["lab"]["body"])
        assert not CJK.search(text), (level_id, CJK.findall(text)[:10])
    nasty = "<script>alert(1)</script> ${alert(2)} {{x}}"
    level = dataclasses.replace(get_level("3-3"), why={"zh": nasty, "en": nasty})
    body = rooms.lab_props(level, "en", game.new_progress(), done["3-3"]["session"]["lab"])["body"]
    assert "<script" not in body and "${" not in body and "{{" not in body
    quiz = rooms.answer("quiz", done["3-4"]["session"], fresh(), {"q:gpt3-total-heads": "${x}<b>"})["lab"]["body"]
    assert "${x}" not in quiz and "x&#125;<b>" not in quiz and "&#36;&#123;x&#125;&lt;b&gt;" in quiz


def test_labs_refuse_events_of_other_levels() -> None:
    assert rooms.answer("check", session("2-1"), fresh(), {}) == {}
    assert rooms.answer("race", session("3-1"), fresh(), {"guess": "2"}) == {}
    assert rooms.answer("train", session("3-2"), fresh(), {}) == {}
    assert rooms.answer("quiz", session("3-3"), fresh(), {}) == {}


# --- QA round 2: the sink's name, the star rules, the quiz's range and its give-away, small text fixes ------------


def page_text(body: str) -> str:
    return re.sub(r"<[^>]+>", " ", body)


def test_formula_lab_names_the_sink_in_chinese_and_hides_the_scores_before_the_check() -> None:
    level = get_level("3-1")
    body = handlers.boot('{"lang": "zh", "level": "3-1"}', None)["lab"]["body"]
    assert 'data-open="q"' in body and 'class="kbar' not in body  # the scores would give the winner away
    assert "sink" not in page_text(body) and "⟨汇点⟩" in body
    sink_round = next(i for i in range(3) if formula_room.round_math(level, "zh", i)["winner_key"] == "⟨sink⟩")
    state, saved = session("3-1", "zh"), fresh()
    for i in range(sink_round + 1):
        out = rooms.answer("check", state, saved, right_answer("zh", i))
        state, saved = out["session"], out["saved"]
        if i < sink_round:
            state = rooms.answer("round", state, saved)["session"]
    text = page_text(out["lab"]["body"])
    assert "sink" not in text and "赢家是 ⟨汇点⟩" in text and "≈ 1" in text and "1.000" not in text
    en = page_text(rooms.lab_props(level, "en", game.new_progress(), {"level": "3-1"})["body"])
    assert "⟨sink⟩" in en and "汇点" not in en


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_each_lab_shows_the_star_rule_it_is_scored_with(lang, monkeypatch: pytest.MonkeyPatch) -> None:
    """One line under each question, computed from dragon/game.py's rules and constants (not retyped)."""
    progress = game.new_progress()
    rules = {"3-1": formula_room, "3-2": race_room, "3-3": fusion_room, "3-4": heads_room}  # each room's own rule line
    lines = {lid: room.rule_html(get_level(lid), lang) for lid, room in rules.items()}
    for lid, line in lines.items():
        assert line in rooms.lab_props(get_level(lid), lang, progress)["body"]
    m = 2 * len(get_level("3-1").rounds[lang])
    least = {n: min(p for p in range(m + 1) if game.formula_stars(p, m) >= n) for n in (2, 1)}
    assert lines["3-1"] == f'<p class="rule">{t("rule_formula", lang, m=m, b=least[2], c=least[1])}</p>'
    assert all(f"{f:g}" in lines["3-2"] for f in game.GUESS_FACTORS[:2])  # a farther guess adds no star
    pairs = 10  # five models: 5 · 4 / 2 pairs
    assert lab.least_for(lambda p: game.rank_stars(p, pairs), pairs) == [10, 8, 6]
    read_rank = lab.least_for(lambda p: game.read_stars(game.rank_stars(p, pairs), True), pairs)
    assert read_rank == [10, 8, 0]  # the reading passes: the ranking's own ★ adds nothing, so no ★ threshold is shown
    assert lines["3-4"] == lab.rule(t("rule_rank", lang, m=pairs, b=read_rank[1], tie=f"{game.TIE:g}"))
    # 3-3: all three predictions right ★★★ with the reading, all but one ★★, fewer ★ (rule_read says so)
    assert lab.least_for(lambda p: game.read_stars(game.points_stars(p, 3), True), 3) == [3, 2, 0]
    assert lines["3-3"] == lab.read_rule(lang, 3)
    assert all(game.read_stars(p, False) == 0 for p in range(4))  # a wrong reading loses, whatever was predicted
    monkeypatch.setattr(game, "GUESS_FACTORS", (1.2, 2.0, 3.0))  # the rule line follows the constants
    assert "1.2" in race_room.rule_html(get_level("3-2"), lang)
    if lang == "en":
        assert not CJK.search(" ".join(lines.values()))


@pytest.mark.slow  # 3-4's short run trains once per session (short_experiment)
def test_facts_quiz_refuses_negative_and_absurd_answers_in_place(short_experiment) -> None:
    out = answered("train", session("3-4"), fresh(), ranked([16, 8, 4, 2, 1]))
    assert all(api.facts_quiz(q, 0)["answer"] < heads_room.QUIZ_MAX / 100 for q in get_level("3-4").quiz)
    bad = {"q:gpt3-total-heads": "-1", "q:bert-base-total-heads": "1e9"}
    quiz = rooms.answer("quiz", out["session"], out["saved"], bad)
    body = quiz["lab"]["body"]
    assert body.count('class="notice') == 2 and "“-1” is not a sensible answer" in body and "“1e9” is not" in body
    assert "You said" not in body and "Right:" not in body  # neither was scored
    given = quiz["session"]["lab"]["quiz"]
    assert given["gpt3-total-heads"] == {"bad": "-1", "range": True}
    zh = rooms.lab_props(get_level("3-4"), "zh", game.new_progress(), quiz["session"]["lab"])["body"]
    assert "“-1”不是一个合理的答案" in zh


@pytest.mark.slow  # 3-4's short run trains once per session (short_experiment)
def test_the_papers_bleu_line_waits_for_the_bleu_question(short_experiment) -> None:
    out = answered("train", session("3-4"), fresh(), ranked([16, 8, 4, 2, 1]))
    body = out["lab"]["body"]
    one_head = next(r for r in api.facts()["vaswani"]["rows"] if r["h"] == 1)
    line = f"h = 1: {one_head['bleu']:.1f} BLEU"
    assert "vaswani-one-head-bleu" in get_level("3-4").quiz
    assert line not in body and "Vaswani et al. 2017, Table" not in body
    assert body.count("class=\"formula-line\"") == 1  # the parameter formula once, above the ranking
    other = rooms.answer("quiz", out["session"], out["saved"], {"q:gpt3-total-heads": "9216"})
    assert line not in other["lab"]["body"]  # another question checked: still hidden
    done = rooms.answer("quiz", other["session"], out["saved"], {"q:vaswani-one-head-bleu": "20"})
    assert line in done["lab"]["body"] and "class=\"note vaswani\"" in done["lab"]["body"]


def test_small_text_fixes() -> None:
    from ui import top

    options = top.options_html("3-1", game.new_progress(), "en")
    assert "  " not in options and "3-1 Inside the formula ☆☆☆" in options
    llama = next(m for m in api.facts()["models"] if m["kv_heads"] != m["heads"])
    answered = {qid: {"value": 1} for qid in get_level("3-4").quiz}  # the table (the quiz's answers) shows once checked
    quiz = heads_room.quiz_html(get_level("3-4"), "en", {"level": "3-4", "quiz": answered})
    assert f"{llama['layers']} × {llama['heads']} ({llama['kv_heads']} key/value heads, GQA)" in quiz
    for lid in ("3-1", "3-3"):  # Wᴼ, never a caret, in what the player reads
        for lang in ("zh", "en"):
            level = get_level(lid)
            text = page_text(rooms.lab_props(level, lang, game.new_progress())["body"]) + level.story[lang]
            assert "W^O" not in text and "^" not in level.why[lang]
    assert "Wᴼ" in get_level("3-3").story["en"]


def test_line_chart_labels_sit_after_a_swatch_of_their_line() -> None:
    import pandas as pd

    from ui.widgets.charts import W, line_chart

    frame = pd.DataFrame({"x": [1, 2, 1, 2], "y": [1.0, 2.0, 2.0, 1.0], "s": ["a", "a", "b", "b"]})
    long_name = "mean of 8 heads"
    colours = {"a": "#c2410c", "b": "#1f4e9c"}
    svg = line_chart(frame, "x", "y", "s", title="t", x_label="x", y_label="y", colours=colours, names={"b": long_name})
    for colour in ("#c2410c", "#1f4e9c"):
        assert re.search(rf'<line [^>]*stroke="{colour}"[^>]*class="swatch"', svg)
    x = float(re.search(rf'<text x="([\d.]+)"[^>]*class="line-label">{long_name}<', svg).group(1))
    assert x + len(long_name) * 14 * 0.62 <= W  # the longest label fits inside the chart
    edge = max(float(c) + 5 for c in re.findall(r'<circle cx="([\d.]+)"', svg))  # the last point's right side (r 5)
    starts = [float(v) for v in re.findall(r'<line x1="([\d.]+)"[^>]*class="swatch"', svg)]
    assert starts and min(starts) >= edge + 3  # a swatch never touches the point at the line's end


def test_tick_labels_print_a_length_as_the_sentences_do() -> None:
    """The race's axis reads T = 1024 as its sentences print it, not "1 024"; a thin space only from five digits."""
    from ui.widgets.charts import tick_label

    assert [tick_label(v) for v in (0, 0.05, 0.5, 3, 250, 1024, 4096, 16384)] == [
        "0", "0.05", "0.5", "3", "250", "1024", "4096", "16\u2009384"]

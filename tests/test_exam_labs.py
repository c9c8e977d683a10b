"""A class exam's lab rounds (dragon/classroom/lab_variants.py, dragon/classroom/room.py): 3-1 and 4-1 ask questions
drawn for the round that the public game does not answer, a seeded lab trains a seed no public page or endpoint takes,
and a lab whose answers stay the same on fresh numbers cannot be an exam round."""

import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

import app
from dragon import api, game
from dragon.classroom import lab_variants
from dragon.classroom.records import ClassroomError
from dragon.classroom.room import draw_variant, examinable
from dragon.lessons import growing
from dragon.lessons import head_math as head_math_lesson
from dragon.levels.loader import all_levels, get_level
from dragon.margins import SHARE_MARGIN
from tests.test_classroom import client, join, levels, opened, store, teacher
from tests.test_classroom_store import BACKENDS, url  # noqa: F401
from ui.rooms import crystal as crystal_room
from ui.rooms import formula as formula_room
from ui.rooms import lab, waits
from ui.session import session_of

assert BACKENDS and levels and store and client

ROOT = Path(__file__).resolve().parents[1]
EXAMINABLE_LABS = {"3-1", "3-4", "4-1", "4-3", "4-4"}
SEEDS = (2**31, 2**31 + 7, 2**40 + 3, 2**53 - 1)


def test_which_levels_can_be_an_exam_round() -> None:
    for level in all_levels().values():
        assert examinable(level) == (level.sliders or level.id in EXAMINABLE_LABS), level.id


@pytest.mark.parametrize("level_id", sorted(lv.id for lv in all_levels().values() if not examinable(lv)))
def test_a_level_the_public_game_answers_is_refused_as_an_exam_round(client: TestClient, level_id: str) -> None:
    with pytest.raises(ClassroomError) as refused:
        draw_variant(get_level(level_id), "en", exam=True)
    assert refused.value.reason == "exam.not_examinable"
    made = opened(client)
    join(client, made, "Ana")
    teacher(client, made, "settings", settings={"exam": True})
    status, body = teacher(client, made, "start", kind="everyone", level=level_id, lang="en")
    assert (status, body["error"]) == (409, "exam.not_examinable")
    assert teacher(client, made, "view")[1]["round"] is None  # nothing started
    status, _ = teacher(client, made, "settings", settings={"exam": False})
    assert teacher(client, made, "start", kind="everyone", level=level_id, lang="en")[0] == 200  # outside an exam: fine


def test_the_teachers_level_list_says_which_levels_can_be_an_exam(client: TestClient) -> None:
    listed = client.get("/class/api/levels?lang=en").json()["all"]
    refused = {lv.id for lv in all_levels().values() if not examinable(lv)}
    assert {lv["id"] for lv in listed if not lv["exam"]} == refused


@pytest.mark.parametrize("level_id", sorted(EXAMINABLE_LABS))
def test_an_exam_labs_seed_is_one_no_page_or_public_endpoint_takes(level_id: str) -> None:
    seed = draw_variant(get_level(level_id), "zh", exam=True)["seed"]
    assert growing.PUBLIC_SEEDS <= seed < growing.SEEDS
    assert waits.parse_seed(str(seed)) is None  # a page's seed box refuses it
    with pytest.raises(ValueError):
        app.grow(600, seed)  # the public endpoint that trains any seed asked (4-3, and 4-4's model)
    assert session_of({"level": level_id, "seed": seed})["seed"] == seed  # the server's own


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("seed", SEEDS)
def test_an_exam_of_3_1_asks_fresh_rounds_each_decided_by_a_clear_margin(lang: str, seed: int) -> None:
    level = get_level("3-1")
    rounds = lab_variants.formula_rounds("3-1", lang, seed)
    assert len(rounds) == len(level.rounds[lang])
    assert not set(rounds) & set(level.rounds[lang])  # none of the public game's rounds
    assert len({r.word for r in rounds}) == len({r.head for r in rounds}) == len(rounds)
    maths = [api.head_math(level.text[lang], lang, r.word, r.head) for r in rounds]
    for m in maths:
        winners, shares = head_math_lesson.answers(m, game.SHARE_BUCKETS)
        assert len(winners) == 1 and len(shares) == 1  # one right answer each
        top = sorted(m["weights"], reverse=True)
        assert top[0] - top[1] >= SHARE_MARGIN
    measured = head_math_lesson.measured(maths, [formula_room.map_row_diff(level, lang, m) for m in maths])
    untrue = [f.means for f in head_math_lesson.FINDINGS if f.always and not f.when(measured)]
    assert not untrue, untrue  # the level's why (shown on the board after the round) holds over these rounds too


def test_an_exam_attempt_of_3_1_is_played_and_scored_on_its_own_rounds() -> None:
    level, seed, lang = get_level("3-1"), 2**31 + 11, "en"
    attempt = lab.fixed_seed({"level": "3-1"}, seed)
    rounds = lab_variants.formula_rounds("3-1", lang, seed)
    progress = game.new_progress()
    for i, r in enumerate(rounds):
        body = formula_room.formula_panel(level, lang, progress, attempt, "")
        assert f"“{r.word}”" in body or r.word in body
        m = api.head_math(level.text[lang], lang, r.word, r.head)
        winners, shares = head_math_lesson.answers(m, game.SHARE_BUCKETS)
        progress, attempt, note = formula_room.check_formula(level, lang, progress, attempt,
                                                         {"winner": str(winners[0]), "share": str(shares[0])})
        assert note == "" and attempt["done"][i]["points"] == 2
        if i + 1 < len(rounds):
            progress, attempt, _ = formula_room.next_round(level, lang, progress, attempt, {})
    assert attempt["stars"] == 3
    # the public game's answers to its own rounds, given to the exam's rounds, do not pass
    public = [api.head_math(level.text[lang], lang, r.word, r.head) for r in level.rounds[lang]]
    fresh = [api.head_math(level.text[lang], lang, r.word, r.head) for r in rounds]
    keyed = [(m["winner_key"], max(m["weights"])) for m in fresh]
    assert keyed != [(m["winner_key"], max(m["weights"])) for m in public]


@pytest.mark.parametrize("seed", SEEDS)
def test_an_exam_of_4_1_asks_a_fresh_pair_the_public_answer_does_not_pass(seed: int) -> None:
    level = get_level("4-1")
    word, target = lab_variants.crystal_ask("4-1", seed)
    assert (word.lower(), target.lower()) != tuple(w.lower() for w in level.ask)
    attempt = lab.fixed_seed({"level": "4-1"}, seed)
    r = crystal_room.crystal_of(level, attempt)
    assert (r["word"], r["target"]["token"]) == (word, target)
    body = crystal_room.crystal_panel(level, "en", game.new_progress(), attempt, "")
    assert f"“{word}” → “{target}”" in body  # the exam line names the round's own pair
    public = api.lesson_head()  # the head the public game's answer names
    given = {"pick": f"{public['layer']},{public['head']}"}
    _, picked, _ = crystal_room.pick(level, "en", game.new_progress(), attempt, given)
    assert picked["stars"] <= 1
    best = r["best"]
    given = {"pick": f"{best['layer']},{best['head']}"}
    _, picked, _ = crystal_room.pick(level, "en", game.new_progress(), attempt, given)
    assert picked["stars"] == 3
    second = r["top"][1]["weight"]
    assert best["weight"] - second >= SHARE_MARGIN and best["weight"] >= lab_variants.CRYSTAL_MIN_WEIGHT


def test_every_refusal_a_class_raises_has_words_in_both_languages() -> None:
    reasons = {m for path in [*ROOT.rglob("dragon/**/*.py"), *ROOT.rglob("ui/**/*.py")]
               for m in re.findall(r'ClassroomError\("([a-z_.]+)"', path.read_text(encoding="utf-8"))}
    from ui.live_class.routes import page
    from ui.strings import class_tables

    words = class_tables()  # the class page's words: one table with the game's (ui/strings.py, class.errors.*)
    assert {"exam.not_examinable", "exam.no_variant"} <= reasons
    for reason in reasons:
        assert words["zh"]["errors"].get(reason) and words["en"]["errors"].get(reason), reason
        assert words["zh"]["errors"][reason] != words["en"]["errors"][reason], reason
    served = page("join")
    assert words["en"]["errors"]["exam.no_variant"] in served and "const T = {" not in served  # given, not retyped


def test_each_member_of_an_exam_of_3_1_is_asked_their_own_rounds(client: TestClient, store) -> None:
    """No one's checked answers answer another's: 3-1's and 4-1's questions come from the member's own seed (the
    same on every reload), a seeded training's from the round's (the class shares one training)."""
    from dragon.classroom.room import Classroom, member_seed

    made = opened(client)
    members = [join(client, made, name) for name in ("Ana", "Ben", "Cleo", "Dan")]
    teacher(client, made, "settings", settings={"exam": True})
    teacher(client, made, "start", kind="everyone", level="3-1", lang="en")
    classroom = Classroom(store)
    seeds = [classroom.framed_rules(m["token"])["seed"] for m in members]
    assert len(set(seeds)) == len(seeds) and all(growing.PUBLIC_SEEDS <= s < growing.SEEDS for s in seeds)
    assert seeds == [classroom.framed_rules(m["token"])["seed"] for m in members]  # stable: a reload asks the same
    assert len({lab_variants.formula_rounds("3-1", "en", s) for s in seeds}) > 1
    round_seed = classroom.framed(members[0]["token"]).variant["seed"]
    assert seeds[0] == member_seed(round_seed, members[0]["token"]) != round_seed
    teacher(client, made, "start", kind="everyone", level="3-4", lang="en")
    assert len({classroom.framed_rules(m["token"])["seed"] for m in members}) == 1  # one training for the class

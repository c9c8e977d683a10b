"""A live class's exam rounds and its board (dragon/levels/variants.py, dragon/classroom/room.py,
ui/live_class/link.py): a variant
the public game cannot answer, no target on the projector while a round is open, a framed game whose exam switch,
seed, hints and caps are the server's."""

import json

import pytest
from starlette.testclient import TestClient

from dragon import api as core_api
from dragon import game
from dragon.classroom.records import Round
from dragon.classroom.room import puzzle, round_puzzle, scored
from dragon.config import HEAD_NAMES, HEADS
from dragon.engine import default_dragon
from dragon.levels.claims import silent_heads
from dragon.levels.loader import all_levels, get_level, load_levels
from dragon.levels.puzzle import MAX_ALL_EQUAL, MAX_RANDOM_MEDIAN, MIN_NEAR_MEDIAN, check
from dragon.levels.variants import MAX_PUBLIC, exam_variant
from dragon.scoring import score
from tests.test_classroom import client, join, levels, opened, post, store, student, teacher  # noqa: F401
from tests.test_classroom_store import BACKENDS, url  # noqa: F401
from ui import handlers
from ui.live_class import link as class_link
from ui.rooms import lab

assert BACKENDS and levels and store and client


def keys_in(value) -> set[str]:
    """Every key anywhere in a JSON value."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_in(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_in(v)}
    return set()


def slider_levels() -> list[tuple[str, str]]:
    load_levels()
    return [(lv.id, lang) for lv in all_levels().values() if lv.sliders for lang in ("zh", "en")]


@pytest.mark.parametrize("level_id, lang", slider_levels())
def test_every_slider_level_has_a_fair_exam_variant_the_public_target_does_not_answer(level_id: str, lang: str) -> None:
    level = get_level(level_id)
    reading = default_dragon().read(level.text[lang], level.reads_as(lang))
    found = exam_variant(reading, level.target_for(lang), seed=12345)
    report = check(reading, list(found.target), samples=200, seed=7)  # checked again, as the shipped levels are
    assert not report.problems, report.problems
    assert report.all_equal <= MAX_ALL_EQUAL and report.random_median <= MAX_RANDOM_MEDIAN
    assert report.near_median >= MIN_NEAR_MEDIAN
    assert score(reading, list(level.target_for(lang)), list(found.target)) <= MAX_PUBLIC
    silent = set(silent_heads(reading))
    assert all(found.target[HEADS.index(h)] == 0.0 for h in silent)  # no silent head with a target
    assert found.target != level.target_for(lang)


def test_an_exam_round_plays_a_variant_that_no_public_endpoint_gives(client: TestClient) -> None:
    made = opened(client)
    ana, ben = join(client, made, "Ana"), join(client, made, "Ben")
    teacher(client, made, "settings", settings={"exam": True})
    round_id = teacher(client, made, "start", kind="everyone", level="2-1", lang="zh")[1]["round"]
    public = core_api.explain("2-1", "zh")  # what any player can read while the round is open
    public_target = [public["target"][h] for h in HEADS] if isinstance(public["target"], dict) else public["target"]
    status, played = student(client, ana, "play", round=round_id, gates=public_target)
    assert status == 200 and played["score"] <= MAX_PUBLIC and played["stars"] <= 1  # the public answer fails here
    status, out = student(client, ben, "hint", round=round_id, gates=[0.5] * 8)
    assert (status, out["error"]) == (409, "hint.exam")  # class hints stay refused in an exam
    # nothing a student or the teacher is sent while the round is open holds a target
    for view in (student(client, ana, "view")[1], teacher(client, made, "view")[1]):
        assert "target" not in keys_in(view) and "why" not in keys_in(view), json.dumps(view)[:300]
    status, out = teacher(client, made, "show_target", round=round_id)
    assert (status, out["error"]) == (409, "target.exam")  # never in an exam
    teacher(client, made, "end_round", round=round_id)
    board = teacher(client, made, "view")[1]["round"]
    variant = board["target"]  # now the teacher can show it, with the why
    assert variant != public_target and len(variant) == 8
    for h in range(8):  # the why gives the round's own target, head by head (the level's why is about another)
        named = f"{HEAD_NAMES[HEADS[h]][1]} {variant[h]:.1f}"
        assert (named in board["why"]["en"]) == (variant[h] > 0), (named, board["why"]["en"])
    assert all(s["target"] == variant[h] for h, s in enumerate(board["spread"]))
    level = get_level("2-1")
    assert scored(puzzle("2-1", None, "zh", tuple(variant)), variant)[0] == 100.0
    assert scored(puzzle("2-1", None, "zh"), list(level.target_for("zh")))[0] == 100.0  # the public puzzle unchanged


def test_an_exam_class_dragon_is_not_won_by_the_public_target(client: TestClient) -> None:
    made = opened(client)
    students = [join(client, made, f"S{k}") for k in range(8)]
    teacher(client, made, "settings", settings={"exam": True})
    round_id = teacher(client, made, "start", kind="dragon", level="2-2", lang="en")[1]["round"]
    public = get_level("2-2").target_for("en")
    for me in students:
        view = student(client, me, "view")[1]["round"]
        assert "target" not in keys_in(view)
        for m in view["mine"]:
            status, moved = student(client, me, "move", round=round_id, head=m["head"], gate=public[m["head"]])
            assert status == 200
    assert moved["score"] <= MAX_PUBLIC and not moved["won"]


def test_the_board_shows_no_target_until_the_teacher_shows_it_or_the_round_ends(client: TestClient) -> None:
    made = opened(client)
    ana = join(client, made, "Ana")
    round_id = teacher(client, made, "start", kind="everyone", level="2-3", lang="en")[1]["round"]
    student(client, ana, "play", round=round_id, gates=[0.2] * 8)
    board = teacher(client, made, "view")[1]["round"]
    assert board["open"] and "target" not in keys_in(board) and not board["target_shown"]
    assert teacher(client, made, "show_target", round=round_id)[1] == {"ok": True}
    board, level = teacher(client, made, "view")[1]["round"], get_level("2-3")
    assert board["target"] == list(level.target_for("en")) and board["why"]["en"] == level.why["en"]
    dragon_round = teacher(client, made, "start", kind="dragon", level="2-3", lang="en")[1]["round"]
    board = teacher(client, made, "view")[1]["round"]
    assert board["id"] == dragon_round and "target" not in keys_in(board)
    assert board["holders"][0] == ["Ana"] and all(h == ["Ana"] for h in board["holders"])
    teacher(client, made, "end_round", round=dragon_round)
    board = teacher(client, made, "view")[1]["round"]
    assert board["target"] == list(level.target_for("en")) and board["why"]["zh"] == level.why["zh"]


def test_a_students_view_speaks_the_pages_language_and_scores_the_sliders_it_shows(client: TestClient) -> None:
    made = opened(client)
    ana = join(client, made, "Ana")
    teacher(client, made, "start", kind="everyone", level="2-1", lang="zh")
    view = student(client, ana, "view", lang="en")[1]["round"]
    level = get_level("2-1")
    assert view["level"]["title"] == level.title["en"] and view["text"] == level.text["zh"]  # the text keeps its own
    assert "story" not in view  # the level's story speaks of the game's page (its grey shadow), not the class page
    assert view["gates"] == [0.5] * 8
    assert view["score"] == pytest.approx(core_api.play("2-1", [0.5] * 8, "zh")["score"], abs=0.01)  # not 0.0
    teacher(client, made, "start", kind="dragon", level="2-3", lang="zh")
    view = student(client, ana, "view", lang="en")[1]["round"]
    assert view["story"].startswith("Little Bai")
    p = puzzle("2-3", None, "zh")
    for m in view["mine"]:
        if (p.hears[m["head"]] or {}).get("silent"):
            assert m["links"] == []  # a silent head's card says only that it is silent
    assert any((p.hears[h] or {}).get("silent") for h in range(8)), "2-3 should have a silent head to test"


def test_a_framed_game_takes_its_exam_switch_and_seed_from_the_server(client: TestClient) -> None:
    made = opened(client)
    ana = join(client, made, "Ana")
    teacher(client, made, "start", kind="everyone", level="3-4", lang="zh")
    boot = {"level": "3-4", "lang": "zh", "classplay": ana["token"], "exam": False}
    view = handlers.boot(json.dumps(boot), None)
    assert view["session"].get("exam") is not True and "seed" not in view["session"]
    assert view["teacher"]["body"] == ""  # no teachers' box (answer key, reveal) in a class's framed game
    teacher(client, made, "settings", settings={"exam": True})
    teacher(client, made, "start", kind="everyone", level="3-4", lang="zh")  # an exam round: a fresh seed
    view = handlers.boot(json.dumps(boot), None)  # the link says no exam: the server's round says exam
    seed = view["session"]["seed"]
    assert view["session"]["exam"] is True and isinstance(seed, int) and seed > 0
    attempt = lab.attempt_of({**view["session"], "lab": {"level": "3-4", "seed": 0}}, get_level("3-4"))
    assert attempt["seed"] == seed and attempt["fixed_seed"] is True  # the box's own seed is not the one trained
    assert f'value="{seed}"' in view["lab"]["body"]


def test_a_framed_labs_caps_and_moves_are_the_servers(client: TestClient, store) -> None:
    made = opened(client)
    ana = join(client, made, "Ana")
    teacher(client, made, "start", kind="everyone", level="3-1", lang="zh")
    listener = class_link.listener({"level": "3-1", "class": ana["token"]})
    assert class_link.listener({"level": "3-1"}) is None and class_link.listener(None) is None
    for _ in range(3):
        listener.activity("3-1")
    with game.results_to(listener):
        progress = game.use_hints_up_to(game.new_progress(), "3-1", 2)  # answers shown: counts as two hints
        game.record(progress, "3-1", 40.0, 1)
    # the browser's progress cleared: a replay scored ★★★ still counts at most ★ for the class
    with game.results_to(listener):
        game.record(game.new_progress(), "3-1", 100.0, 3)
    board = teacher(client, made, "view")[1]["round"]
    assert board["players"] == [{"nickname": "Ana", "stars": 1, "best": 100.0}]
    assert board["progress"] == [{"nickname": "Ana", "started": True, "answered": True, "stars": 1}]
    rows = teacher(client, made, "csv")[1]["csv"].splitlines()
    assert rows[1].split(",")[rows[0].split(",").index("moves")] == "3"  # the lab's real moves


def test_a_round_puzzle_is_the_rounds_own() -> None:
    level = get_level("2-1")
    r = Round(1, "everyone", "2-1", None, None, None, None, "zh", None, variant={"target": [1.0] + [0.0] * 7},
              exam=True)
    assert round_puzzle(r).target == (1.0,) + (0.0,) * 7
    public = Round(2, "everyone", "2-1", None, None, None, None, "zh", None)
    assert round_puzzle(public).target == tuple(level.target_for("zh"))


def test_a_variants_batch_scores_are_the_games_scores() -> None:
    import torch

    from dragon.levels.variants import batch_scores
    from dragon.scoring import Scorer

    level = get_level("2-4")
    reading = default_dragon().read(level.text["en"], "en")
    target = torch.tensor(level.target_for("en"))
    gates = torch.rand(40, 8, generator=torch.Generator().manual_seed(1))
    scorer = Scorer(reading, target.tolist())
    assert batch_scores(reading, gates, target).tolist() == pytest.approx([scorer(g.tolist()) for g in gates], abs=1e-3)


def test_a_student_who_left_is_not_counted_as_not_yet_playing(client: TestClient) -> None:
    made = opened(client)
    ana, ben, cai = (join(client, made, n) for n in ("Ana", "Ben", "Cai"))
    round_id = teacher(client, made, "start", kind="everyone", level="2-1", lang="zh")[1]["round"]
    student(client, ana, "play", round=round_id, gates=[0.5] * 8)
    student(client, cai, "leave")
    board = teacher(client, made, "view")[1]["round"]
    assert (board["played"], board["not_yet"]) == (1, 1)  # Ben; Cai left
    assert ben


def test_an_exam_prunes_the_model_of_the_rounds_seed(monkeypatch) -> None:
    """4-4's answer comes from 4-3's seeded training: with a class exam's fixed seed, that seed's model is pruned."""
    from dragon import api
    from ui.rooms import loading as loading_room
    from ui.rooms import prune as prune_room

    asked: list[int] = []
    best = {"heads": 8, "most_off": 3, "full_accuracy": 0.9, "goal": 0.9}
    monkeypatch.setattr(api, "prune_best", lambda seed: asked.append(seed) or best)
    monkeypatch.setattr(api, "prune", lambda active, seed: asked.append(seed) or {"off": 1, "reached": True})
    level, data = get_level("4-4"), {f"h{i}": "1" for i in range(8)}
    prune_room.measure(level, "en", game.new_progress(), lab.fixed_seed({"level": "4-4"}, 4242), data)
    prune_room.measure(level, "en", game.new_progress(), {"level": "4-4", "seed": 99}, data)  # a box's seed: not here
    assert asked == [4242, 4242, loading_room.SEED, loading_room.SEED]


@pytest.mark.parametrize("level_id", ["3-1", "3-4", "4-1", "4-3", "4-4"])
def test_an_exam_round_of_a_lab_draws_a_fresh_seed(level_id: str) -> None:
    from dragon.classroom.room import draw_variant
    from dragon.lessons.growing import PUBLIC_SEEDS, SEEDS

    level = get_level(level_id)
    assert draw_variant(level, "zh", exam=False) is None
    drawn = draw_variant(level, "zh", exam=True)
    assert PUBLIC_SEEDS <= drawn["seed"] < SEEDS  # above every seed a page or public endpoint takes


def test_a_first_perfect_lab_attempt_counts_three_stars_and_a_replay_after_the_answers_one(client: TestClient) -> None:
    """3-1 shows its answers on the first check (a cap on *another* try): the class counts the attempt that showed
    them as the game does (★★★ for all right), and any later attempt — a new session, cleared storage — at most ★."""
    from dragon.lessons.head_math import answers
    from ui.rooms import formula as formula_room
    from ui.rooms import registry as rooms

    made = opened(client)
    ana, ben = join(client, made, "Ana"), join(client, made, "Ben")
    teacher(client, made, "start", kind="everyone", level="3-1", lang="en")
    level = get_level("3-1")
    n = len(level.rounds["en"])

    def play(state: dict, rounds: int) -> dict:
        saved = None
        for i in range(rounds):
            winners, shares = answers(formula_room.round_math(level, "en", i), game.SHARE_BUCKETS)
            with game.results_to(class_link.listener(state)):
                out = rooms.answer("check", state, saved, {"winner": str(winners[0]), "share": str(shares[0])})
                state, saved = out["session"], out["saved"]
                if i + 1 < n:
                    state = rooms.answer("round", state, saved, {})["session"]
        return state

    assert play({"level": "3-1", "lang": "en", "class": ana["token"]}, n)["lab"]["stars"] == 3
    state = play({"level": "3-1", "lang": "en", "class": ben["token"]}, 1)  # Ben sees the first round's answer
    assert "own_hints" not in rooms.answer("again", state, None)["session"]["lab"]  # starting over: a new attempt
    play({"level": "3-1", "lang": "en", "class": ben["token"]}, n)  # a fresh session, nothing saved: all right
    board = teacher(client, made, "view")[1]["round"]
    assert sorted((p["nickname"], p["stars"]) for p in board["players"]) == [("Ana", 3), ("Ben", 1)]

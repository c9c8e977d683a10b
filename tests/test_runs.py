"""The server's lane (dragon/runtime/lane.py) and the waits it gives the page (ui/rooms/waits.py): one run at a time,
races first, a known result shared at once, the same numbers as a fresh run with that seed, a new seed trained afresh,
and a waiting player told what runs, how far it is and their place in the queue, in the language on screen."""

import dataclasses
import re
import threading
import time

import pytest

from dragon import api, game
from dragon.lessons import growing
from dragon.lessons.heads_experiment import Experiment, run
from dragon.levels.loader import all_levels, get_level
from dragon.runs import RUNS, Runs, Sizes
from dragon.runs import SHORT as SHORT_SIZES
from dragon.runtime import lane as runs
from dragon.runtime.lane import Lane, LaneFullError
from tests.lane import answered, hold
from ui.rooms import registry as rooms
from ui.rooms import waits
from ui.strings import t
from ui.widgets.draw import esc

GROW_SHORT = 40


# --- the lane ------------------------------------------------------------------------------------------------


def test_one_run_at_a_time_races_first_then_loads_then_trainings() -> None:
    lane = Lane()
    gate, held = hold(lane)
    order: list[str] = []
    train = lane.submit("t", lambda r: order.append("train"), "train")
    load = lane.submit("l", lambda r: order.append("load"), "load")
    race = lane.submit("r", lambda r: order.append("race"), "race")
    assert [lane.ahead(x) for x in (race, load, train)] == [1, 2, 3]  # the one running counts
    assert lane.running() is held and lane.queued() == 3
    gate.set()
    assert train.done.wait(10) and order == ["race", "load", "train"]
    assert lane.ahead(train) == 0 and held.state == "done" and held.seconds is not None


def test_a_key_is_computed_once_and_every_asker_gets_that_run() -> None:
    lane, calls = Lane(), []
    first = lane.submit("k", lambda r: calls.append(1) or {"v": 1}, "train")
    again = lane.submit("k", lambda r: calls.append(2) or {"v": 2}, "train")
    assert again is first and first.done.wait(10) and first.result == {"v": 1} and calls == [1]
    assert lane.submit("k", lambda r: {"v": 3}, "train") is first and lane.by_id(first.id) is first
    assert lane.by_id("no such run") is None and lane.by_id(None) is None


def test_a_failed_run_says_why_and_is_tried_again_on_the_next_ask() -> None:
    lane = Lane()

    def boom(report):
        raise ValueError("out of memory")

    failed = lane.submit("k", boom, "train")
    assert failed.done.wait(10) and failed.state == "failed" and failed.error == "out of memory"
    with pytest.raises(RuntimeError, match="out of memory"):
        lane.run_now("k2", boom, "train")
    retried = lane.submit("k", lambda r: 7, "train")
    assert retried is not failed and retried.done.wait(10) and retried.result == 7 and lane.by_id(failed.id) is None


def test_the_queue_and_the_record_are_bounded() -> None:
    lane = Lane(max_queued=3, keep_done=2)
    gate, _ = hold(lane)
    queued = [lane.submit(f"q{i}", lambda r: None, "train") for i in range(3)]
    with pytest.raises(LaneFullError):
        lane.submit("one too many", lambda r: None, "train")
    gate.set()
    assert queued[-1].done.wait(10)
    for i in range(4):
        last = lane.submit(f"d{i}", lambda r: None, "race")
        assert last.done.wait(10)
    time.sleep(0.05)
    assert len([k for k in lane._runs if lane._runs[k].done.is_set()]) <= 2 and lane.get("d3") is last


def test_one_owner_gets_per_owner_new_runs_and_joining_a_known_one_is_free() -> None:
    lane = Lane(per_owner=3)
    gate, _ = hold(lane)
    with runs.owned_by("10.0.0.1"):
        mine = [lane.submit(f"o{i}", lambda r: None, "race") for i in range(3)]
        with pytest.raises(runs.OwnerFullError):
            lane.submit("one too many", lambda r: None, "race")
        assert lane.submit("o0", lambda r: None, "race") is mine[0]  # the same key: that run, nothing new
    with runs.owned_by("10.0.0.2"):
        other = lane.submit("theirs", lambda r: None, "race")  # another address is not held back
    server = lane.submit("warm-up", lambda r: None, "race")  # the server's own runs: no owner, no limit
    assert runs.OWNER.get() == "" and {r.owner for r in mine} == {"10.0.0.1"} and other.owner == "10.0.0.2"
    gate.set()
    assert all(r.done.wait(10) for r in [*mine, other, server])
    with runs.owned_by("10.0.0.1"):  # finished runs no longer count
        assert lane.submit("later", lambda r: None, "race").done.wait(10)


def filled(lane: Lane, n: int, owner: str = "") -> list[runs.Run]:
    """n runs queued behind the one holding the lane (for `owner`), that do nothing when they run."""
    with runs.owned_by(owner):
        return [lane.submit(f"filler/{time.time_ns()}/{i}", lambda r: None, "train") for i in range(n)]


def drained(gate: threading.Event, fillers: list[runs.Run]) -> None:
    """The held run let go, and the server's lane given back empty of this test's fillers (the next test finds
    it as a player would, not full for a moment more)."""
    gate.set()
    assert all(run.done.wait(30) for run in fillers), "the fillers did not run"


def test_an_owner_over_the_limit_is_told_in_the_language_on_screen(short: Experiment) -> None:
    sessions = {lang: session("3-4", lang) for lang in ("zh", "en")}  # the recorded run trained before the lane is held
    gate, _ = hold(RUNS.lane)
    fillers: list[runs.Run] = []
    try:
        fillers = filled(RUNS.lane, RUNS.lane.per_owner, "10.9.9.9")  # this address has its runs waiting already
        for lang in ("zh", "en"):
            with runs.owned_by("10.9.9.9"):
                out = rooms.answer("train", sessions[lang], game.save(game.new_progress()), {**RANKING, "seed": "99"})
            assert set(out) == {"lab"} and esc(t("w_mine", lang, n=runs.PER_OWNER)) in out["lab"]["body"]
    finally:
        drained(gate, fillers)


def test_a_run_that_asks_for_another_computes_it_in_place() -> None:
    lane = Lane()
    outer = lane.submit("outer", lambda r: lane.run_now("inner", lambda r2: 41, "race") + 1, "train")
    assert outer.done.wait(10) and outer.result == 42 and lane.get("inner") is None  # no second run queued


def test_progress_and_live_curve_points_are_kept_bounded() -> None:
    lane = Lane()
    r = lane.submit("p", lambda report: [report(i / 1000, "h = 1", {"series": "h = 1", "x": i, "y": 1.0})
                                          for i in range(1000)], "train")
    assert r.done.wait(10) and len(r.points) == runs.MAX_POINTS and r.fraction == 1.0


# --- the cache holds the real numbers; a new seed trains afresh ------------------------------------------------


@pytest.fixture
def short() -> Experiment:
    """The experiment this server trains: the test suite's one short configuration (DRAGON_RUNS=short)."""
    assert RUNS.sizes == SHORT_SIZES
    return RUNS.sizes.experiment


TINY = Experiment(steps=60, curve_points=6, eval_size=64, heads=(1, 2, 4))  # the lane and its cache, in seconds


@pytest.mark.slow
def test_a_shared_run_has_the_numbers_of_a_fresh_run_with_that_seed() -> None:
    tiny = Runs(Sizes(TINY))  # runs of a size passed in, through the server's lane and its results
    shared = tiny.heads_experiment(0)
    fresh = run(TINY)  # trained again here, outside the lane and its cache
    for key in ("final_accuracy", "final_loss", "params", "curves"):
        assert shared[key] == fresh[key], key
    assert tiny.heads_run(0).result is shared  # every later player: that very run, at once
    assert shared["computed_at"] <= time.time() and shared["device"] == fresh["device"]


@pytest.mark.slow
def test_a_new_seed_trains_afresh_and_its_numbers_differ() -> None:
    tiny = Runs(Sizes(TINY))
    seven = tiny.heads_experiment(7)
    assert seven["task"]["seed"] == 7 and seven["curves"] == run(dataclasses.replace(TINY, seed=7))["curves"]
    assert seven["curves"] != tiny.heads_experiment(0)["curves"]


@pytest.mark.slow
def test_4_3s_run_is_shared_and_a_new_seed_differs() -> None:
    zero, five = api.grow(GROW_SHORT, 0), api.grow(GROW_SHORT, 5)
    fresh = growing.train(GROW_SHORT, 0)[1]  # outside the lane and its cache
    assert zero["loss"] == fresh["loss"] and zero["specialisation"] == fresh["specialisation"]
    assert five["loss"] != zero["loss"] and api.grow_run(GROW_SHORT, 0).result is zero


# --- what the page shows ----------------------------------------------------------------------------------------


def session(level_id: str, lang: str) -> dict:
    return {"level": level_id, "lang": lang}


RANKING = {f"r{i}": str(h) for i, h in enumerate(sorted(RUNS.sizes.experiment.heads, reverse=True))}


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_player_behind_a_run_is_answered_at_once_with_their_place_and_what_runs(short: Experiment, lang: str) -> None:
    api.heads_experiment(0)  # the server's recorded run
    all_levels()  # read at start, as the server does
    seed = {"zh": 11, "en": 12}[lang]  # a seed nobody trained yet
    gate, _ = hold(runs.LANE)
    try:
        t0 = time.perf_counter()
        saved = game.save(game.new_progress())
        out = rooms.answer("train", session("3-4", lang), saved, {**RANKING, "seed": str(seed)})
        assert time.perf_counter() - t0 < 1.0  # answered at once: the run waits in the lane, not in Gradio's queue
        lab = out["session"]["lab"]
        body = out["lab"]["body"]
        waiting = runs.LANE.by_id(lab["waiting"])
        assert waiting.state == "queued" and runs.LANE.ahead(waiting) == 1 and lab["seed"] == seed
        assert f'data-wait="{waiting.id}"' in body and 'data-then="train"' in body and 'role="status"' in body
        running = t("w_line", lang, what=t("w_train", lang), far=t("w_at_model", lang, h="2", pct="50 %"))
        assert esc(t("w_ahead1", lang)) in body and esc(t("w_now", lang, what=running)) in body  # and how far it is
        assert 'data-act="train"' not in body and "disabled" in body  # no second press; the answers stay shown
        polled = waits.wait({"run": waiting.id, "lang": lang})
        assert polled["done"] is False and esc(t("w_ahead1", lang)) in polled["html"]
        assert waits.wait({"run": "forgotten", "lang": lang}) == {"done": True}
    finally:
        gate.set()
    assert waiting.done.wait(120)
    polled = waits.wait({"run": waiting.id, "lang": lang})
    assert polled == {"done": True}
    done = rooms.answer("train", out["session"], out["saved"], {**RANKING, "seed": str(seed)})
    lab = done["session"]["lab"]
    assert lab["result"]["task"]["seed"] == seed and lab["replayed"] is False  # scored from the run it watched
    assert t("w_watched", lang, at="", device="", s="").split("：")[0].split(":")[0] in done["lab"]["body"]


@pytest.mark.slow  # 3-4 trains at seed 0
def test_the_recorded_run_is_shown_at_once_and_said_to_be_a_replay(short: Experiment) -> None:
    recorded = api.heads_experiment(0)
    out = answered("train", session("3-4", "en"), game.save(game.new_progress()), RANKING)
    lab = out["session"]["lab"]
    assert lab["result"] is recorded and lab["replayed"] is True and lab["seed"] == 0
    at = time.strftime("%H:%M", time.gmtime(recorded["computed_at"]))
    body = out["lab"]["body"]
    assert "Replayed from the run this server trained at " + at in body and 'class="run-chart replay"' in body


def test_a_running_training_says_how_far_it_is_and_draws_its_curve_so_far() -> None:
    lane = Lane()
    gate = threading.Event()

    def training(report):
        for i in range(1, 4):
            report(i / 10, "h = 2", {"series": "h = 2", "x": i * 10, "y": 3.0 - i / 2})
        gate.wait(30)

    r = lane.submit("curve", training, "train", level="3-4", seed=3)
    while len(r.points) < 3:
        time.sleep(0.01)
    for lang in ("zh", "en"):
        body = waits.wait_body(r, lang)
        assert esc(t("w_at_model", lang, h="2", pct="30 %")) in body and "<polyline" in body and "<progress" in body
        assert esc(t("w_3-4", lang, seed=t("w_seed", lang, seed=3))) in body
    gate.set()


@pytest.mark.parametrize("bad", ["-1", "1.5", "abc", "NaN", "2147483648", "１２", "9" * 40, "", "  "])
def test_a_bad_seed_is_refused_and_changes_nothing(short: Experiment, bad: str) -> None:
    out = rooms.answer("train", session("3-4", "en"), game.save(game.new_progress()), {**RANKING, "seed": bad})
    assert set(out) == {"lab"} and t("w_seed_bad", "en") in out["lab"]["body"]
    assert waits.parse_seed("") is None and waits.parse_seed(None) == 0 and waits.parse_seed(" 42 ") == 42


def test_a_full_lane_is_said_and_changes_nothing(short: Experiment) -> None:
    sess = session("3-4", "zh")  # the recorded run trained before the lane is held
    gate, _ = hold(RUNS.lane)
    fillers: list[runs.Run] = []
    try:
        fillers = filled(RUNS.lane, RUNS.lane.max_queued - RUNS.lane.queued())  # the server's lane full
        with pytest.raises(LaneFullError):
            RUNS.lane.submit("one too many", lambda r: None, "train")
        saved = game.save(game.new_progress())
        out = rooms.answer("train", sess, saved, {**RANKING, "seed": "99"})
        assert set(out) == {"lab"} and t("w_full", "zh") in out["lab"]["body"]
        assert RUNS.lane.get(RUNS.heads(99)[0]) is None  # seed 99's training: refused, nothing queued
    finally:
        drained(gate, fillers)


@pytest.mark.slow  # 4-3 trains at seed 5
def test_4_3_takes_a_seed_and_says_where_its_run_came_from() -> None:
    out = answered("grow", session("4-3", "en"), game.save(game.new_progress()), {"seed": "5"})
    assert "session" in out, out
    lab = out["session"]["lab"]
    assert lab["seed"] == 5 and lab["run"] == api.grow(RUNS.sizes.grow_steps, 5) and "run-record" in out["lab"]["body"]
    again = answered("grow", session("4-3", "en"), game.save(game.new_progress()), {"seed": "5"})
    assert again["session"]["lab"]["replayed"] is True and "Replayed from the run" in again["lab"]["body"]


@pytest.mark.slow
def test_the_race_waits_in_the_lane_and_times_alone() -> None:
    gate, _ = hold(runs.LANE, kind="race")
    try:
        out = rooms.answer("race", session("3-2", "en"), game.save(game.new_progress()), {"guess": "3"})
        lab = out["session"]["lab"]
        assert "waiting" in lab and lab["guess"] == 3 and 'data-then="race"' in out["lab"]["body"]
        assert 'data-act="race"' not in out["lab"]["body"]
    finally:
        gate.set()
    done = answered("race", out["session"], out["saved"], {"guess": "3"})
    assert "result" in done["session"]["lab"] and "reference" in done["session"]["lab"]


def test_warm_up_queues_every_fixed_run_once() -> None:
    lane = Lane()
    gate, _ = hold(lane)  # nothing starts: only what is queued is looked at
    try:
        queued = rooms.warm_up(Runs(RUNS.sizes, lane))
        assert {r.level for r in queued} == {"3-2", "3-4", "4-1", "4-2", "4-3", "4-4", "4-5", "4-6"}
        assert rooms.warm_up(Runs(RUNS.sizes, lane)) == queued  # asked again: the same runs, none twice
        kinds = [r.kind for r in sorted((r for r in queued if r.state == "queued"), key=lane.ahead)]
        assert kinds == sorted(kinds, key=runs.KINDS.index)  # races, then loads, then trainings
    finally:
        lane._queue.clear()
        gate.set()


def test_the_page_polls_and_asks_again_when_done() -> None:
    """lab.js: the wait box is polled through the server function and its event sent again when done."""
    from pathlib import Path

    js = (Path(__file__).resolve().parent.parent / "assets" / "ui" / "lab.js").read_text(encoding="utf-8")
    assert "server.wait(" in js and re.search(r"trigger\(now\.dataset\.then", js)


def test_shared_results_are_bounded_the_least_recently_asked_dropped_first() -> None:
    from dragon.runtime.shared import Shared

    store, calls = Shared(max_results=2), []
    for key in ("a", "b", "a", "c", "a", "b"):  # "b" is the least recently asked for when "c" comes
        store.once(key, lambda key=key: calls.append(key) or key)
    assert calls == ["a", "b", "c", "b"] and len(store.results) <= 2


@pytest.mark.slow
def test_a_known_result_never_waits_behind_the_lane() -> None:
    """Even when the lane has forgotten the run's record (many races since) and is busy with another training."""
    recorded, grown = Runs(Sizes(TINY)).heads_experiment(21), api.grow(GROW_SHORT, 21)
    lane = Lane()
    other = Runs(Sizes(TINY), lane)  # a lane that never saw these runs
    gate, _ = hold(lane)
    try:
        again = other.heads_run(21)
        assert again.state == "done" and again.result is recorded and other.heads_experiment(21) is recorded
        assert other.grow_run(GROW_SHORT, 21).result is grown and other.grow(GROW_SHORT, 21) is grown
    finally:
        gate.set()


@pytest.mark.slow
def test_4_2s_figures_and_4_4s_model_say_when_and_where_this_server_computed_them() -> None:
    tw = api.tower()
    body = rooms.lab_props(get_level("4-2"), "en", game.new_progress())["body"]
    at = time.strftime("%H:%M", time.gmtime(tw["computed_at"]))
    assert f"measured on this server at {at} UTC" in body and f"({tw['seconds']:.1f} s)" in body
    grown = api.grow(RUNS.sizes.pruned_steps, 0)
    api.prune_best(0)
    body = rooms.lab_props(get_level("4-4"), "zh", game.new_progress())["body"]
    assert time.strftime("%H:%M", time.gmtime(grown["computed_at"])) in body and f"{grown['seconds']:.1f} 秒" in body


@pytest.mark.slow
def test_an_answer_that_changes_no_star_leaves_the_top_alone() -> None:
    """A class pressing at once: each page redraws only what changed (the top only for new XP or stars)."""
    out = answered("race", session("3-2", "en"), game.save(game.new_progress()), {"guess": "2"})
    assert "lab" in out and "saved" in out and "top" not in out
    from dragon.lessons import race as race_lesson

    right = race_lesson.work_reading(out["session"]["lab"]["result"])
    read = rooms.answer("check", out["session"], out["saved"], {"work": right})
    assert read["session"]["lab"]["stars"] >= 1 and "top" in read  # a star: XP and the picker's stars change


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_wait_says_what_runs_the_heal_in_its_own_words_and_any_other_key_by_its_level(lang: str) -> None:
    heal = runs.Run(key="heal/11011011/seed=0/cpu", kind="train", compute=lambda report: None, level="4-4")
    grow = runs.Run(key="grow/steps=600/seed=0/cpu", kind="train", compute=lambda report: None, level="4-4")
    other = runs.Run(key="curve", kind="train", compute=lambda report: None, level="3-4")
    assert waits.doing(heal, lang) == t("w_heal", lang, seed="") != waits.doing(grow, lang) == t("w_4-4", lang, seed="")
    assert waits.doing(other, lang) == t("w_3-4", lang, seed="")

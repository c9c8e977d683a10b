"""The rooms: which panel and which actions serve each lab level kind (chapters 3–5), and the lab's events.

Adding a lab level kind is one entry in ROOMS plus its module: a panel and actions built from ui/rooms/lab.py's blocks.
The app wires every event named in EVENTS to the lab component (ui/lab.js sends a button's data-act as the event,
with the answers on the panel), and each event is answered by the action of that name in the room on screen."""

import time
from collections.abc import Callable

from dragon import game
from dragon.levels.loader import Level, all_levels, get_level
from dragon.runs import RUNS, Runs
from dragon.runtime.lane import LaneFullError, Run
from ui.rooms import badge as badge_room
from ui.rooms import crystal as crystal_room
from ui.rooms import formula as formula_room
from ui.rooms import fusion as fusion_room
from ui.rooms import grow as grow_room
from ui.rooms import heads as heads_room
from ui.rooms import lab, rethink, rethinks, waits
from ui.rooms import loading as loading_room
from ui.rooms import positions as positions_room
from ui.rooms import prune as prune_room
from ui.rooms import race as race_room
from ui.rooms import router as router_room
from ui.rooms import scroll as scroll_room
from ui.rooms import stability as stability_room
from ui.rooms import tower as tower_room
from ui.rooms.lab import Action, Attempt, Outcome, Room
from ui.session import EventData, Saved, State, carried, session_of
from ui.strings import t
from ui.top import progress_props
from ui.widgets.draw import esc

ROOMS: dict[str, Room] = {
    # chapter 3: predict, then the real computation
    "formula": Room(formula_room.formula_panel, {"check": Action(formula_room.check_formula), "round": Action(formula_room.next_round)}),
    "race": Room(race_room.race_panel, {"race": Action(race_room.run_race),
                                       "check": Action(race_room.check_race)},
                 rethink=rethinks.RACE),
    "fusion": Room(fusion_room.fusion_panel, {"predict": Action(fusion_room.predict_fusion),
                                              "check": Action(fusion_room.read_fusion)},
                   rethink=rethinks.FUSION),
    "heads": Room(heads_room.heads_panel, {"train": Action(heads_room.train),
                                         "check": Action(heads_room.read_heads),
                                         "quiz": Action(heads_room.check, scored=False)},
                  rethink=rethinks.HEADS),
    "scroll": Room(scroll_room.scroll_panel, {"scroll": Action(scroll_room.measure),
                                              "check": Action(scroll_room.read_scroll)}),
    # chapter 4: the real pretrained model, and heads trained live
    "crystal": Room(crystal_room.crystal_panel, {"pick": Action(crystal_room.pick),
                                             "try": Action(crystal_room.try_own, scored=False)},
                    needs=loading_room.CRYSTAL_NEEDS),
    "tower": Room(tower_room.tower_panel, {"predict": Action(tower_room.predict_tower), "check": Action(tower_room.read_tower)},
                  needs=loading_room.TOWER_NEEDS, rethink=rethinks.TOWER),
    "grow": Room(grow_room.grow_panel, {"grow": Action(grow_room.grow),
                                       "stages": Action(grow_room.label_stages)}),
    "prune": Room(prune_room.prune_panel, {"measure": Action(prune_room.measure), "submit": Action(prune_room.submit_pruning),
                                           "heal": Action(prune_room.heal, scored=False)},
                  needs=loading_room.PRUNE_NEEDS),
    "stability": Room(stability_room.stability_panel, {"grid": Action(stability_room.train_grid),
                                                       "check": Action(stability_room.read_grid)}),
    "router": Room(router_room.router_panel, {"route": Action(router_room.route), "check": Action(router_room.read_routes)}),
    # chapter 5
    "positions": Room(positions_room.positions_panel, {"predict": Action(positions_room.predict_positions),
                                                 "check": Action(positions_room.read_positions)},
                      rethink=rethinks.POSITIONS),
    "badge": Room(badge_room.badge_panel, {"badge": Action(badge_room.make_badge)}),
}


def need_run(level: Level, runs: Runs = RUNS) -> Run:
    """The lane's run that loads what the level's room needs (the one already queued, loading or done, if any)."""
    needs = ROOMS[level.kind].needs
    return runs.lane.submit(f"load/{level.kind}", lambda report: needs.load(report), "load", level=level.id)


def warm(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome:
    """Load what the room needs (the real model, a trained model) in the server's lane: the wait box while it loads
    (the page asks again once it is done), why not if it cannot be, else nothing to say (the panel is drawn)."""
    needs = ROOMS[level.kind].needs
    if needs is None or needs.ready():
        return progress, attempt, ""
    try:
        run = need_run(level)
    except LaneFullError:
        return progress, attempt, lab.refusal(t("w_full", lang))
    if not waits.settled(run):
        return progress, attempt, waits.wait_box(run, lang, "warm")
    if run.state == "failed":
        return progress, attempt, lab.refusal(t("w_failed", lang, why=run.error[:200]))
    return progress, attempt, lab.refusal(run.result) if run.result else ""


def warm_up(runs: Runs = RUNS) -> list[Run]:
    """At start, in the lane (in the background): every computation a lab level shows that no player's input
    changes — the models the rooms load, 3-2's reference races, 3-4's, 4-3's, 4-5's and 4-6's seeded runs (4-4 prunes 4-3's) —
    so the class finds them done and nobody queues for them."""
    labs = [lv for lv in all_levels().values() if lv.kind in ROOMS]
    queued = [need_run(lv, runs) for lv in labs if ROOMS[lv.kind].needs]
    queued += [runs.race_reference_run(lv.guess_at) for lv in labs if lv.kind == "race"]
    return [*queued, runs.heads_run(0), runs.grow_run(runs.sizes.grow_steps, loading_room.SEED), runs.stability_run(0),
            runs.routing_run(0)]


EVERY_ROOM = {"again": Action(lab.again)}
WARM = Action(warm, scored=False)


def actions(room: Room) -> dict[str, Action]:
    """A room's actions: its own, starting over, loading what it needs, and its second prediction."""
    second = {rethink.EVENT: Action(rethink.check(room.rethink))} if room.rethink else {}
    return {**EVERY_ROOM, **room.actions, **({"warm": WARM} if room.needs else {}), **second}


EVENTS = list(dict.fromkeys(name for room in ROOMS.values() for name in actions(room)))  # every room's events, once


# --- the lab panel and its events ---------------------------------------------------------------------------------


def lab_props(level: Level, lang: str, progress: dict, attempt: Attempt | None = None, note: str = "",
              seed: int | None = None) -> dict:
    """The lab panel for a lab level: what to predict, and, once checked, the real computation (`seed`: a class
    exam's, fixed for the attempt)."""
    attempt = lab.fixed_seed(attempt if attempt and attempt.get("level") == level.id else {"level": level.id}, seed)
    room = ROOMS[level.kind]
    if room.needs and not room.needs.ready():
        body = note or lab.loading(t(room.needs.message, lang))  # a missing model is said once, not asked for again
    else:
        body = room.panel(level, lang, progress, attempt, note)
        body = body.replace(lab.RETHINK_LINK, rethink.link(lang, attempt, room.rethink), 1)
        body = body.replace(lab.RETHINK_SLOT, rethink.block(level, lang, attempt, room.rethink), 1)
    label = t("lab_label" if level.chapter <= 3 else f"lab_label{level.chapter}", lang)
    return {"kind": level.kind, "label": esc(label), "body": body, "ack": time.time_ns()}


def context(state: State, saved: Saved) -> tuple[Level, str, dict, Attempt] | None:
    """The lab on screen for this player: level, language, progress and attempt (None when it is not a lab)."""
    session = session_of(state)
    if session["level"] not in all_levels():
        return None  # the sandbox or a teacher's level: no lab
    level = get_level(session["level"])
    if level.kind not in ROOMS:
        return None
    return level, session["lang"], game.load(saved).progress, lab.attempt_of(state, level)


def answer(event: str, state: State, saved: Saved, data: EventData = None) -> dict:
    """A lab button pressed: the room's action of that name runs on the player's answers and the panel, the progress,
    the top and the session show what it left (an unscored action leaves the progress alone). A refusal changes
    nothing and is said beside the button."""
    ctx = context(state, saved)
    if ctx is None:
        return {}
    level, lang, progress, attempt = ctx
    action = actions(ROOMS[level.kind]).get(event)
    if action is None:
        return {}  # not a button of this level
    data = data if isinstance(data, dict) else {}
    with game.attempt_hints(attempt.get("own_hints", 0) if isinstance(attempt.get("own_hints"), int) else 0) as own:
        outcome = action.fn(level, lang, progress, attempt, data)
    if outcome is None:
        return {}  # nothing to do now (a run already done)
    after, attempt, note = outcome
    attempt = rethink.offer(level, lang, attempt, ROOMS[level.kind].rethink)  # passed below ★★★: one more prediction
    if own[0] and event != "again" and attempt.get("level") == level.id:
        attempt = {**attempt, "own_hints": own[0]}  # the hints this attempt used (answers shown): a class caps by the rest
    if note:
        return {"lab": lab_props(level, lang, after, attempt, note)}
    session = {**carried(session_of(state)), "level": level.id, "lang": lang, "lab": attempt}
    shown = {"lab": lab_props(level, lang, after, attempt), "session": session}
    if not action.scored:
        return shown
    shown["saved"] = game.save(after)
    top = progress_props(level, lang, after)
    if top != progress_props(level, lang, progress):  # XP or stars changed: the top is drawn again, else left alone
        shown["top"] = top
    return shown


def handler(event: str) -> Callable[..., dict]:
    """The Gradio handler of one lab event: (state, saved, data) → the changed outputs."""

    def run(state: State, saved: Saved, data: EventData = None) -> dict:
        return answer(event, state, saved, data)

    run.__name__ = f"lab_{event}"
    return run

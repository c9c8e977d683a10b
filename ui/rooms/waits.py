"""What a player sees while a run of the server's lane is on the way (dragon/runtime/lane.py): what runs, how far it is, the
place in the queue and the live curve, in the language on screen; and the line that says where a shown run came from.

The lab panel's script asks the server function `wait` about the run every POLL_MS until it is done, then sends the
event that asked for it again, which now finds the result."""

import time
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from dragon.levels.loader import Level
from dragon.runs import RUNS
from dragon.runtime.lane import LaneFullError, OwnerFullError, Run
from ui.rooms import lab
from ui.rooms.lab import Attempt, Outcome, device_label, note, number_field, refusal, waiting
from ui.strings import STRINGS, t
from ui.widgets.charts import line_chart
from ui.widgets.draw import esc

POLL_MS = 500  # how often the page asks while a run is on the way
INLINE_S = 0.4  # an action waits this long for its run before it answers with the wait box instead
# one colour per curve, the same live and in the result: 3-4's models (h = 1 … 16) and 4-3's held-out loss
CURVE_COLOURS = {"h = 1": "#8e9aa6", "h = 2": "#d4a017", "h = 4": "#2e9e4f", "h = 8": "#7b3fbf", "h = 16": "#17a2b8",
                 "loss": "#c2410c"}


def curve_colour(series: str) -> str:
    return CURVE_COLOURS.get(series, "#374151")


OWN_WORDS = {"heal": "w_heal"}  # runs whose key says more than their level does (4-4 prunes 4-3's model, or heals it)


def doing(run: Run, lang: str) -> str:
    """What the run does, in words: 'Training 3-4's five models (seed 7)' (a run of its own words first: 4-4's heal)."""
    own = OWN_WORDS.get(run.key.partition("/")[0])
    name = own or (f"w_{run.level}" if f"w_{run.level}" in STRINGS else f"w_{run.kind}")
    seed = "" if run.seed in (None, 0) else t("w_seed", lang, seed=run.seed)
    return t(name, lang, seed=seed)


def how_far(run: Run, lang: str) -> str:
    """The run's progress: the model or the step it is at, and the share done."""
    pct = f"{100 * run.fraction:.0f} %"
    if run.what.startswith("h = "):  # 3-4: the model training now
        return t("w_at_model", lang, h=run.what.removeprefix("h = "), pct=pct)
    if run.what.startswith("step "):  # 4-3 (and 4-4's model): the step reached
        step, _, total = run.what.removeprefix("step ").partition(" of ")
        return t("w_at_step", lang, step=step, steps=total, pct=pct)
    if run.what.startswith("run "):  # 4-5, 4-6: the run of the grid training now
        n, _, total = run.what.removeprefix("run ").partition(" of ")
        return t("w_at_run", lang, n=n, total=total, pct=pct)
    if run.what.startswith("T = "):  # a race: the length timed last
        return t("w_at_length", lang, what=run.what, pct=pct)
    if run.fraction > 0:
        return pct
    return t("w_for", lang, s=f"{time.time() - (run.started_at or time.time()):.0f}")


def queue_line(run: Run, lang: str) -> str:
    """The place in the queue, and what runs now (the lane runs one at a time: no run slows another's clock)."""
    ahead = RUNS.lane.ahead(run)
    now = RUNS.lane.running()
    line = t("w_ahead1" if ahead == 1 else "w_ahead", lang, n=ahead)
    if now is not None and now is not run:  # what runs now, and how far it is
        line += t("w_now", lang, what=t("w_line", lang, what=doing(now, lang), far=how_far(now, lang)))
    return line


ACCURACY_RUNS = {"heal"}  # runs whose live points are accuracy, not loss (4-4's heal: the pruned and the full model)
HEAL_COLOURS = {"pruned": "#c2410c", "full": "#1f4e9c"}  # 4-4's heal, live and in its result


def live_curve(run: Run, lang: str) -> str:
    """The curve so far (the points the training reported), one line per model: the loss, or a heal's accuracy."""
    if len(run.points) < 2:
        return ""
    frame = pd.DataFrame(run.points)
    colours = {s: curve_colour(s) for s in frame["series"].unique()}
    if run.key.partition("/")[0] in ACCURACY_RUNS:
        names = {"pruned": t("hl_pruned", lang), "full": t("hl_full", lang)}
        colours = {s: HEAL_COLOURS.get(s, c) for s, c in colours.items()}
        return line_chart(frame, "x", "y", "series", title=t("w_curve_accuracy", lang), x_label=t("hl_x", lang),
                          y_label=t("hl_y", lang), colours=colours, names=names)
    names = {"loss": t("g_loss_name", lang)}
    return line_chart(frame, "x", "y", "series", title=t("w_curve", lang), x_label=t("g_x", lang),
                      y_label=t("h_y", lang), colours=colours, names=names)


def wait_body(run: Run, lang: str) -> str:
    """The inside of the wait box: the line, the bar and, while training, the live curve."""
    if run.state == "failed":
        return f'<p class="wait-line">{esc(t("w_failed", lang, why=run.error[:200]))}</p>'
    if run.state == "queued":
        line, bar = t("w_queued", lang, what=doing(run, lang), queue=queue_line(run, lang)), ""
    else:
        line = t("w_line", lang, what=doing(run, lang), far=how_far(run, lang))
        bar = f'<progress class="wait-bar" max="1" value="{run.fraction:.3f}" aria-hidden="true"></progress>'
    return f'<p class="wait-line">{esc(line)}</p>{bar}{live_curve(run, lang)}'


def wait_box(run: Run, lang: str, then: str) -> str:
    """The block that stands for a run on its way: the page polls it by run id and sends `then` once it is done."""
    return waiting(run.id, then, lang, POLL_MS, wait_body(run, lang))


def wait(payload: dict | None) -> dict:
    """The lab panel's server function: {run, lang} → {html, done} for the run on its way (done for an unknown id:
    the event then says what happened)."""
    payload = payload if isinstance(payload, dict) else {}
    lang = payload.get("lang") if payload.get("lang") in ("zh", "en") else "zh"
    run = RUNS.lane.by_id(payload.get("run"))
    if run is None or run.done.is_set():
        return {"done": True}
    return {"done": False, "html": wait_body(run, lang)}


def settled(run: Run) -> bool:
    """Wait a moment for a run (most are done at once: known already, or short); whether it is done now."""
    return RUNS.lane.wait(run, INLINE_S)


def record_line(result: dict, lang: str, replayed: bool, key: str | None = None) -> str:
    """Where a shown run came from: trained on this server at a time, on a device, in so many seconds; and whether
    what is shown is that record replayed (the same numbers for everyone) or the run this player just watched
    (`key`: another wording of the same record, 4-2's figures or 4-4's model). A grid of seeds (4-5, 4-6) names them
    all."""
    at = time.strftime("%H:%M", time.gmtime(result.get("computed_at", time.time())))
    seed = result.get("task", {}).get("seed", result.get("seed", 0))
    seeds = result.get("seeds") if isinstance(result.get("seeds"), list) else [seed]
    again = "w_replayed_seed" if len(seeds) == 1 else "w_replayed_seeds"
    key = key or ("w_watched" if not replayed else "w_replayed" if not seed else again)
    device = device_label(str(result.get("device", "cpu")), lang, result.get("threads"))
    return t(key, lang, at=at, device=device, s=f"{result.get('seconds', 0):.1f}", seed=seed,
             seeds=", ".join(map(str, seeds)))


def box_of(attempt: dict, lang: str, then: str) -> str:
    """The wait box for the run the attempt waits for, if any (a forgotten run: nothing; the event starts afresh)."""
    run = RUNS.lane.by_id(attempt.get("waiting"))
    return wait_box(run, lang, then) if run is not None and "waiting" in attempt else ""


def follow(attempt: dict, start: Callable[[], Run], lang: str) -> tuple[Run | None, str]:
    """The run the attempt waits for, else a new one (start()); (None, why) when the lane refuses it or it failed."""
    run = RUNS.lane.by_id(attempt.get("waiting"))
    if run is None:
        try:
            run = start()
        except OwnerFullError:
            return None, refusal(t("w_mine", lang, n=RUNS.lane.per_owner))
        except LaneFullError:
            return None, refusal(t("w_full", lang))
    if run.state == "failed":
        return None, refusal(t("w_failed", lang, why=run.error[:200]))
    return run, ""


def answered(attempt: Attempt) -> bool:
    """Whether a predict-then-measure attempt's predictions are in (its run waiting or done): its answers locked."""
    return "result" in attempt or "waiting" in attempt


def measuring_room(name: str, level: Level, lang: str, progress: dict, attempt: Attempt, note_html: str, setup: str,
                   ask: str, predictions: int, measured: Callable[..., str], event: str, go: str,
                   seeded: bool = False) -> str:
    """A predict-then-measure level's panel (3-5, 4-5, 4-6): the setup, the star rule for its `predictions`, the
    questions (`ask`, locked once answered), then the first seed (`seeded`) and the button that runs `event`, or the
    wait box while it runs, or what it measured (`measured`, the room's own drawing)."""
    locked = answered(attempt)
    result = note_html + (measured(level, lang, progress, attempt) if "result" in attempt
                          else box_of(attempt, lang, event))
    seed = seed_field(attempt, lang, locked, "w_seeds_label") if seeded else ""
    button = "" if locked else lab.button(event, go)
    return lab.room(name, lab.note(setup, "setup"), lab.read_rule(lang, predictions), ask,
                    lab.checking(level, lang, progress, attempt, check=seed + button, result=result))


@dataclass(frozen=True)
class Done:
    """A press's run, done: its result is in `run`; `replayed` when it was known before this player asked (the
    record every player sees), not trained while they watched."""

    run: Run
    replayed: bool


def awaited(progress: dict, attempt: Attempt, start: Callable[[], Run], lang: str, keep: dict) -> Outcome | Done:
    """The run a press starts (or the one its attempt waits for): the lane's refusal or a failed run (the attempt stops
    waiting), or the attempt waiting for it with `keep` (the answers it holds meanwhile), as the press's outcome; once
    the run is done, Done."""
    run, refused = follow(attempt, start, lang)
    if run is None:
        return progress, {k: v for k, v in attempt.items() if k != "waiting"}, refused
    known = "waiting" not in attempt and run.done.is_set()  # before the inline wait: known before this player asked
    if not settled(run):
        return progress, {**attempt, **keep, "waiting": run.id}, ""
    return Done(run, known)


def measured_predictions(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict, given: dict,
                         start: Callable[[int | None], Run], points: Callable[[dict], int], out_of: int,
                         seeded: bool = False) -> Outcome:
    """A predict-then-measure press (3-5, 4-5, 4-6): the checked predictions `given`, then the run (`start(seed)`:
    with `seeded`, the seed the press asks for, a bad one refused; else None) in the lane, the wait box meanwhile;
    once done, the predictions scored by `points(result)` and the answers counted as shown (they are on screen)."""
    seed = asked_seed(attempt, data) if seeded else None
    if seeded and seed is None:
        return progress, attempt, refusal(t("w_seed_bad", lang))
    keep = {"answers": given, **({"seed": seed} if seeded else {})}
    got = awaited(progress, attempt, lambda: start(seed), lang, keep)
    if not isinstance(got, Done):
        return got
    progress, cap = lab.answers_shown(progress, level.id)
    replayed = {"replayed": got.replayed} if seeded else {}  # a seeded run says where it came from
    return progress, {"level": level.id, **keep, "result": got.run.result, "points": points(got.run.result),
                      "cap": cap, "out_of": out_of, **replayed}, ""


def parse_seed(value: object) -> int | None:
    """A seed typed in a box: a whole number in 0…2³¹ − 1, else None (an emptied box too: the page says what to type).
    No box sent at all (None): 0, the run this server recorded."""
    if value is None:
        return 0
    text = str(value).strip()
    if not text or not text.isascii() or not text.isdigit() or len(text) > 10:
        return None
    seed = int(text)
    return seed if seed < 2**31 else None


def seed_field(attempt: dict, lang: str, locked: bool, label: str = "w_seed_label", default: int = 0) -> str:
    """The seed box of a room that trains (0: the run this server recorded; another number trains afresh); a class
    exam's seed is the round's, shown and locked."""
    exam = attempt.get("fixed_seed", False)
    return number_field("seed", t("w_seed_exam" if exam else label, lang), str(attempt.get("seed", default)),
                        0, 2**31 - 1, cls="seed", step=1, locked=locked or exam)


def asked_seed(attempt: dict, data: dict) -> int | None:
    """The seed a press asks for: the one the attempt waits for or a class exam's round's, else the box's (None: a
    bad one, the page says what to type)."""
    if "waiting" in attempt or attempt.get("fixed_seed"):
        return attempt.get("seed")
    return parse_seed(data.get("seed"))


def replayed_chart(chart: str, result: dict, lang: str, replayed: bool) -> str:
    """A run's curve chart with the line that says where it came from; a replayed run's lines are drawn again from
    its record, left to right (the same curve every player sees), a watched one's stand as they came."""
    cls = "run-chart replay" if replayed else "run-chart"
    return f'<div class="{cls}">{note(record_line(result, lang, replayed), "run-record")}{chart}</div>'

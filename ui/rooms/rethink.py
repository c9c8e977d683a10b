"""A second prediction: once a predict-then-read level's answers are shown, one more prediction on a measurement not
shown yet (another text, length or seed); right by the level's margin, it lifts the level to ★★★.

A learner who believed the lesson, predicted wrong and then read the measurement has changed their mind; this is
where that pays. The question is drawn afresh for every attempt (a start over draws another), its answer is
computed only when it is checked, and a class exam (a fixed seed) asks none: an exam judges the first answers.

A room that offers one names a Rethink (ui/rooms/registry.py): `draw` picks the new question's parameters, `panel` draws it
(and, once checked, its measurement and verdict), `check` is the action of its button (event "rethink")."""

import random
import secrets
from collections.abc import Callable

from dragon.levels.loader import Level
from ui.rooms import lab
from ui.rooms.lab import Attempt, Outcome, Rethink
from ui.strings import t
from ui.widgets.draw import esc

EVENT = "rethink"  # the second prediction's button


def offered(attempt: Attempt) -> bool:
    """A second prediction is offered once the level is passed below ★★★ on this attempt, outside a class exam."""
    stars = attempt.get("stars")
    return isinstance(stars, int) and 1 <= stars < 3 and not attempt.get("fixed_seed")


def offer(level: Level, lang: str, attempt: Attempt, rethink: Rethink | None) -> Attempt:
    """The attempt with its second prediction drawn, the first time it is offered (else as it was)."""
    if rethink is None or "rethink" in attempt or not offered(attempt):
        return attempt
    rng = random.Random(secrets.randbits(64))  # a fresh question for every attempt: a start over draws another
    return {**attempt, "rethink": {"asked": rethink.draw(level, lang, attempt, rng)}}


def link(lang: str, attempt: Attempt, rethink: Rethink | None) -> str:
    """Beside the stars, while the second prediction waits for its answer: a link that leads to it."""
    held = attempt.get("rethink")
    if rethink is None or not isinstance(held, dict) or "right" in held:
        return ""
    return f'<a class="rethink-link" href="#mhd-rethink">{esc(t("rt_link", lang))}</a>'


def block(level: Level, lang: str, attempt: Attempt, rethink: Rethink | None) -> str:
    """The second prediction's part of the panel: its question and button, or what it measured and earned."""
    held = attempt.get("rethink")
    if rethink is None or not isinstance(held, dict):
        return ""
    done = "right" in held
    title = t("rt_title", lang)
    body = rethink.panel(level, lang, attempt, held["asked"], held)
    if done:
        body += lab.verdict(t("rt_right" if held["right"] else "rt_wrong", lang), "rethink-verdict",
                            right=int(held["right"]))
    elif "waiting" not in held:
        body = lab.note(t("rt_intro", lang)) + body + lab.check_row(lab.button(EVENT, t("rt_check", lang)))
    return f'<section class="rethink" id="mhd-rethink" aria-label="{esc(title)}">{lab.heading(title, "rethink-title")}{body}</section>'


def check(rethink: Rethink) -> Callable[..., Outcome | None]:
    """The action of the second prediction's button: checked once; right by the level's margin, the level is won at
    ★★★ (the score 100); wrong, the stars stay as they were."""

    def act(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
        held = attempt.get("rethink")
        if not isinstance(held, dict) or "right" in held:
            return None  # nothing asked, or already answered
        answer = rethink.check(level, lang, progress, attempt, held["asked"], data)
        if isinstance(answer, str):
            return progress, attempt, lab.refusal(answer)
        if len(answer) == 3:
            return answer  # a run on its way: the room's own outcome (the wait box)
        right, measured = answer
        attempt = {**attempt, "rethink": {"asked": held["asked"], "right": bool(right), "measured": measured}}
        if right:
            progress = lab.record(progress, level, 100.0, 3)
            attempt = {**attempt, "stars": 3}
        return progress, attempt, ""

    return act

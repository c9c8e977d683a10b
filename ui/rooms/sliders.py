"""The slider levels: the control panel's view, the live answer to a slider move, and the panel's buttons.

Each handler takes the player's state in and returns a dict of named outputs (state included); what it gives the
panel is a dict of the panel component's properties (only those that change)."""

import functools
import json
import time
from collections.abc import Callable, Iterator

from dragon import api, game
from dragon.config import HEADS
from dragon.engine import Reading
from dragon.levels import teacher as teacher_levels
from dragon.levels.loader import LANGS, Level, all_levels
from dragon.scoring import Scorer, ascent_path, stars
from ui.rooms import slider_views as views
from ui.session import (
    MAX_SANDBOX_CHARS,
    SANDBOX,
    SANDBOX_LANGS,
    START_GATES,
    Gates,
    Saved,
    State,
    clean_gates,
    level_after,
    level_of,
    session_of,
)
from ui.strings import head_label, head_name, t
from ui.top import progress_props
from ui.widgets.draw import coach_html, dragon_svg, esc, gauge_html, shown_score, star_text, why_html

DEMO_DELAY_S = 0.12  # pause between the goddess's steps


def cap(progress: dict, level_id: str, extra_hints: int = 0, at_least: int = 0) -> int:
    """The most stars still reachable on the level (after `extra_hints` more, or at least `at_least` in all)."""
    return stars(100.0, max(game.hints_used(progress, level_id) + extra_hints, at_least))


# --- views ------------------------------------------------------------------------------------------------


def level_score(level: Level, lang: str, gates: list[float]) -> float:
    """score(reading, gates, target) on the level's text, the target's side worked out once (kept on the reading)."""
    reading = api.level_reading(level, lang)
    target = level.target_for(lang)
    return views.kept(reading, ("scorer", target), lambda: Scorer(reading, target))(gates)


def live_view(level: Level, lang: str, gates: list[float], progress: dict) -> tuple[dict, bool]:
    """What a slider move changes (the gauge and the comparison), and whether it beats the player's record."""
    reading = api.level_reading(level, lang)
    s = level_score(level, lang, gates)
    earned = stars(s, game.hints_used(progress, level.id))
    best = progress["best"].get(level.id)
    improved = earned > progress["stars"].get(level.id, 0) or game.kept_score(s) > (best if best is not None else -1.0)
    shown_best = max(best, s) if best is not None else s
    view = {
        "gauge": gauge_html(s, earned, shown_best, cap(progress, level.id), lang),
        "compare": views.comparison(level, reading, gates, lang, answer_open(level, progress)),
        # read out by screen readers: the level on screen, in the language on screen
        "say": t("say_score", lang, level=level.id, title=level.title[lang], s=f"{shown_score(s):.1f}",
                 stars=star_text(earned)),
    }
    return view, improved


def buttons_html(level: Level, lang: str, progress: dict, exam: bool = False) -> str:
    """The panel's buttons; those that cost stars say how many stay reachable after them. An exam (the teacher's
    link) has no hint, demo or reveal."""

    def button(act: str, cost: int | None = None) -> str:
        after = f' <span class="cost">{esc(t("cap_after", lang, stars=star_text(cost)))}</span>' if cost else ""
        return f'<button type="button" class="btn" data-act="{act}" id="mhd-{act}">{esc(t(act, lang))}{after}</button>'

    if exam:
        return button("reset") + f'<span class="exam-note">{esc(t("exam_on", lang))}</span>'
    return (
        button("hint", cap(progress, level.id, extra_hints=1))
        + button("demo", cap(progress, level.id, at_least=2))
        + button("reset")
        + button("reveal", cap(progress, level.id, at_least=2))
    )


def row_marks(reading: Reading, lang: str, hinted: tuple[str, int] | None = None, target=None) -> list[str]:
    """Under each slider: 'nothing to say' for a silent head, Little T's arrow, the target's ▲ after a reveal."""
    silent = set(api.silent_heads(reading))
    marks = []
    for i, head in enumerate(HEADS):
        parts = []
        if target is not None:
            parts.append(
                f'<span class="tick" style="--at:{target[i]:.2f}" title="{esc(t("target_mix", lang))} '
                f'{target[i]:.2f}">▲<span class="sr-only">{esc(t("target_mix", lang))} {target[i]:.2f}</span></span>'
            )
        if hinted is not None and hinted[0] == head:
            way = t("hint_up" if hinted[1] > 0 else "hint_down", lang)
            parts.append(f'<span class="hint-arrow">{"↑" if hinted[1] > 0 else "↓"} {esc(way)}</span>')
        if head in silent:
            parts.append(f'<span class="quiet">{esc(t("silent", lang))}</span>')
        marks.append("".join(parts))
    return marks


def won_html(level: Level, lang: str, progress: dict) -> str:
    """Beside the stars once the level is won: the next-level button and a link to the why."""
    if progress["stars"].get(level.id, 0) == 0:
        return ""
    after = level_after(level, progress)
    button = (
        f'<button type="button" class="btn primary next" data-act="next">{esc(t("next", lang))}</button>'
        if after
        else ""
    )
    why = f'<a href="#" class="why-link" data-goto=".feedback .why">{esc(t("why_title", lang))}</a>'
    return f'<div class="won-line"><b>{esc(t("won", lang))}</b> {why}{button}</div>'


def answer_open(level: Level, progress: dict) -> bool:
    """Whether the page may give the level's target numbers: won at ★★★, or the answer asked for (the goddess's demo or
    the teacher's reveal, each counted as two hints)."""
    return progress["stars"].get(level.id, 0) >= 3 or game.hints_used(progress, level.id) >= 2


def why_block(level: Level, lang: str, progress: dict | None = None) -> str:
    """The why of a level and the engine's measured numbers behind its narration, once the answer is open (won at
    ★★★, or asked for; `progress` None: it is, as for a teacher's level just made from the sliders); before that, only
    the panel line (which heads the lesson turns up, not how far) and when the why opens."""
    full = progress is None or answer_open(level, progress)
    if not full:  # what each head finds here is the level's answer, head by head: it waits for ★★★ (or the answer)
        later = f'<div class="why why-later"><b>{esc(t("why_title", lang))}</b> {esc(t("why_later", lang))}</div>'
        return later + views.panel_html(level, lang, False)
    why = views.made_why(level, lang) if level.kind == "custom" and not level.why[lang] else why_html(level, lang)
    return why + views.panel_html(level, lang, True) + views.claims_html(level, lang)


def panel_props(level: Level, lang: str, gates: list[float], progress: dict, feedback: str = "",
                exam: bool = False, code: str = "") -> dict:
    """The whole panel for a slider level, as opened (the why shows once the level has a star); `code`: a teacher
    level's share code, sent back with each slider move."""
    reading = api.level_reading(level, lang)
    view, _ = live_view(level, lang, gates, progress)
    names = [head_label(i, lang) for i in range(len(HEADS))]
    silent = set(api.silent_heads(reading))
    if not feedback and progress["stars"].get(level.id, 0) > 0:
        feedback = why_block(level, lang, progress)
    return {
        **view,
        "value": list(gates),
        "kind": level.show,
        "level": level.id,
        "lang": lang,
        "saved": game.save(progress),
        "title": esc(t("panel_label", lang)),
        "bad_box": esc(t("bad_box", lang)),
        "names": [esc(n) for n in names],
        "numlabels": [esc(t("value_of", lang, name=n)) for n in names],
        "rowcls": ["silent" if h in silent else "" for h in HEADS],
        "marks": row_marks(reading, lang),
        "dragon": dragon_svg(lang),
        "actions": buttons_html(level, lang, progress, exam),
        "next": won_html(level, lang, progress),
        "won": "",
        "feedback": feedback,
        "code": code,
    }


def sandbox_code(text: str, tlang: str) -> str:
    """What the sandbox's panel sends with each slider move: its text and language."""
    return json.dumps({"text": text, "tlang": tlang}, ensure_ascii=False)


def free_view(reading: Reading, gates: list[float], lang: str) -> dict:
    """The sandbox's live boxes: no score (there is no target), the fused output of these gates."""
    return {"gauge": f'<div class="free-note">{esc(t("sb_no_target", lang))}</div>',
            "compare": views.free_comparison(reading, gates, lang), "say": ""}


def free_panel_props(reading: Reading, lang: str, gates: list[float], text: str, tlang: str, feedback: str = "") -> dict:
    """The panel in the sandbox: live sliders over the player's text, start over, no target."""
    names = [head_label(i, lang) for i in range(len(HEADS))]
    silent = set(api.silent_heads(reading))
    reset = f'<button type="button" class="btn" data-act="reset" id="mhd-reset">{esc(t("reset", lang))}</button>'
    return {
        **free_view(reading, gates, lang),
        "value": list(gates), "kind": "free", "level": SANDBOX, "lang": lang, "saved": "",
        "title": esc(t("panel_label", lang)), "bad_box": esc(t("bad_box", lang)), "names": [esc(n) for n in names],
        "numlabels": [esc(t("value_of", lang, name=n)) for n in names],
        "rowcls": ["silent" if h in silent else "" for h in HEADS], "marks": row_marks(reading, lang),
        "dragon": dragon_svg(lang), "actions": reset, "next": "", "won": "", "feedback": feedback,
        "code": sandbox_code(text, tlang),
    }


HIDDEN = {"kind": "", "compare": "", "feedback": "", "gauge": "", "next": "", "won": "", "say": ""}  # not a slider level


# --- the live answer to a slider move (a server function: no Gradio event, no player state kept) ----------


def live(payload: dict | None) -> dict:
    """A slider moved: {level, lang, gates, saved} → the new gauge and comparison, and whether to record.

    Called by the panel's script, outside Gradio's queue; the progress comes signed from the browser, and
    nothing is saved here: when `record` is true the answer also carries the progress with this score kept (signed:
    what 'record' saves), which the script sends with its next moves, and the script fires the 'record' event,
    which saves it in the browser."""
    try:
        if not isinstance(payload, dict):
            raise ValueError("payload must be an object")
        lang = payload.get("lang")
        if lang not in LANGS:
            raise ValueError("not a language of the game")
        gates = clean_gates(payload.get("gates"))
        if payload.get("level") == SANDBOX:
            return {"level": SANDBOX, "view": free_view(sandbox_reading(payload.get("code")), gates, lang),
                    "record": False}
        level = live_level(payload.get("level"), payload.get("code"))
    except ValueError as err:
        return {"error": str(err)}
    progress = game.load(payload.get("saved")).progress
    view, improved = live_view(level, lang, gates, progress)
    answer = {"level": level.id, "view": view, "record": improved}
    if improved:  # what 'record' will save: the script scores the next moves against it at once
        answer["saved"] = game.save(recorded(level, lang, gates, progress)[0])
    return answer


def on_event_loop(fn: Callable[[dict | None], dict]) -> Callable:
    """`fn` as a coroutine function of the same name, so that Gradio awaits it on its event loop instead of handing it
    to a worker thread: a slider move's answer is well under a millisecond of work once the level is read (the
    target's side of the score and the picture's fixed parts are kept on the reading), less than the hand-over to a
    thread and back, with the GIL passed each way."""

    @functools.wraps(fn)
    async def run(payload: dict | None) -> dict:
        return fn(payload)

    return run


def sandbox_reading(code) -> Reading:
    """The sandbox text a slider move carries, read (ValueError when it is not one)."""
    data = json.loads(code) if isinstance(code, str) and len(code) < 4 * MAX_SANDBOX_CHARS else None
    if not isinstance(data, dict) or not isinstance(data.get("text"), str) or data.get("tlang") not in SANDBOX_LANGS:
        raise ValueError("not a sandbox text")
    return api.text_reading(data["text"][:MAX_SANDBOX_CHARS], data["tlang"])


def live_level(level_id, code) -> Level:
    """The slider level a slider move names: a shipped one, or a teacher's carried by its share code."""
    if level_id in all_levels() and all_levels()[level_id].sliders:
        return all_levels()[level_id]
    if teacher_levels.is_teacher_id(level_id) and isinstance(code, str):
        try:
            found = [lv for lv in teacher_levels.levels_from_code(code) if lv.id == level_id]
        except teacher_levels.TeacherLevelError as err:
            raise ValueError(str(err)) from None
        if found:
            return found[0]
    raise ValueError("not a slider level")


# --- Gradio events ------------------------------------------------------------------------------------------


def _context(state: State, saved: Saved, gates: Gates) -> tuple[Level, str, dict, list[float]] | None:
    session = session_of(state)
    level = level_of(session)
    if level is None or not level.sliders:
        return None
    try:
        g = clean_gates(gates)
    except ValueError:
        return None
    return level, session["lang"], game.load(saved).progress, g


def record(state: State, saved: Saved, gates: Gates) -> dict:
    """Save a better score (the script asks after a live answer beat the record, sending the gates that answer was
    scored on: the sliders may have moved on since); a new star is celebrated."""
    ctx = _context(state, saved, gates)
    if ctx is None:
        return {}
    level, lang, progress, g = ctx
    better = recorded(level, lang, g, progress)
    if better is None:
        return {}
    top_before = progress_props(level, lang, progress, session_of(state))
    progress, before, earned = better
    out: dict = {"saved": game.save(progress)}
    top = progress_props(level, lang, progress, session_of(state))
    if top != top_before:  # the XP (a tenth of each best) or the stars moved: most better scores change neither
        out["top"] = top
    if earned > before:  # a new star: the panel celebrates (a better score alone: the script already has `saved`)
        out["panel"] = {
            "saved": out["saved"], "won": f"won w{earned}", "next": won_html(level, lang, progress),
            "actions": buttons_html(level, lang, progress, session_of(state)["exam"]),
            **({"feedback": why_block(level, lang, progress)} if before == 0 or earned == 3 else {}),
        }
    return out


def recorded(level: Level, lang: str, gates: list[float], progress: dict) -> tuple[dict, int, int] | None:
    """If these gates beat the player's record on the level (more stars, or a better score to 2 decimals): the
    progress with the score kept, the stars before and the stars now; else None."""
    s = level_score(level, lang, gates)
    earned = stars(s, game.hints_used(progress, level.id))
    before = progress["stars"].get(level.id, 0)
    if earned <= before and game.kept_score(s) <= progress["best"].get(level.id, -1.0):
        return None
    return game.record(progress, level.id, s, earned), before, earned


def _answer(level: Level, lang: str, gates: list[float], progress: dict, coach: str = "", exam: bool = False,
            **panel) -> dict:
    """A button's answer: the panel's view for these gates and progress, a line of feedback, progress saved."""
    view, _ = live_view(level, lang, gates, progress)
    feedback = coach_html(coach) + (why_block(level, lang, progress) if progress["stars"].get(level.id, 0) > 0 else "")
    saved = game.save(progress)
    props = {**view, "saved": saved, "actions": buttons_html(level, lang, progress, exam), "feedback": feedback,
             "ack": time.time_ns(), **panel}
    return {"panel": props, "saved": saved}


def hint(state: State, saved: Saved, gates: Gates) -> dict:
    """Little T reads the gradient: which head to move and which way (costs one star of the level's best)."""
    ctx = _context(state, saved, gates)
    if ctx is None or session_of(state)["exam"]:
        return {}
    level, lang, progress, g = ctx
    advice = api.hint_level(level, g, lang)
    reading = api.level_reading(level, lang)
    if advice["done"]:
        return _answer(level, lang, g, progress, t("hint_done", lang), marks=row_marks(reading, lang))
    progress = game.use_hint(progress, level.id)
    way = t("hint_up" if advice["direction"] > 0 else "hint_down", lang)
    coach = t("hint_says", lang, head=head_name(advice["head"], lang), way=way)
    marks = row_marks(reading, lang, hinted=(advice["head"], advice["direction"]))
    return _answer(level, lang, g, progress, coach, marks=marks)


def demo(state: State, saved: Saved, gates: Gates) -> Iterator[dict]:
    """The goddess's demo: real gradient ascent from the player's gates, one step a frame, not scored; then the
    sliders go back where the player left them, and the level is marked as shown (it counts as two hints)."""
    ctx = _context(state, saved, gates)
    if ctx is None or session_of(state)["exam"]:
        return
    level, lang, progress, g = ctx
    reading = api.level_reading(level, lang)
    progress = game.mark_shown(game.use_hints_up_to(progress, level.id, 2), level.id)
    path = ascent_path(reading, g, level.target_for(lang), steps=40, goal=99.0)
    coach = coach_html(t("demo_says", lang))
    for step_gates, step_score in path:
        gauge = gauge_html(step_score, stars(step_score), None, cap(progress, level.id), lang, demo=True)
        compare = views.comparison(level, reading, step_gates, lang, exact=True)  # the demo shows the answer
        yield {
            "panel": {"value": [round(v, 2) for v in step_gates], "gauge": gauge, "compare": compare, "feedback": coach}
        }
        time.sleep(DEMO_DELAY_S)
    out = _answer(level, lang, g, progress, t("demo_done", lang), value=g, marks=row_marks(reading, lang))
    out["top"] = progress_props(level, lang, progress, session_of(state))
    yield out


def reveal(state: State, saved: Saved, gates: Gates) -> dict:
    """The teacher's reveal: the sliders move to the target (its weights also as ▲ under them) and the why shows;
    caps the stars like two hints. Not in an exam."""
    ctx = _context(state, saved, gates)
    if ctx is None or session_of(state)["exam"]:
        return {}
    level, lang, progress, _ = ctx
    progress = game.use_hints_up_to(progress, level.id, 2)
    target = [round(v, 2) for v in level.target_for(lang)]
    weights = "  ".join(f"{head_name(h, lang)} {v:g}" for h, v in zip(HEADS, target, strict=True))
    marks = row_marks(api.level_reading(level, lang), lang, target=target)
    out = _answer(level, lang, target, progress, value=target, marks=marks)
    out["panel"]["feedback"] = coach_html(
        t("reveal_says", lang) + weights + "  " + t("reveal_marks", lang)
    ) + why_block(level, lang, progress)
    return out


def reset(state: State, saved: Saved, gates: Gates) -> dict:
    """Start over: every slider back at 0.5 (the level's record is kept); in the sandbox too."""
    session = session_of(state)
    if session["level"] == SANDBOX:
        try:
            reading = api.text_reading(session["text"], session["tlang"])
        except ValueError:
            return {}
        view = free_view(reading, START_GATES, session["lang"])
        return {"panel": {**view, "value": list(START_GATES), "ack": time.time_ns(),
                          "feedback": coach_html(t("reset_says", session["lang"]))}}
    ctx = _context(state, saved, START_GATES)
    if ctx is None:
        return {}
    level, lang, progress, g = ctx
    marks = row_marks(api.level_reading(level, lang), lang)
    return _answer(level, lang, g, progress, t("reset_says", lang), exam=session["exam"], value=g, marks=marks)

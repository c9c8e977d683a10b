"""The whole page for one level and player: what every component shows when a level opens."""

import time

from dragon import api, game
from dragon.levels.loader import Level
from ui.rooms import match as quiz
from ui.rooms import registry as rooms
from ui.rooms import slider_views as views
from ui.rooms import sliders as play
from ui.rooms.lab import HIDDEN
from ui.session import START_GATES
from ui.strings import t
from ui.teacher.view import teacher_props
from ui.top import top_props
from ui.widgets.draw import esc

SANDBOX_HIDDEN = {"body": "", "label": ""}  # the sandbox's component, when a level is on screen


def codes_props(
    lang: str, message: str = "", code: str = "", opened: bool | None = False, ask: dict | None = None
) -> dict:
    """The progress-code box in `lang`, with a message beside its buttons. `opened` None: open or shut as the player
    left it. `ask` {here, there, pending}: the question before a code replaces other progress — what each holds, and
    the code the 'replace' button imports."""
    out = {
        "title": esc(t("progress", lang)),
        "help": esc(t("progress_help", lang)),
        "code_label": esc(t("code", lang)),
        "export_label": esc(t("export", lang)),
        "import_label": esc(t("import", lang)),
        "message": esc(message),
        "open": opened,
        "max_code": game.MAX_CODE_CHARS,  # the script sends no more of a pasted text than one character over it
        "ask": bool(ask),
        "here": esc(ask["here"]) if ask else "",
        "there": esc(ask["there"]) if ask else "",
        "pending": ask["pending"] if ask else "",
        "replace_label": esc(t("ci_replace", lang)),
        "keep_label": esc(t("ci_keep", lang)),
    }
    if opened is None:
        del out["open"]
    if code:
        out["code"] = code
    return out


def hidden_parts() -> dict:
    """What the levels' own components show when the sandbox is on screen: nothing."""
    return {"quiz": {"body": ""}, "lab": dict(HIDDEN)}


def page(
    level: Level,
    lang: str,
    progress: dict,
    notice: str = "",
    gates: list[float] | None = None,
    attempt: dict | None = None,
    keep: dict | None = None,
) -> dict:
    """Everything shown for a level: the top, then the slider panel and its maps, chapter 1's panel, or a lab
    level's room (`attempt`: the player's attempt there, kept by a language switch; `keep`: what the session carries
    from level to level — the exam switch, a teacher's pack, the sandbox's text)."""
    session: dict = {**(keep or {}), "level": level.id, "lang": lang}
    out = {"session": session, "saved": game.save(progress), "top": top_props(level, lang, progress, notice, session)}
    out["panel"], out["maps"], out["quiz"], out["lab"] = dict(play.HIDDEN), "", {"body": ""}, dict(HIDDEN)
    out["sandbox"], out["teacher"] = dict(SANDBOX_HIDDEN), teacher_props(level, lang, session)
    if level.sliders:
        code = session.get("custom", "") if level.kind == "custom" else ""
        out["panel"] = play.panel_props(level, lang, gates or START_GATES, progress, exam=bool(session.get("exam")),
                                        code=code)
        out["panel"]["opened"] = time.time_ns()  # opened: the sliders are the server's, whatever the page had
        out["maps"] = views.maps_html(api.level_reading(level, lang), lang)
    elif level.lab:
        if attempt and attempt.get("level") == level.id:
            session["lab"] = attempt
        out["lab"] = rooms.lab_props(level, lang, progress, session.get("lab"), seed=session.get("seed"))
    else:
        out["quiz"] = quiz.quiz_props(level, lang, progress)
    return out

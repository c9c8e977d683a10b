"""The teachers' box's events: a worksheet to print, the maps as PNG, a report of this play, and opening a teacher's
level or pack from a file or pasted text (checked as a shipped level is)."""

import datetime
import time

from dragon import api, game
from dragon.levels import teacher as teacher_levels
from dragon.scoring import score, stars
from ui.page import page
from ui.session import SANDBOX, EventData, Gates, Saved, State, clean_gates, level_of, session_of
from ui.strings import t
from ui.teacher import exports, report, worksheet
from ui.teacher.view import FILES, errors_html, reasons, repair_html, said_error, teacher_props
from ui.widgets.draw import esc


def _file(name: str, kind: str, content: str, mime: str) -> dict:
    return {"file": {"name": name, "kind": kind, "content": content, "mime": mime, "nonce": time.time_ns()},
            "open": True, "message": ""}


def make_file(state: State, saved: Saved, gates: Gates, data: EventData) -> dict:
    """A worksheet (to print), the maps as PNG (the browser draws the SVG), or a report of this play."""
    session = session_of(state)
    lang, level = session["lang"], level_of(session)
    what = data.get("what") if isinstance(data, dict) else None
    if what not in FILES or (level is None and what != "png") or session["exam"] or session["class"]:
        return {}
    try:
        if what == "png":
            if level is None:
                reading, title = api.text_reading(session["text"], session["tlang"]), t("sb_title", lang)
            else:
                reading, title = api.level_reading(level, lang), level.title[lang]
            svg = exports.maps_figure_svg(reading, lang, title)
            name = f"maps-{level.id if level else SANDBOX}.png"
            return {"teacher": _file(name, "png", svg, "image/svg+xml")}
        if what in ("worksheet", "key"):
            sheet = worksheet.worksheet_html(level, lang, answers=what == "key")
            return {"teacher": _file(f"worksheet-{level.id}{'-key' if what == 'key' else ''}.html", "print", sheet,
                                     "text/html")}
        g = clean_gates(gates)
        progress = game.load(saved).progress
        s = score(api.level_reading(level, lang), g, level.target_for(lang))
        earned = stars(s, game.hints_used(progress, level.id))
        when = datetime.datetime.now(datetime.UTC).astimezone()
        sheet = report.report_html(level, lang, g, s, earned, when)
        return {"teacher": _file(f"report-{level.id}.html", "download", sheet, "text/html")}
    except ValueError as err:
        return {"teacher": {"message": errors_html(t("tb_file_error", lang, why=""), [str(err)]), "open": True}}


def open_source(state: State, saved: Saved, data: EventData) -> dict:
    """A pasted or uploaded level (or pack): checked as a shipped level is; good, it opens with its share link in
    the session; refused, the box lists every problem and nothing else changes."""
    session = session_of(state)
    lang = session["lang"]
    source = data.get("source") if isinstance(data, dict) else None
    repair = ""
    try:
        checked = teacher_levels.check_source(source)
        bad = [(where, c) for where, c in checked if not c.ok]
        if bad:
            repair = repair_html([c for _, c in checked], lang, session)
            raise teacher_levels.TeacherLevelError([
                (t("tb_level_n", lang, n=where.removeprefix("level ")) if where else "") + e
                for where, c in bad for e in reasons(c, lang)])
        levels = teacher_levels.read_pack(source)
        code = teacher_levels.share_code(levels)
    except teacher_levels.TeacherLevelError as err:
        here = level_of(session)
        message = errors_html(t("tb_refused", lang), [said_error(e, lang) for e in err.errors]) + repair
        props = teacher_props(here, lang, session, message, opened=True)
        return {"teacher": {"message": props["message"], "open": True}}
    keep = {"custom": code, **({"exam": True} if session["exam"] else {})}
    progress = game.load(saved).progress
    notice = t("tb_opened", lang, n=len(levels))
    out = page(levels[0], lang, progress, notice, keep=keep)
    out["teacher"] = teacher_props(levels[0], lang, out["session"], esc(notice), opened=True)
    return out

"""Page-level events: the first view, choosing a level, the next level, the language switch, progress codes.

Each takes the player's state in and returns a dict of named outputs (state included)."""

import json

from dragon import game
from dragon.levels import LANGS, all_levels, get_level

from .page import codes_props, page
from .session import EventData, Gates, Saved, State, clean_gates, level_after, next_level_id, session_of
from .text import t
from .top import top_props


def boot(boot_json: str | None, saved: Saved) -> dict:
    """First view: language, level and projector mode come from the link (or the browser's memory)."""
    try:
        boot = json.loads(boot_json) if isinstance(boot_json, str) and len(boot_json) < 2000 else {}
    except ValueError:
        boot = {}
    boot = boot if isinstance(boot, dict) else {}
    lang = boot.get("lang") if boot.get("lang") in LANGS else "zh"
    loaded = game.load(saved)
    unreadable = boot.get("stored") is True and not saved  # the browser kept something Gradio could not read back
    notice = t("damaged", lang) if loaded.notice or unreadable else ""
    wanted = boot.get("level")
    if isinstance(wanted, str) and wanted:
        if wanted in all_levels():  # a teacher's link opens any level
            return {**page(get_level(wanted), lang, loaded.progress, notice), "codes": codes_props(lang)}
        notice = (notice + " " if notice else "") + t("unknown_level", lang, id=wanted[:20])
    view = page(get_level(next_level_id(loaded.progress)), lang, loaded.progress, notice)
    return {**view, "codes": codes_props(lang)}


def choose_level(state: State, saved: Saved, data: EventData) -> dict:
    """The level picker (event data {level}); a locked chapter is refused with a notice."""
    session = session_of(state)
    lang, progress = session["lang"], game.load(saved).progress
    current = get_level(session["level"])
    level_id = data.get("level") if isinstance(data, dict) else None
    if not isinstance(level_id, str) or level_id not in all_levels():
        return {"top": top_props(current, lang, progress, t("unknown_level", lang, id=str(level_id)[:20]))}
    level = get_level(level_id)
    if level.chapter not in game.unlocked_chapters(progress) and progress["stars"].get(level.id, 0) == 0:
        return {"top": top_props(current, lang, progress, t("locked_level", lang))}  # nothing else changes
    return page(level, lang, progress)


def next_level(state: State, saved: Saved) -> dict:
    """The 'next level' button of a won level."""
    session = session_of(state)
    progress = game.load(saved).progress
    after = level_after(get_level(session["level"]), progress)
    return page(get_level(after), session["lang"], progress) if after else {}


def switch_lang(state: State, saved: Saved, gates: Gates, data: EventData) -> dict:
    """The language switch (event data {lang}): the same level, the player's sliders kept."""
    session = session_of(state)
    lang = data.get("lang") if isinstance(data, dict) else None
    if lang not in LANGS:
        return {}
    level = get_level(session["level"])
    try:
        kept = clean_gates(gates) if level.sliders else None
    except ValueError:
        kept = None
    lab = state.get("lab") if isinstance(state, dict) else None  # a chapter-3 lab keeps what was done there
    return {**page(level, lang, game.load(saved).progress, gates=kept, attempt=lab), "codes": codes_props(lang)}


def export_code(state: State, saved: Saved) -> dict:
    lang = session_of(state)["lang"]
    code = game.export_code(game.load(saved).progress)
    return {"codes": codes_props(lang, t("exported", lang), code=code, opened=True)}


def import_code(state: State, saved: Saved, data: EventData) -> dict:
    """A pasted progress code (event data {code}): the progress replaces this browser's; a bad code changes nothing."""
    session = session_of(state)
    lang = session["lang"]
    code = data.get("code") if isinstance(data, dict) else None
    try:
        progress = game.import_code(code)
    except ValueError:
        return {"codes": codes_props(lang, t("bad_code", lang), opened=True)}
    view = page(get_level(session["level"]), lang, progress, t("imported", lang))
    return {**view, "codes": codes_props(lang, t("imported", lang), opened=True)}

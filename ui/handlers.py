"""Page-level events: the first view, choosing a level, the next level, the language switch, progress codes.

Each takes the player's state in and returns a dict of named outputs (state included)."""

import json

from dragon import game
from dragon.checks import mended
from dragon.levels import teacher as teacher_levels
from dragon.levels.loader import LANGS, all_levels, get_level, load_levels
from ui.live_class import link as class_link
from ui.page import codes_props, page
from ui.rooms import slider_views as views
from ui.session import (
    MAX_CLASS_TOKEN,
    MAX_SANDBOX_CHARS,
    SANDBOX,
    SANDBOX_LANGS,
    EventData,
    Gates,
    Saved,
    State,
    carried,
    clean_gates,
    level_after,
    level_of,
    next_level_id,
    pack_of,
    session_of,
)
from ui.strings import t
from ui.teacher.sandbox import sandbox_page
from ui.top import top_props

MAX_BOOT = 12_000  # what the page's script sends at the start: the link's parameters (a share code among them)


def boot(boot_json: str | None, saved: Saved) -> dict:
    """First view: language, level, projector and exam mode, a teacher's level or the sandbox come from the link
    (or the browser's memory); a link that cannot be opened says why, and the game opens as usual. The progress-code
    box is left as the player has it: on a slow connection they may open it before this answer lands."""
    try:
        boot = json.loads(boot_json) if isinstance(boot_json, str) and len(boot_json) < MAX_BOOT else {}
    except ValueError:
        boot = {}
    boot = mended(boot) if isinstance(boot, dict) else {}  # a link's text cut inside an emoji: U+FFFD, no failure
    lang = boot.get("lang") if boot.get("lang") in LANGS else "zh"
    loaded = game.load(saved)
    unreadable = boot.get("stored") is True and not saved  # the browser kept something Gradio could not read back
    notices = [t("damaged", lang)] if loaded.notice or unreadable else []
    keep: dict = {"exam": True} if boot.get("exam") is True else {}
    if isinstance(boot.get("classplay"), str) and 0 < len(boot["classplay"]) <= MAX_CLASS_TOKEN:
        keep["class"] = boot["classplay"]  # a live class's student: the server's results count for the class
        # whether it is an exam (and an exam's fresh seed) is the class's round's, never the link's
        rules = class_link.round_rules(keep["class"])
        keep.pop("exam", None)
        keep.update({"exam": True} if rules["exam"] else {}, **({"seed": rules["seed"]} if rules["seed"] else {}))
    wanted = boot.get("level") if isinstance(boot.get("level"), str) else ""
    custom = boot.get("custom") if isinstance(boot.get("custom"), str) else ""
    if custom:
        try:
            pack = teacher_levels.levels_from_code(custom)
        except teacher_levels.TeacherLevelError as err:
            notices.append(t("tb_bad_link", lang, why=err.errors[0].removeprefix("share link: ")))
        else:
            level = next((lv for lv in pack if lv.id == wanted), pack[0])
            view = page(level, lang, loaded.progress, " ".join(notices), keep={**keep, "custom": custom})
            return {**view, "codes": codes_props(lang, opened=None)}
    if boot.get("sandbox") is True or wanted == SANDBOX:
        text = boot.get("text") if isinstance(boot.get("text"), str) else ""
        tlang = boot.get("tlang") if boot.get("tlang") in SANDBOX_LANGS else "auto"
        keep.update(text=text.strip()[:MAX_SANDBOX_CHARS], tlang=tlang)
        return {**sandbox_page(lang, loaded.progress, keep, " ".join(notices)), "codes": codes_props(lang, opened=None)}
    if wanted:
        if wanted in all_levels():  # a teacher's link opens any level
            view = page(get_level(wanted), lang, loaded.progress, " ".join(notices), keep=keep)
            return {**view, "codes": codes_props(lang, opened=None)}
        notices.append(t("unknown_level", lang, id=wanted[:20]))
    view = page(get_level(next_level_id(loaded.progress)), lang, loaded.progress, " ".join(notices), keep=keep)
    return {**view, "codes": codes_props(lang, opened=None)}


def with_codes(view: dict, lang: str) -> dict:
    """A level opened: the progress-code box closes with no message (what it said belonged to the last one)."""
    return {**view, "codes": codes_props(lang)}


def choose_level(state: State, saved: Saved, data: EventData) -> dict:
    """The level picker (event data {level}): a level, the sandbox, or a teacher's level of this session's pack;
    a locked chapter is refused with a notice."""
    session = session_of(state)
    lang, progress = session["lang"], game.load(saved).progress
    level_id = data.get("level") if isinstance(data, dict) else None
    if level_id == SANDBOX:
        return with_codes(sandbox_page(lang, progress, carried(session)), lang)
    pack = {lv.id: lv for lv in pack_of(session["custom"])}
    if level_id in pack:
        return with_codes(page(pack[level_id], lang, progress, keep=carried(session)), lang)
    current = level_of(session) or get_level(next_level_id(progress))
    if not isinstance(level_id, str) or level_id not in all_levels():
        notice = t("unknown_level", lang, id=str(level_id)[:20])
        return {"top": top_props(current, lang, progress, notice, session)}
    level = get_level(level_id)
    reachable = level.id == views.next_from(current.id, progress)  # where this level's *Next* leads: it opens too
    if level.chapter not in game.unlocked_chapters(progress) and progress["stars"].get(level.id, 0) == 0 and not reachable:
        return {"top": top_props(current, lang, progress, t("locked_level", lang), session)}  # nothing else changes
    return with_codes(page(level, lang, progress, keep=carried(session)), lang)


def next_level(state: State, saved: Saved) -> dict:
    """The 'next level' button of a won level (a teacher's level leads to the next of its pack)."""
    session = session_of(state)
    progress = game.load(saved).progress
    level = level_of(session)
    if level is None:
        return {}
    after = level_after(level, progress)
    if after is None:
        return {}
    pack = {lv.id: lv for lv in pack_of(session["custom"])}
    view = page(pack.get(after) or get_level(after), session["lang"], progress, keep=carried(session))
    return with_codes(view, session["lang"])


def switch_lang(state: State, saved: Saved, gates: Gates, data: EventData) -> dict:
    """The language switch (event data {lang}): the same level from its own start (its target is another in the other
    language), or the sandbox with the player's sliders kept."""
    session = session_of(state)
    lang = data.get("lang") if isinstance(data, dict) else None
    if lang not in LANGS:
        return {}
    level = level_of(session)
    try:
        kept = clean_gates(gates) if level is None else None
    except ValueError:
        kept = None
    progress = game.load(saved).progress
    if level is None:
        return {**sandbox_page(lang, progress, carried(session), gates=kept), "codes": codes_props(lang)}
    lab = state.get("lab") if isinstance(state, dict) else None  # a chapter-3 lab keeps what was done there
    view = page(level, lang, progress, gates=kept, attempt=lab, keep=carried(session))
    return {**view, "codes": codes_props(lang)}


def export_code(state: State, saved: Saved) -> dict:
    lang = session_of(state)["lang"]
    code = game.export_code(game.load(saved).progress)
    return {"codes": codes_props(lang, t("exported", lang), code=code, opened=True)}


def holdings(progress: dict, lang: str, key: str) -> str:
    """What a progress holds, in words: the game's stars (as the header counts them), levels played, XP."""
    ids = {lv.id for c in load_levels() for lv in c.levels}
    stars = sum(v for k, v in progress["stars"].items() if k in ids)
    played = len(set(progress["stars"]) | set(progress["best"]))
    return t(key, lang, stars=stars, levels=played, xp=game.xp(progress))


def import_code(state: State, saved: Saved, data: EventData) -> dict:
    """A pasted progress code (event data {code, answer}). Into a browser with no progress yet, or the same, it goes at
    once; over other progress only once the player answers the question (what each holds) with "replace"; "keep"
    changes nothing and says so; a bad code changes nothing."""
    session = session_of(state)
    lang = session["lang"]
    data = data if isinstance(data, dict) else {}
    answer = data.get("answer")
    if answer == "keep":
        return {"codes": codes_props(lang, t("ci_kept", lang), opened=True)}
    try:
        progress = game.import_code(data.get("code"))
    except ValueError:
        return {"codes": codes_props(lang, t("bad_code", lang), opened=True)}
    mine = game.load(saved).progress
    if answer != "replace" and mine not in (game.new_progress(), progress):
        ask = {"here": holdings(mine, lang, "ci_here"), "there": holdings(progress, lang, "ci_code"),
               "pending": game.export_code(progress)}
        return {"codes": codes_props(lang, t("ci_question", lang), opened=True, ask=ask)}
    level = level_of(session)
    if level is None:
        view = sandbox_page(lang, progress, carried(session), t("imported", lang))
    else:
        view = page(level, lang, progress, t("imported", lang), keep=carried(session))
    return {**view, "codes": codes_props(lang, t("imported", lang), opened=True)}

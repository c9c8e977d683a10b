"""The player's session (level and language) and where the game goes next."""

from dragon import game
from dragon.config import HEADS
from dragon.lessons.growing import PUBLIC_SEEDS, SEEDS
from dragon.levels import teacher as teacher_levels
from dragon.levels.loader import LANGS, Level, all_levels, load_levels
from dragon.scoring import as_gates

START_GATES = [0.5] * len(HEADS)

SANDBOX = "sandbox"  # the sandbox's place in the session and the level picker: any text, no target
SANDBOX_LANGS = ("auto", "zh", "en")
# The link's parameters, declared once: the page's first script reads them from this table (app.py puts it in the
# page as window.__dragonLink) and cuts each text at `chars`; `flag`: "1" or nothing; `kept`: the page's link names
# it for what is on screen (ui/top.py link_of writes it, assets/ui/top.js keeps the address bar in step). `class` and
# `teach` lead to the live class's pages (ui/live_class/routes.py); `classplay` frames the game in one.
LINK_PARAMS: dict[str, dict] = {
    "level": {"chars": 20, "kept": True},  # the level on screen: a shipped id, a teacher level's, or the sandbox
    "lang": {"chars": 2},  # zh or en (the page's language, kept apart: every link carries it)
    "projector": {"flag": True},  # projector mode: large type for a classroom screen
    "custom": {"chars": 8000, "kept": True},  # a teacher's share code (at most MAX_CODE_CHARS, with room to say so)
    "exam": {"flag": True, "kept": True},  # a teacher's exam link: no hints, no reveal
    "sandbox": {"flag": True, "kept": True},  # the sandbox
    "text": {"chars": 800, "kept": True},  # the sandbox's text (the dragon reads at most 128 tokens; the page says so)
    "tlang": {"chars": 4, "kept": True},  # the sandbox's reading: auto, zh or en
    "classplay": {"flag": True},  # a live class's everyone round frames the game (the student's token: local storage)
    "class": {"chars": 12},  # a class code: /?class=CODE opens the join page
    "teach": {"flag": True},  # /?teach=1 opens the teacher's class page
}
MAX_CLASS_TOKEN = 100  # a live class's student token (43 characters), carried by a session the class page frames
MAX_SANDBOX_CHARS = LINK_PARAMS["text"]["chars"]  # the sandbox's text box

# What the handlers receive from the page (checked, never trusted):
State = dict | None  # the session (gr.State): {"level", "lang"}, and "exam", "custom" (a teacher's share code),
# "text" / "tlang" (the sandbox's text), "lab" (a lab level's attempt), "class" (a live class's student token)
Saved = str | None  # the signed progress the browser keeps (gr.BrowserState)
Gates = list  # the panel's value: eight numbers, as the sliders show them
EventData = dict | None  # what a component's script sent with its event


def clean_gates(values: Gates) -> list[float]:
    """Eight gates checked (ValueError if not eight numbers in [0, 1]) and rounded as the sliders show them."""
    return [round(float(v), 4) for v in as_gates(values).tolist()]


def first_level_id() -> str:
    return load_levels()[0].levels[0].id


def pack_of(code) -> tuple[Level, ...]:
    """The teacher's levels a share code carries (none when there is no code or it is not a good one)."""
    if not isinstance(code, str) or not code:
        return ()
    try:
        return teacher_levels.levels_from_code(code)
    except teacher_levels.TeacherLevelError:
        return ()


def session_of(state: State) -> dict:
    """The per-player session: level (a shipped id, a teacher level of its share code, or the sandbox), language,
    the exam switch, the teacher's share code and the sandbox's text; anything odd falls back to the first level."""
    state = state if isinstance(state, dict) else {}
    lang = state.get("lang") if state.get("lang") in LANGS else "zh"
    custom = state.get("custom") if isinstance(state.get("custom"), str) else ""
    pack = pack_of(custom)
    level = state.get("level")
    if not (level in all_levels() or level == SANDBOX or any(lv.id == level for lv in pack)):
        level = first_level_id()
    text = state.get("text") if isinstance(state.get("text"), str) else ""
    tlang = state.get("tlang") if state.get("tlang") in SANDBOX_LANGS else "auto"
    token = state.get("class") if isinstance(state.get("class"), str) else ""
    seed = state.get("seed")  # a class exam's fresh seed for a seeded lab (set by the server's round, never a link)
    seed = seed if isinstance(seed, int) and not isinstance(seed, bool) and PUBLIC_SEEDS <= seed < SEEDS else None
    return {"level": level, "lang": lang, "exam": state.get("exam") is True, "custom": custom if pack else "",
            "text": text[:MAX_SANDBOX_CHARS], "tlang": tlang, "class": token[:MAX_CLASS_TOKEN], "seed": seed}


def carried(session: dict) -> dict:
    """What a session keeps from level to level: the exam switch, the teacher's pack, the sandbox's text."""
    keep = {k: session[k] for k in ("exam", "custom", "text", "class", "seed") if session.get(k)}
    return {**keep, "tlang": session["tlang"]} if keep.get("text") else keep


def level_of(session: dict) -> Level | None:
    """The level a (checked) session is on: a shipped level or a teacher's; None in the sandbox."""
    if session["level"] == SANDBOX:
        return None
    if session["level"] in all_levels():
        return all_levels()[session["level"]]
    return next(lv for lv in pack_of(session["custom"]) if lv.id == session["level"])


def open_levels(progress: dict) -> list[Level]:
    opened = game.unlocked_chapters(progress)
    return [lv for c in load_levels() if c.number in opened for lv in c.levels]


def next_level_id(progress: dict) -> str:
    """The first open level without a star, else the last open level."""
    levels = open_levels(progress)
    return next((lv.id for lv in levels if progress["stars"].get(lv.id, 0) == 0), levels[-1].id)


def level_after(level: Level, progress: dict) -> str | None:
    """Where 'next level' leads from a won level: the following level if it is open (or if this level was opened
    by a teacher's link beyond the player's chapters: the class goes on in order), else the first open level still
    without a star; None at the very end. A teacher's level leads to the next level of its pack."""
    if level.kind == "custom":
        return level.after
    order = [lv.id for c in load_levels() for lv in c.levels]
    opened = {lv.id for lv in open_levels(progress)}
    following = order[order.index(level.id) + 1 :]
    if following and (following[0] in opened or level.chapter not in game.unlocked_chapters(progress)):
        return following[0]
    return next((i for i in order if i in opened and i != level.id and progress["stars"].get(i, 0) == 0), None)

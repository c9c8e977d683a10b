"""The player's session (level and language) and where the game goes next."""

from dragon import game
from dragon.config import HEADS
from dragon.levels import LANGS, Level, all_levels, load_levels
from dragon.scoring import as_gates

START_GATES = [0.5] * len(HEADS)

# What the handlers receive from the page (checked, never trusted):
State = dict | None  # the session (gr.State): {"level", "lang"}
Saved = str | None  # the signed progress the browser keeps (gr.BrowserState)
Gates = list  # the panel's value: eight numbers, as the sliders show them
EventData = dict | None  # what a component's script sent with its event


def clean_gates(values: Gates) -> list[float]:
    """Eight gates checked (ValueError if not eight numbers in [0, 1]) and rounded as the sliders show them."""
    return [round(float(v), 4) for v in as_gates(values).tolist()]


def first_level_id() -> str:
    return load_levels()[0].levels[0].id


def session_of(state: State) -> dict:
    """The per-player session (level and language); anything odd falls back to the first level in Chinese."""
    state = state if isinstance(state, dict) else {}
    level = state.get("level") if state.get("level") in all_levels() else first_level_id()
    lang = state.get("lang") if state.get("lang") in LANGS else "zh"
    return {"level": level, "lang": lang}


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
    without a star; None at the very end."""
    order = [lv.id for c in load_levels() for lv in c.levels]
    opened = {lv.id for lv in open_levels(progress)}
    following = order[order.index(level.id) + 1 :]
    if following and (following[0] in opened or level.chapter not in game.unlocked_chapters(progress)):
        return following[0]
    return next((i for i in order if i in opened and i != level.id and progress["stars"].get(i, 0) == 0), None)

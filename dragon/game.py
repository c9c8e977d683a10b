"""A player's progress: one declarative table of fields, pure updates, validation and export codes."""

import base64
import contextlib
import contextvars
import hashlib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from dragon.lessons.fusion import KEEP_EDGES, REACH_EDGES
from dragon.lessons.head_math import SHARE_EDGES
from dragon.levels.loader import load_levels
from dragon.levels.teacher import is_teacher_id
from dragon.margins import SHARE_MARGIN, bucket

MAX_TEACHER_LEVELS = 100  # results kept per table for teachers' levels (their ids are hashes of the level itself)

VERSION = 1
SALT = "multi-head-dragon/progress"  # integrity check against edits and corruption (not a secret)

# The game-state table: field -> (type, default, meaning). Everything else (XP, unlocks) is derived.
FIELDS: dict[str, tuple[type, object, str]] = {
    "version": (int, VERSION, "format version"),
    "stars": (dict, {}, "level id -> best stars earned, 0-3"),
    "best": (dict, {}, "level id -> best score, 0-100"),
    "hints": (dict, {}, "level id -> hints used on the current attempt"),
    "shown": (dict, {}, "level id -> 1 once the goddess has shown the way there (her demo)"),
}
OPTIONAL = {"shown"}  # added after the first release: saves without it still load
# (field, lowest, highest, type) of each table
TABLES = (("stars", 0, 3, int), ("best", 0, 100, float), ("hints", 0, 99, int), ("shown", 1, 1, int))


def new_progress() -> dict:
    """A fresh player's progress: every field at its default."""
    return {
        name: (default.copy() if isinstance(default, dict) else default) for name, (_, default, _) in FIELDS.items()
    }


def _signature(payload: dict) -> str:
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256((SALT + canonical).encode("utf-8")).hexdigest()[:16]


def sign(progress: dict) -> dict:
    """What is saved in the browser: the fields plus a signature over them."""
    payload = {k: progress[k] for k in FIELDS}
    return {**payload, "sig": _signature(payload)}


def save(progress: dict) -> str:
    """The signed progress as one JSON string (what the browser keeps)."""
    return json.dumps(sign(progress), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Loaded:
    progress: dict
    notice: str | None  # set when the saved value was damaged and progress was reset


def _valid(payload: dict, level_ids: set[str]) -> dict | None:
    """The cleaned fields, or None when any is out of shape (unknown level ids are dropped)."""
    if payload.get("version") != VERSION:
        return None
    out = new_progress()
    for name, lo, hi, kind in TABLES:
        teacher = 0
        table = payload.get(name, {} if name in OPTIONAL else None)
        if not isinstance(table, dict):
            return None
        for level_id, value in table.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not lo <= value <= hi:
                return None
            if kind is int and value != int(value):
                return None
            if level_id in level_ids:
                out[name][level_id] = kind(value)
            elif is_teacher_id(level_id) and teacher < MAX_TEACHER_LEVELS:
                teacher += 1
                out[name][level_id] = kind(value)
    return out


def load(saved, level_ids: set[str] | None = None) -> Loaded:
    """Progress from a saved browser value; anything damaged or edited resets, with a notice."""
    if saved in (None, "", {}):
        return Loaded(new_progress(), None)
    ids = level_ids if level_ids is not None else {lv.id for c in load_levels() for lv in c.levels}
    if isinstance(saved, str):
        try:
            saved = json.loads(saved)
        except ValueError:
            saved = None
    if isinstance(saved, dict) and saved.get("sig") == _signature(
        {k: saved.get(k) for k in FIELDS if k in saved or k not in OPTIONAL}
    ):
        cleaned = _valid(saved, ids)
        if cleaned is not None:
            return Loaded(cleaned, None)
    return Loaded(new_progress(), "damaged")


class Listener(Protocol):
    """Who hears of a session's results and hints (a live class's student: the class counts them,
    ui/live_class/link.py)."""

    def result(self, level_id: str, score: float, stars: int) -> None: ...

    def hint(self, level_id: str) -> None: ...


# Who hears of each result the server scores and each hint it gives, in the event being answered
RESULTS_TO: contextvars.ContextVar[Listener | None] = contextvars.ContextVar("results_to", default=None)


@contextlib.contextmanager
def results_to(listener: Listener | None) -> Iterator[None]:
    """Within the block, record() also tells `listener` of each result (level id, score, stars), use_hint() of each
    hint."""
    token = RESULTS_TO.set(listener)
    try:
        yield
    finally:
        RESULTS_TO.reset(token)


ATTEMPT_HINTS: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("attempt_hints", default=None)


@contextlib.contextmanager
def attempt_hints(start: int) -> Iterator[list[int]]:
    """Within the block, use_hint() also counts into the attempt's own hints (from `start`: those it used before):
    a listener caps a result by the hints used *before* this attempt, as the game's own cap does (a lab's answers
    shown on this attempt cap only the next one)."""
    counter = [max(0, int(start))]
    token = ATTEMPT_HINTS.set(counter)
    try:
        yield counter
    finally:
        ATTEMPT_HINTS.reset(token)


def own_hints() -> int:
    """The hints the attempt in progress used itself (0 outside an attempt_hints block)."""
    counter = ATTEMPT_HINTS.get()
    return counter[0] if counter else 0


def record(progress: dict, level_id: str, score: float, stars: int) -> dict:
    """A new progress dict with this result kept if it beats the best so far (and the result told to RESULTS_TO)."""
    listener = RESULTS_TO.get()
    if listener is not None:
        listener.result(level_id, score, stars)
    out = {**progress, "stars": dict(progress["stars"]), "best": dict(progress["best"])}
    out["stars"][level_id] = max(stars, out["stars"].get(level_id, 0))
    out["best"][level_id] = max(kept_score(score), out["best"].get(level_id, 0.0))
    return out


def kept_score(score: float) -> float:
    """A score as the progress keeps it: cut (not rounded) to hundredths, so a kept best is never above the line its
    stars were judged on (84.996 is kept as 84.99, beside ★, never as 85.0)."""
    return math.floor(float(score) * 100 + 1e-9) / 100


def use_hint(progress: dict, level_id: str) -> dict:
    """One more hint used on the level: its reachable stars drop by one (and the listener is told)."""
    listener = RESULTS_TO.get()
    if listener is not None:
        listener.hint(level_id)
    counter = ATTEMPT_HINTS.get()
    if counter is not None:
        counter[0] += 1
    out = {**progress, "hints": dict(progress["hints"])}
    out["hints"][level_id] = out["hints"].get(level_id, 0) + 1
    return out


def use_hints_up_to(progress: dict, level_id: str, count: int) -> dict:
    """Count at least `count` hints on the level (the goddess's demo and the teacher's reveal count as two)."""
    while hints_used(progress, level_id) < count:
        progress = use_hint(progress, level_id)
    return progress


def hints_used(progress: dict, level_id: str) -> int:
    """Hints used on the level (the demo, the reveal and a shown chapter-1 answer count as two)."""
    return progress["hints"].get(level_id, 0)


def mark_shown(progress: dict, level_id: str) -> dict:
    """The goddess's demo has shown the way on this level (the level list says so until the player wins it)."""
    return {**progress, "shown": {**progress["shown"], level_id: 1}}


def shown(progress: dict, level_id: str) -> bool:
    return bool(progress["shown"].get(level_id))


def xp(progress: dict) -> int:
    """100 XP a star, plus a tenth of each best score (the game's own levels: a made-up level earns no XP)."""
    ids = {lv.id for c in load_levels() for lv in c.levels}
    stars = sum(v for k, v in progress["stars"].items() if k in ids)
    return 100 * stars + sum(int(s // 10) for k, s in progress["best"].items() if k in ids)


def unlocked_chapters(progress: dict) -> set[int]:
    """Chapter 1 is open; each next chapter opens when every level before it has at least one star."""
    opened = set()
    for chapter in load_levels():
        opened.add(chapter.number)
        if not all(progress["stars"].get(lv.id, 0) >= 1 for lv in chapter.levels):
            break
    return opened


CODE_PREFIX = "DRAGON1-"
MAX_CODE_CHARS = 20_000  # a code of every level and 100 teachers' levels in each table is about 12,000 characters


def export_code(progress: dict) -> str:
    """A short text a player copies to another computer."""
    raw = save(progress).encode("utf-8")
    return CODE_PREFIX + base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def import_code(code: str) -> dict:
    """Progress from an export code; ValueError (and nothing changed) when it is not a valid code."""
    if not isinstance(code, str) or not code.strip().startswith(CODE_PREFIX) or len(code) > MAX_CODE_CHARS:
        raise ValueError("not a progress code")
    body = code.strip()[len(CODE_PREFIX) :]
    try:
        saved = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("utf-8"))
    except ValueError as err:
        raise ValueError("the progress code is damaged") from err
    loaded = load(saved)
    if loaded.notice or not isinstance(saved, dict) or "sig" not in saved:  # null, {} or "": no signed progress
        raise ValueError("the progress code is damaged")
    return loaded.progress


# --- chapter 3's star rules: what the player predicted against what was just computed (pure functions) --------

SHARE_BUCKETS = SHARE_EDGES  # a softmax share guess: < 0.4, 0.4–0.6, 0.6–0.9, ≥ 0.9 (bucket 0…3)
GUESS_FACTORS = (1.5, 2.5, 4.0)  # a speed-up guess within ×1.5 of the measurement: ★★★, ×2.5: ★★, ×4: ★
KEEP_BUCKETS = KEEP_EDGES  # a mean cosine: < 0.2 "almost nothing", 0.2–0.6 "some", ≥ 0.6 "most" (bucket 0…2)
REACH_BUCKETS = REACH_EDGES  # heads reaching an output dim: 1 "one", 2–4 "a few", 5+ "all of them" (bucket 0…2)
TIE = SHARE_MARGIN  # two accuracies closer than this are a tie: either order ranks them right


def range_factor(guess: float, lo: float, hi: float) -> float:
    """How far a guess is from a measured range, as a factor ≥ 1 (1 inside the range)."""
    if guess <= 0 or lo <= 0 or hi < lo:
        raise ValueError("a speed-up is a positive number")
    return max(1.0, lo / guess, guess / hi)


def read_stars(predicted: int, read_right: bool) -> int:
    """A predict-first level: the question read off the measurement passes it (★); the prediction's own stars
    add the rest (its ★★★ gives ★★★, ★★ gives ★★, less adds nothing). A wrong reading loses the level."""
    return 1 + max(0, min(3, predicted) - 1) if read_right else 0


def formula_stars(points: int, out_of: int) -> int:
    """A formula level: a point per right winner and per right share; all of them ★★★, ⅔ ★★, ⅓ ★."""
    if out_of <= 0:
        return 0
    return 3 if points >= out_of else 2 if 3 * points >= 2 * out_of else 1 if 3 * points >= out_of else 0


def guess_stars(guess: float, measured: float, hi: float | None = None) -> tuple[float, int]:
    """A speed-up guess against the measured one (or the range measured..hi of repeated runs), on a log scale: (the
    factor between them ≥ 1, stars)."""
    factor = range_factor(guess, measured, measured if hi is None else hi)
    return factor, sum(factor <= f for f in GUESS_FACTORS)


def rank_pairs(ranking: list[int], accuracy: dict[int, float]) -> tuple[int, int]:
    """How many pairs of models the player's ranking (best first) orders as the measured accuracies do (ties
    count as right either way), out of how many pairs."""
    right = total = 0
    for i, a in enumerate(ranking):
        for b in ranking[i + 1 :]:  # the player put a above b
            total += 1
            right += accuracy[a] >= accuracy[b] - TIE
    return right, total


def rank_stars(right: int, total: int) -> int:
    """All pairs right ★★★, at least 80 % ★★, at least 60 % ★ (a random ranking gets half on average)."""
    if total <= 0:
        return 0
    return 3 if right == total else 2 if 5 * right >= 4 * total else 1 if 5 * right >= 3 * total else 0


# --- chapters 4–5's star rules ---------------------------------------------------------------------------------

CRYSTAL_SHARES = (0.2, 0.4)  # 4-1: a head with ≥ 20 % of the best head's weight on the target ★, ≥ 40 % ★★


def crystal_stars(weight: float, best: float) -> int:
    """4-1: the picked head's weight on the target against the best head's: the best head ★★★, else by share."""
    if best <= 0:
        return 0
    if weight >= best - 1e-9:
        return 3
    return bucket(weight / best, CRYSTAL_SHARES)


def points_stars(points: int, out_of: int) -> int:
    """Predictions checked one point each: all right ★★★, all but one ★★ (three or more questions) or ★, else 0."""
    if out_of <= 0 or points <= 0:
        return 0
    if points >= out_of:
        return 3
    if points == out_of - 1:
        return 2 if out_of >= 3 else 1
    return 1 if out_of >= 4 and points == out_of - 2 else 0


def prune_stars(off: int, most_off: int, reached: bool) -> int:
    """4-4: no star below the goal or with every head on; the best possible count ★★★, one fewer ★★, two fewer ★."""
    if not reached or off <= 0:
        return 0
    return max(0, 3 - max(0, most_off - off))


BADGE_CHAPTERS = (1, 2, 3, 4)  # 5-2's stars come from the player's results on these chapters
BADGE_SHARES = (1 / 3, 2 / 3, 0.9)  # share of the most stars there: ≥ ⅓ ★ (one star a level), ≥ ⅔ ★★, ≥ 90 % ★★★


def badge_results(progress: dict) -> tuple[int, int]:
    """(stars earned, most stars possible) over the levels of chapters 1–4."""
    ids = [lv.id for c in load_levels() if c.number in BADGE_CHAPTERS for lv in c.levels]
    return sum(int(progress["stars"].get(i, 0)) for i in ids), 3 * len(ids)


def badge_stars(progress: dict) -> int:
    """5-2, the finale: stars by the share of chapters 1–4's stars the player holds; nothing earned, no star."""
    got, most = badge_results(progress)
    return bucket(got / most, BADGE_SHARES) if most else 0

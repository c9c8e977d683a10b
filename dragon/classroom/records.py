"""A live class's records: the values its store takes and gives, its refusals (ClassroomError), limits and clock."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

CODE_ALPHABET = "BCDFGHJKMNPRSTVWXZ"  # no vowels (so no words), no I L O Q U (look-alikes of 1 l 0 O V)
CODE_LENGTH = 6
CODE_TRIES = 20
NICKNAME_MAX = 20  # code points after NFC
JOINERS = {"\u200c", "\u200d"}  # format characters a name needs (ZWNJ in Persian, ZWJ in emoji sequences)
MAX_MEMBERS = 200  # the most a teacher may set a class's size to
DEFAULT_SIZE = 60
MIN_SIZE = 2
MAX_MARKS = 2  # combining marks one character may carry in a nickname (more: Zalgo text spilling over its neighbours)
MAX_ID = 2**31 - 1  # ids are 32-bit on PostgreSQL: a larger one is a bad request, never a database error
STATUSES = ("active", "left", "removed")
WRONG_CODES = 40  # wrong codes (join, teacher, projector) one address may send per WRONG_CODES_WINDOW
WRONG_CODES_WINDOW = timedelta(minutes=10)
OPENS_PER_HOUR = 20  # classes one address may open in an hour
OPENS_WINDOW = timedelta(hours=1)
KINDS = ("dragon", "everyone")
DEFAULT_SETTINGS: dict[str, bool | int] = {"show_names": True, "exam": False, "locked": False, "size": DEFAULT_SIZE}

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """Now in UTC, naive (every time in the database is naive UTC)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


class ClassroomError(Exception):
    """A request the class's rules refuse: `reason` names the rule (the UI words it), `detail` holds its numbers."""

    def __init__(self, reason: str, **detail: float | int | str | bool) -> None:
        super().__init__(f"{reason} {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class RateLimit:
    """A token bucket per member: `burst` moves at once, refilled at `per_second`."""

    per_second: float = 5.0
    burst: float = 10.0

    def take(self, tokens: float, since: datetime, now: datetime) -> tuple[float, float]:
        """(tokens left after one move, 0.0), or (tokens now, seconds until one is back) when none is left."""
        elapsed = max(0.0, (now - since).total_seconds())  # another replica's clock may be a little behind
        tokens = min(self.burst, tokens + elapsed * self.per_second)
        if tokens >= 1.0:
            return tokens - 1.0, 0.0
        return tokens, (1.0 - tokens) / self.per_second


@dataclass(frozen=True)
class NewClass:
    code: str
    secret: str  # the teacher's secret, given once: only its hash is stored
    expires: datetime
    projector: str = ""  # the projector's read-only key (projector_key of the secret)


@dataclass(frozen=True)
class NewMember:
    member_id: int
    nickname: str
    token: str  # the student's secret, given once: only its hash is stored
    rejoined: bool = False  # the member had left and came back under the same name: the same member, results and all


@dataclass(frozen=True)
class ClassInfo:
    code: str
    created: datetime
    expires: datetime
    settings: dict[str, bool | int]


@dataclass(frozen=True)
class Member:
    member_id: int
    nickname: str
    joined: datetime
    status: str = "active"  # 'active' or 'left' ('removed' members are listed nowhere)


@dataclass(frozen=True)
class Round:
    round_id: int
    kind: str
    level_id: str
    started: datetime
    ended: datetime | None
    best_score: float | None
    best_stars: int | None
    lang: str = "zh"
    level_code: str | None = None  # a teacher's level: its share code (level_id is then its id)
    variant: dict | None = None  # an exam round's own puzzle: {"target": [8 floats]} or {"seed": int}
    exam: bool = False  # the class's exam setting when the round started
    target_shown: bool = False  # the teacher showed the target on the projector while the round was open


@dataclass(frozen=True)
class Board:
    """A class-dragon round's heads: each head's gate (its team's mean; None before any move), team size, last move."""

    gates: list[float | None]
    teams: list[int]
    moved: list[datetime | None]


@dataclass(frozen=True)
class Moved:
    """A class-dragon move as recorded: the board after it, the server's score of the class's gates, whether the round
    is won now, and the head moved."""

    board: Board
    score: float
    stars: int
    won: bool
    head: int


@dataclass(frozen=True)
class StudentState:
    """What a student's page needs of the store: who they are, their class, its newest round and their part in it."""

    member: "Member"
    code: str
    settings: dict[str, bool | int]
    round: "Round | None"
    heads: dict[int, float | None]  # a class-dragon round: the heads they hold, with their own latest values
    result: "Result | None"  # an everyone round: their result so far


@dataclass(frozen=True)
class Result:
    member_id: int
    nickname: str
    round_id: int
    level_id: str
    score: float | None  # the latest move's
    best_score: float | None
    stars: int | None  # the most stars earned
    hints: int
    moves: int
    gates: list[float] | None  # the latest move's
    first_move: datetime | None
    best_at: datetime | None


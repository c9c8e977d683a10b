"""A live class's storage (SQLAlchemy Core): classes, members, rounds, results; SQLite, or PostgreSQL (DATABASE_URL)."""

import base64
import functools
import hashlib
import hmac
import json
import math
import os
import re
import secrets
import sqlite3
import time
import unicodedata
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from importlib import resources
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine, Row

from dragon.config import HEADS

ROOT = Path(__file__).resolve().parents[2]
DB_FILE = "classroom.sqlite3"  # under DRAGON_DATA_DIR, else the repository's data/ folder
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
DEFAULT_HOURS = 12.0
MAX_HOURS = 7 * 24.0
KINDS = ("dragon", "everyone")
DEFAULT_SETTINGS: dict[str, bool | int] = {"show_names": True, "exam": False, "locked": False, "size": DEFAULT_SIZE}
LOCK_KEY = zlib.crc32(b"dragon.classroom.store.migrate")  # PostgreSQL advisory lock held while migrating

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


# --- tables ------------------------------------------------------------------------------------------------------

METADATA = sa.MetaData()
VERSIONS = sa.Table(
    "schema_versions", METADATA,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("applied", sa.DateTime, nullable=False),
)
CLASSES = sa.Table(
    "classes", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("code", sa.String(CODE_LENGTH), nullable=False, unique=True),
    sa.Column("secret_hash", sa.String(64), nullable=False),  # sha256 hex of the teacher's secret
    sa.Column("created", sa.DateTime, nullable=False),
    sa.Column("expires", sa.DateTime, nullable=False, index=True),
    sa.Column("settings", sa.JSON, nullable=False),
    sa.Column("projector_hash", sa.String(64)),  # sha256 hex of the projector key (None: a class from before step 3)
)
MEMBERS = sa.Table(
    "members", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("class_id", sa.Integer, sa.ForeignKey("classes.id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("nickname", sa.String(NICKNAME_MAX), nullable=False),  # NFC, exactly as shown
    sa.Column("nickname_key", sa.Text, nullable=False),  # NFKC, casefolded: two names alike here are one name
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("joined", sa.DateTime, nullable=False),
    sa.Column("bucket", sa.Float, nullable=False),  # rate limit: moves left in the bucket at bucket_at
    sa.Column("bucket_at", sa.DateTime, nullable=False),
    sa.Column("status", sa.String(8), nullable=False, server_default="active"),  # active, left or removed
    sa.Column("browser_hash", sa.String(64)),  # sha256 hex of the id the join page keeps in its browser
    sa.UniqueConstraint("class_id", "nickname_key"),
)
ROUNDS = sa.Table(
    "rounds", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("class_id", sa.Integer, sa.ForeignKey("classes.id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("level_id", sa.String(64), nullable=False),
    sa.Column("started", sa.DateTime, nullable=False),
    sa.Column("ended", sa.DateTime),
    sa.Column("best_score", sa.Float),  # a class-dragon round's best score, from the fused output of the means
    sa.Column("best_stars", sa.Integer),
    sa.Column("lang", sa.String(2), nullable=False, server_default="zh"),  # the language of the level's text
    sa.Column("level_code", sa.Text),  # a teacher's level: its share code
    sa.Column("variant", sa.JSON),  # an exam round's own target or seed, never shown while the round is open
    sa.Column("exam", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("target_shown", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.CheckConstraint("kind IN ('dragon', 'everyone')", name="round_kind"),
)
ROUND_HEADS = sa.Table(  # a member's seat at a head: one head each, several each when fewer than eight play
    "round_heads", METADATA,
    sa.Column("round_id", sa.Integer, sa.ForeignKey("rounds.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("member_id", sa.Integer, sa.ForeignKey("members.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("head", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("gate", sa.Float),  # the member's latest slider value; None until they move
    sa.Column("moved", sa.DateTime),
)
RESULTS = sa.Table(
    "results", METADATA,
    sa.Column("round_id", sa.Integer, sa.ForeignKey("rounds.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("member_id", sa.Integer, sa.ForeignKey("members.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("score", sa.Float),
    sa.Column("best_score", sa.Float),
    sa.Column("stars", sa.Integer),
    sa.Column("hints", sa.Integer, nullable=False),
    sa.Column("moves", sa.Integer, nullable=False),
    sa.Column("gates", sa.JSON),
    sa.Column("first_move", sa.DateTime),
    sa.Column("last_move", sa.DateTime),
    sa.Column("best_at", sa.DateTime),
)
ADDRESS_EVENTS = sa.Table(  # what the limits per address count (replicas share them, a restart keeps them)
    "address_events", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),  # 'wrong_code' or 'open'
    sa.Column("address_key", sa.String(64), nullable=False),  # sha256 hex of the address: no address is stored
    sa.Column("at", sa.DateTime, nullable=False),
    sa.Index("address_events_lookup", "kind", "address_key", "at"),
)


# --- engine and migrations -----------------------------------------------------------------------------------------


def data_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """Where the SQLite file lives: DRAGON_DATA_DIR, else the repository's data/ folder."""
    return Path(environ.get("DRAGON_DATA_DIR") or ROOT / "data")


def database_url(environ: Mapping[str, str] = os.environ) -> str:
    """DATABASE_URL with PostgreSQL on the psycopg 3 driver, else the SQLite file under data_dir()."""
    url = environ.get("DATABASE_URL", "").strip()
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url or f"sqlite:///{data_dir(environ) / DB_FILE}"


def class_hours(environ: Mapping[str, str] = os.environ) -> float:
    """How long a class lives: CLASS_HOURS (a number of hours, over 0 and at most a week), else 12."""
    text = environ.get("CLASS_HOURS", "").strip()
    if not text:
        return DEFAULT_HOURS
    try:
        hours = float(text)
    except ValueError:
        hours = math.nan
    if not 0 < hours <= MAX_HOURS:
        raise ValueError(f"CLASS_HOURS must be a number of hours over 0 and at most {MAX_HOURS:g}, not {text[:40]!r}")
    return hours


def make_engine(url: str | None = None) -> Engine:
    """An engine on `url` (default database_url()): SQLite (its folder made, WAL, BEGIN IMMEDIATE) or PostgreSQL."""
    parsed = sa.engine.make_url(url or database_url())
    if parsed.get_backend_name() == "postgresql":
        return sa.create_engine(parsed, pool_pre_ping=True)
    if parsed.get_backend_name() != "sqlite":
        raise ValueError(f"the class store runs on SQLite or PostgreSQL, not {parsed.get_backend_name()!r}")
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    engine = sa.create_engine(parsed, connect_args={"check_same_thread": False, "timeout": 30})
    event.listen(engine, "connect", _sqlite_connected)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_connected(dbapi_connection: sqlite3.Connection, _record: object) -> None:
    dbapi_connection.isolation_level = None  # the driver begins nothing itself: _sqlite_begin does
    _wal(dbapi_connection)
    for pragma in ("foreign_keys=ON", "synchronous=NORMAL"):
        dbapi_connection.execute(f"PRAGMA {pragma}")


def _wal(dbapi_connection: sqlite3.Connection, seconds: float = 30) -> None:
    """Switch to WAL. Two processes opening a new file at once can both try, and SQLite answers the second "database
    is locked" at once, without its busy timeout: try again until the other is done."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            dbapi_connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _sqlite_begin(connection: Connection) -> None:
    # Every transaction takes the write lock at once: writers queue (busy timeout 30 s) instead of failing on upgrade.
    connection.exec_driver_sql("BEGIN IMMEDIATE")


def create_tables(connection: Connection) -> None:
    """Step 1: the tables as this file defines them now."""
    METADATA.create_all(connection)


# Numbered steps, each applied once. Step 1 makes the tables as defined above, so on an empty database it is the only
# step run and every later number is marked done with it; a later step (2, 3, …) brings an older database up to date
# (an ALTER TABLE, with the same change made to the tables above).
def seats_and_round_language(connection: Connection) -> None:
    """Step 2: a round has its text's language and a teacher level's code; a member may hold several heads (the
    head joins round_heads' key: the table is made again, losing at most the seats of rounds open at the upgrade)."""
    connection.execute(sa.text("ALTER TABLE rounds ADD COLUMN lang VARCHAR(2) NOT NULL DEFAULT 'zh'"))
    connection.execute(sa.text("ALTER TABLE rounds ADD COLUMN level_code TEXT"))
    connection.execute(sa.text("DROP TABLE round_heads"))
    ROUND_HEADS.create(connection)


def class_trust(connection: Connection) -> None:
    """Step 3: a projector key's hash, a member's status and browser, a round's exam variant, the address limits."""
    for statement in ("ALTER TABLE classes ADD COLUMN projector_hash VARCHAR(64)",
                      "ALTER TABLE members ADD COLUMN status VARCHAR(8) NOT NULL DEFAULT 'active'",
                      "ALTER TABLE members ADD COLUMN browser_hash VARCHAR(64)",
                      "ALTER TABLE rounds ADD COLUMN variant JSON",
                      "ALTER TABLE rounds ADD COLUMN exam BOOLEAN NOT NULL DEFAULT false",
                      "ALTER TABLE rounds ADD COLUMN target_shown BOOLEAN NOT NULL DEFAULT false"):
        connection.execute(sa.text(statement))
    ADDRESS_EVENTS.create(connection)


STEPS: dict[int, Callable[[Connection], None]] = {1: create_tables, 2: seats_and_round_language, 3: class_trust}
SCHEMA_VERSION = max(STEPS)


def migrate(engine: Engine) -> int:
    """Bring the database to SCHEMA_VERSION, one process at a time (PostgreSQL advisory lock, SQLite's write lock)."""
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(sa.select(sa.func.pg_advisory_xact_lock(LOCK_KEY)))
        VERSIONS.create(connection, checkfirst=True)
        done = connection.scalar(sa.select(sa.func.max(VERSIONS.c.version))) or 0
        if done > SCHEMA_VERSION:
            raise RuntimeError(f"the class database is at schema version {done}, newer than this app's "
                               f"{SCHEMA_VERSION}")
        todo = [1] if done == 0 else list(range(done + 1, SCHEMA_VERSION + 1))
        for number in todo:
            STEPS[number](connection)
        marked = range(done + 1, SCHEMA_VERSION + 1)
        if marked:
            connection.execute(VERSIONS.insert(), [{"version": n, "applied": utc_now()} for n in marked])
    return SCHEMA_VERSION


# --- pure rules ----------------------------------------------------------------------------------------------------


def digest(secret: str) -> str:
    """sha256 hex of a secret (all secrets are 256 random bits, so a plain hash is enough)."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def new_code() -> str:
    """A random class code: CODE_LENGTH letters of CODE_ALPHABET."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normal_code(code: str) -> str:
    """A typed code as stored (trimmed, upper case), or '' when it cannot be one."""
    code = str(code).strip().upper()
    return code if len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET) else ""


def hidden_character(char: str) -> bool:
    """Whether a character is invisible or controls layout: controls, direction marks, tags, surrogates, private use."""
    return char not in JOINERS and unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp")


# letters that show nothing: the Hangul fillers (U+3164 and its NFKC form U+1160, …), Khmer's inherent vowels
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u17b4\u17b5")
CLASS_ROW = re.compile(r"[(\[{（【［].*(the class|全班).*[)\]}）】］]")  # the CSV's "(the class)" row, or like it


def visible_letter(char: str) -> bool:
    """A letter, a digit or a CJK character that shows as one (a Hangul filler is a 'letter' showing nothing)."""
    return unicodedata.category(char)[0] in "LN" and char not in BLANK_LETTERS


def most_marks(name: str) -> int:
    """The most combining marks any one character of `name` carries."""
    most = run = 0
    for char in name:
        run = run + 1 if unicodedata.category(char)[0] == "M" else 0
        most = max(most, run)
    return most


def clean_nickname(nickname: str) -> str:
    """A nickname as stored: spaces collapsed and trimmed, NFKC; ClassroomError when empty, too long, hiding any,
    showing no letter, stacking marks or posing as the CSV's class row."""
    name = unicodedata.normalize("NFKC", " ".join(str(nickname).split()))
    name = " ".join(name.split())  # NFKC may make spaces (U+3000 …): collapse again
    if not name:
        raise ClassroomError("nickname.empty")
    if any(hidden_character(c) for c in name):
        raise ClassroomError("nickname.hidden")
    if len(name) > NICKNAME_MAX:
        raise ClassroomError("nickname.too_long", limit=NICKNAME_MAX, length=len(name))
    if not any(visible_letter(c) for c in name):
        raise ClassroomError("nickname.no_letter")
    if most_marks(name) > MAX_MARKS:
        raise ClassroomError("nickname.marks", limit=MAX_MARKS)
    if name[0] in "(（" or CLASS_ROW.search(name.casefold()):
        raise ClassroomError("nickname.class_row")
    return name


@functools.lru_cache(maxsize=1)
def prototypes() -> dict[str, str]:
    """Each confusable character's prototype (Unicode TR39's confusables.txt, as the confusable_homoglyphs package
    ships it: every source and its prototype listed both ways). A character and its prototypes form one class in
    that data; the class is named by its smallest member, a multi-character prototype (m → rn) by itself."""
    data = json.loads(resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8"))
    parent: dict[str, str] = {}

    def root(char: str) -> str:
        while parent.get(char, char) != char:
            parent[char] = parent.get(parent[char], parent[char])
            char = parent[char]
        return char

    expand: dict[str, str] = {}
    for char, alikes in data.items():
        for alike in (entry["c"] for entry in alikes):
            if len(char) == 1 and len(alike) == 1:
                a, b = root(char), root(alike)
                parent[max(a, b)] = min(a, b)
            elif len(char) == 1 and len(alikes) == 1:
                expand[char] = alike  # a character whose only prototype is a sequence
    mapped = {char: root(char) for char in list(parent)}
    mapped.update({char: "".join(mapped.get(c, c) for c in seq) for char, seq in expand.items() if char not in parent})
    return {char: proto for char, proto in mapped.items() if proto != char}


def skeleton(name: str) -> str:
    """A nickname's TR39 skeleton, case folded: two names with one look alike on screen (Cyrillic "Тom", "Tom")."""
    table = prototypes()
    mapped = "".join(table.get(c, c) for c in unicodedata.normalize("NFD", name)).casefold()
    return "".join(table.get(c, c) for c in unicodedata.normalize("NFD", mapped))  # casefolding may make more


def nickname_key(name: str) -> str:
    """What two nicknames must differ in: NFKC, casefolded (Tom, tom and ＴＯＭ are one name)."""
    return unicodedata.normalize("NFKC", name).casefold()


def class_settings(settings: Mapping[str, bool | int] | None) -> dict[str, bool | int]:
    """DEFAULT_SETTINGS updated by `settings`: known keys, booleans, and `size` a whole number MIN_SIZE…MAX_MEMBERS."""
    chosen = dict(DEFAULT_SETTINGS)
    for key, value in (settings or {}).items():
        if key == "size":
            if isinstance(value, bool) or not isinstance(value, int) or not MIN_SIZE <= value <= MAX_MEMBERS:
                raise ValueError(f"class setting size={value!r}: a whole number {MIN_SIZE}…{MAX_MEMBERS}")
        elif key not in DEFAULT_SETTINGS or not isinstance(value, bool):
            raise ValueError(f"class setting {key!r}={value!r}: the settings are {sorted(DEFAULT_SETTINGS)}, booleans "
                             "and size")
        chosen[key] = value
    return chosen


def checked_id(value: int, name: str = "id") -> int:
    """A round's or member's id as a request names it: a whole number 1…2³¹−1, or ValueError."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ID:
        raise ValueError(f"{name} must be a whole number from 1 to {MAX_ID}")
    return value


def projector_key(secret: str) -> str:
    """The projector's read-only key of a class: derived from the teacher's secret (so the teacher's page can show it
    again after a reload), never the secret itself; HMAC-SHA256, URL-safe base64 without padding."""
    mac = hmac.new(secret.encode("utf-8", "surrogatepass"), b"projector", hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode("ascii").rstrip("=")


def checked_score(score: float, stars: int) -> tuple[float, int]:
    """A server-computed score (0…100) and stars (0…3), or ValueError."""
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 100:
        raise ValueError(f"score must be a number in 0…100, not {score!r}")
    if isinstance(stars, bool) or not isinstance(stars, int) or not 0 <= stars <= 3:
        raise ValueError(f"stars must be a whole number in 0…3, not {stars!r}")
    return float(score), stars


def checked_gates(gates: Sequence[float]) -> list[float]:
    """A move's eight slider values, each in 0…1, or ValueError."""
    checked = [checked_gate(g) for g in gates]
    if len(checked) != len(HEADS):
        raise ValueError(f"a move has {len(HEADS)} gates, not {len(checked)}")
    return checked


def checked_head(head: int | None) -> int | None:
    """A head index as a move names it (None: the member's only head), or ValueError."""
    if head is not None and (isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < len(HEADS)):
        raise ValueError(f"a head is a number 0…{len(HEADS) - 1}, not {head!r}")
    return head


def checked_gate(gate: float) -> float:
    """A slider value in 0…1, or ValueError."""
    if isinstance(gate, bool) or not isinstance(gate, int | float) or not 0 <= gate <= 1:
        raise ValueError(f"a gate must be a number in 0…1, not {gate!r}")
    return float(gate)


# --- the store -----------------------------------------------------------------------------------------------------


class ClassroomStore:
    """Every class operation, one transaction each. Teacher calls take the class's secret, student calls their own
    token; the numbers recorded are the server's own scoring, passed in by the caller."""

    def __init__(self, engine: Engine, *, clock: Clock = utc_now, hours: float = DEFAULT_HOURS,
                 rate: RateLimit = RateLimit()) -> None:
        self.engine = engine
        self.clock = clock
        self.lifetime = timedelta(hours=hours)
        self.rate = rate

    # classes

    def open_class(self, settings: Mapping[str, bool] | None = None) -> NewClass:
        """A new class with a code unique among live classes; its secret is returned here once."""
        chosen = class_settings(settings)
        self.delete_expired()  # frees the codes of expired classes
        secret, now = secrets.token_urlsafe(32), self.clock()
        for _ in range(CODE_TRIES):
            code = new_code()
            row = {"code": code, "secret_hash": digest(secret), "created": now, "expires": now + self.lifetime,
                   "settings": chosen, "projector_hash": digest(projector_key(secret))}
            try:
                with self.engine.begin() as connection:
                    connection.execute(CLASSES.insert().values(**row))
            except sa.exc.IntegrityError:
                continue  # the code is taken: draw another
            return NewClass(code, secret, row["expires"], projector_key(secret))
        raise RuntimeError(f"no free class code in {CODE_TRIES} tries")

    def class_info(self, code: str) -> ClassInfo | None:
        """A live class's code, times and settings (nothing secret), or None."""
        with self.engine.begin() as connection:
            row = self._live_class(connection, code, missing_ok=True)
        if row is None:
            return None
        return ClassInfo(row.code, row.created, row.expires, {**DEFAULT_SETTINGS, **row.settings})

    def is_teacher(self, code: str, secret: str) -> bool:
        """Whether `secret` is the teacher's secret of the live class `code`."""
        try:
            with self.engine.begin() as connection:
                self._teacher_class(connection, code, secret)
        except ClassroomError:
            return False
        return True

    def projector_key(self, code: str, secret: str) -> str:
        """The projector key (teacher), derived from the secret; a class from before step 3 gets its hash now."""
        with self.engine.begin() as connection:
            row = self._teacher_class(connection, code, secret)
            key = projector_key(secret)
            if row.projector_hash is None:
                connection.execute(CLASSES.update().where(CLASSES.c.id == row.id).values(projector_hash=digest(key)))
        return key

    def is_projector(self, code: str, key: str) -> bool:
        """Whether `key` is the projector key of the live class `code` (it may view, never control)."""
        with self.engine.begin() as connection:
            row = self._live_class(connection, code, missing_ok=True)
        return row is not None and row.projector_hash is not None and isinstance(key, str) and hmac.compare_digest(
            digest(key), row.projector_hash)

    def set_settings(self, code: str, secret: str, settings: Mapping[str, bool | int]) -> dict[str, bool | int]:
        """Change some of a class's settings (teacher); the settings now."""
        with self.engine.begin() as connection:
            row = self._teacher_class(connection, code, secret, lock=True)
            chosen = class_settings({**row.settings, **settings})
            connection.execute(CLASSES.update().where(CLASSES.c.id == row.id).values(settings=chosen))
        return chosen

    def end_class(self, code: str, secret: str) -> None:
        """The teacher ends the class: it and everything under it are deleted."""
        with self.engine.begin() as connection:
            self._delete_classes(connection, [self._teacher_class(connection, code, secret, lock=True).id])

    def delete_expired(self) -> int:
        """Delete every class past its time and everything under it; how many classes went."""
        with self.engine.begin() as connection:
            now = self.clock()
            connection.execute(ADDRESS_EVENTS.delete().where(  # what no limit counts any more
                ADDRESS_EVENTS.c.at <= now - max(WRONG_CODES_WINDOW, OPENS_WINDOW)))
            ids = connection.scalars(sa.select(CLASSES.c.id).where(CLASSES.c.expires <= now)).all()
            return self._delete_classes(connection, ids)

    # limits per address (in the database: replicas share them, a restart keeps them)

    def wrong_code(self, address: str) -> None:
        """Count a wrong code (or secret, or key) from `address`; ClassroomError code.too_many past WRONG_CODES in
        WRONG_CODES_WINDOW (that one is not counted). A right code never comes here, so it is never slowed."""
        self._take("wrong_code", address, WRONG_CODES, WRONG_CODES_WINDOW, "code.too_many")

    def take_open(self, address: str) -> None:
        """Count a class opened from `address`; ClassroomError class.opens past OPENS_PER_HOUR in an hour."""
        self._take("open", address, OPENS_PER_HOUR, OPENS_WINDOW, "class.opens")

    def _take(self, kind: str, address: str, limit: int, window: timedelta, reason: str) -> None:
        key, now = digest(str(address)), self.clock()
        with self.engine.begin() as connection:
            if self.engine.dialect.name == "postgresql":  # one address's count and insert at a time, on any replica
                connection.execute(sa.select(sa.func.pg_advisory_xact_lock(int(key[:15], 16))))
            mine = sa.and_(ADDRESS_EVENTS.c.kind == kind, ADDRESS_EVENTS.c.address_key == key,
                           ADDRESS_EVENTS.c.at > now - window)
            count, oldest = connection.execute(sa.select(sa.func.count(), sa.func.min(ADDRESS_EVENTS.c.at))
                                               .where(mine)).one()
            if count >= limit:
                wait = (_naive(oldest) + window - now).total_seconds()
                raise ClassroomError(reason, limit=limit, wait_s=max(1, math.ceil(wait)))
            connection.execute(ADDRESS_EVENTS.insert().values(kind=kind, address_key=key, at=now))

    # members

    def join(self, code: str, nickname: str, browser: str | None = None) -> NewMember:
        """A student joins under a nickname (clean_nickname's rules, unique in the class by nickname_key and not
        confusable with another's); under the name of a member who left, they are that member again. `browser`: the
        id the join page keeps, so a removed student cannot come back from that browser under another name."""
        name = clean_nickname(nickname)
        key, shape = nickname_key(name), skeleton(name)
        browser_hash = digest(browser) if isinstance(browser, str) and browser else None
        token, now = secrets.token_urlsafe(32), self.clock()
        try:
            with self.engine.begin() as connection:
                room = self._live_class(connection, code, lock=True)  # joins to one class go one at a time
                settings = {**DEFAULT_SETTINGS, **room.settings}
                if settings["locked"]:
                    raise ClassroomError("class.locked")
                others = connection.execute(sa.select(MEMBERS).where(MEMBERS.c.class_id == room.id)
                                            .order_by(MEMBERS.c.id)).all()
                if browser_hash and any(o.status == "removed" and o.browser_hash == browser_hash for o in others):
                    raise ClassroomError("member.removed")
                same = next((o for o in others if o.nickname_key == key), None)
                if same is not None and same.status != "left":
                    raise ClassroomError("member.removed" if same.status == "removed" else "nickname.taken")
                limit = min(int(settings["size"]), MAX_MEMBERS)
                if sum(o.status == "active" for o in others) >= limit:
                    raise ClassroomError("class.full", limit=limit)
                if same is not None:  # back after leaving: the same member, results, hints and caps
                    connection.execute(MEMBERS.update().where(MEMBERS.c.id == same.id).values(
                        token_hash=digest(token), status="active", browser_hash=browser_hash or same.browser_hash))
                    return NewMember(same.id, same.nickname, token, rejoined=True)
                like = next((o for o in others if skeleton(o.nickname) == shape), None)
                if like is not None:
                    raise ClassroomError("nickname.confusable", like=like.nickname)
                inserted = connection.execute(MEMBERS.insert().values(
                    class_id=room.id, nickname=name, nickname_key=key, token_hash=digest(token),
                    joined=now, bucket=self.rate.burst, bucket_at=now, browser_hash=browser_hash))
        except sa.exc.IntegrityError:
            raise ClassroomError("nickname.taken") from None  # the same name joined at the same moment elsewhere
        return NewMember(inserted.inserted_primary_key[0], name, token)

    def member(self, token: str) -> Member | None:
        """The member holding `token` in a live class, or None (removed, ended, expired, or never)."""
        with self.engine.begin() as connection:
            row = self._member(connection, token, missing_ok=True)
        return None if row is None else Member(row.id, row.nickname, row.joined, row.status)

    def code_of(self, token: str) -> str:
        """The code of the live class a member's token belongs to (ClassroomError when none)."""
        with self.engine.begin() as connection:
            me = self._member(connection, token)
            return connection.scalar(sa.select(CLASSES.c.code).where(CLASSES.c.id == me.class_id))

    def members(self, code: str, secret: str) -> list[Member]:
        """A class's members who are in it or left it (not those removed), in the order they joined (teacher or
        projector)."""
        with self.engine.begin() as connection:
            room = self._reader_class(connection, code, secret)
            rows = connection.execute(sa.select(MEMBERS).where(MEMBERS.c.class_id == room.id,
                                                               MEMBERS.c.status != "removed")
                                      .order_by(MEMBERS.c.joined, MEMBERS.c.id))
            return [Member(r.id, r.nickname, r.joined, r.status) for r in rows]

    def remove_member(self, code: str, secret: str, member_id: int) -> bool:
        """The teacher removes a member for good (remove_members of one)."""
        return self.remove_members(code, secret, [member_id]) == 1

    def remove_members(self, code: str, secret: str, member_ids: Sequence[int]) -> int:
        """The teacher removes members for good: their tokens stop, their seats are dealt again, their results go,
        and neither their name nor their browser may join the class again; how many were removed."""
        ids = sorted({checked_id(m, "member") for m in member_ids})
        with self.engine.begin() as connection:
            room = self._teacher_class(connection, code, secret, lock=True)
            return sum(self._remove(connection, room.id, m, "removed") for m in ids)  # members' rows in id order

    def _remove(self, connection: Connection, class_id: int, member_id: int, status: str) -> bool:
        """A member of a class (the class's row locked by the caller) leaves ('left': results kept, back by joining
        under the name) or is removed ('removed': results deleted); their token stops, their open seats are dealt
        again."""
        mine = sa.select(MEMBERS.c.id, MEMBERS.c.status).where(MEMBERS.c.class_id == class_id,
                                                               MEMBERS.c.id == member_id)
        found = connection.execute(mine.with_for_update()).first()  # the member's row, as their own moves lock it
        if found is None or found.status == "removed" or (status == "left" and found.status != "active"):
            return False
        self._give_up_seats(connection, class_id, member_id)
        if status == "removed":
            for table in (RESULTS, ROUND_HEADS):
                connection.execute(table.delete().where(table.c.member_id == member_id))
        connection.execute(MEMBERS.update().where(MEMBERS.c.id == member_id).values(
            status=status, token_hash=digest(secrets.token_urlsafe(32))))  # a hash no token has
        return True

    def _give_up_seats(self, connection: Connection, class_id: int, member_id: int) -> None:
        """A leaver's seats in the class's open class-dragon round: each head left with no one is dealt at once to the
        active member with the fewest seats there (the lowest id among equals), at the leaver's last gate."""
        round_id = connection.scalar(sa.select(ROUNDS.c.id).where(
            ROUNDS.c.class_id == class_id, ROUNDS.c.ended.is_(None), ROUNDS.c.kind == "dragon"))
        if round_id is None:
            return
        theirs = sa.and_(ROUND_HEADS.c.round_id == round_id, ROUND_HEADS.c.member_id == member_id)
        seats = connection.execute(sa.select(ROUND_HEADS.c.head, ROUND_HEADS.c.gate, ROUND_HEADS.c.moved)
                                   .where(theirs).order_by(ROUND_HEADS.c.head)).all()
        connection.execute(ROUND_HEADS.delete().where(theirs))
        self._deal_empty_heads(connection, class_id, round_id, {s.head: (s.gate, s.moved) for s in seats},
                               besides=member_id)

    def _deal_empty_heads(self, connection: Connection, class_id: int, round_id: int,
                          start: Mapping[int, tuple[float | None, datetime | None]], besides: int = 0) -> None:
        """Deal each head of `start` (head → the gate and time it starts at) that no one holds in the round to the
        active member (not `besides`) holding the fewest seats there, the lowest id among equals."""
        active = connection.scalars(sa.select(MEMBERS.c.id).where(
            MEMBERS.c.class_id == class_id, MEMBERS.c.status == "active", MEMBERS.c.id != besides)
            .order_by(MEMBERS.c.id)).all()
        if not active:
            return  # no one to take them: the next to join is seated at an empty head (_seat)
        held = dict(connection.execute(sa.select(ROUND_HEADS.c.member_id, sa.func.count())
                                       .where(ROUND_HEADS.c.round_id == round_id)
                                       .group_by(ROUND_HEADS.c.member_id)).all())
        teams = self._board(connection, round_id).teams
        for head, (gate, moved) in sorted(start.items()):
            if teams[head]:
                continue
            taker = min(active, key=lambda m: (held.get(m, 0), m))
            connection.execute(ROUND_HEADS.insert().values(round_id=round_id, member_id=taker, head=head, gate=gate,
                                                           moved=moved))
            held[taker], teams[head] = held.get(taker, 0) + 1, 1

    def leave(self, token: str) -> bool:
        """A student leaves the class: status 'left', token stopped, results kept, seats dealt again."""
        with self.engine.begin() as connection:
            me = self._member(connection, token, missing_ok=True)
        if me is None:
            return False
        with self.engine.begin() as connection:  # the class's row, then the member's: the order every writer takes
            room = connection.execute(sa.select(CLASSES).where(CLASSES.c.id == me.class_id).with_for_update()).first()
            if room is None:
                return False
            return self._remove(connection, room.id, me.id, "left")

    # rounds

    def start_round(self, code: str, secret: str, kind: str, level_id: str,
                    heads: Mapping[int, int | Sequence[int]] | None = None, *, lang: str = "zh",
                    level_code: str | None = None, variant: Mapping | None = None, exam: bool = False) -> int:
        """Start a round (the open one ends): 'everyone' plays a level, 'dragon' gives each member in `heads`
        (member id → a head index, or several) those heads' sliders; a seat dealt to a member who has left goes to an
        active member instead. `lang`: the level text's language; `level_code`: a teacher level's share code;
        `variant`: an exam round's own target or seed; `exam`: whether the round is an exam."""
        if kind not in KINDS:
            raise ValueError(f"a round's kind is one of {KINDS}, not {kind!r}")
        if not isinstance(level_id, str) or not 0 < len(level_id) <= 64:
            raise ValueError(f"a level id is 1…64 characters, not {level_id!r}")
        if lang not in ("zh", "en") or not (level_code is None or isinstance(level_code, str)):
            raise ValueError(f"a round's language is zh or en, not {lang!r}")
        seats = [(m, h) for m, held in (heads or {}).items() for h in ([held] if isinstance(held, int) else held)]
        if (kind == "everyone" and seats) or any(isinstance(h, bool) or not isinstance(h, int)
                                                   or not 0 <= h < len(HEADS) for _, h in seats):
            raise ValueError(f"heads are for a class-dragon round, each 0…{len(HEADS) - 1}: {heads!r}")
        if not isinstance(exam, bool) or not (variant is None or isinstance(variant, Mapping)):
            raise ValueError("an exam is true or false, its variant an object or None")
        now = self.clock()
        with self.engine.begin() as connection:
            room = self._teacher_class(connection, code, secret, lock=True)
            status = dict(connection.execute(sa.select(MEMBERS.c.id, MEMBERS.c.status)
                                             .where(MEMBERS.c.class_id == room.id)).all())
            if not {m for m, _ in seats} <= {m for m, st in status.items() if st != "removed"}:
                raise ClassroomError("member.unknown")
            connection.execute(ROUNDS.update().where(ROUNDS.c.class_id == room.id, ROUNDS.c.ended.is_(None))
                               .values(ended=now))
            round_id = connection.execute(ROUNDS.insert().values(
                class_id=room.id, kind=kind, level_id=level_id, started=now, lang=lang, level_code=level_code,
                variant=None if variant is None else dict(variant), exam=exam)).inserted_primary_key[0]
            kept = [(m, h) for m, h in dict.fromkeys(seats) if status[m] == "active"]
            if kept:
                connection.execute(ROUND_HEADS.insert(), [{"round_id": round_id, "member_id": m, "head": h}
                                                          for m, h in kept])
            if len(kept) < len(set(seats)):  # a leaver's heads: dealt to those here
                self._deal_empty_heads(connection, room.id, round_id, {h: (None, None) for _, h in seats})
        return round_id

    def show_target(self, code: str, secret: str, round_id: int) -> None:
        """The teacher shows the round's target on the projector while it is open (ClassroomError in an exam)."""
        with self.engine.begin() as connection:
            room = self._teacher_class(connection, code, secret, lock=True)
            row = self._open_round(connection, room.id, round_id, ended_ok=True)
            if row.exam:
                raise ClassroomError("target.exam")
            connection.execute(ROUNDS.update().where(ROUNDS.c.id == row.id).values(target_shown=True))

    def holders(self, code: str, round_id: int) -> list[list[str]]:
        """Per head, the nicknames of the active members holding it in a class-dragon round, in join order."""
        with self.engine.begin() as connection:
            room = self._live_class(connection, code)
            self._open_round(connection, room.id, round_id, "dragon", ended_ok=True)
            rows = connection.execute(sa.select(ROUND_HEADS.c.head, MEMBERS.c.nickname)
                                      .join(MEMBERS, MEMBERS.c.id == ROUND_HEADS.c.member_id)
                                      .where(ROUND_HEADS.c.round_id == round_id, MEMBERS.c.status == "active")
                                      .order_by(MEMBERS.c.joined, MEMBERS.c.id)).all()
        out: list[list[str]] = [[] for _ in HEADS]
        for head, nickname in rows:
            out[head].append(nickname)
        return out

    def end_round(self, code: str, secret: str, round_id: int) -> None:
        """The teacher ends a round (its results stay until the class goes)."""
        with self.engine.begin() as connection:
            room = self._teacher_class(connection, code, secret, lock=True)
            connection.execute(ROUNDS.update().where(ROUNDS.c.class_id == room.id, ROUNDS.c.id == round_id,
                                                     ROUNDS.c.ended.is_(None)).values(ended=self.clock()))

    def current_round(self, code: str) -> Round | None:
        """A live class's open round, or None."""
        with self.engine.begin() as connection:
            room = self._live_class(connection, code)
            row = connection.execute(sa.select(ROUNDS).where(ROUNDS.c.class_id == room.id, ROUNDS.c.ended.is_(None))
                                     .order_by(ROUNDS.c.id.desc()).limit(1)).first()
        return None if row is None else _round(row)

    def record_round_score(self, code: str, round_id: int, score: float, stars: int) -> bool:
        """A class-dragon round's score, computed by the server from the heads' means; the best is kept, and at
        ★★★ the round is won and ends. Whether it is won."""
        score, stars = checked_score(score, stars)
        with self.engine.begin() as connection:
            room = self._live_class(connection, code)
            self._open_round(connection, room.id, round_id, "dragon")
            self._keep_best(connection, round_id, score, stars, self.clock())
        return stars == 3

    def round_of(self, code: str, round_id: int) -> Round:
        """One round of a live class, open or ended (ClassroomError when it is not the class's)."""
        with self.engine.begin() as connection:
            room = self._live_class(connection, code)
            return _round(self._open_round(connection, room.id, round_id, ended_ok=True))

    # a student's moves

    def record_move(self, token: str, round_id: int, gates: Sequence[float] | None, score: float,
                    stars: int) -> Result:
        """A member's move in an 'everyone' round: their gates (None on a level without sliders) and the server's
        score of them; their result now."""
        score, stars = checked_score(score, stars)
        return self.play_move(token, round_id, gates, lambda _round, _hints: (score, stars))

    def play_move(self, token: str, round_id: int, gates: Sequence[float] | None,
                  score_of: Callable[[Round, int], tuple[float, int]], *, count_move: bool = True) -> Result:
        """record_move with the server's scoring done inside its one transaction: `score_of(round, hints used)` gives
        the score and stars of `gates` on the round's level. `count_move=False` keeps the best and the stars without
        counting a move (a framed lab's result, whose moves note_activity counts)."""
        gates = None if gates is None else checked_gates(gates)
        with self.engine.begin() as connection:
            me, now = self._moving_member(connection, token), self.clock()
            row = self._open_round(connection, me.class_id, round_id, "everyone")
            hints = self._result_row(connection, round_id, me.id).hints
            score, stars = checked_score(*score_of(_round(row), hints))
            self._note_move(connection, round_id, me.id, now, score, stars, gates, count=count_move)
            return self._result(connection, round_id, me.id)

    def note_activity(self, token: str, round_id: int) -> None:
        """One more move of a member in an open everyone round (a framed lab's answer): counted and timed, no score,
        no rate bucket."""
        with self.engine.begin() as connection:
            me, now = self._member(connection, token, lock=True), self.clock()
            self._open_round(connection, me.class_id, round_id, "everyone")
            old = self._result_row(connection, round_id, me.id)
            connection.execute(RESULTS.update().where(RESULTS.c.round_id == round_id, RESULTS.c.member_id == me.id)
                               .values(moves=old.moves + 1, last_move=now, first_move=old.first_move or now))

    def record_hint(self, token: str, round_id: int) -> int:
        """A hint the server gave a member in a round; how many they have had there."""
        with self.engine.begin() as connection:
            me = self._moving_member(connection, token)
            self._open_round(connection, me.class_id, round_id)
            old = self._result_row(connection, round_id, me.id)
            connection.execute(RESULTS.update().where(RESULTS.c.round_id == round_id, RESULTS.c.member_id == me.id)
                               .values(hints=old.hints + 1))
        return old.hints + 1

    def my_result(self, token: str, round_id: int) -> Result | None:
        """The member's own result in a round (never another's), or None before their first move."""
        with self.engine.begin() as connection:
            me = self._member(connection, token)
            return self._result(connection, round_id, me.id)

    def my_head(self, token: str, round_id: int) -> int | None:
        """The (first) head a member holds in a class-dragon round, or None."""
        return next(iter(self.my_heads(token, round_id)), None)

    def my_heads(self, token: str, round_id: int) -> dict[int, float | None]:
        """The heads a member holds in a class-dragon round, each with the member's own latest value."""
        with self.engine.begin() as connection:
            return self._heads_of(connection, round_id, self._member(connection, token).id)

    def student_state(self, token: str) -> StudentState:
        """Everything a student's page shows of the store, in one transaction; in an open class-dragon round a member
        who holds no head yet (they joined during it) is seated at its smallest team, the lowest head among equals."""
        wanted = digest(token) if isinstance(token, str) else ""
        with self.engine.begin() as connection:
            me = connection.execute(
                sa.select(MEMBERS.c.id, MEMBERS.c.nickname, MEMBERS.c.joined, MEMBERS.c.class_id, CLASSES.c.code,
                          CLASSES.c.settings)
                .join(CLASSES, CLASSES.c.id == MEMBERS.c.class_id)
                .where(MEMBERS.c.token_hash == wanted, CLASSES.c.expires > self.clock())).first()
            if me is None:
                raise ClassroomError("member.unknown")
            row = connection.execute(sa.select(ROUNDS).where(ROUNDS.c.class_id == me.class_id)
                                     .order_by(ROUNDS.c.id.desc()).limit(1)).first()
            heads: dict[int, float | None] = {}
            result = None
            if row is not None and row.kind == "dragon":
                heads = self._heads_of(connection, row.id, me.id)
                if not heads and row.ended is None:
                    heads = {self._seat(connection, row.id, me.id): None}
            elif row is not None:
                if row.ended is None:  # the page opened the round: "started" (moves 0) on the teacher's board
                    self._result_row(connection, row.id, me.id, quiet=True)
                result = self._result(connection, row.id, me.id)
        return StudentState(Member(me.id, me.nickname, me.joined), me.code, {**DEFAULT_SETTINGS, **me.settings},
                            None if row is None else _round(row), heads, result)

    def move_head(self, token: str, round_id: int, gate: float, head: int | None,
                  score_of: Callable[[Round, list[float | None]], tuple[float, int]]) -> Moved:
        """set_gate, the board after it and the round's score in one transaction: `score_of(round, head gates)` is the
        server's scoring of the class's gates; the best is kept, and ★★★ wins the round and ends it."""
        gate, head = checked_gate(gate), checked_head(head)
        with self.engine.begin() as connection:
            me, now = self._moving_member(connection, token), self.clock()
            row = self._open_round(connection, me.class_id, round_id, "dragon")
            moved = self._move_seat(connection, round_id, me.id, gate, head, now)
            board = self._board(connection, round_id)
            score, stars = checked_score(*score_of(_round(row), board.gates))
            self._keep_best(connection, round_id, score, stars, now)
            # the member's own row: their moves, and the class's score after each (its best, and when)
            self._note_move(connection, round_id, me.id, now, score, stars, None)
        return Moved(board, score, stars, stars == 3, moved)

    def take_seat(self, token: str, round_id: int) -> dict[int, float | None]:
        """my_heads, after seating a member who joined during an open class-dragon round at its smallest team (the
        lowest head among equals): no one waits for the next round."""
        with self.engine.begin() as connection:
            me = self._member(connection, token, lock=True)
            self._open_round(connection, me.class_id, round_id, "dragon")
            if not self._heads_of(connection, round_id, me.id):
                self._seat(connection, round_id, me.id)
            return self._heads_of(connection, round_id, me.id)

    def set_gate(self, token: str, round_id: int, gate: float, head: int | None = None) -> list[float | None]:
        """A member moves their own head's slider (`head`: which, when they hold several) in a class-dragon round;
        every head's gate now (head_gates)."""
        gate, head = checked_gate(gate), checked_head(head)
        with self.engine.begin() as connection:
            me, now = self._moving_member(connection, token), self.clock()
            self._open_round(connection, me.class_id, round_id, "dragon")
            self._move_seat(connection, round_id, me.id, gate, head, now)
            return self._head_gates(connection, round_id)

    def board(self, code: str, round_id: int) -> Board:
        """A class-dragon round's heads: gates (team means), team sizes and each head's last move."""
        with self.engine.begin() as connection:
            room = self._live_class(connection, code)
            self._open_round(connection, room.id, round_id, "dragon", ended_ok=True)
            return self._board(connection, round_id)

    def head_gates(self, code: str, round_id: int) -> list[float | None]:
        """Each head's gate in a class-dragon round: the mean of its members' latest values (None before any moves)."""
        with self.engine.begin() as connection:
            room = self._live_class(connection, code)
            self._open_round(connection, room.id, round_id, "dragon", ended_ok=True)
            return self._head_gates(connection, round_id)

    # the teacher's view

    def rounds(self, code: str, secret: str) -> list[Round]:
        """A class's rounds, oldest first (teacher or projector)."""
        with self.engine.begin() as connection:
            room = self._reader_class(connection, code, secret)
            rows = connection.execute(sa.select(ROUNDS).where(ROUNDS.c.class_id == room.id).order_by(ROUNDS.c.id))
            return [_round(r) for r in rows]

    def results(self, code: str, secret: str, round_id: int | None = None) -> list[Result]:
        """Every member's result in a class (or one round of it), by round then join order (teacher or projector)."""
        with self.engine.begin() as connection:
            room = self._reader_class(connection, code, secret)
            query = _results_query().where(ROUNDS.c.class_id == room.id)
            if round_id is not None:
                query = query.where(ROUNDS.c.id == checked_id(round_id, "round"))
            return [_result(r) for r in connection.execute(query.order_by(ROUNDS.c.id, MEMBERS.c.joined, MEMBERS.c.id))]

    # inside a transaction

    def _live_class(self, connection: Connection, code: str, *, lock: bool = False,
                    missing_ok: bool = False) -> Row | None:
        query = sa.select(CLASSES).where(CLASSES.c.code == normal_code(code), CLASSES.c.expires > self.clock())
        row = connection.execute(query.with_for_update() if lock else query).first()
        if row is None and not missing_ok:
            raise ClassroomError("class.unknown")  # never was, ended or expired: the same answer
        return row

    def _teacher_class(self, connection: Connection, code: str, secret: str, *, lock: bool = False) -> Row:
        row = self._live_class(connection, code, lock=lock)
        if not isinstance(secret, str) or not hmac.compare_digest(digest(secret), row.secret_hash):
            raise ClassroomError("class.unknown")  # a wrong secret is told nothing more than a wrong code
        return row

    def _reader_class(self, connection: Connection, code: str, credential: str) -> Row:
        """The class, for a call that only reads it: the teacher's secret or the projector's key."""
        row = self._live_class(connection, code)
        wanted = digest(credential) if isinstance(credential, str) else ""
        if not (hmac.compare_digest(wanted, row.secret_hash) or hmac.compare_digest(wanted, row.projector_hash or "")):
            raise ClassroomError("class.unknown")
        return row

    def _member(self, connection: Connection, token: str, *, lock: bool = False,
                missing_ok: bool = False) -> Row | None:
        wanted = digest(token) if isinstance(token, str) else ""
        query = (sa.select(MEMBERS).join(CLASSES, CLASSES.c.id == MEMBERS.c.class_id)
                 .where(MEMBERS.c.token_hash == wanted, CLASSES.c.expires > self.clock()))
        row = connection.execute(query.with_for_update(of=MEMBERS, key_share=True) if lock else query).first()
        if row is None or not hmac.compare_digest(wanted, row.token_hash):
            if missing_ok:
                return None
            raise ClassroomError("member.unknown")
        return row

    def _moving_member(self, connection: Connection, token: str) -> Row:
        """The member, their row locked, after taking one move from their bucket (ClassroomError when it is empty)."""
        me, now = self._member(connection, token, lock=True), self.clock()
        left, wait = self.rate.take(me.bucket, me.bucket_at, now)
        if wait:
            raise ClassroomError("move.too_fast", wait_s=math.ceil(wait * 10) / 10)
        connection.execute(MEMBERS.update().where(MEMBERS.c.id == me.id).values(bucket=left, bucket_at=now))
        return me

    def _open_round(self, connection: Connection, class_id: int, round_id: int, kind: str | None = None,
                    *, ended_ok: bool = False) -> Row:
        mine = sa.and_(ROUNDS.c.id == checked_id(round_id, "round"), ROUNDS.c.class_id == class_id)
        row = connection.execute(sa.select(ROUNDS).where(mine)).first()
        if row is None:
            raise ClassroomError("round.unknown")
        if row.ended is not None and not ended_ok:
            raise ClassroomError("round.ended")
        if kind and row.kind != kind:
            raise ClassroomError("round.kind", kind=row.kind)
        return row

    def _result_row(self, connection: Connection, round_id: int, member_id: int, *, quiet: bool = False) -> Row:
        """The member's results row in the round, made empty on first use (the member's row is locked; `quiet`: it is
        not, and another request of theirs may make the row at the same moment)."""
        where = sa.and_(RESULTS.c.round_id == round_id, RESULTS.c.member_id == member_id)
        row = connection.execute(sa.select(RESULTS).where(where)).first()
        if row is None:
            values = {"round_id": round_id, "member_id": member_id, "hints": 0, "moves": 0}
            if quiet:
                dialect = postgresql if self.engine.dialect.name == "postgresql" else sqlite
                connection.execute(dialect.insert(RESULTS).values(**values).on_conflict_do_nothing())
            else:
                connection.execute(RESULTS.insert().values(**values))
            row = connection.execute(sa.select(RESULTS).where(where)).first()
        return row

    def _result(self, connection: Connection, round_id: int, member_id: int) -> Result | None:
        query = _results_query().where(RESULTS.c.round_id == round_id, RESULTS.c.member_id == member_id)
        row = connection.execute(query).first()
        return None if row is None else _result(row)

    def _heads_of(self, connection: Connection, round_id: int, member_id: int) -> dict[int, float | None]:
        """The heads a member holds in a round, with their own latest values, lowest head first."""
        rows = connection.execute(sa.select(ROUND_HEADS.c.head, ROUND_HEADS.c.gate).where(
            ROUND_HEADS.c.round_id == round_id, ROUND_HEADS.c.member_id == member_id).order_by(ROUND_HEADS.c.head))
        return {r.head: r.gate for r in rows}

    def _seat(self, connection: Connection, round_id: int, member_id: int) -> int:
        """Seat a member at the round's smallest team (the lowest head among equals); the head."""
        teams = self._board(connection, round_id).teams
        head = teams.index(min(teams))
        connection.execute(ROUND_HEADS.insert().values(round_id=round_id, member_id=member_id, head=head))
        return head

    def _move_seat(self, connection: Connection, round_id: int, member_id: int, gate: float, head: int | None,
                   now: datetime) -> int:
        """Set a member's own head (`head`: which, when they hold several) to `gate`; the head moved."""
        held = list(self._heads_of(connection, round_id, member_id))
        if not held or (head is None and len(held) > 1) or (head is not None and head not in held):
            raise ClassroomError("head.none")
        moved = held[0] if head is None else head
        seat = sa.and_(ROUND_HEADS.c.round_id == round_id, ROUND_HEADS.c.member_id == member_id,
                       ROUND_HEADS.c.head == moved)
        connection.execute(ROUND_HEADS.update().where(seat).values(gate=gate, moved=now))
        return moved

    def _keep_best(self, connection: Connection, round_id: int, score: float, stars: int, now: datetime) -> None:
        """A class-dragon round's best score kept (in the UPDATE itself: replicas moving at once lose none); at ★★★
        the round is won and ends."""
        better = sa.or_(ROUNDS.c.best_score.is_(None), ROUNDS.c.best_score < score)
        won = {"ended": now} if stars == 3 else {}
        connection.execute(ROUNDS.update().where(ROUNDS.c.id == round_id, better)
                           .values(best_score=score, best_stars=stars, **won))

    def _note_move(self, connection: Connection, round_id: int, member_id: int, now: datetime, score: float,
                   stars: int, gates: list[float] | None, *, count: bool = True) -> None:
        """One more move in a member's results row (`count=False`: a result without a move): its score, their best
        (and when), their most stars, and their gates (None keeps the last ones)."""
        old = self._result_row(connection, round_id, member_id)
        best = old.best_score is None or score > old.best_score
        moved = {"moves": old.moves + 1, "last_move": now, "first_move": old.first_move or now} if count else {}
        connection.execute(RESULTS.update().where(RESULTS.c.round_id == round_id, RESULTS.c.member_id == member_id)
                           .values(score=score, gates=gates if gates is not None else old.gates, **moved,
                                   stars=max(stars, old.stars or 0), best_score=score if best else old.best_score,
                                   best_at=now if best else old.best_at))

    def _board(self, connection: Connection, round_id: int) -> Board:
        rows = connection.execute(sa.select(ROUND_HEADS.c.head, sa.func.avg(ROUND_HEADS.c.gate),
                                            sa.func.count(), sa.func.max(ROUND_HEADS.c.moved))
                                  .where(ROUND_HEADS.c.round_id == round_id).group_by(ROUND_HEADS.c.head)).all()
        by_head = {head: (mean, count, moved) for head, mean, count, moved in rows}
        empty = (None, 0, None)
        return Board([None if by_head.get(h, empty)[0] is None else float(by_head[h][0]) for h in range(len(HEADS))],
                     [by_head.get(h, empty)[1] for h in range(len(HEADS))],
                     [_naive(by_head.get(h, empty)[2]) for h in range(len(HEADS))])

    def _head_gates(self, connection: Connection, round_id: int) -> list[float | None]:
        means = dict(connection.execute(sa.select(ROUND_HEADS.c.head, sa.func.avg(ROUND_HEADS.c.gate))
                                        .where(ROUND_HEADS.c.round_id == round_id).group_by(ROUND_HEADS.c.head)).all())
        return [None if means.get(h) is None else float(means[h]) for h in range(len(HEADS))]

    def _delete_classes(self, connection: Connection, ids: Sequence[int]) -> int:
        """Delete classes and their rows. Locks in the order every writer takes them (the class's row, then its
        members' rows, then what hangs under them), so a student's move at that moment waits instead of deadlocking."""
        if not ids:
            return 0
        for table, key in ((CLASSES, CLASSES.c.id), (MEMBERS, MEMBERS.c.class_id)):
            connection.execute(sa.select(table.c.id).where(key.in_(ids)).order_by(table.c.id).with_for_update())
        in_rounds = sa.select(ROUNDS.c.id).where(ROUNDS.c.class_id.in_(ids))
        for table in (RESULTS, ROUND_HEADS):
            connection.execute(table.delete().where(table.c.round_id.in_(in_rounds)))
        for table in (ROUNDS, MEMBERS):
            connection.execute(table.delete().where(table.c.class_id.in_(ids)))
        return connection.execute(CLASSES.delete().where(CLASSES.c.id.in_(ids))).rowcount  # another sweep may be first


def _results_query() -> sa.Select:
    return (sa.select(RESULTS, MEMBERS.c.nickname, ROUNDS.c.level_id, ROUNDS.c.class_id)
            .join(MEMBERS, MEMBERS.c.id == RESULTS.c.member_id).join(ROUNDS, ROUNDS.c.id == RESULTS.c.round_id))


def _result(row: Row) -> Result:
    return Result(row.member_id, row.nickname, row.round_id, row.level_id, row.score, row.best_score, row.stars,
                  row.hints, row.moves, row.gates, row.first_move, row.best_at)


def _round(row: Row) -> Round:
    return Round(row.id, row.kind, row.level_id, row.started, row.ended, row.best_score, row.best_stars, row.lang,
                 row.level_code, row.variant, bool(row.exam), bool(row.target_shown))


def _naive(moment: datetime | str | None) -> datetime | None:
    """A max() over a DateTime column: SQLite gives its text, PostgreSQL a datetime."""
    return datetime.fromisoformat(moment) if isinstance(moment, str) else moment


def open_store(url: str | None = None, *, clock: Clock = utc_now, hours: float | None = None,
               rate: RateLimit = RateLimit()) -> ClassroomStore:
    """The store the app uses: an engine on `url` (default database_url()), migrated, classes living class_hours()."""
    engine = make_engine(url)
    migrate(engine)
    return ClassroomStore(engine, clock=clock, hours=class_hours() if hours is None else hours, rate=rate)

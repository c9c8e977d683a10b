"""A live class's database: its environment (DATABASE_URL, DRAGON_DATA_DIR, CLASS_HOURS), tables, engine, migrations."""

import math
import os
import sqlite3
import time
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from dragon.classroom.records import CODE_LENGTH, NICKNAME_MAX, utc_now

ROOT = Path(__file__).resolve().parents[2]
DB_FILE = "classroom.sqlite3"  # under DRAGON_DATA_DIR, else the repository's data/ folder
DEFAULT_HOURS = 12.0
MAX_HOURS = 7 * 24.0
# the key names the module migrate() lived in first: every replica must take the same lock, so it stays
LOCK_KEY = zlib.crc32(b"dragon.classroom.store.migrate")  # PostgreSQL advisory lock held while migrating


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

"""The live class's store (dragon/classroom/store.py) on SQLite, and on PostgreSQL too when DATABASE_URL is set."""

import base64
import hashlib
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

import pytest
import sqlalchemy as sa

from dragon.classroom import store as cs  # monkeypatched where ClassroomStore looks names up
from dragon.classroom.records import CODE_ALPHABET, ClassroomError, NewClass, NewMember, RateLimit
from dragon.classroom.rules import clean_nickname, digest, new_code, normal_code, projector_key
from dragon.classroom.schema import (
    CLASSES,
    DB_FILE,
    METADATA,
    ROOT,
    SCHEMA_VERSION,
    VERSIONS,
    class_hours,
    database_url,
    make_engine,
    migrate,
)
from dragon.classroom.store import ClassroomStore, open_store

BACKENDS = ["sqlite", *(["postgresql"] if os.environ.get("DATABASE_URL") else [])]
GATES = [0.5] * 8


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = datetime(2030, 1, 7, 8, 0)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:
    """An empty database: a new SQLite file, or a new PostgreSQL schema (dropped afterwards)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'class.sqlite3'}"
        return
    base = sa.engine.make_url(database_url())
    schema = f"test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(base)
    with admin.begin() as connection:
        connection.exec_driver_sql(f"CREATE SCHEMA {schema}")
    yield base.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
    with admin.begin() as connection:
        connection.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
    admin.dispose()


@pytest.fixture
def engines(url: str) -> Iterator[list[sa.Engine]]:
    """Engines on the database, as separate processes would have them; disposed at the end."""
    made: list[sa.Engine] = []
    yield made
    for engine in made:
        engine.dispose()


def engine_on(url: str, engines: list[sa.Engine]) -> sa.Engine:
    engines.append(make_engine(url))
    return engines[-1]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(url: str, engines: list[sa.Engine], clock: Clock) -> ClassroomStore:
    engine = engine_on(url, engines)
    migrate(engine)
    return ClassroomStore(engine, clock=clock, rate=RateLimit(per_second=5, burst=10))


def rows(store: ClassroomStore) -> dict[str, list[tuple]]:
    """Every row of every table, by table name."""
    with store.engine.connect() as connection:
        return {t.name: [tuple(r) for r in connection.execute(sa.select(t))] for t in METADATA.sorted_tables}


def refused(reason: str) -> pytest.RaisesExc:
    return pytest.raises(ClassroomError, match=rf"^{reason}\b")


# --- schema and migrations -----------------------------------------------------------------------------------------


def test_schema_is_made_from_nothing_and_migrating_again_changes_nothing(url: str, engines: list) -> None:
    engine = engine_on(url, engines)
    assert sa.inspect(engine).get_table_names() == []
    assert migrate(engine) == SCHEMA_VERSION
    inspector = sa.inspect(engine)
    assert sorted(inspector.get_table_names()) == sorted(t.name for t in METADATA.sorted_tables)
    for table in METADATA.sorted_tables:  # the database holds the tables as the module defines them
        assert [c["name"] for c in inspector.get_columns(table.name)] == [c.name for c in table.columns], table.name
    with engine.connect() as connection:
        first = connection.execute(sa.select(VERSIONS)).all()
    assert [v for v, _ in first] == list(range(1, SCHEMA_VERSION + 1))
    assert migrate(engine) == SCHEMA_VERSION
    with engine.connect() as connection:
        assert connection.execute(sa.select(VERSIONS)).all() == first


def test_two_starts_at_once_migrate_once(url: str, engines: list) -> None:
    """Two processes starting on an empty database: one makes the schema, the other waits for it and finds it."""
    pair = [engine_on(url, engines) for _ in range(2)]
    start, outcomes = threading.Barrier(2), []

    def run(engine: sa.Engine) -> None:
        start.wait()
        try:
            outcomes.append(migrate(engine))
        except Exception as error:  # the assertion below names it
            outcomes.append(error)

    threads = [threading.Thread(target=run, args=(e,)) for e in pair]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert outcomes == [SCHEMA_VERSION, SCHEMA_VERSION]
    with pair[0].connect() as connection:
        assert connection.scalars(sa.select(VERSIONS.c.version)).all() == list(range(1, SCHEMA_VERSION + 1))


V1_ROUND_HEADS = """CREATE TABLE round_heads (round_id INTEGER NOT NULL REFERENCES rounds (id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members (id) ON DELETE CASCADE, head INTEGER NOT NULL, gate FLOAT,
    moved TIMESTAMP, PRIMARY KEY (round_id, member_id))"""


STEP_3_COLUMNS = {"classes": ["projector_hash"], "members": ["status", "browser_hash"],
                  "rounds": ["variant", "exam", "target_shown"]}


def back_to_version_2(connection: sa.Connection) -> None:
    """Undo step 3: its columns and table go, and its mark."""
    for table, columns in STEP_3_COLUMNS.items():
        for column in columns:
            connection.execute(sa.text(f"ALTER TABLE {table} DROP COLUMN {column}"))
    connection.execute(sa.text("DROP TABLE address_events"))
    connection.execute(VERSIONS.delete().where(VERSIONS.c.version > 2))


def test_a_version_1_database_is_brought_up_to_date_with_its_classes(url: str, engines: list, clock: Clock) -> None:
    """Version 1 had one head per member and no round language: step 2 adds them, keeping classes and members."""
    engine = engine_on(url, engines)
    migrate(engine)
    with engine.begin() as connection:  # back to version 1's tables
        back_to_version_2(connection)
        connection.execute(sa.text("DROP TABLE round_heads"))
        connection.execute(sa.text(V1_ROUND_HEADS))
        for column in ("lang", "level_code"):
            connection.execute(sa.text(f"ALTER TABLE rounds DROP COLUMN {column}"))
        connection.execute(VERSIONS.delete().where(VERSIONS.c.version > 1))
        connection.execute(CLASSES.insert().values(code="BCDFGH", secret_hash=digest("s"), created=clock(),
                                                      expires=clock() + timedelta(hours=1), settings={}))
    assert migrate(engine) == SCHEMA_VERSION == 3
    store = ClassroomStore(engine, clock=clock)
    ana = store.join("BCDFGH", "Ana")
    round_id = store.start_round("BCDFGH", "s", "dragon", "2-1", {ana.member_id: [0, 4]}, lang="en")
    assert store.my_heads(ana.token, round_id) == {0: None, 4: None}
    assert store.current_round("BCDFGH").lang == "en"


def test_a_version_2_database_is_brought_up_to_date_with_its_classes(url: str, engines: list, clock: Clock) -> None:
    """Step 3 adds the projector key's hash, a member's status and browser, a round's exam variant and the address
    limits' table: a version-2 class keeps its members and rounds, each active, no exam, and gets a projector key."""
    engine = engine_on(url, engines)
    migrate(engine)
    with engine.begin() as connection:
        back_to_version_2(connection)
        connection.execute(CLASSES.insert().values(code="BCDFGH", secret_hash=digest("s"), created=clock(),
                                                      expires=clock() + timedelta(hours=1), settings={"exam": True}))
        class_id = connection.scalar(sa.select(CLASSES.c.id))
        connection.execute(sa.text("INSERT INTO members (class_id, nickname, nickname_key, token_hash, joined, bucket, "
                                   "bucket_at) VALUES (:c, 'Ana', 'ana', :t, :j, 10, :j)"),
                           {"c": class_id, "t": digest("ana-token"), "j": clock()})
        connection.execute(sa.text("INSERT INTO rounds (class_id, kind, level_id, started) VALUES (:c, 'everyone', "
                                   "'2-1', :s)"), {"c": class_id, "s": clock()})
    assert migrate(engine) == SCHEMA_VERSION == 3
    inspector = sa.inspect(engine)
    for table in METADATA.sorted_tables:  # the same tables as a new database's
        assert [c["name"] for c in inspector.get_columns(table.name)] == [c.name for c in table.columns], table.name
    store = ClassroomStore(engine, clock=clock)
    assert store.member("ana-token").status == "active"
    assert store.class_info("BCDFGH").settings == {"show_names": True, "exam": True, "locked": False, "size": 60}
    (old,) = store.rounds("BCDFGH", "s")
    assert (old.exam, old.target_shown, old.variant) == (False, False, None)
    assert not store.is_projector("BCDFGH", projector_key("s"))  # no key until the teacher's page asks for it
    assert store.projector_key("BCDFGH", "s") == projector_key("s")
    assert store.is_projector("BCDFGH", projector_key("s"))
    store.leave("ana-token")
    assert store.join("BCDFGH", "Ana").rejoined


def test_fewer_students_than_heads_hold_several_each(store: ClassroomStore) -> None:
    opened = store.open_class()
    ana, ben = (store.join(opened.code, n) for n in ("Ana", "Ben"))
    round_id = store.start_round(opened.code, opened.secret, "dragon", "2-1",
                                 {ana.member_id: [0, 2, 4, 6], ben.member_id: [1, 3, 5, 7]})
    with refused("head.none"):
        store.set_gate(ana.token, round_id, 0.3)  # which of her four? she must say
    with refused("head.none"):
        store.set_gate(ana.token, round_id, 0.3, head=1)  # Ben's
    gates = store.set_gate(ana.token, round_id, 0.3, head=4)
    assert gates == [None, None, None, None, pytest.approx(0.3), None, None, None]
    assert store.my_heads(ana.token, round_id) == {0: None, 2: None, 4: pytest.approx(0.3), 6: None}
    board = store.board(opened.code, round_id)
    assert board.teams == [1] * 8 and board.moved[4] is not None and board.moved[0] is None
    with pytest.raises(ValueError):
        store.set_gate(ana.token, round_id, 0.3, head=True)


def test_a_late_student_takes_a_seat_at_the_smallest_team(store: ClassroomStore) -> None:
    opened = store.open_class()
    first = [store.join(opened.code, f"S{i}") for i in range(9)]
    round_id = store.start_round(opened.code, opened.secret, "dragon", "2-1",
                                 {m.member_id: i % 8 for i, m in enumerate(first)})
    assert store.board(opened.code, round_id).teams == [2, 1, 1, 1, 1, 1, 1, 1]
    late = store.join(opened.code, "Late")
    assert store.my_heads(late.token, round_id) == {}
    assert store.take_seat(late.token, round_id) == {1: None}  # the lowest of the teams of one
    assert store.take_seat(late.token, round_id) == {1: None}  # seated once
    assert store.take_seat(first[0].token, round_id) == {0: None}  # the seated keep their seat
    assert store.board(opened.code, round_id).teams == [2, 2, 1, 1, 1, 1, 1, 1]


def test_three_stars_win_the_round_together_and_end_it(store: ClassroomStore) -> None:
    opened = store.open_class()
    ana = store.join(opened.code, "Ana")
    round_id = store.start_round(opened.code, opened.secret, "dragon", "2-1", {ana.member_id: list(range(8))})
    assert store.record_round_score(opened.code, round_id, 90.0, 2) is False
    assert store.current_round(opened.code).round_id == round_id
    assert store.record_round_score(opened.code, round_id, 96.0, 3) is True
    assert store.current_round(opened.code) is None
    done = store.round_of(opened.code, round_id)
    assert (done.best_score, done.best_stars, done.ended is not None) == (96.0, 3, True)
    with refused("round.ended"):
        store.set_gate(ana.token, round_id, 0.5, head=0)
    with refused("round.unknown"):
        store.round_of(store.open_class().code, round_id)


def test_a_database_from_a_newer_app_is_refused(store: ClassroomStore) -> None:
    with store.engine.begin() as connection:
        connection.execute(VERSIONS.insert().values(version=SCHEMA_VERSION + 1, applied=datetime(2031, 1, 1)))
    with pytest.raises(RuntimeError, match="newer than this app"):
        migrate(store.engine)


def test_the_default_database_is_a_wal_file_made_on_first_use(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "new" / "data"
    monkeypatch.setenv("DRAGON_DATA_DIR", str(folder))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    store = open_store()
    try:
        assert (folder / DB_FILE).is_file()
        with store.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    finally:
        store.engine.dispose()
    monkeypatch.delenv("DRAGON_DATA_DIR")
    assert database_url() == f"sqlite:///{ROOT / 'data' / DB_FILE}"


@pytest.mark.parametrize(
    "given, used",
    [
        ("postgres://u:p@db:5432/school", "postgresql+psycopg://u:p@db:5432/school"),
        ("postgresql://u@/school?host=/run/pg", "postgresql+psycopg://u@/school?host=/run/pg"),
        ("postgresql+psycopg://u@db/school", "postgresql+psycopg://u@db/school"),
        ("  sqlite:////srv/class.db ", "sqlite:////srv/class.db"),
    ],
)
def test_database_url_takes_psycopg_3(given: str, used: str) -> None:
    assert database_url({"DATABASE_URL": given}) == used


def test_only_sqlite_and_postgresql_are_taken() -> None:
    with pytest.raises(ValueError, match="not 'mysql'"):
        make_engine("mysql://u@db/school")


# --- codes and secrets ---------------------------------------------------------------------------------------------


def test_codes_are_six_letters_with_no_look_alikes() -> None:
    assert not set(CODE_ALPHABET) & set("IL1O0QU" + "AEY")  # no look-alikes, no vowels (so no words)
    assert CODE_ALPHABET.isalpha() and CODE_ALPHABET.isupper() and len(set(CODE_ALPHABET)) >= 16
    codes = {new_code() for _ in range(500)}
    assert all(len(c) == 6 and set(c) <= set(CODE_ALPHABET) for c in codes)
    assert len(codes) > 490  # random: 18⁶ ≈ 34 million codes
    assert normal_code(" bcdfgh ") == "BCDFGH" and normal_code("BCDFGI") == normal_code("BCDFG") == ""


def test_a_code_is_unique_among_live_classes(store: ClassroomStore, clock: Clock,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = iter(["BCDFGH", "BCDFGH", "BCDFGH", "BCDFGJ", "BCDFGJ", "BCDFGH"])
    monkeypatch.setattr(cs, "new_code", lambda: next(drawn))
    first = store.open_class()
    clock.advance(hours=1)
    second = store.open_class()  # BCDFGH is taken, twice: the third draw
    assert (first.code, second.code) == ("BCDFGH", "BCDFGJ")
    clock.advance(hours=11)  # the first class has expired: its code is free again, the second's is not
    third = store.open_class()
    assert third.code == "BCDFGH" and store.is_teacher("BCDFGH", third.secret)
    assert not store.is_teacher("BCDFGH", first.secret) and store.is_teacher("BCDFGJ", second.secret)


def test_the_teacher_secret_has_256_bits_and_only_its_hash_is_stored(store: ClassroomStore) -> None:
    opened = [store.open_class() for _ in range(3)]
    member = store.join(opened[0].code, "Ana")
    for secret in [o.secret for o in opened] + [member.token]:
        assert len(base64.urlsafe_b64decode(secret + "=")) * 8 >= 256
    assert len({o.secret for o in opened}) == 3
    everything = repr(rows(store))
    assert not any(o.secret in everything for o in opened) and member.token not in everything
    with store.engine.connect() as connection:
        hashes = set(connection.scalars(sa.select(CLASSES.c.secret_hash)))
    assert hashes == {hashlib.sha256(o.secret.encode()).hexdigest() for o in opened}
    assert hashlib.sha256(member.token.encode()).hexdigest() in everything


def test_a_wrong_secret_is_refused(store: ClassroomStore) -> None:
    mine, other = store.open_class(), store.open_class()
    student = store.join(mine.code, "Ana")
    assert store.is_teacher(mine.code, mine.secret) and store.is_teacher(mine.code.lower(), mine.secret)
    for wrong in ("", mine.secret[:-1], mine.secret + "x", other.secret, student.token, None):
        assert not store.is_teacher(mine.code, wrong)
        with refused("class.unknown"):  # the same answer as a wrong code: no oracle for either
            store.members(mine.code, wrong)
        with refused("class.unknown"):
            store.end_class(mine.code, wrong)
    with refused("class.unknown"):
        store.members("ZZZZZZ", mine.secret)
    with refused("class.unknown"):
        store.remove_member(mine.code, other.secret, student.member_id)
    assert [m.nickname for m in store.members(mine.code, mine.secret)] == ["Ana"]


# --- nicknames -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "typed, stored",
    [
        ("  Ana  ", "Ana"),
        ("Ana \n\t Li", "Ana Li"),  # runs of spaces, tabs and newlines are one space
        ("a" * 20, "a" * 20),
        ("  " + "b" * 20 + " ", "b" * 20),  # counted after trimming
        ("🐉 龙骑士", "🐉 龙骑士"),
        ("👩‍👩‍👧‍👦 Mia", "👩‍👩‍👧‍👦 Mia"),  # emoji joined by ZWJ: kept
        ("علي", "علي"),  # right-to-left letters
        ("שלום", "שלום"),
        ("Jose\u0301", "José"),  # NFKC composes
        ("ｍｅｉ", "mei"),  # NFKC: stored as the plain letters
        ("<b>Tom</b>", "<b>Tom</b>"),  # markup is text: the store keeps it exactly, the UI escapes it
        ("${x}&amp;\"'", "${x}&amp;\"'"),
    ],
)
def test_a_nickname_is_kept_exactly(store: ClassroomStore, typed: str, stored: str) -> None:
    opened = store.open_class()
    assert clean_nickname(typed) == stored
    joined = store.join(opened.code, typed)
    assert joined.nickname == stored
    assert [m.nickname for m in store.members(opened.code, opened.secret)] == [stored]
    assert store.member(joined.token).nickname == stored


@pytest.mark.parametrize(
    "typed, reason",
    [
        ("", "nickname.empty"),
        (" \u3000\n ", "nickname.empty"),
        ("a" * 21, "nickname.too_long"),
        ("🐉" * 21, "nickname.too_long"),
        ("<script>alert(1)</script>", "nickname.too_long"),
        ("\u202eevil", "nickname.hidden"),  # right-to-left override: would turn the text around the name
        ("Ana\u200f", "nickname.hidden"),  # right-to-left mark
        ("\u2067Ana\u2069", "nickname.hidden"),  # isolate
        ("Ana\u200b", "nickname.hidden"),  # zero-width space: Ana twice, looking the same
        ("Ana\x00", "nickname.hidden"),
        ("Ana\x1b[31m", "nickname.hidden"),
        ("Ana\U000e0041", "nickname.hidden"),  # a tag character (hidden text)
        ("Ana\ud800", "nickname.hidden"),  # half an emoji
        ("🐉", "nickname.no_letter"),  # a name shows a letter, a digit or a CJK character
    ],
)
def test_a_bad_nickname_is_refused(store: ClassroomStore, typed: str, reason: str) -> None:
    opened = store.open_class()
    with refused(reason):
        store.join(opened.code, typed)
    assert store.members(opened.code, opened.secret) == []


def test_a_nickname_taken_in_the_class_is_refused(store: ClassroomStore) -> None:
    mine, other = store.open_class(), store.open_class()
    store.join(mine.code, "Tom")
    for alike in ("Tom", " tom ", "TOM", "ＴＯＭ"):  # case and full-width forms are the same name
        with refused("nickname.taken"):
            store.join(mine.code, alike)
    assert store.join(other.code, "Tom").nickname == "Tom"  # another class is another room
    assert store.join(mine.code, "Tom2").nickname == "Tom2"
    assert [m.nickname for m in store.members(mine.code, mine.secret)] == ["Tom", "Tom2"]


def test_a_full_class_is_refused(store: ClassroomStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cs, "MAX_MEMBERS", 3)
    opened = store.open_class()
    for name in "ABC":
        store.join(opened.code, name)
    with refused("class.full"):
        store.join(opened.code, "D")


def test_an_unknown_code_is_refused(store: ClassroomStore) -> None:
    for code in ("BCDFGH", "", "I" * 6, "<b>", "x" * 1000):
        with refused("class.unknown"):
            store.join(code, "Ana")


# --- members, moves, results ---------------------------------------------------------------------------------------


def test_the_teacher_removes_a_member_and_everything_of_theirs(store: ClassroomStore) -> None:
    opened = store.open_class()
    ana, ben = store.join(opened.code, "Ana"), store.join(opened.code, "Ben")
    everyone = store.start_round(opened.code, opened.secret, "everyone", "2-1")
    store.record_move(ana.token, everyone, GATES, 60.0, 0)
    store.record_move(ben.token, everyone, GATES, 70.0, 1)
    dragon = store.start_round(opened.code, opened.secret, "dragon", "2-2", {ana.member_id: 0, ben.member_id: 1})
    store.set_gate(ana.token, dragon, 0.25)
    assert store.remove_member(opened.code, opened.secret, ana.member_id) is True
    assert store.remove_member(opened.code, opened.secret, ana.member_id) is False
    assert [m.nickname for m in store.members(opened.code, opened.secret)] == ["Ben"]
    assert [r.nickname for r in store.results(opened.code, opened.secret)] == ["Ben"]
    assert store.member(ana.token) is None
    with refused("member.unknown"):
        store.set_gate(ana.token, dragon, 0.5)
    assert store.my_heads(ben.token, dragon) == {0: 0.25, 1: None}  # her head dealt to Ben, at her last value
    left = rows(store)
    assert {r[1] for r in left["round_heads"] + left["results"]} == {ben.member_id}  # (round_id, member_id, …)
    with refused("member.removed"):
        store.join(opened.code, "Ana")  # removed for good


def test_moves_are_recorded_with_the_servers_score_and_listed(store: ClassroomStore, clock: Clock) -> None:
    opened, other = store.open_class(), store.open_class()
    ana, ben = store.join(opened.code, "Ana"), store.join(opened.code, "Ben")
    round_id = store.start_round(opened.code, opened.secret, "everyone", "2-1")
    assert store.current_round(opened.code).round_id == round_id and store.current_round(other.code) is None
    assert store.my_result(ana.token, round_id) is None
    store.record_move(ana.token, round_id, [0.1] * 8, 55.0, 0)
    clock.advance(seconds=30)
    best = store.record_move(ana.token, round_id, [0.9] * 8, 96.5, 3)
    clock.advance(seconds=30)
    assert store.record_hint(ana.token, round_id) == 1
    latest = store.record_move(ana.token, round_id, [0.2] * 8, 80.0, 1)
    assert (latest.score, latest.best_score, latest.stars, latest.moves, latest.hints) == (80.0, 96.5, 3, 3, 1)
    assert latest.gates == [0.2] * 8 and latest.best_at == best.first_move + timedelta(seconds=30)
    store.record_move(ben.token, round_id, GATES, 72.0, 1)
    listed = store.results(opened.code, opened.secret)
    assert [(r.nickname, r.level_id, r.best_score, r.stars) for r in listed] == [("Ana", "2-1", 96.5, 3),
                                                                               ("Ben", "2-1", 72.0, 1)]
    assert store.my_result(ben.token, round_id).nickname == "Ben"  # a student sees their own result only
    assert store.results(other.code, other.secret) == []


def test_a_move_is_checked_before_it_is_recorded(store: ClassroomStore) -> None:
    opened, other = store.open_class(), store.open_class()
    ana = store.join(opened.code, "Ana")
    round_id = store.start_round(opened.code, opened.secret, "everyone", "2-1")
    elsewhere = store.start_round(other.code, other.secret, "everyone", "2-1")
    bad = [([0.5] * 7, 50, 1), ([0.5] * 7 + [1.5], 50, 1), ([0.5] * 7 + [float("nan")], 50, 1),
           (GATES, 100.5, 3), (GATES, float("nan"), 1), (GATES, True, 1), (GATES, 50, 4), (GATES, 50, 1.0)]
    for gates, score, stars in bad:
        with pytest.raises(ValueError):
            store.record_move(ana.token, round_id, gates, score, stars)
    with refused("round.unknown"):
        store.record_move(ana.token, elsewhere, GATES, 50.0, 1)  # another class's round
    with refused("member.unknown"):
        store.record_move(opened.secret, round_id, GATES, 50.0, 1)  # the teacher's secret is no student's token
    store.end_round(opened.code, opened.secret, round_id)
    with refused("round.ended"):
        store.record_move(ana.token, round_id, GATES, 50.0, 1)
    assert store.current_round(opened.code) is None and rows(store)["results"] == []


def test_in_the_class_dragon_a_student_moves_only_their_own_head(store: ClassroomStore) -> None:
    opened = store.open_class()
    ana, ben, cai, dan = (store.join(opened.code, n) for n in ("Ana", "Ben", "Cai", "Dan"))
    heads = {ana.member_id: 2, ben.member_id: 2, cai.member_id: 6}  # a team of two on Emotion; Dan watches
    round_id = store.start_round(opened.code, opened.secret, "dragon", "2-1", heads)
    assert [store.my_head(m.token, round_id) for m in (ana, ben, cai, dan)] == [2, 2, 6, None]
    store.set_gate(ana.token, round_id, 0.2)
    assert store.head_gates(opened.code, round_id)[2] == pytest.approx(0.2)
    gates = store.set_gate(ben.token, round_id, 0.6)
    assert gates[2] == pytest.approx(0.4) and gates[6] is None  # a team's gate is its members' mean
    store.set_gate(ana.token, round_id, 1.0)
    store.set_gate(cai.token, round_id, 0.75)
    assert store.head_gates(opened.code, round_id) == pytest.approx([None, None, 0.8, None, None, None, 0.75, None])
    with refused("head.none"):
        store.set_gate(dan.token, round_id, 0.5)
    with refused("round.kind"):
        store.record_move(ana.token, round_id, GATES, 50.0, 1)
    store.record_round_score(opened.code, round_id, 88.0, 2)
    store.record_round_score(opened.code, round_id, 70.0, 1)  # the best is kept
    assert (store.current_round(opened.code).best_score, store.current_round(opened.code).best_stars) == (88.0, 2)
    with pytest.raises(ValueError):
        store.start_round(opened.code, opened.secret, "dragon", "2-1", {ana.member_id: 8})
    stranger = store.join(store.open_class().code, "Eve")
    with refused("member.unknown"):
        store.start_round(opened.code, opened.secret, "dragon", "2-1", {stranger.member_id: 0})


def test_moves_are_rate_limited_then_allowed_again(store: ClassroomStore, clock: Clock, url: str,
                                                  engines: list) -> None:
    opened = store.open_class()
    ana, ben = store.join(opened.code, "Ana"), store.join(opened.code, "Ben")
    round_id = store.start_round(opened.code, opened.secret, "everyone", "2-1")
    for _ in range(10):  # the burst
        store.record_move(ana.token, round_id, GATES, 50.0, 1)
    with pytest.raises(ClassroomError) as too_fast:
        store.record_move(ana.token, round_id, GATES, 99.0, 3)
    assert too_fast.value.reason == "move.too_fast" and too_fast.value.detail == {"wait_s": 0.2}
    replica = ClassroomStore(engine_on(url, engines), clock=clock, rate=store.rate)  # the limit is in the database
    with refused("move.too_fast"):
        replica.record_move(ana.token, round_id, GATES, 99.0, 3)
    with refused("move.too_fast"):
        store.record_hint(ana.token, round_id)
    store.record_move(ben.token, round_id, GATES, 60.0, 1)  # only Ana waits
    clock.advance(seconds=0.2)
    assert replica.record_move(ana.token, round_id, GATES, 99.0, 3).moves == 11  # refused moves left nothing
    with refused("move.too_fast"):
        store.record_move(ana.token, round_id, GATES, 99.0, 3)
    clock.advance(seconds=60)  # a long pause refills the bucket to the burst, no more
    for _ in range(10):
        store.record_move(ana.token, round_id, GATES, 50.0, 1)
    with refused("move.too_fast"):
        store.record_move(ana.token, round_id, GATES, 50.0, 1)


def test_moves_at_the_same_moment_share_one_bucket(store: ClassroomStore) -> None:
    opened = store.open_class()
    ana = store.join(opened.code, "Ana")
    round_id = store.start_round(opened.code, opened.secret, "everyone", "2-1")
    threads, outcomes = 16, []
    start = threading.Barrier(threads)

    def move() -> None:
        start.wait()
        try:
            outcomes.append(store.record_move(ana.token, round_id, GATES, 50.0, 1).moves)
        except ClassroomError as error:
            outcomes.append(error.reason)

    running = [threading.Thread(target=move) for _ in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join(30)
    assert sorted(o for o in outcomes if isinstance(o, int)) == list(range(1, 11))  # the clock stands still
    assert outcomes.count("move.too_fast") == 6


def test_the_rate_limit_bucket() -> None:
    limit, t = RateLimit(per_second=4, burst=2), datetime(2030, 1, 1)
    assert limit.take(2.0, t, t) == (1.0, 0.0)
    assert limit.take(0.0, t, t) == (0.0, 0.25)
    assert limit.take(0.0, t, t + timedelta(seconds=0.25)) == (0.0, 0.0)
    assert limit.take(0.0, t, t + timedelta(hours=1)) == (1.0, 0.0)  # never more than the burst
    assert limit.take(0.5, t, t - timedelta(seconds=5)) == (0.5, 0.125)  # a clock behind gives nothing back


# --- deletion ------------------------------------------------------------------------------------------------------


def fill(store: ClassroomStore, names: str) -> NewClass:
    """A class with members, a round of each kind, moves, gates and a hint."""
    opened = store.open_class()
    joined = [store.join(opened.code, n) for n in names]
    everyone = store.start_round(opened.code, opened.secret, "everyone", "2-1")
    for m in joined:
        store.record_move(m.token, everyone, GATES, 70.0, 1)
        store.record_hint(m.token, everyone)
    dragon = store.start_round(opened.code, opened.secret, "dragon", "2-2", {m.member_id: 3 for m in joined})
    for m in joined:
        store.set_gate(m.token, dragon, 0.5)
    return opened


def counts(store: ClassroomStore) -> dict[str, int]:
    return {name: len(found) for name, found in rows(store).items() if name not in ("schema_versions",
                                                                                       "address_events")}


def test_an_expired_class_goes_with_all_its_rows_and_nothing_of_another(store: ClassroomStore, clock: Clock) -> None:
    old = fill(store, ["Ana", "Ben"])
    clock.advance(hours=6)
    young = fill(store, ["Cai"])
    alone = counts(store)
    clock.advance(hours=6)  # the first class is 12 hours old
    assert store.class_info(old.code) is None and store.class_info(young.code) is not None
    with refused("class.unknown"):  # expired is gone for every call, swept or not
        store.members(old.code, old.secret)
    assert store.delete_expired() == 1
    assert counts(store) == {"classes": 1, "members": 1, "rounds": 2, "round_heads": 1, "results": 1}
    assert alone == {"classes": 2, "members": 3, "rounds": 4, "round_heads": 3, "results": 3}
    assert [m.nickname for m in store.members(young.code, young.secret)] == ["Cai"]
    assert [r.nickname for r in store.results(young.code, young.secret)] == ["Cai"]
    assert store.delete_expired() == 0


def test_ending_a_class_deletes_it_and_everything_under_it(store: ClassroomStore) -> None:
    ended, kept = fill(store, ["Ana", "Ben"]), fill(store, ["Cai"])
    ana = store.join(ended.code, "Dan")
    store.end_class(ended.code, ended.secret)
    assert counts(store) == {"classes": 1, "members": 1, "rounds": 2, "round_heads": 1, "results": 1}
    assert store.member(ana.token) is None and store.class_info(ended.code) is None
    assert not store.is_teacher(ended.code, ended.secret)
    with refused("class.unknown"):
        store.join(ended.code, "Eve")
    assert store.is_teacher(kept.code, kept.secret)


@pytest.mark.parametrize("hours, expected", [(None, 12.0), ("", 12.0), ("0.5", 0.5), (" 48 ", 48.0)])
def test_class_hours(hours: str | None, expected: float) -> None:
    assert class_hours({} if hours is None else {"CLASS_HOURS": hours}) == expected


@pytest.mark.parametrize("hours", ["0", "-1", "169", "nan", "inf", "twelve"])
def test_class_hours_out_of_range_stop_the_start(hours: str) -> None:
    with pytest.raises(ValueError, match="CLASS_HOURS"):
        class_hours({"CLASS_HOURS": hours})


def test_a_class_lives_class_hours(store: ClassroomStore, clock: Clock) -> None:
    short = ClassroomStore(store.engine, clock=clock, hours=0.5)
    opened = short.open_class()
    assert opened.expires == clock.now + timedelta(minutes=30)
    clock.advance(minutes=29)
    assert short.class_info(opened.code) is not None
    clock.advance(minutes=1)
    assert short.class_info(opened.code) is None


def test_settings_are_known_booleans(store: ClassroomStore) -> None:
    opened = store.open_class({"exam": True})
    assert store.class_info(opened.code).settings == {"show_names": True, "exam": True, "locked": False, "size": 60}
    assert store.set_settings(opened.code, opened.secret, {"show_names": False, "size": 30}) == {
        "show_names": False, "exam": True, "locked": False, "size": 30}
    for bad in ({"hints": True}, {"exam": "yes"}, {"size": True}, {"size": 1}, {"size": 201}, {"size": 30.0},
                {"locked": 1}):
        with pytest.raises(ValueError):
            store.open_class(bad)
    with refused("class.unknown"):
        store.set_settings(opened.code, "guess", {"exam": False})


def test_ending_a_class_while_its_students_move_is_clean(url: str, engines: list, clock: Clock) -> None:
    """Every call made while the teacher ends the class (or removes a member) either lands or is refused; none
    deadlocks, none fails otherwise."""
    store = ClassroomStore(engine_on(url, engines), clock=clock, rate=RateLimit(per_second=1, burst=10_000))
    migrate(store.engine)
    for _ in range(2):
        opened = store.open_class()
        joined = [store.join(opened.code, f"S{i}") for i in range(5)]
        everyone = store.start_round(opened.code, opened.secret, "everyone", "2-1")
        start, outcomes, stop = threading.Barrier(len(joined) + 1), [], threading.Event()

        def play(member: NewMember, round_id: int = everyone, start: threading.Barrier = start,
                 stop: threading.Event = stop, outcomes: list = outcomes) -> None:
            store.record_move(member.token, round_id, GATES, 50.0, 1)
            start.wait()  # every student has moved once and goes on moving while the teacher acts
            while not stop.is_set():
                try:
                    store.record_move(member.token, round_id, GATES, 50.0, 1)
                    store.record_hint(member.token, round_id)
                    outcomes.append("moved")
                    time.sleep(0.01)  # a breath between moves (still ten times the rate a class is allowed)
                except ClassroomError as error:
                    outcomes.append(error.reason)
                    return
                except Exception as error:  # the assertion below names it
                    outcomes.append(repr(error))
                    return

        threads = [threading.Thread(target=play, args=(m,)) for m in joined]
        for thread in threads:
            thread.start()
        start.wait()
        store.remove_member(opened.code, opened.secret, joined[0].member_id)
        store.start_round(opened.code, opened.secret, "dragon", "2-2", {m.member_id: 1 for m in joined[1:]})
        store.end_class(opened.code, opened.secret)
        stop.set()
        for thread in threads:
            thread.join(30)
        assert not any(t.is_alive() for t in threads)
        assert set(outcomes) <= {"moved", "member.unknown", "round.ended", "round.unknown"}, set(outcomes)
    assert counts(store) == {"classes": 0, "members": 0, "rounds": 0, "round_heads": 0, "results": 0}


def test_a_move_holding_its_lock_when_the_class_ends_waits_for_no_deadlock(store: ClassroomStore) -> None:
    """The teacher ends the class while a student's move holds that student's row: the end waits for the move (it
    locks in the move's order: class, members, then their rows), and then deletes everything."""
    opened = store.open_class()
    ana = store.join(opened.code, "Ana")
    round_id = store.start_round(opened.code, opened.secret, "everyone", "2-1")
    store.record_move(ana.token, round_id, GATES, 50.0, 1)
    locked, go, outcomes = threading.Event(), threading.Event(), {}

    def pause_after_the_lock(_conn, _cursor, statement: str, *_args) -> None:
        if threading.current_thread().name == "student" and "JOIN classes" in statement and not locked.is_set():
            locked.set()  # the move holds Ana's row (on SQLite: the database's write lock)
            go.wait(10)

    def call(name: str, fn: Callable, *args: object) -> None:
        try:
            outcomes[name] = fn(*args)
        except Exception as error:  # the assertion below names it
            outcomes[name] = error

    sa.event.listen(store.engine, "after_cursor_execute", pause_after_the_lock)
    student = threading.Thread(target=call, name="student",
                               args=("student", store.record_move, ana.token, round_id, GATES, 90.0, 3))
    teacher = threading.Thread(target=call, args=("teacher", store.end_class, opened.code, opened.secret))
    student.start()
    assert locked.wait(10)
    teacher.start()
    wait_until_blocked(store.engine)
    go.set()
    student.join(30)
    teacher.join(30)
    sa.event.remove(store.engine, "after_cursor_execute", pause_after_the_lock)
    assert outcomes["teacher"] is None and outcomes["student"].best_score == 90.0, outcomes
    assert counts(store) == {"classes": 0, "members": 0, "rounds": 0, "round_heads": 0, "results": 0}


def wait_until_blocked(engine: sa.Engine) -> None:
    """Until another transaction waits for a lock (PostgreSQL), or a moment (SQLite's waiting is not visible)."""
    if engine.dialect.name != "postgresql":
        time.sleep(0.2)
        return
    deadline = time.monotonic() + 10
    with engine.connect() as connection:
        while not connection.scalar(sa.text("SELECT count(*) FROM pg_locks WHERE NOT granted")):
            assert time.monotonic() < deadline, "the teacher's call never waited"
            connection.rollback()
            time.sleep(0.02)

"""A live class's store (SQLAlchemy Core, SQLite or PostgreSQL): ClassroomStore's operations, one transaction each."""

import hmac
import math
import secrets
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine, Row

from dragon.classroom.records import (
    CODE_TRIES,
    DEFAULT_SETTINGS,
    KINDS,
    MAX_MEMBERS,
    OPENS_PER_HOUR,
    OPENS_WINDOW,
    WRONG_CODES,
    WRONG_CODES_WINDOW,
    Board,
    ClassInfo,
    ClassroomError,
    Clock,
    Member,
    Moved,
    NewClass,
    NewMember,
    RateLimit,
    Result,
    Round,
    StudentState,
    utc_now,
)
from dragon.classroom.rules import (
    checked_gate,
    checked_gates,
    checked_head,
    checked_id,
    checked_score,
    class_settings,
    clean_nickname,
    digest,
    new_code,
    nickname_key,
    normal_code,
    projector_key,
    skeleton,
)
from dragon.classroom.schema import (
    ADDRESS_EVENTS,
    CLASSES,
    DEFAULT_HOURS,
    MEMBERS,
    RESULTS,
    ROUND_HEADS,
    ROUNDS,
    class_hours,
    make_engine,
    migrate,
)
from dragon.config import HEADS


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

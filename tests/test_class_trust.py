"""Class results a teacher can trust (issue 26), tested as an attacker would, through the class routes and the store, on
SQLite and on PostgreSQL when DATABASE_URL is set: the server keeps the caps, a fair class dragon, a room the teacher
controls, guessing codes slow and telling nothing, a projector link without the secret, no rough edges."""

import asyncio
import csv
import io
import json
import logging

import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from dragon.classroom.records import RateLimit
from dragon.classroom.room import Classroom
from dragon.classroom.rules import projector_key, skeleton
from dragon.classroom.schema import ADDRESS_EVENTS
from dragon.classroom.store import open_store
from dragon.levels.loader import get_level, load_levels
from tests.test_classroom import not_here, opened, post, student, teacher
from tests.test_classroom_store import BACKENDS, Clock, refused, url  # noqa: F401  (the same databases)
from ui.live_class.routes import ClassRoutes

assert BACKENDS


@pytest.fixture(scope="module", autouse=True)
def levels() -> None:
    load_levels()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(url: str, clock: Clock):  # noqa: F811
    made = open_store(url, hours=12, clock=clock, rate=RateLimit(per_second=1000, burst=1000))
    yield made
    made.engine.dispose()


@pytest.fixture
def client(store) -> TestClient:
    return TestClient(ClassRoutes(not_here, store))


def join(client: TestClient, made: dict, name: str, browser: str | None = None) -> tuple[int, dict]:
    body = {"code": made["code"], "nickname": name, **({"browser": browser} if browser else {})}
    return post(client, "join", body)


def joined(client: TestClient, made: dict, name: str, browser: str | None = None) -> dict:
    status, me = join(client, made, name, browser)
    assert status == 200, me
    return me


def csv_rows(client: TestClient, made: dict) -> list[dict]:
    return list(csv.DictReader(io.StringIO(teacher(client, made, "csv")[1]["csv"])))


# --- the server keeps the caps -------------------------------------------------------------------------------------


def test_leaving_and_rejoining_returns_the_same_member_with_its_hints_and_stars(client: TestClient) -> None:
    made = opened(client)
    ana = joined(client, made, "Ana")
    round_id = teacher(client, made, "start", kind="everyone", level="2-1", lang="zh")[1]["round"]
    target = list(get_level("2-1").target_for("zh"))
    for _ in range(3):
        assert student(client, ana, "hint", round=round_id, gates=[0.5] * 8)[0] == 200
    capped = student(client, ana, "play", round=round_id, gates=target)[1]
    assert capped["score"] == 100.0 and capped["best_stars"] < 3
    assert student(client, ana, "leave")[1] == {"left": True}
    again = joined(client, made, "ana")  # the same name (as the class compares names)
    assert again["rejoined"] and again["nickname"] == "Ana" and again["token"] != ana["token"]
    assert student(client, ana, "view")[0] == 404  # the old token stopped
    view = student(client, again, "view")[1]
    assert view["round"]["hints"] == 3 and view["round"]["stars"] == capped["best_stars"]
    replay = student(client, again, "play", round=round_id, gates=target)[1]
    assert replay["best_stars"] == capped["best_stars"]  # no clean row: the caps are the server's
    members = teacher(client, made, "view")[1]["members"]
    assert [(m["nickname"], m["status"]) for m in members] == [("Ana", "active")]
    rows = csv_rows(client, made)
    assert [(r["nickname"], r["hints"], r["stars"]) for r in rows] == [("Ana", "3", str(capped["best_stars"]))]


def test_a_framed_labs_moves_and_capped_result_are_the_servers(store) -> None:
    room = Classroom(store)
    made = store.open_class()
    ana = store.join(made.code, "Ana")
    round_id = room.start(made.code, made.secret, "everyone", "3-1")["round"]
    state = store.student_state(ana.token)  # the page opened the round: "started"
    assert state.result is not None and state.result.moves == 0
    assert room.summary(made.code, made.secret)[-1]["players"] == 0  # started is not played
    for _ in range(3):
        store.note_activity(ana.token, round_id)
    kept = store.play_move(ana.token, round_id, None, lambda _r, _h: (40.0, 1), count_move=False)
    assert kept.moves == 3 and kept.stars == 1 and kept.best_score == 40.0 and kept.first_move is not None
    store.leave(ana.token)
    back = store.join(made.code, "Ana")
    assert back.rejoined and back.member_id == ana.member_id
    assert store.my_result(back.token, round_id).moves == 3  # nothing to clear in a browser


# --- a fair class dragon -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["leave", "remove"])
def test_a_leavers_head_is_dealt_again_so_seven_can_still_win(client: TestClient, how: str) -> None:
    made = opened(client)
    students = [joined(client, made, f"S{i}") for i in range(8)]
    round_id = teacher(client, made, "start", kind="dragon", level="2-1", lang="zh")[1]["round"]
    target = list(get_level("2-1").target_for("zh"))
    gone = students[5]
    student(client, gone, "move", round=round_id, head=5, gate=0.9)
    if how == "leave":
        assert student(client, gone, "leave")[1] == {"left": True}
    else:
        members = teacher(client, made, "view")[1]["members"]
        assert teacher(client, made, "remove", members=[m["id"] for m in members if m["nickname"] == "S5"])[1] == {
            "removed": 1}
    board = teacher(client, made, "view")[1]["round"]
    assert board["teams"] == [1] * 8 and board["gates"][5] == pytest.approx(0.9)  # dealt at once, at its last gate
    last = None
    for me in students[:5] + students[6:]:
        for seat in student(client, me, "view")[1]["round"]["mine"]:
            status, last = student(client, me, "move", round=round_id, head=seat["head"], gate=target[seat["head"]])
            assert status == 200, last
    assert last["won"] and last["stars"] == 3
    summary = teacher(client, made, "view")[1]["summary"][-1]
    assert summary["class_stars"] == 3 and summary["stars_count"]["3"] == summary["players"] >= 7
    rows = [r for r in csv_rows(client, made) if r["nickname"].startswith("S")]
    assert {r["stars"] for r in rows} == {"3"} and {r["nickname"] for r in rows} >= {f"S{i}" for i in (0, 1, 2, 3, 4,
                                                                                                         6, 7)}


def test_holders_name_who_holds_each_head(store) -> None:
    made = store.open_class()
    ana, ben = store.join(made.code, "Ana"), store.join(made.code, "Ben")
    round_id = store.start_round(made.code, made.secret, "dragon", "2-1", {ana.member_id: [0, 1], ben.member_id: 2})
    assert store.holders(made.code, round_id)[:3] == [["Ana"], ["Ana"], ["Ben"]]
    store.leave(ben.token)
    assert store.holders(made.code, round_id)[:3] == [["Ana"], ["Ana"], ["Ana"]]
    round_id = store.start_round(made.code, made.secret, "dragon", "2-1", {ana.member_id: 0, ben.member_id: 1})
    assert store.holders(made.code, round_id)[:2] == [["Ana"], ["Ana"]]  # a leaver's seat at the start goes too


# --- a room the teacher controls -----------------------------------------------------------------------------------


def test_a_removed_troll_cannot_rejoin_by_name_or_from_that_browser(client: TestClient) -> None:
    made = opened(client)
    joined(client, made, "Troll", browser="b-troll")
    joined(client, made, "Ana", browser="b-ana")
    troll = [m["id"] for m in teacher(client, made, "view")[1]["members"] if m["nickname"] == "Troll"]
    assert teacher(client, made, "remove", members=troll)[1] == {"removed": 1}
    assert [m["nickname"] for m in teacher(client, made, "view")[1]["members"]] == ["Ana"]
    for name, browser in (("Troll", None), ("troll", "b-new"), ("Nice kid", "b-troll")):
        status, out = join(client, made, name, browser)
        assert (status, out["error"]) == (409, "member.removed"), name
    assert joined(client, made, "Ben", browser="b-ben")["nickname"] == "Ben"


def test_a_locked_class_takes_no_one_and_a_class_holds_its_size(client: TestClient) -> None:
    made = opened(client)
    joined(client, made, "Ana")
    settings = teacher(client, made, "settings", settings={"locked": True})[1]["settings"]
    assert settings["locked"] is True and settings["size"] == 60
    status, out = join(client, made, "Ben")
    assert (status, out["error"]) == (409, "class.locked")
    teacher(client, made, "settings", settings={"locked": False, "size": 2})
    joined(client, made, "Ben")
    status, out = join(client, made, "Cai")
    assert (status, out["error"], out["detail"]) == (409, "class.full", {"limit": 2})
    assert teacher(client, made, "settings", settings={"size": True})[0] == 400
    view = teacher(client, made, "view")[1]
    assert view["settings"] == {"show_names": True, "exam": False, "locked": False, "size": 2}


@pytest.mark.parametrize("name, reason", [
    ("\u3164", "nickname.no_letter"),  # Hangul filler: a "letter" that shows nothing
    ("\u2800\u2800", "nickname.no_letter"),  # braille blank
    ("\u200d", "nickname.no_letter"),  # zero-width joiner only
    ("Z" + "\u0300\u0301\u0302\u0303\u0304\u0305\u0306\u0307\u0308\u0309\u030a\u030b\u030c\u030d\u030e\u030f"
     "\u0310\u0311\u0312", "nickname.marks"),  # Zalgo: 19 marks on one letter
    ("(the class: 9 seats)", "nickname.class_row"),
    ("Ana [全班]", "nickname.class_row"),
    ("（the class）", "nickname.class_row"),
])
def test_invisible_zalgo_and_class_row_names_are_refused(client: TestClient, name: str, reason: str) -> None:
    made = opened(client)
    status, out = join(client, made, name)
    assert (status, out["error"]) == (409, reason)


def test_a_name_confusable_with_anothers_is_refused(client: TestClient) -> None:
    made = opened(client)
    joined(client, made, "Tom")
    joined(client, made, "小白")
    for alike in ("\u0422om", "T\u043em", "𝐓𝐨𝐦"):  # Cyrillic Т, Cyrillic о, mathematical bold (NFKC: Tom)
        status, out = join(client, made, alike)
        assert status == 409 and out["error"] in ("nickname.confusable", "nickname.taken"), alike
        if out["error"] == "nickname.confusable":
            assert out["detail"] == {"like": "Tom"}
    assert joined(client, made, "Tim")["nickname"] == "Tim" and joined(client, made, "小黑")["nickname"] == "小黑"
    assert skeleton("\u0422om") == skeleton("Tom") != skeleton("Tim")


# --- guessing codes is slow and tells nothing ----------------------------------------------------------------------


def test_an_unknown_code_and_a_wrong_secret_get_the_same_answer(client: TestClient) -> None:
    made = opened(client)
    for route, field in (("teacher", "secret"), ("projector", "key")):
        unknown = client.post(f"/class/api/{route}", json={"code": "ZZZZZZ", field: made["secret"], "action": "view"})
        wrong = client.post(f"/class/api/{route}", json={"code": made["code"], field: "guess", "action": "view"})
        assert unknown.status_code == wrong.status_code == 404
        assert unknown.content == wrong.content == b'{"error":"class.unknown","detail":{}}'


def test_the_41st_wrong_code_waits_but_a_right_code_still_joins(client: TestClient, clock: Clock) -> None:
    made = opened(client)
    for i in range(20):
        assert join(client, {"code": "ZZZZZZ"}, f"A{i}")[0] == 404
        assert post(client, "teacher", {"code": made["code"], "secret": f"guess{i}", "action": "view"})[0] == 404
    status, out = join(client, {"code": "ZZZZZZ"}, "A")
    assert (status, out["error"]) == (429, "code.too_many") and 0 < out["detail"]["wait_s"] <= 600
    status, out = post(client, "projector", {"code": made["code"], "key": "guess", "action": "view"})
    assert status == 429
    assert joined(client, made, "Ana")["nickname"] == "Ana"  # a whole class behind one address still joins
    assert teacher(client, made, "view")[0] == 200 and post(client, "projector", {
        "code": made["code"], "key": made["projector"], "action": "view"})[0] == 200
    clock.advance(minutes=10, seconds=1)
    assert join(client, {"code": "ZZZZZZ"}, "A")[0] == 404  # the window has passed


def test_the_limits_survive_a_restart_and_are_shared_by_replicas(url: str, clock: Clock) -> None:  # noqa: F811
    first, second = (open_store(url, clock=clock) for _ in range(2))
    try:
        for i in range(40):
            (first if i % 2 else second).wrong_code("203.0.113.9")
        for replica in (first, second):
            with refused("code.too_many"):
                replica.wrong_code("203.0.113.9")
        replica.wrong_code("203.0.113.10")  # another address is another count
        for _ in range(20):
            first.take_open("198.51.100.1")
        first.engine.dispose()
        restarted = open_store(url, clock=clock)  # the server again, on the same database
        with refused("class.opens"):
            restarted.take_open("198.51.100.1")
        with refused("code.too_many"):
            restarted.wrong_code("203.0.113.9")
        clock.advance(hours=1, seconds=1)
        restarted.take_open("198.51.100.1")
        restarted.delete_expired()  # sweeps what no limit counts any more
        with restarted.engine.connect() as connection:
            assert connection.scalar(sa.select(sa.func.count()).select_from(ADDRESS_EVENTS)) == 1
        restarted.engine.dispose()
    finally:
        second.engine.dispose()


def test_a_forged_forwarded_for_counts_only_behind_a_trusted_proxy(store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRUSTED_PROXIES", raising=False)
    direct = TestClient(ClassRoutes(not_here, store), client=("127.0.0.1", 5000))
    for i in range(40):
        direct.post("/class/api/join", json={"code": "ZZZZZZ", "nickname": "A"},
                    headers={"x-forwarded-for": f"10.9.{i}.1"})
    answer = direct.post("/class/api/join", json={"code": "ZZZZZZ", "nickname": "A"},
                         headers={"x-forwarded-for": "10.9.99.1"})
    assert answer.status_code == 429  # every forged address was the one peer
    monkeypatch.setenv("TRUSTED_PROXIES", "192.0.2.1")
    proxied = TestClient(ClassRoutes(not_here, store), client=("192.0.2.1", 5000))
    answer = proxied.post("/class/api/join", json={"code": "ZZZZZZ", "nickname": "A"},
                          headers={"x-forwarded-for": "127.0.0.1, 198.51.100.7"})
    assert answer.status_code == 404  # behind the named proxy: the address it saw, a fresh one
    assert direct.post("/class/api/join", json={"code": "ZZZZZZ", "nickname": "A"}).status_code == 429


# --- a projector link without the secret ---------------------------------------------------------------------------


def test_the_projector_key_views_but_controls_nothing(client: TestClient) -> None:
    made = opened(client)
    key = made["projector"]
    assert key and key != made["secret"] and made["secret"] not in key
    joined(client, made, "Ana")
    round_id = teacher(client, made, "start", kind="everyone", level="2-1")[1]["round"]
    view = teacher(client, made, "view")[1]
    assert view["projector"] == key == projector_key(made["secret"])
    status, shown = post(client, "projector", {"code": made["code"], "key": key, "action": "view"})
    assert status == 200 and "projector" not in shown and made["secret"] not in json.dumps(shown)
    assert [m["nickname"] for m in shown["members"]] == ["Ana"] and shown["round"]["id"] == round_id
    qr = post(client, "projector", {"code": made["code"], "key": key, "action": "qr", "origin": "http://x:7860"})[1]
    assert qr["url"] == f"http://x:7860/?class={made['code']}"
    for action, extra in (("end_class", {}), ("remove", {"member": view["members"][0]["id"]}), ("csv", {}),
                          ("settings", {"settings": {"exam": True}}), ("end_round", {"round": round_id}),
                          ("start", {"kind": "everyone", "level": "2-1"}), ("show_target", {"round": round_id})):
        status, out = post(client, "teacher", {"code": made["code"], "secret": key, "action": action, **extra})
        assert (status, out["error"]) == (404, "class.unknown"), action
    for action in ("csv", "end_class", "remove"):
        assert post(client, "projector", {"code": made["code"], "key": key, "action": action})[0] == 400
    assert teacher(client, made, "view")[1]["settings"]["exam"] is False and teacher(client, made, "csv")[0] == 200
    page = client.get("/class/projector")
    assert page.status_code == 200 and 'data-role="projector"' in page.text and made["secret"] not in page.text


def test_the_target_is_shown_only_outside_an_exam(store) -> None:
    made = store.open_class()
    plain = store.start_round(made.code, made.secret, "everyone", "2-1")
    store.show_target(made.code, made.secret, plain)
    assert store.round_of(made.code, plain).target_shown is True
    exam = store.start_round(made.code, made.secret, "everyone", "2-1", variant={"target": [0.1] * 8}, exam=True)
    with refused("target.exam"):
        store.show_target(made.code, made.secret, exam)
    r = store.round_of(made.code, exam)
    assert (r.exam, r.target_shown, r.variant) == (True, False, {"target": [0.1] * 8})


# --- no rough edges ------------------------------------------------------------------------------------------------


def test_ids_past_two_to_the_31st_and_deep_json_are_a_clear_400(client: TestClient) -> None:
    made = opened(client)
    me = joined(client, made, "Ana")
    teacher(client, made, "start", kind="dragon", level="2-1")
    for huge in (2**31, 2**63, 10**30, 0, -1):
        for status, out in (student(client, me, "move", round=huge, head=0, gate=0.5),
                            teacher(client, made, "end_round", round=huge),
                            teacher(client, made, "remove", member=huge),
                            teacher(client, made, "remove", members=[1, huge]),
                            teacher(client, made, "show_target", round=huge)):
            assert status == 400 and out["error"] == "bad_request", out
            assert "sqlite" not in out["message"].lower() and "psycopg" not in out["message"].lower()
    status, out = student(client, me, "move", round=1, head=8, gate=0.5)
    assert status == 400 and "head" in out["message"]
    deep = client.post("/class/api/join", content=b"[" * 8000 + b"]" * 8000)
    assert deep.status_code == 400 and "32 deep" in deep.json()["message"]
    nested = {"code": made["code"], "nickname": "Ben", "x": json.loads("[" * 33 + "]" * 33)}
    assert client.post("/class/api/join", json=nested).status_code == 400
    assert client.post("/class/api/join", json={"code": made["code"], "nickname": "[{\"Ben\"}]"}).status_code == 200


def test_a_client_dropping_mid_body_is_one_log_line(store, caplog: pytest.LogCaptureFixture) -> None:
    routes = ClassRoutes(not_here, store)
    sent = []

    async def receive() -> dict:
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/class/api/join", "headers": [], "query_string": b"",
             "client": ("127.0.0.1", 1), "server": ("testserver", 80), "scheme": "http", "root_path": ""}
    with caplog.at_level(logging.WARNING):
        asyncio.run(routes(scope, receive, send))
    records = [r for r in caplog.records if "class" in r.getMessage()]
    assert len(records) == 1 and records[0].exc_info is None and "dropped" in records[0].getMessage()

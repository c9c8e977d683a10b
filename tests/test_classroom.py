"""The live class's rules and routes (dragon/classroom/room.py, ui/live_class/routes.py) on the real store and the real
engine: dealing heads, the class dragon's score from the fused output, who may see and do what, bad input, the CSV."""

import csv
import io
import json
import math

import pytest
from starlette.testclient import TestClient

from dragon import api as core_api
from dragon.classroom.records import RateLimit, utc_now
from dragon.classroom.room import Classroom, deal, puzzle, safe_cell, strongest_links, word_like
from dragon.classroom.store import open_store
from dragon.levels.loader import get_level, load_levels
from tests.test_classroom_store import BACKENDS, url  # noqa: F401  (the same databases: SQLite, and PostgreSQL in CI)
from ui.live_class.routes import MAX_API_BODY, ROOM, ClassRoutes

assert BACKENDS


async def not_here(scope, receive, send) -> None:
    """What stands behind the class routes in the app (Gradio): a plain 204."""
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})


@pytest.fixture(scope="module", autouse=True)
def levels() -> None:
    load_levels()


@pytest.fixture
def store(url: str):  # noqa: F811
    made = open_store(url, hours=12, rate=RateLimit(per_second=1000, burst=1000))
    yield made
    made.engine.dispose()


@pytest.fixture
def client(store):
    """The class's routes on this test's store, serving the games this process's handlers run (their rounds' rules,
    their results); afterwards the games are the process's app's again (ui/live_class/routes.py ROOM)."""
    served = list(ROOM)
    yield TestClient(ClassRoutes(not_here, store, games=True))
    ROOM[:] = served


def test_routes_made_on_another_store_never_take_the_apps_games(store) -> None:
    """Only the app's own routes serve its framed games: routes made on another store in the same process (a test's,
    a second service) leave the games' class service as it was."""
    served = list(ROOM)
    ClassRoutes(not_here, store)
    assert ROOM == served
    ClassRoutes(not_here, store, games=True)
    assert ROOM != served and ROOM[0].store is store
    ROOM[:] = served


def post(client: TestClient, name: str, body) -> tuple[int, dict]:
    response = client.post(f"/class/api/{name}", json=body)
    return response.status_code, response.json()


def opened(client: TestClient) -> dict:
    status, made = post(client, "open", {})
    assert status == 200
    return made


def teacher(client: TestClient, made: dict, action: str, **extra) -> tuple[int, dict]:
    return post(client, "teacher", {"code": made["code"], "secret": made["secret"], "action": action, **extra})


def join(client: TestClient, made: dict, name: str) -> dict:
    status, me = post(client, "join", {"code": made["code"].lower(), "nickname": name})
    assert status == 200, me
    return me


def student(client: TestClient, me: dict, action: str, **extra) -> tuple[int, dict]:
    return post(client, "student", {"token": me["token"], "action": action, **extra})


# --- dealing and scoring -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 3, 7, 8, 9, 17, 40])
def test_every_head_has_a_student_and_teams_differ_by_at_most_one(n: int) -> None:
    dealt = deal(list(range(100, 100 + n)))
    seats = [h for held in dealt.values() for h in held]
    assert sorted(set(seats)) == list(range(8))  # no head without a student
    assert all(held for held in dealt.values())  # no student without a head
    teams = [seats.count(h) for h in range(8)]
    assert max(teams) - min(teams) <= 1
    if n >= 8:
        assert all(len(held) == 1 for held in dealt.values())


def test_the_class_dragon_scores_as_the_game_does() -> None:
    """The class's score of a gate vector is the game's own (dragon/api.play): the real fused output."""
    p = puzzle("2-1", None, "zh")
    for gates in ([0.5] * 8, [1, 0, 0.3, 0.9, 0.2, 0.7, 0.4, 0.1], list(get_level("2-1").target_for("zh"))):
        value = round(p.scorer(gates), 2)
        assert value == pytest.approx(core_api.play("2-1", list(gates), "zh")["score"], abs=0.01)
    assert round(p.scorer(p.target), 2) == 100.0


def test_a_heads_links_are_its_real_attention_between_different_words() -> None:
    p = puzzle("2-1", None, "zh")
    tokens = p.reading.tokens
    for h in range(8):
        links = strongest_links(p.reading, h)
        assert links, f"head {h} finds no link"
        weights = [link["weight"] for link in links]
        assert weights == sorted(weights, reverse=True)
        for link in links:
            assert link["from"] != link["to"] or tokens.count(link["from"]) > 1
            assert word_like(link["from"]) and word_like(link["to"])
            i, j = tokens.index(link["from"]), tokens.index(link["to"])
            found = [float(p.reading.weights[h, 1 + a, 1 + b]) for a, ta in enumerate(tokens) for b, tb in
                     enumerate(tokens) if ta == link["from"] and tb == link["to"] and a != b]
            assert any(math.isclose(w, link["weight"], abs_tol=5e-4) for w in found), (i, j, link)


def test_a_class_dragon_needs_a_slider_level() -> None:
    with pytest.raises(ValueError, match="slider level"):
        puzzle("3-1", None, "zh")
    with pytest.raises(ValueError, match="unknown level"):
        puzzle("9-9", None, "zh")
    with pytest.raises(ValueError, match="share code"):
        puzzle("t-" + "a" * 12, None, "zh")


def test_a_spreadsheet_formula_in_a_nickname_is_written_as_text() -> None:
    assert [safe_cell(n) for n in ("=1+1", "+A1", "-2", "@SUM(A1)", "Ana", "小白")] == [
        "'=1+1", "'+A1", "'-2", "'@SUM(A1)", "Ana", "小白"]


# --- a class through its routes ------------------------------------------------------------------------------------


def test_nine_students_win_a_class_dragon_round_together(client: TestClient) -> None:
    made = opened(client)
    students = [join(client, made, f"学生{i}") for i in range(9)]
    status, started = teacher(client, made, "start", kind="dragon", level="2-1", lang="zh")
    assert status == 200
    round_id = started["round"]
    status, view = teacher(client, made, "view")
    assert view["round"]["teams"] == [2, 1, 1, 1, 1, 1, 1, 1] and view["round"]["score"] < 95
    target = get_level("2-1").target_for("zh")
    seats = {}
    for me in students:
        status, mine = student(client, me, "view")
        assert status == 200 and len(mine["round"]["mine"]) == 1 and mine["round"]["open"]
        seats[me["token"]] = mine["round"]["mine"][0]["head"]
    moved = 0
    for me in students:  # each sets their head to the target, until the class reaches ★★★
        status, last = student(client, me, "move", round=round_id, head=seats[me["token"]],
                               gate=target[seats[me["token"]]])
        assert status == 200, last
        moved += 1
        if last["won"]:
            break
    assert last["won"] and last["stars"] == 3 and last["score"] >= 95 and moved >= 5
    status, view = teacher(client, made, "view")
    board = view["round"]
    assert board["won"] and not board["open"]
    assert sum(g == pytest.approx(target[h]) for h, g in enumerate(board["gates"])) == min(moved, 8)
    assert board["score"] == pytest.approx(last["score"])
    status, after = student(client, students[0], "move", round=round_id, head=0, gate=0.1)
    assert (status, after["error"]) == (409, "round.ended")
    status, mine = student(client, students[-1], "view")  # the won round stays on every page
    assert mine["round"]["won"] and not mine["round"]["open"]
    assert view["summary"][-1]["class_stars"] == 3 and view["summary"][-1]["round"] == 1
    assert view["summary"][-1]["players"] == 9  # every member of the round: they won it together
    assert view["summary"][-1]["stars_count"] == {"0": 0, "1": 0, "2": 0, "3": 9}
    rows = list(csv.DictReader(io.StringIO(teacher(client, made, "csv")[1]["csv"])))
    mine = [r for r in rows if r["nickname"].startswith("学生")]
    assert len(mine) == 9 and {r["stars"] for r in mine} == {"3"} and {r["round"] for r in mine} == {"1"}
    assert {r["best_score"] for r in mine} == {f"{last['score']:.2f}"}
    assert sorted(int(r["moves"]) for r in mine) == [0] * (9 - moved) + [1] * moved  # their own moves beside it
    assert rows[-1]["nickname"] == "(the class)" and rows[-1]["best_score"] == f"{last['score']:.2f}"


def test_a_team_moves_its_head_by_the_mean_of_its_members(client: TestClient) -> None:
    made = opened(client)
    students = [join(client, made, f"S{i}") for i in range(9)]
    round_id = teacher(client, made, "start", kind="dragon", level="2-2")[1]["round"]
    ana, ivy = students[0], students[8]  # the two on head 0
    student(client, ana, "move", round=round_id, head=0, gate=0.2)
    status, out = student(client, ivy, "move", round=round_id, head=0, gate=0.6)
    assert out["gates"][0] == pytest.approx(0.4) and out["gates"][1] == 0.5  # unmoved heads stand at 0.5
    status, out = student(client, ana, "move", round=round_id, head=1, gate=0.6)
    assert (status, out["error"]) == (409, "head.none")  # only her own head


def test_a_student_sees_only_their_own_part(client: TestClient) -> None:
    made = opened(client)
    ana, _ = join(client, made, "Ana"), join(client, made, "Ben")
    teacher(client, made, "start", kind="everyone", level="2-1")
    status, view = student(client, ana, "view")
    assert status == 200 and view["nickname"] == "Ana"
    assert "Ben" not in json.dumps(view) and "members" not in view and "secret" not in json.dumps(view)
    for secret in (ana["token"], "", "x" * 43):  # a student's token is no teacher's secret
        status, out = post(client, "teacher", {"code": made["code"], "secret": secret, "action": "view"})
        assert (status, out["error"]) == (404, "class.unknown")  # as a wrong code: no oracle
    status, out = post(client, "student", {"token": made["secret"], "action": "view"})
    assert (status, out["error"]) == (404, "member.unknown")


def test_everyone_plays_a_slider_level_scored_by_the_server(client: TestClient) -> None:
    made = opened(client)
    ana = join(client, made, "=HYPERLINK(\"x\")")
    round_id = teacher(client, made, "start", kind="everyone", level="2-1", lang="zh")[1]["round"]
    target = list(get_level("2-1").target_for("zh"))
    status, first = student(client, ana, "play", round=round_id, gates=[0.5] * 8)
    assert status == 200 and first["score"] == pytest.approx(core_api.play("2-1", [0.5] * 8, "zh")["score"], abs=0.01)
    status, hinted = student(client, ana, "hint", round=round_id, gates=[0.5] * 8)
    assert status == 200 and hinted["hints"] == 1 and 0 <= hinted["head"] < 8
    status, best = student(client, ana, "play", round=round_id, gates=target)
    assert best["score"] == 100.0 and best["stars"] == 2  # a hint costs a reachable star
    status, view = teacher(client, made, "view")
    assert view["round"]["stars_count"] == {"0": 0, "1": 0, "2": 1, "3": 0}
    assert view["round"]["spread"][0]["median"] == pytest.approx(target[0])
    assert view["round"]["players"][0]["nickname"] == "=HYPERLINK(\"x\")"
    teacher(client, made, "settings", settings={"show_names": False, "exam": True})
    status, view = teacher(client, made, "view")
    assert "players" not in view["round"]  # names switched off
    status, out = student(client, ana, "hint", round=round_id, gates=[0.5] * 8)
    assert (status, out["error"]) == (409, "hint.exam")
    status, out = teacher(client, made, "csv")
    rows = list(csv.reader(io.StringIO(out["csv"])))
    assert rows[0] == ["nickname", "round", "kind", "level", "exam", "lang", "started_at", "best_score", "stars",
                       "hints", "moves", "seconds_to_best"]
    assert rows[1][:6] == ["'=HYPERLINK(\"x\")", "1", "everyone", "2-1", "no", "zh"]
    assert rows[1][6].endswith("+00:00") and rows[1][7:11] == ["100.00", "2", "1", "2"]
    assert float(rows[1][11]) >= 0


def test_a_level_without_sliders_counts_what_the_game_scores(store) -> None:
    room = Classroom(store)
    made = store.open_class()
    ana = store.join(made.code, "Ana")
    room.start(made.code, made.secret, "everyone", "3-1")
    assert room.report(ana.token, "3-2", 80.0, 2) is False  # not the round's level
    assert room.report(ana.token, "3-1", 80.0, 2) is True
    summary = room.summary(made.code, made.secret)
    assert summary[-1]["stars_count"]["2"] == 1 and summary[-1]["mean_best"] == 80.0
    with pytest.raises(ValueError, match="slider level"):
        room.start(made.code, made.secret, "dragon", "3-1")


def test_a_teacher_removes_a_student_and_their_token_stops(client: TestClient) -> None:
    made = opened(client)
    ana = join(client, made, "Ana")
    members = teacher(client, made, "view")[1]["members"]
    assert [m["nickname"] for m in members] == ["Ana"]
    assert teacher(client, made, "remove", member=members[0]["id"])[1] == {"removed": 1}
    status, out = student(client, ana, "view")
    assert (status, out["error"]) == (404, "member.unknown")
    assert teacher(client, made, "end_class")[1] == {"ended": True}
    status, out = teacher(client, made, "view")
    assert (status, out["error"]) == (404, "class.unknown")


def test_a_student_leaves(client: TestClient) -> None:
    made = opened(client)
    ana = join(client, made, "Ana")
    assert student(client, ana, "leave")[1] == {"left": True}
    assert [(m["nickname"], m["status"]) for m in teacher(client, made, "view")[1]["members"]] == [("Ana", "left")]


@pytest.mark.parametrize("body, words", [
    ({"token": "t", "action": "move", "round": 1, "head": 0, "gate": float("nan")}, "gate"),
    ({"token": "t", "action": "move", "round": True, "head": 0, "gate": 0.5}, "round"),
    ({"token": "t", "action": "play", "round": 1, "gates": [0.5] * 7}, "8 numbers"),
    ({"token": "t", "action": "play", "round": 1, "gates": [[0.5]] * 8}, "gate"),
    ({"token": ["t"], "action": "view"}, "token"),
    ({"token": "t", "action": "<script>"}, "unknown student action"),
])
def test_bad_student_input_gets_a_clear_message(client: TestClient, body: dict, words: str) -> None:
    response = client.post("/class/api/student", content=json.dumps(body, allow_nan=True))
    assert response.status_code == 400 and words in response.json()["message"]


def test_bad_requests_are_refused_in_one_line(client: TestClient) -> None:
    assert client.post("/class/api/join", content=b"{not json").json()["message"] == "the request is not JSON"
    assert client.post("/class/api/join", content=b"[1]").status_code == 400
    big = client.post("/class/api/join", content=b"{" + b" " * MAX_API_BODY + b"}")
    assert big.status_code == 400 and "at most" in big.json()["message"]
    assert client.post("/class/api/nothing", json={}).status_code == 404
    status, out = post(client, "join", {"code": "ZZZZZZ", "nickname": "Ana"})
    assert (status, out["error"]) == (404, "class.unknown")
    made = opened(client)
    status, out = post(client, "join", {"code": made["code"], "nickname": "a\u202eb"})
    assert (status, out["error"]) == (409, "nickname.hidden")
    raw = json.dumps({"code": made["code"], "nickname": "\ud83d"})  # ASCII JSON: the half emoji as \ud83d
    half = client.post("/class/api/join", content=raw.encode())
    assert (half.status_code, half.json()["error"]) == (409, "nickname.hidden")  # half an emoji, as JSON may send it
    status, out = teacher(client, made, "start", kind="dragon", level="2-1")
    assert (status, out["error"]) == (409, "round.no_members")
    status, out = teacher(client, made, "start", kind="everyone", level="x" * 300)
    assert status == 400


def test_moves_too_fast_get_a_polite_wait(url: str) -> None:  # noqa: F811
    now = utc_now()  # the store's clock stands still: five moves in one instant, however busy the machine
    store = open_store(url, rate=RateLimit(per_second=5, burst=3), clock=lambda: now)
    client = TestClient(ClassRoutes(not_here, store))
    made = opened(client)
    ana = join(client, made, "Ana")
    round_id = teacher(client, made, "start", kind="dragon", level="2-1")[1]["round"]
    answers = [student(client, ana, "move", round=round_id, head=0, gate=0.5) for _ in range(5)]
    assert [s for s, _ in answers[:3]] == [200] * 3
    status, out = answers[3]
    assert status == 429 and out["error"] == "move.too_fast" and out["detail"]["wait_s"] == pytest.approx(0.2)
    store.engine.dispose()


def test_opening_classes_is_limited_per_address(client: TestClient) -> None:
    for _ in range(20):
        opened(client)
    status, out = post(client, "open", {})
    assert (status, out["error"], out["detail"]["limit"]) == (429, "class.opens", 20) and out["detail"]["wait_s"] > 0


def test_the_join_link_leads_to_the_class_page_and_the_qr_code_is_made_here(client: TestClient) -> None:
    made = opened(client)
    answer = client.get(f"/?class={made['code'].lower()}", follow_redirects=False)
    assert answer.status_code == 302 and answer.headers["location"] == f"/class/join?code={made['code']}"
    assert client.get("/?teach=1", follow_redirects=False).headers["location"] == "/class/teach"
    assert client.get("/?teach=1&lang=en", follow_redirects=False).headers["location"] == "/class/teach?lang=en"
    assert client.get("/?class=x&lang=<b>", follow_redirects=False).headers["location"] == "/class/join?code="
    assert client.get("/?level=2-1").status_code == 204  # the game's own links go on to Gradio
    page = client.get(f"/class/join?code={made['code']}")
    assert page.status_code == 200 and 'data-role="join"' in page.text and "{{" not in page.text
    assert 'data-role="teach"' in client.get("/class/teach").text
    _, qr = teacher(client, made, "qr", origin="http://192.168.1.5:7860")
    assert qr["url"] == f"http://192.168.1.5:7860/?class={made['code']}" and qr["svg"].startswith("<svg")
    for origin in ("javascript:alert(1)", "http://x/<script>", 5, "http://" + "a" * 300):
        assert teacher(client, made, "qr", origin=origin)[0] == 400
    levels = client.get("/class/api/levels?lang=en").json()
    assert {lv["id"] for lv in levels["dragon"]} <= {lv["id"] for lv in levels["all"] if lv["sliders"]}
    assert "2-1" in {lv["id"] for lv in levels["dragon"]} and len(levels["heads"]) == 8


def test_a_game_result_in_a_framed_session_counts_for_the_class(client: TestClient, store) -> None:
    """The game's own server scoring (dragon/game.py record) tells the class, for a session carrying a student's
    token (the class page frames the game with ?classplay=1); any other session tells no one."""
    from dragon import game
    from ui.live_class import link as class_link

    made = opened(client)
    ana = join(client, made, "Ana")
    teacher(client, made, "start", kind="everyone", level="3-1")
    assert class_link.listener({"level": "3-1"}) is None and class_link.listener(None) is None
    with game.results_to(class_link.listener({"level": "3-1", "class": ana["token"]})):
        game.record(game.new_progress(), "3-1", 66.7, 2)
    with game.results_to(class_link.listener({"class": "not-a-token"})):
        game.record(game.new_progress(), "3-1", 100.0, 3)  # refused quietly: the game goes on
    _, view = teacher(client, made, "view")
    assert view["round"]["stars_count"] == {"0": 0, "1": 0, "2": 1, "3": 0}
    assert view["round"]["players"] == [{"nickname": "Ana", "stars": 2, "best": 66.7}]


def test_a_teacher_level_plays_as_a_class_dragon_from_its_share_code(client: TestClient) -> None:
    level = {"title": {"zh": "老师", "en": "The <b>teacher</b>"}, "lang": "en",
             "text": "The teacher told the students that they should study hard.",
             "target": {"context": 0.9, "semantics": 0.6}}
    checked = core_api.check_level(level)
    assert checked["ok"], checked["errors"]
    made = opened(client)
    ana = join(client, made, "Ana")
    status, started = teacher(client, made, "start", kind="dragon", level="", level_code=checked["code"], lang="en")
    assert status == 200, started
    status, view = student(client, ana, "view")
    assert view["round"]["level"]["id"] == checked["id"] and view["round"]["level"]["title"] == "The <b>teacher</b>"
    assert sorted(m["head"] for m in view["round"]["mine"]) == list(range(8))  # one student holds all eight
    target = puzzle(checked["id"], checked["code"], "en").target
    for h in range(8):
        status, out = student(client, ana, "move", round=started["round"], head=h, gate=target[h])
        if out.get("won"):
            break
    assert out["won"] and out["score"] >= 95
    status, out = teacher(client, made, "start", kind="dragon", level="", level_code="T1.broken", lang="en")
    assert status == 400 and "share link" in out["message"]


def test_what_a_head_hears_is_the_narrations_claim_measured() -> None:
    """A student's head card repeats the level's narration only with its measured share (dragon/levels/claims.py), and
    says nothing for a head the narration leaves out."""
    from dragon.config import HEADS
    from dragon.levels.claims import measure

    p = puzzle("2-1", None, "zh")
    claimed = {c["head"]: c for c in measure(p.reading, get_level("2-1").claims_for("zh")) if c["from"] is None}
    for h, head in enumerate(HEADS):
        if head not in claimed:
            assert p.hears[h] is None
            continue
        assert p.hears[h]["silent"] == claimed[head]["silent"]
        assert [(w["word"], w["share"]) for w in p.hears[h]["words"]] == [
            (w["word"], w["attention"]) for w in claimed[head]["words"]]
    assert any(h and h["silent"] for h in p.hears) and any(h and not h["silent"] for h in p.hears)

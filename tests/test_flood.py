"""One client floods the expensive endpoints (races, trainings, the real model) of the real app: its calls are
capped per client, per address and in all, refused at once with why; no direct POST goes around the queue; and
everyone else keeps playing (/levels and /play within 1 s, another address's race accepted and answered)."""

import asyncio
import json
import threading
import time

import httpx
import pytest

from dragon.runtime.lane import LANE
from ui.server import admission
from ui.server.admission import PER_ADDRESS, PER_CLIENT, address_of, refusal, waiting_calls

RACE = {"data": [[16]]}  # one short race: the lane holds it, so what waits is what the test says


class Peer:
    """A request's caller, as admission reads it."""

    def __init__(self, host: str, forwarded: str = "") -> None:
        self.client = type("Client", (), {"host": host})()
        self.headers = {"x-forwarded-for": forwarded} if forwarded else {}


def test_refusal_counts_the_client_its_address_and_everyone() -> None:
    assert refusal([], "a", "1.1.1.1") is None
    mine = [("a", "1.1.1.1")] * PER_CLIENT
    assert "this client" in refusal(mine, "a", "1.1.1.1")
    assert refusal(mine, "b", "1.1.1.1") is None  # another player at the same school
    school = [(f"s{i}", "1.1.1.1") for i in range(PER_ADDRESS)]
    assert "this address" in refusal(school, "new", "1.1.1.1") and refusal(school, "new", "2.2.2.2") is None
    everyone = [(f"s{i}", f"10.0.0.{i}") for i in range(admission.IN_ALL)]
    assert f"already has {admission.IN_ALL}" in refusal(everyone, "new", "2.2.2.2")
    assert refusal([("", "")] * PER_CLIENT, "", "") is None  # no session id and no address: only the total counts


def test_the_address_is_the_socket_peer_unless_it_is_a_trusted_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRUSTED_PROXIES", raising=False)
    monkeypatch.setenv("SPACE_ID", "someone/dragon")  # a Space alone trusts no header: TRUSTED_PROXIES says who
    assert address_of(Peer("127.0.0.1", "6.6.6.6")) == "127.0.0.1"  # a header anyone can write counts for nothing
    monkeypatch.setenv("TRUSTED_PROXIES", "10.0.0.0/8, 192.168.1.1")
    assert address_of(Peer("10.1.2.3", "6.6.6.6, 10.1.2.3")) == "6.6.6.6" and address_of(Peer("10.1.2.3")) == "10.1.2.3"
    assert address_of(Peer("10.1.2.3", "1.1.1.1, 6.6.6.6")) == "6.6.6.6"  # what the caller wrote before it: not it
    assert address_of(Peer("127.0.0.1", "6.6.6.6")) == "127.0.0.1"  # a peer not named is no proxy
    monkeypatch.setenv("TRUSTED_PROXIES", "*")
    assert address_of(Peer("127.0.0.1", "1.1.1.1, 6.6.6.6")) == "6.6.6.6"
    assert address_of(None) == ""
    monkeypatch.setenv("TRUSTED_PROXIES", "proxy.local")
    with pytest.raises(ValueError, match="TRUSTED_PROXIES"):
        address_of(Peer("10.1.2.3"))


def test_every_expensive_endpoint_is_guarded(app_server) -> None:
    demo, _ = app_server
    names = {fn.api_name for fn in demo.fns.values()}
    assert admission.EXPENSIVE <= names
    assert {"race", "heads_experiment", "grow", "crystal_ball", "tower"} <= admission.EXPENSIVE


@pytest.mark.parametrize("endpoint", ["race", "heads_experiment", "crystal_ball", "levels"])
def test_no_direct_post_goes_around_the_queue(app_url, endpoint) -> None:
    answer = httpx.post(f"{app_url}gradio_api/run/{endpoint}", json={"data": []}, timeout=10)
    assert answer.status_code == 404 and "queue" in answer.json()["detail"]


# a call of every other expensive kind (trainings, the real model): refused in these tests before anything runs
OTHERS = {"heads_experiment": [], "grow": [], "prune": [[1] * 8], "crystal_ball": ["The cat sat.", "cat"], "tower": []}


async def join(app_url: str, source: str, session: str | None, endpoint: str = "race") -> tuple[int, str]:
    """One call queued from a source address (a loopback address of its own) as a client with that session."""
    transport = httpx.AsyncHTTPTransport(local_address=source)
    async with httpx.AsyncClient(transport=transport, timeout=10) as http:
        body = {"data": OTHERS.get(endpoint, RACE["data"]), **({"session_hash": session} if session else {})}
        answer = await http.post(f"{app_url}gradio_api/call/{endpoint}", json=body)
        return answer.status_code, answer.text


async def flood(app_url: str, source: str, sessions: list[str | None]) -> list[tuple[int, str]]:
    return list(await asyncio.gather(*(join(app_url, source, s) for s in sessions)))


def timed_call(app_url: str, source: str, endpoint: str, data: list) -> tuple[float, str]:
    """A call from another player (its own address), to its answer: (seconds, its event line)."""
    t0 = time.perf_counter()
    with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=60) as http:
        event_id = http.post(f"{app_url}gradio_api/call/{endpoint}", json={"data": data}).json()["event_id"]
        lines = http.get(f"{app_url}gradio_api/call/{endpoint}/{event_id}").text.splitlines()
    return time.perf_counter() - t0, next(line for line in lines if line.startswith("event: "))


@pytest.mark.slow
def test_a_flood_is_capped_and_everyone_else_keeps_playing(app_server, monkeypatch: pytest.MonkeyPatch) -> None:
    demo, url = app_server
    queue = demo._queue
    for endpoint, data in (("levels", []), ("play", ["2-1", [0.5] * 8, "en"])):
        timed_call(url, "127.0.0.2", endpoint, data)  # answered once before, as on any server a class has used
    gate = threading.Event()  # the lane is held: every race let in waits, so the counts are exact
    held = LANE.submit(f"hold/{time.time_ns()}", lambda report: gate.wait(120), "race")
    try:
        # one client (one session) sends ten races at once: PER_CLIENT are queued, the rest refused at once
        answers = asyncio.run(flood(url, "127.0.0.1", ["flood-a"] * 10))
        taken = [a for a in answers if a[0] == 200]
        refused = [a for a in answers if a[0] == 503]
        assert len(taken) == PER_CLIENT and len(refused) == 10 - PER_CLIENT
        assert all("this client" in json.loads(text)["detail"] for _, text in refused)
        for endpoint in OTHERS:  # a training or the real model counts the same: that client waits for its races
            code, text = asyncio.run(join(url, "127.0.0.1", "flood-a", endpoint))
            assert code == 503 and "this client" in json.loads(text)["detail"], (endpoint, code, text)
        # the same address as new clients (new session ids, or none): up to PER_ADDRESS in all
        answers = asyncio.run(flood(url, "127.0.0.1", [f"flood-{i}" for i in range(8)] + [None] * 4))
        assert sum(a[0] == 200 for a in answers) == PER_ADDRESS - PER_CLIENT
        assert all("this address" in json.loads(t)["detail"] for c, t in answers if c != 200)
        assert sum(a == "127.0.0.1" for _, a in waiting_calls(queue)) == PER_ADDRESS
        for endpoint in OTHERS:
            code, text = asyncio.run(join(url, "127.0.0.1", f"new-{endpoint}", endpoint))
            assert code == 503 and "this address" in json.loads(text)["detail"], (endpoint, code, text)
        # everyone else keeps playing: the cheap endpoints answer within 1 s, another address's race is let in
        for _ in range(3):
            seconds, event = timed_call(url, "127.0.0.2", "levels", [])
            assert event == "event: complete" and seconds < 1, seconds
            seconds, event = timed_call(url, "127.0.0.2", "play", ["2-1", [0.5] * 8, "en"])
            assert event == "event: complete" and seconds < 1, seconds
        assert asyncio.run(join(url, "127.0.0.2", "another-player"))[0] == 200
        # and in all: past IN_ALL waiting calls anyone's next one is refused
        monkeypatch.setattr(admission, "IN_ALL", PER_ADDRESS + 2)
        answers = asyncio.run(flood(url, "127.0.0.3", ["third-1", "third-2"]))
        assert answers[0][0] == 200 or answers[1][0] == 200
        assert sum(a[0] == 503 and "the server already has" in a[1] for a in answers) == 1
    finally:
        gate.set()
    assert held.done.wait(30)
    deadline = time.monotonic() + 60  # what was let in runs; the lane is free for the tests after
    while waiting_calls(queue) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not waiting_calls(queue)


def test_a_pages_lab_event_puts_its_runs_under_the_callers_address() -> None:
    """The lab's buttons (a race, a training) go to the lane from the page's events, not the queue's endpoints:
    there the caller's address is the owner the lane counts (dragon/runtime/lane.py PER_OWNER)."""
    import inspect

    import gradio as gr

    import app
    from dragon.runtime import lane as runs

    seen: list[str] = []
    fn, _ = app.wire({"lab": None}, lambda s, saved, data: seen.append(runs.OWNER.get()) or {}, ["lab"],
                     event_data=2, owned=True)
    assert list(inspect.signature(fn).parameters.values())[-1].annotation is gr.Request  # what Gradio reads
    fn({}, None, type("Evt", (), {"_data": {}})(), Peer("10.9.8.7"))
    assert seen == ["10.9.8.7"] and runs.OWNER.get() == ""

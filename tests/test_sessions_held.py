"""The server drops a session's state once the session has ended: an API call's soon after it was answered, a closed
page's soon after its heartbeat ended; a page still open keeps its state however long it is idle."""

import datetime
import threading
import time
from collections import OrderedDict

import httpx
import pytest

from ui.server import sessions_held
from ui.server.sessions_held import CALL_GRACE_S, PAGE_GRACE_S, Pages, drop_stale, stale


class Held:
    def __init__(self, state_data: dict) -> None:
        self.state_data = state_data


class Holder:
    """What sessions_held reads of Gradio's StateHolder."""

    def __init__(self, sessions: dict[str, tuple[Held, float]], now: datetime.datetime) -> None:
        self.session_data = OrderedDict((k, held) for k, (held, _) in sessions.items())
        self.time_last_used = {k: now - datetime.timedelta(seconds=idle) for k, (_, idle) in sessions.items()}
        self.lock = threading.Lock()


def test_what_is_stale() -> None:
    now = datetime.datetime.now()  # the times are the test's own: drop_stale, a moment later, reads the clock again
    page = {1: {"level": "2-1"}}
    holder = Holder({
        "call-just-answered": (Held({}), CALL_GRACE_S - 5),
        "call-long-ago": (Held({}), CALL_GRACE_S + 5),
        "page-open-idle-an-hour": (Held(page), 3600),
        "page-closed-a-moment-ago": (Held(page), PAGE_GRACE_S + 5),  # last event long ago, heartbeat ended just now
        "page-closed-long-ago": (Held(page), PAGE_GRACE_S + 5),
        "page-never-opened-a-heartbeat": (Held(page), PAGE_GRACE_S + 5),
    }, now)
    pages = Pages()
    for session_id in ("page-open-idle-an-hour", "page-closed-a-moment-ago", "page-closed-long-ago"):
        pages.opened(session_id)
    pages.closed("page-closed-a-moment-ago")
    pages.closed("page-closed-long-ago")
    pages._closed_at["page-closed-long-ago"] = now - datetime.timedelta(seconds=PAGE_GRACE_S + 5)
    assert stale(holder, pages, now) == ["call-long-ago", "page-closed-long-ago", "page-never-opened-a-heartbeat"]
    assert drop_stale(holder, pages) == 3 and list(holder.session_data) == list(holder.time_last_used)
    assert set(holder.session_data) == {"call-just-answered", "page-open-idle-an-hour", "page-closed-a-moment-ago"}
    assert pages.closed_at("page-closed-long-ago") is None  # what was dropped is forgotten


def test_a_page_with_two_tabs_is_open_until_both_close_and_old_closings_are_forgotten() -> None:
    pages = Pages()
    pages.opened("s")
    pages.opened("s")  # a heartbeat reconnected before the old one ended
    pages.closed("s")
    assert pages.is_open("s") and pages.closed_at("s") is None
    pages.closed("s")
    assert not pages.is_open("s") and pages.closed_at("s") is not None
    pages.prune(datetime.datetime.now() + datetime.timedelta(seconds=1))
    assert pages.closed_at("s") is None


def wait_until(check, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.2)
    return check()


@pytest.mark.slow
def test_the_apps_api_sessions_go_once_answered_and_an_open_page_stays(app_server, monkeypatch) -> None:
    demo, url = app_server
    held = demo.state_holder.session_data
    monkeypatch.setattr(sessions_held, "CALL_GRACE_S", 1)
    monkeypatch.setattr(sessions_held, "PAGE_GRACE_S", 1)
    ids = []
    for _ in range(5):
        answer = httpx.post(f"{url}gradio_api/call/levels", json={"data": []}, timeout=30).json()
        httpx.get(f"{url}gradio_api/call/levels/{answer['event_id']}", timeout=30)
        ids.append(answer["event_id"])  # a call without a session id is a session of its own, named by its event
    assert any(i in held for i in ids)  # held while it is answered …
    assert wait_until(lambda: not any(i in held for i in ids))  # … and dropped by the server's own sweep
    # a page: its heartbeat open, its state set (as the page's first event sets it), idle: it stays
    page = "a-page-left-open"
    demo.state_holder[page].state_data[0] = {"level": "2-1"}
    with httpx.Client(timeout=30) as http, http.stream("GET", f"{url}gradio_api/heartbeat/{page}") as beat:
        lines = beat.iter_lines()  # kept: a dropped iterator would close the stream
        assert next(lines) == "data: ALIVE"
        time.sleep(3)
        assert page in held
    assert wait_until(lambda: page not in held)  # its tab closed: gone after the grace


def test_a_session_holds_no_copy_of_the_page(app_server) -> None:
    """A new session is a LeanSession: no deep-link copy of every component's config (≈40 KB a session)."""
    import gc
    import tracemalloc

    demo, _ = app_server
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    ids = [f"lean-{i}" for i in range(50)]
    for session_id in ids:
        assert isinstance(demo.state_holder[session_id], sessions_held.LeanSession)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    per_session = sum(d.size_diff for d in after.compare_to(before, "filename")) / len(ids)
    assert per_session < 25_000, per_session
    state = demo.state_holder[ids[0]]
    assert state.config_values == {} and state.state_data == {} and state.blocks_config is not demo.default_config


def test_uploads_and_deep_links_are_refused(app_url) -> None:
    upload = httpx.post(f"{app_url}gradio_api/upload", files={"files": ("x.txt", b"hello")}, timeout=10)
    link = httpx.get(f"{app_url}gradio_api/deep_link", params={"session_hash": "lean-0"}, timeout=10)
    for answer in (upload, link):
        assert answer.status_code == 404 and "no uploads" in answer.json()["error"]

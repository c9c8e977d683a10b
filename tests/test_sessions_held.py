"""The server drops a session's state once the session has ended: an API call's soon after it was answered, a closed
page's a while after its last event; a page still open keeps its state however long it is idle."""

import datetime
import threading
import time
from collections import OrderedDict

import httpx
import pytest

from ui import sessions_held
from ui.sessions_held import CALL_GRACE_S, PAGE_GRACE_S, drop_stale, stale


class Held:
    def __init__(self, state_data: dict, is_closed: bool = False) -> None:
        self.state_data = state_data
        self.is_closed = is_closed


class Holder:
    """What sessions_held reads of Gradio's StateHolder."""

    def __init__(self, sessions: dict[str, tuple[Held, float]], now: datetime.datetime) -> None:
        self.session_data = OrderedDict((k, held) for k, (held, _) in sessions.items())
        self.time_last_used = {k: now - datetime.timedelta(seconds=idle) for k, (_, idle) in sessions.items()}
        self.lock = threading.Lock()


def test_what_is_stale() -> None:
    now = datetime.datetime.now()
    holder = Holder({
        "call-just-answered": (Held({}), CALL_GRACE_S - 5),
        "call-long-ago": (Held({}), CALL_GRACE_S + 5),
        "page-open-idle-an-hour": (Held({1: {"level": "2-1"}}), 3600),
        "page-closed-a-moment-ago": (Held({1: {"level": "2-1"}}, is_closed=True), 60),
        "page-closed-long-ago": (Held({1: {"level": "2-1"}}, is_closed=True), PAGE_GRACE_S + 5),
    }, now)  # fmt: skip
    assert stale(holder, now) == ["call-long-ago", "page-closed-long-ago"]
    assert drop_stale(holder) == 2
    assert list(holder.session_data) == list(holder.time_last_used)
    assert set(holder.session_data) == {"call-just-answered", "page-open-idle-an-hour", "page-closed-a-moment-ago"}


def test_the_apps_api_sessions_are_dropped_once_answered(app_server, monkeypatch: pytest.MonkeyPatch) -> None:
    demo, url = app_server
    monkeypatch.setattr(sessions_held, "CALL_GRACE_S", 1)
    ids = []
    for _ in range(5):
        answer = httpx.post(f"{url}gradio_api/call/levels", json={"data": []}, timeout=30).json()
        httpx.get(f"{url}gradio_api/call/levels/{answer['event_id']}", timeout=30)
        ids.append(answer["event_id"])  # a call without a session id is a session of its own, named by its event
    assert any(i in demo.state_holder.session_data for i in ids)  # held while it is answered …
    deadline = time.monotonic() + 10
    while any(i in demo.state_holder.session_data for i in ids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(i in demo.state_holder.session_data for i in ids)  # … and dropped by the server's own sweep

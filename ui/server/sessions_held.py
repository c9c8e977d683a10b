"""What the server holds of a Gradio session and for how long: its state without a copy of the page for deep links
(≈20 KB, not ≈61), an open page's for good, a call that never opened a page's soon after it was answered, a closed
page's half an hour after it closed."""

import datetime
import os
import re
import threading
from copy import copy

import gradio.state_holder
from starlette.types import ASGIApp, Receive, Scope, Send

CALL_GRACE_S = 30  # a session holding no state (an API call, a gradio_client): dropped 30 s after it was last used
PAGE_GRACE_S = 1800  # a page with no heartbeat open (its tab closed): dropped 30 minutes after its last sign of life
# (a phone locked through a lesson, or a lost connection, comes back to its level and attempt as it left them; at
# ≈20 KB a session, a class's closed pages cost little)
HEARTBEAT = re.compile(r"/heartbeat/([^/]+)/?$")


class LeanSession(gradio.state_holder.SessionState):
    """Gradio's SessionState without `config_values`, the copy of every component's config it keeps for deep links
    (a `gr.DeepLinkButton`; this app has none and refuses the route: ui/server/unused_routes.py): not built at the start, and
    not written when an event updates a component (the updated component itself is kept, as Gradio keeps it)."""

    def __init__(self, blocks) -> None:  # as SessionState.__init__ (Gradio 6.31), without building config_values
        self.blocks_config = copy(blocks.default_config)
        self.config_values = {}
        self.state_data = {}
        self._state_ttl = {}
        self.is_closed = False
        self.STATE_TTL_WHEN_CLOSED = 1 if os.getenv("GRADIO_IS_E2E_TEST", None) else 3600

    def __setitem__(self, key: int, value) -> None:  # as SessionState.__setitem__, without the deep-link copy
        from gradio.components import State

        block = self.blocks_config.blocks.get(key)
        if isinstance(block, State):
            self._state_ttl[key] = (block.time_to_live, datetime.datetime.now())
            self.state_data[key] = value
        else:
            self.blocks_config.blocks[key] = value

    def _update_config(self, key: int) -> None:  # the deep-link copy only
        pass

    def _update_value_in_config(self, key: int, value) -> None:  # the deep-link copy only
        pass


def lean_sessions() -> None:
    """New sessions of the server's StateHolder are LeanSessions (it looks the class up when it makes one)."""
    gradio.state_holder.SessionState = LeanSession


class Pages:
    """Which sessions have a page open now (their heartbeat stream) and when each last closed one."""

    def __init__(self) -> None:
        self._open: dict[str, int] = {}
        self._closed_at: dict[str, datetime.datetime] = {}
        self._lock = threading.Lock()

    def opened(self, session_id: str) -> None:
        with self._lock:
            self._open[session_id] = self._open.get(session_id, 0) + 1
            self._closed_at.pop(session_id, None)

    def closed(self, session_id: str) -> None:
        with self._lock:
            left = self._open.get(session_id, 1) - 1
            if left > 0:
                self._open[session_id] = left
            else:
                self._open.pop(session_id, None)
                self._closed_at[session_id] = datetime.datetime.now()

    def is_open(self, session_id: str) -> bool:
        return session_id in self._open

    def closed_at(self, session_id: str) -> datetime.datetime | None:
        return self._closed_at.get(session_id)

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._closed_at.pop(session_id, None)

    def prune(self, before: datetime.datetime) -> None:
        """Forget the pages closed before `before` (a heartbeat for a session never used leaves nothing for long)."""
        with self._lock:
            for session_id in [s for s, at in self._closed_at.items() if at < before]:
                del self._closed_at[session_id]


class WatchPages:
    """An ASGI middleware noting each page's heartbeat stream (GET …/heartbeat/{session}) as it opens and ends."""

    def __init__(self, app: ASGIApp, pages: Pages) -> None:
        self.app = app
        self.pages = pages

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = HEARTBEAT.search(scope.get("path", "")) if scope["type"] == "http" else None
        if found is None or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        session_id = found.group(1)[:128]
        self.pages.opened(session_id)
        try:
            await self.app(scope, receive, send)
        finally:
            self.pages.closed(session_id)


def stale(holder, pages: Pages, now: datetime.datetime) -> list[str]:
    """The sessions of a Gradio StateHolder whose state is no longer wanted, as of `now`."""
    found = []
    for session_id, state in list(holder.session_data.items()):
        if pages.is_open(session_id):
            continue  # a page open, however long idle
        last = max(holder.time_last_used.get(session_id, now), pages.closed_at(session_id) or datetime.datetime.min)
        idle = (now - last).total_seconds()
        if idle > (PAGE_GRACE_S if state.state_data else CALL_GRACE_S):
            found.append(session_id)
    return found


def drop_stale(holder, pages: Pages) -> int:
    """Drop the stale sessions' state; how many were dropped."""
    now = datetime.datetime.now()
    gone = stale(holder, pages, now)
    pages.prune(now - datetime.timedelta(seconds=2 * PAGE_GRACE_S))
    with holder.lock:
        for session_id in gone:
            holder.session_data.pop(session_id, None)
            holder.time_last_used.pop(session_id, None)
            pages.forget(session_id)
    return len(gone)


def hold_briefly(demo, pages: Pages) -> None:
    """Drop stale sessions each time Gradio itself sweeps expired state (once a second, on the server's own loop, so
    no sweep runs beside another)."""
    holder = demo.state_holder
    sweep = holder.delete_all_expired_state

    def sweep_and_drop() -> None:
        drop_stale(holder, pages)
        sweep()

    holder.delete_all_expired_state = sweep_and_drop

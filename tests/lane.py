"""Lab actions as the page sees them: while a run waits in the server's lane, wait for it and ask again."""

import re

from dragon.runtime.lane import LANE
from ui.rooms import registry as rooms


def waiting_id(out: dict) -> str | None:
    """The run an answer waits for: the attempt's, or the wait box's on the panel (a load)."""
    lab = out.get("session", {}).get("lab", {})
    if "waiting" in lab:
        return lab["waiting"]
    found = re.search(r'data-wait="([^"]+)"', out.get("lab", {}).get("body", ""))
    return found.group(1) if found else None


def answered(event: str, state: dict, saved: str, data: dict | None = None, timeout: float = 300) -> dict:
    """rooms.answer, and while its run is on its way, what the page does: wait for it, then send the event again."""
    out = rooms.answer(event, state, saved, data)
    while (run_id := waiting_id(out)) is not None:
        run = LANE.by_id(run_id)
        assert run is not None and run.done.wait(timeout), f"run {run_id} did not end"
        out = rooms.answer(event, out.get("session", state), out.get("saved", saved), data)
    return out

"""Lab actions as the page sees them: while a run waits in the server's lane, wait for it and ask again."""

import re
import threading
import time

from dragon import game
from dragon.runtime.lane import LANE, Lane, Run
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


def hold(lane: Lane, kind: str = "train") -> tuple[threading.Event, Run]:
    """A run that holds the lane until the event is set."""
    gate = threading.Event()
    held = lane.submit(f"hold/{time.time_ns()}", lambda report: (report(0.5, "h = 2"), gate.wait(30)), kind)
    while held.state != "running":
        time.sleep(0.01)
    return gate, held


def asked_for_a_new_seed(event: str, level_id: str, data: dict, lang: str) -> tuple[dict, Run]:
    """A press with a seed nobody trained, answered while the lane is held: the attempt waits for a new run; the run
    is then stopped before it trains (it ends at its first report), so a test never pays for the training."""
    gate, _ = hold(LANE)
    try:
        out = rooms.answer(event, {"level": level_id, "lang": lang}, game.save(game.new_progress()), data)
        run = LANE.by_id(waiting_id(out))
        assert run is not None and run.state == "queued", out
        run.stop = True
    finally:
        gate.set()
    assert run.done.wait(30) and run.state == "failed"
    return out, run

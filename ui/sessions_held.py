"""How long the server holds a Gradio session's state (a copy of the page's config, ≈64 KB, and the player's state):
a call that never opened a page is dropped soon after it is answered, a closed page a while after its last event."""

import datetime

CALL_GRACE_S = 30  # a session holding no state (an API call, a gradio_client): dropped 30 s after it was last used
PAGE_GRACE_S = 600  # a page whose tab has closed: dropped 10 minutes after its last event (a page back from a lost
# connection within that time finds its level and attempt as it left them)


def stale(holder, now: datetime.datetime) -> list[str]:
    """The sessions of a Gradio StateHolder whose state is no longer wanted, as of `now`."""
    found = []
    for session_id, state in list(holder.session_data.items()):
        idle = (now - holder.time_last_used.get(session_id, now)).total_seconds()
        if (not state.state_data and idle > CALL_GRACE_S) or (getattr(state, "is_closed", False) and idle > PAGE_GRACE_S):
            found.append(session_id)
    return found


def drop_stale(holder) -> int:
    """Drop the stale sessions' state; how many were dropped."""
    gone = stale(holder, datetime.datetime.now())
    with holder.lock:
        for session_id in gone:
            holder.session_data.pop(session_id, None)
            holder.time_last_used.pop(session_id, None)
    return len(gone)


def hold_briefly(demo) -> None:
    """Drop stale sessions each time Gradio itself sweeps expired state (once a second, on the server's own loop, so
    no sweep runs beside another)."""
    holder = demo.state_holder
    sweep = holder.delete_all_expired_state

    def sweep_and_drop() -> None:
        drop_stale(holder)
        sweep()

    holder.delete_all_expired_state = sweep_and_drop

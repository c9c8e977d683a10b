"""ui/server/queue_wake.py: Gradio's queue waits for work instead of looking every millisecond, and answers as ever."""

import threading
import time

import gradio as gr

from tests.app_server import free_port
from ui.server import queue_wake


def test_the_pinned_gradios_queue_loops_are_the_ones_copied() -> None:
    assert queue_wake.matches_gradio(), "gradio's Queue loops changed: compare ui/server/queue_wake.py with them"


def wake_ups(threads, seconds: float = 1.0) -> list[int]:
    """How often each thread went to sleep and woke up again in the same `seconds` (its voluntary context switches)."""
    def switches(thread) -> int:
        for line in open(f"/proc/self/task/{thread.native_id}/status"):
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
        raise AssertionError("no context switches read")

    before = [switches(thread) for thread in threads]
    time.sleep(seconds)
    return [switches(thread) - b for thread, b in zip(threads, before, strict=True)]


def served(wake: bool, seen: threading.Event | None = None) -> gr.Blocks:
    """A one-function app with a queue: Gradio's own loops, or loops that wait for work (looking again only after a
    minute: a wake-up that did not come would be seen as a minute's wait). Its function reports its half, then waits
    until the caller has seen that report (`seen`; 15 s at most): a busy machine makes the report slow, never missed."""
    def halve(x: float, progress=gr.Progress()) -> float:
        progress(0.5, desc="halving")
        if seen is None or not seen.wait(15):
            time.sleep(0.3)
        return x / 2

    with gr.Blocks() as demo:
        number = gr.Number()
        number.submit(halve, number, number, api_name="halve")
    demo.queue()
    if wake:
        assert queue_wake.wake_on_work(demo._queue, fallback_s=60)
    demo.launch(server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True)
    return demo


def test_an_idle_queue_sleeps_and_a_queued_event_with_progress_is_answered_at_once() -> None:
    from gradio_client import Client

    seen = threading.Event()
    stock, waking = served(wake=False), served(wake=True, seen=seen)
    try:
        time.sleep(0.5)  # both servers started
        busy, idle = wake_ups([stock.server.thread, waking.server.thread])
        assert idle * 5 < busy, (idle, busy)  # in the same second: Gradio's own loop wakes ~600 times (this: ~11)
        client = Client(waking.local_url, verbose=False)
        for x in (2.0, 7.0):
            seen.clear()
            job, progress, deadline = client.submit(x, api_name="/halve"), [], time.monotonic() + 20
            while not job.done():  # the progress loop, woken when the job started, reports its half
                assert time.monotonic() < deadline, "the queued event waited for the minute's look"
                progress += [unit.desc for unit in job.status().progress_data or []]
                if "halving" in progress:
                    seen.set()  # (with two copies of the suite at once, a 0.3 s job once ended before it was seen)
                time.sleep(0.02)
            assert job.result() == x / 2
            assert "halving" in progress
    finally:
        stock.close()
        waking.close()

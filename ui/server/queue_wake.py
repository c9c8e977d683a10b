"""Gradio's queue waits for work instead of looking for it every millisecond: an idle server stays idle."""

import asyncio
import hashlib
import inspect
import logging
import time

from gradio.queueing import Queue
from gradio.utils import run_coro_in_background, set_task_name

# Gradio's queue looks for a new event every millisecond while it has none (and for progress every 10 ms): an idle
# app spends 0.078–0.088 core-s a second (measured on 2 cores; 0.010–0.020 with these loops), a class's server the
# same beside its players. These loops are Gradio's own, step for step, except that where Gradio sleeps a
# millisecond they wait until an event arrives or a job ends (both wake them at once: no event waits longer than
# before), or FALLBACK_S.
FALLBACK_S = 0.5  # a look now and then all the same, should a wake-up ever be missed (none is: every push and every
# job's end wakes the loops)

# The loops copied below, as the pinned Gradio writes them: another Gradio's loops may differ, and are then left as
# they are (busier, never wrong). tests/test_queue_wake.py holds that the pinned Gradio's are these.
COPIED_FROM = {
    "start_processing": "d65be5a5cbed97d75e13233ab7d0dfc9f347c4ffd33bdcb47293d696f38aaa1f",
    "start_progress_updates": "7cbbec1cf932324cd2fc80791130a2cf1ad7d31e42aead9798abc4e51d9e2823",
}


def digest(method) -> str:
    return hashlib.sha256(inspect.getsource(method).encode()).hexdigest()


def matches_gradio() -> bool:
    """Whether the installed Gradio's two polling loops are the ones copied here."""
    return all(digest(getattr(Queue, name)) == sha for name, sha in COPIED_FROM.items())


def wake_on_work(queue: Queue, fallback_s: float = FALLBACK_S) -> bool:
    """Give `queue` loops that wait for work (see above), looking at least every `fallback_s`; False, and Gradio's own
    loops, where they were not copied from the installed Gradio."""
    if not matches_gradio():
        logging.getLogger("dragon").warning("Gradio's queue loops differ from ui/server/queue_wake.py's: left as they are")
        return False
    wakes: dict[str, asyncio.Event] = {}  # made in the server's event loop, when its loops start

    async def _nap(wake: asyncio.Event) -> None:
        """Until `wake` is set, or fallback_s."""
        try:
            await asyncio.wait_for(wake.wait(), fallback_s)
        except asyncio.TimeoutError:
            pass

    def wake_all() -> None:
        for wake in wakes.values():
            wake.set()

    push, process_events = queue.push, queue.process_events

    async def pushed(*args, **kwargs):
        try:
            return await push(*args, **kwargs)
        finally:
            wake_all()  # an event arrived: the processing loop looks at once

    async def processed(*args, **kwargs):
        try:
            return await process_events(*args, **kwargs)
        finally:
            wake_all()  # a job ended: a worker is free, and its concurrency slot

    async def start_processing() -> None:
        self = queue
        wake = wakes["processing"] = asyncio.Event()
        try:
            while not self.stopped:
                wake.clear()  # before looking: a wake-up from here on (during the lock's await too) stays set, and
                # the nap below returns at once
                if len(self) == 0:
                    await _nap(wake)
                    continue

                if None not in self.active_jobs:
                    await _nap(wake)
                    continue

                # Using mutex to avoid editing a list in use
                async with self.delete_lock:
                    event_batch = self.get_events()

                if event_batch:
                    events, batch, concurrency_id = event_batch
                    self.active_jobs[self.active_jobs.index(None)] = events
                    event_queue = self.event_queue_per_concurrency_id[concurrency_id]
                    event_queue.current_concurrency += 1
                    start_time = time.time()
                    fn = events[0].fn
                    event_queue.start_times_per_fn[fn].add(start_time)
                    for event in events:
                        if (a := self.event_analytics.get(event._id)) is not None:
                            a["status"] = "processing"
                    process_event_task = run_coro_in_background(
                        self.process_events, events, batch, start_time, fn
                    )
                    set_task_name(process_event_task, events[0].session_hash, fn._id, events[0]._id, batch)

                    self._asyncio_tasks.add(process_event_task)
                    process_event_task.add_done_callback(self._asyncio_tasks.discard)
                    if self.live_updates:
                        self.broadcast_estimations(concurrency_id)
                    if "progress" in wakes:
                        wakes["progress"].set()  # a job runs: its progress is looked at
                else:
                    await _nap(wake)
        finally:
            self.stopped = True
            self._cancel_asyncio_tasks()

    async def start_progress_updates() -> None:
        self = queue
        wake = wakes["progress"] = asyncio.Event()
        while not self.stopped:
            wake.clear()
            events = [evt for job in self.active_jobs if job is not None for evt in job]

            if len(events) == 0:
                await _nap(wake)  # no job runs: nothing to report until one starts
                continue

            for event in events:
                if event.progress_pending and event.progress:
                    event.progress_pending = False
                    self.send_message(event, event.progress)

            await asyncio.sleep(self.progress_update_sleep_when_free)

    queue.push, queue.process_events = pushed, processed
    queue.start_processing, queue.start_progress_updates = start_processing, start_progress_updates
    return True

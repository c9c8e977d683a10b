"""The server's lane for the runs that time or train: one at a time (a run beside another would slow both clocks),
races before loads before trainings, each with its progress, its place in the queue and its record (when, on which
device, how long) for every player who asks, so nobody waits in a queue for an answer already known."""

import atexit
import itertools
import logging
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

KINDS = ("race", "load", "train")  # the lane's order: a short race first, then a model load, then a training
MAX_QUEUED = 64  # runs waiting at once; one more is refused with a message (the lane would never catch up)
KEEP_DONE = 64  # finished runs remembered (their records and results); the oldest is forgotten first
MAX_POINTS = 400  # live-curve points kept per run
PER_OWNER = 8  # new runs queued or running for one owner (an address: a school behind one shares them)
Report = Callable[..., object]  # report(fraction in [0, 1], what is running[, point {"series", "x", "y"}])
Compute = Callable[[Report], Any]


class LaneFullError(RuntimeError):
    """The lane holds MAX_QUEUED runs already."""


class OwnerFullError(LaneFullError):
    """The owner submitting (OWNER) has PER_OWNER runs queued or running already."""


OWNER: ContextVar[str] = ContextVar("lane_owner", default="")  # who submits now ("": the server itself, no limit)


@contextmanager
def owned_by(owner: str) -> Iterator[None]:
    """Runs submitted inside count against `owner`'s PER_OWNER (a page's event sets its caller's address)."""
    token = OWNER.set(owner)
    try:
        yield
    finally:
        OWNER.reset(token)


class StoppedError(RuntimeError):
    """The server is stopping: the run ends at its next report."""


@dataclass(eq=False)
class Run:
    """One computation in the lane: what it is, where it stands, and what it gave."""

    key: str  # what it computes: the same key is the same result ("heads/seed=0/cpu"); a race has a key per press
    kind: str  # one of KINDS
    compute: Compute = field(repr=False)
    id: str = field(default_factory=lambda: secrets.token_urlsafe(9))  # what a page asks about (never the key)
    level: str = ""  # the level it serves ("3-4"), for the page's words
    seed: int | None = None
    owner: str = ""  # who asked for it first (OWNER then)
    order: int = 0
    state: str = "queued"  # queued → running → done | failed
    fraction: float = 0.0
    what: str = ""
    points: list[dict] = field(default_factory=list)
    queued_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    seconds: float | None = None
    result: Any = field(default=None, repr=False)
    error: str = ""
    done: threading.Event = field(default_factory=threading.Event, repr=False)
    stop: bool = False  # set when the server stops: the next report ends the run

    def report(self, fraction: float, what: str = "", point: dict | None = None) -> None:
        """The computation's progress (called from the lane's thread)."""
        if self.stop:
            raise StoppedError("the server is stopping")
        self.fraction = min(1.0, max(self.fraction, float(fraction)))
        self.what = what
        if point is not None and len(self.points) < MAX_POINTS:
            self.points.append(point)


class Lane:
    """A queue and one worker thread. `submit` gives the run for a key (the one already queued, running or done, if
    any); `wait` waits a little for it; `ahead` says how many runs go before it; `run_now` submits and waits."""

    def __init__(self, max_queued: int = MAX_QUEUED, keep_done: int = KEEP_DONE, per_owner: int = PER_OWNER) -> None:
        self.max_queued, self.keep_done, self.per_owner = max_queued, keep_done, per_owner
        self._cv = threading.Condition()
        self._queue: list[Run] = []
        self._running: Run | None = None
        self._runs: OrderedDict[str, Run] = OrderedDict()  # every run known, by key, the newest last
        self._ids: dict[str, Run] = {}
        self._order = itertools.count()
        self._worker: threading.Thread | None = None

    def submit(self, key: str, compute: Compute, kind: str, level: str = "", seed: int | None = None,
               known: tuple[bool, Any] = (False, None)) -> Run:
        """The run for key: the one queued, running or done if any; else, when the result is `known` already
        (found, result), a run that is done at once (it never waits behind others); else a new run in the queue."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
        with self._cv:
            run = self._runs.get(key)
            if run is not None and run.state != "failed":
                self._runs.move_to_end(key)
                return run
            if run is not None:
                self._ids.pop(run.id, None)  # a failed run is tried again under a new id
            if known[0]:
                run = Run(key, kind, compute, level=level, seed=seed, state="done", fraction=1.0, result=known[1],
                          finished_at=time.time(), seconds=0.0)
                run.done.set()
                return self._register(run)
            if len(self._queue) >= self.max_queued:
                raise LaneFullError(f"{self.max_queued} runs are waiting already")
            owner = OWNER.get()
            if owner and sum(r.owner == owner for r in [*self._queue, self._running] if r) >= self.per_owner:
                raise OwnerFullError(f"{self.per_owner} runs for this address are waiting already")
            run = Run(key, kind, compute, level=level, seed=seed, order=next(self._order), owner=owner)
            self._queue.append(run)
            self._queue.sort(key=lambda r: (KINDS.index(r.kind), r.order))
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="dragon-lane", daemon=True)
                self._worker.start()
            self._cv.notify_all()
            return self._register(run)

    def _register(self, run: Run) -> Run:
        """Remember a new run by its key and its id (the caller holds the lock)."""
        self._runs[run.key] = run
        self._ids[run.id] = run
        self._forget()
        return run

    def get(self, key: str) -> Run | None:
        with self._cv:
            return self._runs.get(key)

    def by_id(self, run_id: object) -> Run | None:
        """The run a page asks about by its id (None for an unknown or forgotten one)."""
        with self._cv:
            return self._ids.get(run_id) if isinstance(run_id, str) else None

    def ahead(self, run: Run) -> int:
        """Runs the lane does before this one (the one running included); 0 once it runs."""
        with self._cv:
            if run.state != "queued" or run not in self._queue:
                return 0
            return self._queue.index(run) + (self._running is not None)

    def queued(self) -> int:
        with self._cv:
            return len(self._queue)

    def running(self) -> Run | None:
        with self._cv:
            return self._running

    def in_lane(self) -> bool:
        """Whether the caller is the lane's own thread (a run that asks for another computes it in place)."""
        return threading.current_thread() is self._worker

    @staticmethod
    def wait(run: Run, seconds: float) -> bool:
        """Wait at most `seconds` for the run to end; whether it has."""
        return run.done.wait(seconds)

    def run_now(self, key: str, compute: Compute, kind: str, level: str = "", seed: int | None = None,
                known: tuple[bool, Any] = (False, None)) -> Any:
        """The result for key: the `known` one at once, else waiting for the lane (a caller already in the lane
        computes it at once, reporting to the run it is part of)."""
        if known[0]:
            return known[1]
        if self.in_lane():
            running = self.running()
            return compute(running.report if running is not None else lambda *a, **k: None)
        run = self.submit(key, compute, kind, level, seed)
        run.done.wait()
        if run.state == "failed":
            raise RuntimeError(run.error)
        return run.result

    def close(self, seconds: float = 30) -> None:
        """The server stops: nothing more is started, the run under way ends at its next report (a thread left inside
        torch while the interpreter shuts down aborts the process)."""
        with self._cv:
            for run in self._queue:
                run.state, run.error = "failed", "the server is stopping"
                run.done.set()
            self._queue.clear()
            running = self._running
            if running is not None:
                running.stop = True
        if running is not None and not self.in_lane():
            running.done.wait(seconds)

    def _forget(self) -> None:
        """Keep at most keep_done finished runs: the least recently asked for goes first."""
        finished = [k for k, r in self._runs.items() if r.finished_at is not None]
        for key in finished[: max(0, len(finished) - self.keep_done)]:
            self._ids.pop(self._runs.pop(key).id, None)

    def _work(self) -> None:
        while True:
            with self._cv:
                while not self._queue:
                    self._cv.wait()
                run = self._queue.pop(0)
                self._running = run
            run.state, run.started_at = "running", time.time()
            t0 = time.perf_counter()
            try:
                run.result = run.compute(run.report)
                run.state = "done"
            except Exception as err:  # a failed run is said to whoever waits for it; the lane goes on
                run.error, run.state = str(err) or type(err).__name__, "failed"
                log.warning("run %s failed: %s", run.key, run.error)
            run.seconds = time.perf_counter() - t0
            run.finished_at = time.time()
            run.fraction = 1.0 if run.state == "done" else run.fraction
            with self._cv:
                self._running = None
                self._forget()
            run.done.set()


LANE = Lane()  # the server's one lane: every player's runs, and the server's own at start
atexit.register(LANE.close)

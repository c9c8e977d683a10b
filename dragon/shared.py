"""Results fixed by their inputs (a seeded training run, the reference races): computed once per server, shared."""

import threading
from collections.abc import Callable, Hashable
from typing import TypeVar

R = TypeVar("R")
_RESULTS: dict = {}
_LOCKS: dict[Hashable, threading.Lock] = {}  # one lock a key: different computations never wait for each other
_GUARD = threading.Lock()


def once(key: Hashable, compute: Callable[[], R]) -> R:
    """The result for `key`: computed by the first caller; a caller asking while it runs waits for it, not for a run
    of its own, and every later one gets it at once."""
    with _GUARD:
        lock = _LOCKS.setdefault(key, threading.Lock())
    with lock:
        if key not in _RESULTS:
            _RESULTS[key] = compute()
        return _RESULTS[key]

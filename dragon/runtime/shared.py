"""Results fixed by their inputs (a seeded training run, the reference races): computed once per server, shared."""

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

R = TypeVar("R")
MAX_RESULTS = 48  # results kept (players' fresh seeds included); the least recently asked for is dropped first
_RESULTS: OrderedDict = OrderedDict()
_LOCKS: dict[Hashable, threading.Lock] = {}  # one lock a key: different computations never wait for each other
_GUARD = threading.Lock()


def once(key: Hashable, compute: Callable[[], R]) -> R:
    """The result for `key`: computed by the first caller; a caller asking while it runs waits for it, not for a run
    of its own, and every later one gets it at once (until MAX_RESULTS newer ones have pushed it out)."""
    with _GUARD:
        lock = _LOCKS.setdefault(key, threading.Lock())
    with lock:
        with _GUARD:
            if key in _RESULTS:
                _RESULTS.move_to_end(key)
                return _RESULTS[key]
        try:
            result = compute()
        except BaseException:
            with _GUARD:
                _LOCKS.pop(key, None)  # a failed computation leaves nothing behind (a later caller tries afresh)
            raise
        with _GUARD:
            _RESULTS[key] = result
            while len(_RESULTS) > MAX_RESULTS:
                old, _ = _RESULTS.popitem(last=False)
                _LOCKS.pop(old, None)
        return result


def known(key: Hashable) -> tuple[bool, object]:
    """(True, the result) when `key` has been computed and is still kept, else (False, None); never computes."""
    with _GUARD:
        if key in _RESULTS:
            _RESULTS.move_to_end(key)
            return True, _RESULTS[key]
        return False, None

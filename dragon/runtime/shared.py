"""Results fixed by their inputs (a seeded training run, the reference races): computed once per server, shared."""

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

R = TypeVar("R")
MAX_RESULTS = 48  # results kept (players' fresh seeds included); the least recently asked for is dropped first


class Shared:
    """A bounded store of results by key: `once` computes a key's result a single time, `known` only looks."""

    def __init__(self, max_results: int = MAX_RESULTS) -> None:
        self.max_results = max_results
        self.results: OrderedDict = OrderedDict()
        self.locks: dict[Hashable, threading.Lock] = {}  # a lock a key: computations never wait for each other
        self.guard = threading.Lock()

    def once(self, key: Hashable, compute: Callable[[], R]) -> R:
        """The result for `key`: computed by the first caller; a caller asking while it runs waits for it, not for a
        run of its own, and every later one gets it at once (until max_results newer ones have pushed it out)."""
        with self.guard:
            lock = self.locks.setdefault(key, threading.Lock())
        with lock:
            with self.guard:
                if key in self.results:
                    self.results.move_to_end(key)
                    return self.results[key]
            try:
                result = compute()
            except BaseException:
                with self.guard:
                    self.locks.pop(key, None)  # a failure leaves nothing behind (a later caller tries afresh)
                raise
            with self.guard:
                self.results[key] = result
                while len(self.results) > self.max_results:
                    old, _ = self.results.popitem(last=False)
                    self.locks.pop(old, None)
            return result

    def known(self, key: Hashable) -> tuple[bool, object]:
        """(True, the result) when `key` has been computed and is still kept, else (False, None); never computes."""
        with self.guard:
            if key in self.results:
                self.results.move_to_end(key)
                return True, self.results[key]
            return False, None


SHARED = Shared()  # the server's store: every lesson's fixed results
once, known = SHARED.once, SHARED.known

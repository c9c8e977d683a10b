"""Results fixed by their inputs (a seeded training run, the reference races): computed once per server, shared; with
DRAGON_RESULTS_DIR, once per folder (every server, and every test process, that is given that folder)."""

import contextlib
import fcntl
import hashlib
import io
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from typing import TypeVar

import torch

R = TypeVar("R")
MAX_RESULTS = 48  # results kept (players' fresh seeds included); the least recently asked for is dropped first
CODE = Path(__file__).resolve().parent.parent  # the dragon package: results on disk are kept per version of its code


def code_version(root: Path = CODE) -> str:
    """A digest of the dragon package's source: results written by other code are never read back."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


class Folder:
    """Results on disk, one file per key (torch.save of the result), written once under a lock that other processes
    wait on: a second process asking for a result the first is computing waits for it, then reads it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path) / code_version()
        self.path.mkdir(parents=True, exist_ok=True)

    def file(self, key: Hashable) -> Path:
        return self.path / hashlib.sha256(repr(key).encode()).hexdigest()[:32]

    @contextlib.contextmanager
    def locked(self, key: Hashable) -> Iterator[Path]:
        target = self.file(key)
        with open(target.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, whatever happens
            yield target

    @staticmethod
    def read(target: Path) -> tuple[bool, object]:
        if not target.exists():
            return False, None
        try:
            return True, torch.load(target, weights_only=False)  # written by this code (the version's folder)
        except Exception:  # a damaged file: computed again, and written over
            return False, None

    @staticmethod
    def write(target: Path, result: object) -> None:
        buffer = io.BytesIO()
        try:
            torch.save(result, buffer)
        except Exception:  # a result that cannot be pickled stays in memory only
            return
        partial = target.with_suffix(".part")
        partial.write_bytes(buffer.getvalue())
        os.replace(partial, target)  # whole or absent: a reader never sees half a file


class Shared:
    """A bounded store of results by key: `once` computes a key's result a single time, `known` only looks (in memory:
    a result on disk is read by the `once` that asks for it)."""

    def __init__(self, max_results: int = MAX_RESULTS, folder: str | Path | None = None) -> None:
        self.max_results = max_results
        self.results: OrderedDict = OrderedDict()
        self.locks: dict[Hashable, threading.Lock] = {}  # a lock a key: computations never wait for each other
        self.guard = threading.Lock()
        self.folder = Folder(folder) if folder else None

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
                result = self.computed(key, compute)
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

    def computed(self, key: Hashable, compute: Callable[[], R]) -> R:
        """compute(), or the result another process of the same folder wrote for this key (waiting while it runs)."""
        if self.folder is None:
            return compute()
        with self.folder.locked(key) as target:
            found, result = self.folder.read(target)
            if found:
                return result
            result = compute()
            self.folder.write(target, result)
            return result

    def known(self, key: Hashable) -> tuple[bool, object]:
        """(True, the result) when `key` has been computed and is still kept, else (False, None); never computes."""
        with self.guard:
            if key in self.results:
                self.results.move_to_end(key)
                return True, self.results[key]
            return False, None


SHARED = Shared(folder=os.environ.get("DRAGON_RESULTS_DIR") or None)  # the server's store: every lesson's fixed results
once, known = SHARED.once, SHARED.known

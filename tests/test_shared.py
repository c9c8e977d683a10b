"""dragon/runtime/shared.py, the server's results computed once and shared: bounded in entries, nothing left by a
failure; with a folder, once for every process given it (the test session's processes share one)."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from dragon.runtime import shared as shared_module
from dragon.runtime.shared import Folder, Shared

ROOT = Path(__file__).resolve().parent.parent


def test_results_are_bounded_and_a_failure_leaves_nothing() -> None:
    store = Shared(max_results=3)  # a store of its own: the server's results other tests computed are kept for them
    for i in range(10):
        assert store.once(("bounded", i), lambda i=i: i * i) == i * i
    assert list(store.results) == [("bounded", i) for i in (7, 8, 9)]
    assert set(store.locks) == set(store.results)  # a lock only for what is kept
    for i in range(10):
        with pytest.raises(ZeroDivisionError):
            store.once(("failing", i), lambda: 1 / 0)
    assert set(store.locks) == set(store.results) == {("bounded", i) for i in (7, 8, 9)}
    assert store.known(("failing", 0)) == (False, None) and store.once(("failing", 0), lambda: "now") == "now"


def test_stores_given_one_folder_compute_a_key_once_and_the_second_waits_for_it(tmp_path: Path) -> None:
    """Two stores on one folder (as two processes of a test session, or two servers of a school): the key asked of
    both at once is computed by one while the other waits, then reads what the first wrote; a tensor comes back
    equal; a result that cannot be pickled stays in its own store's memory; a damaged file is computed again."""
    a, b, calls = Shared(folder=tmp_path), Shared(folder=tmp_path), []

    def slow() -> dict:
        calls.append(1)
        time.sleep(0.3)
        return {"weights": torch.arange(4.0), "seed": 7}

    got = []
    threads = [threading.Thread(target=lambda s=s: got.append(s.once(("train", 7), slow))) for s in (a, b)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(calls) == 1 and len(got) == 2 and all(torch.equal(g["weights"], torch.arange(4.0)) for g in got)
    assert Shared(folder=tmp_path).once(("train", 7), lambda: 1 / 0)["seed"] == 7  # a third store: read, not computed
    assert a.once("unpicklable", lambda: lambda: 1)() == 1  # kept in memory only
    assert Shared(folder=tmp_path).once("unpicklable", lambda: "computed again") == "computed again"
    Folder(tmp_path).file(("train", 7)).write_bytes(b"not a pickle")
    assert Shared(folder=tmp_path).once(("train", 7), lambda: "recomputed") == "recomputed"
    assert Shared(folder=tmp_path).once(("train", 7), lambda: 1 / 0) == "recomputed"  # and written over


def test_results_on_disk_are_kept_per_version_of_the_code(tmp_path: Path) -> None:
    code = tmp_path / "code"
    (code / "lessons").mkdir(parents=True)
    (code / "lessons" / "a.py").write_text("x = 1\n")
    before = shared_module.code_version(code)
    (code / "lessons" / "a.py").write_text("x = 2\n")
    assert shared_module.code_version(code) != before  # another version of the code: another folder


def test_another_process_reads_what_this_one_wrote(tmp_path: Path) -> None:
    Shared(folder=tmp_path).once(("grow", 1), lambda: {"accuracy": 0.5})
    env = {**os.environ, "DRAGON_RESULTS_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", "from dragon.runtime.shared import once; "
                          "print(once(('grow', 1), lambda: 1 / 0)['accuracy'])"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "0.5", out.stderr

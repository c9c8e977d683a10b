"""dragon/runtime/shared.py, the server's results computed once and shared: bounded in entries, nothing left by a
failure."""

import pytest

from dragon.runtime.shared import Shared


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

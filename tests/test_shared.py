"""dragon/shared.once, the server's results computed once and shared: bounded in entries, nothing left by a failure."""

import pytest

from dragon.runtime import shared


@pytest.fixture
def own_results(monkeypatch: pytest.MonkeyPatch) -> None:
    """Empty tables of its own: the results other tests computed are kept for them."""
    monkeypatch.setattr(shared, "_RESULTS", type(shared._RESULTS)())
    monkeypatch.setattr(shared, "_LOCKS", {})


def test_results_are_bounded_and_a_failure_leaves_nothing(own_results, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shared, "MAX_RESULTS", 3)
    for i in range(10):
        assert shared.once(("bounded", i), lambda i=i: i * i) == i * i
    assert list(shared._RESULTS) == [("bounded", i) for i in (7, 8, 9)]
    assert set(shared._LOCKS) == set(shared._RESULTS)  # a lock only for what is kept
    for i in range(10):
        with pytest.raises(ZeroDivisionError):
            shared.once(("failing", i), lambda: 1 / 0)
    assert set(shared._LOCKS) == set(shared._RESULTS) == {("bounded", i) for i in (7, 8, 9)}
    assert shared.known(("failing", 0)) == (False, None) and shared.once(("failing", 0), lambda: "now") == "now"

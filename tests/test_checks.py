"""Shared input checks (dragon/checks.py): a refused value is quoted briefly; whole numbers refuse bools, fractions,
infinities and numbers too large for a float with a message that says which."""

import math

import pytest

from dragon.checks import ECHO_CHARS, brief, whole
from dragon.scoring import as_gates


@pytest.mark.parametrize("value", ["x" * 50_000, list(range(10**5)), {str(i): i for i in range(1000)}, b"y" * 999])
def test_a_long_value_is_quoted_at_most_40_characters(value) -> None:
    assert len(brief(value)) <= ECHO_CHARS


def test_a_huge_number_is_described_not_written_out() -> None:
    assert brief(10**400) == "a number of 401 digits"
    assert brief(-(10**5000)) == "a number of over 4000 digits"
    assert brief(12) == "12" and brief("ab\ud83d") == "'ab\\ud83d'"  # a lone surrogate shown as its escape


@pytest.mark.parametrize(
    "value, message",
    [(True, "whole number"), (2.5, "whole number"), (math.inf, "whole number"), (math.nan, "whole number"),
     ("40", "whole number"), ([40], "whole number"), (10**400, "not a number of 401 digits"), (29, "not 29")],
)
def test_whole_refuses_what_is_no_whole_number_in_range(value, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        whole(value, "steps", 30, 3000)


def test_whole_takes_ints_and_whole_floats() -> None:
    assert whole(40, "steps", 30, 3000) == 40 and whole(40.0, "steps", 30, 3000) == 40


@pytest.mark.parametrize(
    "gates, message",
    [([True] * 8, "8 numbers"), ([[0.5]] * 8, "8 numbers"), ([0.5] * 10_000_000, "got 10000000"),
     ([10**400] * 8, "between 0 and 1"), ([math.nan] + [0.5] * 7, "finite"), (["0.5"] * 8, "8 numbers")],
)
def test_gates_are_eight_plain_numbers(gates, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        as_gates(gates)


def test_gates_within_range_are_taken() -> None:
    assert as_gates([0, 1, 0.5, 0.25, 1.0, 0.0, 0.75, 0.1]).tolist()[:3] == [0.0, 1.0, 0.5]

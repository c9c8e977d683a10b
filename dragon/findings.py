"""Findings as data: each sentence of chapters 3–5 that says what a computation found, with its condition.

Chapter 2's word claims live in dragon/levels/claims.py; this is the same idea for the lab levels. A lesson module lists
its sentences as `Finding`s: the sentence's key in ui/strings.py (both languages say the same), the condition on the
lesson's measured values under which it is true, and what it asserts in plain words. The page shows a sentence
only through `shown` / `pick`, so a sentence whose condition does not hold is never on screen; a sentence the
page always shows is marked `always`, and tests/test_findings.py runs the live computation (5 timed runs, 3
training seeds) and fails if its condition does not hold in every one of them."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Measured = Mapping[str, Any]


@dataclass(frozen=True)
class Finding:
    key: str  # the sentence in ui/strings.py
    when: Callable[[Measured], bool]  # true of the measured values ⇔ the sentence is true
    means: str  # what the sentence asserts, for test failures and for readers of the code
    always: bool = False  # shown whatever was measured: then `when` must hold in every run (tested)
    group: str = ""  # alternatives of one remark: exactly one of a group holds on any measurement


def holds(finding: Finding, measured: Measured) -> bool:
    """Whether the finding's condition holds; a condition that cannot be evaluated on these values does not."""
    try:
        return bool(finding.when(measured))
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
        return False


def shown(findings: Sequence[Finding], measured: Measured) -> list[str]:
    """The keys of every finding whose condition holds, in the listed order (what the page may say)."""
    return [f.key for f in findings if holds(f, measured)]


def pick(findings: Sequence[Finding], group: str, measured: Measured) -> str:
    """The one sentence of `group` that is true of the measured values (ValueError if none or several are)."""
    true = [f.key for f in findings if f.group == group and holds(f, measured)]
    if len(true) != 1:
        raise ValueError(f"group {group!r}: {len(true)} sentences hold ({true}); exactly one must")
    return true[0]


def untrue(findings: Sequence[Finding], measured: Measured) -> list[str]:
    """Every way the findings fail on one measurement: an `always` sentence that is false, or a group with no true
    sentence or more than one. [] when everything the page would say is true."""
    out = [f"{f.key} is always shown but false here: {f.means}"
           for f in findings if f.always and not holds(f, measured)]
    for group in dict.fromkeys(f.group for f in findings if f.group):
        true = [f.key for f in findings if f.group == group and holds(f, measured)]
        if len(true) != 1:
            out.append(f"group {group!r}: {len(true)} of its sentences are true ({true}); exactly one must be")
    return out

"""A refused teacher level repaired: the nearest level that passes, its text never changed — heads silent in the text
turned to 0, claims the engine does not bear out dropped, a target too even sharpened (or too quiet raised) with the
teacher's order of heads kept, and only when nothing of the teacher's target is left to pass, the heads loudest in
this text added below it — each candidate checked as any level is."""

from dataclasses import dataclass

from dragon.config import HEADS
from dragon.levels import claims as claims_rules
from dragon.levels import teacher

POWERS = (1.0, 1.5, 2.0, 3.0, 4.0)  # sharpening: v → top · (v / top)^p keeps the order of the heads, widens the gaps
SPREADS = (0.1, 0.2, 0.3)  # steps between heads the teacher set equal, when they are told apart
MOST_CHECKED = 30  # candidates checked at most (each ≈ 0.07 s once the text is read): a refusal is answered in seconds


@dataclass(frozen=True)
class Suggestion:
    data: dict  # the repaired level (canonical form), its text the teacher's
    changes: list[dict]  # what changed: {"kind": "silent", "head", "was"} | {"kind": "claim", "claim"} |
    #                      {"kind": "sharpened", "was": {head: value}, "now": {head: value}}
    checked: teacher.Checked  # it passes


def silent_targets(canon: dict, reading) -> list[str]:
    """Heads the target turns up (≥ MUST_SPEAK) that are silent in this text: what the checker refuses."""
    silent = set(claims_rules.silent_heads(reading))
    return [h for h, v in canon["target"].items() if v >= claims_rules.MUST_SPEAK and h in silent]


def failing_claims(canon: dict, reading) -> list[dict]:
    """The claims the engine does not bear out in this text, each measured alone."""
    out = []
    for claim in canon.get("claims", []):
        alone = teacher.build({**canon, "claims": [claim]})
        wrong = [p for p in claims_rules.problems(alone, canon["lang"], reading) if " has target " not in p]
        if wrong:
            out.append(claim)
    return out


def sharpened(target: dict[str, float], loud: dict[str, float]) -> list[dict[str, float]]:
    """Targets that keep the teacher's order of heads with wider gaps, nearest first: each power of POWERS, then the
    same with the lowest heads turned to 0, one more each time (at least one head stays up); heads the teacher set
    equal are told apart by how loud they are in this text (`loud`), the quieter turned down first."""
    if not target:
        return []
    top = max(target.values())
    order = sorted(target, key=lambda h: (target[h], loud[h]))  # lowest first
    out = []
    for dropped in range(len(order)):
        for p in POWERS:
            new = {h: round(top * (target[h] / top) ** p, 2) for h in order[dropped:]}
            out.append({h: v for h, v in new.items() if v > 0})
    quiet_first = {h: -v for h, v in loud.items()}  # either way round: a loud head up can drown the others
    out += [apart(target, order, step) for step in SPREADS for order in (loud, quiet_first)]  # heads set equal told
    # apart, none turned off
    out += [{h: round(v / max(t.values()), 2) for h, v in t.items()} for t in out if t]  # the same, its top at 1
    unique = {tuple(sorted(t.items())): t for t in out if t}
    return sorted(unique.values(), key=lambda t: distance(t, target))


def apart(target: dict[str, float], loud: dict[str, float], step: float) -> dict[str, float]:
    """Heads the teacher set equal, told apart around their value by how loud they are in this text (`loud`: the
    higher its value, the higher the head), `step` between neighbours, each group kept between the values above and
    below it: the order the teacher gave stays, and no head is turned off."""
    levels = sorted(set(target.values()))
    out = {}
    for i, v in enumerate(levels):
        group = sorted((h for h in target if target[h] == v), key=lambda h: -loud[h])
        room = min([v - (levels[i - 1] if i else 0.0), (levels[i + 1] - v) if i + 1 < len(levels) else 1.0 - v])
        gap = min(step, 2 * room / max(len(group), 1) * 0.99) if len(group) > 1 else 0.0
        for k, h in enumerate(group):
            out[h] = round(min(1.0, max(0.05, v + gap * ((len(group) - 1) / 2 - k))), 2)
    return out


def distance(a: dict[str, float], b: dict[str, float]) -> float:
    return sum(abs(a.get(h, 0) - b.get(h, 0)) for h in HEADS)


def with_loudest(target: dict[str, float], loud: dict[str, float], silent: set[str]) -> list[dict[str, float]]:
    """The teacher's target (its top raised to 1) with one, two, then three of the heads loudest in this text added
    below its lowest head, the louder higher: for a target that leaves too little that speaks here."""
    top = max(target.values(), default=0.0)
    kept = {h: round(v / top, 2) for h, v in target.items()} if top else {}
    floor = min(kept.values(), default=1.25)  # nothing kept: the loudest head at 1
    others = sorted((h for h in HEADS if h not in kept and h not in silent), key=lambda h: -loud[h])
    out = []
    for k in range(1, 4):
        added = {h: round(floor * (0.8 - 0.25 * i), 2) for i, h in enumerate(others[:k])}
        out.append({**kept, **{h: v for h, v in added.items() if v > 0}})
    return out


def suggest(canon: dict) -> Suggestion | None:
    """The nearest passing level to a refused one (canonical form), or None when none is found without changing the
    text (a text too long for the dragon, or no target that passes)."""
    level = teacher.build(canon)
    reading = teacher.reading_of(level)
    if reading.analysis.truncated:
        return None
    changes: list[dict] = []
    silent = silent_targets(canon, reading)
    changes += [{"kind": "silent", "head": h, "was": canon["target"][h]} for h in silent]
    dropped = failing_claims(canon, reading)
    changes += [{"kind": "claim", "claim": c} for c in dropped]
    base = {**canon, "target": {h: v for h, v in canon["target"].items() if h not in silent}}
    if dropped:
        base["claims"] = [c for c in canon.get("claims", []) if c not in dropped]
        if not base["claims"]:
            del base["claims"]
    loud = dict(zip(HEADS, claims_rules.loudness(reading).tolist(), strict=True))
    quiet = set(claims_rules.silent_heads(reading))
    candidates = sharpened(base["target"], loud)[: MOST_CHECKED - 3] + with_loudest(base["target"], loud, quiet)
    for target in candidates:
        data = {**base, "target": target}
        checked = teacher.check_canonical(data)
        if checked.ok:
            return Suggestion(data, changes + target_changes(base["target"], target), checked)
    return None


def target_changes(was: dict[str, float], now: dict[str, float]) -> list[dict]:
    """The target's change: the teacher's heads re-weighted (order kept), then each head added."""
    out = []
    kept_was, kept_now = was, {h: v for h, v in now.items() if h in was}
    if kept_now != kept_was:
        out.append({"kind": "sharpened", "was": kept_was, "now": kept_now})
    out += [{"kind": "added", "head": h, "now": v} for h, v in now.items() if h not in was]
    return out

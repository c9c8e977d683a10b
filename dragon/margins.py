"""Answers decided by a clear margin: answer buckets, and every answer the measurement does not tell apart accepted."""

SHARE_MARGIN = 0.05  # a share (of attention, of accuracy, a cosine) decides an answer only by 5 points or more
SHARE_POINTS = f"{100 * SHARE_MARGIN:g}"  # the same margin as the pages print it, in points of a share or accuracy (5)
RUNS_MARGIN = 1  # a count of failed runs decides an answer only when one run more or less would not change it
DISTANCE_MARGIN = 0.1  # a mean attention distance (in words) decides an answer only by a tenth of a word or more


def bucket(value: float, edges: tuple[float, ...]) -> int:
    """Which bucket a value falls in: 0 below edges[0], …, len(edges) at or above the last edge."""
    return sum(value >= e for e in edges)


def accepted_buckets(value: float, edges: tuple[float, ...], margin: float = SHARE_MARGIN) -> list[int]:
    """Every bucket within `margin` of the measured value: its own, and a neighbour when it lies that close to an
    edge (an answer the measurement does not decide by a clear margin is accepted)."""
    return sorted({bucket(value - margin, edges), bucket(value, edges), bucket(value + margin, edges)})


def accepted_best(values: dict, margin: float, most: bool = True) -> list:
    """Every answer whose value is within `margin` of the best (the largest, or with most=False the smallest)."""
    best = max(values.values()) if most else min(values.values())
    return [k for k, v in values.items() if (v >= best - margin if most else v <= best + margin)]


def edge_margin(value: float, edges: tuple[float, ...]) -> float:
    """How far a measured value lies from the nearest bucket edge (what decides a bucket answer)."""
    return min((abs(value - e) for e in edges), default=float("inf"))


def lead(values: dict, accepted: list, most: bool = True) -> float:
    """How far the best answer stands from the best refused one (inf when nothing is refused): the margin that
    decides the question (the accepted answers around the best all lie within the margin of it)."""
    refused = [v for k, v in values.items() if k not in accepted]
    if not refused:
        return float("inf")
    best = max(values[k] for k in accepted) if most else min(values[k] for k in accepted)
    return best - max(refused) if most else min(refused) - best


def question(qid: str, accepted: list, measured: object, margin: float | None, unit: str) -> dict:
    """One scored question of a level's answer key: what is accepted, what was measured, and by how much the
    measurement decides it (None where the answer is a fact of the architecture, decided by no measurement)."""
    return {"id": qid, "accepted": accepted, "measured": measured, "unit": unit,
            "margin": None if margin is None else round(float(margin), 4)}

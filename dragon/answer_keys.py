"""Every scored level kind's answer key, by kind: each lesson's `questions`, measured on what it says (the registry
`explain`, the worksheet and the fairness tests read; adding a kind is one entry here)."""

from collections.abc import Callable

from dragon import chapter1
from dragon.lessons import (
    crystal_ball,
    fusion,
    growing,
    head_math,
    heads_experiment,
    long_scroll,
    positions,
    pruning,
    race,
    router,
    stability,
    tower,
)
from dragon.levels.level import Level
from dragon.runs import RUNS

Questions = Callable[[Level, str], list[dict]]  # (level, lang) → its scored questions (dragon/margins.py question)

QUESTIONS: dict[str, Questions] = {
    # chapter 1: the real dragon's maps
    "compare": chapter1.compare_questions,
    "match": chapter1.match_questions,
    # chapter 3: predict, then the real computation
    "formula": head_math.questions,
    "race": lambda level, lang: race.questions(RUNS.race_reference(level.guess_at), RUNS.race(list(level.lengths))),
    "fusion": fusion.questions,
    "heads": lambda level, lang: heads_experiment.questions(RUNS.heads_experiment(0)),
    "scroll": lambda level, lang: long_scroll.questions(RUNS.long_scroll(), RUNS.scroll_heads(lang)),
    # chapter 4: the real pretrained model, and heads trained live (4-4 prunes 4-3's run)
    "crystal": lambda level, lang: crystal_ball.questions(level),
    "tower": lambda level, lang: tower.questions(tower.tower()),
    "grow": lambda level, lang: growing.questions(RUNS.grow(RUNS.sizes.grow_steps, 0)),
    "prune": lambda level, lang: pruning.questions(RUNS.prune_best(0)),
    "stability": lambda level, lang: stability.questions(RUNS.stability(0)),
    "router": lambda level, lang: router.questions(RUNS.routing(0)),
    # chapter 5
    "positions": positions.questions,
    "badge": lambda level, lang: [],  # 5-2's stars are the player's results, not an answer
}


def questions(level: Level, lang: str) -> list[dict]:
    """The scored questions of a level that is not a slider level, read from the real computation."""
    if level.kind not in QUESTIONS:
        raise ValueError(f"level {level.id}: a {level.kind} level has no answer key (dragon/answer_keys.py QUESTIONS)")
    return QUESTIONS[level.kind](level, lang)

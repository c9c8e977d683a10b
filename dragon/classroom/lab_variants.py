"""An exam round's fresh questions for a lab level whose answers the public game shows: 3-1's rounds (a word and a
head of the same text) and 4-1's word and referent (on the same sentence), drawn from the round's seed, each decided
by a clear margin and none answered by the level's public questions."""

import functools
import random

from dragon import api
from dragon.classroom.room import word_like
from dragon.config import HEADS
from dragon.findings import holds
from dragon.game import CRYSTAL_SHARES, SHARE_BUCKETS, crystal_stars
from dragon.lessons import head_math as head_math_lesson
from dragon.levels.level import Round
from dragon.levels.loader import get_level
from dragon.margins import SHARE_MARGIN, edge_margin

CRYSTAL_MIN_WEIGHT = 0.3  # 4-1: the best head sends the word at least this share to the referent (clearly visible)
DRAWS = 200  # 3-1: sets of rounds drawn from the pool before the seed is said to have none (it never happens: tested)


@functools.cache
def formula_pool(level_id: str, lang: str) -> tuple[tuple[Round, dict], ...]:
    """Every (word, head) of 3-1's text decided by a clear margin: one key leads the runner-up by ≥ SHARE_MARGIN
    and the winner's share lies ≥ SHARE_MARGIN from every bucket edge (one right answer each); the word's first
    token is itself (a repeated word is asked once) and the level's own rounds are left out."""
    level = get_level(level_id)
    shipped = set(level.rounds[lang])
    reading = api.text_reading(level.text[lang], lang)
    firsts = {tok: i for i, tok in reversed(list(enumerate(reading.tokens)))}
    pool = []
    for word in sorted(firsts, key=firsts.get):
        if not word_like(word):
            continue
        for head in HEADS:
            r = Round(word, head)
            if r in shipped:
                continue
            m = api.head_math(level.text[lang], lang, word, head)
            top = sorted(m["weights"], reverse=True)
            if top[0] - top[1] >= SHARE_MARGIN and edge_margin(top[0], SHARE_BUCKETS) >= SHARE_MARGIN:
                pool.append((r, m))
    return tuple(pool)


def fair_rounds(chosen: list[tuple[Round, dict]]) -> bool:
    """The level's why holds over these rounds, as it does over the shipped ones (its findings, dragon/findings.py):
    one round parks on the sink, and the wider the gap the bigger the share."""
    measured = head_math_lesson.measured([m for _, m in chosen], [0.0] * len(chosen))
    return all(holds(f, measured) for f in head_math_lesson.FINDINGS if f.key.startswith("why:"))


@functools.lru_cache(maxsize=512)
def formula_rounds(level_id: str, lang: str, seed: int) -> tuple[Round, ...]:
    """3-1's rounds for an exam seed: as many as the level has, on distinct words and distinct heads, from the pool
    of clearly decided questions, one of them a head parking on the sink; the level's why holds over them."""
    level = get_level(level_id)
    n = len(level.rounds[lang])
    pool = formula_pool(level_id, lang)
    sink = [p for p in pool if p[1]["winner_key"] == head_math_lesson.SINK]
    speaks = [p for p in pool if p[1]["winner_key"] != head_math_lesson.SINK]
    rng = random.Random(seed)
    for _ in range(DRAWS):
        chosen = [rng.choice(sink), *rng.sample(speaks, n - 1)]
        words, heads = {r.word for r, _ in chosen}, {r.head for r, _ in chosen}
        if len(words) == n and len(heads) == n and fair_rounds(chosen):
            rng.shuffle(chosen)
            return tuple(r for r, _ in chosen)
    raise ValueError(f"no fair set of {n} rounds on {level.id}'s text for this seed")


@functools.cache
def crystal_pool(level_id: str) -> tuple[tuple[str, str], ...]:
    """Every (word, referent) pair of 4-1's sentence a fresh question can ask: the best of the 72 heads sends the word
    ≥ CRYSTAL_MIN_WEIGHT to the referent and leads every other head by ≥ SHARE_MARGIN (one head earns ★★★), and the
    level's public answer (the head sending its own word to its own referent) earns at most ★ on it."""
    level = get_level(level_id)
    public_word, public_target = level.ask
    public = api.lesson_head()
    words = [w for w in api.crystal_ball(level.text["en"], public_word)["tokens"] if word_like(w)]
    firsts = list(dict.fromkeys(w.lower() for w in words))
    pairs = []
    for word in firsts:
        for target in firsts:
            if target == word or (word, target) == (public_word.lower(), public_target.lower()):
                continue
            r = api.crystal_ball(level.text["en"], word, target)
            best, second = r["top"][0]["weight"], r["top"][1]["weight"]
            w_public = r["attention"][public["layer"]][public["head"]][r["target"]["position"]]
            if (best >= CRYSTAL_MIN_WEIGHT and best - second >= SHARE_MARGIN
                    and crystal_stars(w_public, best) <= 1 and w_public / best < CRYSTAL_SHARES[1] - SHARE_MARGIN):
                pairs.append((r["word"], r["target"]["token"]))
    return tuple(pairs)


def crystal_ask(level_id: str, seed: int) -> tuple[str, str]:
    """4-1's word and referent for an exam seed, from the pool of fair pairs."""
    pool = crystal_pool(level_id)
    if not pool:
        raise ValueError(f"no fair word and referent on {level_id}'s sentence")
    return random.Random(seed).choice(pool)

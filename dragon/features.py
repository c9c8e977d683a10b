"""Token → embedding vector: named feature blocks (read by the heads' W_Q/W_K) plus a word code."""

import functools
import math
import zlib

import torch

from dragon.text.analyser import RHYME_GROUPS_MAX, Token
from dragon.text.lexicon import CONNECTIVE_ROLES, FIELDS, TONE_KINDS

CLAUSE_STEP = math.pi / 3  # angle between neighbouring clauses in the clause code
RECENCY_STEP = math.pi / 16  # angle between neighbouring tokens in the pronoun ↔ antecedent position code
RECENCY_LAG = 4  # a pronoun's position code matches best a noun this many tokens earlier
OBLIQUE = 0.5  # an antecedent inside a place phrase (书包里) counts this much: less salient than a subject or object

# The named feature dimensions, in order. Everything after them is the word's own code.
FEATURES: tuple[str, ...] = (
    "sink",  # 1 only for the sink token, where a head looks when it has nothing to say
    "any",  # 1 for every real token
    *(f"pos_{p}" for p in ("noun", "verb", "adj", "adv", "pron", "func", "punct")),
    "emotion",  # a sentiment word
    "polarity",  # its sign: +1 / -1
    "connective",
    *(f"conn_{r}" for r in CONNECTIVE_ROLES),
    "time",
    "aspect",
    "place",
    "direction",
    *(f"tone_{k}" for k in TONE_KINDS),
    *(f"rhyme_{k}" for k in range(RHYME_GROUPS_MAX)),  # a rhyming line end: its rhyme group in this text (one-hot)
    "rhyme_ping",  # … and its tone class, 平 level / 仄 oblique (Chinese)
    "rhyme_ze",
    "end_ping",  # a line end that rhymes with none: its tone class
    "end_ze",
    "pron_first",  # a 3rd-person pronoun that prefers the first-mentioned antecedent (a subject: she, 他)
    "pron_nearest",  # … the nearest one (an object: him, 带它; they)
    "pron_sg",  # 3rd-person pronouns that can stand for people (他 she they), by number
    "pron_pl",
    "pron_thing_sg",  # … that can stand for things (它 it they), by number
    "pron_thing_pl",
    "person_sg",  # nouns naming people, by number
    "person_pl",
    "thing_sg",  # other nouns (things, animals, places, ideas), by number
    "thing_pl",
    "pron_at_cos",  # a pronoun's position as an angle: (cos, sin)(step · i)
    "pron_at_sin",
    "ante_at_cos",  # a noun's position, shifted: (cos, sin)(step · (j + lag)), so q·k peaks `lag` tokens back
    "ante_at_sin",
    "early",  # 1 at the first token, falling to 0 at the last
    "clause_q_cos",  # this token's clause as an angle: (cos, sin)(step · clause)
    "clause_q_sin",
    "clause_k_cos",  # content words only: (cos, sin)(step · (clause + 1)), so q·k peaks one clause back
    "clause_k_sin",
    *(f"field_{f}" for f in FIELDS),
)
INDEX = {name: i for i, name in enumerate(FEATURES)}
POS_FEATURE = {"time": "adv"}  # a time word (昨天) modifies the predicate like an adverb


def word_code_dims(d_model: int) -> int:
    dims = d_model - len(FEATURES)
    if dims < 16:
        raise ValueError(f"d_model {d_model} leaves {dims} dims for word codes; need at least 16")
    return dims


@functools.lru_cache(maxsize=4096)
def word_code(word: str, dims: int, seed: int) -> torch.Tensor:
    """A fixed random unit vector for a word (same word → same code, in every process)."""
    g = torch.Generator().manual_seed(zlib.crc32(word.lower().encode("utf-8")) * 7919 + seed)
    v = torch.randn(dims, generator=g)
    return v / v.norm()


# a noun's number -> its number features; a Chinese noun is unmarked, and fits a plural pronoun a little less
NUMBERS = {"sg": {"sg": 1.0}, "pl": {"pl": 1.0}, "any": {"sg": 1.0, "pl": 0.8}}


def pronoun_features(tok: Token, i: int) -> dict[str, float]:
    """A 3rd-person pronoun: what it can stand for, by number, and its position code."""
    f = {"pron_nearest" if tok.nearest else "pron_first": 1.0}
    f["pron_at_cos"], f["pron_at_sin"] = math.cos(RECENCY_STEP * i), math.sin(RECENCY_STEP * i)
    if tok.referent in ("person", "any"):
        f[f"pron_{tok.pronoun}"] = 1.0
    if tok.referent in ("thing", "any"):
        f[f"pron_thing_{tok.pronoun}"] = 1.0
    return f


def token_features(tok: Token, i: int, n: int) -> dict[str, float]:
    f = {"any": 1.0, f"pos_{POS_FEATURE.get(tok.pos, tok.pos)}": 1.0}
    if tok.emotion:
        f["emotion"], f["polarity"] = 1.0, float(tok.emotion)
    if tok.connective:
        f["connective"], f[f"conn_{tok.connective}"] = 1.0, 1.0
    for kind in (tok.time, tok.space):
        if kind:
            f[kind] = 1.0
    if tok.tone:
        f[f"tone_{tok.tone}"] = 1.0
    if tok.rhyme is not None:
        f[f"rhyme_{tok.rhyme}"] = 1.0
    if tok.line_tone:
        f[f"{'rhyme' if tok.rhyme is not None else 'end'}_{tok.line_tone}"] = 1.0
    if tok.pronoun:
        f.update(pronoun_features(tok, i))
    salience = OBLIQUE if tok.oblique else 1.0
    for kind, number in (("person", tok.person), ("thing", tok.thing)):
        for feature_number, weight in NUMBERS.get(number, {}).items():
            f[f"{kind}_{feature_number}"] = salience * weight
    if tok.person or tok.thing:
        f["ante_at_cos"] = math.cos(RECENCY_STEP * (i + RECENCY_LAG))
        f["ante_at_sin"] = math.sin(RECENCY_STEP * (i + RECENCY_LAG))
    if tok.field:
        f[f"field_{tok.field}"] = 1.0
    f["early"] = 1.0 - i / max(n - 1, 1)
    where = tok.clause if tok.turn is None else tok.turn  # in a dialogue a reply looks at the turn it answers
    if not tok.pronoun:  # a pronoun looks for its antecedent, not at the clause before
        f["clause_q_cos"] = math.cos(CLAUSE_STEP * where)
        f["clause_q_sin"] = math.sin(CLAUSE_STEP * where)
    if tok.content:
        f["clause_k_cos"] = math.cos(CLAUSE_STEP * (where + 1))
        f["clause_k_sin"] = math.sin(CLAUSE_STEP * (where + 1))
    return f


def embed(tokens: tuple[Token, ...], d_model: int, seed: int) -> torch.Tensor:
    """(T + 1, d_model): row 0 is the sink, then one row per token."""
    dims = word_code_dims(d_model)
    x = torch.zeros(len(tokens) + 1, d_model)
    x[0, INDEX["sink"]] = 1.0
    for i, tok in enumerate(tokens):
        for name, value in token_features(tok, i, len(tokens)).items():
            x[i + 1, INDEX[name]] = value
        x[i + 1, len(FEATURES) :] = word_code(tok.text, dims, seed)
    return x

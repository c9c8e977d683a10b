"""Token → embedding vector: named feature blocks (read by the heads' W_Q/W_K) plus a word code."""

import functools
import math
import zlib

import torch

from .analyser import Token
from .lexicon import CONNECTIVE_ROLES, FIELDS, TONE_KINDS

CLAUSE_STEP = math.pi / 3  # angle between neighbouring clauses in the clause code

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
    "pron_sg",  # 3rd-person pronouns, by number
    "pron_pl",
    "person_sg",  # nouns naming people, by number
    "person_pl",
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
    if tok.pronoun:
        f[f"pron_{tok.pronoun}"] = 1.0
    if tok.person:
        f[f"person_{tok.person}"] = 1.0
    if tok.field:
        f[f"field_{tok.field}"] = 1.0
    f["early"] = 1.0 - i / max(n - 1, 1)
    f["clause_q_cos"], f["clause_q_sin"] = math.cos(CLAUSE_STEP * tok.clause), math.sin(CLAUSE_STEP * tok.clause)
    if tok.content:
        f["clause_k_cos"] = math.cos(CLAUSE_STEP * (tok.clause + 1))
        f["clause_k_sin"] = math.sin(CLAUSE_STEP * (tok.clause + 1))
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

"""Chapter 1, computed: a one-head dragon of the same width, and which head found each finding."""

import functools

import torch

from dragon.attention import MultiHeadAttention
from dragon.config import HEADS, DragonConfig
from dragon.engine import Reading, default_dragon
from dragon.heads import RELATIONS, query_key_weights, value_weights
from dragon.levels.loader import Level
from dragon.margins import question

LOOKS_AT = 0.10  # a word "is looked at" from a row when it gets at least this share of the attention


@functools.cache
def one_head_attention(config: DragonConfig = DragonConfig()) -> MultiHeadAttention:
    """One head, d_head = d_model: every specialist relation in a single softmax, one sink.
    Same d_model, so the same 4·d² weights as the eight-headed dragon."""
    single = DragonConfig(**{**config.__dict__, "n_heads": 1})
    relations = tuple(r for head in HEADS for r in RELATIONS[head])
    w_q, w_k = query_key_weights(relations, single)
    w_v = value_weights(single, torch.Generator().manual_seed(config.seed))
    mha = MultiHeadAttention(config.d_model, 1, bias=False)
    with torch.no_grad():
        mha.in_proj.weight.copy_(torch.cat([w_q, w_k, w_v], dim=0))
        mha.out_proj.weight.copy_(torch.eye(config.d_model))
    return mha.eval().requires_grad_(False)


def token_index(reading: Reading, word: str) -> int:
    """Position of `word` among the text's tokens (case-insensitive); ValueError if absent."""
    lowered = [t.lower() for t in reading.tokens]
    if word.lower() not in lowered:
        raise ValueError(f"{word!r} is not a token of the text ({' / '.join(reading.tokens)})")
    return lowered.index(word.lower())


def compare_heads(level: Level, lang: str) -> dict:
    """The focus word's attention row in the one-head and the eight-head dragon, and the words each sees."""
    dragon = default_dragon()
    reading = dragon.read(level.text[lang], lang)
    i = token_index(reading, level.focus[lang])
    with torch.no_grad():
        one = one_head_attention(dragon.config)(reading.x.to(dragon.device)).weights[0].cpu()  # (T+1, T+1)
    one_row = one[i + 1, 1:]  # (T,) the focus row, sink column dropped
    eight_rows = reading.weights[:, i + 1, 1:]  # (h, T)
    one_sees = [reading.tokens[j] for j in (one_row >= LOOKS_AT).nonzero().flatten().tolist()]
    eight_sees = sorted({j for j in (eight_rows >= LOOKS_AT).nonzero()[:, 1].tolist()})
    return {
        "tokens": reading.tokens,
        "focus": i,
        "one_head_map": one[1:, 1:],
        "one_head_row": one_row.tolist(),
        "eight_head_rows": eight_rows.tolist(),
        "one_head_sees": one_sees,
        "eight_heads_see": [reading.tokens[j] for j in eight_sees],
    }


def compare_stars(guess_one: int, guess_eight: int, truth: dict) -> int:
    """3 when both counts are right; 2 when one is right and the other off by one; 1 when both are off by one."""
    errors = sorted((abs(guess_one - len(truth["one_head_sees"])), abs(guess_eight - len(truth["eight_heads_see"]))))
    return {(0, 0): 3, (0, 1): 2, (1, 1): 1}.get(tuple(errors), 0)


def received(reading: Reading) -> torch.Tensor:
    """(h, T): the attention each head gives each word from the *other* words (summed over their query rows; a word
    looking at itself is no link between words)."""
    maps = reading.weights[:, 1:, 1:]
    return (maps * (1 - torch.eye(maps.shape[-1], dtype=maps.dtype))).sum(dim=1)


def finding_heads(level: Level, lang: str) -> list[str]:
    """For each finding, the head that gives its word the most attention from the other words."""
    reading = default_dragon().read(level.text[lang], lang)
    got = received(reading)
    return [HEADS[int(got[:, token_index(reading, f.word[lang])].argmax())] for f in level.findings]


def match_stars(picks: list[str | None], answers: list[str]) -> tuple[int, list[bool]]:
    """Stars for the matching game: all right 3, one wrong 2, two wrong 1."""
    right = [p == a for p, a in zip(picks, answers, strict=True)]
    wrong = len(right) - sum(right)
    return max(0, 3 - wrong), right


# --- the answer key: each scored question, its accepted answers, the measured value, the deciding margin ---


def match_questions(level: Level, lang: str) -> list[dict]:
    """1-2's questions: which head found each finding, by its share of the attention the word receives."""
    reading = default_dragon().read(level.text[lang], level.reads_as(lang))
    received = reading.weights[:, 1:, 1:].sum(dim=1)  # (h, T)
    out = []
    for f, head in zip(level.findings, finding_heads(level, lang), strict=True):
        col = received[:, token_index(reading, f.word[lang])]
        top2 = col.topk(2).values / col.sum().clamp_min(1e-9)
        out.append(question(f"finding:{f.word[lang]}", [head], round(float(top2[0]), 4), float(top2[0] - top2[1]),
                            "share"))
    return out


def compare_questions(level: Level, lang: str) -> list[dict]:
    """1-1's questions: how many of the level's findings one head sees, and how many eight heads see."""
    truth = compare_heads(level, lang)
    return [question("one_head", [len(truth["one_head_sees"])], truth["one_head_sees"], None, "count"),
            question("eight_heads", [len(truth["eight_heads_see"])], truth["eight_heads_see"], None, "count")]

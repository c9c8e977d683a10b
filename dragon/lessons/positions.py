"""5-1 Positions: without position information the dragon reads 我爱你 and 你爱我 as the same vectors, permuted;
with sinusoidal positions added (Vaswani et al. 2017) the outputs differ. The next chapter's question, measured.

The dragon's own embedding is not quite position-free: `early` (1 at the first token, falling to 0 at the last),
the pronoun ↔ antecedent position codes (pron_at_*, ante_at_*) and the clause codes (which clause a token is in,
counted from the start) all depend on where a token stands. This lesson zeroes those features, so that what is
left is only what each word is; `diff_dragon_as_built` shows how much order the full embedding already carries (all of
it the input's own position features, carried to the output by the residual). What the page says, as findings."""

import math
import re
from typing import Any

import torch

from dragon.analyze import rounded
from dragon.engine import default_dragon
from dragon.features import INDEX, embed
from dragon.findings import Finding, Measured
from dragon.margins import question
from dragon.text.analyser import CJK, Analysis, Token, analyse

POSITION_FEATURES = (
    "early", "pron_at_cos", "pron_at_sin", "ante_at_cos", "ante_at_sin",
    "clause_q_cos", "clause_q_sin", "clause_k_cos", "clause_k_sin",
)
SWAPPABLE = ("noun", "pron")  # the default second text swaps the first and the last of these (subject ↔ object)
PREVIEW = 6  # output numbers shown per token: the last ones of each block output (word code + heads' part)
DECIMALS = 4
SAME = 1e-5  # outputs this close after un-permuting are the same vectors (float32 rounding is ~1e-7)
READ_EDGES = (0.001, 0.1)  # 5-1's reading of the largest difference: under 0.001, up to 0.1, over 0.1
# 5-1's second prediction (ui/rooms/rethink.py) asks about another pair, one of these and its subject/object swap: each
# is decided by a clear margin (tests/test_rethink.py: "same" under SAME, "different" by more than DIFFER).
AGAIN_TEXTS = {
    "zh": ("猫追老鼠", "老师表扬学生", "妈妈喜欢女儿", "小狗咬小猫", "医生帮助病人"),
    "en": ("The cat chases the mouse.", "The teacher praises the student.", "The girl thanks the boy.",
           "The fox watches the bird.", "The doctor helps the nurse."),
}
DIFFER = 0.1  # a difference a second prediction calls "different" is at least this (a thousand times SAME and more)
AGAIN_KEYS = {  # the second prediction's three questions: the measured difference each asks about
    "back": "max_diff_unpermuted_no_positions",  # no positions, b put back in a's order
    "place": "max_diff_in_place_no_positions",  # no positions, word by word where they stand
    "heads": "diff_with_positions_attention",  # with positions, the heads' own part (before the residual)
}


def position_free(tokens: tuple[Token, ...]) -> torch.Tensor:
    """(T + 1, d) the dragon's embedding with every position-dependent feature set to 0 (sink first)."""
    cfg = default_dragon().config
    x = embed(tokens, cfg.d_model, cfg.seed)
    x[:, [INDEX[f] for f in POSITION_FEATURES]] = 0.0
    return x


def sinusoids(T: int, d: int) -> torch.Tensor:
    """(T, d) Vaswani et al.'s encoding: PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i + 1] = cos(…)."""
    p = torch.arange(T, dtype=torch.float32)[:, None]  # (T, 1)
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2, dtype=torch.float32) / d)  # (d / 2,)
    pe = torch.zeros(T, d)
    pe[:, 0::2] = torch.sin(p * freq)
    pe[:, 1::2] = torch.cos(p * freq)
    return pe


def with_positions(x: torch.Tensor) -> torch.Tensor:
    """x (T + 1, d) plus the sinusoidal encoding of positions 0…T−1 on the tokens (the sink has no position)."""
    pe = torch.cat([torch.zeros(1, x.shape[1]), sinusoids(x.shape[0] - 1, x.shape[1])])  # (T + 1, d)
    return x + pe


def read_tokens(text: str, lang: str) -> tuple[Analysis, str]:
    """The dragon's tokens; Chinese that jieba keeps as one word (我爱你 is one word in its dictionary) is read
    one character per token instead, so that there is an order to change."""
    analysis = analyse(text, lang, default_dragon().config.max_tokens)
    if analysis.lang == "zh" and sum(t.pos in SWAPPABLE for t in analysis.tokens) < 2:
        spaced = re.sub(f"([{CJK}])", r" \1 ", text)
        return analyse(spaced, "zh", default_dragon().config.max_tokens), "characters"
    return analysis, "words"


def swap_permutation(tokens: tuple[Token, ...]) -> list[int]:
    """The order of text b as indices into text a: the first and the last noun swapped, or noun or pronoun where
    there are not two nouns (The dog bites the man. → The man bites the dog.; 我爱你 → 你爱我)."""
    nouns = [i for i, t in enumerate(tokens) if t.pos == "noun"]
    spots = (
        nouns if len({tokens[i].text for i in nouns}) >= 2 else [i for i, t in enumerate(tokens) if t.pos in SWAPPABLE]
    )
    if len(spots) < 2 or tokens[spots[0]].text == tokens[spots[-1]].text:
        words = " / ".join(t.text for t in tokens)
        raise ValueError(f"the text needs two different nouns or pronouns to swap; its tokens are: {words}")
    perm = list(range(len(tokens)))
    perm[spots[0]], perm[spots[-1]] = spots[-1], spots[0]
    return perm


def match_permutation(a: tuple[Token, ...], b: tuple[Token, ...]) -> list[int]:
    """Indices into a giving b, when b's tokens are a's in another order; a ValueError otherwise."""
    pool: dict[str, list[int]] = {}
    for i, t in enumerate(a):
        pool.setdefault(t.text, []).append(i)
    if sorted(t.text for t in a) != sorted(t.text for t in b):
        raise ValueError(
            "the second text must use the same tokens in another order: "
            f"{' / '.join(t.text for t in a)} vs {' / '.join(t.text for t in b)}"
        )
    return [pool[t.text].pop(0) for t in b]


def unpermuted_diff(out_a: torch.Tensor, out_b: torch.Tensor, perm: list[int]) -> float:
    """Largest |b's output − a's output put in b's order| over the tokens (the sink row left out)."""
    return float((out_b[1:] - out_a[1:][perm]).abs().max())


def differing_features(x_a: torch.Tensor, x_b: torch.Tensor, perm: list[int]) -> list[str]:
    """The named input features whose values differ between b's tokens and a's put in b's order (sink row left out)."""
    gap = (x_b[1:] - x_a[1:][perm]).abs().amax(dim=0)  # (d,)
    return [f for f, i in INDEX.items() if gap[i] > SAME]


def positions(text: str, lang: str = "auto", other: str | None = None) -> dict:
    """Text a and text b (given, or a with its first and last noun/pronoun swapped) through the dragon's attention
    block without positions, with the dragon's own features, and with sinusoidal positions added."""
    a, split = read_tokens(text, lang)
    if other is None:
        perm = swap_permutation(a.tokens)
        tokens_b = tuple(a.tokens[p] for p in perm)
    else:
        b = analyse(re.sub(f"([{CJK}])", r" \1 ", other) if split == "characters" else other, a.lang)
        perm = match_permutation(a.tokens, b.tokens)
        tokens_b = tuple(a.tokens[p] for p in perm)  # the same words' own vectors, in b's order
    dragon = default_dragon()
    cfg = dragon.config
    x_a, x_b = position_free(a.tokens), position_free(tokens_b)  # each text embedded on its own
    pairs = {
        "free": (x_a, x_b),
        "positions": (with_positions(x_a), with_positions(x_b)),
        "own": (embed(a.tokens, cfg.d_model, cfg.seed), embed(tokens_b, cfg.d_model, cfg.seed)),
    }
    with torch.no_grad():
        res = {k: [dragon.forward(x) for x in pair] for k, pair in pairs.items()}
    out = {k: [r.out.cpu() for r in pair] for k, pair in res.items()}  # (T + 1, d) block outputs
    fused = {k: [r.fused.cpu() for r in pair] for k, pair in res.items()}  # (T + 1, d) before the residual
    sep = "" if a.lang == "zh" else " "
    return {
        "lang": a.lang,
        "split": split,  # "words", or "characters" where jieba reads the whole text as one word
        "text_a": sep.join(t.text for t in a.tokens),
        "text_b": sep.join(t.text for t in tokens_b),
        "tokens_a": [t.text for t in a.tokens],
        "tokens_b": [t.text for t in tokens_b],
        "permutation": perm,  # token i of b is token perm[i] of a
        "inputs_max_diff_unpermuted": float((x_b[1:] - x_a[1:][perm]).abs().max()),  # 0: same vectors, reordered
        "max_diff_in_place_no_positions": float((out["free"][1][1:] - out["free"][0][1:]).abs().max()),
        "max_diff_unpermuted_no_positions": unpermuted_diff(*out["free"], perm),
        "diff_with_positions": unpermuted_diff(*out["positions"], perm),
        "diff_with_positions_attention": unpermuted_diff(*fused["positions"], perm),  # the heads' part alone
        "diff_dragon_as_built": unpermuted_diff(*out["own"], perm),
        "diff_dragon_as_built_attention": unpermuted_diff(*fused["own"], perm),  # the heads' part alone, as built
        "inputs_diff_as_built": float((pairs["own"][1][1:] - pairs["own"][0][1:][perm]).abs().max()),
        "as_built_features": differing_features(*pairs["own"], perm),  # the input features that differ, as built
        "position_features": list(POSITION_FEATURES),
        # the last numbers of each token's block output, (T, 6) each: b's rows are a's, reordered, until positions
        "preview_a": rounded(out["free"][0][1:, -PREVIEW:], DECIMALS),
        "preview_b": rounded(out["free"][1][1:, -PREVIEW:], DECIMALS),
        "preview_with_positions_a": rounded(out["positions"][0][1:, -PREVIEW:], DECIMALS),
        "preview_with_positions_b": rounded(out["positions"][1][1:, -PREVIEW:], DECIMALS),
        "truncated": a.truncated,
    }


def answer_key(p: dict) -> dict[str, str]:
    """5-1's right answers: 'same' or 'differ', after putting the second text's rows back in the first text's order,
    without positions (`free`) and with them (`pos`)."""
    return {
        "free": "same" if p["max_diff_unpermuted_no_positions"] < SAME else "differ",
        "pos": "same" if p["diff_with_positions"] < SAME else "differ",
    }


def again_key(p: dict) -> dict[str, str | None]:
    """The second prediction's right answers on a pair: 'same' (under SAME), 'differ' (DIFFER or more), or None
    where the difference is in between (no such pair is asked)."""
    return {k: "same" if p[f] < SAME else "differ" if p[f] >= DIFFER else None for k, f in AGAIN_KEYS.items()}


def reading_answer(p: dict) -> int:
    """5-1's question read off the numbers: which READ_EDGES bucket the largest difference without positions
    (after un-permuting) falls in (0: next to nothing)."""
    return sum(p["max_diff_unpermuted_no_positions"] >= e for e in READ_EDGES)


def measured(p: dict) -> dict:
    """What 5-1's sentences are about: the largest absolute differences between matching output numbers of the two
    texts (b's rows put back in a's order), of the block output and of the heads' part alone (before the residual),
    without positions, with sinusoidal ones, and as built; and the input's own differences."""
    keys = ("inputs_max_diff_unpermuted", "max_diff_in_place_no_positions", "max_diff_unpermuted_no_positions",
            "diff_with_positions", "diff_with_positions_attention", "diff_dragon_as_built",
            "diff_dragon_as_built_attention", "inputs_diff_as_built")
    groups = sorted({f.split("_")[0] for f in p["as_built_features"]})  # early, pron, ante, clause
    return {**{k: p[k] for k in keys}, "as_built_features": p["as_built_features"], "feature_groups": groups,
            "same": SAME}


def _residual_only(m: Measured) -> bool:
    """As built, the output's difference is the input's own, carried by the residual: the heads' part is the same."""
    d, x = m["diff_dragon_as_built"], m["inputs_diff_as_built"]
    return m["diff_dragon_as_built_attention"] < m["same"] and abs(d - x) < m["same"]


FINDINGS: tuple[Finding, ...] = (
    Finding("pos_setup", lambda m: m["inputs_max_diff_unpermuted"] == 0.0, "with the position features zeroed, b's "
            "input vectors are a's, reordered", always=True),
    Finding("5-1.story", lambda m: m["inputs_max_diff_unpermuted"] == 0.0, "nothing about position is left in the "
            "input: b's input vectors are a's, reordered", always=True),
    Finding("pos_free", lambda m: m["max_diff_unpermuted_no_positions"] < m["same"], "without positions the outputs "
            "un-permuted agree to rounding", group="free"),
    Finding("pos_free_differ", lambda m: m["max_diff_unpermuted_no_positions"] >= m["same"], "without positions the "
            "outputs un-permuted still differ", group="free"),
    Finding("pos_with", lambda m: m["diff_with_positions_attention"] >= m["same"], "with sinusoidal positions the "
            "heads' part itself differs, un-permuted", group="with"),
    Finding("pos_with_residual", lambda m: m["diff_with_positions"] >= m["same"] > m["diff_with_positions_attention"],
            "with positions only the output differs (the residual's position codes), not the heads' part",
            group="with"),
    Finding("pos_with_same", lambda m: m["diff_with_positions"] < m["same"], "with positions the outputs un-permuted "
            "still agree", group="with"),
    Finding("pos_own", lambda m: bool(m["feature_groups"]) and _residual_only(m), "as built, some position features "
            "differ; the output's difference equals the input's and the heads' part is the same: it is the input's "
            "position features carried by the residual", group="own"),
    Finding("pos_own_heads", lambda m: bool(m["feature_groups"]) and not _residual_only(m), "as built, some position "
            "features differ, and the heads' part differs too (or the output's difference is not the input's)",
            group="own"),
    Finding("pos_own_none", lambda m: not m["feature_groups"] and m["diff_dragon_as_built"] < m["same"], "as built, "
            "no input feature differs and the outputs agree un-permuted", group="own"),
    Finding("5-1.why", lambda m: m["max_diff_unpermuted_no_positions"] < m["same"] <= m["diff_with_positions"],
            "without positions the outputs are a's reordered; with sinusoidal positions they differ", always=True),
)


# --- the answer key: each scored question, its accepted answers, the measured value, the deciding margin ---


def questions(level: Any, lang: str) -> list[dict]:
    """5-1's questions (`level`: a positions level): the largest difference without positions, the difference with
    them, and the reading of the first, each decided by its factor from the edge."""
    pos = positions(level.text[lang], lang)
    key = answer_key(pos)
    free, with_pos = pos["max_diff_unpermuted_no_positions"], pos["diff_with_positions"]
    return [question("free", [key["free"]], free, SAME / max(free, 1e-12), "factor from the edge"),
            question("pos", [key["pos"]], with_pos, with_pos / SAME, "factor from the edge"),
            question("read", [reading_answer(pos)], free, READ_EDGES[0] / max(free, 1e-12),
                     "factor from the edge")]

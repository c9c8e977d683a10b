"""4-1's own sentence: the real model's chosen head on a pronoun in the player's sentence, beside our dragon's
Context head on the same word, and the nearest noun before it (the dragon's own part-of-speech tags)."""

import unicodedata

from ..analyze import analyze
from ..engine import default_dragon
from . import crystal_ball
from .wordpiece import normalise

SHOWN_WORDS = 10  # an error lists at most this many of the sentence's words, then "…"
MARGIN = 0.05  # a share decides only by a clear margin: the top word must beat the next word by 5 points
MOSTLY = 0.5  # "mostly" is said only of a word that takes at least half of the whole row ([CLS]/[SEP] included)
VERDICTS = ("right", "wrong", "unsure")


class SentenceError(ValueError):
    """A sentence the crystal ball cannot read: `kind` names the page's text key (c_err_…), `values` fill it in;
    the message is for the API (the page says it in the player's language)."""

    def __init__(self, kind: str, message: str = "", **values: object) -> None:
        super().__init__(message or kind)
        self.kind, self.values = kind, values


def english_only(text: str) -> bool:
    """Whether every letter of the text is a Latin letter (the model is English-only)."""
    return all(not ch.isalpha() or unicodedata.name(ch, "").startswith("LATIN") for ch in text)


def check_sentence(text: str) -> list[str]:
    """The sentence's words as the model splits them, or a SentenceError that says why it cannot be read."""
    if not text.strip():
        raise SentenceError("c_err_empty")
    if len(text) > crystal_ball.MAX_CHARS:
        raise SentenceError("c_err_long", n=len(text), max=crystal_ball.MAX_CHARS)
    if not english_only(text):
        raise SentenceError("c_err_lang")
    _, vocab = crystal_ball.load()
    words = [w.text for w in vocab.words(text)]
    if not words:
        raise SentenceError("c_err_none")
    if len(words) > crystal_ball.MAX_WORDS:
        raise SentenceError("c_err_many", n=len(words), max=crystal_ball.MAX_WORDS)
    return words


def some_words(words: list[str], k: int = SHOWN_WORDS) -> str:
    """The first k words of a sentence, for a message ("a / b / c / …")."""
    return " / ".join(words[:k]) + (" / …" if len(words) > k else "")


def own_sentence(text: str, word: str, best: dict) -> dict:
    """The real head's row for the LAST `word` of the player's sentence (and what it parks on [CLS]/[SEP]), our
    dragon's Context head beside it, and the nearest noun before the word (the dragon's own part-of-speech tags)."""
    words = check_sentence(text)
    at = [i for i, w in enumerate(words) if normalise(w) == normalise(word)]
    if not at:
        raise SentenceError("c_err_word", word=word, words=some_words(words))
    q = at[-1]
    decimals = crystal_ball.DECIMALS
    reading = crystal_ball.read(text)
    full = [round(float(v), decimals) for v in reading.maps[best["layer"], best["head"], q + 1]]
    row, specials = full[1:-1], full[0] + full[-1]
    top_v, top_j = max((v, j) for j, v in enumerate(row) if j != q) if len(row) > 1 else (0.0, q)
    d = analyze(text, "en")
    tokens = d["tokens"]
    same = [i for i, w in enumerate(tokens) if normalise(w) == normalise(word)]
    dq = same[-1] if same else None
    ctx = d["attention"][d["heads"].index("context")][dq] if dq is not None else [0.0] * len(tokens)
    ctx_top = max(((v, j) for j, v in enumerate(ctx) if j != dq), default=(0.0, 0))
    tags = default_dragon().read(text, "en").analysis.tokens
    nouns = [tok.text for tok in tags[:dq] if tok.pos == "noun"] if dq is not None else []
    return {
        "text": text, "word": words[q], "tokens": words, "row": row, "top": words[top_j],
        "top_w": top_v, "position": q, "dragon_tokens": tokens, "context": ctx,
        "context_top": tokens[ctx_top[1]] if tokens else "", "context_w": ctx_top[0],
        "nearest_noun": nouns[-1] if nouns else None, "nouns": nouns, "dragon_position": dq,
        "specials": round(specials, decimals), "times": len(at),
        "on_words": round(sum(v for j, v in enumerate(row) if j != q), decimals),
    }  # fmt: skip


def word_shares(mine: dict) -> list[tuple[str, float]]:
    """The row over the sentence's other words, each word's occurrences added up (the pronoun's own position left
    out), largest first; ties keep the sentence's order."""
    merged: dict[str, float] = {}
    first: dict[str, str] = {}
    for j, (w, v) in enumerate(zip(mine["tokens"], mine["row"], strict=True)):
        if j != mine["position"]:
            key = normalise(w)
            merged[key] = merged.get(key, 0.0) + v
            first.setdefault(key, w)
    return sorted(((first[k], v) for k, v in merged.items()), key=lambda kv: -kv[1])


def referent_word(mine: dict, referent: str) -> str:
    """The player's referent as a word of the sentence (any but the pronoun's own place), else a SentenceError."""
    wanted = normalise(str(referent).strip())
    words = [w for j, w in enumerate(mine["tokens"]) if j != mine["position"]]
    match = next((w for w in words if normalise(w) == wanted), None)
    if not wanted or match is None:
        said = str(referent).strip()[:30]
        raise SentenceError("c_err_referent", f"the referent {said!r} is not another word of the sentence; its words "
                            f"are: {some_words(words)}", word=said, words=some_words(words))  # fmt: skip
    return match


def judge(mine: dict, referent: str | None = None) -> dict:
    """What the head answers on the sentence and how sure its numbers let us be: unsure when [CLS]/[SEP] take more
    than its top word, or the top word beats the next by less than MARGIN; with the player's referent, whether the
    head agrees (right / wrong / unsure). `mostly` only when the top word takes ≥ MOSTLY of the whole row."""
    ranked = word_shares(mine)
    top, top_w = ranked[0] if ranked else ("", 0.0)
    second, second_w = ranked[1] if len(ranked) > 1 else ("", 0.0)
    specials = float(mine["specials"])
    reason = "specials" if specials > top_w else "flat" if top_w - second_w < MARGIN else None
    out = {
        "top": top, "top_w": round(top_w, 4), "second": second, "second_w": round(second_w, 4),
        "margin": round(top_w - second_w, 4), "specials": round(specials, 4), "sure": reason is None,
        "reason": reason, "mostly": top_w >= MOSTLY, "referent": None, "referent_w": None, "verdict": None,
    }  # fmt: skip
    if referent is not None:
        word = referent_word(mine, referent)
        shares = dict((normalise(w), v) for w, v in ranked)
        agree = normalise(word) == normalise(top)
        verdict = "unsure" if reason else "right" if agree else "wrong"
        out.update(referent=word, referent_w=round(shares[normalise(word)], 4), verdict=verdict)
    return out


def remark(mine: dict, judged: dict) -> tuple[str, dict] | None:
    """What can be said of the head's top word beside the nearest noun before the pronoun (by the dragon's own
    part-of-speech tags), when the head is sure of it: it is that noun ('nearest'), a noun further back ('past'),
    or not a noun ('other'). None when the head is unsure or the sentence has no noun before the word."""
    noun, top = mine.get("nearest_noun"), judged["top"]
    if not judged["sure"] or not noun:
        return None
    if normalise(noun) == normalise(top):
        return "nearest", {"noun": noun}
    if normalise(top) in {normalise(n) for n in mine.get("nouns", [])}:
        return "past", {"noun": noun, "top": top}
    return "other", {"noun": noun, "top": top}

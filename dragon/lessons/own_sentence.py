"""4-1's own sentence: the real model's chosen head on a pronoun in the player's sentence, beside our dragon's
Context head on the same word, and the nearest noun before it (the dragon's own part-of-speech tags)."""

import unicodedata

from ..analyze import analyze
from ..engine import default_dragon
from . import crystal_ball
from .wordpiece import normalise

SHOWN_WORDS = 10  # an error lists at most this many of the sentence's words, then "…"
LOW_ON_WORDS = 0.2  # a head giving all the words together less than this mostly looks at [CLS]/[SEP]


class SentenceError(ValueError):
    """A sentence the crystal ball cannot read: `kind` names the text key (c_err_…), `values` fill it in."""

    def __init__(self, kind: str, **values: object) -> None:
        super().__init__(kind)
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


def remark(mine: dict) -> tuple[str, dict] | None:
    """What can be said of the head's top word, chosen by the measured row: it parks on [CLS]/[SEP] ('special'), its
    top word is the nearest noun before the pronoun ('nearest'), a noun further back ('past'), or no noun ('other');
    the text key's ending and the values it needs. None when the sentence has no noun before the word."""
    noun, top = mine.get("nearest_noun"), mine["top"]
    if mine.get("on_words", 1.0) < LOW_ON_WORDS:
        specials, on_words = f"{mine.get('specials', 0.0):.2f}", f"{mine['on_words']:.2f}"
        return "special", {"s": specials, "w": on_words, "word": mine["word"]}
    if not noun:
        return None
    if normalise(noun) == normalise(top):
        return "nearest", {"noun": noun}
    if normalise(top) in {normalise(n) for n in mine.get("nouns", [])}:
        return "past", {"noun": noun, "top": top}
    return "other", {"noun": noun, "top": top}

"""4-1's own sentence: the real model's chosen head on a pronoun in the player's sentence, beside our dragon's
Context head on the same word, and the nearest noun before it (the dragon's own part-of-speech tags); what the page
says of them, as findings."""

import functools
import unicodedata

from dragon.analyze import analyze
from dragon.engine import default_dragon
from dragon.findings import Finding, Measured
from dragon.lessons import crystal_ball
from dragon.lessons.minilm.wordpiece import normalise
from dragon.levels.loader import load_levels

SHOWN_WORDS = 10  # an error lists at most this many of the sentence's words, then "…"
MARGIN = 0.05  # a share decides only by a clear margin: the top word must beat the next word by 5 points
MOSTLY = 0.5  # "mostly" is said only of a word that takes at least half of the whole row ([CLS]/[SEP] included)
SINK = 0.5  # our dragon's Context head "looks at its sink" when at least half of the word's row goes there
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
    read = vocab.words(text)
    words = [w.text for w in read]
    if not words:
        raise SentenceError("c_err_none")
    if len(words) > crystal_ball.MAX_WORDS:
        raise SentenceError("c_err_many", n=len(words), max=crystal_ball.MAX_WORDS)
    if (pieces := sum(len(w.pieces) for w in read) + 2) > crystal_ball.MAX_PIECES:
        raise SentenceError("c_err_pieces", n=pieces, max=crystal_ball.MAX_PIECES)
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
    others = sorted(((v, j) for j, v in enumerate(ctx) if j != dq), reverse=True)
    ctx_top = others[0] if others else (0.0, 0)
    ctx_second = others[1] if len(others) > 1 else (0.0, 0)
    sink = d["sink"][d["heads"].index("context")][dq] if dq is not None else 0.0
    tags = default_dragon().read(text, "en").analysis.tokens
    nouns = [tok.text for tok in tags[:dq] if tok.pos == "noun"] if dq is not None else []
    later = [tok.text for tok in tags[dq + 1 :] if tok.pos == "noun"] if dq is not None else []
    return {
        "context_sink": sink, "later_nouns": later,
        "text": text, "word": words[q], "tokens": words, "row": row, "top": words[top_j],
        "top_w": top_v, "position": q, "dragon_tokens": tokens, "context": ctx,
        "context_top": tokens[ctx_top[1]] if tokens else "", "context_w": ctx_top[0],
        "context_second": tokens[ctx_second[1]] if len(tokens) > 2 else "", "context_second_w": ctx_second[0],
        "nearest_noun": nouns[-1] if nouns else None, "nouns": nouns, "dragon_position": dq,
        "specials": round(specials, decimals), "times": len(at),
        "on_words": round(sum(v for j, v in enumerate(row) if j != q), decimals),
    }


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
                            f"are: {some_words(words)}", word=said, words=some_words(words))
    return match


def lead(top_w: float, second_w: float) -> float:
    """How far the top word leads, as the page shows it: the difference of the two shares at two decimals (so the
    lead printed is always the shown numbers' difference, and the MARGIN rule judges that same number)."""
    return round(round(top_w, 2) - round(second_w, 2), 2)


def judge(mine: dict, referent: str | None = None) -> dict:
    """What the head answers on the sentence and how sure its numbers let us be: unsure when [CLS]/[SEP] take more
    than its top word, or the top word beats the next by less than MARGIN; with the player's referent, whether the
    head agrees (right / wrong / unsure). `mostly` only when the top word takes ≥ MOSTLY of the whole row."""
    ranked = word_shares(mine)
    top, top_w = ranked[0] if ranked else ("", 0.0)
    second, second_w = ranked[1] if len(ranked) > 1 else ("", 0.0)
    specials = float(mine["specials"])
    reason = "specials" if specials > top_w else "flat" if lead(top_w, second_w) < MARGIN else None
    out = {
        "top": top, "top_w": round(top_w, 4), "second": second, "second_w": round(second_w, 4),
        "margin": lead(top_w, second_w), "specials": round(specials, 4), "sure": reason is None,
        "reason": reason, "mostly": top_w >= MOSTLY, "referent": None, "referent_w": None, "verdict": None,
    }
    if referent is not None:
        word = referent_word(mine, referent)
        shares = dict((normalise(w), v) for w, v in ranked)
        agree = normalise(word) == normalise(top)
        verdict = "unsure" if reason else "right" if agree else "wrong"
        out.update(referent=word, referent_w=round(shares[normalise(word)], 4), verdict=verdict)
    return out


@functools.cache
def lesson_case() -> dict:
    """4-1's own sentence read as a player's: the pronoun's target, the nearest tagged noun before it, and the word
    the level's head sends the pronoun to most."""
    level = next(lv for c in load_levels() for lv in c.levels if lv.kind == "crystal")
    (word, target), text = level.ask, level.text["en"]
    mine = own_sentence(text, word, crystal_ball.crystal_ball(text, word, target)["best"])
    return {"target": target, "nearest_noun": mine["nearest_noun"], "top": word_shares(mine)[0][0]}


def measured(mine: dict) -> dict:
    """What the own-sentence sentences are about, from own_sentence's result judged against the player's word: the
    head's top word over the other words (occurrences added), its lead, the [CLS]/[SEP] part, where the top word
    stands among the words our dragon's tagger calls nouns, and our dragon's Context head on the same word."""
    ranked = word_shares(mine)
    top, top_w = ranked[0] if ranked else ("", 0.0)
    second_w = ranked[1][1] if len(ranked) > 1 else 0.0
    ref = mine["judged"]["referent"]
    same = normalise(top)
    earlier, later = ({normalise(n) for n in mine.get(k, [])} for k in ("nouns", "later_nouns"))
    case = lesson_case()
    return {
        "top": top, "top_w": top_w, "margin": lead(top_w, second_w), "specials": float(mine["specials"]),
        "agree": ref is not None and normalise(ref) == same, "times": mine["times"], "noun": mine["nearest_noun"],
        "top_nearest": bool(mine["nearest_noun"]) and normalise(mine["nearest_noun"]) == same,
        "top_earlier": same in earlier, "top_later": same in later, "context_w": mine["context_w"],
        "context_sink": mine["context_sink"], "context_agrees": ref is not None and normalise(mine["context_top"]) ==
        normalise(ref), "lesson_same": case["nearest_noun"] == case["top"] == case["target"],
        "context_lead": lead(mine["context_w"], mine.get("context_second_w", 0.0)),
    }


def _context_heard(m: Measured) -> bool:
    """Our Context head gives another word a share to speak of: ≥ MARGIN, and more than its sink."""
    return m["context_w"] >= MARGIN and m["context_sink"] <= m["context_w"]


def _context_sure(m: Measured) -> bool:
    return _context_heard(m) and m["context_lead"] >= MARGIN


def _sure(m: Measured) -> bool:
    return m["specials"] <= m["top_w"] and m["margin"] >= MARGIN


def _remarks(m: Measured) -> bool:
    return _sure(m) and bool(m["noun"])


FINDINGS: tuple[Finding, ...] = (
    Finding("c_v_right", lambda m: _sure(m) and m["agree"], "the top word beats the next by ≥ MARGIN and [CLS]/[SEP], "
            "and is the player's word", group="verdict"),
    Finding("c_v_wrong", lambda m: _sure(m) and not m["agree"], "the top word beats the next by ≥ MARGIN and "
            "[CLS]/[SEP], and is not the player's word", group="verdict"),
    Finding("c_v_specials", lambda m: m["specials"] > m["top_w"], "[CLS]/[SEP] take more than the top word",
            group="verdict"),
    Finding("c_v_flat", lambda m: m["specials"] <= m["top_w"] and m["margin"] < MARGIN, "the top word beats the next "
            "by less than MARGIN", group="verdict"),
    Finding("c_v_mostly", lambda m: _sure(m) and m["top_w"] >= MOSTLY, "the top word takes ≥ half of the whole row"),
    Finding("c_try_last", lambda m: m["times"] > 1, "the pronoun occurs more than once; the last is read"),
    Finding("c_try_nearest", lambda m: _remarks(m) and m["top_nearest"] and m["lesson_same"], "the top word is the "
            "nearest tagged noun before the pronoun; on the lesson's sentence that noun is the target and the top "
            "word", ),
    Finding("c_try_past", lambda m: _remarks(m) and m["top_earlier"] and not m["top_nearest"], "the top word is a "
            "tagged noun before the nearest one"),
    Finding("c_try_later", lambda m: _remarks(m) and m["top_later"] and not m["top_earlier"], "the top word is a "
            "tagged noun after the pronoun, none before it"),
    Finding("c_try_other", lambda m: _remarks(m) and not (m["top_earlier"] or m["top_later"] or m["top_nearest"]),
            "the top word is nowhere tagged a noun"),
    # our Context head is judged by the real head's rule: a word is its answer only when it takes MARGIN, leads the
    # next word by MARGIN and takes more than what rests on the sink (the rule-built head's [CLS]/[SEP])
    Finding("c_try_context_right", lambda m: _context_sure(m) and m["context_agrees"], "our Context head's largest "
            "share to another word (≥ MARGIN, leading the next by ≥ MARGIN, above its sink) goes to the player's word",
            group="context"),
    Finding("c_try_context_wrong", lambda m: _context_sure(m) and not m["context_agrees"], "our Context head's "
            "largest share to another word (≥ MARGIN, leading the next by ≥ MARGIN, above its sink) goes elsewhere",
            group="context"),
    Finding("c_try_context_flat", lambda m: _context_heard(m) and m["context_lead"] < MARGIN, "our Context head's "
            "two largest shares to other words lie within MARGIN of each other (the largest ≥ MARGIN, above its sink)",
            group="context"),
    Finding("c_try_context_none", lambda m: not _context_heard(m) and m["context_sink"] >= SINK, "our Context head "
            "gives ≥ half the row to its sink, more than any other word gets", group="context"),
    Finding("c_try_context_quiet", lambda m: not _context_heard(m) and m["context_sink"] < SINK, "our Context head's "
            "largest share to another word is under MARGIN or below its sink, and under half the row rests on the sink",
            group="context"),
)

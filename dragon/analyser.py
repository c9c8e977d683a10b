"""Text → tokens with part of speech and lexicon findings (jieba for Chinese, rules for English)."""

import functools
import re
import unicodedata
from dataclasses import dataclass

from .lexicon import USER_DICT, Lexicon, load_lexicon

MAX_TOKENS = 64  # visible tokens per text
MAX_CHARS = 600  # characters segmented at most: more than 64 tokens' worth in either language
MAX_TOKEN_CHARS = 24  # a longer run of letters is cut to this
CLAUSE_ENDS = frozenset("，。！？；：,.!?;:…\n")

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
EN_TOKEN = re.compile(
    rf"(?P<cjk>[{CJK}]+)"  # Chinese inside English text goes to jieba
    r"|(?P<word>[^\W\d_]+(?:['’][^\W\d_]+)*)"  # a word, with an apostrophe part (don't, teacher's)
    r"|(?P<num>\d+(?:[.,]\d+)*)"
    r"|(?P<nl>\n)"
    r"|(?P<other>\S)"  # punctuation, emoji, anything else: one character each
)

# jieba's POS tag (first letters) -> our coarse part of speech
JIEBA_POS = {
    "n": "noun", "nr": "noun", "ns": "noun", "nt": "noun", "nz": "noun", "ng": "noun", "vn": "noun",
    "an": "noun", "s": "noun", "v": "verb", "vd": "verb", "vg": "verb", "vi": "verb", "vq": "verb",
    "a": "adj", "ad": "adj", "ag": "adj", "z": "adj", "b": "adj", "d": "adv", "r": "func", "p": "func",
    "c": "func", "u": "func", "y": "func", "e": "func", "o": "func", "m": "func", "q": "func",
    "t": "time", "tg": "time", "f": "func", "x": "punct", "w": "punct",
}  # fmt: skip
EN_POS_TO_COARSE = {
    "verb": "verb", "adj": "adj", "adv": "adv", "noun": "noun", "det": "func", "prep": "func",
    "conj": "func", "aux": "func", "num": "func", "interj": "func",
}  # fmt: skip


@dataclass(frozen=True)
class Token:
    text: str
    pos: str  # coarse: noun verb adj adv pron func punct time
    clause: int  # index of the clause / dialogue turn the token belongs to
    emotion: int = 0  # +1 / -1 sentiment polarity, 0 none
    connective: str | None = None  # logical role (cause, effect, …)
    time: str | None = None  # "time" word or "aspect" marker
    space: str | None = None  # "place" or "direction"
    tone: str | None = None  # question / exclaim / soft / pause
    pronoun: str | None = None  # number ("sg"/"pl") of a 3rd-person pronoun
    person: str | None = None  # number of a noun naming a person
    field: str | None = None  # semantic field

    @property
    def content(self) -> bool:
        return self.pos in ("noun", "verb", "adj", "pron", "time")


@dataclass(frozen=True)
class Analysis:
    tokens: tuple[Token, ...]
    lang: str  # "zh" or "en"
    truncated: bool  # the text was longer than the cap and was cut


def clean(text: str) -> str:
    """Drop control, format (zero-width, bidi) and unpaired surrogate characters; keep newlines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    return "".join(ch for ch in text if ch == "\n" or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn"))


def detect_lang(text: str) -> str:
    cjk = len(re.findall(f"[{CJK}]", text))
    latin = len(re.findall(r"[A-Za-z]", text))
    return "zh" if cjk and cjk * 3 >= latin else "en"


@functools.cache
def _jieba_posseg():
    import jieba
    import jieba.posseg

    jieba.setLogLevel(60)
    jieba.load_userdict(str(USER_DICT))
    return jieba.posseg


def _english_pos(word: str, lex: Lexicon) -> str:
    w = word.lower()
    if w in lex.pronouns:
        return "pron"
    if w in lex.en_pos:
        return EN_POS_TO_COARSE[lex.en_pos[w]]
    if w.endswith("ly") and len(w) > 4:
        return "adv"
    if (w.endswith("ing") and len(w) > 5) or (w.endswith("ed") and len(w) > 4):
        return "verb"
    return "noun"


def _raw_tokens(text: str, lang: str, lex: Lexicon) -> list[tuple[str, str, str]]:
    """(text, coarse pos, jieba tag or "") triples; newlines come through as clause breaks."""
    if lang == "zh":
        return [(w, _zh_pos(w, flag, lex), flag) for w, flag in _jieba_posseg().cut(text)]
    out: list[tuple[str, str, str]] = []
    for m in EN_TOKEN.finditer(text):
        kind, piece = m.lastgroup, m.group()
        if kind == "cjk":
            out.extend((w, _zh_pos(w, flag, lex), flag) for w, flag in _jieba_posseg().cut(piece))
        elif kind == "word":
            out.append((piece, _english_pos(piece, lex), ""))
        elif kind == "num":
            out.append((piece, "func", ""))
        else:
            out.append((piece, "punct" if kind == "nl" or not piece.isalnum() else "noun", ""))
    return out


def _zh_pos(word: str, flag: str, lex: Lexicon) -> str:
    if flag == "eng":
        return _english_pos(word, lex)
    if word.lower() in lex.pronouns:
        return "pron"
    return JIEBA_POS.get(flag, JIEBA_POS.get(flag[:1], "func"))


def _find(table: dict, word: str):
    """Look a word up, then its English singular (students → student, studies → study)."""
    if word in table:
        return table[word]
    if word.isascii() and len(word) > 3 and word.endswith("s"):
        for stem in (word[:-1], word[:-2], word[:-3] + "y"):
            if stem in table:
                return table[stem]
    return None


JIEBA_SPACE = {"ns": "place", "s": "place", "f": "direction"}  # place names, place words, 方位词


def _lookup(text: str, pos: str, flag: str, clause: int, lex: Lexicon) -> Token:
    w = text.lower()
    pronoun = lex.pronouns.get(w)
    return Token(
        text=text,
        pos=pos,
        clause=clause,
        emotion=_find(lex.emotion, w) or 0,
        connective=lex.connectives.get(w),
        time=lex.time.get(w) or ("time" if pos == "time" else None),
        space=_find(lex.space, w) or JIEBA_SPACE.get(flag),
        tone=lex.tone.get(w),
        pronoun=pronoun[0] if pronoun and pronoun[1] == 3 else None,
        person=lex.person_nouns.get(w) or ("pl" if _find(lex.person_nouns, w) and w.endswith("s") else None),
        field=_find(lex.fields, w),
    )


def analyse(text: str, lang: str = "auto", max_tokens: int = MAX_TOKENS) -> Analysis:
    """Segment and annotate `text`; at most `max_tokens` tokens are kept and `truncated` says so."""
    if not isinstance(text, str):
        raise ValueError("text must be a string")
    if lang not in ("auto", "zh", "en"):
        raise ValueError(f"lang must be 'auto', 'zh' or 'en', not {lang!r}")
    cut = len(text) > MAX_CHARS
    text = clean(text[:MAX_CHARS]).strip()
    if not text:
        raise ValueError("The text is empty: type a sentence in Chinese or English.")
    if lang == "auto":
        lang = detect_lang(text)
    lex = load_lexicon()
    tokens: list[Token] = []
    clause = 0
    for piece, pos, flag in _raw_tokens(text, lang, lex):
        if not piece.strip():
            if "\n" in piece and tokens and tokens[-1].clause == clause:
                clause += 1  # a new line starts a new turn
            continue
        if len(tokens) == max_tokens:
            cut = True
            break
        if len(piece) > MAX_TOKEN_CHARS:
            piece, cut = piece[:MAX_TOKEN_CHARS], True
        tokens.append(_lookup(piece, pos, flag, clause, lex))
        if piece in CLAUSE_ENDS:
            clause += 1
    if not tokens:
        raise ValueError("The text has no words or symbols left to read.")
    return Analysis(tokens=tuple(tokens), lang=lang, truncated=cut)

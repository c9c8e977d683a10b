"""BERT's uncased WordPiece tokeniser: text → words (original spelling kept) → word pieces and their ids."""

import unicodedata
from dataclasses import dataclass
from pathlib import Path

MAX_WORD_CHARS = 100  # a longer word becomes [UNK], as in BERT
SPECIALS = ("[CLS]", "[SEP]")
CJK_RANGES = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)


@dataclass(frozen=True)
class Word:
    text: str  # as the player wrote it (the model reads it lower-cased, accents stripped)
    pieces: tuple[str, ...]  # its word pieces: "students" → ("students",), "tokeniser" → ("token", "##iser")


def is_punctuation(ch: str) -> bool:
    """BERT's rule: every ASCII non-alphanumeric printable, and every Unicode punctuation character."""
    cp = ord(ch)
    return 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126 or unicodedata.category(ch)[0] == "P"


def is_cjk(ch: str) -> bool:
    """A CJK ideograph: BERT cuts each into a word of its own."""
    return any(lo <= ord(ch) <= hi for lo, hi in CJK_RANGES)


def is_dropped(ch: str) -> bool:
    """Characters BERT removes before anything else: NUL, U+FFFD and control characters (not whitespace)."""
    return ord(ch) in (0, 0xFFFD) or (ch not in "\t\n\r" and unicodedata.category(ch) in ("Cc", "Cf"))


def normalise(word: str) -> str:
    """What the uncased model reads: lower case (letter by letter: Σ is σ even at a word's end, as in the reference
    tokeniser), accents stripped (NFD, combining marks dropped)."""
    lower = "".join(ch.lower() for ch in word)
    return "".join(ch for ch in unicodedata.normalize("NFD", lower) if unicodedata.category(ch) != "Mn")


def split_words(text: str) -> list[str]:
    """Whitespace splits words; each punctuation mark and each CJK ideograph is a word of its own."""
    words, current = [], []
    for ch in text:
        if is_dropped(ch):
            continue
        if ch.isspace() or is_punctuation(ch) or is_cjk(ch):
            if current:
                words.append("".join(current))
                current = []
            if not ch.isspace():
                words.append(ch)
        else:
            current.append(ch)
    if current:
        words.append("".join(current))
    return words


class WordPiece:
    """Greedy longest-match-first word pieces over a BERT vocabulary (one piece per line of vocab.txt)."""

    def __init__(self, vocab_file: Path):
        pieces = vocab_file.read_text(encoding="utf-8").splitlines()
        self.ids = {p: i for i, p in enumerate(pieces)}
        for special in (*SPECIALS, "[UNK]"):
            if special not in self.ids:
                raise ValueError(f"{vocab_file}: the vocabulary has no {special}")

    def pieces(self, word: str) -> tuple[str, ...]:
        """One word's pieces: the longest prefix in the vocabulary, then the longest "##" continuation, …"""
        chars = normalise(word)
        if not chars:
            return ()
        if len(chars) > MAX_WORD_CHARS:
            return ("[UNK]",)
        out, start = [], 0
        while start < len(chars):
            end = len(chars)
            while end > start:
                piece = chars[start:end] if start == 0 else "##" + chars[start:end]
                if piece in self.ids:
                    break
                end -= 1
            if end == start:  # no piece fits: the whole word is unknown
                return ("[UNK]",)
            out.append(piece)
            start = end
        return tuple(out)

    def words(self, text: str) -> list[Word]:
        """The text's words with their pieces (a word that normalises to nothing, e.g. a lone accent, is dropped)."""
        return [Word(w, p) for w in split_words(text) if (p := self.pieces(w))]

    def encode(self, words: list[Word]) -> list[int]:
        """[CLS] pieces… [SEP] as vocabulary ids."""
        return [self.ids[p] for p in ("[CLS]", *(p for w in words for p in w.pieces), "[SEP]")]

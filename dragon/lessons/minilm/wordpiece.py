"""The model's tokenizer: text → words (original spelling kept) → word pieces and their ids, by its own tokenizer.json
through `tokenizers`; and the word rules the levels use to name a word of a text (split_words, normalise)."""

import unicodedata
from dataclasses import dataclass
from pathlib import Path

from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

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
    """The model's own tokenizer (its tokenizer.json read by the `tokenizers` library it was made for): the text's
    words in their original spelling, each with its word pieces, and the ids the model reads."""

    def __init__(self, tokenizer: Tokenizer):
        tokenizer.no_truncation()  # the app caps texts itself (crystal_ball.MAX_WORDS) and says so
        tokenizer.no_padding()
        self.tokenizer = tokenizer
        self.ids = tokenizer.get_vocab()
        for special in (*SPECIALS, "[UNK]"):
            if special not in self.ids:
                raise ValueError(f"the vocabulary has no {special}")

    @classmethod
    def from_file(cls, tokenizer_file: Path) -> "WordPiece":
        """The tokenizer.json a model ships."""
        return cls(Tokenizer.from_file(str(tokenizer_file)))

    @classmethod
    def from_vocab(cls, vocab_file: Path) -> "WordPiece":
        """BERT's uncased tokenizer over a vocab.txt (one piece per line), as tokenizer.json describes it."""
        pieces = vocab_file.read_text(encoding="utf-8").splitlines()
        tok = Tokenizer(models.WordPiece({p: i for i, p in enumerate(pieces)}, unk_token="[UNK]",
                                         max_input_chars_per_word=MAX_WORD_CHARS))
        tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.add_special_tokens([p for p in ("[PAD]", "[UNK]", *SPECIALS, "[MASK]") if p in pieces])
        return cls(tok)

    def words(self, text: str) -> list[Word]:
        """The text's words with their pieces, as the tokenizer groups them (a word that normalises to nothing, e.g. a
        lone accent or a control character, is dropped; "[MASK]" typed as text is the one special token)."""
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        grouped: dict[int, list[tuple[str, tuple[int, int]]]] = {}
        for i, (piece, span, word) in enumerate(zip(enc.tokens, enc.offsets, enc.word_ids, strict=True)):
            grouped.setdefault(-1 - i if word is None else word, []).append((piece, span))
        return [Word(text[min(s for _, (s, _) in g):max(e for _, (_, e) in g)], tuple(p for p, _ in g))
                for g in grouped.values()]

    def encode(self, words: list[Word]) -> list[int]:
        """[CLS] pieces… [SEP] as vocabulary ids."""
        return [self.ids[p] for p in ("[CLS]", *(p for w in words for p in w.pieces), "[SEP]")]

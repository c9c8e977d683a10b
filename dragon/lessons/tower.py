"""4-2 The tower of layers: per layer of the real all-MiniLM-L6-v2, measured over shipped sentences, how far its
heads look (mean attention distance in words), how much goes to the next/previous word and to [CLS]/[SEP]."""

import functools
import itertools
from pathlib import Path

import torch

from ..analyze import rounded
from ..lexicon import ASSETS
from ..margins import DISTANCE_MARGIN, SHARE_MARGIN, accepted_best, lead
from . import crystal_ball
from .papers import papers
from .wordpiece import is_punctuation

SENTENCES_FILE = ASSETS / "lessons" / "tower_sentences.txt"
NEIGHBOUR_HEAD = 0.5  # a head giving more than this share to the previous (or next) word is a neighbour head
DECIMALS = 4


def load_sentences(path: Path = SENTENCES_FILE) -> list[str]:
    lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def sentence_figures(maps: torch.Tensor, tokens: list[str]) -> dict[str, torch.Tensor]:
    """maps (L, h, G, G) over [CLS] words… [SEP] → per head (L, h) sums over the W word rows (divide by W later):
    distance (mean |i − j| in words of the attention that goes to words), prev, next, self, cls, sep, punct."""
    W = len(tokens)
    rows = maps[:, :, 1:-1]  # (L, h, W, G) the words' rows: queries are words, never the special tokens
    to_words = rows[..., 1:-1]  # (L, h, W, W)
    i = torch.arange(W)
    gap = (i[:, None] - i[None, :]).abs().to(maps.dtype)  # (W, W) |i − j|
    mass = to_words.sum(-1).clamp_min(1e-12)  # (L, h, W) attention that goes to words at all
    punct = torch.tensor([all(is_punctuation(c) for c in t) for t in tokens], dtype=maps.dtype)  # (W,)
    return {
        "distance": ((to_words * gap).sum(-1) / mass).sum(-1),
        "prev": torch.diagonal(to_words, offset=-1, dim1=-2, dim2=-1).sum(-1),  # row i, column i − 1
        "next": torch.diagonal(to_words, offset=1, dim1=-2, dim2=-1).sum(-1),  # row i, column i + 1
        "self": torch.diagonal(to_words, dim1=-2, dim2=-1).sum(-1),
        "cls": rows[..., 0].sum(-1),
        "sep": rows[..., -1].sum(-1),
        "punct": (to_words @ punct).sum(-1),
        "uniform_distance": gap.mean(-1).sum().expand(maps.shape[:2]),  # the distance if every word got the same
    }


@functools.cache
def tower(path: Path = SENTENCES_FILE) -> dict:
    """Per layer (averaged over heads, sentences and each sentence's words) and per head (L × h), over the
    shipped sentences: distance, prev, next, adjacent (= prev + next), self, special (= cls + sep), punct."""
    sentences = load_sentences(path)
    totals: dict[str, torch.Tensor] = {}
    words = 0
    for s in sentences:
        reading = crystal_ball.read(s)
        for k, v in sentence_figures(reading.maps.double(), reading.tokens).items():
            totals[k] = totals.get(k, 0) + v
        words += len(reading.tokens)
    head = {k: v / words for k, v in totals.items()}  # (L, h) each: mean over every word of every sentence
    head["adjacent"] = head["prev"] + head["next"]
    head["special"] = head["cls"] + head["sep"]
    layer = {k: v.mean(dim=1) for k, v in head.items()}  # (L,) mean over the layer's heads
    neighbour = ((head["prev"] > NEIGHBOUR_HEAD) | (head["next"] > NEIGHBOUR_HEAD)).sum(dim=1)  # (L,)
    L, H = head["distance"].shape
    keys = ("distance", "prev", "next", "adjacent", "self", "cls", "sep", "special", "punct")
    return {
        "model": crystal_ball.MODEL,
        "layers": L,
        "heads": H,
        "sentences": len(sentences),
        "words": words,
        "uniform_distance": round(float(layer["uniform_distance"][0]), DECIMALS),
        "per_layer": [
            {"layer": i, **{k: round(float(layer[k][i]), DECIMALS) for k in keys}, "neighbour_heads": int(neighbour[i])}
            for i in range(L)
        ],
        "per_head": {k: rounded(head[k], DECIMALS) for k in ("distance", "adjacent", "special", "prev", "next")},
        "findings": findings(layer, neighbour),
        "papers": list(papers("tower")),  # Clark et al. 2019 on BERT-base, for comparison
    }


def findings(layer: dict[str, torch.Tensor], neighbour: torch.Tensor) -> dict:
    """What the numbers say, computed: where attention is nearest and farthest, where the neighbour heads live,
    where the special tokens soak up attention, and whether the distance grows steadily with depth."""
    d = layer["distance"]
    steps = d[1:] - d[:-1]
    return {
        "nearest_layer": int(d.argmin()),
        "farthest_layer": int(d.argmax()),
        "most_adjacent_layer": int(layer["adjacent"].argmax()),
        "most_special_layer": int(layer["special"].argmax()),
        "most_neighbour_heads_layer": int(neighbour.argmax()),
        "distance_rises_every_layer": bool((steps > 0).all()),
        "distance_first_to_last": [round(float(d[0]), DECIMALS), round(float(d[-1]), DECIMALS)],
    }


def answer_key(tw: dict) -> dict[str, dict]:
    """4-2's scored questions, each with its accepted answers and the margin that decides it: does the distance
    grow every layer (decided by the clearest step against it), which layer looks most at the next/previous word,
    which parks least on [CLS]/[SEP] (the predictions), and, read off the chart, which layer looks nearest."""
    rows = tw["per_layer"]
    d, adj, special = ([p[k] for p in rows] for k in ("distance", "adjacent", "special"))
    steps = [b - a for a, b in itertools.pairwise(d)]
    rises = all(s > 0 for s in steps)
    against = min(steps) if rises else -min(steps)  # how clearly it holds: the smallest rise, or the largest fall
    out = {"rises": {"accepted": ["yes" if rises else "no"], "margin": round(against, 4), "unit": "words"}}
    for qid, values, margin, most, unit in (("adjacent", adj, SHARE_MARGIN, True, "share"),
                                            ("quiet", special, SHARE_MARGIN, False, "share"),
                                            ("nearest", d, DISTANCE_MARGIN, False, "words")):  # fmt: skip
        by_layer = {str(i + 1): v for i, v in enumerate(values)}
        accepted = accepted_best(by_layer, margin, most)
        out[qid] = {"accepted": accepted, "margin": round(lead(by_layer, accepted, most), 4), "unit": unit}
    return out


PREDICTIONS = ("rises", "adjacent", "quiet")  # asked before the figures; "nearest" is read off them


def sink_layers(tw: dict, share: float = 0.4) -> tuple[int, float, float] | None:
    """The first layer from which every layer parks ≥ `share` of its attention on [CLS]/[SEP], and the range there."""
    specials = [p["special"] for p in tw["per_layer"]]
    for start in range(len(specials)):
        if all(s >= share for s in specials[start:]):
            return start, min(specials[start:]), max(specials[start:])
    return None

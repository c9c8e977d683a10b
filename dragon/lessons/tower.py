"""4-2 The tower of layers: per layer of the real all-MiniLM-L6-v2, measured over shipped sentences, how far its
heads look (mean attention distance in words), how much goes to the next/previous word and to [CLS]/[SEP], and how
long [CLS]'s and [SEP]'s value vectors are beside a word's; what the page says of them, as findings."""

import functools
import itertools
import time
from pathlib import Path

import torch

from dragon.analyze import rounded
from dragon.findings import Finding, Measured
from dragon.lessons import crystal_ball
from dragon.lessons.minilm.wordpiece import is_punctuation
from dragon.lessons.papers import papers
from dragon.margins import DISTANCE_MARGIN, SHARE_MARGIN, accepted_best, lead, question
from dragon.text.lexicon import ASSETS

SENTENCES_FILE = ASSETS / "lessons" / "tower_sentences.txt"
# 4-2's second prediction (ui/rooms/rethink.py): groups of sentences the page has not read, one file each, asked the
# same four questions (AGAIN_QUESTIONS) as the tower itself
AGAIN_DIR = ASSETS / "lessons" / "tower_again"
AGAIN_GROUPS = tuple(sorted(AGAIN_DIR.glob("*.txt")))
AGAIN_QUESTIONS = ("rises", "adjacent", "quiet", "nearest")
NEIGHBOUR_HEAD = 0.5  # a head giving more than this share to the previous (or next) word is a neighbour head
SINK_SHARE = 0.4  # a layer parks like a sink when at least this share of its attention goes to [CLS]/[SEP]
PARKS = 0.5  # a head "parks" when at least half its attention goes to [CLS]/[SEP]
SHORT_VALUE = 0.25  # a value vector under a quarter of a word's length brings "little" back
NOT_ZERO = 0.01  # … and one over a hundredth of it is not zero (our dragon's sink's values are exactly 0)
DECIMALS = 4


def again_group(name: object) -> Path:
    """One of the second prediction's groups, by its file name (a ValueError for any other name)."""
    found = [p for p in AGAIN_GROUPS if p.name == name]
    if not found:
        raise ValueError(f"no such group of sentences: {name!r}")
    return found[0]


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


def value_lengths(text: str) -> torch.Tensor:
    """(L, h, 2): how long [CLS]'s and [SEP]'s value vectors are in each head, as a share of the mean length of the
    text's word pieces' value vectors there (what attention to them brings back, beside what a word brings)."""
    bert, vocab = crystal_ball.load()
    with torch.inference_mode():
        n = bert.value_norms(torch.tensor([vocab.encode(vocab.words(text))])).double()  # (L, h, T)
    words = n[..., 1:-1].mean(-1)  # (L, h)
    return torch.stack([n[..., 0] / words, n[..., -1] / words], dim=-1)


@functools.cache
def tower(path: Path = SENTENCES_FILE) -> dict:
    """Per layer (averaged over heads, sentences and each sentence's words) and per head (L × h), over the
    shipped sentences: distance, prev, next, adjacent (= prev + next), self, special (= cls + sep), punct, and
    cls_value / sep_value ([CLS]'s, [SEP]'s value length as a share of a word's, averaged over the sentences)."""
    started = time.perf_counter()
    sentences = load_sentences(path)
    totals: dict[str, torch.Tensor] = {}
    words = 0
    values = torch.zeros(())
    for s in sentences:
        reading = crystal_ball.read(s)
        for k, v in sentence_figures(reading.maps.double(), reading.tokens).items():
            totals[k] = totals.get(k, 0) + v
        words += len(reading.tokens)
        values = values + value_lengths(s) / len(sentences)  # (L, h, 2) mean over the sentences
    head = {k: v / words for k, v in totals.items()}  # (L, h) each: mean over every word of every sentence
    head["adjacent"] = head["prev"] + head["next"]
    head["special"] = head["cls"] + head["sep"]
    head["cls_value"], head["sep_value"] = values[..., 0], values[..., 1]
    layer = {k: v.mean(dim=1) for k, v in head.items()}  # (L,) mean over the layer's heads
    neighbour = ((head["prev"] > NEIGHBOUR_HEAD) | (head["next"] > NEIGHBOUR_HEAD)).sum(dim=1)  # (L,)
    L, H = head["distance"].shape
    keys = ("distance", "prev", "next", "adjacent", "self", "cls", "sep", "special", "punct", "cls_value", "sep_value")
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
        "per_head": {k: rounded(head[k], DECIMALS)
                     for k in ("distance", "adjacent", "special", "prev", "next", "cls_value", "sep_value")},
        "findings": findings(layer, neighbour),
        "papers": list(papers("tower")),  # Clark et al. 2019 on BERT-base, for comparison
        "device": "cpu",  # the real model reads on the CPU
        "threads": torch.get_num_threads(),
        "seconds": round(time.perf_counter() - started, 3),
        "computed_at": round(time.time()),  # when this server measured it (every player sees these figures)
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
                                            ("nearest", d, DISTANCE_MARGIN, False, "words")):
        by_layer = {str(i + 1): v for i, v in enumerate(values)}
        accepted = accepted_best(by_layer, margin, most)
        out[qid] = {"accepted": accepted, "margin": round(lead(by_layer, accepted, most), 4), "unit": unit}
    return out


PREDICTIONS = ("rises", "adjacent", "quiet")  # asked before the figures; "nearest" is read off them


def sink_layers(tw: dict, share: float = SINK_SHARE) -> tuple[int, float, float] | None:
    """The first layer from which every layer parks ≥ `share` of its attention on [CLS]/[SEP], and the range there."""
    specials = [p["special"] for p in tw["per_layer"]]
    for start in range(len(specials)):
        if all(s >= share for s in specials[start:]):
            return start, min(specials[start:]), max(specials[start:])
    return None


def measured(tw: dict) -> dict:
    """What 4-2's sentences are about, from the tower's figures: the distances and their steps, the layers within
    SHARE_MARGIN of the most adjacent share (the answers the game accepts), the neighbour heads, the sink layers and
    [CLS]'s value lengths there, the heads that park, and the values the sentences show."""
    rows, f = tw["per_layer"], tw["findings"]
    d = [p["distance"] for p in rows]
    adjacent = accepted_best({i: p["adjacent"] for i, p in enumerate(rows)}, SHARE_MARGIN)
    kl = f["most_neighbour_heads_layer"]
    sink = sink_layers(tw)
    after = rows[sink[0] :] if sink else []
    special, cls_value = ([v for row in tw["per_head"][k] for v in row] for k in ("special", "cls_value"))  # (L·h,)
    parking = [v for s, v in zip(special, cls_value, strict=True) if s >= PARKS]  # [CLS]'s value in parking heads
    return {
        "layers": tw["layers"], "heads": tw["heads"], "distance": d, "steps": [b - a for a, b in itertools.pairwise(d)],
        "nearest": f["nearest_layer"], "farthest": f["farthest_layer"], "uniform": tw["uniform_distance"],
        "most_adjacent": f["most_adjacent_layer"], "adjacent_share": rows[f["most_adjacent_layer"]]["adjacent"],
        "adjacent_layers": sorted(adjacent), "neighbour_layer": kl, "neighbour_heads": rows[kl]["neighbour_heads"],
        "sink": sink, "cls_mostly": all(p["cls"] > p["sep"] for p in after),
        "cls_value": (min(p["cls_value"] for p in after), max(p["cls_value"] for p in after)) if after else None,
        "parking_heads": len(parking), "parking_cls_value": sorted(parking),
    }


def _short_not_zero(values: list[float] | tuple[float, float] | None) -> bool:
    return bool(values) and min(values) > NOT_ZERO and max(values) < SHORT_VALUE


def _shallow(m: Measured) -> bool:
    """The layers that look most at the next/previous word (within the margin) are the first ones, all shallow."""
    layers = m["adjacent_layers"]
    return layers == list(range(len(layers))) and len(layers) <= m["layers"] // 2


FINDINGS: tuple[Finding, ...] = (
    Finding("4-2.story", lambda m: m["layers"] == 6, "the crystal ball's model has 6 layers", always=True),
    Finding("tw_dist", lambda m: m["distance"][m["nearest"]] == min(m["distance"])
            and m["distance"][m["farthest"]] == max(m["distance"]),
            "the nearest and the farthest layer are those of the smallest and the largest distance", always=True),
    Finding("tw_rises", lambda m: all(s > 0 for s in m["steps"]), "the distance grows from every layer to the next",
            group="rises"),
    Finding("tw_not_steady", lambda m: any(s < 0 for s in m["steps"]) and any(s > 0 for s in m["steps"]),
            "the distance falls from some layer to the next and grows from another", group="rises"),
    Finding("tw_falls", lambda m: all(s < 0 for s in m["steps"]), "the distance falls from every layer to the next",
            group="rises"),
    Finding("tw_adjacent", lambda m: m["neighbour_heads"] >= 2, "layer kl has k ≥ 2 neighbour heads", group="adjacent"),
    Finding("tw_adjacent_one", lambda m: m["neighbour_heads"] == 1, "layer kl has one neighbour head",
            group="adjacent"),
    Finding("tw_adjacent_none", lambda m: m["neighbour_heads"] == 0, "no layer has a neighbour head",
            group="adjacent"),
    Finding("tw_sink", lambda m: m["sink"] is not None and m["cls_mostly"] and _short_not_zero(m["cls_value"]),
            "from layer l on every layer parks ≥ 40 % on [CLS]/[SEP], more on [CLS] than on [SEP], and [CLS]'s values "
            "there are 1–25 % as long as a word's (short, not zero)"),
    Finding("tw_sink_loud", lambda m: m["sink"] is not None and min(m["cls_value"]) >= SHORT_VALUE,
            "from layer l on every layer parks ≥ 40 % on [CLS]/[SEP], and [CLS]'s values there are not short"),
    Finding("tw_verdict_yes", _shallow, "the layers within 5 points of the most next/previous share are the "
            "shallowest ones", group="verdict"),
    Finding("tw_verdict_no", lambda m: not _shallow(m), "the layers within 5 points of the most next/previous share "
            "are not (only) the shallowest", group="verdict"),
    Finding("4-2.why", lambda m: (not all(s > 0 for s in m["steps"]) or not _shallow(m))
            and m["parking_heads"] >= m["layers"] * m["heads"] // 4 and _short_not_zero(m["parking_cls_value"]),
            "the numbers disagree with the lesson somewhere; at least a quarter of the heads park half their attention "
            "on [CLS]/[SEP]; in every one of those heads [CLS]'s values are 1–25 % as long as a word's",
            always=True),
)


# --- the answer key: each scored question, its accepted answers, the measured value, the deciding margin ---


def questions(figures: dict) -> list[dict]:
    """4-2's questions on the tower's figures: each prediction's accepted layers and the margin deciding it."""
    return [question(qid, q["accepted"], None, q["margin"], q["unit"]) for qid, q in answer_key(figures).items()]

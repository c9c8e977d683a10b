"""`analyze(text)`: the eight heads' real attention maps as plain JSON types."""

import torch

from dragon.config import HEADS
from dragon.engine import default_dragon

TOP_K = 5


def rounded(t: torch.Tensor, decimals: int) -> list:
    """Nested lists of Python floats, rounded in one vectorised step (JSON stays short)."""
    return t.double().round(decimals=decimals).tolist()


def analyze(text: str, lang: str = "auto") -> dict:
    """Tokens, per-head attention (8 × T × T, sink column left out), top tokens per head, and more."""
    dragon = default_dragon()
    reading = dragon.read(text, lang)
    w = reading.weights[:, 1:, :]  # (h, T, T + 1): visible query rows
    visible = w[:, :, 1:]  # (h, T, T): sink column dropped
    received = visible.sum(dim=1)  # (h, T): attention each token receives, summed over queries
    speaks = 1.0 - w[:, :, 0].mean(dim=1)  # (h,): share of attention not parked on the sink
    strength = reading.head_sizes  # (h,): size of each head's part of the fused output
    tokens = reading.tokens
    top = {}
    for h, head in enumerate(HEADS):
        order = received[h].argsort(descending=True, stable=True)[:TOP_K].tolist()
        top[head] = [tokens[i] for i in order]
    return {
        "tokens": tokens,
        "lang": reading.analysis.lang,
        "heads": list(HEADS),
        "attention": rounded(visible, 5),
        "sink": rounded(w[:, :, 0], 5),
        "received": dict(zip(HEADS, rounded(received, 4), strict=True)),
        "top": top,
        "speaks": {head: round(float(speaks[h]), 4) for h, head in enumerate(HEADS)},
        "strength": {head: round(float(strength[h]), 4) for h, head in enumerate(HEADS)},
        "truncated": reading.analysis.truncated,
        "max_tokens": dragon.config.max_tokens,
        "device": str(dragon.device),
    }

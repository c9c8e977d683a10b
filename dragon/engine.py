"""The dragon: text → embedding → the compiled multi-head attention → maps, per-head parts, fused output."""

import functools
from dataclasses import dataclass

import torch

from dragon.attention import AttentionResult, MultiHeadAttention
from dragon.config import HEADS, DragonConfig
from dragon.features import embed
from dragon.heads import build_dragon_attention
from dragon.runtime.device import interactive_device
from dragon.text.analyser import MAX_CHARS, Analysis, analyse

# readings kept (up to ≈100 KB each): every level's text in both languages (44), a class's own sandbox texts (40) and
# a teacher's pack (12 levels, 24 texts) fit; the least recently read is dropped first
READS_KEPT = 128
HEADS_ALIKE = 1e-6  # the largest difference between two heads' attention weights that still counts as none (float32)

@dataclass(frozen=True)
class Reading:
    """Everything the dragon computes for one text with all gates open."""

    analysis: Analysis
    x: torch.Tensor  # (T + 1, d) embedding, sink first
    weights: torch.Tensor  # (h, T + 1, T + 1) attention, sink included
    parts: torch.Tensor  # (h, T, d) each head's contribution to fused, visible query rows only

    @property
    def tokens(self) -> list[str]:
        return [t.text for t in self.analysis.tokens]

    @functools.cached_property
    def head_sizes(self) -> torch.Tensor:
        """(h,) the norm of each head's part of the fused output: how much each head has to say here."""
        return self.parts.flatten(1).norm(dim=1)

    @functools.cached_property
    def heads_alike(self) -> bool:
        """Whether all eight heads attend exactly alike here (a text of emoji or numbers alone, say, or one word):
        nothing in it sets one head apart from another, so their eight maps are one and the same."""
        return bool((self.weights - self.weights[:1]).abs().max() <= HEADS_ALIKE)

    def fused(self, gates: torch.Tensor) -> torch.Tensor:
        """(T, d) fused output for gates (h,): exactly linear in the gates (no bias), so Σ g_h · part_h."""
        return torch.einsum("h,htd->td", gates.to(self.parts), self.parts)


class Dragon:
    def __init__(self, config: DragonConfig = DragonConfig(), device: torch.device | None = None):
        self.config = config
        self.device = device or interactive_device()
        self.attention: MultiHeadAttention = build_dragon_attention(config).to(self.device)
        self._cached_read = functools.lru_cache(maxsize=READS_KEPT)(self._read)

    def read(self, text: str, lang: str = "auto") -> Reading:
        """The dragon's reading of a text, cached (keyed on no more of the text than is ever read)."""
        if not isinstance(text, str) or not isinstance(lang, str):
            raise ValueError("text and lang must be strings")
        if len(text) > MAX_CHARS:
            text = text[: MAX_CHARS + 1]  # still longer than the cap, so still reported as cut
        return self._cached_read(text, lang)

    def forward(self, x: torch.Tensor, gates: torch.Tensor | None = None, residual: bool = True) -> AttentionResult:
        return self.attention(x.to(self.device), gates, residual=residual)

    def _read(self, text: str, lang: str = "auto") -> Reading:
        analysis = analyse(text, lang, self.config.max_tokens)
        x = embed(analysis.tokens, self.config.d_model, self.config.seed).to(self.device)
        with torch.no_grad():
            res = self.attention(x)
            parts = torch.stack([self._head_part(res.weights, x, h) for h in range(len(HEADS))])
        return Reading(analysis, x.cpu(), res.weights.cpu(), parts[:, 1:].cpu())

    def _head_part(self, weights: torch.Tensor, x: torch.Tensor, h: int) -> torch.Tensor:
        """Head h's output through its slice of W^O: (T + 1, d)."""
        d, dh = self.config.d_model, self.config.d_head
        w_in, w_o = self.attention.in_proj.weight, self.attention.out_proj.weight
        v = x @ w_in[2 * d + h * dh : 2 * d + (h + 1) * dh].T  # (T + 1, d_head)
        return (weights[h] @ v) @ w_o[:, h * dh : (h + 1) * dh].T  # (T + 1, d)


@functools.cache
def default_dragon() -> Dragon:
    """The one shared dragon: its weights are constants, so sharing it shares no player state."""
    return Dragon()

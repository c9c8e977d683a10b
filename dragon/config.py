"""The dragon's shape: one config dataclass, validated."""

from dataclasses import dataclass

HEADS: tuple[str, ...] = (
    "grammar",
    "semantics",
    "emotion",
    "logic",
    "time",
    "space",
    "tone",
    "context",
)


@dataclass(frozen=True)
class DragonConfig:
    d_model: int = 128  # width of every token vector (embedding, attention output)
    n_heads: int = 8  # one head per specialist in HEADS
    max_tokens: int = 64  # visible tokens per text; longer texts are cut (the sink is extra)
    coldness: float = 6.0  # softmax sharpness: score gap of 1 means e^coldness more attention
    layer_norm: bool = False  # optional LayerNorm after the residual
    seed: int = 5  # seeds the value / output projections and the word codes

    def __post_init__(self) -> None:
        if self.d_model % self.n_heads != 0:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

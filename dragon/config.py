"""The dragon's shape: one config dataclass, validated."""

from dataclasses import dataclass

LANGS = ("zh", "en")  # the game's languages: every text, story and string has both

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


# Each head's name (中文, English) and colour, fixed everywhere as DESIGN.md lists them (UI, badge, API docs).
HEAD_NAMES: dict[str, tuple[str, str]] = {
    "grammar": ("语法头", "Grammar"),
    "semantics": ("语义头", "Semantics"),
    "emotion": ("情感头", "Emotion"),
    "logic": ("逻辑头", "Logic"),
    "time": ("时序头", "Time"),
    "space": ("空间头", "Space"),
    "tone": ("语调头", "Tone"),
    "context": ("语境头", "Context"),
}
HEAD_COLORS: dict[str, str] = {
    "grammar": "#1f4e9c", "semantics": "#d4a017", "emotion": "#e8609e", "logic": "#8e9aa6",
    "time": "#7b3fbf", "space": "#2e9e4f", "tone": "#f28c28", "context": "#17a2b8",
}


@dataclass(frozen=True)
class DragonConfig:
    d_model: int = 128  # width of every token vector (embedding, attention output)
    n_heads: int = 8  # one head per specialist in HEADS
    max_tokens: int = 128  # visible tokens per text (analyser.MAX_TOKENS); longer texts are cut (the sink is extra)
    coldness: float = 6.0  # softmax sharpness: score gap of 1 means e^coldness more attention
    layer_norm: bool = False  # optional LayerNorm after the residual
    seed: int = 5  # seeds the value / output projections and the word codes

    def __post_init__(self) -> None:
        if self.d_model % self.n_heads != 0:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

"""多头龙 · The Multi-Head Dragon: a real multi-head attention with eight specialist heads."""

from .analyze import analyze
from .config import HEADS, DragonConfig
from .engine import Dragon, default_dragon

__all__ = ["HEADS", "Dragon", "DragonConfig", "analyze", "default_dragon"]

"""多头龙 · The Multi-Head Dragon: a real multi-head attention with eight specialist heads."""

from dragon.analyze import analyze
from dragon.config import HEADS, DragonConfig
from dragon.engine import Dragon, default_dragon

__all__ = ["HEADS", "Dragon", "DragonConfig", "analyze", "default_dragon"]

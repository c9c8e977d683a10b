"""The public API behind the app's endpoints: levels(), play(), hint() as plain JSON (no Gradio)."""

from .config import HEADS
from .engine import Reading, default_dragon
from .levels import LANGS, Level, get_level, load_levels
from .scoring import as_gates, score, stars
from .scoring import hint as gradient_hint

SILENT = 0.05  # a head whose part of the fused output is under 5 % of the loudest head's "has nothing to say"


def check_lang(lang: str) -> str:
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {', '.join(LANGS)}, not {lang!r}")
    return lang


def slider_level(level_id: str) -> Level:
    level = get_level(level_id)
    if not level.sliders:
        raise ValueError(f"level {level_id} is a {level.kind} level, not a slider level")
    return level


def level_reading(level: Level, lang: str) -> Reading:
    return default_dragon().read(level.text[check_lang(lang)], lang)


def silent_heads(reading: Reading) -> list[str]:
    """Heads whose contribution is ~0 for this text: their sliders barely matter here."""
    size = reading.head_sizes  # (h,)
    return [h for h, s in zip(HEADS, size.tolist(), strict=True) if s < SILENT * float(size.max())]


def levels() -> list[dict]:
    """Every level, in play order."""
    return [
        {
            "id": lv.id,
            "chapter": lv.chapter,
            "chapter_title": chapter.title,
            "kind": lv.kind,
            "title": lv.title,
            "sliders": lv.sliders,
            "show": lv.show if lv.sliders else None,
        }
        for chapter in load_levels()
        for lv in chapter.levels
    ]


def play(level_id: str, gates: list[float], lang: str = "zh", hints_used: int = 0) -> dict:
    """Score the gates on a slider level: score 0–100, stars 0–3, and which heads are silent there."""
    level = slider_level(level_id)
    g = as_gates(gates)
    reading = level_reading(level, lang)
    s = score(reading, g, level.target)
    return {
        "level": level.id,
        "lang": lang,
        "score": round(s, 2),
        "stars": stars(s, hints_used),
        "gates": [round(float(v), 4) for v in g],
        "silent_heads": silent_heads(reading),
    }


def hint(level_id: str, gates: list[float], lang: str = "zh") -> dict:
    """The autograd gradient's advice: which head to move, which way, and a better gate vector."""
    level = slider_level(level_id)
    h = gradient_hint(level_reading(level, lang), gates, level.target)
    return {
        "level": level.id,
        "head": h.head,
        "direction": h.direction,
        "gates": h.gates,
        "score": round(h.score, 2),
        "score_after": round(h.score_after, 2),
    }

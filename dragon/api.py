"""The public API behind the app's endpoints: levels(), play(), hint(), explain() as plain JSON (no Gradio)."""

from .claims import measure, silent_heads
from .config import HEADS
from .engine import Reading, default_dragon
from .levels import LANGS, Level, get_level, load_levels
from .scoring import as_gates, score, stars
from .scoring import hint as gradient_hint


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
    s = score(reading, g, level.target_for(lang))
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
    h = gradient_hint(level_reading(level, lang), gates, level.target_for(lang))
    return {
        "level": level.id,
        "head": h.head,
        "direction": h.direction,
        "gates": h.gates,
        "score": round(h.score, 2),
        "score_after": round(h.score_after, 2),
        "done": h.done,
    }


def explain(level_id: str, lang: str = "zh") -> dict:
    """A slider level's answer in one language: its text, target gates, why, and each claim of the narration
    with the real attention every claimed word receives: its share of that head's attention to words, or,
    for a claim `from` a word, its share of that word's own row."""
    level = slider_level(level_id)
    reading = level_reading(level, lang)
    return {
        "level": level.id,
        "lang": lang,
        "text": level.text[lang],
        "heads": list(HEADS),
        "target": list(level.target_for(lang)),
        "why": level.why[lang],
        "claims": [
            {
                "head": c["head"],
                "from": c["from"],
                "words": [w["word"] for w in c["words"]],
                "silent": c["silent"],
                "attention": {w["word"]: w["attention"] for w in c["words"]},
                "loudness": c["loudness"],
            }
            for c in measure(reading, level.claims_for(lang))
        ],
        "silent_heads": silent_heads(reading),
    }

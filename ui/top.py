"""The page's top: header with XP, level picker, language and projector switches, notice, story and tokens."""

from dragon import api
from dragon.levels import Level

from .draw import esc, notice_html, story_html, tokens_html
from .text import t
from .views import header_html, level_options


def options_html(level_id: str, progress: dict, lang: str) -> str:
    """The level picker's <option>s, grouped by chapter; locked levels cannot be picked."""
    groups = []
    for title, items in level_options(progress, lang, level_id):
        opts = "".join(
            f'<option value="{esc(i)}"{" selected" if i == level_id else ""}{"" if ok else " disabled"}>{esc(label)}</option>'
            for i, label, ok in items
        )
        groups.append(f'<optgroup label="{esc(title)}">{opts}</optgroup>')
    return "".join(groups)


def top_props(level: Level, lang: str, progress: dict, notice: str = "") -> dict:
    """Everything the top shows for this level and player."""
    reading = api.level_reading(level, lang)
    return {
        "level": level.id,
        "lang": lang,
        "header": header_html(lang, progress),
        "options": options_html(level.id, progress, lang),
        "notice": notice_html(notice),
        "story": story_html(level, lang) + tokens_html(reading.tokens, lang, reading.analysis.truncated),
        "level_label": esc(t("level", lang)),
        "language_label": esc(t("language", lang)),
        "projector_label": esc(t("projector", lang)),
    }


def progress_props(level: Level, lang: str, progress: dict) -> dict:
    """What of the top changes when the player's progress does: XP and the stars in the level picker."""
    return {"header": header_html(lang, progress), "options": options_html(level.id, progress, lang)}

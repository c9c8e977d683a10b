"""The page's top: header with XP, level picker, language and projector switches, notice, story and tokens."""

from dragon import api
from dragon.engine import Reading
from dragon.levels.loader import Level
from ui.rooms.slider_views import header_html, level_options
from ui.session import SANDBOX, pack_of
from ui.strings import t
from ui.widgets.draw import esc, notice_html, star_text, story_html, tokens_html


def options_html(level_id: str, progress: dict, lang: str, pack: tuple[Level, ...] = ()) -> str:
    """The level picker's <option>s, grouped by chapter; locked levels cannot be picked. Last: the sandbox and the
    teacher's levels this player opened by a share link."""
    groups = []
    for title, items in level_options(progress, lang, level_id):
        opts = "".join(
            f'<option value="{esc(i)}"{" selected" if i == level_id else ""}{"" if ok else " disabled"}>{esc(label)}</option>'
            for i, label, ok in items
        )
        groups.append(f'<optgroup label="{esc(title)}">{opts}</optgroup>')
    own = [(SANDBOX, t("sb_title", lang))] + [
        (lv.id, f"{lv.title[lang]} {star_text(progress['stars'].get(lv.id, 0))}") for lv in pack
    ]
    opts = "".join(f'<option value="{esc(i)}"{" selected" if i == level_id else ""}>{esc(label)}</option>' for i, label in own)
    groups.append(f'<optgroup label="{esc(t("sb_group", lang))}">{opts}</optgroup>')
    return "".join(groups)


def link_of(session: dict) -> dict:
    """The link's parameters for what is on screen (the language is set apart): a reload comes back to it."""
    link = {"level": session["level"]}
    if session.get("custom") and session["level"] != SANDBOX:
        link["custom"] = session["custom"]
    if session.get("exam"):
        link["exam"] = "1"
    if session["level"] == SANDBOX and session.get("text"):
        link["text"] = session["text"]
    return link


def level_tokens(level: Level, lang: str) -> list[str]:
    """The words the chips under the story show: the dragon's cut of the text, or 5-1's own (我 / 爱 / 你, the
    words its tables and its swap are made of)."""
    if level.kind == "positions":
        return api.positions(level.text[lang], lang)["tokens_a"]
    return api.level_reading(level, lang).tokens


def top_props(level: Level, lang: str, progress: dict, notice: str = "", session: dict | None = None) -> dict:
    """Everything the top shows for this level and player."""
    reading = api.level_reading(level, lang)
    session = session or {"level": level.id}
    return {
        "level": level.id,
        "lang": lang,
        "header": header_html(lang, progress),
        "options": options_html(level.id, progress, lang, pack_of(session.get("custom"))),
        "notice": notice_html(notice),
        "story": story_html(level, lang) + tokens_html(level_tokens(level, lang), lang, reading.analysis.truncated),
        "level_label": esc(t("level", lang)),
        "language_label": esc(t("language", lang)),
        "projector_label": esc(t("projector", lang)),
        "link": link_of({**session, "level": level.id}),
    }


def sandbox_top(lang: str, progress: dict, session: dict, reading: Reading | None, notice: str = "",
                form: str = "") -> dict:
    """The top in the sandbox: its title and what to do, the text box (`form`), and the tokens of the text as the
    dragon cut them."""
    story = (
        f'<div class="story"><div class="level-title">{esc(t("sb_title", lang))}</div>'
        f"<p>{esc(t('sb_story', lang))}</p></div>{form}"
    )
    if reading is not None:
        story += tokens_html(reading.tokens, lang, reading.analysis.truncated)
    return {
        "level": SANDBOX, "lang": lang, "header": header_html(lang, progress),
        "options": options_html(SANDBOX, progress, lang, pack_of(session.get("custom"))),
        "notice": notice_html(notice), "story": story, "level_label": esc(t("level", lang)),
        "language_label": esc(t("language", lang)), "projector_label": esc(t("projector", lang)),
        "link": link_of({**session, "level": SANDBOX}),
    }


def progress_props(level: Level, lang: str, progress: dict, session: dict | None = None) -> dict:
    """What of the top changes when the player's progress does: XP and the stars in the level picker."""
    pack = pack_of((session or {}).get("custom"))
    return {"header": header_html(lang, progress), "options": options_html(level.id, progress, lang, pack)}

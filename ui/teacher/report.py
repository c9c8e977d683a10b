"""A short report of a played slider level: text, target, the player's gates, score, stars and date (HTML, text)."""

import datetime

from dragon.config import HEADS
from dragon.levels.level import Level
from ui.strings import HEAD_COLORS, head_label, t
from ui.teacher.exports import COLON, header_html, in_lang, level_heading, level_target, page_shell
from ui.widgets.draw import esc, shown_score, star_text


def when_text(when: datetime.datetime) -> str:
    """ISO date and time with the time zone (a naive time is taken as this machine's local time)."""
    aware = when if when.tzinfo is not None else when.astimezone()
    return aware.isoformat(timespec="seconds")


def stars_text(stars: int, lang: str) -> str:
    """'★★☆ 2 / 3 stars': the stars and their count in words."""
    return f"{star_text(stars)} {t('ws_r_stars', lang, n=stars)}"


def rows(level: Level, lang: str, gates: list[float]) -> list[tuple[str, float, float]]:
    """(head label, target, the player's gate) per head, in HEADS order."""
    target = level_target(level, lang)
    return [(head_label(i, lang), float(target[i]), float(gates[i])) for i in range(len(HEADS))]


def check(gates: list[float], stars: int) -> None:
    if len(gates) != len(HEADS):
        raise ValueError(f"a report needs {len(HEADS)} gates, one per head, not {len(gates)}")
    if not 0 <= stars <= 3:
        raise ValueError(f"stars must be 0 to 3, not {stars}")


def report_html(level: Level, lang: str, gates: list[float], score: float, stars: int, when: datetime.datetime) -> str:
    """A standalone print-styled HTML report of a played slider level: the title, the text, the target and the
    player's gates side by side per head, the score (one decimal), the stars and the date and time (ISO)."""
    check(gates, stars)
    body = []
    for i, (label, goal, mine) in enumerate(rows(level, lang, gates)):
        colour = HEAD_COLORS[HEADS[i]]
        body.append(
            f'<tr data-head="{HEADS[i]}"><th><span class="swatch" style="background:{colour}"></span>{esc(label)}</th>'
            f'<td class="num goal">{goal:.2f}</td><td class="num mine">{mine:.2f}</td>'
            f'<td class="num">{mine - goal:+.2f}</td>'
            f'<td><span class="bar goal" style="width:{80 * goal:.1f}pt"></span><br>'
            f'<span class="bar mine" style="width:{80 * mine:.1f}pt;background:{colour}"></span></td></tr>'
        )
    head = "".join(f"<th>{esc(t(k, lang))}</th>" for k in ("ws_head", "ws_r_target", "ws_r_yours", "ws_r_diff"))
    html = (
        f"<header>{header_html(level, lang, t('ws_report', lang))}</header>"
        f'<p class="text">{esc(in_lang(level.text, lang))}</p>'
        f'<p class="result"><b>{esc(t("score", lang) + COLON[lang])}</b><span class="score">{shown_score(score):.1f}</span> · '
        f'<b>{esc(t("stars_label", lang) + COLON[lang])}</b><span class="stars">{esc(stars_text(stars, lang))}</span></p>'
        f'<p class="when"><b>{esc(t("ws_r_date", lang) + COLON[lang])}</b><time>{esc(when_text(when))}</time></p>'
        f'<table class="gates"><thead><tr>{head}<th></th></tr></thead><tbody>{"".join(body)}</tbody></table>'
        f'<p class="note">{esc(t("ws_r_bars", lang))}</p>'
    )
    return page_shell(f"{level_heading(level, lang)[1]} · {t('ws_report', lang)}", lang, html, "report")


def report_text(level: Level, lang: str, gates: list[float], score: float, stars: int, when: datetime.datetime) -> str:
    """The same report as plain text, one fact a line."""
    check(gates, stars)
    lines = [
        f"{t('app_title', lang)} · {t('ws_report', lang)}",
        level_heading(level, lang)[1] + (f" — {in_lang(level.source, lang)}" if level.source else ""),
        in_lang(level.text, lang),
        f"{t('score', lang)}{COLON[lang]}{shown_score(score):.1f}",
        f"{t('stars_label', lang)}{COLON[lang]}{stars_text(stars, lang)}",
        f"{t('ws_r_date', lang)}{COLON[lang]}{when_text(when)}",
        f"{t('ws_head', lang)} | {t('ws_r_target', lang)} | {t('ws_r_yours', lang)}",
        *(f"{label} | {goal:.2f} | {mine:.2f}" for label, goal, mine in rows(level, lang, gates)),
    ]
    return "\n".join(lines) + "\n"

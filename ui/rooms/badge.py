"""5-2 the badge: the player's eight heads glowing by their own mastery, as SVG and PNG, with why each glows."""

import base64

from dragon import game
from dragon.config import HEADS
from dragon.lessons import badge as badge_lesson
from dragon.levels.loader import Level, load_levels
from ui.rooms import lab
from ui.rooms.lab import Attempt, Outcome
from ui.strings import head_label, t
from ui.widgets.draw import esc, star_text


def data_uri(mime: str, raw: bytes) -> str:
    return f"data:{mime};base64," + base64.b64encode(raw).decode("ascii")


def badge_rule(lang: str) -> str:
    p1, p2, p3 = game.BADGE_SHARES
    return lab.star_rule(lang, "rule_badge", p1=f"{p1:.0%}", p2=f"{p2:.0%}", p3=f"{p3:.0%}",
                         **{f"s{i + 1}": star_text(game.bucket(e, game.BADGE_SHARES)) for i, e in enumerate(game.BADGE_SHARES)})


def badge_share(progress: dict, lang: str) -> str:
    got, most = game.badge_results(progress)
    line = t("b_share", lang, got=got, most=most, p=f"{got / most:.0%}" if most else "0%",
             stars=star_text(game.badge_stars(progress)))
    return lab.note(line, "badge-share", stars=game.badge_stars(progress))


def badge_why(progress: dict, lang: str) -> str:
    """Why each head glows as it does: its mastery, and the levels that exercise it with the stars held there; the
    levels that train no single head (1-1, the labs) are named: they count in this level's stars, not in a light."""
    mastery, levels = badge_lesson.mastery(progress, lang), badge_lesson.head_levels(lang)
    lit = {lid for ids in levels.values() for lid in ids}
    unlit = [lv.id for c in load_levels() if c.number in game.BADGE_CHAPTERS for lv in c.levels if lv.id not in lit]
    rows = []
    for i, head in enumerate(HEADS):
        held = " · ".join(f"{lid} {star_text(int(progress['stars'].get(lid, 0)))}" for lid in levels[head])
        rows.append(f"<tr><th>{esc(head_label(i, lang))}</th><td>{mastery[head]:.0%}</td><td>{esc(held or '—')}</td></tr>")
    head = f"<tr><th>{esc(t('b_why_head', lang))}</th><th>{esc(t('b_why_light', lang))}</th><th>{esc(t('b_why_levels', lang))}</th></tr>"
    return (
        f'<div class="table-wrap"><table class="badge-why"><caption>{esc(t("b_why_title", lang))}</caption>'
        f"<thead>{head}</thead><tbody>{''.join(rows)}</tbody></table></div>" + lab.note(t("b_why_labs", lang, ids=", ".join(unlit)), "badge-unlit")
    )


def download(anchor_id: str, filename: str, mime: str, raw: bytes, label: str) -> str:
    return f'<a class="btn primary" id="{anchor_id}" download="{filename}" href="{data_uri(mime, raw)}">{esc(label)}</a>'


def badge_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    name = attempt.get("name", "")
    ask = lab.asks(lab.text_field("name", t("b_name", lang), name, badge_lesson.MAX_NAME))
    result = note
    if attempt.get("made"):
        svg = badge_lesson.badge_svg(progress, name, lang)
        png = badge_lesson.badge_png(progress, name, lang)
        bright = sum(v >= 0.5 for v in badge_lesson.mastery(progress, lang).values())
        links = lab.buttons(
            download("mhd-badge-svg", "dragon-badge.svg", "image/svg+xml", svg.encode("utf-8"), t("b_svg", lang)),
            download("mhd-badge-png", "dragon-badge.png", "image/png", png, t("b_png", lang)),
        )
        result += (
            lab.verdict(t("b_made", lang, n=bright)) + f'<div class="badge-out"><div class="badge-card"><div class="badge-svg">{svg}</div>{links}</div>'
            + f'<div class="badge-reasons">{badge_why(progress, lang)}</div></div>'  # beside the badge where it fits
            + lab.end(level, lang, progress, int(attempt.get("stars", 0)))
        )
    return lab.room(
        "badge", badge_rule(lang), badge_share(progress, lang), ask,
        lab.checking(level, lang, progress, attempt, check=lab.button("badge", t("b_go", lang)), result=result,
                     capped=False),
    )


def make_badge(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome:
    raw = data.get("name", "")
    if not isinstance(raw, str) or len(raw) > 200:
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    name = badge_lesson.clean_name(raw)
    got, most = game.badge_results(progress)
    earned = game.badge_stars(progress)  # the finale's stars are the player's results, not the click
    progress = game.record(progress, level.id, 100.0 * got / most if most else 0.0, earned)
    return progress, {**attempt, "name": name, "made": True, "stars": earned}, ""

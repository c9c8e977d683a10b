"""Chapter 5's rooms: 5-1 positions (predict, then the real numbers) and 5-2 the badge.

What 5-1 says about its numbers is dragon/lessons/positions.py's findings, chosen on the measured values. Every room
is built from ui/rooms/lab.py's blocks and listed in ui/rooms/registry.py."""

import base64

from dragon import api, game
from dragon.config import HEADS
from dragon.lessons import badge as badge_lesson
from dragon.lessons import positions as positions_lesson
from dragon.levels.loader import Level, load_levels
from ui.rooms import lab
from ui.rooms.findings_text import positions_fill, said
from ui.rooms.lab import Attempt, Outcome
from ui.strings import head_label, t
from ui.widgets.draw import esc, star_text

# --- 5-1 positions -----------------------------------------------------------------------------------------------


def numbers_table(tokens: list[str], rows: list[list[float]]) -> str:
    body = "".join(
        f"<tr><th>{esc(w)}</th>{''.join(f'<td>{v:.4f}</td>' for v in row)}</tr>" for w, row in zip(tokens, rows, strict=True)
    )
    return f'<div class="table-wrap"><table class="pos-table"><tbody>{body}</tbody></table></div>'


def positions_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    p = api.positions(level.text[lang], lang)
    a, b = p["text_a"], p["text_b"]
    given = attempt.get("answers", {})
    choices = [("same", t("pos_same", lang)), ("differ", t("pos_differ", lang))]
    ask = lab.asks(
        lab.select("free", t("pos_q_free", lang, a=a, b=b), choices, given.get("free"), lang),
        lab.select("pos", t("pos_q_pos", lang), choices, given.get("pos"), lang),
    )
    result = note
    if "points" in attempt:  # the predictions checked: the numbers, and the question read off them
        truth = positions_lesson.answer_key(p)
        marks = " · ".join(f"{t('pos_k_' + k, lang)} {lab.mark(given.get(k) == v, lang)}" for k, v in truth.items())
        result += lab.verdict(t("pos_result", lang, p=attempt["points"], marks=marks))
        if "stars" in attempt:
            right = positions_lesson.reading_answer(p)
            result += lab.verdict(t("pos_read_result", lang, mine=t(f"pos_read{attempt['read']}", lang),
                                    ok=lab.mark(attempt["read"] == right, lang),
                                    d=f"{p['max_diff_unpermuted_no_positions']:.1e}"))  # fmt: skip
            result += lab.end(level, lang, progress, int(attempt["stars"]))
        else:
            reads = [(str(i), t(f"pos_read{i}", lang)) for i in range(len(positions_lesson.READ_EDGES) + 1)]
            result += lab.question(t("pos_read_q", lang)) + lab.asks(lab.select("read", t("pos_read_label", lang), reads, None, lang))
            result += lab.check_row(lab.button("check", t("check", lang)))
        result += positions_numbers(p, lang, read="stars" in attempt)
    check = "" if "points" in attempt else lab.button("predict", t("check", lang))
    return lab.room(
        "positions", lab.note(t("pos_setup", lang, a=a, b=b, n=len(p["position_features"]))),
        lab.star_rule(lang, "rule_read", n=2), ask, lab.checking(level, lang, progress, attempt, check=check, result=result),
    )  # fmt: skip


def positions_numbers(p: dict, lang: str, read: bool = True) -> str:
    """The four tables of output numbers; once the reading is checked (`read`), the findings that say what they
    measure too (before it, a sentence naming the largest difference would answer the reading question)."""
    m = positions_lesson.measured(p)
    lines = said(positions_lesson.FINDINGS, m, lang, skip=("pos_setup",), **positions_fill(m, lang)) if read else []
    tables = [
        (t("pos_t_free", lang, text=p["text_a"]), p["tokens_a"], p["preview_a"]),
        (t("pos_t_free", lang, text=p["text_b"]), p["tokens_b"], p["preview_b"]),
        (t("pos_t_with", lang, text=p["text_a"]), p["tokens_a"], p["preview_with_positions_a"]),
        (t("pos_t_with", lang, text=p["text_b"]), p["tokens_b"], p["preview_with_positions_b"]),
    ]
    shown = "".join(f"<div>{lab.caption(title)}{numbers_table(tokens, rows)}</div>" for title, tokens, rows in tables)
    return (
        (lab.lines(lines, "lines pos-lines") if lines else "") + f'<div class="pos-tables">{shown}</div>'
        + (lab.question(t("pos_next", lang), "next-question") if read else "")
    )  # fmt: skip


PREDICTIONS = ("free", "pos")  # 5-1: without positions, and with them: the same or different?


def predict_positions(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome:
    """The two predictions, checked: points, then the numbers and the question read off them."""
    if "points" in attempt:
        return progress, attempt, ""
    given = {k: data.get(k) for k in PREDICTIONS}
    if any(v not in ("same", "differ") for v in given.values()):
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    truth = positions_lesson.answer_key(api.positions(level.text[lang], lang))
    points = sum(given[k] == v for k, v in truth.items())
    progress, cap = lab.answers_shown(progress, level.id)
    return progress, {**attempt, "answers": given, "points": points, "cap": cap}, ""


def read_positions(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The question read off the numbers passes the level; the predictions add the rest of the stars."""
    if "points" not in attempt or "stars" in attempt:
        return None
    try:
        read = int(str(data.get("read")))
    except ValueError:
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    if not 0 <= read <= len(positions_lesson.READ_EDGES):
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    ok = read == positions_lesson.reading_answer(api.positions(level.text[lang], lang))
    return lab.read_off(progress, level, attempt, read, ok, len(PREDICTIONS))


# --- 5-2 the badge ----------------------------------------------------------------------------------------------


def data_uri(mime: str, raw: bytes) -> str:
    return f"data:{mime};base64," + base64.b64encode(raw).decode("ascii")


def badge_rule(lang: str) -> str:
    p1, p2, p3 = game.BADGE_SHARES
    return lab.star_rule(lang, "rule_badge", p1=f"{p1:.0%}", p2=f"{p2:.0%}", p3=f"{p3:.0%}",
                         **{f"s{i + 1}": star_text(game.bucket(e, game.BADGE_SHARES)) for i, e in enumerate(game.BADGE_SHARES)})  # fmt: skip


def badge_share(progress: dict, lang: str) -> str:
    got, most = game.badge_results(progress)
    line = t("b_share", lang, got=got, most=most, p=f"{got / most:.0%}" if most else "0%",
             stars=star_text(game.badge_stars(progress)))  # fmt: skip
    return lab.note(line, "badge-share", stars=game.badge_stars(progress))


def only_note(head: str, level_id: str, lang: str) -> str:
    """" (in the Chinese text)" after a level that trains this head only in the other language's text (2-9's Space
    on an English page): what this page's text of the level does not show."""
    only = badge_lesson.only_in().get((head, level_id))
    return t("b_why_only", lang, text=t(f"lang_{only}", lang)) if only and only != lang else ""


def badge_why(progress: dict, lang: str) -> str:
    """Why each head glows as it does: its mastery, and the levels that exercise it with the stars held there; the
    levels that train no single head (1-1, the labs) are named: they count in this level's stars, not in a light."""
    mastery, levels = badge_lesson.mastery(progress), badge_lesson.head_levels()
    lit = {lid for ids in levels.values() for lid in ids}
    unlit = [lv.id for c in load_levels() if c.number in game.BADGE_CHAPTERS for lv in c.levels if lv.id not in lit]
    rows = []
    for i, head in enumerate(HEADS):
        held = " · ".join(f"{lid}{only_note(head, lid, lang)} {star_text(int(progress['stars'].get(lid, 0)))}"
                          for lid in levels[head])  # fmt: skip
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
        bright = sum(v >= 0.5 for v in badge_lesson.mastery(progress).values())
        links = lab.buttons(
            download("mhd-badge-svg", "dragon-badge.svg", "image/svg+xml", svg.encode("utf-8"), t("b_svg", lang)),
            download("mhd-badge-png", "dragon-badge.png", "image/png", png, t("b_png", lang)),
        )
        result += (
            lab.verdict(t("b_made", lang, n=bright)) + f'<div class="badge-out"><div class="badge-card"><div class="badge-svg">{svg}</div>{links}</div>'
            + f'<div class="badge-reasons">{badge_why(progress, lang)}</div></div>'  # beside the badge where it fits
            + lab.end(level, lang, progress, int(attempt.get("stars", 0)))
        )  # fmt: skip
    return lab.room(
        "badge", badge_rule(lang), badge_share(progress, lang), ask,
        lab.checking(level, lang, progress, attempt, check=lab.button("badge", t("b_go", lang)), result=result,
                     capped=False),
    )  # fmt: skip


def make_badge(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome:
    raw = data.get("name", "")
    if not isinstance(raw, str) or len(raw) > 200:
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    name = badge_lesson.clean_name(raw)
    got, most = game.badge_results(progress)
    earned = game.badge_stars(progress)  # the finale's stars are the player's results, not the click
    progress = game.record(progress, level.id, 100.0 * got / most if most else 0.0, earned)
    return progress, {**attempt, "name": name, "made": True, "stars": earned}, ""

"""Chapter 5's labs in the lab panel: 5-1 positions (predict, then the real numbers) and 5-2 the badge."""

import base64

from dragon import api, game
from dragon.lessons import badge as badge_lesson
from dragon.levels import Level

from .chapter3 import Attempt, _button, _cap_note, _end, _record, _select, answer_cap, mark
from .chapter4 import points_rule, rule_html
from .draw import esc, notice_html, star_text
from .text import t

SAME = 1e-5  # outputs this close after un-permuting are the same vectors (float32 rounding is ~1e-7)


# --- 5-1 positions -----------------------------------------------------------------------------------------------


def positions_truth(p: dict) -> dict[str, str]:
    """'same' or 'differ', after putting the second text's rows back in the first text's order."""
    return {
        "free": "same" if p["max_diff_unpermuted_no_positions"] < SAME else "differ",
        "pos": "same" if p["diff_with_positions"] < SAME else "differ",
    }


def _table(tokens: list[str], rows: list[list[float]]) -> str:
    body = "".join(
        f"<tr><th>{esc(w)}</th>{''.join(f'<td>{v:.4f}</td>' for v in row)}</tr>" for w, row in zip(tokens, rows, strict=True)
    )
    return f'<div class="table-wrap"><table class="pos-table"><tbody>{body}</tbody></table></div>'


def _positions_body(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    p = api.positions(level.text[lang], lang)
    a, b = p["text_a"], p["text_b"]
    given = attempt.get("answers", {})
    choices = [("same", t("pos_same", lang)), ("differ", t("pos_differ", lang))]
    ask = _select("free", t("pos_q_free", lang, a=a, b=b), choices, given.get("free"), lang) + _select(
        "pos", t("pos_q_pos", lang), choices, given.get("pos"), lang
    )
    done = "stars" in attempt
    result = note
    if done:
        truth = positions_truth(p)
        marks = " · ".join(f"{t('pos_k_' + k, lang)} {mark(given.get(k) == v, lang)}" for k, v in truth.items())
        result += f'<div class="result-head">{esc(t("pos_result", lang, p=attempt["points"], marks=marks))}</div>'
        result += _end(level, lang, progress, int(attempt["stars"])) + _positions_numbers(p, lang)
    check = "" if done else _button("predict", t("check", lang))
    return (
        f'<div class="lab-positions"><p class="note">{esc(t("pos_setup", lang, a=a, b=b, n=len(p["position_features"])))}</p>'
        f'{points_rule(lang, 2)}<div class="asks">{ask}</div><div class="answer-row">{check}</div>'
        f"{_cap_note(level, lang, progress, attempt)}"
        f'<div class="result-box" role="status">{result}</div></div>'
    )


def _positions_numbers(p: dict, lang: str) -> str:
    free = p["max_diff_unpermuted_no_positions"]
    lines = [
        t("pos_free", lang, d=f"{free:.1e}", inplace=f"{p['max_diff_in_place_no_positions']:.3f}"),
        t("pos_with", lang, d=f"{p['diff_with_positions']:.3f}"),
        t("pos_own", lang, d=f"{p['diff_dragon_as_built']:.3f}"),
    ]
    items = "".join(f"<li>{esc(x)}</li>" for x in lines)
    return (
        f'<ul class="lines pos-lines">{items}</ul><div class="pos-tables">'
        f'<div><div class="sub">{esc(t("pos_t_free", lang, text=p["text_a"]))}</div>{_table(p["tokens_a"], p["preview_a"])}</div>'
        f'<div><div class="sub">{esc(t("pos_t_free", lang, text=p["text_b"]))}</div>{_table(p["tokens_b"], p["preview_b"])}</div>'
        f'<div><div class="sub">{esc(t("pos_t_with", lang, text=p["text_a"]))}</div>'
        f'{_table(p["tokens_a"], p["preview_with_positions_a"])}</div>'
        f'<div><div class="sub">{esc(t("pos_t_with", lang, text=p["text_b"]))}</div>'
        f'{_table(p["tokens_b"], p["preview_with_positions_b"])}</div></div>'
        f'<p class="question next-question">{esc(t("pos_next", lang))}</p>'
    )


def predict_positions(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> tuple:
    if "stars" in attempt:
        return progress, attempt, ""
    given = {k: data.get(k) for k in ("free", "pos")}
    if any(v not in ("same", "differ") for v in given.values()):
        return progress, attempt, notice_html(t("lab_bad", lang))
    truth = positions_truth(api.positions(level.text[lang], lang))
    points = sum(given[k] == v for k, v in truth.items())
    earned = min(game.points_stars(points, 2), answer_cap(progress, level.id))
    progress = _record(progress, level, 50.0 * points, earned)
    return progress, {**attempt, "answers": given, "points": points, "stars": earned}, ""


# --- 5-2 the badge ----------------------------------------------------------------------------------------------


def data_uri(mime: str, raw: bytes) -> str:
    return f"data:{mime};base64," + base64.b64encode(raw).decode("ascii")


def badge_rule(lang: str) -> str:
    p1, p2, p3 = game.BADGE_SHARES
    return rule_html(lang, "rule_badge", p1=f"{p1:.0%}", p2=f"{p2:.0%}", p3=f"{p3:.0%}",
                     **{f"s{i + 1}": star_text(game.bucket(e, game.BADGE_SHARES)) for i, e in enumerate(game.BADGE_SHARES)})  # fmt: skip


def badge_share(progress: dict, lang: str) -> str:
    got, most = game.badge_results(progress)
    line = t("b_share", lang, got=got, most=most, p=f"{got / most:.0%}" if most else "0%",
             stars=star_text(game.badge_stars(progress)))  # fmt: skip
    return f'<p class="note badge-share" data-stars="{game.badge_stars(progress)}">{esc(line)}</p>'


def _badge_body(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    name = attempt.get("name", "")
    ask = (
        f'<label class="ask wide"><span>{esc(t("b_name", lang))}</span><input type="text" data-answer="name" '
        f'value="{esc(name)}" maxlength="{badge_lesson.MAX_NAME}"></label>'
    )
    result = note
    if attempt.get("made"):
        svg = badge_lesson.badge_svg(progress, name, lang)
        png = badge_lesson.badge_png(progress, name, lang)
        glow = badge_lesson.mastery(progress)
        bright = sum(v >= 0.5 for v in glow.values())
        result += (
            f'<div class="result-head">{esc(t("b_made", lang, n=bright))}</div>'
            f'<div class="badge-out"><div class="badge-svg">{svg}</div><div class="lab-buttons">'
            f'<a class="btn primary" id="mhd-badge-svg" download="dragon-badge.svg" href="{data_uri("image/svg+xml", svg.encode("utf-8"))}">'
            f"{esc(t('b_svg', lang))}</a>"
            f'<a class="btn primary" id="mhd-badge-png" download="dragon-badge.png" href="{data_uri("image/png", png)}">'
            f"{esc(t('b_png', lang))}</a></div></div>" + _end(level, lang, progress, int(attempt.get("stars", 0)))
        )
    return (
        f'<div class="lab-badge">{badge_rule(lang)}{badge_share(progress, lang)}<div class="asks">{ask}</div><div class="answer-row">{_button("badge", t("b_go", lang))}</div>'
        f'<div class="result-box" role="status">{result}</div></div>'
    )


def make_badge(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> tuple:
    raw = data.get("name", "")
    if not isinstance(raw, str) or len(raw) > 200:
        return progress, attempt, notice_html(t("lab_bad", lang))
    name = badge_lesson.clean_name(raw)
    got, most = game.badge_results(progress)
    earned = game.badge_stars(progress)  # the finale's stars are the player's results, not the click
    progress = game.record(progress, level.id, 100.0 * got / most if most else 0.0, earned)
    return progress, {**attempt, "name": name, "made": True, "stars": earned}, ""


BODIES = {"positions": _positions_body, "badge": _badge_body}

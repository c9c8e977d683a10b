"""5-1 positions: predict whether the same words in another order attend alike without and with positions, then
the real numbers (dragon/lessons/positions.py's findings, chosen on the measured values)."""

from dragon import api
from dragon.lessons import positions as positions_lesson
from dragon.levels.loader import Level
from ui.rooms import lab
from ui.rooms.findings_text import positions_fill, said
from ui.rooms.lab import Attempt, Outcome
from ui.strings import t
from ui.widgets.draw import esc


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
                                    d=f"{p['max_diff_unpermuted_no_positions']:.1e}"))
            result += lab.end(level, lang, progress, int(attempt["stars"]))
        else:
            reads = [(str(i), t(f"pos_read{i}", lang)) for i in range(len(positions_lesson.READ_EDGES) + 1)]
            result += lab.question(t("pos_read_q", lang)) + lab.asks(lab.select("read", t("pos_read_label", lang), reads, None, lang))
            result += lab.check_row(lab.button("check", t("check", lang)))
        result += positions_numbers(p, lang, read="stars" in attempt)
    check = "" if "points" in attempt else lab.button("predict", t("check", lang))
    return lab.room(
        "positions", lab.note(t("pos_setup", lang, a=a, b=b, n=len(p["position_features"]))),
        lab.read_rule(lang, len(PREDICTIONS)), ask, lab.checking(level, lang, progress, attempt, check=check, result=result),
    )


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
    )


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
    return progress, {**attempt, "answers": given, "points": points, "cap": cap, "out_of": len(PREDICTIONS)}, ""


def read_positions(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The question read off the numbers passes the level; the predictions add the rest of the stars."""
    answer = lambda: positions_lesson.reading_answer(api.positions(level.text[lang], lang))  # noqa: E731
    count = len(positions_lesson.READ_EDGES) + 1
    return lab.read_question(level, lang, progress, attempt, data, count, answer, len(PREDICTIONS))

"""3-4's facts quiz: how many heads real models have (GPT-3, BERT, GPT-2, Llama 3), checked against the facts table
(assets/lessons/facts.yaml) with what the lesson said beside the measured answer; it earns no stars."""

import math

from dragon import api
from dragon.levels.loader import Level
from ui.rooms import lab
from ui.rooms.lab import Attempt, Outcome
from ui.strings import t
from ui.widgets.draw import esc

QUIZ_MAX = 10**9  # an answer must be at least 0 and under this (every answer is far below it)


def paper_answered(level: Level, attempt: Attempt) -> bool:
    """The paper's BLEU table gives the quiz's BLEU question away: it is shown once that answer is checked."""
    asks = [q["id"] for q in api.facts()["quiz"] if q["id"] in level.quiz and q["ask"].get("field") == "bleu"]
    given = attempt.get("quiz", {})
    return all(isinstance(given.get(qid), dict) and "value" in given[qid] for qid in asks)


def quiz_line(qid: str, g: dict, lang: str) -> tuple[str, int]:
    """One checked answer of the quiz (right or wrong, and what the lesson said), and whether it was right."""
    if "bad" in g:
        why = t("q_range", lang, given=g["bad"], hi=lab.thousands(QUIZ_MAX)) if g.get("range") else t("q_bad", lang, given=g["bad"])
        return lab.refusal(why), 0
    r = api.facts_quiz(qid, g["value"])
    answer = lab.thousands(r["answer"])
    line = t("q_right", lang, answer=answer) if r["correct"] else t("q_wrong", lang, given=lab.thousands(r["given"]), answer=answer)
    line = f'<div class="q-result {"right" if r["correct"] else "wrong"}">{esc(line)}</div>'
    if r["model"] and r["lesson_says"] is not None:
        m, lesson = r["model"], r["model"]["lesson_says"]
        line += f'<div class="fact-check">{esc(t("q_fact", lang, name=m["name"], lesson_heads=lesson.get("heads", "?"), lesson_total=lab.thousands(lesson.get("total_heads", 0)), layers=m["layers"], heads=m["heads"], total=lab.thousands(m["total_heads"])))}</div>'
    return line, int(r["correct"])


def quiz_html(level: Level, lang: str, attempt: Attempt) -> str:
    facts = api.facts()
    questions = {q["id"]: q for q in facts["quiz"]}
    given = attempt.get("quiz", {})
    items, right = [], 0
    for qid in level.quiz:
        g = given.get(qid)
        line, ok = quiz_line(qid, g, lang) if isinstance(g, dict) else ("", 0)
        right += ok
        value = "" if not isinstance(g, dict) else str(g.get("value", g.get("bad", "")))
        items.append(lab.text_field(f"q:{qid}", questions[qid]["question"][lang], value, 20, wide=False, numeric=True) + line)
    answered = sum(isinstance(g, dict) and "value" in g for g in given.values())
    score = lab.verdict(t("q_score", lang, n=right, k=answered, m=len(level.quiz))) if answered else ""
    rows = "".join(
        f"<tr><td>{esc(m['name'])}</td><td>{m['layers']} × {m['heads']}"
        f"{esc(t('q_gqa', lang, kv=m['kv_heads'])) if m['kv_heads'] != m['heads'] else ''}</td>"
        f"<td>{m['d_model']} / {m['d_head']}</td><td>{lab.thousands(m['total_heads'])}"
        f"{' · ' + esc(t('q_lesson', lang, n=lab.thousands(m['lesson_says']['total_heads']))) if (m.get('lesson_says') or {}).get('total_heads') else ''}</td></tr>"
        for m in facts["models"]
    )
    table = (
        f'<details class="facts"><summary>{esc(t("q_table", lang))}</summary><div class="table-wrap"><table><thead><tr>'
        f"<th>{esc(t('q_model', lang))}</th><th>{esc(t('q_layers_heads', lang))}</th><th>{esc(t('q_dims', lang))}</th>"
        f"<th>{esc(t('q_total', lang))}</th></tr></thead><tbody>{rows}</tbody></table></div></details>"
    )
    table = table if answered == len(level.quiz) else ""  # the table holds the quiz's answers: shown once all are checked
    return (
        f'<section class="facts-quiz">{lab.heading(t("q_title", lang))}{lab.in_order("", items)}'
        f'{lab.check_row(lab.button("quiz", t("q_check", lang)))}{lab.result_box(score, "quiz-box")}{table}</section>'
    )


def check(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome:
    """Every filled answer checked against the facts table (no stars)."""
    given = dict(attempt.get("quiz", {}))
    for qid in level.quiz:
        raw = str(data.get(f"q:{qid}", "") or "").strip()[:20]
        if not raw:
            continue
        try:
            value = api.facts_quiz(qid, raw)["given"]
        except ValueError:
            given[qid] = {"bad": raw}
            continue
        ok = math.isfinite(value) and 0 <= value < QUIZ_MAX
        given[qid] = {"value": raw} if ok else {"bad": raw, "range": True}
    return progress, {**attempt, "quiz": given}, ""

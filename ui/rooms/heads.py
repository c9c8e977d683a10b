"""3-4 how many heads?: the player ranks head counts, eight heads are trained live on six relations, a reading of the
bars passes, the ranking adds the rest; the facts quiz (ui/rooms/py) beside it earns no stars."""

import json
import math

from dragon import api, findings, game, margins
from dragon.attention import MultiHeadAttention
from dragon.lessons import heads_experiment as heads_lesson
from dragon.lessons.heads_experiment import curves_frame
from dragon.levels.loader import Level
from dragon.runs import RUNS
from dragon.runtime.device import best_device
from ui.rooms import lab, waits
from ui.rooms.lab import Attempt, Outcome
from ui.strings import t
from ui.widgets.charts import bars_html, line_chart
from ui.widgets.draw import esc


def rule_html(level: Level, lang: str) -> str:
    """One line under the question: 3-4's star rule — reading the bars passes, the ranking adds the rest (read_stars
    of rank_stars)."""
    n = len(RUNS.sizes.experiment.heads)
    m = n * (n - 1) // 2
    _, b, _ = lab.least_for(lambda p: game.read_stars(game.rank_stars(p, m), True), m)
    return lab.rule(t("rule_rank", lang, m=m, b=b, tie=f"{game.TIE:g}"))


def param_counts(d: int, heads: list[int]) -> list[int]:
    """The parameters of a real MultiHeadAttention(d, h) for each h, counted now."""
    return [sum(p.numel() for p in MultiHeadAttention(d, h).parameters()) for h in heads]


def heads_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    ex = RUNS.sizes.experiment
    heads = list(ex.heads)
    device = lab.device_label(str(best_device()), lang, ex.cpu_threads if best_device().type == "cpu" else None)
    setup = t("h_setup", lang, vocab=ex.vocab, length=ex.length, relations=", ".join(map(str, ex.relations)),
              k=len(ex.relations), d=ex.d_model, steps=ex.steps, device=device)
    counts = param_counts(ex.d_model, heads)
    formula = 4 * ex.d_model**2 + 4 * ex.d_model
    row = "".join
    equal = t(findings.pick(heads_lesson.FINDINGS, "params", {"params": counts, "params_formula": formula}), lang)
    params = (
        f'<div class="table-wrap"><table class="params"><caption>{esc(t("h_params_title", lang))}</caption><tbody>'
        f"<tr><th>{esc(t('h_heads', lang))}</th>{row(f'<td>{h}</td>' for h in heads)}</tr>"
        f"<tr><th>{esc(t('h_dhead', lang))}</th>{row(f'<td>{ex.d_model // h}</td>' for h in heads)}</tr>"
        f"<tr><th>{esc(t('h_params', lang))}</th>{row(f'<td>{lab.thousands(n)}</td>' for n in counts)}</tr>"
        f"</tbody></table></div>"
        f'<p class="formula-line">{esc(t("h_formula", lang, d=ex.d_model, n=lab.thousands(formula), eq=equal))}</p>'
    )
    done, waiting = "result" in attempt, "waiting" in attempt
    ranking = attempt.get("ranking") or [None] * len(heads)
    choices = [(str(h), f"h = {h}") for h in heads]
    places = [lab.select(f"r{i}", t("h_place", lang, i=i + 1), choices, None if r is None else str(r), lang,
                         locked=done or waiting)
              for i, r in enumerate(ranking)]
    seed = waits.seed_field(attempt, lang, done or waiting)
    go = "" if done or waiting else lab.button("train", t("h_go", lang))
    result = note + (heads_result_html(level, lang, progress, attempt) if done else waits.box_of(attempt, lang, "train"))
    quiz = quiz_html(level, lang, attempt) if done or progress["stars"].get(level.id, 0) else ""
    return lab.room(
        "heads", lab.note(setup, "setup"), params, lab.question(t("h_rank_q", lang)), lab.in_order("places", places),
        lab.checking(level, lang, progress, attempt, check=seed + go, result=result, rule_line=rule_html(level, lang)),
        quiz,
    )


def pct(a: float) -> str:
    return f"{a:.1%}"


def heads_lines(m: dict, lang: str) -> list[str]:
    """What the run found, each sentence picked by heads_experiment.FINDINGS from the measured accuracies."""
    acc, pick = m["accuracy"], lambda group: findings.pick(heads_lesson.FINDINGS, group, m)
    near = ", ".join(f"h = {h}" for h in m["near_chance"])
    return [
        t(pick("few"), lang, best=pct(m["best"]), h=m["few"], a=pct(acc[m["few"]]), k=m["relations"], pts=margins.SHARE_POINTS),
        t(pick("more"), lang, top=m["top"], b=pct(m["best"]), g=f"{100 * m['gain']:.1f}", h=m["few"], pts=margins.SHARE_POINTS),
        t(pick("chance"), lang, c=pct(m["chance"]), w=m["weakest"], a=pct(acc[m["weakest"]]), hs=near, pts=margins.SHARE_POINTS),
    ]


def heads_read_html(level: Level, lang: str, progress: dict, attempt: Attempt, m: dict) -> str:
    """The question read off the accuracy bars (which h is lowest), or, once read, its result, the findings, the end."""
    if "stars" not in attempt:
        choices = [(str(h), f"h = {h}") for h in m["accuracy"]]
        return (
            lab.question(t("h_read_q", lang)) + lab.asks(lab.select("read", t("h_read_label", lang), choices, None, lang))
            + lab.check_row(lab.button("check", t("check", lang)))
        )
    low = min(m["accuracy"].values())
    line = t("h_read_result", lang, mine=attempt["read"], ok=lab.mark(attempt["read"] in m["lowest"], lang),
             right=" / ".join(f"h = {h}" for h in m["lowest"]), a=pct(low), g=f"{100 * m['lowest_margin']:.1f}")
    return lab.verdict(line) + lab.lines(heads_lines(m, lang), "lines findings") + lab.end(level, lang, progress, int(attempt["stars"]))


def heads_result_html(level: Level, lang: str, progress: dict, attempt: Attempt) -> str:
    r = attempt["result"]
    m = heads_lesson.measured(r)
    device = lab.device_label(r["device"], lang, r.get("threads"))
    head = t("h_result", lang, right=attempt["pairs"][0], total=attempt["pairs"][1], tie=game.TIE)
    colours = {f"h = {h}": waits.curve_colour(f"h = {h}") for h in r["heads"]}
    chart = line_chart(
        curves_frame(r), "step", "loss", "heads", title=t("h_chart", lang, device=device, s=f"{r['seconds']:.1f}"),
        x_label=t("h_x", lang), y_label=t("h_y", lang), colours=colours, tip="{series}: {x} → {y}",
    )
    chart = waits.replayed_chart(chart, r, lang, attempt.get("replayed", False))
    place = {h: i + 1 for i, h in enumerate(attempt["ranking"])}
    acc = bars_html(
        [(f"h = {h} · {t('h_your_rank', lang, r=place[h])}", a, colours[f"h = {h}"])
         for h, a in zip(r["heads"], r["final_accuracy"], strict=True)], 1.0, fmt="{:.1%}", cls="acc",
    )
    vas = api.facts()["vaswani"]
    paper = ", ".join(f"h = {row['h']}: {row['bleu']:.1f} BLEU" for row in vas["rows"])
    paper = lab.note(f"{t(findings.pick(heads_lesson.FINDINGS, 'paper', m), lang, d=vas['d_model'])} {paper}", "vaswani")
    accuracy = {str(h): a for h, a in zip(r["heads"], r["final_accuracy"], strict=True)}
    acc_title = t("h_acc_title", lang, n=r["task"]["eval_size"], chance=pct(r["chance"]))
    fact = t(findings.pick(heads_lesson.FINDINGS, "lesson", m), lang, h=m["few"], best=pct(m["best"]), pts=margins.SHARE_POINTS)
    return (
        lab.verdict(head) + heads_read_html(level, lang, progress, attempt, m)
        + f'<div class="heads-result"><div class="acc-box" data-accuracy="{esc(json.dumps(accuracy))}">'
        f'{lab.caption(acc_title)}{acc}</div>{chart}</div><div class="fact-check">{esc(fact)}</div>'
        f"{paper if paper_answered(level, attempt) else ''}"
    )


def parse_ranking(data: dict, heads: list[int]) -> list[int] | None:
    """Five places, each a different h of the experiment, else None."""
    try:
        ranking = [int(str(data.get(f"r{i}"))) for i in range(len(heads))]
    except ValueError:
        return None
    return ranking if sorted(ranking) == sorted(heads) else None


def train(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The player's ranking, then the five models for the seed asked (0: the run this server recorded, shown to
    everyone at once; another seed trains afresh in the server's lane, the wait box meanwhile), its pairs scored;
    the accuracies are shown now, so this try keeps what it could earn and another try earns at most ★."""
    if "result" in attempt:
        return None
    heads = list(RUNS.sizes.experiment.heads)
    ranking = attempt.get("ranking") if "waiting" in attempt else parse_ranking(data, heads)
    if ranking is None:
        return progress, attempt, lab.refusal(t("h_bad", lang))
    seed = waits.asked_seed(attempt, data)
    if seed is None:
        return progress, attempt, lab.refusal(t("w_seed_bad", lang))
    got = waits.awaited(progress, attempt, lambda: api.heads_run(seed), lang, {"ranking": ranking, "seed": seed})
    if not isinstance(got, waits.Done):
        return got
    result = got.run.result
    accuracy = dict(zip(result["heads"], result["final_accuracy"], strict=True))
    pairs = game.rank_pairs(ranking, accuracy)
    progress, cap = lab.answers_shown(progress, level.id)
    cap = min(cap, game.read_stars(game.rank_stars(*pairs), True))  # the most a right reading can still earn
    return progress, {"level": level.id, "ranking": ranking, "seed": seed, "result": result, "pairs": list(pairs),
                      "cap": cap, "replayed": got.replayed}, ""


def read_heads(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The question read off the accuracy bars passes the level; the ranking adds the rest of the stars."""
    if "result" not in attempt or "stars" in attempt:
        return None
    heads = attempt["result"]["heads"]
    read = lab.chosen(data, "read", heads)
    if read is None:
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    ok = read in heads_lesson.lowest(attempt["result"])[0]
    right, total = attempt["pairs"]
    earned = min(game.read_stars(game.rank_stars(right, total), ok), lab.try_cap(progress, level.id, attempt))
    progress = lab.record(progress, level, 100.0 * ok * (1 + right / max(total, 1)) / 2, earned)
    return progress, {**attempt, "read": read, "stars": earned}, ""


# --- 3-4's facts quiz: how many heads real models have, checked against the facts table (no stars) ------------


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

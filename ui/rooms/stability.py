"""4-5 when training fails: predict which of one head and eight heads fails more and at which rate failures begin, then
train the grid in the server's lane (dragon/lessons/stability.py), then read the grid: what makes a failed run train.
The reading passes the level, the predictions add the rest of the stars."""

from dragon import api, findings
from dragon.lessons import stability as fail_lesson
from dragon.levels.loader import Level
from ui.rooms import lab, waits
from ui.rooms.lab import Attempt, Outcome
from ui.strings import t
from ui.widgets.charts import line_chart
from ui.widgets.draw import esc

PREDICTIONS = ("who", "rate")
COLOURS = {"good": "#1f4e9c", "failed": "#c2410c", "chance": "#6b7280"}


def answer_key(result: dict) -> dict[str, list[str]]:
    """What the grid accepts for each prediction (the fail counts' margin and the share margin decide)."""
    return {"who": [q["accepted"][0] for q in fail_lesson.questions(result) if q["id"] == "who"],
            "rate": fail_lesson.failures_begin(result)}


def rate_text(value: str, lang: str) -> str:
    return t("fl_rate_none", lang) if value == fail_lesson.NONE else t("fl_rate_at", lang, lr=value)


def stability_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    grid = fail_lesson.Grid()
    setup = t("fl_setup", lang, rates=" · ".join(map(str, grid.rates)), seeds=grid.seeds, steps=grid.steps,
              n=len(grid.heads) * len(grid.rates) * grid.seeds,
              device=lab.training_device(lang))
    given, locked = attempt.get("answers", {}), waits.answered(attempt)
    whos = [(w, t(f"fl_who_{w}", lang)) for w in fail_lesson.WHO]
    rates = [(str(lr), rate_text(str(lr), lang)) for lr in grid.rates] + [(fail_lesson.NONE, rate_text("none", lang))]
    ask = lab.asks(
        lab.select("who", t("fl_q_who", lang), whos, given.get("who"), lang, locked=locked),
        lab.select("rate", t("fl_q_rate", lang), rates, given.get("rate"), lang, locked=locked),
    )
    return waits.measuring_room("stability", level, lang, progress, attempt, note, setup, ask, len(PREDICTIONS),
                                measured_html, "grid", t("fl_go", lang), seeded=True)


def measured_html(level: Level, lang: str, progress: dict, attempt: Attempt) -> str:
    """The predictions checked, the reading (asked, or checked with the level's end), then the grid and the curves."""
    r, given = attempt["result"], attempt["answers"]
    key = answer_key(r)
    marks = " · ".join(f"{t('fl_k_' + k, lang)} {lab.mark(given[k] in key[k], lang)}" for k in PREDICTIONS)
    out = lab.verdict(t("fl_result", lang, p=attempt["points"], marks=marks))
    if "stars" not in attempt:  # before the reading: the counts in one line (after it, the findings say them)
        out += lab.note(t("fl_measured", lang, n=r["runs_per_model"], one=r["fails"]["1"], eight=r["fails"]["8"],
                          begins=" / ".join(rate_text(v, lang) for v in key["rate"])), "scored")
    reads = [(str(i), t(f"fl_read_{name}", lang)) for i, name in enumerate(fail_lesson.READ_FIXES)]
    if "stars" in attempt:
        right = fail_lesson.fixes(r)
        out += lab.verdict(t("fl_read_result", lang, mine=t(f"fl_read_{fail_lesson.READ_FIXES[attempt['read']]}", lang),
                             ok=lab.mark(attempt["read"] in right, lang),
                             right=" / ".join(t(f"fl_read_{fail_lesson.READ_FIXES[i]}", lang) for i in right)))
        out += lab.end(level, lang, progress, int(attempt["stars"]))
    else:
        out += lab.question(t("fl_read_q", lang))
        out += lab.asks(lab.select("read", t("fl_read_label", lang), reads, None, lang))
        out += lab.check_row(lab.button("check", t("check", lang)))
    record = lab.note(waits.record_line(r, lang, attempt.get("replayed", False)), "run-record")
    return out + figures(r, lang, read="stars" in attempt) + record


def cell_colour(accuracy: float) -> str:
    """Accuracy 0 → pale, 1 → deep blue (text stays dark on the pale half, white on the deep half)."""
    light = 95 - 60 * max(0.0, min(1.0, accuracy))
    return f"hsl(215, 70%, {light:.0f}%)"


def grid_table(r: dict, lang: str) -> str:
    """The heat map of final accuracy: a row per model, a column per rate, each cell the mean over the seeds and how
    many of them failed."""
    seeds = len(r["seeds"])
    head = "".join(f"<th>{esc(str(lr))}</th>" for lr in r["rates"])
    rows = []
    for i, h in enumerate(r["heads"]):
        cells = []
        for j, lr in enumerate(r["rates"]):
            acc = r["accuracy"][i][j]
            failed = sum(x["failed"] for x in r["runs"] if x["heads"] == h and x["lr"] == lr)
            ink = "#fff" if acc > 0.55 else "#111"
            cells.append(f'<td class="grid-cell" style="background:{cell_colour(acc)};color:{ink}">{acc:.2f}'
                         f'<br><small>{esc(t("fl_cell", lang, k=failed, n=seeds))}</small></td>')
        rows.append(f"<tr><th>{esc(t('fl_row', lang, h=h))}</th>{''.join(cells)}</tr>")
    return (f'<div class="table-wrap"><table class="flops fail-grid"><caption>{esc(t("fl_grid_title", lang, n=seeds))}'
            f"</caption><thead><tr><th>{esc(t('fl_rate', lang))}</th>{head}</tr></thead><tbody>{''.join(rows)}"
            f"</tbody></table></div>{lab.note(t('fl_grid_note', lang, best=f'{best_one(r):.2f}'))}")


def best_one(r: dict) -> float:
    """One head's best cell of the grid (mean accuracy over the seeds), as the page's note quotes it."""
    return fail_lesson.measured(r)["best_one"]


def curves_chart(r: dict, lang: str) -> str:
    """The loss curves of eight heads' best run and its first failed one (same seed), on a log scale, with the loss of
    a model that learned nothing as a grey line."""
    import pandas as pd  # imported here: the engine starts without pandas

    ex = r["examples"]
    rows = [{"step": s, "loss": v, "run": name} for name in ("good", "failed") if ex[name]
            for s, v in zip(ex[name]["curve_steps"], ex[name]["curve"], strict=True) if v is not None]
    rows += [{"step": s, "loss": r["chance_loss"], "run": "chance"} for s in ex["good"]["curve_steps"]]  # the grey line
    names = {name: t(f"fl_{name}", lang, lr=ex[name]["lr"]) for name in ("good", "failed") if ex[name]}
    names["chance"] = t("fl_chance", lang, v=f"{r['chance_loss']:.2f}")
    return line_chart(pd.DataFrame(rows), "step", "loss", "run", title=t("fl_chart", lang, seed=ex["good"]["seed"]),
                      x_label=t("fl_x", lang), y_label=t("fl_y", lang), colours=COLOURS, names=names, log_y=True,
                      tip=t("fl_tip", lang))


def figures(r: dict, lang: str, read: bool) -> str:
    lines = said(r, lang) if read else []
    return (lab.lines(lines) if lines else "") + f'<div class="race-result">{curves_chart(r, lang)}<div>{grid_table(r, lang)}</div></div>'


def said(r: dict, lang: str) -> list[str]:
    """What the grid shows in words: each sentence whose condition holds (dragon/findings.py), filled in."""
    m = fail_lesson.measured(r)
    fill = {"n": r["runs_per_model"], "one": m["fails_one"], "eight": m["fails_eight"],
            "best_one": f"{m['best_one']:.2f}", "best_eight": f"{m['best_eight']:.2f}"}
    keys = [findings.pick(fail_lesson.FINDINGS, "who", m)]
    keys += [f.key for f in fail_lesson.FINDINGS if not f.group and "." not in f.key and findings.holds(f, m)]  # not
    # the level's why: the page shows it as the level's
    return [t(k, lang, **fill) for k in keys]


def train_grid(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The two predictions, then the grid in the server's lane (the wait box meanwhile; the page asks again when it is
    done), then the predictions checked against it."""
    if "result" in attempt:
        return None  # one grid an attempt
    given = attempt.get("answers") if "waiting" in attempt else {k: data.get(k) for k in PREDICTIONS}
    rates = [str(lr) for lr in fail_lesson.Grid().rates] + [fail_lesson.NONE]
    if given.get("who") not in fail_lesson.WHO or given.get("rate") not in rates:
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    # seed 0: the grid this server recorded; another: seeds n … n + 2 afresh
    def points(result: dict) -> int:
        key = answer_key(result)
        return sum(given[k] in key[k] for k in PREDICTIONS)

    return waits.measured_predictions(level, lang, progress, attempt, data, given, api.stability_run, points,
                                      len(PREDICTIONS), seeded=True)


def read_grid(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The grid read: what makes a failed run train. It passes the level; the predictions add the rest of the stars."""
    if "result" not in attempt:
        return None
    return lab.read_question(level, lang, progress, attempt, data, len(fail_lesson.READ_FIXES),
                             lambda: fail_lesson.fixes(attempt["result"]), len(PREDICTIONS))

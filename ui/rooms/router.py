"""4-6 heads on demand: predict the smallest k (heads each word keeps) that keeps 95 % of the all-heads accuracy, then
train the routed models in the server's lane (dragon/lessons/router.py), then read how much k = 4 keeps. The reading
passes the level, the prediction adds the rest of the stars."""

from dragon import api, findings
from dragon.config import HEAD_COLORS, HEADS
from dragon.lessons import router as router_lesson
from dragon.levels.loader import Level
from ui.rooms import lab, waits
from ui.rooms.lab import Attempt, Outcome
from ui.strings import t
from ui.widgets.charts import line_chart
from ui.widgets.draw import esc

PREDICTIONS = ("k",)
COLOURS = {"kept": "#1f4e9c", "compute": "#c2410c"}


def answer_key(result: dict) -> dict[str, list[str]]:
    return {"k": next(q["accepted"] for q in router_lesson.questions(result) if q["id"] == "smallest_k")}


def read_options(lang: str) -> list[tuple[str, str]]:
    return [(str(i), t(f"ro_read{i}", lang)) for i in range(len(router_lesson.READ_EDGES) + 1)]


def router_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    r = router_lesson.Routing()
    setup = t("ro_setup", lang, ks=", ".join(map(str, r.ks)), steps=r.steps, seeds=r.seeds,
              n=len(r.ks) * r.seeds, device=lab.training_device(lang))
    ks = [(str(k), t("ro_k_opt", lang, k=k)) for k in r.ks]
    ask = lab.asks(lab.select("k", t("ro_q_k", lang), ks, attempt.get("answers", {}).get("k"), lang,
                              locked=waits.answered(attempt)))
    return waits.measuring_room("router", level, lang, progress, attempt, note, setup, ask, len(PREDICTIONS),
                                measured_html, "route", t("ro_go", lang), seeded=True)


def measured_html(level: Level, lang: str, progress: dict, attempt: Attempt) -> str:
    """The prediction checked, the reading (asked, or checked with the level's end), then the chart and the gates."""
    r, given = attempt["result"], attempt["answers"]
    key = answer_key(r)
    out = lab.verdict(t("ro_result", lang, mark=lab.mark(given["k"] in key["k"], lang),
                        k=" / ".join(f"k = {k}" for k in key["k"])))
    if "stars" in attempt:
        right = router_lesson.read_bucket(r["kept_share"][str(router_lesson.READ_K)])
        out += lab.verdict(t("ro_read_result", lang, mine=t(f"ro_read{attempt['read']}", lang),
                             ok=lab.mark(attempt["read"] == right, lang), right=t(f"ro_read{right}", lang),
                             share=f"{100 * r['kept_share'][str(router_lesson.READ_K)]:.0f} %"))
        out += lab.end(level, lang, progress, int(attempt["stars"]))
    else:
        out += lab.question(t("ro_read_q", lang, k=router_lesson.READ_K))
        out += lab.asks(lab.select("read", t("ro_read_label", lang), read_options(lang), None, lang))
        out += lab.check_row(lab.button("check", t("check", lang)))
    record = lab.note(waits.record_line(r, lang, attempt.get("replayed", False)), "run-record")
    return out + figures(r, lang, read="stars" in attempt, record=record)


def chart(r: dict, lang: str) -> str:
    import pandas as pd  # imported here: the engine starts without pandas

    rows = [{"k": k, "share": r[f"{name}_share"][str(k)], "what": name} for name in ("kept", "compute") for k in r["ks"]]
    return line_chart(pd.DataFrame(rows), "k", "share", "what", title=t("ro_chart", lang, n=len(r["seeds"])),
                      x_label=t("ro_x", lang), y_label=t("ro_y", lang), colours=COLOURS,
                      names={"kept": t("ro_kept", lang), "compute": t("ro_compute_name", lang)},
                      x_ticks=[float(k) for k in r["ks"]], tip=t("ro_tip", lang), y_max=1.0)


def gates_table(r: dict, lang: str) -> str:
    """Which heads each word of one held-out sequence called (k = 2, the first seed): a row per word, a column per
    head, each kept head's weight."""
    ex = r["example"]
    head = "".join(f'<th style="color:{HEAD_COLORS[h]}">{i + 1}</th>' for i, h in enumerate(HEADS))
    rows = []
    for pos, (tok, gate) in enumerate(zip(ex["tokens"], ex["gates"], strict=True)):
        cells = "".join(f'<td class="grid-cell" style="background:hsl(215, 70%, {95 - 30 * g:.0f}%)">{g:.2f}</td>'
                        if g > 0 else "<td></td>" for g in gate)
        rows.append(f"<tr><th>{esc(t('ro_word', lang, i=pos + 1, tok=tok))}</th>{cells}</tr>")
    return (f'<div class="table-wrap"><table class="flops route-grid"><caption>'
            f"{esc(t('ro_gates_title', lang, k=ex['k'], seed=ex['seed']))}</caption><thead><tr>"
            f"<th>{esc(t('ro_head', lang))}</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


def figures(r: dict, lang: str, read: bool, record: str = "") -> str:
    """The findings once read, the chart with where its runs came from under it, and the gates table beside them."""
    lines = said(r, lang) if read else []
    return ((lab.lines(lines) if lines else "")
            + f'<div class="race-result"><div>{chart(r, lang)}{record}</div><div>{gates_table(r, lang)}</div></div>')


def said(r: dict, lang: str) -> list[str]:
    """What the runs show in words: each sentence whose condition holds (dragon/findings.py), filled in."""
    m = router_lesson.measured(r)
    fill = {"k": m["smallest"], "n": m["relations"], "ks": ", ".join(map(str, r["ks"])),
            "accs": ", ".join(f"{r['mean_accuracy'][str(k)]:.2f}" for k in r["ks"])}
    keys = [f.key for f in router_lesson.FINDINGS if not f.group and "." not in f.key and findings.holds(f, m)]
    keys.insert(1, findings.pick(router_lesson.FINDINGS, "need", m))
    return [t(k, lang, **fill) for k in keys]


def route(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The prediction, then the routed models in the server's lane (the wait box meanwhile), then the prediction
    checked against them."""
    if "result" in attempt:
        return None
    given = attempt.get("answers") if "waiting" in attempt else {k: data.get(k) for k in PREDICTIONS}
    if given.get("k") not in [str(k) for k in router_lesson.Routing().ks]:
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    # seed 0: the runs this server recorded; another: seeds n … n + 2 afresh
    return waits.measured_predictions(level, lang, progress, attempt, data, given, api.router_run,
                                      lambda r: int(given["k"] in answer_key(r)["k"]), len(PREDICTIONS), seeded=True)


def read_routes(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """How much k = 4 keeps, read off the chart: it passes the level; the prediction adds the rest of the stars."""
    if "result" not in attempt:
        return None
    answer = lambda: next(q["accepted"] for q in router_lesson.questions(attempt["result"]) if q["id"] == "read")  # noqa: E731
    return lab.read_question(level, lang, progress, attempt, data, len(router_lesson.READ_EDGES) + 1, answer,
                             len(PREDICTIONS))

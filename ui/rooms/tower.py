"""4-2 the tower of layers: predict how attention changes with depth, then read the real model's figures over the
shipped sentences."""

import pandas as pd

from dragon import api
from dragon.lessons import tower as tower_lesson
from dragon.levels.loader import Level
from ui.rooms import lab, waits
from ui.rooms.findings_text import said, tower_fill
from ui.rooms.lab import Attempt, Outcome
from ui.strings import t
from ui.widgets.charts import bars_html, line_chart


def tower_lines(tw: dict, lang: str) -> list[str]:
    """What the measured figures show, in words: the tower's findings that hold, each number from the computation."""
    m = tower_lesson.measured(tw)
    return said(tower_lesson.FINDINGS, m, lang, **tower_fill(m, lang))


def tower_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    tw = api.tower()
    layers = [(str(i + 1), t("tw_layer", lang, l=i + 1)) for i in range(tw["layers"])]
    given = attempt.get("answers", {})
    done = "points" in attempt
    ask = lab.asks(
        lab.select("rises", t("tw_q_rises", lang), [("yes", t("yes", lang)), ("no", t("no", lang))], given.get("rises"), lang, done),
        lab.select("adjacent", t("tw_q_adjacent", lang), layers, given.get("adjacent"), lang, done),
        lab.select("quiet", t("tw_q_quiet", lang), layers, given.get("quiet"), lang, done),
    )
    result = note
    if "points" in attempt:  # the predictions checked: the figures, and the question read off them
        key = tower_lesson.answer_key(tw)
        said = {k: t(v, lang) if k == "rises" else t("tw_layer", lang, l=v) for k, v in given.items() if v}
        marks = " · ".join(t("tw_mark", lang, q=t("tw_k_" + k, lang), a=said.get(k, "—"), ok=lab.mark(given.get(k) in key[k]["accepted"], lang))
                           for k in tower_lesson.PREDICTIONS)
        result += lab.verdict(t("tw_result", lang, p=attempt["points"], marks=marks))
        if "stars" in attempt:
            right = " / ".join(t("tw_layer", lang, l=v) for v in key["nearest"]["accepted"])
            result += lab.verdict(t("tw_read_result", lang, mine=t("tw_layer", lang, l=attempt["read"]), right=right,
                                    ok=lab.mark(attempt["read"] in key["nearest"]["accepted"], lang)))
            result += lab.end(level, lang, progress, int(attempt["stars"]))
        else:
            result += lab.question(t("tw_read_q", lang)) + lab.asks(lab.select("nearest", t("tw_k_nearest", lang), layers, None, lang))
            result += lab.check_row(lab.button("check", t("check", lang)))
        result += tower_figures(tw, lang, findings="stars" in attempt)  # the findings say the answer: after it
    check = "" if "points" in attempt else lab.button("predict", t("check", lang))
    setup = t("tw_setup", lang, n=tw["sentences"], w=tw["words"], model=tw["model"], L=tw["layers"], H=tw["heads"])
    record = lab.note(waits.record_line(tw, lang, True, key="w_measured"), "run-record")
    return lab.room(
        "tower", lab.note(setup), record, lab.read_rule(lang, len(tower_lesson.PREDICTIONS)), ask,
        lab.checking(level, lang, progress, attempt, check=check, result=result),
    )


def tower_figures(tw: dict, lang: str, findings: bool = True) -> str:
    rows = tw["per_layer"]
    frame = pd.DataFrame(
        [{"layer": p["layer"] + 1, "v": p["distance"], "s": "model"} for p in rows]
        + [{"layer": p["layer"] + 1, "v": tw["uniform_distance"], "s": "uniform"} for p in rows]
    )
    chart = line_chart(frame, "layer", "v", "s", title=t("tw_chart", lang), x_label=t("tw_x", lang),
                       y_label=t("tw_y", lang), colours={"model": "#1f4e9c", "uniform": "#8e9aa6"},
                       names={"model": t("tw_model", lang), "uniform": t("tw_uniform", lang)},
                       x_ticks=[p["layer"] + 1 for p in rows])
    adj = bars_html([(t("tw_layer", lang, l=p["layer"] + 1), p["adjacent"], "#2e9e4f") for p in rows], 1.0, fmt="{:.0%}")
    spec = bars_html([(t("tw_layer", lang, l=p["layer"] + 1), p["special"], "#7b3fbf") for p in rows], 1.0, fmt="{:.0%}")
    return (
        (lab.lines(tower_lines(tw, lang), "lines findings") if findings else "") + f'<div class="tower-figs">{chart}'
        f'<div>{lab.caption(t("tw_adj_title", lang))}{adj}{lab.caption(t("tw_special_title", lang))}{spec}</div></div>'
        + lab.lines([f"{p['source']}: {p['finding'][lang]}" for p in tw["papers"]], "lines papers")
    )


def predict_tower(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome:
    """The three predictions, checked: points, then the figures and the question read off them."""
    if "points" in attempt:
        return progress, attempt, ""
    tw = api.tower()
    given = {k: data.get(k) for k in tower_lesson.PREDICTIONS}
    layers = [str(i + 1) for i in range(tw["layers"])]
    if given["rises"] not in ("yes", "no") or any(given[k] not in layers for k in ("adjacent", "quiet")):
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    key = tower_lesson.answer_key(tw)
    points = sum(given[k] in key[k]["accepted"] for k in tower_lesson.PREDICTIONS)
    progress, cap = lab.answers_shown(progress, level.id)
    return progress, {**attempt, "answers": given, "points": points, "cap": cap, "out_of": len(tower_lesson.PREDICTIONS)}, ""


def read_tower(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The question read off the figures passes the level; the predictions add the rest of the stars."""
    if "points" not in attempt or "stars" in attempt:
        return None
    tw = api.tower()
    read = data.get("nearest")
    if read not in [str(i + 1) for i in range(tw["layers"])]:
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    ok = read in tower_lesson.answer_key(tw)["nearest"]["accepted"]
    return lab.read_off(progress, level, attempt, read, ok, len(tower_lesson.PREDICTIONS))

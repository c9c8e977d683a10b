"""4-3 growing up: eight heads trained now from random weights; the player labels snapshots random → faint → clear
→ settled, judged on measured specialisation."""

import random

import numpy as np
import pandas as pd
import torch

from dragon import api, game
from dragon.lessons import growing as growing_lesson
from dragon.levels.loader import Level
from dragon.runs import RUNS
from dragon.runtime.device import best_device
from ui.rooms import lab, waits
from ui.rooms.findings_text import grow_fill, said
from ui.rooms.lab import Attempt, Outcome
from ui.rooms.loading import SEED
from ui.strings import t
from ui.widgets.charts import line_chart
from ui.widgets.draw import esc
from ui.widgets.heatmap import legend, png_data_uri, row_alt

STAGE_COLOURS = {"random": "#8e9aa6", "faint": "#d4a017", "clear": "#1f4e9c", "settled": "#2e9e4f"}


LETTERS = "ABCD"


def shuffled(n: int, rng: random.Random | None = None) -> list[int]:
    """A new shuffle of range(n) for every attempt (so an order cannot be passed on), never the order as it was."""
    order = list(range(n))
    (rng or random.SystemRandom()).shuffle(order)
    return order[1:] + order[:1] if n > 1 and order == sorted(order) else order


def snapshot_html(snap: dict, i: int, lang: str, revealed: bool, given: str | None) -> str:
    offsets = growing_lesson.offset_profile(torch.tensor(snap["maps"])).tolist()  # (h, T): each head's share per offset
    backs = [t("snap_back", lang, k=d) for d in range(len(offsets[0]))]
    maps = "".join(
        f'<figure><img alt="{esc(row_alt(t("g_head", lang, h=h + 1), backs, offsets[h]))}" src="{png_data_uri(np.asarray(m))}">'
        f"<figcaption>{h + 1}</figcaption></figure>"
        for h, m in enumerate(snap["maps"])
    )
    choices = [(s, t("stage_" + s, lang)) for s in growing_lesson.STAGES]
    if revealed:
        label = t("g_measured", lang, stage=t("stage_" + snap["stage"], lang), step=snap["step"], s=f"{snap['specialisation']:.2f}",
                  acc=f"{snap['accuracy']:.0%}", ok=lab.mark(given == snap["stage"], lang),
                  mine=t("stage_" + given, lang) if given in growing_lesson.STAGES else "—")
        head = f'<div class="snap-label" style="border-color:{STAGE_COLOURS[snap["stage"]]}">{esc(label)}</div>'
    else:
        head = lab.select(f"s{i}", t("g_which", lang), choices, given, lang)
    return f'<div class="snap">{lab.heading(t("g_snapshot", lang, k=LETTERS[i]))}{head}<div class="snap-maps">{maps}</div></div>'


def grow_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    g = growing_lesson.Growth()
    dev = best_device()
    setup = t("g_setup", lang, heads=g.heads, relations=", ".join(map(str, g.ex.relations)), k=len(g.ex.relations),
              steps=RUNS.sizes.grow_steps, length=g.ex.length, device=lab.device_label(str(dev), lang, g.ex.cpu_threads if dev.type == "cpu" else None))
    run = attempt.get("run")
    if run is None:
        waiting = "waiting" in attempt
        seed = waits.seed_field(attempt, lang, waiting, default=SEED)
        go = "" if waiting else lab.button("grow", t("g_go", lang))
        result = note + waits.box_of(attempt, lang, "grow")
        return lab.room("grow", lab.note(setup, "setup"), lab.checking(
            level, lang, progress, attempt, check=seed + go, result=result, rule_line=lab.points_rule(lang, len(growing_lesson.STAGES))))
    snaps = growing_lesson.stage_snapshots(run)
    order = attempt["order"]
    given = attempt.get("labels", {})
    revealed = "stars" in attempt
    ask = t("g_question", lang, n=len(snaps), h=run["heads"], k=g.eval_size)
    cards = "".join(snapshot_html(snaps[k], i, lang, revealed, given.get(f"s{i}")) for i, k in enumerate(order))
    done = t("g_done", lang, loss=f"{run['final']['loss']:.2f}", acc=f"{run['final']['accuracy']:.0%}")
    result = note
    if revealed:
        result += lab.verdict(t("g_result", lang, p=attempt["points"], n=len(snaps)))
        charts = grow_charts(run, lang)  # a replayed run's curves are drawn again from its record, left to right
        result += lab.end(level, lang, progress, int(attempt["stars"])) + (
            f'<div class="replay">{charts}</div>' if attempt.get("replayed") else charts)
    label = "" if revealed else lab.button("stages", t("check", lang))
    record = lab.note(waits.record_line(run, lang, attempt.get("replayed", False)), "run-record")
    return lab.room(
        "grow", lab.note(setup, "setup"), lab.note(done), record, lab.question(ask),
        lab.points_rule(lang, len(snaps)), f'<div class="snaps">{cards}</div>{legend(lang)}',
        lab.checking(level, lang, progress, attempt, check=label, result=result),
    )


def grow_charts(run: dict, lang: str) -> str:
    steps = run["steps"]
    loss = pd.DataFrame({"step": steps, "v": run["loss"], "s": "loss"})
    spec = pd.DataFrame(
        [{"step": s, "v": v, "s": "mean"} for s, v in zip(steps, run["specialisation"], strict=True)]
        + [{"step": s, "v": run["chance"], "s": "chance"} for s in steps]
    )
    a = line_chart(loss, "step", "v", "s", title=t("g_loss", lang), x_label=t("g_x", lang), y_label=t("g_loss_y", lang),
                   colours={"loss": "#c2410c"}, names={"loss": t("g_loss_name", lang)})
    b = line_chart(spec, "step", "v", "s", title=t("g_spec", lang), x_label=t("g_x", lang), y_label=t("g_spec_y", lang),
                   colours={"mean": "#2e9e4f", "chance": "#8e9aa6"},
                   names={"mean": t("g_spec_name", lang), "chance": t("g_chance", lang)})
    stages = " · ".join(f"{t('stage_' + s['stage'], lang)}: {t('g_from_step', lang, step=s['step'])}" for s in run["stages"])
    th = run["thresholds"]
    rule = t("g_rule", lang, r=th["random_below"], f=th["faint_below"], s=th["settle_within"])
    m = growing_lesson.measured(run)
    found = said(growing_lesson.FINDINGS, m, lang, skip=("g_question",), **grow_fill(m, lang))
    return f'{lab.note(stages)}{lab.note(rule)}<div class="grow-charts">{a}{b}</div>' + lab.lines(found, "lines findings")


def grow(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """Train for the seed asked (SEED: the run this server recorded, shown to everyone at once; another seed trains
    afresh in the server's lane, the wait box meanwhile), then show the shuffled stage snapshots to label."""
    if "run" in attempt:
        return None
    seed = waits.asked_seed(attempt, data)
    if seed is None:
        return progress, attempt, lab.refusal(t("w_seed_bad", lang))
    got = waits.awaited(progress, attempt, lambda: api.grow_run(RUNS.sizes.grow_steps, seed), lang, {"seed": seed})
    if not isinstance(got, waits.Done):
        return got
    n = len(growing_lesson.stage_snapshots(got.run.result))
    return progress, {"level": level.id, "seed": seed, "run": got.run.result, "order": shuffled(n),
                      "replayed": got.replayed}, ""


def label_stages(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome:
    if "run" not in attempt or "stars" in attempt:
        return progress, attempt, ""
    snaps = growing_lesson.stage_snapshots(attempt["run"])
    given = {f"s{i}": data.get(f"s{i}") for i in range(len(snaps))}
    if any(v not in growing_lesson.STAGES for v in given.values()):
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    points = sum(given[f"s{i}"] == snaps[k]["stage"] for i, k in enumerate(attempt["order"]))
    earned = min(game.points_stars(points, len(snaps)), lab.answer_cap(progress, level.id))
    progress = lab.record(progress, level, 100.0 * points / len(snaps), earned)
    return progress, {**attempt, "labels": given, "points": points, "stars": earned}, ""

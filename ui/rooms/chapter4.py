"""Chapter 4's rooms: 4-1 crystal ball, 4-2 the tower, 4-3 growing up, 4-4 pruning.

The player predicts or picks first; the real computation (dragon.api) runs then and scores it. What the page says
about a number is a finding (each lesson's FINDINGS, chosen by ui/rooms/findings_text.py on its measured values). The real model (4-1, 4-2) and 4-3's trained model
(4-4) are loaded at start, or the first time their level opens: the panel says so and asks for them ('warm', in the server's
lane, ui/widgets/waits.py showing the wait).
Every room is built from ui/rooms/lab.py's blocks and listed in ui/rooms/registry.py."""

import random

import numpy as np
import pandas as pd
import torch

from dragon import api, findings, game
from dragon.lessons import crystal_ball as crystal_lesson
from dragon.lessons import growing as growing_lesson
from dragon.lessons import pruning as pruning_lesson
from dragon.lessons import tower as tower_lesson
from dragon.levels import lab_variants
from dragon.levels.loader import Level
from dragon.runtime.device import best_device
from ui.rooms import lab, own_sentence_box
from ui.rooms.findings_text import back, grow_fill, prune_fill, said, tower_fill
from ui.rooms.lab import Attempt, Outcome
from ui.strings import t
from ui.widgets import waits
from ui.widgets.charts import bars_html, line_chart
from ui.widgets.draw import esc, star_text
from ui.widgets.heads_grid import detail_box, heads_grid, ranking_html
from ui.widgets.heatmap import legend, png_data_uri, row_alt
from ui.widgets.tensors import row_bars, words_key

SEED = 0  # 4-3 trains with this seed in the app, and 4-4 prunes that same model
STAGE_COLOURS = {"random": "#8e9aa6", "faint": "#d4a017", "clear": "#1f4e9c", "settled": "#2e9e4f"}
LETTERS = "ABCD"


# --- loading: the real model and 4-4's trained model, once -------------------------------------------------------


def load_model(report: lab.Report) -> str | None:
    """4-1 and 4-2: the real model, read from its package (None, or why it cannot be loaded)."""
    try:
        crystal_lesson.load(report)
    except crystal_lesson.ModelMissingError as err:
        return str(err)
    return None


def load_tower(report: lab.Report) -> str | None:
    """4-2: the real model, then the tower's figures over the shipped sentences."""
    missing = load_model(report)
    if missing is None:
        api.tower()
    return missing


def load_pruning(report: lab.Report) -> str | None:
    """4-4: 4-3's model trained with the app's seed, and the best pruning over all subsets."""
    api.prune_best(SEED)
    return None


CRYSTAL_NEEDS = lab.Needs(crystal_lesson.is_loaded, load_model, "c_loading")
TOWER_NEEDS = lab.Needs(lambda: tower_lesson.tower.cache_info().currsize > 0, load_tower, "c_loading")
PRUNE_NEEDS = lab.Needs(lambda: pruning_lesson.best_pruning.cache_info().currsize > 0, load_pruning, "p_loading")


# --- 4-1 crystal ball -----------------------------------------------------------------------------------------


def crystal_rule(lang: str) -> str:
    p1, p2 = game.CRYSTAL_SHARES
    return lab.star_rule(lang, "rule_crystal", s3=star_text(game.crystal_stars(1.0, 1.0)), p2=f"{p2:.0%}",
                         s2=star_text(game.crystal_stars(p2, 1.0)), p1=f"{p1:.0%}", s1=star_text(game.crystal_stars(p1, 1.0)))  # fmt: skip


def prune_rule(lang: str) -> str:
    most = 8  # any count: the rule depends on how many fewer than the most possible
    s = [star_text(game.prune_stars(most - d, most, True)) for d in range(3)]
    return lab.star_rule(lang, "rule_prune", s3=s[0], s2=s[1], s1=s[2])


def crystal_of(level: Level, attempt: Attempt | None = None) -> dict:
    """4-1's sentence read by the real model for the level's word and referent, or in a class exam for the pair drawn
    for the round's seed (dragon/levels/lab_variants.py)."""
    exam = attempt is not None and attempt.get("fixed_seed")
    word, target = lab_variants.crystal_ask(level.id, attempt["seed"]) if exam else level.ask
    return api.crystal_ball(level.text["en"], word, target)


def crystal_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    r = crystal_of(level, attempt)
    q, tg = r["position"], r["target"]["position"]
    picked = attempt.get("pick")
    best = r["best"]
    grid = heads_grid(r, lang, picked, best_shown=picked is not None)
    if picked is not None:  # the pick made: any head read out with its numbers, the heads ranked by this link
        grid += detail_box(r, lang) + ranking_html(r, lang, tg)
    intro = t("c_intro", lang, word=r["word"], target=r["target"]["token"], model=r["model"], L=r["layers"], H=r["heads"])
    if attempt.get("fixed_seed"):  # the story asks the level's own pair; this exam round asks another
        intro = t("c_exam", lang, word=r["word"], target=r["target"]["token"], ask_word=level.ask[0],
                          ask_target=level.ask[1]) + " " + intro
    result = note
    if picked is not None:
        li, hi = picked
        w = r["attention"][li][hi][tg]
        order = sorted(((r["attention"][a][b][tg], a, b) for a in range(r["layers"]) for b in range(r["heads"])), reverse=True)
        rank = 1 + sum(v > w for v, _, _ in order)
        said = t("c_result", lang, head=f"L{li + 1}H{hi + 1}", word=r["word"], target=r["target"]["token"], w=f"{w:.2f}",
                 rank=rank, n=len(order), best=best["name"], bw=format(best["weight"], ".2f"))  # fmt: skip
        result += (
            lab.verdict(said, weight=f"{w:.4f}") + lab.end(level, lang, progress, int(attempt.get("stars", 0)))
            + lab.caption(t("c_row", lang, head=f"L{li + 1}H{hi + 1}", word=r["word"], s=f"{r['cls'][li][hi] + r['sep'][li][hi]:.2f}"))
            + row_bars(r["tokens"], r["attention"][li][hi], "#1f4e9c")
        )  # fmt: skip
    try_box = own_sentence_box.try_html(lang, attempt, best) if picked is not None else ""
    seconds = format(crystal_lesson.load_seconds(), ".1f")
    return lab.room(
        "crystal", lab.note(intro), crystal_rule(lang), lab.note(t("c_key", lang)), words_key(r["tokens"], tg, q), grid,
        lab.checking(level, lang, progress, attempt, check="", result=result), try_box,
        lab.note(t("c_model", lang, model=r["model"], package=r["package"], licence=t("c_licence", lang), s=seconds)),
    )  # fmt: skip


def pick(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome:
    if "pick" in attempt:
        return progress, attempt, ""
    try:
        li, hi = (int(x) for x in str(data.get("pick", "")).split(","))
    except ValueError:
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    r = crystal_of(level, attempt)
    if not (0 <= li < r["layers"] and 0 <= hi < r["heads"]):
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    w = r["attention"][li][hi][r["target"]["position"]]
    earned = min(game.crystal_stars(w, r["best"]["weight"]), lab.answer_cap(progress, level.id))
    progress = lab.record(progress, level, 100.0 * w / r["best"]["weight"], earned)
    return progress, {**attempt, "pick": [li, hi], "stars": earned}, ""


# --- 4-2 the tower of layers --------------------------------------------------------------------------------------


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
                           for k in tower_lesson.PREDICTIONS)  # fmt: skip
        result += lab.verdict(t("tw_result", lang, p=attempt["points"], marks=marks))
        if "stars" in attempt:
            right = " / ".join(t("tw_layer", lang, l=v) for v in key["nearest"]["accepted"])
            result += lab.verdict(t("tw_read_result", lang, mine=t("tw_layer", lang, l=attempt["read"]), right=right,
                                    ok=lab.mark(attempt["read"] in key["nearest"]["accepted"], lang)))  # fmt: skip
            result += lab.end(level, lang, progress, int(attempt["stars"]))
        else:
            result += lab.question(t("tw_read_q", lang)) + lab.asks(lab.select("nearest", t("tw_k_nearest", lang), layers, None, lang))
            result += lab.check_row(lab.button("check", t("check", lang)))
        result += tower_figures(tw, lang, findings="stars" in attempt)  # the findings say the answer: after it
    check = "" if "points" in attempt else lab.button("predict", t("check", lang))
    setup = t("tw_setup", lang, n=tw["sentences"], w=tw["words"], model=tw["model"], L=tw["layers"], H=tw["heads"])
    record = lab.note(waits.record_line(tw, lang, True, key="w_measured"), "run-record")
    return lab.room(
        "tower", lab.note(setup), record, lab.star_rule(lang, "rule_read", n=3), ask,
        lab.checking(level, lang, progress, attempt, check=check, result=result),
    )  # fmt: skip


def tower_figures(tw: dict, lang: str, findings: bool = True) -> str:
    rows = tw["per_layer"]
    frame = pd.DataFrame(
        [{"layer": p["layer"] + 1, "v": p["distance"], "s": "model"} for p in rows]
        + [{"layer": p["layer"] + 1, "v": tw["uniform_distance"], "s": "uniform"} for p in rows]
    )
    chart = line_chart(frame, "layer", "v", "s", title=t("tw_chart", lang), x_label=t("tw_x", lang),
                       y_label=t("tw_y", lang), colours={"model": "#1f4e9c", "uniform": "#8e9aa6"},
                       names={"model": t("tw_model", lang), "uniform": t("tw_uniform", lang)},
                       x_ticks=[p["layer"] + 1 for p in rows])  # fmt: skip
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
    return progress, {**attempt, "answers": given, "points": points, "cap": cap}, ""


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


# --- 4-3 growing up -------------------------------------------------------------------------------------------


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
                  mine=t("stage_" + given, lang) if given in growing_lesson.STAGES else "—")  # fmt: skip
        head = f'<div class="snap-label" style="border-color:{STAGE_COLOURS[snap["stage"]]}">{esc(label)}</div>'
    else:
        head = lab.select(f"s{i}", t("g_which", lang), choices, given, lang)
    return f'<div class="snap">{lab.heading(t("g_snapshot", lang, k=LETTERS[i]))}{head}<div class="snap-maps">{maps}</div></div>'


def grow_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    g = growing_lesson.Growth()
    dev = best_device()
    setup = t("g_setup", lang, heads=g.heads, relations=", ".join(map(str, g.ex.relations)), k=len(g.ex.relations),
              steps=api.GROW_STEPS, length=g.ex.length, device=lab.device_label(str(dev), lang, g.ex.cpu_threads if dev.type == "cpu" else None))  # fmt: skip
    run = attempt.get("run")
    if run is None:
        waiting = "waiting" in attempt
        label = t("w_seed_exam" if attempt.get("fixed_seed") else "w_seed_label", lang)
        seed = lab.number_field("seed", label, str(attempt.get("seed", SEED)), 0, 2**31 - 1,
                                cls="seed", step=1, locked=waiting or attempt.get("fixed_seed", False))  # fmt: skip
        go = "" if waiting else lab.button("grow", t("g_go", lang))
        result = note + waits.box_of(attempt, lang, "grow")
        return lab.room("grow", lab.note(setup, "setup"), lab.checking(
            level, lang, progress, attempt, check=seed + go, result=result, rule_line=lab.points_rule(lang, len(growing_lesson.STAGES))))  # fmt: skip
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
    )  # fmt: skip


def grow_charts(run: dict, lang: str) -> str:
    steps = run["steps"]
    loss = pd.DataFrame({"step": steps, "v": run["loss"], "s": "loss"})
    spec = pd.DataFrame(
        [{"step": s, "v": v, "s": "mean"} for s, v in zip(steps, run["specialisation"], strict=True)]
        + [{"step": s, "v": run["chance"], "s": "chance"} for s in steps]
    )
    a = line_chart(loss, "step", "v", "s", title=t("g_loss", lang), x_label=t("g_x", lang), y_label=t("g_loss_y", lang),
                   colours={"loss": "#c2410c"}, names={"loss": t("g_loss_name", lang)})  # fmt: skip
    b = line_chart(spec, "step", "v", "s", title=t("g_spec", lang), x_label=t("g_x", lang), y_label=t("g_spec_y", lang),
                   colours={"mean": "#2e9e4f", "chance": "#8e9aa6"},
                   names={"mean": t("g_spec_name", lang), "chance": t("g_chance", lang)})  # fmt: skip
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
    kept = "waiting" in attempt or attempt.get("fixed_seed")  # a class exam's seed is the round's, not the box's
    seed = attempt.get("seed") if kept else waits.parse_seed(data.get("seed"))
    if seed is None:
        return progress, attempt, lab.refusal(t("w_seed_bad", lang))
    run, refused = waits.follow(attempt, lambda: api.grow_run(api.GROW_STEPS, seed), lang)
    if run is None:
        return progress, {k: v for k, v in attempt.items() if k != "waiting"}, refused
    replayed = "waiting" not in attempt and run.done.is_set()  # known before this player asked: replayed
    if not waits.settled(run):
        return progress, {**attempt, "seed": seed, "waiting": run.id}, ""
    n = len(growing_lesson.stage_snapshots(run.result))
    return progress, {"level": level.id, "seed": seed, "run": run.result, "order": shuffled(n), "replayed": replayed}, ""


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


# --- 4-4 pruning ------------------------------------------------------------------------------------------------


def prune_seed(attempt: Attempt) -> int:
    """The model 4-4 prunes: 4-3's with the app's SEED, or with the fresh seed a class exam drew for the round."""
    return attempt["seed"] if attempt.get("fixed_seed") else SEED


def prune_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    seed = prune_seed(attempt)
    best = api.prune_best(seed)
    active = attempt.get("active") or [1] * best["heads"]
    where = pruning_lesson.measured(best)["positions"]  # each head's favourite offset back, and any second one
    switches = "".join(lab.switch(f"h{i}", t("p_head", lang, h=i + 1, d=back(where[i])), bool(a)) for i, a in enumerate(active))
    done = "stars" in attempt
    result = note
    m = attempt.get("measured")
    if m:
        key = findings.pick(pruning_lesson.TRY_FINDINGS, "goal", m)
        said = t("p_measured", lang, off=m["off"], acc=format(m["accuracy"], ".1%"), kept=format(m["kept"], ".0%"),
                 full=format(m["full_accuracy"], ".1%"))  # fmt: skip
        result += lab.verdict(f"{said} {t(key, lang)}", accuracy=m["accuracy"])
    if done:
        result += lab.end(level, lang, progress, int(attempt["stars"])) + prune_answer(best, lang, attempt)
    go = "" if done else lab.button("measure", t("p_measure", lang), primary=False) + lab.button("submit", t("p_submit", lang))
    goal = t("p_goal", lang, full=f"{best['full_accuracy']:.1%}", goal=f"{best['goal']:.0%}")
    record = waits.record_line(api.grow(api.PRUNED_STEPS, seed), lang, True, key="w_pruned")
    return lab.room(
        "prune", lab.note(goal), lab.note(record, "run-record"), prune_rule(lang), f'<div class="switches">{switches}</div>',
        lab.checking(level, lang, progress, attempt, check=go, result=result),
    )  # fmt: skip


def prune_answer(best: dict, lang: str, attempt: Attempt) -> str:
    patterns = "; ".join(", ".join(str(i + 1) for i, a in enumerate(p) if not a) for p in best["patterns"])
    line = t("p_best", lang, most=best["most_off"], n=best["subsets_tried"], patterns=patterns, mine=attempt["measured"]["off"])
    bars = bars_html([(t("p_off_k", lang, k=k), a, "#1f4e9c") for k, a in enumerate(best["best_accuracy_by_off"])],
                     1.0, fmt="{:.1%}")  # fmt: skip
    m = pruning_lesson.measured(best)
    found = said(pruning_lesson.FINDINGS, m, lang, skip=("p_best", "p_head"), **prune_fill(m, lang))
    return (
        lab.verdict(line, "best-line") + lab.caption(t("p_by_off", lang)) + bars + lab.lines(found, "lines findings redundancy")
        + lab.lines([f"{p['source']}: {p['finding'][lang]}" for p in best["papers"]], "lines papers")
    )  # fmt: skip


def active_heads(data: dict, h: int) -> list[int] | None:
    values = [data.get(f"h{i}") for i in range(h)]
    return [int(v) for v in values] if all(v in ("0", "1") for v in values) else None


def measure(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict, submit: bool = False) -> Outcome:
    if "stars" in attempt:
        return progress, attempt, ""
    seed = prune_seed(attempt)
    best = api.prune_best(seed)
    active = active_heads(data, best["heads"])
    if active is None:
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    m = api.prune(active, seed)
    attempt = {**attempt, "active": active, "measured": m}
    if not submit:
        return progress, attempt, ""
    earned = min(game.prune_stars(m["off"], best["most_off"], m["reached"]), lab.answer_cap(progress, level.id))
    score = 100.0 * m["off"] / max(best["most_off"], 1) if m["reached"] else 0.0
    progress = lab.record(progress, level, min(score, 100.0), earned)
    return progress, {**attempt, "stars": earned}, ""


def submit_pruning(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome:
    return measure(level, lang, progress, attempt, data, submit=True)

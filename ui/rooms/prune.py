"""4-4 pruning: switch off heads of 4-3's trained model, measure, and submit a pruning judged against the best of all
subsets; then the heal (heads that cover for each other): predict how much of what the answer's pruning lost comes back
when the heads left on train on, and measure it in the server's lane."""

from dragon import api, findings, game
from dragon.lessons import healing as healing_lesson
from dragon.lessons import pruning as pruning_lesson
from dragon.lessons.growing import Growth
from dragon.levels.loader import Level
from dragon.runs import RUNS
from ui.rooms import lab, waits
from ui.rooms.findings_text import back, prune_fill, said
from ui.rooms.lab import Attempt, Outcome
from ui.rooms.loading import SEED
from ui.strings import t
from ui.widgets.charts import bars_html, line_chart
from ui.widgets.draw import star_text

HEAL_COLOURS = waits.HEAL_COLOURS


def prune_rule(lang: str) -> str:
    most = 8  # any count: the rule depends on how many fewer than the most possible
    s = [star_text(game.prune_stars(most - d, most, True)) for d in range(3)]
    return lab.star_rule(lang, "rule_prune", s3=s[0], s2=s[1], s1=s[2])


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
                 full=format(m["full_accuracy"], ".1%"))
        result += lab.verdict(f"{said} {t(key, lang)}", accuracy=m["accuracy"])
    if done:
        result += lab.end(level, lang, progress, int(attempt["stars"])) + prune_answer(best, lang, attempt)
        result += heal_block(lang, attempt)
    go = "" if done else lab.button("measure", t("p_measure", lang), primary=False) + lab.button("submit", t("p_submit", lang))
    goal = t("p_goal", lang, full=f"{best['full_accuracy']:.1%}", goal=f"{best['goal']:.0%}")
    record = waits.record_line(api.grow(RUNS.sizes.pruned_steps, seed), lang, True, key="w_pruned")
    return lab.room(
        "prune", lab.note(goal), lab.note(record, "run-record"), prune_rule(lang), f'<div class="switches">{switches}</div>',
        lab.checking(level, lang, progress, attempt, check=go, result=result),
    )


def prune_answer(best: dict, lang: str, attempt: Attempt) -> str:
    patterns = "; ".join(", ".join(str(i + 1) for i, a in enumerate(p) if not a) for p in best["patterns"])
    line = t("p_best", lang, most=best["most_off"], n=best["subsets_tried"], patterns=patterns, mine=attempt["measured"]["off"])
    bars = bars_html([(t("p_off_k", lang, k=k), a, "#1f4e9c") for k, a in enumerate(best["best_accuracy_by_off"])],
                     1.0, fmt="{:.1%}")
    m = pruning_lesson.measured(best)
    found = said(pruning_lesson.FINDINGS, m, lang, skip=("p_best", "p_head"), **prune_fill(m, lang))
    return (
        lab.verdict(line, "best-line") + lab.caption(t("p_by_off", lang)) + bars + lab.lines(found, "lines findings redundancy")
        + lab.lines([f"{p['source']}: {p['finding'][lang]}" for p in best["papers"]], "lines papers")
    )


def active_heads(data: dict, h: int) -> list[int] | None:
    values = [data.get(f"h{i}") for i in range(h)]
    return [int(v) for v in values] if all(v in ("0", "1") for v in values) else None


def measure(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict, submit: bool = False) -> Outcome:
    if "stars" in attempt:
        return progress, attempt, ""
    if submit and (on := active_heads(data, Growth().heads)) is not None and all(on):
        return progress, attempt, lab.refusal(t("p_none_off", lang))  # nothing pruned: no answer to judge, no cost
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


# --- the heal: heads that cover for each other ------------------------------------------------------------------------


def heal_block(lang: str, attempt: Attempt) -> str:
    """After the answer: the heal's question and its button, the wait while it trains, or what it measured."""
    if "heal" in attempt:
        return heal_html(attempt["heal"], attempt["heal_guess"], lang)
    box = waits.box_of(attempt, lang, "heal")
    if box:
        return f'<div class="heal">{box}</div>'
    backs = [(b, t(f"hl_back_{b}", lang)) for b in healing_lesson.BACK]
    return (f'<div class="heal">{lab.question(t("hl_q", lang, steps=healing_lesson.HEAL_STEPS))}'
            f'{lab.asks(lab.select("back", t("hl_label", lang), backs, None, lang))}'
            f'{lab.check_row(lab.button("heal", t("hl_go", lang)))}</div>')


def heal_html(r: dict, guess: str, lang: str) -> str:
    """The guess checked against the heal's measured share (its margin decides), the two curves, the findings."""
    import pandas as pd  # imported here: the engine starts without pandas

    (q,) = healing_lesson.questions([r])
    m = healing_lesson.measured(r)
    share = r["back_share"]
    line = t("hl_result", lang, mine=t(f"hl_back_{guess}", lang), ok=lab.mark(guess in q["accepted"], lang),
             seed=r["seed"], off=r["off"], pruned=f"{r['pruned_accuracy']:.1%}", healed=f"{r['healed_accuracy']:.1%}",
             steps=r["steps"], full=f"{r['full_after_accuracy']:.1%}", share=f"{share:.0%}",
             right=t(f"hl_back_{healing_lesson.back_bucket(share)}", lang))
    frame = pd.DataFrame([{"step": k, "series": name, "acc": a} for name, curve in r["curves"].items()
                          for k, a in zip(r["curve_steps"], curve, strict=True)])
    chart = line_chart(frame, "step", "acc", "series", title=t("hl_chart", lang, n=pruning_lesson.EVAL_SIZE),
                       x_label=t("hl_x", lang), y_label=t("hl_y", lang), colours=HEAL_COLOURS,
                       names={"pruned": t("hl_pruned", lang), "full": t("hl_full", lang)}, y_max=1.0)
    fill = {"lost": f"{100 * m['lost']:.1f}", "back": f"{share:.0%}", "steps": r["steps"]}
    found = said(healing_lesson.FINDINGS, m, lang, **fill)
    head = lab.verdict(line, "heal-head", back=share)
    return f'<div class="heal">{head}{lab.lines(found, "lines findings")}{chart}</div>'


def heal(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The guess, then the heal of the answer's pruning in the server's lane (the wait box meanwhile; the page asks
    again when it is done). It scores nothing: the level's stars are the pruning's."""
    if "stars" not in attempt or "heal" in attempt:
        return None
    guess = attempt.get("heal_guess") if "waiting" in attempt else data.get("back")
    if guess not in healing_lesson.BACK:
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    got = waits.awaited(progress, attempt, lambda: RUNS.heal_run(None, prune_seed(attempt)), lang,
                        {"heal_guess": guess})
    if not isinstance(got, waits.Done):
        return got
    rest = {k: v for k, v in attempt.items() if k != "waiting"}
    return progress, {**rest, "heal_guess": guess, "heal": got.run.result}, ""

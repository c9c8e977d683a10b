"""4-4 pruning: switch off heads of 4-3's trained model, measure, and submit a pruning judged against the best of all
subsets."""

from dragon import api, findings, game
from dragon.lessons import pruning as pruning_lesson
from dragon.levels.loader import Level
from dragon.runs import RUNS
from ui.rooms import lab, waits
from ui.rooms.findings_text import back, prune_fill, said
from ui.rooms.lab import Attempt, Outcome
from ui.rooms.loading import SEED
from ui.strings import t
from ui.widgets.charts import bars_html
from ui.widgets.draw import star_text


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

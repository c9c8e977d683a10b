"""3-2 the race: the player guesses the loop-over-heads ÷ batched speed-up, the real race runs in the server's lane,
the guess is scored against this server's races, and a question read off the workload table passes the level."""

import math

from dragon import api, findings, game
from dragon.config import DragonConfig
from dragon.lessons import race as race_lesson
from dragon.lessons.race import REFERENCE_RUNS, flops, race_frame
from dragon.levels.loader import Level
from dragon.runtime.device import best_device
from ui.rooms import lab, waits
from ui.rooms.lab import Attempt, Outcome
from ui.strings import t
from ui.widgets.charts import line_chart
from ui.widgets.draw import esc, star_text


def rule_html(level: Level, lang: str) -> str:
    """One line under the question: the star rule 3-2 is scored with (dragon/game.py's constants)."""
    a, b = (f"{f:g}" for f in game.GUESS_FACTORS[:2])
    return lab.rule(t("rule_race", lang, a=a, b=b, n=REFERENCE_RUNS))


GUESS_RANGE = (0.1, 1000.0)


RACE_COLOURS = {"loop": "#c2410c", "batched": "#1f4e9c"}


def race_result_html(level: Level, lang: str, progress: dict, attempt: Attempt) -> str:
    r = attempt["result"]
    i = r["lengths"].index(level.guess_at)
    device = lab.device_label(r["device"], lang, r.get("threads"))
    s = r["speedup"][i]
    head = t("r_result", lang, device=device, t=level.guess_at, loop=f"{r['loop_ms'][i]:.2f}",
             batched=f"{r['batched_ms'][i]:.2f}", n=r["repeats"][i], s=f"{s:.2f}", g=f"{attempt['guess']:g}",
             f=f"{attempt['factor']:.2f}")
    chart = line_chart(
        race_frame(r), "length", "ms", "path", title=t("r_chart", lang, device=device), x_label=t("r_x", lang),
        y_label=t("r_y", lang), colours=RACE_COLOURS, names={"loop": t("r_loop", lang), "batched": t("r_batched", lang)},
        log_x=True, log_y=True, x_ticks=[float(n) for n in r["lengths"]], tip=t("r_tip", lang), y_unit=" ms",
    )
    rows = "".join(
        f"<tr><td>{T}</td><td>{lab.thousands(a)}</td><td>{lab.thousands(b)}</td><td>{esc(t('equal' if a == b else 'unequal', lang))}</td></tr>"
        for T, a, b in zip(r["lengths"], r["flops_loop"], r["flops_batched"], strict=True)
    )
    table = (
        f'<div class="table-wrap"><table class="flops"><caption>{esc(t("r_flops_title", lang))}</caption><thead><tr><th>T</th>'
        f"<th>{esc(t('r_loop_flops', lang))}</th><th>{esc(t('r_batched_flops', lang))}</th><th></th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
        + lab.note(t("r_pieces", lang, a=r["matmuls_loop"], b=r["matmuls_batched"]))
    )
    d, T = r["d_model"], level.guess_at
    one_head = flops("batched", T, d, 1)
    fact = t("r_fact", lang, device=device, t=T, s=f"{s:.2f}", flops=lab.thousands(r["flops_batched"][i]), d=d,
             flops1=lab.thousands(one_head), eq=t("equal" if one_head == r["flops_batched"][i] else "unequal", lang))
    m = race_lesson.measured(r, T)
    fact += " " + t(findings.pick(race_lesson.FINDINGS, "fact", m), lang)
    g = m["gradients"]
    grad_fact = t("r_grad_fact", lang, h=g["heads"], diff=f"{10.0 ** math.ceil(math.log10(max(g['max_abs_diff'], 1e-12))):.0e}",
                  n=g["other_heads_nonzero"])
    ref = attempt["reference"]
    scored = t("r_scored", lang, n=ref["runs"], lo=f"{ref['lo']:.2f}", hi=f"{ref['hi']:.2f}", g=f"{attempt['guess']:g}", now=f"{s:.2f}",
               f=f"{attempt['factor']:.2f}", stars=star_text(attempt["guessed"]))
    if "stars" in attempt:
        read = lab.verdict(t("r_read_result", lang, ok=lab.mark(attempt["read"] == race_lesson.work_reading(r), lang),
                             mine=t(f"r_work_{attempt['read']}", lang), right=t(f"r_work_{race_lesson.work_reading(r)}", lang)))
        read += lab.end(level, lang, progress, int(attempt["stars"]))
    else:
        works = [(k, t(f"r_work_{k}", lang)) for k in race_lesson.WORK]
        read = lab.question(t("r_read_q", lang)) + lab.asks(lab.select("work", t("r_read_label", lang), works, None, lang))
        read += lab.check_row(lab.button("check", t("check", lang)))
    return (
        lab.verdict(head, measured=s) + lab.note(scored, "scored") + read
        + f'<div class="race-result">{chart}<div>{table}<div class="fact-check grad-fact">{esc(grad_fact)}</div></div></div>'
        + f'<div class="fact-check">{esc(fact)}</div>'
    )


def race_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    cfg = DragonConfig()
    device = lab.device_label(str(best_device()), lang)
    setup = t("r_setup", lang, h=cfg.n_heads, d=cfg.d_model, dh=cfg.d_head, lengths=", ".join(map(str, level.lengths)),
              device=device)
    guess = format(attempt["guess"], "g") if "guess" in attempt else ""
    ask = lab.number_field("guess", t("r_guess", lang, t=level.guess_at), guess, *GUESS_RANGE, unit="×", cls="guess")
    ran = "result" in attempt
    result = note + (race_result_html(level, lang, progress, attempt) if ran else waits.box_of(attempt, lang, "race"))
    go = "" if ran or "waiting" in attempt else lab.button("race", t("r_go", lang))
    return lab.room(
        "race", lab.note(setup, "setup"),
        lab.checking(level, lang, progress, attempt, check=ask + go, result=result, rule_line=rule_html(level, lang)),
    )


def parse_guess(value) -> float | None:
    """A speed-up guess: a finite number in GUESS_RANGE (a comma for the decimal point is fine), else None."""
    try:
        g = float(str(value).strip().replace(",", ".").rstrip("×xX").strip())
    except ValueError:
        return None
    return g if math.isfinite(g) and GUESS_RANGE[0] <= g <= GUESS_RANGE[1] else None


def with_this_race(reference: dict, now: float) -> dict:
    """The range a guess is scored against: the server's reference races and the race just run (shown beside it), so
    the page never grades a guess against a range its own race falls outside."""
    return {**reference, "lo": min(reference["lo"], now), "hi": max(reference["hi"], now),
            "runs": int(reference["runs"]) + 1}


def run_race(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The player's guess of the speed-up, then the race, timed now on the serving device in the server's lane (the
    wait box meanwhile; the page asks again when it is done), and the score."""
    if "result" in attempt:
        return None  # one race an attempt
    guess = attempt.get("guess") if "waiting" in attempt else parse_guess(data.get("guess"))
    if guess is None:
        return progress, attempt, lab.refusal(t("r_bad", lang, lo=f"{GUESS_RANGE[0]:g}", hi=f"{GUESS_RANGE[1]:g}"))
    got = waits.awaited(progress, attempt, lambda: api.race_run(list(level.lengths), level.guess_at), lang,
                        {"guess": guess})
    if not isinstance(got, waits.Done):
        return got
    result, ref = got.run.result["result"], got.run.result["reference"]  # the range of repeated races: the same guess, the same stars
    ref = with_this_race(ref, result["speedup"][result["lengths"].index(level.guess_at)])
    factor, guessed = game.guess_stars(guess, ref["lo"], ref["hi"])
    progress, cap = lab.answers_shown(progress, level.id)  # the range is on screen now
    cap = min(cap, game.read_stars(guessed, True))  # the most a right reading can still earn with this guess
    return progress, {"level": level.id, "guess": guess, "factor": factor, "guessed": guessed, "result": result,
                      "reference": ref, "cap": cap}, ""


def check_race(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The question read off the race: it passes the level; the guess adds its stars (a wrong reading loses)."""
    if "result" not in attempt or "stars" in attempt:
        return None
    read = data.get("work")
    if read not in race_lesson.WORK:
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    ok = read == race_lesson.work_reading(attempt["result"])
    earned = min(game.read_stars(int(attempt["guessed"]), ok), lab.try_cap(progress, level.id, attempt))
    score = 100.0 * ok * max(1 / 3, 1 - math.log(attempt["factor"]) / math.log(game.GUESS_FACTORS[-1] ** 2))
    progress = lab.record(progress, level, score, earned)
    return progress, {**attempt, "read": read, "stars": earned}, ""

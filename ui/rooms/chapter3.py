"""Chapter 3's rooms: 3-1 inside the formula, 3-2 the race, 3-4 how many heads (and the facts quiz); 3-3 fusion is
ui/rooms/fusion.py.

The player predicts first; then the real computation runs (dragon.api) and is shown, and the prediction is scored
against it. Checking shows the answer, so after a check another try earns at most one star (as in chapter 1). In 3-2
and 3-4 a question read off the measurement passes the level and the prediction adds the rest of the stars. Every
sentence about what a computation found is picked by its lesson's FINDINGS (dragon/findings.py). Every room is built
from ui/rooms/lab.py's blocks and listed in ui/rooms/registry.py."""

import json
import math

import numpy as np

from dragon import api, findings, game, margins
from dragon.attention import MultiHeadAttention
from dragon.config import HEADS, DragonConfig
from dragon.lessons import head_math as head_math_lesson
from dragon.lessons import heads_experiment as heads_lesson
from dragon.lessons import race as race_lesson
from dragon.lessons.heads_experiment import curves_frame
from dragon.lessons.race import REFERENCE_RUNS, flops, race_frame
from dragon.levels import lab_variants
from dragon.levels.loader import Level
from dragon.runtime.device import best_device
from ui.rooms import facts_quiz, lab
from ui.rooms import fusion as fusion_room
from ui.rooms.formula_drawing import formula_html, key_labels
from ui.rooms.lab import Attempt, Outcome
from ui.strings import NUMERALS, head_name, t
from ui.widgets import waits
from ui.widgets.charts import bars_html, line_chart
from ui.widgets.draw import esc, star_text

GUESS_RANGE = (0.1, 1000.0)
RACE_COLOURS = {"loop": "#c2410c", "batched": "#1f4e9c"}


def rule_html(level: Level, lang: str) -> str:
    """One line under the question: the star rule this level is scored with (dragon/game.py's constants)."""
    if level.kind == "formula":
        m = 2 * len(level.rounds[lang])
        _, b, c = lab.least_for(lambda p: game.formula_stars(p, m), m)
        text = t("rule_formula", lang, m=m, b=b, c=c)
    elif level.kind == "race":
        a, b = (f"{f:g}" for f in game.GUESS_FACTORS[:2])
        text = t("rule_race", lang, a=a, b=b, n=REFERENCE_RUNS)
    elif level.kind == "fusion":
        return fusion_room.rule_html(lang)
    else:  # 3-4: reading the bars passes, the ranking adds the rest (read_stars of rank_stars)
        n = len(api.EXPERIMENT.heads)
        m = n * (n - 1) // 2
        _, b, _ = lab.least_for(lambda p: game.read_stars(game.rank_stars(p, m), True), m)
        text = t("rule_rank", lang, m=m, b=b, tie=f"{game.TIE:g}")
    return lab.rule(text)


# --- 3-1 inside the formula -----------------------------------------------------------------------------------

def rounds_of(level: Level, lang: str, attempt: Attempt | None = None) -> tuple:
    """The level's rounds, or in a class exam the rounds drawn for the round's seed (dragon/levels/lab_variants.py)."""
    exam = attempt is not None and attempt.get("fixed_seed")
    return lab_variants.formula_rounds(level.id, lang, attempt["seed"]) if exam else level.rounds[lang]


def round_math(level: Level, lang: str, i: int, attempt: Attempt | None = None) -> dict:
    r = rounds_of(level, lang, attempt)[i]
    return api.head_math(level.text[lang], lang, r.word, r.head)


def map_row_diff(level: Level, lang: str, m: dict) -> float:
    """How far the formula's softmax row is from the engine's own map (the one the game draws)."""
    row = api.level_reading(level, lang).weights[m["head_index"], m["position"] + 1].numpy()
    return float(np.abs(np.asarray(m["weights"]) - row).max())


def share_choices(lang: str) -> list[tuple[str, str]]:
    return lab.bucket_choices("share", game.SHARE_BUCKETS, lang)


def formula_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    rounds = rounds_of(level, lang, attempt)
    at = min(int(attempt.get("at", 0)), len(rounds) - 1)
    done = attempt.get("done", [])
    revealed = len(done) > at
    m = round_math(level, lang, at, attempt)
    head = m["head"]
    title = t("f_round", lang, i=at + 1, n=len(rounds), head=f"{NUMERALS[HEADS.index(head)]} {head_name(head, lang)}",
              word=m["word"])  # fmt: skip
    keys = key_labels(m, lang)
    mine = done[at] if revealed else {}
    chosen = (str(mine["winner"]), str(mine["share"])) if revealed else (None, None)
    ask = lab.asks(
        lab.select("winner", t("f_winner_q", lang), [(str(i), k) for i, k in enumerate(keys)], chosen[0], lang),
        lab.select("share", t("f_share_q", lang), share_choices(lang), chosen[1], lang),
    )
    result = note
    if revealed:
        win = max(m["weights"])
        winners, shares = head_math_lesson.answers(m, game.SHARE_BUCKETS)
        line = t("f_result", lang, winner=" / ".join(keys[k] for k in winners), w=f"{win:.3f}",
                 bucket=" / ".join(lab.bucket_text("share", b, game.SHARE_BUCKETS, lang) for b in shares)
                 + (t("f_both", lang, m=f"{margins.SHARE_MARGIN:g}") if len(shares) > 1 else ""),
                 mine_key=keys[mine["winner"]], ok1=lab.mark(mine["winner"] in winners, lang),
                 mine_share=lab.bucket_text("share", mine["share"], game.SHARE_BUCKETS, lang), ok2=lab.mark(mine["share"] in shares, lang),
                 p=mine["points"])  # fmt: skip
        result += lab.verdict(line)
        if len(done) < len(rounds):
            result += lab.buttons(lab.button("round", t("f_next_round", lang)))
        else:
            points = sum(r["points"] for r in done)
            result += f'<p>{esc(t("f_total", lang, n=len(rounds), p=points, m=2 * len(rounds)))}</p>'
            result += lab.end(level, lang, progress, int(attempt.get("stars", 0)))
    device = lab.device_label(m["device"], lang)
    main = (
        lab.heading(title, "round")
        + lab.note(f"{t('f_intro', lang, t=len(m['tokens']))} {t('computed_on', lang, device=device)}")
        + formula_html(m, lang, revealed, api.level_reading(level, lang).x[m["position"] + 1].tolist(),
                       map_row_diff(level, lang, m) if revealed else 0.0)
        + lab.note(t("f_sink", lang))
    )
    check = "" if revealed else lab.button("check", t("check", lang))
    side = ask + lab.checking(level, lang, progress, attempt, check=check, result=result, rule_line=rule_html(level, lang))
    return lab.two_columns("formula", main, side, open_view="softmax" if revealed else "q", key=f"round{at}")


def check_formula(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome:
    rounds = rounds_of(level, lang, attempt)
    done = list(attempt.get("done", []))
    at = int(attempt.get("at", 0))
    if len(done) != at or at >= len(rounds):
        return progress, attempt, ""  # this round was already checked
    m = round_math(level, lang, at, attempt)
    try:
        winner, share = int(str(data.get("winner"))), int(str(data.get("share")))
    except ValueError:
        return progress, attempt, lab.refusal(t("f_bad", lang))
    if not (0 <= winner < len(m["keys"]) and 0 <= share <= len(game.SHARE_BUCKETS)):
        return progress, attempt, lab.refusal(t("f_bad", lang))
    cap = int(attempt.get("cap", lab.answer_cap(progress, level.id)))
    if not done:  # the first answer shown: from now on another try earns at most ★
        progress = game.use_hints_up_to(progress, level.id, 2)
    winners, shares = head_math_lesson.answers(m, game.SHARE_BUCKETS)
    points = int(winner in winners) + int(share in shares)
    done.append({"winner": winner, "share": share, "points": points})
    attempt = {**attempt, "done": done, "cap": cap, "at": at}
    if len(done) == len(rounds):
        total = sum(r["points"] for r in done)
        earned = min(game.formula_stars(total, 2 * len(rounds)), cap)
        progress = game.record(progress, level.id, 100.0 * total / (2 * len(rounds)), earned)
        attempt["stars"] = earned
    return progress, attempt, ""


def next_round(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome:
    """On to the next round once this one is checked."""
    at, done = int(attempt.get("at", 0)), attempt.get("done", [])
    if len(done) == at + 1 and at + 1 < len(rounds_of(level, lang, attempt)):
        attempt = {**attempt, "at": at + 1}
    return progress, attempt, ""


# --- 3-2 the race ---------------------------------------------------------------------------------------------


def race_result_html(level: Level, lang: str, progress: dict, attempt: Attempt) -> str:
    r = attempt["result"]
    i = r["lengths"].index(level.guess_at)
    device = lab.device_label(r["device"], lang, r.get("threads"))
    s = r["speedup"][i]
    head = t("r_result", lang, device=device, t=level.guess_at, loop=f"{r['loop_ms'][i]:.2f}",
             batched=f"{r['batched_ms'][i]:.2f}", n=r["repeats"][i], s=f"{s:.2f}", g=f"{attempt['guess']:g}",
             f=f"{attempt['factor']:.2f}")  # fmt: skip
    chart = line_chart(
        race_frame(r), "length", "ms", "path", title=t("r_chart", lang, device=device), x_label=t("r_x", lang),
        y_label=t("r_y", lang), colours=RACE_COLOURS, names={"loop": t("r_loop", lang), "batched": t("r_batched", lang)},
        log_x=True, log_y=True, x_ticks=[float(n) for n in r["lengths"]], tip=t("r_tip", lang), y_unit=" ms",
    )  # fmt: skip
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
             flops1=lab.thousands(one_head), eq=t("equal" if one_head == r["flops_batched"][i] else "unequal", lang))  # fmt: skip
    fact += " " + t(findings.pick(race_lesson.FINDINGS, "fact", race_lesson.measured(r, T)), lang)
    ref = attempt["reference"]
    scored = t("r_scored", lang, n=ref["runs"], lo=f"{ref['lo']:.2f}", hi=f"{ref['hi']:.2f}", g=f"{attempt['guess']:g}", now=f"{s:.2f}",
               f=f"{attempt['factor']:.2f}", stars=star_text(attempt["guessed"]))  # fmt: skip
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
        + f'<div class="race-result">{chart}<div>{table}</div></div><div class="fact-check">{esc(fact)}</div>'
    )


def race_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    cfg = DragonConfig()
    device = lab.device_label(str(best_device()), lang)
    setup = t("r_setup", lang, h=cfg.n_heads, d=cfg.d_model, dh=cfg.d_head, lengths=", ".join(map(str, level.lengths)),
              device=device)  # fmt: skip
    guess = format(attempt["guess"], "g") if "guess" in attempt else ""
    ask = lab.number_field("guess", t("r_guess", lang, t=level.guess_at), guess, *GUESS_RANGE, unit="×", cls="guess")
    ran = "result" in attempt
    result = note + (race_result_html(level, lang, progress, attempt) if ran else waits.box_of(attempt, lang, "race"))
    go = "" if ran or "waiting" in attempt else lab.button("race", t("r_go", lang))
    return lab.room(
        "race", lab.note(setup, "setup"),
        lab.checking(level, lang, progress, attempt, check=ask + go, result=result, rule_line=rule_html(level, lang)),
    )  # fmt: skip


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
            "runs": int(reference["runs"]) + 1}  # fmt: skip


def run_race(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The player's guess of the speed-up, then the race, timed now on the serving device in the server's lane (the
    wait box meanwhile; the page asks again when it is done), and the score."""
    if "result" in attempt:
        return None  # one race an attempt
    guess = attempt.get("guess") if "waiting" in attempt else parse_guess(data.get("guess"))
    if guess is None:
        return progress, attempt, lab.refusal(t("r_bad", lang, lo=f"{GUESS_RANGE[0]:g}", hi=f"{GUESS_RANGE[1]:g}"))
    run, refused = waits.follow(attempt, lambda: api.race_run(list(level.lengths), level.guess_at), lang)
    if run is None:
        return progress, {k: v for k, v in attempt.items() if k != "waiting"}, refused
    if not waits.settled(run):
        return progress, {**attempt, "guess": guess, "waiting": run.id}, ""
    result, ref = run.result["result"], run.result["reference"]  # the range of repeated races: the same guess, the same stars
    ref = with_this_race(ref, result["speedup"][result["lengths"].index(level.guess_at)])
    factor, guessed = game.guess_stars(guess, ref["lo"], ref["hi"])
    progress, cap = lab.answers_shown(progress, level.id)  # the range is on screen now
    cap = min(cap, game.read_stars(guessed, True))  # the most a right reading can still earn with this guess
    return progress, {"level": level.id, "guess": guess, "factor": factor, "guessed": guessed, "result": result,
                      "reference": ref, "cap": cap}, ""  # fmt: skip


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


# --- 3-4 how many heads? ------------------------------------------------------------------------------------------


def param_counts(d: int, heads: list[int]) -> list[int]:
    """The parameters of a real MultiHeadAttention(d, h) for each h, counted now."""
    return [sum(p.numel() for p in MultiHeadAttention(d, h).parameters()) for h in heads]


def heads_panel(level: Level, lang: str, progress: dict, attempt: Attempt, note: str) -> str:
    ex = api.EXPERIMENT
    heads = list(ex.heads)
    device = lab.device_label(str(best_device()), lang, ex.cpu_threads if best_device().type == "cpu" else None)
    setup = t("h_setup", lang, vocab=ex.vocab, length=ex.length, relations=", ".join(map(str, ex.relations)),
              k=len(ex.relations), d=ex.d_model, steps=ex.steps, device=device)  # fmt: skip
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
              for i, r in enumerate(ranking)]  # fmt: skip
    label = t("w_seed_exam" if attempt.get("fixed_seed") else "w_seed_label", lang)
    seed = lab.number_field("seed", label, str(attempt.get("seed", 0)), 0, 2**31 - 1, cls="seed",
                            step=1, locked=done or waiting or attempt.get("fixed_seed", False))  # fmt: skip
    go = "" if done or waiting else lab.button("train", t("h_go", lang))
    result = note + (heads_result_html(level, lang, progress, attempt) if done else waits.box_of(attempt, lang, "train"))
    quiz = facts_quiz.quiz_html(level, lang, attempt) if done or progress["stars"].get(level.id, 0) else ""
    return lab.room(
        "heads", lab.note(setup, "setup"), params, lab.question(t("h_rank_q", lang)), lab.in_order("places", places),
        lab.checking(level, lang, progress, attempt, check=seed + go, result=result, rule_line=rule_html(level, lang)),
        quiz,
    )  # fmt: skip


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
        )  # fmt: skip
    low = min(m["accuracy"].values())
    line = t("h_read_result", lang, mine=attempt["read"], ok=lab.mark(attempt["read"] in m["lowest"], lang),
             right=" / ".join(f"h = {h}" for h in m["lowest"]), a=pct(low), g=f"{100 * m['lowest_margin']:.1f}")  # fmt: skip
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
    )  # fmt: skip
    chart = waits.replayed_chart(chart, r, lang, attempt.get("replayed", False))
    place = {h: i + 1 for i, h in enumerate(attempt["ranking"])}
    acc = bars_html(
        [(f"h = {h} · {t('h_your_rank', lang, r=place[h])}", a, colours[f"h = {h}"])
         for h, a in zip(r["heads"], r["final_accuracy"], strict=True)], 1.0, fmt="{:.1%}", cls="acc",
    )  # fmt: skip
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
        f"{paper if facts_quiz.paper_answered(level, attempt) else ''}"
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
    heads = list(api.EXPERIMENT.heads)
    ranking = attempt.get("ranking") if "waiting" in attempt else parse_ranking(data, heads)
    if ranking is None:
        return progress, attempt, lab.refusal(t("h_bad", lang))
    kept = "waiting" in attempt or attempt.get("fixed_seed")  # a class exam's seed is the round's, not the box's
    seed = attempt.get("seed") if kept else waits.parse_seed(data.get("seed"))
    if seed is None:
        return progress, attempt, lab.refusal(t("w_seed_bad", lang))
    run, refused = waits.follow(attempt, lambda: api.heads_run(seed), lang)
    if run is None:
        return progress, {k: v for k, v in attempt.items() if k != "waiting"}, refused
    replayed = "waiting" not in attempt and run.done.is_set()  # known before this player asked: replayed
    if not waits.settled(run):
        return progress, {**attempt, "ranking": ranking, "seed": seed, "waiting": run.id}, ""
    result = run.result
    accuracy = dict(zip(result["heads"], result["final_accuracy"], strict=True))
    pairs = game.rank_pairs(ranking, accuracy)
    progress, cap = lab.answers_shown(progress, level.id)
    cap = min(cap, game.read_stars(game.rank_stars(*pairs), True))  # the most a right reading can still earn
    return progress, {"level": level.id, "ranking": ranking, "seed": seed, "result": result, "pairs": list(pairs),
                      "cap": cap, "replayed": replayed}, ""  # fmt: skip


def read_heads(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The question read off the accuracy bars passes the level; the ranking adds the rest of the stars."""
    if "result" not in attempt or "stars" in attempt:
        return None
    heads = attempt["result"]["heads"]
    try:
        read = int(str(data.get("read")))
    except ValueError:
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    if read not in heads:
        return progress, attempt, lab.refusal(t("lab_bad", lang))
    ok = read in heads_lesson.lowest(attempt["result"])[0]
    right, total = attempt["pairs"]
    earned = min(game.read_stars(game.rank_stars(right, total), ok), lab.try_cap(progress, level.id, attempt))
    progress = lab.record(progress, level, 100.0 * ok * (1 + right / max(total, 1)) / 2, earned)
    return progress, {**attempt, "read": read, "stars": earned}, ""

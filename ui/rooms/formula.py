"""3-1 inside the formula: rounds that ask which word a row of the real softmax attends to most and how much, with
the formula drawn from its real tensors (ui/rooms/formula_drawing.py); checking shows the answers."""

import numpy as np

from dragon import api, game, margins
from dragon.classroom import lab_variants
from dragon.config import HEADS
from dragon.lessons import head_math as head_math_lesson
from dragon.levels.loader import Level
from ui.rooms import lab
from ui.rooms.formula_drawing import formula_html, key_labels
from ui.rooms.lab import Attempt, Outcome
from ui.strings import NUMERALS, head_name, t
from ui.widgets.draw import esc


def rule_html(level: Level, lang: str) -> str:
    """One line under the question: the star rule 3-1 is scored with (dragon/game.py's constants)."""
    m = 2 * len(level.rounds[lang])
    _, b, c = lab.least_for(lambda p: game.formula_stars(p, m), m)
    return lab.rule(t("rule_formula", lang, m=m, b=b, c=c))


def rounds_of(level: Level, lang: str, attempt: Attempt | None = None) -> tuple:
    """The level's rounds, or in a class exam the rounds drawn for the round's seed (dragon/classroom/lab_variants.py)."""
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
              word=m["word"])
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
                 p=mine["points"])
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

"""4-1 the crystal ball: which of the real model's 72 heads ties a pronoun to what it means (colour before the
pick, numbers after), and the player's own sentence (ui/rooms/py)."""

from dragon import api, findings, game
from dragon.classroom import lab_variants
from dragon.lessons import crystal_ball as crystal_lesson
from dragon.lessons import own_sentence as sentence_lesson
from dragon.lessons.own_sentence import MARGIN, SentenceError, judge, own_sentence
from dragon.levels.loader import PRONOUNS, Level
from ui.rooms import lab
from ui.rooms.lab import Attempt, Outcome
from ui.strings import t
from ui.widgets.charts import bars_html
from ui.widgets.draw import star_text
from ui.widgets.heads_grid import detail_box, heads_grid, ranking_html
from ui.widgets.tensors import row_bars, words_key


def crystal_rule(lang: str) -> str:
    p1, p2 = game.CRYSTAL_SHARES
    return lab.star_rule(lang, "rule_crystal", s3=star_text(game.crystal_stars(1.0, 1.0)), p2=f"{p2:.0%}",
                         s2=star_text(game.crystal_stars(p2, 1.0)), p1=f"{p1:.0%}", s1=star_text(game.crystal_stars(p1, 1.0)))


def crystal_of(level: Level, attempt: Attempt | None = None) -> dict:
    """4-1's sentence read by the real model for the level's word and referent, or in a class exam for the pair drawn
    for the round's seed (dragon/classroom/lab_variants.py)."""
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
                 rank=rank, n=len(order), best=best["name"], bw=format(best["weight"], ".2f"))
        result += (
            lab.verdict(said, weight=f"{w:.4f}") + lab.end(level, lang, progress, int(attempt.get("stars", 0)))
            + lab.caption(t("c_row", lang, head=f"L{li + 1}H{hi + 1}", word=r["word"], s=f"{r['cls'][li][hi] + r['sep'][li][hi]:.2f}"))
            + row_bars(r["tokens"], r["attention"][li][hi], "#1f4e9c")
        )
    try_box = try_html(lang, attempt, best) if picked is not None else ""
    seconds = format(crystal_lesson.load_seconds(), ".1f")
    return lab.room(
        "crystal", lab.note(intro), crystal_rule(lang), lab.note(t("c_key", lang)), words_key(r["tokens"], tg, q), grid,
        lab.checking(level, lang, progress, attempt, check="", result=result), try_box,
        lab.note(t("c_model", lang, model=r["model"], package=r["package"], licence=t("c_licence", lang), s=seconds)),
    )


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


# --- 4-1's own-sentence box: the player's sentence, a pronoun in it and what they say it means ---------------------


def try_html(lang: str, attempt: Attempt, best: dict) -> str:
    mine = attempt.get("try") or {}
    text = mine.get("text", "The girl gave the dog a bone because it was hungry.")
    ask = lab.asks(
        lab.text_field("text", t("c_try_text", lang), text, crystal_lesson.MAX_CHARS),
        lab.select("word", t("c_try_word", lang), [(p, p) for p in PRONOUNS], mine.get("word", "it"), lang),
        lab.text_field("means", t("c_try_means", lang), mine.get("means", "dog"), 40, wide=False),
    )
    out = attempt.get("try_note", "")
    if "judged" in mine:
        out += try_result(lang, mine, best)
    return (
        f'<section class="cb-try">{lab.heading(t("c_try_title", lang, head=best["name"]))}{ask}'
        f'{lab.note(t("c_v_rule", lang, margin=f"{MARGIN:.2f}"))}'
        f'{lab.check_row(lab.button("try", t("c_try_go", lang)))}{lab.result_box(out, "try-box")}</section>'
    )


CONTEXT = {f.key for f in sentence_lesson.FINDINGS if f.group == "context"}  # said apart, under our dragon's bars


def verdict_line(lang: str, mine: dict, head: str) -> str:
    """The head judged against the word the player meant, its confidence read off the numbers: the verdict, then
    every remark of the findings that holds (mostly, the last of several, the nearest tagged noun)."""
    j, m = mine["judged"], sentence_lesson.measured(mine)
    values = {"head": head, "word": mine["word"], "top": j["top"], "w": f"{j['top_w']:.2f}", "second": j["second"],
              "w2": f"{j['second_w']:.2f}", "m": f"{j['margin']:.2f}", "margin": f"{MARGIN:.2f}", "s": f"{j['specials']:.2f}",
              "ref": j["referent"], "rw": f"{j['referent_w']:.2f}", "n": mine["times"], "noun": mine["nearest_noun"]}
    keys = [findings.pick(sentence_lesson.FINDINGS, "verdict", m)]
    keys += [k for k in findings.shown(sentence_lesson.FINDINGS, m) if k not in keys and k not in CONTEXT]
    return " ".join(t(k, lang, **values) for k in keys)


def try_result(lang: str, mine: dict, best: dict) -> str:
    says = verdict_line(lang, mine, best["name"])
    key = findings.pick(sentence_lesson.FINDINGS, "context", sentence_lesson.measured(mine))
    ctx = t(key, lang, word=mine["word"], top=mine["context_top"], w=f"{mine['context_w']:.2f}", ref=mine["judged"]["referent"],
            margin=f"{MARGIN:.2f}", sink=f"{mine['context_sink']:.2f}", second=mine.get("context_second", ""),
            w2=f"{mine.get('context_second_w', 0.0):.2f}")
    rows = [(w, v, "#1f4e9c") for j, (w, v) in enumerate(zip(mine["tokens"], mine["row"], strict=True)) if j != mine["position"]]
    rows.append((t("c_specials", lang), mine["specials"], "#8e9aa6"))
    real = bars_html(rows, 1.0, fmt="{:.2f}", cls="cb-row")  # the same absolute scale as our dragon's bars
    return (
        lab.verdict(says, "try-head", verdict=mine["judged"]["verdict"]) + '<div class="cb-side">'
        f'<div>{lab.caption(t("c_try_real", lang, head=best["name"]))}{real}</div>'
        f'<div>{lab.caption(t("c_try_dragon", lang))}'
        f'{row_bars(mine["dragon_tokens"], mine["context"], "#17a2b8", mine.get("dragon_position"))}</div>'
        f"</div>{lab.note(ctx)}"
    )


def try_sentence(level: Level, lang: str, attempt: Attempt, data: dict) -> Attempt:
    """The player's sentence, pronoun and the word they say it means: the head's row there, judged."""
    text = str(data.get("text", "") or "")[: crystal_lesson.MAX_CHARS + 1]
    word = str(data.get("word", "") or "")
    means = str(data.get("means", "") or "").strip()[:40]
    best = api.lesson_head()
    if word not in PRONOUNS:
        return {**attempt, "try_note": lab.refusal(t("c_try_bad_word", lang, words=" / ".join(PRONOUNS)))}
    typed = {"text": text, "word": word, "means": means}
    try:
        mine = own_sentence(text, word, best)
        if not means:
            raise SentenceError("c_err_means")
        mine["judged"] = judge(mine, means)
    except SentenceError as err:
        why = t(err.kind, lang, **err.values)
        return {**attempt, "try": typed, "try_note": lab.refusal(t("c_try_error", lang, why=why))}
    except ValueError:  # anything else the model refuses: said in the player's language, never raw
        why = t("c_err_other", lang)
        return {**attempt, "try": typed, "try_note": lab.refusal(t("c_try_error", lang, why=why))}
    return {**attempt, "try": {**mine, **typed}, "try_note": ""}


def try_own(level: Level, lang: str, progress: dict, attempt: Attempt, data: dict) -> Outcome | None:
    """The real head and our dragon's Context head on the player's own sentence (no stars), once a head is picked."""
    if "pick" not in attempt:
        return None
    return progress, try_sentence(level, lang, attempt, data), ""

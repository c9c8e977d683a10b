"""4-1's own-sentence box: the player's sentence, a pronoun in it and the word they say it means; the real head
found on the lesson's sentence is judged there (right / wrong / unsure, from its numbers), our dragon's rule-built
Context head beside it. No stars: the level was won by the pick. Every sentence about the numbers is one of
dragon/lessons/own_sentence.py's findings, chosen on its measured values."""

from dragon import api, findings
from dragon.lessons import crystal_ball as crystal_lesson
from dragon.lessons import own_sentence as sentence_lesson
from dragon.lessons.own_sentence import MARGIN, SentenceError, judge, own_sentence
from dragon.levels.loader import PRONOUNS, Level
from ui.rooms import lab
from ui.rooms.lab import Attempt, Outcome
from ui.strings import t
from ui.widgets.charts import bars_html
from ui.widgets.tensors import row_bars


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
              "ref": j["referent"], "rw": f"{j['referent_w']:.2f}", "n": mine["times"], "noun": mine["nearest_noun"]}  # fmt: skip
    keys = [findings.pick(sentence_lesson.FINDINGS, "verdict", m)]
    keys += [k for k in findings.shown(sentence_lesson.FINDINGS, m) if k not in keys and k not in CONTEXT]
    return " ".join(t(k, lang, **values) for k in keys)


def try_result(lang: str, mine: dict, best: dict) -> str:
    says = verdict_line(lang, mine, best["name"])
    key = findings.pick(sentence_lesson.FINDINGS, "context", sentence_lesson.measured(mine))
    ctx = t(key, lang, word=mine["word"], top=mine["context_top"], w=f"{mine['context_w']:.2f}", ref=mine["judged"]["referent"],
            margin=f"{MARGIN:.2f}", sink=f"{mine['context_sink']:.2f}", second=mine.get("context_second", ""),
            w2=f"{mine.get('context_second_w', 0.0):.2f}")  # fmt: skip
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


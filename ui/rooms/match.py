"""Chapter 1's panels: one head or eight (1-1) and which head found it (1-2), with their checks.

A check that is not perfect shows the whole answer, so it also caps the level like a reveal: retyping the answer
shown cannot earn more than one star."""

from collections.abc import Callable

from dragon import game
from dragon.chapter1 import compare_stars, finding_heads, match_stars
from dragon.config import HEADS
from dragon.levels.loader import Level, all_levels, get_level
from dragon.scoring import stars
from ui.rooms import slider_views as views
from ui.session import EventData, Saved, State, level_after, session_of
from ui.strings import head_label, head_name, t
from ui.top import progress_props
from ui.widgets.draw import esc, notice_html, star_text, why_html

MAX_FINDINGS = 4


def answer_cap(progress: dict, level_id: str) -> int:
    return stars(100.0, game.hints_used(progress, level_id))


def _cap_note(level: Level, lang: str, progress: dict) -> str:
    """What a wrong answer costs: before one, the warning; after, what was earned and what further tries can earn;
    nothing once the level has all three stars."""
    earned = progress["stars"].get(level.id, 0)
    if earned == 3:
        return ""
    if game.hints_used(progress, level.id):
        note = t("answer_shown", lang, best=star_text(earned), stars=star_text(answer_cap(progress, level.id)))
    else:
        note = t("answer_cap", lang, stars=star_text(1))
    return f'<p class="cap-note">{esc(note)}</p>'


def _next(level: Level, lang: str, progress: dict) -> str:
    if progress["stars"].get(level.id, 0) == 0 or level_after(level, progress) is None:
        return ""
    return f'<button type="button" class="btn primary next" data-act="next">{esc(t("next", lang))}</button>'


def _number(name: str, label: str, value) -> str:
    shown = "" if value is None else esc(str(value))
    return (
        f'<label class="guess"><span>{esc(label)}</span><input type="number" min="0" max="99" step="1" '
        f'inputmode="numeric" data-answer="{name}" value="{shown}"></label>'
    )


def _picker(i: int, said: str, lang: str, chosen: str | None) -> str:
    options = f'<option value="">{esc(t("pick_head", lang))}</option>' + "".join(
        f'<option value="{h}"{" selected" if h == chosen else ""}>{esc(head_label(j, lang))}</option>'
        for j, h in enumerate(HEADS)
    )
    return (
        f'<li><label><span class="finding">{esc(said)}</span>'
        f'<select data-answer="p{i}" aria-label="{esc(t("match_pick", lang))}">{options}</select></label></li>'
    )


def quiz_props(level: Level, lang: str, progress: dict, answers: dict | None = None, result: str = "") -> dict:
    """The chapter-1 panel for this level: the question, the inputs (keeping the player's answers), the result."""
    answers = answers or {}
    check = (
        f'<button type="button" class="btn primary" data-act="check" id="mhd-check">{esc(t("check", lang))}</button>'
    )
    if level.kind == "compare":
        pictures, _ = views.compare_html(level, lang)
        body = (
            f'<div class="quiz-compare">{pictures}'
            f'<p class="question">{esc(t("compare_one", lang, w=level.focus[lang]))}<br>{esc(t("compare_eight", lang))}'
            f'<br><small>{esc(t("looks_rule", lang))}</small></p><div class="answer-row">'
            f"{_number('one', t('one_dragon', lang), answers.get('one'))}"
            f"{_number('eight', t('eight_dragon', lang), answers.get('eight'))}{check}</div>"
        )
    else:
        pickers = "".join(
            _picker(i, f.says[lang], lang, answers.get(f"p{i}")) for i, f in enumerate(level.findings[:MAX_FINDINGS])
        )
        body = f'<div class="quiz-match"><ol class="findings">{pickers}</ol><div class="answer-row">{check}</div>'
    body += _cap_note(level, lang, progress) + f'<div class="result-box" role="status">{result}</div>'
    if progress["stars"].get(level.id, 0) > 0:
        body += why_html(level, lang)
    body += _next(level, lang, progress) + "</div>"
    return {"body": body}


def _finish(level: Level, lang: str, progress: dict, earned: int, answers: dict, result_of: Callable[[], str]) -> dict:
    """Record a checked answer: stars capped by any answer already shown; a wrong answer shows the answer."""
    earned = min(earned, answer_cap(progress, level.id)) if earned else 0
    progress = game.record(progress, level.id, 100.0 * earned / 3, earned)
    if earned < 3:
        progress = game.use_hints_up_to(progress, level.id, 2)
    result = f'<div class="result"><span class="result-stars">{star_text(earned)}</span> {result_of()}</div>'
    return {
        "saved": game.save(progress),
        "top": progress_props(level, lang, progress),
        "quiz": quiz_props(level, lang, progress, answers, result),
    }


def _whole(value) -> int | None:
    """A guess box's text as a whole number from 0 to 99, else None."""
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return int(number) if number.is_integer() and 0 <= number <= 99 else None


def check(state: State, saved: Saved, data: EventData) -> dict:
    """The player's answers to a chapter-1 level (the quiz's 'check' event data); bad input changes nothing."""
    session = session_of(state)
    if session["level"] not in all_levels():
        return {}  # the sandbox or a teacher's level: no quiz
    level, lang = get_level(session["level"]), session["lang"]
    progress = game.load(saved).progress
    data = data if isinstance(data, dict) else {}
    if level.kind == "compare":
        answers = {k: str(data.get(k, ""))[:10] for k in ("one", "eight")}
        one, eight = _whole(answers["one"]), _whole(answers["eight"])
        if one is None or eight is None:
            return {"quiz": quiz_props(level, lang, progress, answers, notice_html(t("bad_guess", lang)))}
        _, truth = views.compare_html(level, lang)
        sep = views.SEP[lang]

        def text() -> str:
            return esc(t("compare_result", lang, a=len(truth["one_head_sees"]), wa=sep.join(truth["one_head_sees"]),
                         b=len(truth["eight_heads_see"]), wb=sep.join(truth["eight_heads_see"])))

        return _finish(level, lang, progress, compare_stars(one, eight, truth), answers, text)
    if level.kind != "match":
        return {}
    n = min(len(level.findings), MAX_FINDINGS)
    answers = {f"p{i}": data.get(f"p{i}") if data.get(f"p{i}") in HEADS else None for i in range(n)}
    if any(v is None for v in answers.values()):
        return {"quiz": quiz_props(level, lang, progress, answers, notice_html(t("bad_picks", lang)))}
    truth = finding_heads(level, lang)
    earned, right = match_stars([answers[f"p{i}"] for i in range(n)], truth[:n])

    def lines() -> str:
        items = "".join(
            f"<li>{esc(f.says[lang])} — {esc(t('right', lang) if ok else t('wrong', lang, head=head_name(a, lang)))}</li>"
            for f, ok, a in zip(level.findings, right, truth, strict=False)
        )
        return f"{esc(t('match_result', lang, n=sum(right), m=len(right)))}<ul>{items}</ul>{views.finding_rows(level, lang, truth)}"

    return _finish(level, lang, progress, earned, answers, lines)

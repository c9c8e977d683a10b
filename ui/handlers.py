"""Event handlers: each takes the player's state in and returns a dict of named outputs (state included)."""

import json
import time
from collections.abc import Iterator

from dragon import api, game
from dragon.chapter1 import compare_stars, finding_heads, match_stars
from dragon.config import HEADS
from dragon.levels import LANGS, Level, all_levels, get_level, load_levels
from dragon.scoring import as_gates, ascent_path, score, stars

from . import views
from .draw import dragon_svg, esc, gates_style, gauge_html, notice_html, star_text, story_html, tokens_html, why_html
from .text import head_name, t

START_GATES = [0.5] * len(HEADS)
MAX_FINDINGS = 4  # the matching panel has this many pickers
DEMO_DELAY_S = 0.12  # pause between the goddess's steps


def session_of(state) -> dict:
    """The per-player session (level and language); anything odd falls back to the first level in Chinese."""
    state = state if isinstance(state, dict) else {}
    level = state.get("level") if state.get("level") in all_levels() else first_level_id()
    lang = state.get("lang") if state.get("lang") in LANGS else "zh"
    return {"level": level, "lang": lang}


def first_level_id() -> str:
    return load_levels()[0].levels[0].id


def next_level_id(progress: dict) -> str:
    """The first open level without a star, else the last open level."""
    opened = game.unlocked_chapters(progress)
    levels = [lv for c in load_levels() if c.number in opened for lv in c.levels]
    return next((lv.id for lv in levels if progress["stars"].get(lv.id, 0) == 0), levels[-1].id)


def cap(progress: dict, level_id: str) -> int:
    return stars(100.0, game.hints_used(progress, level_id))


# --- whole-page views -------------------------------------------------------------------------------


PANELS = ("slider-panel", "compare-panel", "match-panel")


def panels_style(shown: str | None = None) -> str:
    """A <style> that hides every level panel but `shown`."""
    hidden = ",".join(f"#{p}" for p in PANELS if p != shown)
    return f"<style>{hidden}{{display:none !important}}</style>"


def story(level: Level, lang: str, progress: dict, notice: str = "", coach: str = "", why: bool = False) -> str:
    """The story block: a notice, the narration (and the coach's line), the tokens, the why once earned,
    and a <style> that shows this level's panel."""
    reading = api.level_reading(level, lang)
    panel = "slider" if level.sliders else level.kind
    shown_why = why or progress["stars"].get(level.id, 0) > 0
    return (
        panels_style(f"{panel}-panel")
        + notice_html(notice)
        + story_html(level, lang, coach)
        + tokens_html(reading.tokens, lang, reading.analysis.truncated)
        + why_html(level, lang, shown_why)
        + (views.claims_html(level, lang) if shown_why else "")
    )


def page(level: Level, lang: str, progress: dict, notice: str = "") -> dict:
    """Everything shown for a level, for a fresh start of it."""
    out = {
        "session": {"level": level.id, "lang": lang},
        "header": views.header_html(lang, progress),
        "saved": game.save(progress),
        "level_dd": {"choices": views.level_choices(progress, lang), "value": level.id},
        "story": story(level, lang, progress, notice),
    }
    reading = api.level_reading(level, lang)
    if level.sliders:
        out.update(slider_outputs(level, lang, START_GATES, progress)[0], dragon=dragon_svg(lang))
        out["maps"] = views.maps_html(reading, lang) + views.silent_note(reading, lang)
        out.update({f"s{i}": g for i, g in enumerate(START_GATES)})
    elif level.kind == "compare":
        pictures, _ = views.compare_html(level, lang)
        question = (
            f"<p>{esc(t('compare_one', lang, w=level.focus[lang]))}<br>{esc(t('compare_eight', lang))}"
            f"<br><small>{esc(t('looks_rule', lang))}</small></p>"
        )
        out.update(
            compare_view=pictures + question,
            guess_one=None,
            guess_eight=None,
            compare_result="",
        )
    else:
        for i in range(MAX_FINDINGS):
            finding = level.findings[i] if i < len(level.findings) else None
            out[f"pick{i}"] = (
                {"visible": True, "label": finding.says[lang], "value": None} if finding else {"visible": False}
            )
        out["match_result"] = ""
    return out


def slider_outputs(level: Level, lang: str, gates, progress: dict) -> tuple[dict, dict]:
    """What changes when a slider moves (the gauge with the dragon's brightness, the target view, and progress
    if beaten), and the progress after it."""
    reading = api.level_reading(level, lang)
    s = score(reading, gates, level.target_for(lang))
    earned = stars(s, game.hints_used(progress, level.id))
    stars_before = progress["stars"].get(level.id, 0)
    out = {"target_view": views.target_view(level, reading, gates, lang)}
    if earned > stars_before or s > progress["best"].get(level.id, 0.0):
        progress = game.record(progress, level.id, s, earned)
        out.update(saved=game.save(progress), header=views.header_html(lang, progress))
        if progress["stars"][level.id] != stars_before:  # the level list shows stars; a first star shows why
            out["level_dd"] = {"choices": views.level_choices(progress, lang), "value": level.id}
            if stars_before == 0:
                out["story"] = story(level, lang, progress)
    out["gauge"] = gates_style(gates) + gauge_html(
        s, earned, progress["best"].get(level.id), cap(progress, level.id), lang
    )
    return out, progress


def boot(boot_json: str, saved) -> dict:
    """First view: language, level and projector mode come from the link (or the browser's memory)."""
    try:
        boot = json.loads(boot_json) if isinstance(boot_json, str) and len(boot_json) < 2000 else {}
    except ValueError:
        boot = {}
    boot = boot if isinstance(boot, dict) else {}
    lang = boot.get("lang") if boot.get("lang") in LANGS else "zh"
    loaded = game.load(saved)
    notice = t("damaged", lang) if loaded.notice else ""
    wanted = boot.get("level")
    if isinstance(wanted, str) and wanted:
        if wanted in all_levels():
            return page(get_level(wanted), lang, loaded.progress, notice)  # a teacher's link opens any level
        notice = (notice + " " if notice else "") + t("unknown_level", lang, id=wanted[:20])
    return page(get_level(next_level_id(loaded.progress)), lang, loaded.progress, notice)


def choose_level(level_id, state, saved) -> dict:
    session = session_of(state)
    lang, progress = session["lang"], game.load(saved).progress
    current = get_level(session["level"])
    if level_id not in all_levels():
        return {"story": story(current, lang, progress, t("unknown_level", lang, id=str(level_id)[:20]))}
    level = get_level(level_id)
    if level.chapter not in game.unlocked_chapters(progress):
        return {
            "story": story(current, lang, progress, t("locked_level", lang)),
            "level_dd": {"choices": views.level_choices(progress, lang), "value": current.id},
        }
    return page(level, lang, progress)


# --- slider levels ------------------------------------------------------------------------------------


def _slider_context(state, saved, gates) -> tuple[Level, str, dict, list[float]] | None:
    session = session_of(state)
    level = get_level(session["level"])
    if not level.sliders:
        return None
    try:
        g = as_gates([0.0 if v is None else v for v in gates]).tolist()
    except ValueError:
        return None
    return level, session["lang"], game.load(saved).progress, g


def move(state, saved, *gates) -> dict:
    ctx = _slider_context(state, saved, gates)
    if ctx is None:
        return {}
    level, lang, progress, g = ctx
    return slider_outputs(level, lang, g, progress)[0]


def hint(state, saved, *gates) -> dict:
    ctx = _slider_context(state, saved, gates)
    if ctx is None:
        return {}
    level, lang, progress, g = ctx
    advice = api.hint(level.id, g, lang)
    if advice["done"]:
        return {"story": story(level, lang, progress, coach=t("hint_done", lang))}
    progress = game.use_hint(progress, level.id)
    way = t("hint_up" if advice["direction"] > 0 else "hint_down", lang)
    coach = t("hint_says", lang, head=head_name(advice["head"], lang), way=way)
    out, progress = slider_outputs(level, lang, g, progress)
    out.setdefault("saved", game.save(progress))
    out["story"] = story(level, lang, progress, coach=coach)
    return out


def demo(state, saved, *gates) -> Iterator[dict]:
    """The goddess's demo: real gradient ascent from the player's gates, one step a frame. Counts as two hints."""
    ctx = _slider_context(state, saved, gates)
    if ctx is None:
        return
    level, lang, progress, g = ctx
    progress = game.use_hints_up_to(progress, level.id, 2)
    path = ascent_path(api.level_reading(level, lang), g, level.target_for(lang), steps=40, goal=99.0)
    coach = story(level, lang, progress, coach=t("demo_says", lang))
    for step_gates, _ in path:
        frame, progress = slider_outputs(level, lang, step_gates, progress)
        frame.setdefault("saved", game.save(progress))
        frame.update({f"s{i}": v for i, v in enumerate(step_gates)}, story=coach)
        yield frame
        time.sleep(DEMO_DELAY_S)


def reveal(state, saved) -> dict:
    """The teacher's reveal: the target weights and the why; the level's stars are capped like two hints."""
    session = session_of(state)
    level, lang = get_level(session["level"]), session["lang"]
    progress = game.load(saved).progress
    if level.sliders:
        progress = game.use_hints_up_to(progress, level.id, 2)
        weights = "  ".join(f"{head_name(h, lang)} {v:.1f}" for h, v in zip(HEADS, level.target_for(lang), strict=True))
        coach = t("reveal_says", lang) + weights
    else:
        coach = ""
    return {"story": story(level, lang, progress, coach=coach, why=True), "saved": game.save(progress)}


def reset(state, saved) -> dict:
    ctx = _slider_context(state, saved, START_GATES)
    if ctx is None:
        return {}
    level, lang, progress, g = ctx
    return {**slider_outputs(level, lang, g, progress)[0], **{f"s{i}": v for i, v in enumerate(g)}}


# --- chapter 1 --------------------------------------------------------------------------------------


def _finish(level: Level, lang: str, progress: dict, earned: int) -> dict:
    """Record a chapter-1 result (score = share of the stars) and refresh what shows progress."""
    progress = game.record(progress, level.id, 100.0 * earned / 3, earned)
    return {
        "saved": game.save(progress),
        "header": views.header_html(lang, progress),
        "level_dd": {"choices": views.level_choices(progress, lang), "value": level.id},
        "story": story(level, lang, progress),
    }


def check_compare(state, saved, guess_one, guess_eight) -> dict:
    session = session_of(state)
    level, lang = get_level(session["level"]), session["lang"]
    if level.kind != "compare":
        return {}
    if not all(isinstance(v, int | float) and 0 <= v <= 99 for v in (guess_one, guess_eight)):
        return {"compare_result": notice_html("0–99")}
    _, truth = views.compare_html(level, lang)
    earned = compare_stars(int(guess_one), int(guess_eight), truth)
    sep = "、" if lang == "zh" else ", "
    text = t(
        "compare_result",
        lang,
        a=len(truth["one_head_sees"]),
        wa=sep.join(truth["one_head_sees"]),
        b=len(truth["eight_heads_see"]),
        wb=sep.join(truth["eight_heads_see"]),
    )
    out = _finish(level, lang, game.load(saved).progress, earned)
    out["compare_result"] = f'<div class="result">{star_text(earned)} {esc(text)}</div>'
    return out


def check_match(state, saved, *picks) -> dict:
    session = session_of(state)
    level, lang = get_level(session["level"]), session["lang"]
    if level.kind != "match":
        return {}
    answers = finding_heads(level, lang)
    chosen = [p if p in HEADS else None for p in picks[: len(answers)]]
    earned, right = match_stars(chosen, answers)
    lines = "".join(
        f"<li>{esc(f.says[lang])} — {t('right', lang) if ok else t('wrong', lang, head=head_name(a, lang))}</li>"
        for f, ok, a in zip(level.findings, right, answers, strict=True)
    )
    result = (
        f'<div class="result">{star_text(earned)} {t("match_result", lang, n=sum(right), m=len(right))}'
        f"<ul>{lines}</ul>{views.finding_rows(level, lang, answers)}</div>"
    )
    out = _finish(level, lang, game.load(saved).progress, earned)
    out["match_result"] = result
    return out


# --- progress codes ---------------------------------------------------------------------------------


def export_code(state, saved) -> dict:
    return {"code_box": game.export_code(game.load(saved).progress)}


def import_code(code, state, saved) -> dict:
    session = session_of(state)
    lang = session["lang"]
    try:
        progress = game.import_code(code)
    except ValueError:
        progress = game.load(saved).progress
        return {"story": story(get_level(session["level"]), lang, progress, t("bad_code", lang))}
    return page(get_level(session["level"]), lang, progress, t("imported", lang))

"""The teachers' box as HTML: the links of what is on screen (plain, exam, a teacher level's share link), the print
and export buttons, and the loader for a teacher's level or pack (its events are answered by ui/teacher/box.py)."""

import re
import urllib.parse

from dragon import api
from dragon.config import HEADS
from dragon.levels import claims, puzzle
from dragon.levels import teacher as teacher_levels
from dragon.levels.loader import Level
from dragon.levels.repair import Suggestion
from dragon.text.analyser import MAX_TOKENS
from ui.strings import head_name, t
from ui.widgets.draw import esc, shown_score

SAMPLE = """title: {zh: 静夜思, en: Quiet Night Thoughts}
lang: zh
text: 床前明月光，疑是地上霜。举头望明月，低头思故乡。
target: {emotion: 0.9, tone: 0.8, space: 0.3}
"""
FILES = ("worksheet", "key", "png", "report")


def link_params(level: Level | None, session: dict) -> dict:
    """The parameters of a link that opens what is on screen (the page adds its address and the language)."""
    if level is None:
        return {"sandbox": "1", **({"text": session["text"]} if session.get("text") else {})}
    if level.kind == "custom":
        return {"custom": session["custom"], "level": level.id}
    return {"level": level.id}


def body_html(level: Level | None, lang: str, session: dict) -> str:
    """The box's contents: links with copy buttons, the print and export buttons, the level loader."""

    def link(kind: str, label: str) -> str:
        return (
            f'<div class="tb-row"><label>{esc(label)}<input type="text" readonly class="tb-link" data-link="{kind}">'
            f'</label><button type="button" class="btn" data-copy="{kind}">{esc(t("tb_copy", lang))}</button></div>'
        )

    links = link("plain", t("tb_share" if level is not None and level.kind == "custom" else "tb_link", lang))
    if level is not None and level.sliders:
        links += link("exam", t("tb_exam", lang))
    files = [("png", "tb_png")]
    if level is not None:
        files = [("worksheet", "tb_worksheet"), ("key", "tb_key"), *files]
        if level.sliders:
            files.append(("report", "tb_report"))
    buttons = "".join(
        f'<button type="button" class="btn" data-file="{what}">{esc(t(key, lang))}</button>' for what, key in files
    )
    sample = "data:text/yaml;charset=utf-8," + urllib.parse.quote(SAMPLE)
    return (
        f'<div class="tb-links">{links}</div>'
        f'<p class="tb-class"><a class="btn primary" href="/class/teach?lang={lang}" target="_blank" rel="noopener">'
        f'{esc(t("tb_live_class", lang))}</a> <span class="note">{esc(t("tb_live_class_help", lang))}</span></p>'
        f'<div class="tb-files"><b>{esc(t("tb_files", lang))}</b> {buttons}</div>'
        f'<div class="tb-load"><b>{esc(t("tb_load_title", lang))}</b><p class="note">{esc(t("tb_load_help", lang))}</p>'
        f"<pre class=\"tb-sample\">{esc(SAMPLE)}</pre>"
        f'<label for="mhd-tb-source">{esc(t("tb_source", lang))}</label>'
        f'<textarea id="mhd-tb-source" data-field="source" rows="5" spellcheck="false" '
        f'maxlength="{teacher_levels.MAX_SOURCE_CHARS}"></textarea>'
        f'<div class="tb-row"><label class="btn file-btn">{esc(t("tb_file", lang))}'
        f'<input type="file" accept=".yaml,.yml,.json,.txt" class="tb-upload"></label>'
        f'<button type="button" class="btn primary" data-act="open">{esc(t("tb_open", lang))}</button>'
        f'<a class="btn" download="level.yaml" href="{esc(sample)}">{esc(t("tb_sample", lang))}</a></div></div>'
    )


def teacher_props(level: Level | None, lang: str, session: dict, message: str = "", opened: bool = False) -> dict:
    """The box for what is on screen, open when `opened` and otherwise as the teacher left it; hidden in an exam and in
    a live class's framed game (its answer key and reveal are not for the class)."""
    if session.get("exam") or session.get("class"):
        return {"body": "", "title": "", "params": {}, "message": "", "open": False}
    out = {"body": body_html(level, lang, session), "title": esc(t("tb_title", lang)),
           "params": link_params(level, session), "message": message}
    if opened:  # opened to show an answer; otherwise open or shut as the teacher left it (an answer landing after
        out["open"] = True  # they opened it must not shut it under their hand)
    return out


def errors_html(title: str, errors: list[str]) -> str:
    items = "".join(f"<li>{esc(e)}</li>" for e in errors[:20])
    more = f"<li>… (+{len(errors) - 20})</li>" if len(errors) > 20 else ""
    return f'<div class="refusal" role="alert"><b>{esc(title)}</b><ul>{items}{more}</ul></div>'




def reasons(checked: teacher_levels.Checked, lang: str) -> list[str]:
    """Why a teacher's level is refused, in the page's language where the engine measured it (a text longer than it
    reads, the puzzle conditions with their figures, the silent heads a target turns up); a fault of the file's own
    fields is said as the API says it, naming the field."""
    measured = ("puzzle:", "text: the dragon reads at most")  # said again below, from the measurement itself
    out = [e for e in checked.errors if not e.startswith(measured) and " has target " not in e]
    level, q = checked.level, checked.quality
    if level is not None:
        reading = teacher_levels.reading_of(level)
        if reading.analysis.truncated:
            out.insert(0, t("why_long", lang, n=MAX_TOKENS))
        target = level.target_for(level.text_lang)
        loud = claims.loudness(reading).tolist()
        for head, g in zip(HEADS, target, strict=True):
            if g >= claims.MUST_SPEAK and loud[HEADS.index(head)] < claims.SILENT:
                out.append(t("why_silent", lang, head=head_name(head, lang), g=f"{g:g}",
                             v=f"{loud[HEADS.index(head)]:.3f}"))
    if q is not None:
        checks = ((q["all_equal"] > puzzle.MAX_ALL_EQUAL, "why_equal", q["all_equal"], puzzle.MAX_ALL_EQUAL),
                  (q["random_median"] > puzzle.MAX_RANDOM_MEDIAN, "why_random", q["random_median"],
                   puzzle.MAX_RANDOM_MEDIAN),
                  (q["near_median"] < puzzle.MIN_NEAR_MEDIAN, "why_near", q["near_median"], puzzle.MIN_NEAR_MEDIAN),
                  (q["ascent_steps"] > puzzle.ASCENT_STEPS, "why_ascent", puzzle.ASCENT_GOAL, puzzle.ASCENT_STEPS))
        out += [t(key, lang, v=f"{v:.1f}", need=f"{need:g}") for failed, key, v, need in checks if failed]
    return out


def change_lines(s: Suggestion, lang: str) -> list[str]:
    """What a repair changed, in the page's language."""
    out = []
    for c in s.changes:
        if c["kind"] == "silent":
            out.append(t("sug_silent", lang, head=head_name(c["head"], lang), was=f"{c['was']:g}"))
        elif c["kind"] == "claim":
            claim = c["claim"]
            said = (t("sug_claim_silent", lang, head=head_name(claim["head"], lang)) if claim.get("silent") else
                    f"{head_name(claim['head'], lang)}: " + " / ".join(claim.get("words", []) + claim.get("alone", [])))
            out.append(t("sug_claim", lang, claim=said))
        elif c["kind"] == "added":
            out.append(t("sug_added", lang, head=head_name(c["head"], lang), now=f"{c['now']:g}"))
        else:
            pairs = " · ".join(f"{head_name(h, lang)} {c['was'].get(h, 0):g} → {c['now'].get(h, 0):g}" for h in HEADS
                               if c["was"].get(h, 0) != c["now"].get(h, 0))
            out.append(t("sug_sharp", lang, pairs=pairs))
    q = s.checked.quality  # shown as the game shows a score (floored to 0.1), so it is the number the level shows
    return [*out, t("sug_quality", lang, eq=f"{shown_score(q['all_equal']):.1f}", rnd=f"{shown_score(q['random_median']):.1f}")]


def open_link(code: str, level_id: str, lang: str, session: dict) -> str:
    """A link that opens a teacher level (or pack) in this page: one click."""
    params = {"custom": code, "level": level_id, "lang": lang, **({"projector": "1"} if session.get("projector") else {})}
    return "?" + urllib.parse.urlencode(params)


def repair_html(checked: list[teacher_levels.Checked], lang: str, session: dict) -> str:
    """Under a refusal: the nearest level (or pack) that passes, what changed in each, and one click to open it; or
    why none keeps the text."""
    if any(c.level is None for c in checked):
        return ""  # a field of the file is wrong: the refusal names it; the engine has nothing to repair yet
    fixes = [(c, api.repaired(c)) for c in checked]
    if any(not c.ok and s is None for c, s in fixes):
        return f'<p class="note repair-none">{esc(t("sug_none", lang))}</p>'
    levels = [c.level if c.ok else s.checked.level for c, s in fixes]
    try:
        code = teacher_levels.share_code(levels)
    except teacher_levels.TeacherLevelError:
        return f'<p class="note repair-none">{esc(t("sug_none", lang))}</p>'
    items = "".join(f"<li>{esc(line)}</li>" for c, s in fixes if s is not None for line in change_lines(s, lang))
    label = t("sug_open" if len(levels) == 1 else "sug_open_pack", lang)
    return (f'<div class="repair" role="status"><b>{esc(t("sug_title", lang))}</b><ul>{items}</ul>'
            f'<a class="btn primary" data-repair="1" href="{esc(open_link(code, levels[0].id, lang, session))}">'
            f"{esc(label)}</a></div>")


UNREADABLE = re.compile(r"^level: cannot be read as YAML or JSON \(line (\d+), column (\d+)\)$")


def said_error(error: str, lang: str) -> str:
    """A fault of the file, in the page's language where it is the reader's (the fields' faults name the field, as
    the API says them)."""
    found = UNREADABLE.match(error)
    return t("tb_unreadable", lang, line=found[1], col=found[2]) if found else error


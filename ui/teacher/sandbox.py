"""The sandbox: any text in Chinese or English, the eight real maps and each head's top words, live sliders over the
fused output; for English the real pretrained model's 72 heads on one word's row; and a level made from it all."""

import time

from dragon import api, game
from dragon.config import HEADS
from dragon.engine import Reading
from dragon.lessons import crystal_ball as crystal_lesson
from dragon.levels import teacher as teacher_levels
from dragon.text.analyser import MAX_TOKENS
from ui.page import hidden_parts, page
from ui.rooms import slider_views as views
from ui.rooms import sliders as play
from ui.session import (
    MAX_SANDBOX_CHARS,
    SANDBOX,
    SANDBOX_LANGS,
    START_GATES,
    EventData,
    Gates,
    Saved,
    State,
    carried,
    clean_gates,
    session_of,
)
from ui.strings import t
from ui.teacher.view import errors_html, reasons, repair_html, teacher_props
from ui.top import sandbox_top
from ui.widgets.draw import esc
from ui.widgets.heads_grid import detail_box, look_attrs, neighbour_tag, ranking_html
from ui.widgets.heatmap import row_alt
from ui.widgets.tensors import attention_strip, row_bars, words_key

MAX_TITLE = teacher_levels.MAX_TITLE_CHARS


def reading_of(text: str, tlang: str) -> Reading | None:
    try:
        return api.text_reading(text, tlang)
    except ValueError:
        return None


def form_html(lang: str, text: str, tlang: str, said: str = "") -> str:
    """The text box, its language and the read button, with the cap said, and under the button what the reading met
    (`said`: the text cut, empty, or setting no head apart), in view where the button was pressed, on a phone too."""
    options = "".join(
        f'<option value="{v}"{" selected" if v == tlang else ""}>{esc(t(key, lang))}</option>'
        for v, key in zip(SANDBOX_LANGS, ("sb_auto", "sb_lang_zh", "sb_lang_en"), strict=True)
    )
    return (
        f'<div class="sb-form"><label for="mhd-sb-text">{esc(t("sb_text_label", lang))}</label>'
        f'<textarea id="mhd-sb-text" data-field="text" rows="3" maxlength="{4 * MAX_SANDBOX_CHARS}">{esc(text)}</textarea>'
        f'<div class="sb-row"><label>{esc(t("sb_lang_label", lang))} <select data-field="tlang">{options}</select></label>'
        f'<button type="button" class="btn primary" data-act="read" id="mhd-sb-read">{esc(t("sb_read", lang))}</button></div>'
        + (f'<p class="notice sb-said" role="status">{esc(said)}</p>' if said else "") +
        f'<p class="note">{esc(t("sb_cap", lang, chars=MAX_SANDBOX_CHARS, tokens=MAX_TOKENS))}</p></div>'
    )


def make_html(lang: str, message: str = "") -> str:
    """Make a level of it: titles and an explanation (optional), the sliders as the target."""

    def field(name: str, key: str, value: str = "") -> str:
        return (f'<label>{esc(t(key, lang))}<input type="text" data-field="{name}" maxlength="{MAX_TITLE}" '
                f'value="{esc(value)}"></label>')

    return (
        f'<div class="sb-make"><b>{esc(t("sb_make_title", lang))}</b><p class="note">{esc(t("sb_make_help", lang))}</p>'
        f'<div class="sb-row">{field("title_zh", "sb_name_zh")}{field("title_en", "sb_name_en")}</div>'
        f'<label>{esc(t("sb_explain", lang))}<textarea data-field="explanation" rows="2" '
        f'maxlength="{teacher_levels.MAX_NOTE_CHARS}"></textarea></label>'
        f'<button type="button" class="btn primary" data-act="make" id="mhd-sb-make">{esc(t("sb_make", lang))}</button>'
        f'<div class="sb-msg" role="status">{message}</div></div>'
    )


def body_html(lang: str, text: str, tlang: str, reading: Reading | None, message: str = "", crystal: str = "") -> str:
    parts = []
    if reading is None:
        return ""
    parts.append(f'<div class="sb-top"><b>{esc(t("sb_top_title", lang))}</b>{views.top_words_html(reading, lang)}</div>')
    parts.append(crystal or crystal_form(lang, reading, text))
    parts.append(make_html(lang, message))
    return "".join(parts)


def crystal_form(lang: str, reading: Reading, text: str) -> str:
    """English text: pick a word and see its row in the real model's 72 heads (the words the model's own tokenizer
    gives: "it's" is it / ' / s there); Chinese, or a text longer than the model reads: say why not."""
    title = f'<b>{esc(t("sb_words_title", lang))}</b>'
    if reading.analysis.lang != "en":
        return f'<div class="sb-model">{title}<p class="note">{esc(t("sb_en_only", lang))}</p></div>'
    model_words = crystal_lesson.words_of(text)
    pieces = crystal_lesson.pieces_of(model_words)
    if len(model_words) > crystal_lesson.MAX_WORDS or pieces > crystal_lesson.MAX_PIECES:
        said = t("sb_model_long", lang, most=crystal_lesson.MAX_WORDS, pieces=crystal_lesson.MAX_PIECES,
                 n=len(model_words), p=pieces)
        return f'<div class="sb-model">{title}<p class="note">{esc(said)}</p></div>'
    words = [w for w in dict.fromkeys(w.text for w in model_words if w.text[:1].isalnum())]
    options = "".join(f'<option value="{esc(w)}">{esc(w)}</option>' for w in words)
    return (
        f'<div class="sb-model"><b>{esc(t("sb_words_title", lang))}</b><div class="sb-row">'
        f'<label>{esc(t("sb_word_label", lang))} <select data-field="word">{options}</select></label>'
        f'<label>{esc(t("sb_target_label", lang))} <select data-field="target">'
        f'<option value="">{esc(t("sb_target_any", lang))}</option>{options}</select></label>'
        f'<button type="button" class="btn" data-act="word" id="mhd-sb-word">{esc(t("sb_word_button", lang))}</button>'
        "</div></div>"
    )


def sandbox_page(lang: str, progress: dict, keep: dict, notice: str = "", gates: list[float] | None = None,
                 message: str = "", said: str = "") -> dict:
    """The whole page in the sandbox (keep: what the session carries; its text and language are the sandbox's):
    `notice` at the page's top, `said` under the read button with what the reading itself met."""
    session = {**keep, "level": SANDBOX, "lang": lang}
    text, tlang = session.get("text", ""), session.get("tlang", "auto")
    reading = reading_of(text, tlang)
    g = gates or START_GATES
    met = [said]
    if reading is None and text.strip():
        met.append(t("sb_empty", lang))
    elif reading is not None:
        if reading.analysis.truncated:  # as the token line's end says it, far down a phone's screen after 128 tokens
            met.append(t("truncated", lang, n=MAX_TOKENS))
        if reading.heads_alike:  # emoji or numbers alone: eight identical maps, and why
            met.append(t("sb_heads_alike", lang))
    top = sandbox_top(lang, progress, session, reading, notice, form_html(lang, text, tlang, " ".join(m for m in met if m)))
    out = {"session": session, "saved": game.save(progress), "top": top}
    out.update(hidden_parts())
    out["sandbox"] = {"body": body_html(lang, text, tlang, reading, message), "label": esc(t("sb_title", lang)),
                      "ack": time.time_ns()}
    out["teacher"] = teacher_props(None, lang, session)  # a teacher who opens the sandbox to paste a level finds it
    if reading is None:
        out["panel"], out["maps"] = dict(play.HIDDEN), ""
    else:
        out["panel"] = play.free_panel_props(reading, lang, g, text, tlang)
        if gates is None:  # opened afresh (not a language switch keeping the sliders): the server's 0.5 each
            out["panel"]["opened"] = time.time_ns()
        out["maps"] = views.maps_html(reading, lang, scored=False)
    return out


def _gates(gates: Gates) -> list[float]:
    try:
        return clean_gates(gates)
    except ValueError:
        return list(START_GATES)


def read_text(state: State, saved: Saved, gates: Gates, data: EventData) -> dict:
    """The read button (event data {text, tlang}): the dragon reads the text; the sliders stay where they are."""
    session = session_of(state)
    data = data if isinstance(data, dict) else {}
    text = data.get("text") if isinstance(data.get("text"), str) else ""
    tlang = data.get("tlang") if data.get("tlang") in SANDBOX_LANGS else "auto"
    keep = {**carried(session), "text": text.strip()[:MAX_SANDBOX_CHARS], "tlang": tlang}
    cut = len(text.strip()) > MAX_SANDBOX_CHARS
    said = (t("sb_cut_chars", session["lang"], chars=MAX_SANDBOX_CHARS) if cut
            else "" if text.strip() else t("sb_empty", session["lang"]))
    return sandbox_page(session["lang"], game.load(saved).progress, keep, gates=_gates(gates), said=said)


def make_level(state: State, saved: Saved, gates: Gates, data: EventData) -> dict:
    """Make a level of the sandbox's text with the sliders as its target: checked as any level is; a good one opens
    (its share link in the teachers' box), a refused one stays in the sandbox with every reason and its figures."""
    session = session_of(state)
    lang = session["lang"]
    data = data if isinstance(data, dict) else {}
    reading = reading_of(session["text"], session["tlang"])
    progress = game.load(saved).progress
    g = _gates(gates)
    if reading is None:
        return sandbox_page(lang, progress, carried(session), gates=g)

    def given(key: str, default: str) -> str:
        value = data.get(key)
        return value.strip()[:MAX_TITLE] if isinstance(value, str) and value.strip() else default

    level = {
        "title": {"zh": given("title_zh", t("sb_default_zh", "zh")), "en": given("title_en", t("sb_default_en", "en"))},
        "lang": reading.analysis.lang, "text": session["text"],
        "target": {h: v for h, v in zip(HEADS, g, strict=True) if v > 0},
    }
    explanation = data.get("explanation")
    if isinstance(explanation, str) and explanation.strip():
        level["explanation"] = explanation.strip()[: teacher_levels.MAX_NOTE_CHARS]
    checked = teacher_levels.check_data(level)
    try:
        if not checked.ok:
            raise teacher_levels.TeacherLevelError(reasons(checked, lang))
        made = checked.level
        code = teacher_levels.share_code([made])
    except teacher_levels.TeacherLevelError as err:
        message = errors_html(t("sb_refused", lang), err.errors) + repair_html([checked], lang, session)
        return sandbox_page(lang, progress, carried(session), gates=g, message=message)
    keep = {**carried(session), "custom": code}
    out = page(made, lang, progress, t("tb_opened", lang, n=1), keep=keep)
    out["teacher"] = teacher_props(made, lang, out["session"], esc(t("tb_opened", lang, n=1)), opened=True)
    return out


def crystal_html(lang: str, reading: Reading, text: str, word: str, target: str | None = None) -> str:
    """One word's row in all 72 heads of the real model, as 4-1 draws it: the head sending it furthest (or most to
    `target`), the heads ranked by that link, and any head clicked or keyed to read out with its numbers."""
    r = api.crystal_ball(text, word, target or None)
    best = r["best"]
    row = r["attention"][best["layer"]][best["head"]]
    grid = (words_key(r["tokens"], best["position"], r["position"]) + strips_grid(r, lang, best_shown=True)
            + detail_box(r, lang) + ranking_html(r, lang, best["position"])
            + f'<p class="note">{esc(t("sb_model_row", lang, head=best["name"], word=r["word"]))}</p>'
            + row_bars(r["tokens"], row, "#1f4e9c"))
    said = t("sb_model_best", lang, word=r["word"], l=best["layer"] + 1, h=best["head"] + 1, to=best["token"],
             w=f"{best['weight']:.2f}")
    form = crystal_form(lang, reading, text)
    form = form.replace(f'<option value="{esc(word)}">', f'<option value="{esc(word)}" selected>', 1)
    if target:  # the second list (the target's) keeps its choice too
        at = form.index('data-field="target"')
        form = form[:at] + form[at:].replace(f'<option value="{esc(target)}">', f'<option value="{esc(target)}" selected>', 1)
    help_line = f'<p class="note">{esc(t("sb_model_help", lang, word=r["word"]))}</p>'
    return form.replace("</div></div>", f'</div><p class="result">{esc(said)}</p>{help_line}{grid}</div>', 1)


def pick_word(state: State, saved: Saved, data: EventData) -> dict:
    """The 72-head view (event data {word}): the word's row in every head of the real model (English only)."""
    session = session_of(state)
    lang = session["lang"]
    reading = reading_of(session["text"], session["tlang"])
    word = data.get("word") if isinstance(data, dict) else None
    target = data.get("target") if isinstance(data, dict) else None
    offered = [w.text for w in crystal_lesson.words_of(session["text"])] if reading is not None else []
    if reading is None or reading.analysis.lang != "en" or word not in offered:
        return {}
    if target in ("", None) or target == word or target not in offered:
        target = None  # "any word" (or a word not in the text: the list only offers the text's words)
    try:
        crystal = crystal_html(lang, reading, session["text"], word, target)
    except ValueError as err:
        crystal = crystal_form(lang, reading, session["text"]) + errors_html(str(err), [])
    body = body_html(lang, session["text"], session["tlang"], reading, crystal=crystal)
    return {"sandbox": {"body": body, "ack": time.time_ns()}}


def strips_grid(r: dict, lang: str, best_shown: bool = False) -> str:
    """The word's row in each of the model's heads as a strip, each read out in words (4-1's ui/widgets/heads_grid.py draws
    pick buttons instead: here nothing is picked); the head sending the word furthest is marked when `best_shown`."""
    best = (r["best"]["layer"], r["best"]["head"]) if best_shown else None
    target = r["best"]["position"] if best_shown else None
    cells = []
    for li in range(r["layers"]):
        for hi in range(r["heads"]):
            name = f"L{li + 1} H{hi + 1}"
            row = r["attention"][li][hi]
            cls = "cb-map best" if (li, hi) == best else "cb-map"
            label = row_alt(name, r["tokens"], row, skip=r["position"])
            tag = f'<span class="cb-tag">{esc(t("c_tag_best", lang))}</span>' if (li, hi) == best else ""
            cells.append(f'<button type="button" class="{cls}" data-act="look" aria-label="{esc(label)}" data-head="{name}"'
                         f'{look_attrs(row, r["position"], lang)}><span class="cb-name">{name}</span>'
                         f'{attention_strip(row, target, r["position"])}{neighbour_tag(row, r["position"], lang)}{tag}'
                         "</button>")
    return f'<div class="cb-grid" role="group" aria-label="{esc(t("sb_words_title", lang))}">{"".join(cells)}</div>'

"""The page's custom gr.HTML components: templates here, their small scripts in assets/ui/*.js.

Few components on purpose: Gradio refreshes every component that is an output of any event on each event, so
the whole slider panel (sliders, dragon, gauge, stars, comparison, buttons, feedback) is one component, and a
slider move goes to the server as one small request (a server function), not as a Gradio event."""

from collections.abc import Callable
from pathlib import Path

import gradio as gr

from dragon import game
from dragon.config import HEADS
from ui.strings import HEAD_COLORS, STRINGS

ASSETS = Path(__file__).resolve().parent.parent / "assets" / "ui"


def script(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def _slider_row(i: int) -> str:
    return (
        f'<div class="srow ${{rowcls[{i}]}}" data-head="{HEADS[i]}" style="--c:{HEAD_COLORS[HEADS[i]]}">'
        f'<label class="sname" for="mhd-s{i}">${{names[{i}]}}</label>'
        f'<input class="range" id="mhd-s{i}" type="range" min="0" max="1" step="0.01" value="${{value[{i}]}}" '
        f'data-i="{i}" aria-describedby="mhd-x{i}">'
        f'<input class="num" type="number" min="0" max="1" step="0.01" value="${{value[{i}]}}" data-i="{i}" '
        f'aria-label="${{numlabels[{i}]}}">'
        f'<div class="smark" id="mhd-x{i}">${{marks[{i}]}}</div><div class="smsg" role="alert"></div></div>'
    )


# The gauge and the comparison are drawn by the panel's script into [data-live] boxes (from the `gauge` and
# `compare` properties, or from a live answer), so a slider move never re-renders this template.
PANEL_TEMPLATE = (
    '<section class="mhd-panel ${kind}" ${kind ? "" : "hidden"} aria-label="${title}" data-bad="${bad_box}">'
    '<div class="summary"><div class="score-row">'
    '<div class="scorebox ${won}"><div data-live="gauge"></div></div>'
    '<div class="dragon-box ${won}">${dragon}</div></div>'
    '<div class="comparison" data-live="compare"></div><div class="sr-only" aria-live="polite" data-live="say"></div></div>'
    '<div class="controls"><div class="sliders">'
    + "".join(_slider_row(i) for i in range(len(HEADS)))
    # the won line (its next-level button) comes after the sliders, in the order the keyboard goes; its slot is always
    # there, so a redraw that fills it leaves the focused control in place
    + '</div><div class="won-slot">${next}</div>'
    '<div class="buttons">${actions}</div><div class="feedback" aria-live="polite">${feedback}</div></div>'
    "</section>"
)
PANEL_PROPS = {
    "kind": "",  # "silhouette" or "picture" on a slider level; "" hides the panel
    "level": "",
    "lang": "zh",
    "saved": "",  # the player's signed progress, sent along with each slider move
    "title": "",
    "bad_box": "",
    "names": [""] * len(HEADS),
    "numlabels": [""] * len(HEADS),
    "rowcls": [""] * len(HEADS),
    "marks": [""] * len(HEADS),
    "gauge": "",
    "next": "",
    "won": "",
    "dragon": "",
    "compare": "",
    "say": "",
    "actions": "",
    "feedback": "",
    "ack": 0,  # changes with every button's answer: the script brings the feedback into view
    "opened": 0,  # changes each time a level (or the sandbox) is opened: the script takes the server's sliders then
    "code": "",  # a teacher level or the sandbox: the share code (or sandbox text) the live answer reads
}

TOP_TEMPLATE = (
    '<div class="mhd-top">${header}<div class="top-controls">'
    '<label class="pick"><span>${level_label}</span><select class="level-pick">${options}</select></label>'
    '<div class="langs" role="group" aria-label="${language_label}">'
    '<button type="button" data-lang="zh" aria-pressed="${lang === \'zh\'}" lang="zh-CN">中文</button>'
    '<button type="button" data-lang="en" aria-pressed="${lang === \'en\'}" lang="en">English</button></div>'
    '<label class="proj"><input type="checkbox" class="projector-toggle"> <span>${projector_label}</span></label>'
    "</div>${notice}${story}</div>"
)
# what the top says until the page's first view comes (the server reads the levels and the dragon once at start,
# after serving the page): a wait in both languages, as the language is not known yet
BOOT_WAIT = (f'<p class="notice boot-wait" role="status"><span lang="zh-CN">{STRINGS["boot_wait"][0]}</span> · '
             f'<span lang="en">{STRINGS["boot_wait"][1]}</span></p>')
TOP_PROPS = {
    "level": "",
    "lang": "zh",
    "header": BOOT_WAIT,
    "options": "",
    "notice": "",
    "story": "",
    "level_label": "",
    "language_label": "",
    "projector_label": "",
    "link": {},  # the link's parameters for what is on screen (level, and a teacher's code, exam, sandbox text)
}

QUIZ_TEMPLATE = '<section class="mhd-quiz" ${body ? "" : "hidden"}>${body}</section>'
LAB_TEMPLATE = '<section class="mhd-lab lab-${kind}" ${body ? "" : "hidden"} aria-label="${label}">${body}</section>'
LAB_PROPS = {"kind": "", "label": "", "body": "", "ack": 0}  # ack changes with every answer
CODES_TEMPLATE = (
    '<details class="mhd-codes" ${open ? "open" : ""}><summary>${title}</summary><p class="note">${help}</p>'
    '<label for="mhd-code">${code_label}</label><textarea id="mhd-code" rows="3" spellcheck="false"></textarea>'
    '<div class="code-buttons"><button type="button" data-act="export">${export_label}</button>'
    '<button type="button" data-act="import">${import_label}</button></div>'
    '<div class="code-msg" id="mhd-code-msg" role="status">${message}</div>'
    # a code over other progress: the question (the message above), what each holds, replace or keep
    '<div class="code-ask" role="group" aria-labelledby="mhd-code-msg" ${ask ? "" : "hidden"}>'
    '<ul><li>${here}</li><li>${there}</li></ul><div class="code-buttons">'
    '<button type="button" data-act="replace">${replace_label}</button>'
    '<button type="button" data-act="keep">${keep_label}</button></div></div></details>'
)
CODES_PROPS = {"open": False, "title": "", "help": "", "code_label": "", "export_label": "", "import_label": "",
               "message": "", "code": "", "max_code": game.MAX_CODE_CHARS,
               # the question before a code replaces other progress (ui/handlers.py import_code)
               "ask": False, "here": "", "there": "", "pending": "", "replace_label": "", "keep_label": ""}


def panel(live: Callable) -> gr.HTML:
    """The goddess's control panel; `live` is the server function a slider move calls."""
    return gr.HTML(
        [0.5] * len(HEADS), html_template=PANEL_TEMPLATE, js_on_load=script("touch_guard.js") + script("panel.js"), elem_id="panel",
        server_functions=[live], apply_default_css=False, **PANEL_PROPS,
    )


def top() -> gr.HTML:
    """Header, level picker, language and projector switches, notices, the level's story and tokens."""
    return gr.HTML(
        html_template=TOP_TEMPLATE, js_on_load=script("top.js"), elem_id="top", apply_default_css=False, **TOP_PROPS
    )


def quiz() -> gr.HTML:
    """Chapter 1's panels: one head or eight (1-1) and which head found it (1-2)."""
    return gr.HTML(
        html_template=QUIZ_TEMPLATE, js_on_load=script("quiz.js"), elem_id="quiz", apply_default_css=False, body=""
    )


def lab(events: list[str], wait: Callable) -> gr.HTML:
    """The lab levels' panel (chapters 3–5): the room on screen (ui/rooms/registry.py) draws it and answers its buttons.
    `events`: every event its buttons may send (Gradio registers a custom event it finds named in the script);
    `wait`: the server function the panel asks about a run on its way in the server's lane."""
    names = ", ".join(f"'{e}'" for e in events)
    js = f"const EVENTS = [{names}];\n" + script("heads_detail.js") + script("lab.js")
    return gr.HTML(html_template=LAB_TEMPLATE, js_on_load=js, elem_id="lab", server_functions=[wait],
                   apply_default_css=False, **LAB_PROPS)


def maps() -> gr.HTML:
    """The eight heads' labelled attention maps under the panel."""
    return gr.HTML("", elem_id="maps", js_on_load=None, apply_default_css=False)


def codes() -> gr.HTML:
    """Export and import of the progress code, with its message beside the buttons."""
    return gr.HTML(
        html_template=CODES_TEMPLATE, js_on_load=script("codes.js"), elem_id="codes", apply_default_css=False,
        **CODES_PROPS,
    )


SANDBOX_TEMPLATE = '<section class="mhd-sandbox" ${body ? "" : "hidden"} aria-label="${label}">${body}</section>'
SANDBOX_EVENTS = ["make", "word"]  # the sandbox's buttons (the script names them, so Gradio registers them)


def sandbox() -> gr.HTML:
    """The sandbox's text box, each head's top words, the real model's 72 heads (English) and 'make a level'."""
    names = ", ".join(f"'{e}'" for e in SANDBOX_EVENTS)
    js = f"const EVENTS = [{names}];\n" + script("heads_detail.js") + script("sandbox.js")
    return gr.HTML(html_template=SANDBOX_TEMPLATE, js_on_load=js, elem_id="sandbox", apply_default_css=False,
                   body="", label="", ack=0)


TEACHER_TEMPLATE = (
    '<details class="mhd-teacher" ${body ? "" : "hidden"} ${open ? "open" : ""}><summary>${title}</summary>'
    '${body}<div class="tb-msg" role="status">${message}</div></details>'
)
TEACHER_PROPS = {"body": "", "title": "", "params": {}, "message": "", "open": False, "file": {}}
TEACHER_EVENTS = ["file", "open"]  # not "load": Gradio runs every event of that name as the page starts


def teacher() -> gr.HTML:
    """The teachers' box: links (plain, exam, share), worksheet, PNG of the maps, report, a level file to open."""
    names = ", ".join(f"'{e}'" for e in TEACHER_EVENTS)
    js = f"const EVENTS = [{names}];\n" + script("teacher.js")
    return gr.HTML(html_template=TEACHER_TEMPLATE, js_on_load=js, elem_id="teacher", apply_default_css=False,
                   **TEACHER_PROPS)

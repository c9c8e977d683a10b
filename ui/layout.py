"""The page's components, built inside a gr.Blocks; returns them by name for the app to wire."""

import gradio as gr

from ui import components
from ui.rooms import registry as rooms
from ui.rooms.sliders import live, on_event_loop
from ui.rooms.waits import wait
from ui.strings import i18n_key


def build(i18n: gr.I18n) -> dict[str, gr.components.Component]:
    c: dict = {}
    c["session"] = gr.State({})
    c["saved"] = gr.BrowserState(None, storage_key="multi-head-dragon-progress", secret="multi-head-dragon")
    c["boot"] = gr.Textbox(visible=False)
    c["top"] = components.top()
    c["panel"] = components.panel(on_event_loop(live))  # a slider move, answered on the event loop
    c["sandbox"] = components.sandbox()  # under the sliders: each head's words, the real model, make a level
    c["quiz"] = components.quiz()
    c["lab"] = components.lab([*rooms.EVENTS, "next"], wait)  # "next": the next level, a page event
    c["maps"] = components.maps()
    c["teacher"] = components.teacher()
    c["codes"] = components.codes()
    gr.Markdown(f"<small>{i18n(i18n_key('api_note'))}</small>", elem_id="api-note")
    return c

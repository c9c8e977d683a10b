"""The page's components, built inside a gr.Blocks; returns them by name for the app to wire."""

import gradio as gr

from dragon.config import HEADS

from .handlers import MAX_FINDINGS, panels_style
from .text import head_label


def build(i18n: gr.I18n) -> dict[str, gr.components.Component]:
    c: dict = {}
    c["session"] = gr.State({})
    c["saved"] = gr.BrowserState(None, storage_key="multi-head-dragon-progress", secret="multi-head-dragon")
    c["boot"] = gr.Textbox(visible=False)
    with gr.Row(equal_height=True):
        with gr.Column(scale=5):
            c["header"] = gr.HTML(elem_id="header")
        with gr.Column(scale=2, min_width=200):
            c["lang_radio"] = gr.Radio(
                [("中文", "zh"), ("English", "en")], value=None, label=i18n("language"), elem_id="lang-radio"
            )
        with gr.Column(scale=2, min_width=160):
            c["projector"] = gr.Checkbox(label=i18n("projector"), elem_id="projector-box")
    c["level_dd"] = gr.Dropdown(choices=[], label=i18n("level"), elem_id="level-dd")
    # notice, narration, the text's tokens, the reveal of why, and which panel shows (a <style>): one component,
    # because Gradio refreshes every output component's loading state on every event
    c["story"] = gr.HTML(panels_style(), elem_id="story")  # all panels hidden until the first level opens

    with gr.Column(elem_id="slider-panel"):
        with gr.Row():
            with gr.Column(scale=5):
                c["dragon"] = gr.HTML(elem_id="dragon")
                for i, head in enumerate(HEADS):
                    c[f"s{i}"] = gr.Slider(
                        0, 1, value=0.5, step=0.01, label=i18n(f"head_{head}"), elem_id=f"slider-{head}",
                        elem_classes=["head-slider"], buttons=None,
                    )  # fmt: skip
                with gr.Row():
                    c["hint_btn"] = gr.Button(i18n("hint"), elem_id="hint-btn")
                    c["demo_btn"] = gr.Button(i18n("demo"), elem_id="demo-btn")
                    c["reset_btn"] = gr.Button(i18n("reset"), elem_id="reset-btn")
                    c["reveal_btn"] = gr.Button(i18n("reveal"), variant="secondary", elem_id="reveal-btn")
            with gr.Column(scale=5):
                c["gauge"] = gr.HTML(elem_id="gauge")
                c["target_view"] = gr.HTML(elem_id="target-view")
        c["maps"] = gr.HTML(elem_id="maps")

    with gr.Column(elem_id="compare-panel"):
        c["compare_view"] = gr.HTML(elem_id="compare-maps")
        with gr.Row():
            c["guess_one"] = gr.Number(
                label=i18n("one_dragon"), precision=0, minimum=0, maximum=99, elem_id="guess-one"
            )
            c["guess_eight"] = gr.Number(
                label=i18n("eight_dragon"), precision=0, minimum=0, maximum=99, elem_id="guess-eight"
            )
            c["compare_btn"] = gr.Button(i18n("check"), variant="primary", elem_id="compare-btn")
        c["compare_result"] = gr.HTML(elem_id="compare-result")

    with gr.Column(elem_id="match-panel"):
        head_choices = [(head_label(i, "zh"), h) for i, h in enumerate(HEADS)]  # "⑤ 时序头 · Time": both languages
        for i in range(MAX_FINDINGS):
            c[f"pick{i}"] = gr.Dropdown(choices=head_choices, label="", elem_id=f"pick-{i}")
        c["match_btn"] = gr.Button(i18n("check"), variant="primary", elem_id="match-btn")
        c["match_result"] = gr.HTML(elem_id="match-result")

    with gr.Accordion(i18n("progress"), open=False, elem_id="progress-acc"):
        with gr.Row():
            c["code_box"] = gr.Textbox(label=i18n("code"), max_lines=2, elem_id="code-box")
            with gr.Column(min_width=160):
                c["export_btn"] = gr.Button(i18n("export"), elem_id="export-btn")
                c["import_btn"] = gr.Button(i18n("import"), elem_id="import-btn")
    gr.Markdown(f"<small>{i18n('api_note')}</small>")
    return c

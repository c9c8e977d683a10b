"""Yardsticks for benchmarks/app.py: a bare Gradio echo (one slider into a textbox), and, for context, a bare
page with the game's input shape (eight sliders into one HTML output) and nothing else."""

import os

import gradio as gr


def echo(value: float) -> str:
    return f"{value:.2f}"


def total(*values: float) -> str:
    return f"<span class='sum'>{sum(values):.2f}</span>"


with gr.Blocks() as demo:
    slider = gr.Slider(0, 1, value=0.5, step=0.01, elem_id="echo-slider")
    out = gr.Textbox(elem_id="echo-out")
    slider.input(echo, slider, out, trigger_mode="always_last", show_progress="hidden", api_name="echo")

    eight = [gr.Slider(0, 1, value=0.5, step=0.01, elem_id=f"eight-{i}") for i in range(8)]
    eight_out = gr.HTML(elem_id="eight-out")
    for s in eight:
        s.input(total, eight, eight_out, trigger_mode="always_last", show_progress="hidden", api_visibility="private")

if __name__ == "__main__":
    demo.queue(default_concurrency_limit=8).launch(
        server_name="127.0.0.1", server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7861")), quiet=True
    )

"""多头龙的秘密 · The Multi-Head Dragon — the Gradio app: builds the page and wires it to dragon/ (no logic here)."""

import functools
import inspect
import os
import sys
from pathlib import Path

import gradio as gr

import dragon
from dragon import api as core_api
from dragon.config import HEADS
from dragon.levels import LevelError, load_levels
from ui import handlers
from ui.layout import build
from ui.text import i18n_tables

UI_ASSETS = Path(__file__).resolve().parent / "assets" / "ui"
BOOT_JS = "(boot, saved) => [JSON.stringify(window.__dragon || {}), saved]"
LANG_JS = """(lang) => { if (!lang) return;
  localStorage.setItem('dragon-lang', lang);
  const url = new URL(location.href); url.searchParams.set('lang', lang); location.href = url.toString(); }"""
PROJECTOR_JS = """(on) => { localStorage.setItem('dragon-projector', on ? '1' : '0');
  document.body.classList.toggle('projector', on);
  const url = new URL(location.href); url.searchParams.set('projector', on ? '1' : '0');
  history.replaceState(null, '', url.toString()); }"""


PROPS = {"level_dd", *(f"pick{i}" for i in range(handlers.MAX_FINDINGS))}  # handlers give these a dict of properties


def as_update(name: str, value):
    """Handlers speak plain values; a component whose properties change (not just its value) gets a gr.update."""
    return gr.update(**value) if name in PROPS else value


def wire(c: dict, fn, outputs: list[str]):
    """Wrap a handler returning {name: value} (or yielding such dicts) into Gradio's output tuple."""

    def shape(result: dict):
        return tuple(as_update(name, result[name]) if name in result else gr.skip() for name in outputs)

    if inspect.isgeneratorfunction(fn):  # stream every frame

        def streamed(*args):
            for frame in fn(*args):
                yield shape(frame)

        return streamed, [c[n] for n in outputs]

    def single(*args):
        return shape(fn(*args))

    return single, [c[n] for n in outputs]


def api_error(fn):
    """Public endpoints: bad input becomes a gr.Error with the engine's clear message, never a traceback."""

    @functools.wraps(fn)  # keeps the typed signature that gr.api documents
    def wrapped(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ValueError as err:
            raise gr.Error(str(err)) from None

    return wrapped


def levels() -> list[dict]:
    """All levels: id, chapter, kind (poem / paper / dialogue / mixed / compare / match) and title (zh, en)."""
    return core_api.levels()


def play(level_id: str, gates: list[float], lang: str = "zh") -> dict:
    """Score eight gates (grammar … context, each 0–1) on a slider level: score 0–100 and stars 0–3."""
    return core_api.play(level_id, gates, lang)


def hint(level_id: str, gates: list[float], lang: str = "zh") -> dict:
    """The gradient's hint: head to move, direction (+1 / -1) and a better gate vector."""
    return core_api.hint(level_id, gates, lang)


def explain(level_id: str, lang: str = "zh") -> dict:
    """A slider level's answer: text, target gates, why, and the narration's claims with the real attention
    each claimed word receives."""
    return core_api.explain(level_id, lang)


def analyze(text: str, lang: str = "auto") -> dict:
    """The eight heads' real attention on any text (zh or en): tokens, heads, attention 8×T×T, top tokens."""
    return dragon.analyze(text, lang)


PAGE = [
    "session", "header", "saved", "level_dd", "story", "dragon", "gauge", "target_view", "maps",
    *(f"s{i}" for i in range(8)), "compare_view", "guess_one", "guess_eight", "compare_result",
    *(f"pick{i}" for i in range(handlers.MAX_FINDINGS)), "match_result",
]  # fmt: skip
MOVE = ["gauge", "target_view", "story", "saved", "header", "level_dd"]
SLIDERS = [f"s{i}" for i in range(len(HEADS))]


def build_app() -> gr.Blocks:
    i18n = gr.I18n(**i18n_tables())
    with gr.Blocks(title="多头龙的秘密 · The Multi-Head Dragon") as demo:
        c = build(i18n)
        sliders = [c[n] for n in SLIDERS]
        fn, out = wire(c, handlers.boot, PAGE)
        demo.load(fn, [c["boot"], c["saved"]], out, js=BOOT_JS, api_visibility="private")
        fn, out = wire(c, handlers.choose_level, PAGE)
        c["level_dd"].input(fn, [c["level_dd"], c["session"], c["saved"]], out, api_visibility="private")
        fn, out = wire(c, handlers.move, MOVE)
        for i, s in enumerate(sliders):  # the first is callable as /move (undocumented): the load benchmark uses it
            s.input(
                fn, [c["session"], c["saved"], *sliders], out, trigger_mode="always_last", show_progress="hidden",
                api_name="move" if i == 0 else None, api_visibility="undocumented" if i == 0 else "private",
            )  # fmt: skip
        fn, out = wire(c, handlers.hint, [*MOVE, "story"])
        c["hint_btn"].click(fn, [c["session"], c["saved"], *sliders], out, api_visibility="private")
        fn, out = wire(c, handlers.demo, [*MOVE, "story", *SLIDERS])
        c["demo_btn"].click(
            fn, [c["session"], c["saved"], *sliders], out, show_progress="hidden", api_visibility="private"
        )
        fn, out = wire(c, handlers.reset, [*MOVE, *SLIDERS])
        c["reset_btn"].click(fn, [c["session"], c["saved"]], out, api_visibility="private")
        fn, out = wire(c, handlers.reveal, ["story", "saved"])
        c["reveal_btn"].click(fn, [c["session"], c["saved"]], out, api_visibility="private")
        done = ["saved", "header", "level_dd", "story"]
        fn, out = wire(c, handlers.check_compare, [*done, "compare_result"])
        c["compare_btn"].click(
            fn, [c["session"], c["saved"], c["guess_one"], c["guess_eight"]], out, api_visibility="private"
        )
        picks = [c[f"pick{i}"] for i in range(handlers.MAX_FINDINGS)]
        fn, out = wire(c, handlers.check_match, [*done, "match_result"])
        c["match_btn"].click(fn, [c["session"], c["saved"], *picks], out, api_visibility="private")
        fn, out = wire(c, handlers.export_code, ["code_box"])
        c["export_btn"].click(fn, [c["session"], c["saved"]], out, api_visibility="private")
        fn, out = wire(c, handlers.import_code, PAGE)
        c["import_btn"].click(fn, [c["code_box"], c["session"], c["saved"]], out, api_visibility="private")
        c["lang_radio"].input(None, [c["lang_radio"]], None, js=LANG_JS)
        c["projector"].input(None, [c["projector"]], None, js=PROJECTOR_JS)
        demo.load(
            None, None, [c["lang_radio"], c["projector"]],
            js="() => [window.__dragon.lang, window.__dragon.projector]",
        )  # fmt: skip
        for endpoint in (levels, play, hint, explain, analyze):
            gr.api(api_error(endpoint), api_name=endpoint.__name__)
    demo.i18n_for_launch = i18n
    return demo


def launch(demo: gr.Blocks, port: int | None = None, block: bool = True):
    """Start the server as `python app.py` does (tests use the same call with block=False)."""
    return demo.queue(default_concurrency_limit=8).launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        server_port=port or int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        i18n=demo.i18n_for_launch,
        css=(UI_ASSETS / "style.css").read_text(encoding="utf-8"),
        head=f"<script>{(UI_ASSETS / 'head.js').read_text(encoding='utf-8')}</script>",
        theme=gr.themes.Soft(primary_hue="purple"),
        footer_links=["api", "settings"],
        run_history=False,  # the run-history panel snapshots the whole page state on every slider move
        prevent_thread_lock=not block,
        quiet=not block,
    )


def main() -> None:
    try:
        load_levels()  # a malformed level file stops start-up with its name and field
    except LevelError as err:
        sys.exit(f"Level data error: {err}")
    launch(build_app())


if __name__ == "__main__":
    main()

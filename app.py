"""多头龙的秘密 · The Multi-Head Dragon — the Gradio app: builds the page and wires it to dragon/ (no logic here)."""

import contextlib
import functools
import inspect
import json
import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from ui.server import waking

# `python app.py`: the port answers at once, with a wait page in both languages, while Gradio, torch and the page load
# (ui/server/waking.py); launch() closes it just before the app takes the same address. An import of app (the tests)
# starts nothing.
WAKING = waking.answer_while_waking() if __name__ == "__main__" else None

import gradio as gr
from starlette.middleware import Middleware

import dragon
from dragon import api as core_api
from dragon import game
from dragon.checks import mended
from dragon.classroom.store import open_store
from dragon.levels.loader import LEVEL_DIR, LevelError, load_levels, read_levels
from dragon.runtime.lane import owned_by
from ui import handlers
from ui.layout import build
from ui.live_class import link as class_link
from ui.live_class import routes as class_routes
from ui.rooms import match as quiz
from ui.rooms import registry as rooms
from ui.rooms import sliders as play
from ui.server import admission, heap, queue_wake, sessions_held
from ui.server.body_limit import BodyLimit
from ui.server.first_script import FirstScript
from ui.server.unused_routes import RefuseUnused
from ui.session import LINK_PARAMS, session_of
from ui.strings import i18n_tables
from ui.teacher import box as teacher_box
from ui.teacher import sandbox

UI_ASSETS = Path(__file__).resolve().parent / "assets" / "ui"
BOOT_JS = "(boot, saved) => [JSON.stringify(window.__dragon || {}), saved]"
HEAD_SCRIPTS = ("head.js", "exports.js")  # in <head>: the link and projector mode first, then the exports' helpers
FIRST_SCRIPT = "idle.js"  # before Gradio's modules: no frames drawn for nothing on an idle page

PROPS = {"top", "panel", "quiz", "lab", "codes", "sandbox", "teacher"}  # custom HTML components: handlers give them a
# dict of properties
PAGE = ["session", "saved", "top", "panel", "maps", "quiz", "lab", "sandbox", "teacher"]  # what opening a level changes
PAGE_AND_CODES = [*PAGE, "codes"]
LAB = ["lab", "saved", "top", "session"]  # what a lab level's answer changes
# the endpoints that race or train wait for the server's lane (dragon/runtime/lane.py runs one at a time); at most two
# such calls hold a worker at once
TIMED = {"concurrency_limit": 2, "concurrency_id": "lane-runs"}
LANE_RUNS = ("race", "long_scroll", "heads_experiment", "grow", "heal", "stability",
             "router")  # the endpoints TIMED holds
REAL_MODEL = {"concurrency_limit": 2, "concurrency_id": "real-model"}  # the pretrained model: two calls at a time
# Gradio keeps each session's state (a copy of the page's config, ≈64 KB, and the player's attempt) until this many
# newer sessions have been used: the bound on that memory. An API call is a session of its own.
SESSIONS_HELD = 1000


def as_update(name: str, value):
    """Handlers speak plain values; a component whose properties change (not just its value) gets a gr.update."""
    return gr.update(**value) if name in PROPS else value


def wire(c: dict, fn, outputs: list[str], event_data: int | None = None, owned: bool = False, move: bool = False):
    """Wrap a handler returning {name: value} (or yielding such dicts) into Gradio's outputs. With event_data=n, the
    handler takes its n inputs and then the data the component's script sent with the event; owned, the runs it puts in
    the lane count against the caller's address (dragon/runtime/lane.py PER_OWNER); a `move` (a slider, an answer, a
    lab's action) counts as one in a live class's record of a framed session."""

    def shape(result: dict):
        values = tuple(as_update(name, result[name]) if name in result else gr.skip() for name in outputs)
        return values[0] if len(values) == 1 else values

    # a session a live class's page frames tells the class of each result the server scores, each hint it gives and
    # each move (ui/live_class/link.py)
    def listening(state):
        listener = class_link.listener(state)
        if listener is not None and move:
            listener.activity(session_of(state)["level"])
        return game.results_to(listener)

    if inspect.isgeneratorfunction(fn):  # stream every frame

        def run(*args):
            with listening(args[0] if args else None):
                for frame in fn(*args):
                    yield shape(frame)

    else:

        def run(*args):
            with listening(args[0] if args else None):
                return shape(fn(*args))

    if event_data is None:
        return run, [c[n] for n in outputs]
    if inspect.isgeneratorfunction(fn):
        raise TypeError("streaming handlers take no event data")

    def take(inputs: tuple, evt: gr.EventData, request: gr.Request | None = None):
        with owned_by(admission.address_of(request)) if owned else contextlib.nullcontext():
            return run(*inputs, mended(getattr(evt, "_data", None)))  # a lone surrogate sent by a script: U+FFFD

    # Gradio passes gr.EventData (and gr.Request) to the parameters annotated with them: one plain signature for
    # each shape of event the page has (two inputs or three; a lab's, counted against its caller's address)
    if (event_data, owned) == (2, False):

        def with_data(state, saved, evt: gr.EventData):
            return take((state, saved), evt)

    elif (event_data, owned) == (3, False):

        def with_data(state, saved, panel, evt: gr.EventData):
            return take((state, saved, panel), evt)

    elif (event_data, owned) == (2, True):

        def with_data(state, saved, evt: gr.EventData, request: gr.Request):
            return take((state, saved), evt, request)

    else:
        raise TypeError(f"no event shape with {event_data} inputs (owned={owned}): add its signature here")
    return with_data, [c[n] for n in outputs]


REFUSED = logging.getLogger("dragon.refused")  # a refused input: one line in the log, no traceback
MAX_MESSAGE = 400  # a refusal's message at most (what it quotes of the input is cut shorter still: dragon/checks.py)


def refusal(where: str, message: str) -> gr.Error:
    """The error a caller gets for bad input: the clear message, logged once on one line, no traceback printed."""
    message = " ".join(str(message).split())[:MAX_MESSAGE]
    REFUSED.warning("refused %s: %s", where, message)
    return gr.Error(message, print_exception=False)


def api_error(fn):
    """Public endpoints: bad input becomes a gr.Error with the engine's clear message, never a traceback."""

    @functools.wraps(fn)  # keeps the typed signature that gr.api documents
    def wrapped(*args, **kwargs):
        try:
            return fn(*mended(args), **mended(kwargs))  # half an emoji (a lone surrogate) becomes U+FFFD
        except (ValueError, OverflowError) as err:  # OverflowError: a number like 10^400 where a float is needed
            raise refusal(fn.__name__, str(err)) from None

    return wrapped


def count_inputs(demo: gr.Blocks) -> None:
    """A call with too few inputs is told which it needs (Gradio's own check raises a ValueError that reaches the
    caller as `error: null`, after printing every input it got)."""
    check = demo.validate_inputs

    def validate(block_fn, inputs: list) -> None:
        try:
            check(block_fn, inputs)
        except ValueError:
            names = list(inspect.signature(block_fn.fn).parameters) if block_fn.fn else []
            wanted = ", ".join(names) if len(names) == len(block_fn.inputs) else f"{len(block_fn.inputs)} values"
            raise refusal(block_fn.name or "an event", f"needs {wanted}; got {len(inputs)} inputs") from None

    demo.validate_inputs = validate


def levels() -> list[dict]:
    """All levels: id, chapter, kind (poem / paper / dialogue / mixed / compare / match / formula / race / fusion /
    heads) and title (zh, en)."""
    return core_api.levels()


def play_level(level_id: str, gates: list[float], lang: str = "zh") -> dict:
    """Score eight gates (grammar … context, each 0–1) on a slider level: score 0–100 and stars 0–3."""
    return core_api.play(level_id, gates, lang)


def hint(level_id: str, gates: list[float], lang: str = "zh") -> dict:
    """The gradient's hint: head to move, direction (+1 / -1) and a better gate vector."""
    return core_api.hint(level_id, gates, lang)


def explain(level_id: str, lang: str = "zh") -> dict:
    """A level's answer. A slider level: text, target gates, why, and the narration's claims with the real attention
    each claimed word receives (between different words). Any other level: its scored questions, each with the
    accepted answers, the measured value and the margin that decides it (a share by 5 points, a distance by 0.1
    word, a timing by the range of repeated runs)."""
    return core_api.explain(level_id, lang)


def analyze(text: str, lang: str = "auto") -> dict:
    """The eight heads' real attention on any text (zh or en): tokens, heads, attention 8×T×T, top tokens."""
    return dragon.analyze(text, lang)


def head_math(text: str, lang: str, word: str, head: str) -> dict:
    """Inside the formula for one word and one head (grammar … context) of a text: tokens, keys (the sink first),
    q, the scores q·k/√d_head, the softmax weights (sum 1), the weighted V, the W^O slice, output_norm, shapes."""
    return core_api.head_math(text, lang, word, head)


def race(lengths: list[int]) -> dict:
    """The per-head loop against all heads batched, timed now on the serving device at each length (at most 8
    lengths, each 1–2048): device, lengths, loop_ms, batched_ms (medians), speedup, flops_loop = flops_batched."""
    return core_api.race(lengths)


def long_scroll(lengths: list[int], window: int = 8) -> dict:
    """Full attention against a sliding window of `window` words on each side (1–64) plus one global position, timed
    now on the serving device at each length (at most 8 lengths, each 2–16,384): full_ms and sparse_ms (medians of 5),
    their ranges, full_bytes (h·T²·4) and sparse_bytes, max_abs_diff from the full output, kernel_diff (the banded
    kernel against the same pattern computed densely), crossing, and heads: each head's share of links kept inside
    a window of 4 words on the lesson's texts, per language."""
    return core_api.long_scroll(lengths, window)


def fusion(text: str, lang: str = "auto") -> dict:
    """concat → W^O → residual on a text, with W^O and the residual switched on and off: keep_with_residual and
    keep_without_residual (per-token mean cosine of output to input), switches, and which heads reach each dim."""
    return core_api.fusion(text, lang)


def heads_experiment() -> dict:
    """Train small models with h = 1, 2, 4, 8, 16 at one d_model now (about 15 s on a CPU): heads, params (equal),
    final_loss, final_accuracy, curves, device, seconds."""
    return core_api.heads_experiment()


def crystal_ball(text: str, word: str, referent: str = "") -> dict:
    """The real all-MiniLM-L6-v2 (6 layers × 12 heads, shipped in a PyPI package, loaded on the first call): `word`'s
    attention row in every head over the text's words (English, ≤ 500 characters, ≤ 64 words; word pieces merged):
    model, layers, heads, tokens, attention[layer][head] (over the words), cls, sep, and best {layer, head, token,
    weight}, the head sending the word most to another word (layers and heads counted from 0). With `referent`, the
    word you say `word` means: judged {head, top, top_w, second, second_w, margin, specials, referent, referent_w,
    verdict: right / wrong / unsure, reason, mostly} — 4-1's head (the one sending they → students) on your text;
    unsure when [CLS]/[SEP] take more than its top word or the top word leads the next by under 0.05."""
    return core_api.crystal_ball(text, word, referent=referent.strip() or None if isinstance(referent, str) else None)


def tower() -> dict:
    """Per layer of the real model over the shipped sentences: mean attention distance (words), the share to the
    previous / next word and to [CLS] / [SEP], per head too, and findings (what the numbers show)."""
    return core_api.tower()


def grow(steps: int = 600, seed: int = 0) -> dict:
    """Eight heads trained now from random weights on six relations (steps 30…3000): loss and specialisation curves,
    snapshots of every head's map labelled random → faint → clear → settled by measured specialisation."""
    return core_api.grow(steps, core_api.public_seed(seed))  # a class exam's seeds (≥ 2³¹) are no caller's


def prune(active: list[int]) -> dict:
    """4-3's trained model (seed 0) with its 8 heads switched on (1) or off (0): accuracy and full_accuracy."""
    return core_api.prune(active)


def heal(active: list[int], seed: int = 0) -> dict:
    """4-4's heal: 4-3's trained model (that seed, 0…2³¹−1) with its 8 heads switched on (1) or off (0), fine-tuned for
    300 steps with the off heads held at zero, beside the full model given the same steps: pruned_accuracy,
    healed_accuracy, full_after_accuracy, back_share (the share of the loss that came back) and the curves."""
    return core_api.heal(active, core_api.public_seed(seed))  # a class exam's seeds (≥ 2³¹) are no caller's


def stability(seed: int = 0) -> dict:
    """4-5's grid (seeds seed … seed + 2, 0…2³¹−1): 4-3's task trained with 1 head and with 8 heads (same width) at
    learning rates 0.01, 0.03, 0.1, 0.3: each run's final_loss, final_accuracy, share and failed; fails per model,
    failures_begin, the accuracy grid (heads × rates) and the curves of a failed and a good run."""
    return core_api.stability(core_api.public_seed(seed))  # a class exam's seeds (≥ 2³¹) are no caller's


def router(seed: int = 0) -> dict:
    """4-6's heads on demand (seeds seed … seed + 2, 0…2³¹−1): eight heads gated word by word by a learned router that
    keeps the top k, trained on 4-3's task for k = 1, 2, 4, 8: accuracy, mean_accuracy, kept_share (of the k = 8
    accuracy), compute_share (k / 8 of the heads' work) and the gates each word of a held-out sequence chose (k = 2)."""
    return core_api.router(core_api.public_seed(seed))  # a class exam's seeds (≥ 2³¹) are no caller's


def positions(text: str, lang: str = "auto") -> dict:
    """The text and its subject/object swap (我爱你 → 你爱我) through the dragon without positions
    (max_diff_unpermuted_no_positions ~1e-7: the same vectors, permuted) and with sinusoidal positions
    (diff_with_positions: they differ)."""
    return core_api.positions(text, lang)


def check_level(level: str) -> dict:
    """A teacher's level (YAML or JSON text; the smallest: {"title": {"zh": …, "en": …}, "lang": "zh" | "en", "text": …,
    "target": {head id: weight, …}}, heads left out weigh 0) checked as a shipped level is: ok, errors (one message per
    bad field, failed puzzle condition with its measured figure, silent target head or claim not borne out), quality
    (all_equal, random_median, near_median, ascent_steps), id, and code (the share code: ?custom=CODE opens it). A pack
    ({"levels": [...]}) gives ok, errors and levels (one such result each)."""
    return core_api.check_level(level)


ENDPOINTS = {
    "levels": levels, "play": play_level, "hint": hint, "explain": explain, "analyze": analyze,
    "head_math": head_math, "race": race, "long_scroll": long_scroll, "fusion": fusion,
    "heads_experiment": heads_experiment,
    "crystal_ball": crystal_ball, "tower": tower, "grow": grow, "prune": prune, "heal": heal, "stability": stability,
    "router": router,
    "positions": positions,
    "check_level": check_level,
}


def build_app() -> gr.Blocks:
    i18n = gr.I18n(**i18n_tables())
    with gr.Blocks(title="多头龙的秘密 · The Multi-Head Dragon") as demo:
        c = build(i18n)
        state = [c["session"], c["saved"]]
        quiet = {"api_visibility": "private", "show_progress": "hidden"}
        fn, out = wire(c, handlers.boot, PAGE_AND_CODES)
        demo.load(fn, [c["boot"], c["saved"]], out, js=BOOT_JS, api_visibility="private")
        fn, out = wire(c, handlers.choose_level, PAGE_AND_CODES, event_data=2)
        c["top"].choose(fn, state, out, api_visibility="private")
        fn, out = wire(c, handlers.switch_lang, PAGE_AND_CODES, event_data=3)
        c["top"].lang(fn, [*state, c["panel"]], out, api_visibility="private")

        # the panel: a slider move is answered by its server function (play.live); these are its events. 'record'
        # (a better score) skips the queue: one POST answered at once, not a join and an event stream
        fn, out = wire(c, play.record, ["panel", "saved", "top"], move=True)
        c["panel"].record(fn, [*state, c["panel"]], out, trigger_mode="always_last", queue=False, **quiet)
        for name in ("hint", "reset", "reveal"):
            fn, out = wire(c, getattr(play, name), ["panel", "saved"], move=True)
            getattr(c["panel"], name)(fn, [*state, c["panel"]], out, **quiet)
        fn, out = wire(c, play.demo, ["panel", "saved", "top"])
        c["panel"].demo(fn, [*state, c["panel"]], out, **quiet)
        next_fn, page_out = wire(c, handlers.next_level, PAGE_AND_CODES)
        c["panel"].next(next_fn, state, page_out, api_visibility="private")
        c["quiz"].next(next_fn, state, page_out, api_visibility="private")

        fn, out = wire(c, quiz.check, ["quiz", "saved", "top"], event_data=2, move=True)
        c["quiz"].check(fn, state, out, **quiet)

        # the lab levels (chapters 3–5): each button is an event answered by the room on screen (ui/rooms/registry.py);
        # a race, a training or a load goes to the server's lane (dragon/runtime/lane.py) and the panel draws its own
        # wait (ui/rooms/waits.py), so no event waits in Gradio's queue for it
        for name in rooms.EVENTS:
            fn, out = wire(c, rooms.handler(name), LAB, event_data=2, owned=True, move=True)
            getattr(c["lab"], name)(fn, state, out, **quiet, trigger_mode="once")
        c["lab"].next(next_fn, state, page_out, api_visibility="private")
        # the sandbox and the teachers' box: 'make' and the files read the sliders on screen (the panel's value)
        fn, out = wire(c, sandbox.read_text, PAGE, event_data=3)
        c["top"].read(fn, [*state, c["panel"]], out, **quiet)
        fn, out = wire(c, sandbox.make_level, PAGE, event_data=3)
        c["sandbox"].make(fn, [*state, c["panel"]], out, **quiet)
        fn, out = wire(c, sandbox.pick_word, ["sandbox"], event_data=2)
        c["sandbox"].word(fn, state, out, **quiet, trigger_mode="once")
        fn, out = wire(c, teacher_box.make_file, ["teacher"], event_data=3)
        c["teacher"].file(fn, [*state, c["panel"]], out, **quiet)
        fn, out = wire(c, teacher_box.open_source, PAGE, event_data=2)
        c["teacher"].open(fn, state, out, **quiet)
        fn, out = wire(c, handlers.export_code, ["codes"])
        c["codes"].export_code(fn, state, out, **quiet)
        fn, out = wire(c, handlers.import_code, PAGE_AND_CODES, event_data=2)
        c["codes"].import_code(fn, state, out, **quiet)
        for name, endpoint in ENDPOINTS.items():
            group = TIMED if name in LANE_RUNS else REAL_MODEL if name in ("crystal_ball", "tower") else {}
            gr.api(api_error(endpoint), api_name=name, **group)
    demo.i18n_for_launch = i18n
    count_inputs(demo)
    return demo


# Gradio's queue rebuilds a pandas table of up to 10,000 past events after every event, for its monitoring page:
# in a class that is most of the server's time, and more every minute. The page is switched off, and so is the table.
NO_EVENT_TABLE = {"GRADIO_ANALYTICS_CACHE_FREQUENCY": str(2**62)}


def queue(demo: gr.Blocks) -> gr.Blocks:
    """The event queue for a class: eight events at a time, no per-event monitoring table (read when it is made);
    every queued event goes through the queue (no direct POST around it), and a race, a training or a real-model
    call joins it only within its client's, its address's and the server's limits (ui/server/admission.py)."""
    for name, value in NO_EVENT_TABLE.items():
        os.environ.setdefault(name, value)
    demo.queue(default_concurrency_limit=8, api_open=False)
    queue_wake.wake_on_work(demo._queue)  # an idle server stays idle: no look for work every millisecond
    admission.guard(demo)
    return demo


def launch(demo: gr.Blocks, port: int | None = None, block: bool = True, warm_up: bool = False,
           measure: bool = False, wait_page: waking.Waking | None = None):
    """Start the server as `python app.py` does (tests use the same call with block=False). Whatever is slow comes
    after the first page is served, in the background: with `measure`, the levels' claims on the real dragon
    (measure_levels); with warm_up, the runs no player's input changes, in the server's lane (ui/rooms/registry.py
    warm_up). A wait page's server on the same address (ui/server/waking.py) gives the address over at the last
    moment."""
    sessions_held.lean_sessions()  # a session holds no copy of the page for deep links (≈20 KB, not ≈61)
    heap.few_arenas()  # before the server's threads start: freed memory stays in a few arenas, trimmed
    # (ui/server/heap.py)
    pages = sessions_held.Pages()  # the pages open now (their heartbeats), for how long a session's state is held
    store = open_store()  # the live class's database (SQLite under data/, or DATABASE_URL), migrated before serving
    if os.environ.get("SPACE_ID") and not admission.trusted_proxies()[0] and not admission.trusted_proxies()[1]:
        logging.getLogger("dragon").warning(
            "on a Hugging Face Space with TRUSTED_PROXIES unset, every caller has the proxy's address: set the Space "
            "variable TRUSTED_PROXIES=* (README, 'Behind a proxy') so the per-address limits count each student")
    host, default_port = waking.address()
    demo = queue(demo)
    if wait_page is not None:
        wait_page.close()
    started = demo.launch(
        server_name=host,
        server_port=port or default_port,
        i18n=demo.i18n_for_launch,
        # our stylesheet goes in <head> as it is: launch(css=…) would copy every rule under Gradio's container
        # with a higher specificity, and drop the media queries' rules for anything outside it
        head=f"<style>{(UI_ASSETS / 'style.css').read_text(encoding='utf-8')}</style>"
        + f"<script>window.__dragonLink = {json.dumps(LINK_PARAMS)};</script>"  # the link's parameters, declared once
        + "".join(f"<script>{(UI_ASSETS / name).read_text(encoding='utf-8')}</script>" for name in HEAD_SCRIPTS),
        theme=gr.themes.Soft(primary_hue="purple"),
        footer_links=["api", "settings"],
        run_history=False,  # the run-history panel snapshots the whole page state on every event
        enable_monitoring=False,  # no /monitoring page (its table is not kept: see NO_EVENT_TABLE)
        state_session_capacity=SESSIONS_HELD,
        prevent_thread_lock=True,
        quiet=not block,
        app_kwargs={"middleware": [  # bodies over 1 MiB refused; the live class (/class); a script before Gradio's;
            # pages noted; unused routes
            Middleware(BodyLimit), Middleware(class_routes.ClassRoutes, store=store, games=True),
            Middleware(FirstScript, script=(UI_ASSETS / FIRST_SCRIPT).read_text("utf-8")),
            Middleware(sessions_held.WatchPages, pages=pages), Middleware(RefuseUnused)]},
    )
    sessions_held.hold_briefly(demo, pages)  # an ended session is dropped, not held until 1,000 newer push it out
    heap.trim_now_and_then(demo)
    heap.freeze_startup()  # what start-up loaded stays out of the garbage collector's full passes
    if measure:
        threading.Thread(target=measure_levels, name="measure-levels", daemon=True).start()
    if warm_up:
        rooms.warm_up()
    if block:
        demo.block_thread()
    return started


def measure_levels(directory: Path = LEVEL_DIR, stop: Callable[[int], object] = os._exit) -> None:
    """After serving: every level's narration held to the real attention (the dragon reads each text, the pronunciation
    data loads). A claim the engine does not bear out stops the server with its file and field, as a bad file would
    have before serving; a player who asks for a level meanwhile waits for this, once."""
    try:
        load_levels(directory)
    except LevelError as err:
        logging.getLogger("dragon").error("Level data error: %s", err)
        print(f"Level data error: {err}", file=sys.stderr, flush=True)
        stop(1)  # os._exit from this thread: the whole server stops, as at start


def main() -> None:
    try:
        read_levels()  # a malformed level file stops start-up with its name and field, before anything is served
    except LevelError as err:
        sys.exit(f"Level data error: {err}")
    launch(build_app(), warm_up=os.environ.get("DRAGON_WARM_UP", "1") != "0", measure=True, wait_page=WAKING)


if __name__ == "__main__":
    main()

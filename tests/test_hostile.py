"""Hostile input through every public endpoint, as the server calls them (app.api_error: the same wrapper the HTTP
API goes through): arbitrary Unicode — lone surrogates, RTL and zero-width marks, emoji, 100 k characters — and
arbitrary JSON shapes in every argument. Each call answers or refuses with a clear message (gr.Error), never any other
exception, within a second; what comes back encodes as JSON (no lone surrogate), and the tokens stay capped."""

import json
import time

import gradio as gr
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import app
from dragon.text.analyser import MAX_TOKENS

HOSTILE = [
    "ab\ud83dcd",  # half an emoji
    "\u202eevil\u202c \u200f\u05e9\u05dc\u05d5\u05dd\u200e mixed",  # RTL override and marks, Hebrew
    "\u200b\u200c\u200d\ufeff",  # nothing but zero-width marks
    "👩‍👩‍👧‍👦🐉🏳️‍🌈" * 40,
    "床前明月光" * 20_000,  # 100 k characters
    "<img src=x onerror=alert(1)>${alert(1)}{{7*7}}javascript:alert(1)",
]
TEXT = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(st.characters(exclude_categories=()), max_size=200),  # every code point, surrogates included
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.just(10**400) | TEXT,
    lambda inner: st.lists(inner, max_size=9) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=20,
)
SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def call(name: str, *args) -> object:
    """The endpoint as the server runs it; a refusal is a gr.Error, anything else raised fails the test."""
    t0 = time.perf_counter()
    try:
        out = app.api_error(app.ENDPOINTS[name])(*args)
    except gr.Error as err:
        assert err.message and len(err.message) <= app.MAX_MESSAGE, err.message
        out = None
    seconds = time.perf_counter() - t0
    assert seconds < 1.0, f"{name} took {seconds:.2f} s"
    json.dumps(out, ensure_ascii=False).encode("utf-8")  # fails on a lone surrogate in the answer
    return out


@pytest.fixture(scope="module", autouse=True)
def warm() -> None:  # the first calls build the dragon and load the real model: not what is timed here
    app.ENDPOINTS["analyze"]("月光", "zh")
    app.ENDPOINTS["crystal_ball"]("The cat sat because it was tired.", "it")


@SETTINGS
@given(text=TEXT, lang=st.sampled_from(["auto", "zh", "en"]) | TEXT)
@example(text=HOSTILE[4], lang="auto")
def test_analyze_any_text(text, lang) -> None:
    out = call("analyze", text, lang)
    if out is not None:
        assert len(out["tokens"]) <= MAX_TOKENS


@SETTINGS
@given(text=TEXT, lang=st.sampled_from(["auto", "zh", "en"]) | TEXT)
def test_fusion_and_positions_any_text(text, lang) -> None:
    call("fusion", text, lang)
    call("positions", text, lang)


@SETTINGS
@given(text=TEXT, word=TEXT, head=st.sampled_from(["time", "emotion"]) | TEXT)
def test_head_math_any_text(text, word, head) -> None:
    call("head_math", text, "auto", word, head)


@SETTINGS
@given(text=TEXT, word=TEXT, referent=TEXT)
@example(text=HOSTILE[4], word="月", referent="")
def test_crystal_ball_any_text(text, word, referent) -> None:
    call("crystal_ball", text, word, referent)


@SETTINGS
@given(level=TEXT | JSON)
@example(level=json.dumps({"title": {"zh": HOSTILE[5], "en": HOSTILE[0]}, "lang": "zh", "text": HOSTILE[1],
                           "target": {"emotion": 0.9}}))
def test_check_level_any_text(level) -> None:
    call("check_level", level)


@SETTINGS
@given(level=TEXT | JSON, gates=JSON, lang=JSON)
@example(level="2-1", gates=[True] * 8, lang="zh")
@example(level="2-1", gates=[[0.5]] * 8, lang="zh")
def test_play_hint_explain_any_json(level, gates, lang) -> None:
    call("play", level, gates, lang)
    call("hint", level, gates, lang)
    call("explain", level, lang)


def whole_in(v, low: int, high: int) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and v == v and low <= v <= high and v == int(v)


@SETTINGS
@given(steps=JSON, seed=JSON, active=JSON, lengths=JSON)
@example(steps=10**400, seed=0, active=[1] * 7 + [[1]], lengths=[16, 10**400])
def test_lesson_numbers_any_json(steps, seed, active, lengths) -> None:
    # a real run (a training, the pruned model's first build, a race) is a benchmark's business, not this test's
    call("grow", 29 if whole_in(steps, 30, 3000) else steps, seed)
    switches = isinstance(active, list) and len(active) == 8
    if not (switches and all(isinstance(a, bool) or whole_in(a, 0, 1) for a in active)):
        call("prune", active)
    races = lengths is None or (isinstance(lengths, list) and 0 < len(lengths) <= 8)  # None: the default race
    if not (races and all(whole_in(n, 1, 2048) for n in lengths or [])):
        call("race", lengths)

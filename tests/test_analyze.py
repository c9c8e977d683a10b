"""analyze(): plain JSON, right shapes, token cap, bad input handled."""

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dragon import HEADS, analyze
from dragon.analyser import MAX_TOKENS, analyse


def test_result_is_plain_json_with_the_documented_fields() -> None:
    r = analyze("春眠不觉晓，处处闻啼鸟。")
    assert json.loads(json.dumps(r)) == r
    T = len(r["tokens"])
    assert r["heads"] == list(HEADS)
    assert len(r["attention"]) == 8 and all(len(m) == T and all(len(row) == T for row in m) for m in r["attention"])
    assert set(r["top"]) == set(HEADS)
    assert r["truncated"] is False and r["device"] == "cpu" and r["lang"] == "zh"
    # each query row, plus what went to the sink, is a probability distribution
    for h in range(8):
        for i in range(T):
            assert abs(sum(r["attention"][h][i]) + r["sink"][h][i] - 1) < 1e-3


def test_poem_segments_sensibly() -> None:
    assert analyze("床前明月光，疑是地上霜。")["tokens"] == ["床前", "明月", "光", "，", "疑", "是", "地上", "霜", "。"]


def test_language_detection_and_override() -> None:
    assert analyze("Hello there, friend.")["lang"] == "en"
    assert analyze("我爱 Python 编程")["lang"] == "zh"
    assert analyze("Hello", lang="zh")["lang"] == "zh"
    with pytest.raises(ValueError, match="lang"):
        analyze("hi", lang="fr")


@pytest.mark.parametrize("text", ["", "   ", "\n\t ", "\u200b\u200d"])
def test_empty_text_is_a_clear_error(text: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        analyze(text)


def test_non_string_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="string"):
        analyze(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("unit", ["天气很好，", "the cat sat. ", "a" * 50, "🐉"])
def test_huge_text_is_cut_fast(unit: str) -> None:
    text = (unit * (100_000 // len(unit) + 1))[:100_000]
    analyze("预热")  # jieba's dictionary loads once per process; time the cut, not the load
    start = time.perf_counter()
    r = analyze(text)
    elapsed = time.perf_counter() - start
    assert r["truncated"] is True
    assert 0 < len(r["tokens"]) <= MAX_TOKENS
    assert elapsed < 0.2, f"{elapsed:.3f}s"


def test_exactly_at_cap_is_not_truncated() -> None:
    words = " ".join(["cat"] * MAX_TOKENS)
    assert analyze(words)["truncated"] is False
    assert analyze(words + " cat")["truncated"] is True


def test_html_is_kept_as_text_not_interpreted() -> None:
    r = analyze("<script>alert(1)</script> 你好")
    assert "<" in r["tokens"] and "script" in r["tokens"]  # the UI escapes; the engine only reads


def test_newlines_start_new_dialogue_turns() -> None:
    tokens = analyse("A: hi\nB: hello").tokens
    assert tokens[-1].clause > tokens[0].clause


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=0, max_size=300))
def test_any_unicode_never_crashes(text: str) -> None:
    try:
        r = analyze(text)
    except ValueError as err:
        assert "empty" in str(err) or "no words" in str(err)
        return
    T = len(r["tokens"])
    assert 1 <= T <= MAX_TOKENS
    assert all(len(m) == T for m in r["attention"])
    assert all(v == v for m in r["attention"] for row in m for v in row)  # no NaN


@pytest.mark.parametrize(
    "text",
    [
        "🐉🐉🐉 龙来了！",
        "مرحبا بالعالم hello 你好",  # RTL Arabic mixed with Latin and Chinese
        "שלום\u200f עולם",  # Hebrew with a right-to-left mark
        "zero\u200bwidth\u200cjoin\u200d",
        "bell\x07 null\x00 esc\x1b",
        "\ud800 lone surrogate",
        "e\u0301 combining",
    ],
)
def test_odd_unicode_is_read(text: str) -> None:
    r = analyze(text)
    assert r["tokens"] and all("\x00" not in t and "\u200b" not in t for t in r["tokens"])

"""A teacher's paragraph is read whole: up to 128 tokens by the dragon and 128 words by the real model, the cap said
under the sandbox's box, anything longer cut (dragon) or refused (real model) with the reason; a 128-token paragraph
makes a teacher level whose share code carries it (benchmarks/app.py times the slider path and a class on it)."""

import pytest

from benchmarks.app import PARAGRAPH, paragraph_level
from dragon import api
from dragon.analyze import analyze
from dragon.config import DragonConfig
from dragon.lessons import crystal_ball
from dragon.levels import teacher as teacher_levels
from dragon.text.analyser import MAX_TOKENS, analyse
from ui.strings import t
from ui.widgets.draw import esc

EN = ("Last autumn our whole class went to the mountains to see the red leaves. We met at the school gate at six in "
      "the morning, and the teacher gave each of us a map. The path was narrow, with tall bamboo on both sides, and "
      "the leaves whispered when the wind blew. After two hours of walking we finally reached the top. The hills far "
      "away rose layer after layer, and the red leaves burned like fire. Tom said he had never seen anything so "
      "beautiful, and Amy took many photos with her camera. We ate lunch at the top and sang songs together.")


def test_the_dragon_reads_128_tokens_whole_and_cuts_the_129th() -> None:
    assert MAX_TOKENS == DragonConfig().max_tokens == 128
    whole = analyze(PARAGRAPH["text"])
    assert len(whole["tokens"]) == 128 and not whole["truncated"] and whole["max_tokens"] == 128
    longer = analyse(PARAGRAPH["text"] + "真好")
    assert len(longer.tokens) == 128 and longer.truncated


def test_the_real_model_reads_a_paragraph_whole_and_refuses_more_with_the_reason() -> None:
    words = crystal_ball.read(EN).words
    assert 100 < len(words) <= crystal_ball.MAX_WORDS == 128
    r = api.crystal_ball(EN, "Tom")
    assert len(r["tokens"]) == len(words) and r["tokens"][-1] == "."
    with pytest.raises(ValueError, match="at most 128"):
        api.crystal_ball("word " * 129, "word")
    with pytest.raises(ValueError, match="word pieces"):  # 62 words of 15 pieces each: ≤ 1,000 characters, 930 pieces
        api.crystal_ball(" ".join(["x7q9z3k8w2j5v4y"] * 62), "x7q9z3k8w2j5v4y")


def test_the_sandbox_says_the_cap_under_its_box() -> None:
    from ui.session import MAX_SANDBOX_CHARS
    from ui.teacher import sandbox

    assert MAX_SANDBOX_CHARS >= len(EN) and teacher_levels.MAX_TEXT_CHARS >= len(EN)
    for lang in ("zh", "en"):
        assert esc(t("sb_cap", lang, chars=MAX_SANDBOX_CHARS, tokens=128)) in sandbox.form_html(lang, EN, "auto")


def test_a_128_token_paragraph_makes_a_teacher_level_that_comes_back_whole() -> None:
    level_id, code = paragraph_level()
    (level,) = teacher_levels.levels_from_code(code)
    assert level.id == level_id and set(level.text.values()) == {PARAGRAPH["text"]}
    assert len(api.level_reading(level, "zh").tokens) == 128

"""The Tone head hears verse (rhyme groups and 平仄 from pypinyin / the CMU dictionary); the Context head ties a
reply to the turn it answers."""

import pytest

from dragon import HEADS, analyze
from dragon.text.analyser import analyse
from dragon.text.sound import cmu_path, en_rhyme, rhymes, zh_syllable

JING_YE_SI = "床前明月光，疑是地上霜。举头望明月，低头思故乡。"


@pytest.mark.parametrize(
    "word, group, tone",
    [("光", "江阳", "ping"), ("霜", "江阳", "ping"), ("故乡", "江阳", "ping"), ("明月", "乜斜", "ze"),
     ("晓", "遥条", "ze"), ("几枝", "一七", "ping"), ("相思", "一七", "ping"), ("流", "油求", "ping")],
)
def test_a_chinese_line_end_has_its_rhyme_group_and_tone_class(word: str, group: str, tone: str) -> None:
    assert zh_syllable(word) == (group, tone)


def test_the_cmu_dictionary_ships_with_the_package_and_gives_rhymes() -> None:
    assert cmu_path() is not None  # read from the installed package, never downloaded
    assert en_rhyme("glows") == en_rhyme("shows") == "OW Z"
    assert en_rhyme("bright") == en_rhyme("tonight") == "AY T"
    assert en_rhyme("moon") != en_rhyme("home")
    assert en_rhyme("qwxzv") is None


def test_a_word_repeated_is_no_rhyme() -> None:
    found = rhymes([(0, "twinkle"), (1, "Twinkle"), (2, "star"), (3, "are")], "en", 4)
    assert found[0][0] is None and found[1][0] is None and found[2][0] == found[3][0] == 0


def test_verse_line_ends_are_marked_and_prose_is_not() -> None:
    tokens = analyse(JING_YE_SI).tokens
    marked = {t.text: (t.rhyme, t.line_tone) for t in tokens if t.line_tone}
    assert marked == {"光": (0, "ping"), "霜": (0, "ping"), "明月": (None, "ze"), "故乡": (0, "ping")}
    prose = analyse("我今天很忙，所以没有去上课，明天再去学校。").tokens  # 忙 / 校 … no verse, no rhyme marks
    assert not any(t.rhyme is not None or t.line_tone for t in prose)


def test_the_tone_head_hears_the_rhyme_and_the_unrhymed_line_end_hears_the_rhymes() -> None:
    r = analyze(JING_YE_SI)
    tone, tokens = r["attention"][HEADS.index("tone")], r["tokens"]
    for word in ("光", "霜", "故乡"):  # a rhyme word's row: the other rhyme words
        row = tone[tokens.index(word)]
        others = [tokens.index(w) for w in ("光", "霜", "故乡") if w != word]
        assert sum(row[j] for j in others) > 0.5
    moon = [i for i, t in enumerate(tokens) if t == "明月"][1]  # 举头望明月: the line that does not rhyme (仄)
    assert sum(tone[moon][tokens.index(w)] for w in ("光", "霜", "故乡")) > 0.9
    assert r["speaks"]["tone"] > 0.05  # a Tang poem no longer leaves the Tone head silent


def test_in_a_dialogue_a_reply_looks_at_the_turn_it_answers() -> None:
    text = "小明：你明天去图书馆吗？\n小红：去呀！我们一起去吧。"
    tokens = analyse(text).tokens
    assert {t.turn for t in tokens} == {0, 1}
    r = analyze(text)
    context, words = r["attention"][HEADS.index("context")], r["tokens"]
    asked = [i for i, t in enumerate(tokens) if t.turn == 0]
    for i, t in enumerate(tokens):
        if t.turn == 1 and t.text in ("呀", "我们", "一起"):
            assert sum(context[i][j] for j in asked) > 0.9, words[i]
    assert all(t.turn is None for t in analyse("妈妈说：快回家。我们马上走。").tokens)  # one line: no dialogue

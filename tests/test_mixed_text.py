"""Texts that mix Chinese and English (今天我们学习 attention 机制) are read word by word in each language's rules:
every Chinese run cut as jieba cuts it alone, every English word whole (it's, don't) with its English part of speech and
lexicon entries, whichever language leads the text; the dragon and the real model read them whole."""

import re

import pytest

from dragon import api
from dragon.analyze import analyze
from dragon.text.analyser import CJK, EN_TOKEN, analyse, zh_cut

MIXED = {  # text → (the language that leads, its tokens, space-separated)
    "今天我们学习 attention 机制。": ("zh", "今天 我们 学习 attention 机制 。"),
    "我觉得 it's a great idea，你呢？": ("zh", "我 觉得 it's a great idea ， 你 呢 ？"),
    "老师说 the students don't understand 多头注意力。": ("en", "老师 说 the students don't understand 多头 注意力 。"),
    "我用 PyTorch 写了一个 Transformer 模型。": ("zh", "我 用 PyTorch 写 了 一个 Transformer 模型 。"),
    "Yesterday 我们去了 Beijing，天气很好。": ("zh", "Yesterday 我们 去 了 Beijing ， 天气 很 好 。"),
    "She said 谢谢 and smiled happily.": ("en", "She said 谢谢 and smiled happily ."),
    "The dragon has 八个头 and each head reads a different 关系。": (
        "en", "The dragon has 八个 头 and each head reads a different 关系 。"),
    "这个 GPU 的 memory 不够用了！": ("zh", "这个 GPU 的 memory 不够 用 了 ！"),
    "我昨天看了 three papers about 注意力。": ("zh", "我 昨天 看 了 three papers about 注意力 。"),
    "Transformer的训练比循环网络快得多。": ("zh", "Transformer 的 训练 比 循环 网络 快得多 。"),
    "他们 were very happy 因为考试结束了。": ("zh", "他们 were very happy 因为 考试 结束 了 。"),
    "I studied 数学 and 物理 at school.": ("en", "I studied 数学 and 物理 at school ."),
}
CJK_RUN = re.compile(f"[{CJK}]+")


@pytest.mark.parametrize("text", list(MIXED))
def test_each_run_is_read_in_its_own_languages_rules(text: str) -> None:
    lang, expected = MIXED[text]
    a = analyse(text)
    assert a.lang == lang and [t.text for t in a.tokens] == expected.split()
    runs = [m.group() for m in CJK_RUN.finditer(text)]
    chinese = [t.text for t in a.tokens if CJK_RUN.fullmatch(t.text)]
    assert chinese == [w for run in runs for w, _ in zh_cut(run)]  # each Chinese run cut as jieba cuts it alone
    latin = re.sub(f"[{CJK}]+", " ", text)
    english = [m.group() for m in EN_TOKEN.finditer(latin) if m.lastgroup == "word"]
    assert [t.text for t in a.tokens if re.fullmatch(r"[A-Za-z'’]+", t.text)] == english  # English words whole


def test_english_words_keep_english_parts_of_speech_and_lexicon_in_a_chinese_text() -> None:
    pos = {t.text: t for t in analyse("我觉得 it's a great idea，你呢？").tokens}
    assert (pos["it's"].pos, pos["a"].pos, pos["great"].pos, pos["great"].emotion) == ("pron", "func", "adj", 1)
    pos = {t.text: t for t in analyse("Yesterday 我们去了 Beijing，天气很好。").tokens}
    assert pos["Yesterday"].time == "time" and pos["Beijing"].pos == "noun" and pos["天气"].field == "weather"
    pos = {t.text: t for t in analyse("我昨天看了 three papers about 注意力。").tokens}
    assert pos["papers"].field == "science" and pos["昨天"].time == "time"  # papers → paper, as in English
    pos = {t.text: t for t in analyse("他们 were very happy 因为考试结束了。").tokens}
    assert pos["happy"].emotion == 1 and pos["因为"].connective == "cause" and pos["他们"].pronoun == "pl"


def test_chinese_words_keep_their_lexicon_in_an_english_text() -> None:
    pos = {t.text: t for t in analyse("She was sad and 哭了 all night.").tokens}
    assert pos["哭"].emotion == -1 and pos["sad"].emotion == -1 and pos["哭"].pos == "verb"
    pos = {t.text: t for t in analyse("I studied 数学 and 物理 at school.").tokens}
    assert pos["数学"].field == "school" and pos["物理"].field == "science"


@pytest.mark.parametrize("text", list(MIXED)[:4])
def test_the_dragon_and_the_real_model_read_a_mixed_text(text: str) -> None:
    r = analyze(text)
    assert r["tokens"] == MIXED[text][1].split() and not r["truncated"]
    english = next(w for w in MIXED[text][1].split() if w.isascii() and w.isalpha())  # Chinese: a character a word
    words = api.crystal_ball(text, english)["tokens"]
    assert "".join(words).replace(" ", "") == "".join(text.split())  # every character read, none lost

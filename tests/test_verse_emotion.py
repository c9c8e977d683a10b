"""The Emotion head hears classical imagery: an annotated set of classical lines (tests/data/verse_emotion.tsv, ≥ 30
lines by ≥ 15 poets, the words a reader feels in each) held against the analyser and the real attention; the emotion
characters' table (assets/lexicons/emotion_chars.tsv) checked against the poems it names; prose words built of those
characters stay neutral; 柳宗元's 江雪 makes a level with its feeling up."""

from pathlib import Path

import pytest

from dragon import api
from dragon.analyze import analyze
from dragon.text.analyser import analyse
from dragon.text.lexicon import LEXICON_DIR, SCHEMAS, load_lexicon, read_table

DATA = Path(__file__).resolve().parent / "data" / "verse_emotion.tsv"


def read_lines() -> list[tuple[str, str, str, list[tuple[str, int]]]]:
    rows = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            poet, poem, text, felt = line.split("\t")
            rows.append((poet, poem, text, [(f[:-1], 1 if f[-1] == "+" else -1) for f in felt.split()]))
    return rows


LINES = read_lines()


def test_the_set_is_big_enough() -> None:
    assert len(LINES) >= 30 and len({poet for poet, *_ in LINES}) >= 15
    assert all(felt and all(w in text for w, _ in felt) for _, _, text, felt in LINES)


@pytest.mark.parametrize("poet, poem, text, felt", LINES, ids=[f"{p}-{n}" for p, n, *_ in LINES])
def test_every_felt_word_is_an_emotion_word_of_its_polarity(poet: str, poem: str, text: str, felt: list) -> None:
    tokens = analyse(text).tokens
    for word, polarity in felt:
        holding = [t for t in tokens if word in t.text or (t.text in word and t.emotion)]  # 独怆 holds 怆
        assert any(t.emotion == polarity for t in holding), (word, [(t.text, t.emotion) for t in tokens])


def test_the_emotion_head_attends_to_what_a_reader_feels() -> None:
    """A line counts when one of the head's two most attended tokens (the real attention, summed over queries) holds a
    felt word: at least 90 % of the lines, as DESIGN.md asks of every head."""
    hits = []
    for _, _, text, felt in LINES:
        top = analyze(text)["top"]["emotion"][:2]
        hits.append(any(w in t or t in w for w, _ in felt for t in top))
    assert sum(hits) >= 0.9 * len(LINES), [LINES[i][2] for i, h in enumerate(hits) if not h]


PROSE = ["寒假到了，我独自在家看书。", "我的亲戚来了，意思是他们很想你。", "恐怕明天会下雨，恐龙很大。",
         "他拒绝了我们的邀请。", "我们学习音乐和思想品德。", "这个国家独立了，天气很寒冷。"]


@pytest.mark.parametrize("text", PROSE)
def test_prose_words_built_of_verse_characters_stay_neutral(text: str) -> None:
    assert all(t.emotion == 0 for t in analyse(text).tokens), [(t.text, t.emotion) for t in analyse(text).tokens]


def test_each_emotion_character_comes_from_the_line_it_names() -> None:
    table = read_table(LEXICON_DIR / "emotion_chars.tsv", SCHEMAS["emotion_chars.tsv"])
    assert len(table) >= 30
    for char, (_, _, source) in table.items():
        assert len(char) == 1 and "《" in source and char in source.split("》", 1)[1], (char, source)
    assert load_lexicon().emotion_chars["孤"] == (-1, False) and load_lexicon().emotion_chars["愁"] == (-1, True)


def test_jiang_xue_makes_a_level_with_its_feeling_up() -> None:
    """The poem of loneliness a teacher was refused for ("head emotion ... is silent"): now a level."""
    poem = "千山鸟飞绝，万径人踪灭。孤舟蓑笠翁，独钓寒江雪。"
    level = {"title": {"zh": "江雪", "en": "River Snow"}, "lang": "zh", "text": poem,
             "target": {"emotion": 0.9, "tone": 0.6, "space": 0.3}}
    checked = api.check_level(level)
    assert checked["ok"], checked["errors"]

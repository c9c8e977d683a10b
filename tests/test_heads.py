"""The specialist heads attend where the lesson says, from the real softmax of compiled weights."""

import collections
from pathlib import Path

import pytest

from dragon import HEADS, analyze

CASES = [
    line.split("\t")
    for line in (Path(__file__).parent / "data" / "head_cases.tsv").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
]
LESSON_ZH = "昨天在公园里，那个悲伤的小女孩正在快乐地玩耍。"
LESSON_EN = "The teacher told the students that they should study hard."


def top2_hit(head: str, word: str, text: str) -> bool:
    top = analyze(text)["top"][head][:2]
    return word.lower() in [t.lower() for t in top]


def test_case_table_is_big_enough() -> None:
    assert len({text for _, _, text in CASES}) >= 40
    per_head = collections.Counter(head for head, _, _ in CASES)
    assert set(per_head) == set(HEADS) and min(per_head.values()) >= 5
    langs = {(head, any("\u4e00" <= ch <= "\u9fff" for ch in text)) for head, _, text in CASES}
    assert len(langs) == 2 * len(HEADS)  # every head has zh and en cases


@pytest.mark.parametrize("head", HEADS)
def test_each_head_finds_its_words(head: str) -> None:
    cases = [(w, t) for h, w, t in CASES if h == head]
    misses = [(w, t, analyze(t)["top"][head][:2]) for w, t in cases if not top2_hit(head, w, t)]
    assert len(misses) <= 0.1 * len(cases), misses


def test_lesson_sentence_zh() -> None:
    r = analyze(LESSON_ZH)
    assert set(r["top"]["time"][:2]) == {"昨天", "正在"}
    assert set(r["top"]["space"][:2]) == {"公园", "里"}
    assert set(r["top"]["emotion"][:2]) == {"悲伤", "快乐"}
    # emotion contrast: 悲伤's own row looks hardest at 快乐, and the other way round
    t, emo = r["tokens"], r["attention"][HEADS.index("emotion")]
    assert t[max(range(len(t)), key=lambda j: emo[t.index("悲伤")][j])] == "快乐"
    assert t[max(range(len(t)), key=lambda j: emo[t.index("快乐")][j])] == "悲伤"


def test_lesson_sentence_en_context_they_to_students() -> None:
    r = analyze(LESSON_EN)
    t = r["tokens"]
    row = r["attention"][HEADS.index("context")][t.index("they")]
    assert t[max(range(len(t)), key=row.__getitem__)] == "students"
    assert row[t.index("students")] > 0.9


def test_silent_head_parks_on_the_sink() -> None:
    r = analyze("床前明月光")  # no connective, no tone particle
    for head in ("logic", "tone"):
        assert r["speaks"][head] < 0.05
        assert r["strength"][head] < 0.1 * max(r["strength"].values())

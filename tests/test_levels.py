"""Every shipped level loads, fits, and every slider level is a good puzzle in both languages."""

from pathlib import Path

import pytest

from dragon import default_dragon
from dragon.chapter1 import compare_heads, finding_heads, token_index
from dragon.levels.claims import silent_heads
from dragon.levels.level import PANEL
from dragon.levels.loader import LANGS, SLIDER_KINDS, LevelError, get_level, load_chapter, load_levels
from dragon.levels.puzzle import check

LEVELS = [lv for c in load_levels() for lv in c.levels]
SLIDERS = [lv for lv in LEVELS if lv.sliders]


def test_chapters_have_what_design_asks_for() -> None:
    kinds = [lv.kind for lv in SLIDERS if lv.chapter == 2]
    assert kinds.count("poem") >= 3 and kinds.count("paper") >= 3 and kinds.count("dialogue") >= 3
    assert kinds[-1] == "mixed"  # the finale
    chapter2 = [lv for lv in SLIDERS if lv.chapter == 2]
    shows = [lv.show for lv in chapter2]
    assert shows[0] == "silhouette" and shows[-1] == "picture"
    assert shows == sorted(shows, key=("silhouette", "picture").index)  # the silhouette goes away, never returns
    assert {lv.id for lv in LEVELS if lv.chapter == 1} == {"1-1", "1-2"}


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.id)
@pytest.mark.parametrize("lang", LANGS)
def test_level_text_fits_the_cap(level, lang) -> None:
    reading = default_dragon().read(level.text[lang], lang)
    assert not reading.analysis.truncated


@pytest.mark.parametrize("level", SLIDERS, ids=lambda lv: lv.id)
@pytest.mark.parametrize("lang", LANGS)
def test_slider_level_is_a_good_puzzle(level, lang) -> None:
    report = check(default_dragon().read(level.text[lang], lang), list(level.target_for(lang)))
    assert report.problems == [], report


@pytest.mark.parametrize("lang", LANGS)
def test_one_head_sees_less_than_eight(lang) -> None:
    truth = compare_heads(get_level("1-1"), lang)
    assert 1 <= len(truth["one_head_sees"]) < len(truth["eight_heads_see"])
    assert abs(sum(truth["one_head_row"]) - 1) < 0.05  # a real softmax row (the sink takes the rest)


@pytest.mark.parametrize("lang", LANGS)
def test_findings_are_found_by_the_lesson_heads(lang) -> None:
    level = get_level("1-2")
    assert finding_heads(level, lang) == [f.expect for f in level.findings]
    reading = default_dragon().read(level.text[lang], lang)
    for f in level.findings:
        token_index(reading, f.word[lang])  # every finding's word is a token of the text


GOOD = """chapter: 9
title: {zh: 测试, en: Test}
levels:
  - id: "9-1"
    kind: mixed
    title: {zh: 题, en: T}
    text: {zh: 床前明月光，低头思故乡。, en: I miss my home.}
    story: {zh: 故事, en: story}
    why: {zh: 原因, en: why}
    target: {grammar: 0, semantics: 0, emotion: 1, logic: 0, time: 0, space: 0.5, tone: 0, context: 0}
    claims:
      zh: [{head: emotion, words: [思]}, {head: logic, silent: true}]
      en: [{head: emotion, words: [miss]}, {head: logic, silent: true}]
"""


@pytest.mark.parametrize(
    "change, message",
    [
        (("kind: mixed", "kind: ballad"), r"levels\[0\] \(9-1\)\.kind: must be one of"),
        # the lesson's panel: a poem weighs emotion and tone ≥ 0.5, or says why it departs (and only a genre can)
        (("kind: mixed", "kind: poem"), r"9-1\)\.departs: the zh target weighs emotion and tone under 0\.5: say why"),
        (("    why: {zh: 原因, en: why}\n", "    why: {zh: 原因, en: why}\n    departs: {zh: 因为, en: because}\n"),
         r"9-1\)\.departs: only a poem, paper, dialogue level can depart"),
        (("emotion: 1,", "emotion: 1.5,"), r"target\.emotion: must be a number between 0 and 1"),
        (("emotion: 1,", "emotion: .nan,"), r"target\.emotion: must be a number between 0 and 1"),
        ((" context: 0}", "}"), r"target: must give exactly the eight heads"),
        (("en: I miss my home.", "en: ''"), r"text\.en: must be a non-empty string"),
        (('id: "9-1"', "id: nine"), r"levels\[0\]\.id: must look like"),
        (("    why: {zh: 原因, en: why}\n", ""), r"\.why: is missing"),
        (("chapter: 9", "chapter: -1"), r"chapter: must be a positive whole number"),
        (("title: {zh: 测试", "title: [zh: 测试"), r"file: cannot be read as YAML"),
    ],
)
def test_malformed_level_file_names_file_and_field(tmp_path: Path, change, message) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(GOOD.replace(*change), encoding="utf-8")
    with pytest.raises(LevelError, match=rf"^bad\.yaml: .*{message}"):
        load_chapter(path)


def test_good_level_file_loads(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text(GOOD, encoding="utf-8")
    (chapter,) = load_levels(tmp_path)
    assert chapter.levels[0].target_for("en") == (0, 0, 1, 0, 0, 0.5, 0, 0) and chapter.levels[0].kind in SLIDER_KINDS


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(GOOD.replace("chapter: 9", "chapter: 8"), encoding="utf-8")
    with pytest.raises(LevelError, match="appears twice"):
        load_levels(tmp_path)


def test_unknown_level_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown level '9-9'"):
        get_level("9-9")


def test_first_collaboration_clues_do_not_name_their_head() -> None:
    """1-2's clues describe the finding; none gives its head away by the head's own name or word for its job."""
    from dragon.config import HEAD_NAMES

    giveaway = {"time": ("when", "time"), "space": ("where", "place", "space"),
                "emotion": ("feeling", "mood", "emotion"), "grammar": ("predicate", "subject", "grammar")}
    level = get_level("1-2")
    for f in level.findings:
        zh_name = HEAD_NAMES[f.expect][0].removesuffix("头")
        assert not set(zh_name) & set(f.says["zh"]), (f.says["zh"], zh_name)
        assert not any(w in f.says["en"].lower() for w in giveaway[f.expect]), f.says["en"]


def test_a_poem_that_keeps_the_panel_may_not_claim_to_depart(tmp_path: Path) -> None:
    text = GOOD.replace("kind: mixed", "kind: poem").replace("tone: 0, context: 0}", "tone: 0.5, context: 0}")
    why = "    why: {zh: 原因, en: why}\n"
    text = text.replace(why, why + "    departs: {zh: 因为, en: because}\n")
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LevelError, match=r"departs: the target keeps the panel \(emotion and tone ≥ 0\.5\): no depart"):
        load_chapter(path)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("kind", list(PANEL))
def test_the_lessons_control_panel_holds_in_two_of_each_genres_levels(kind: str, lang: str) -> None:
    """The lesson: poems turn up emotion and tone, papers logic and semantics, dialogues context and tone — in at
    least two of each genre's three levels per language both weigh ≥ 0.5 and speak; the others say why."""
    levels = [lv for c in load_levels() for lv in c.levels if lv.kind == kind]
    assert len(levels) >= 3
    keep = [lv for lv in levels if lv.keeps_panel(lang)]
    assert len(keep) >= 2, [lv.id for lv in levels]
    for lv in keep:  # the two heads really speak on the text (not a dead weight)
        silent = set(silent_heads(default_dragon().read(lv.text[lang], lang)))
        assert not silent & set(PANEL[kind]), (lv.id, lang, silent)
    for lv in levels:
        assert (lv.departs is None) == all(lv.keeps_panel(x) for x in LANGS), lv.id

"""Claims as data: every level's narration is held to the real attention, in each language."""

import json
import re
from pathlib import Path

import pytest
import yaml

from dragon import default_dragon
from dragon.config import HEADS
from dragon.levels import teacher
from dragon.levels.claims import FOUND_SHARE, MUST_SPEAK, check_level, measure, silent_heads
from dragon.levels.loader import LANGS, LevelError, load_chapter, load_levels
from tests.test_levels import GOOD
from ui.strings import HEAD_NAMES

LEVELS = [lv for c in load_levels() for lv in c.levels]
SLIDERS = [lv for lv in LEVELS if lv.sliders]


def reading(level, lang):
    return default_dragon().read(level.text[lang], lang)


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.id)
def test_every_claim_holds_on_the_real_attention(level) -> None:
    assert check_level(level) == []


@pytest.mark.parametrize("level", SLIDERS, ids=lambda lv: lv.id)
@pytest.mark.parametrize("lang", LANGS)
def test_slider_level_claims_and_why_agree(level, lang) -> None:
    claims = level.claims_for(lang)
    assert any(c.words for c in claims), "a slider level says what at least one head finds"
    why = level.why[lang].lower()
    for c in claims:  # the why is written from the findings: it names each head and each word found
        assert named(c.head, lang, why), f"{level.id} ({lang}): the why does not name the {c.head} head"
        for w in (*c.words, *c.alone):
            assert w.lower() in why, f"{level.id} ({lang}): the why does not mention {w!r} ({c.head})"
    claimed = {c.head for c in claims}
    for head in HEADS:  # and it names no head the claims do not cover
        assert not named(head, lang, why) or head in claimed, f"{level.id} ({lang}): why names {head} unclaimed"


def named(head: str, lang: str, why: str) -> bool:
    zh, en = HEAD_NAMES[head]
    return zh in why if lang == "zh" else re.search(rf"\b{en.lower()}\b", why) is not None


@pytest.mark.parametrize("level", SLIDERS, ids=lambda lv: lv.id)
@pytest.mark.parametrize("lang", LANGS)
def test_no_weighted_or_claimed_head_is_silent(level, lang) -> None:
    r = reading(level, lang)
    silent = set(silent_heads(r))
    weighted = {h for h, g in zip(HEADS, level.target_for(lang), strict=True) if g >= MUST_SPEAK}
    important = {c.head for c in level.claims_for(lang) if c.words}
    assert not (weighted | important) & silent
    for c in measure(r, level.claims_for(lang)):  # the numbers explain() and the reveal show
        assert all(w["attention"] >= FOUND_SHARE for w in c["words"])




def load(tmp_path: Path, text: str):
    path = tmp_path / "pack.yaml"
    path.write_text(text, encoding="utf-8")
    return load_chapter(path)


def test_true_claims_load(tmp_path: Path) -> None:
    (level,) = load(tmp_path, GOOD).levels
    assert [c.head for c in level.claims_for("zh")] == ["emotion", "logic"]


@pytest.mark.parametrize(
    "change, message",
    [  # a claim the engine does not bear out: the file does not load, and says where and by how much
        (("[{head: emotion, words: [思]}", "[{head: emotion, words: [床前]}"),
         r"level 9-1 \(zh\): head emotion: word '床前' gets 0\.\d{3} of the head's attention \(a finding needs"),
        (("{head: logic, silent: true}]\n      en", "{head: space, silent: true}]\n      en"),
         r"level 9-1 \(zh\): head space is said to have nothing to say, but its part of the fused output is 0\.\d\d"),
        (("en: [{head: emotion, words: [miss]}", "en: [{head: tone, words: [miss]}"),
         r"level 9-1 \(en\): head tone is said to find miss, but it is silent \(0\.\d{3}"),
        (("words: [miss]", "words: [moon]"), r"level 9-1 \(en\): head emotion: word 'moon' is not a token"),
        (("logic: 0, time", "logic: 0.5, time"),
         r"level 9-1 \(zh\): head logic has target 0\.5 but is silent in this language \(0\.\d{3}"),
    ],
)
def test_false_claims_do_not_load(tmp_path: Path, change, message) -> None:
    assert change[0] in GOOD
    with pytest.raises(LevelError, match=rf"^pack\.yaml: {message}"):
        load(tmp_path, GOOD.replace(*change))


@pytest.mark.parametrize(
    "change, message",
    [
        (("{head: logic, silent: true}]\n      en", "{head: reason, silent: true}]\n      en"),
         r"claims\.zh\[1\]\.head: must be a head id"),
        (("[{head: emotion, words: [思]}, ", "[{head: logic, words: [思]}, "),
         r"claims\.zh\[1\]\.head: logic is claimed twice"),
        (("words: [miss]", "words: []"), r"claims\.en\[0\]: must list the words"),
        (("      en: [{head: emotion, words: [miss]}, {head: logic, silent: true}]\n", ""),
         r"claims: must give a list for zh and one for en"),
        (("    claims:\n", "    claimz:\n"), r"claims: is missing"),
        (("words: [miss]", "alone: []"), r"claims\.en\[0\]: must list the words"),
        (("words: [miss]", "alone: [1]"), r"claims\.en\[0\]\.alone: must be non-empty strings"),
        (("words: [miss]", "alone: [miss], from: miss"), r"claims\.en\[0\]: must list the words"),
    ],
)
def test_malformed_claims_name_the_field(tmp_path: Path, change, message) -> None:
    assert change[0] in GOOD
    with pytest.raises(LevelError, match=rf"^pack\.yaml: levels\[0\] \(9-1\)\.{message}"):
        load(tmp_path, GOOD.replace(*change))


ZH_CLAIMS = "zh: [{head: emotion, words: [思]}, {head: logic, silent: true}]"
TEACHER_LEVEL = {"title": "思", "lang": "zh", "text": "床前明月光，低头思故乡。", "target": {"emotion": 1}}


@pytest.mark.parametrize(
    "claims, message",
    [
        ("[{head: emotion, words: [1]}]", "[0].words: must be non-empty strings"),
        ("[{head: emotion, from: '', words: [思]}]", "[0].from: must be a word of the text"),
        ("[{head: emotion, silent: maybe, words: [思]}]", "[0]: must list the words"),
        ("[{head: emotion, words: [思]}, {head: emotion, alone: [光]}]", "[1].head: emotion is claimed twice"),
        ("{head: emotion}", ": must be a list of at least one"),
    ],
)
def test_shipped_and_teacher_levels_share_one_claims_parser(tmp_path: Path, claims, message) -> None:
    """The same bad claim, the same message from the level loader and from a teacher's level check."""
    with pytest.raises(LevelError) as shipped:
        load(tmp_path, GOOD.replace(ZH_CLAIMS, f"zh: {claims}"))
    said = str(shipped.value).removeprefix("pack.yaml: levels[0] (9-1).claims.zh")
    assert said.startswith(message)
    assert teacher.canonical({**TEACHER_LEVEL, "claims": yaml.safe_load(claims)})[1] == [f"claims{said}"]


def test_only_a_teacher_may_name_a_head_and_is_held_to_max_claims(tmp_path: Path) -> None:
    with pytest.raises(LevelError, match=r"claims\.zh\[0\]\.head: must be a head id .*, not '情感'$"):
        load(tmp_path, GOOD.replace(ZH_CLAIMS, "zh: [{head: 情感, words: [思]}]"))
    canon, errors = teacher.canonical({**TEACHER_LEVEL, "claims": [{"head": "情感", "words": ["思"]}]})
    assert errors == [] and canon["claims"] == [{"head": "emotion", "words": ["思"]}]
    many = [{"head": h, "silent": True} for h in HEADS] + [{"head": "emotion", "from": "思", "words": ["乡"]}]
    assert teacher.canonical({**TEACHER_LEVEL, "claims": many})[1] == ["claims: lists 9 claims; at most 8"]
    with pytest.raises(LevelError, match=r"level 9-1 \(zh\): head grammar is said to have nothing to say"):
        load(tmp_path, GOOD.replace(ZH_CLAIMS, "zh: " + json.dumps(many, ensure_ascii=False)))  # no cap: measured


def test_a_target_per_language(tmp_path: Path) -> None:
    per_lang = GOOD.replace(
        "    target: {grammar: 0, semantics: 0, emotion: 1, logic: 0, time: 0, space: 0.5, tone: 0, context: 0}",
        "    target:\n"
        "      zh: {grammar: 0, semantics: 0, emotion: 1, logic: 0, time: 0, space: 0.5, tone: 0, context: 0}\n"
        "      en: {grammar: 0, semantics: 0, emotion: 1, logic: 0, time: 0, space: 0, tone: 0, context: 0}",
    )
    (level,) = load(tmp_path, per_lang).levels
    assert level.target_for("zh")[5] == 0.5 and level.target_for("en")[5] == 0.0


@pytest.mark.slow
def test_explain_endpoint_through_the_app(client) -> None:
    """`explain` is on the API page and returns the level's text, target, why and measured claims."""
    assert "/explain" in client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    level = SLIDERS[0]
    for lang in LANGS:
        out = client.predict(level.id, lang, api_name="/explain")
        assert out["text"] == level.text[lang] and out["why"] == level.why[lang]
        assert out["target"] == list(level.target_for(lang)) and out["heads"] == list(HEADS)
        assert [c["head"] for c in out["claims"]] == [c.head for c in level.claims_for(lang)]
        for c in out["claims"]:
            assert set(c["attention"]) == set(c["words"])
            assert all(v >= FOUND_SHARE for v in c["attention"].values())
    for bad in (("9-9", "zh"), (level.id, "fr")):
        with pytest.raises(Exception, match=r"unknown level|lang must be"):
            client.predict(*bad, api_name="/explain")
    lab = client.predict("4-2", "en", api_name="/explain")  # every level kind answers: its scored questions
    assert lab["kind"] == "tower" and {q["id"] for q in lab["questions"]} == {"rises", "adjacent", "quiet", "nearest"}


def test_a_word_looking_at_itself_is_no_link() -> None:
    """静夜思's 霜 is a Semantics word that looks only at itself: as a link it is refused, as `alone` it holds; 明月
    links to 光 (and to the other 明月), so it is no word alone."""
    import dataclasses

    from dragon.levels.claims import problems
    from dragon.levels.level import Claim
    from dragon.levels.loader import get_level

    level = get_level("2-1")
    r = reading(level, "zh")
    linked = dataclasses.replace(level, claims={"zh": (Claim("semantics", ("霜",)),), "en": ()})
    assert any("'霜' gets 0.0" in p and "≥ 0.08" in p for p in problems(linked, "zh", r))
    alone = dataclasses.replace(level, claims={"zh": (Claim("semantics", (), alone=("霜",)),), "en": ()})
    assert problems(alone, "zh", r) == []
    not_alone = dataclasses.replace(level, claims={"zh": (Claim("semantics", (), alone=("明月",)),), "en": ()})
    assert any("'明月' is said to look only at itself" in p for p in problems(not_alone, "zh", r))
    shares = measure(r, (Claim("semantics", ("明月", "光"), alone=("霜",)),))[0]
    assert shares["alone"][0]["self"] > 0.99 and all(w["attention"] >= FOUND_SHARE for w in shares["words"])


@pytest.mark.parametrize("level", [lv for lv in SLIDERS if lv.departs], ids=lambda lv: lv.id)
@pytest.mark.parametrize("lang", LANGS)
def test_a_level_that_departs_from_the_panel_says_why_with_the_measured_numbers(level, lang) -> None:
    """Its departs text names only heads its claims cover (so what it says of them is checked on the attention),
    and the page prints the panel heads' target weights and measured parts of the output beside it."""
    from dragon.levels.claims import loudness
    from dragon.levels.level import PANEL
    from ui.rooms.slider_views import panel_html

    claimed = {c.head for c in level.claims_for(lang)}
    departs = level.departs[lang].lower()
    assert [h for h in HEADS if named(h, lang, departs) and h not in claimed] == []
    assert set(PANEL[level.kind]) <= claimed  # the panel's two heads are both claimed: silent, or what they find
    html = panel_html(level, lang)
    loud = loudness(reading(level, lang))
    for head in PANEL[level.kind]:
        assert f"{float(loud[HEADS.index(head)]):.2f}" in html
    assert 'data-keeps="0"' in html

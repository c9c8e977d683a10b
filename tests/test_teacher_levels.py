"""Teacher-made levels: the format (one message per bad field), the puzzle and claim checks on the real dragon, packs,
share codes, and `check_level` — every path validates the same way."""

import json
import zlib

import pytest

from dragon import api, game
from dragon.config import HEADS
from dragon.engine import default_dragon
from dragon.levels import teacher as teacher_levels
from dragon.scoring import score

POEM = "床前明月光，疑是地上霜。举头望明月，低头思故乡。"
GOOD = {"title": {"zh": "静夜思", "en": "Quiet Night Thoughts"}, "lang": "zh", "text": POEM,
        "target": {"emotion": 0.9, "tone": 0.8, "space": 0.3}}
GOOD_EN = {"title": {"zh": "老师", "en": "The teacher"}, "lang": "en",
           "text": "The teacher told the students that they should study hard.",
           "target": {"context": 0.9, "semantics": 0.6}}
YAML_GOOD = """title: {zh: 静夜思, en: Quiet Night Thoughts}
lang: zh
text: 床前明月光，疑是地上霜。举头望明月，低头思故乡。
target: {emotion: 0.9, tone: 0.8, space: 0.3}
"""


def errors_of(level) -> list[str]:
    result = api.check_level(level)
    assert result["ok"] is False
    return result["errors"]


def test_the_smallest_level_passes_in_each_language_with_its_figures():
    for data in (GOOD, GOOD_EN):
        result = api.check_level(data)
        assert result["ok"], result["errors"]
        q = result["quality"]
        assert set(q) == {"all_equal", "random_median", "near_median", "ascent_steps"}
        assert q["all_equal"] <= 65 and q["random_median"] <= 55 and q["near_median"] >= 85 and q["ascent_steps"] <= 50
        assert result["id"].startswith("t-") and result["code"].startswith("T1.")


def test_yaml_json_and_dict_are_the_same_level():
    as_dict, as_yaml, as_json = (api.check_level(s) for s in (GOOD, YAML_GOOD, json.dumps(GOOD, ensure_ascii=False)))
    assert as_dict["id"] == as_yaml["id"] == as_json["id"]
    assert as_dict["quality"] == as_yaml["quality"]


def test_heads_left_out_weigh_zero_and_the_level_scores_on_the_real_dragon():
    level = teacher_levels.read_level(GOOD)
    assert level.kind == "custom" and level.sliders and level.text_lang == "zh"
    target = level.target_for("en")  # the same target whatever the page's language
    assert target == tuple(GOOD["target"].get(h, 0.0) for h in HEADS)
    reading = default_dragon().read(POEM, "zh")
    assert api.level_reading(level, "en").tokens == reading.tokens  # read as Chinese on an English page too
    assert score(reading, target, target) > 99.99


# At least 15 kinds of malformed level, each with its own message (the field it names, and what is wrong)
MALFORMED = [
    ("not YAML or JSON", "title: [unclosed", "cannot be read as YAML or JSON"),
    ("empty", "   ", "level: is empty"),
    ("a number", "42", "must be a mapping of fields"),
    ("a typo'd field", {**GOOD, "targte": {"emotion": 1}}, "targte: is not a field of a level (did you mean target?)"),
    ("no title", {k: v for k, v in GOOD.items() if k != "title"}, "title: is missing"),
    ("title in one language", {**GOOD, "title": {"zh": "静夜思"}}, "title.en: must be a non-empty string"),
    ("title a number", {**GOOD, "title": 42}, "title: must give zh and en"),
    ("no lang", {k: v for k, v in GOOD.items() if k != "lang"}, "lang: is missing"),
    ("unknown lang", {**GOOD, "lang": "fr"}, "lang: must be zh or en, not 'fr'"),
    ("no text", {k: v for k, v in GOOD.items() if k != "text"}, "text: is missing"),
    ("empty text", {**GOOD, "text": "  "}, "text: must be a non-empty string"),
    ("too long a text", {**GOOD, "text": POEM * 40}, "text: has 960 characters; at most 800"),
    ("text not in its lang", {**GOOD, "text": "The moon is bright tonight."}, "text: has no Chinese characters"),
    ("Chinese text marked en", {**GOOD, "lang": "en"}, "text: is not English, but lang is en"),
    ("no target", {k: v for k, v in GOOD.items() if k != "target"}, "target: is missing"),
    ("target a list", {**GOOD, "target": [0.9, 0.8]}, "target: must map head ids to weights 0–1"),
    ("unknown head", {**GOOD, "target": {"emotion": 0.9, "humour": 0.5}}, "target.humour: is not a head (heads:"),
    ("weight above 1", {**GOOD, "target": {"emotion": 1.5}}, "target.emotion: must be a number from 0 to 1, not 1.5"),
    ("NaN weight", {**GOOD, "target": {"emotion": float("nan")}}, "target.emotion: must be a number from 0 to 1, not nan"),  # noqa: E501
    ("weight a word", {**GOOD, "target": {"emotion": "high"}}, "target.emotion: must be a number from 0 to 1, not 'high'"),  # noqa: E501
    ("all zero", {**GOOD, "target": {"emotion": 0, "tone": 0}}, "target: cannot be all zero"),
    ("unknown genre", {**GOOD, "genre": "novel"}, "genre: must be one of poem, paper, dialogue, mixed, not 'novel'"),
    ("unknown show", {**GOOD, "show": "everything"}, "show: must be one of silhouette, picture, not 'everything'"),
    ("claims not a list", {**GOOD, "claims": {"head": "emotion"}}, "claims: must be a list"),
    ("claim of an unknown head", {**GOOD, "claims": [{"head": "humour", "words": ["思"]}]}, "claims[0].head: must be a head"),  # noqa: E501
    ("claim without words", {**GOOD, "claims": [{"head": "emotion"}]}, "claims[0]: must list the words the head finds"),
    ("explanation a number", {**GOOD, "explanation": 7}, "explanation: must give zh and en, e.g."),
]


@pytest.mark.parametrize(("case", "level", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_level_is_refused_with_its_own_message(case, level, message):
    errors = errors_of(level)
    assert any(message in e for e in errors), errors


def test_the_messages_of_the_malformed_levels_are_all_different():
    firsts = [errors_of(level)[0] for _, level, _ in MALFORMED]
    assert len(set(firsts)) == len(firsts)


def test_every_bad_field_gets_its_own_message():
    errors = errors_of({"title": 3, "lang": "fr", "text": "", "target": {"humour": 2}, "genre": 3})
    assert [e.split(":")[0] for e in errors] == ["title", "lang", "text", "target.humour", "genre"]


def test_a_level_that_is_no_puzzle_is_refused_with_the_condition_and_its_figure():
    equal = dict.fromkeys(HEADS, 0.5)
    errors = errors_of({**GOOD, "target": equal})
    said = next(e for e in errors if e.startswith("puzzle: all sliders equal"))
    figure = float(said.split("score ")[1].split(" ")[0])
    reading = default_dragon().read(POEM, "zh")
    assert figure == pytest.approx(score(reading, [0.5] * 8, [0.5] * 8), abs=0.05)  # the measured number itself
    assert "≤ 65" in said


def test_a_silent_head_with_a_target_is_named():
    errors = errors_of({**GOOD, "target": {"emotion": 0.9, "logic": 0.8}})  # 静夜思 has no connective
    assert any(e.startswith("target: head logic has target 0.8 but is silent") for e in errors), errors


def test_a_claim_the_engine_does_not_bear_out_is_refused_with_its_number():
    errors = errors_of({**GOOD, "claims": [{"head": "emotion", "words": ["床前"]}]})
    said = next(e for e in errors if "床前" in e)
    assert said.startswith("claims: head emotion: word '床前' gets 0.")
    assert "(a finding needs ≥ 0.08)" in said
    assert api.check_level({**GOOD, "claims": [{"head": "emotion", "words": ["思"]}]})["ok"]


def test_a_text_of_emoji_and_punctuation_is_refused():
    assert any("text: is not English" in e for e in errors_of({**GOOD_EN, "text": "😀 🎉 !!! ???"}))
    assert any("text: has no Chinese characters" in e for e in errors_of({**GOOD, "text": "😀😀，。！"}))


def test_html_in_a_level_is_kept_as_text_not_markup():
    level = teacher_levels.read_level({**GOOD, "title": {"zh": "<b>静夜思</b>", "en": "${x} <script>"}})
    assert level.title["en"] == "${x} <script>"  # escaped where it is drawn (ui/draw.esc), never run


# --- packs and share codes ---------------------------------------------------------------------------------------


def test_a_pack_checks_every_level_and_names_each_problem_with_its_place():
    result = api.check_level({"levels": [GOOD, {**GOOD_EN, "target": {"humour": 1}}, GOOD_EN]})
    assert result["ok"] is False and len(result["levels"]) == 3
    assert [r["ok"] for r in result["levels"]] == [True, False, True]
    assert result["errors"] == ["level 2: target.humour: is not a head (heads: " + ", ".join(HEADS) + ")"]
    good = api.check_level({"levels": [GOOD, GOOD_EN]})
    assert good["ok"] and good["code"].startswith("T1.")
    levels = teacher_levels.levels_from_code(good["code"])
    assert [lv.after for lv in levels] == [levels[1].id, None]  # the pack plays in order


@pytest.mark.parametrize(
    ("pack", "message"),
    [({"levels": []}, "pack: has no levels"), ({"levels": [GOOD] * 13}, "pack: holds 13 levels; at most 12"),
     ({"levels": [GOOD, GOOD]}, "pack: holds the same level twice"), ({"levels": GOOD}, "pack: levels must be a list"),
     ({"levels": [GOOD], "author": "me"}, "pack: has fields besides levels")],
)
def test_a_malformed_pack_is_refused(pack, message):
    assert any(message in e for e in errors_of(pack))


def test_a_share_code_carries_the_level_itself_and_comes_back_equal():
    level = teacher_levels.read_level({**GOOD, "explanation": {"zh": "思念", "en": "longing"}, "genre": "poem",
                                       "claims": [{"head": "emotion", "words": ["思"]}]})
    code = teacher_levels.share_code([level])
    assert len(code) < 800  # a short link
    assert teacher_levels.levels_from_code(code) == (level,)
    assert level.id == teacher_levels.level_id(teacher_levels.data_of(level))  # the same level, the same id anywhere


@pytest.mark.parametrize(
    ("code", "message"),
    [("", "has no level in it"), ("DRAGON1-abc", "is not a level's link"), ("T1.@@@@", "is damaged"),
     ("T1." + "A" * 7000, "characters long; at most"), ("T1.eJwzMQIAAJwAZw", "level: must be a mapping"),
     ("T1.eJzLSM3JyQcABiwCFQ", "is damaged"), ("T1.eJzLSM3JyQcA", "is cut short")],
)
def test_a_bad_share_code_is_refused_and_says_why(code, message):
    with pytest.raises(teacher_levels.TeacherLevelError) as err:
        teacher_levels.levels_from_code(code)
    assert any(message in e for e in err.value.errors), err.value.errors


def test_a_share_code_cannot_unpack_into_a_bomb():
    import base64

    bomb = zlib.compress(b'{"title": "' + b"a" * 2_000_000 + b'"}', 9)
    code = "T1." + base64.urlsafe_b64encode(bomb).decode().rstrip("=")
    assert len(code) < teacher_levels.MAX_CODE_CHARS
    with pytest.raises(teacher_levels.TeacherLevelError, match="more than a level pack may hold"):
        teacher_levels.unpack_code(code)


def test_a_tampered_code_is_checked_again_like_any_level():
    data = teacher_levels.data_of(teacher_levels.read_level(GOOD))
    data["target"] = dict.fromkeys(HEADS, 0.5)  # edited to an unfair level
    raw = zlib.compress(json.dumps(data, ensure_ascii=False).encode(), 9)
    import base64

    code = "T1." + base64.urlsafe_b64encode(raw).decode().rstrip("=")
    with pytest.raises(teacher_levels.TeacherLevelError, match="puzzle: all sliders equal"):
        teacher_levels.levels_from_code(code)


def test_a_teacher_level_keeps_its_stars_in_the_progress_but_earns_no_xp():
    level = teacher_levels.read_level(GOOD)
    progress = game.record(game.new_progress(), level.id, 97.0, 3)
    back = game.load(game.save(progress)).progress
    assert back["stars"][level.id] == 3
    assert game.xp(back) == 0
    assert game.load(game.save({**progress, "stars": {"t-nothex": 3}})).progress["stars"] == {}


def test_heads_may_be_named_in_either_language_and_misspellings_get_a_suggestion():
    named = {**GOOD, "target": {"情感头": 0.9, "语调": 0.8, "Space": 0.3}}
    assert api.check_level(named)["id"] == api.check_level(GOOD)["id"]  # the same level
    assert any("target.emotoin: is not a head (did you mean emotion?)" in e
               for e in errors_of({**GOOD, "target": {"emotoin": 0.9}}))
    typo = {k: v for k, v in GOOD.items() if k != "title"} | {"titel": GOOD["title"]}
    assert errors_of(typo) == ["titel: is not a field of a level (did you mean title?)"]  # not also 'title: is missing'


def test_a_one_string_title_is_shown_in_both_languages():
    level = teacher_levels.read_level({**GOOD, "title": "静夜思"})
    assert level.title == {"zh": "静夜思", "en": "静夜思"}

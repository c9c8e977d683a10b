"""The classroom's handlers without a browser: the exam switch holds on the server, the reveal moves the sliders, the
sandbox's refusals are said in the page's language with the measured figures, a made level's why is measured."""

import json

from dragon import api
from dragon.config import HEADS
from dragon.levels import teacher as teacher_levels
from dragon.levels.claims import top_words
from ui import handlers
from ui.rooms import sliders as play
from ui.session import level_of
from ui.strings import head_name
from ui.teacher import box as teacher_box
from ui.teacher import sandbox
from ui.teacher.view import reasons

SENTENCE = "昨天在公园里，那个悲伤的小女孩正在快乐地玩耍。"
POEM = {"title": {"zh": "床前明月", "en": "Moon by My Bed"}, "lang": "zh",
        "text": "床前明月光，疑是地上霜。举头望明月，低头思故乡。",
        "target": {"emotion": 0.9, "tone": 0.8, "space": 0.3}}


def opened(**boot) -> dict:
    return handlers.boot(json.dumps(boot, ensure_ascii=False), None)


def test_an_exam_refuses_hints_demo_and_reveal_on_the_server_too():
    code = api.check_level(POEM)["code"]
    out = opened(lang="zh", custom=code, exam=True)
    state, saved = out["session"], out["saved"]
    assert state["exam"] is True and level_of(state).kind == "custom"
    assert play.hint(state, saved, [0.5] * 8) == {} and play.reveal(state, saved, [0.5] * 8) == {}
    assert list(play.demo(state, saved, [0.5] * 8)) == []
    assert out["teacher"]["body"] == ""  # no answer key in an exam
    assert teacher_box.make_file(state, saved, [0.5] * 8, {"what": "key"}) == {}


def test_the_reveal_moves_the_sliders_to_the_target():
    out = opened(lang="en", level="2-1")
    answer = play.reveal(out["session"], out["saved"], [0.5] * 8)
    assert answer["panel"]["value"] == [round(v, 2) for v in api.explain("2-1", "en")["target"]]


def test_the_sandboxs_refusal_is_in_the_pages_language_with_the_measured_figures():
    out = opened(lang="zh", sandbox=True, text=SENTENCE)
    body = sandbox.make_level(out["session"], out["saved"], [0.5] * 8, {})["sandbox"]["body"]
    equal = dict.fromkeys(HEADS, 0.5)
    checked = teacher_levels.check_data({"title": "x", "lang": "zh", "text": SENTENCE, "target": equal})
    said = reasons(checked, "zh")
    assert all(r in body for r in said)
    assert any(f"{checked.quality['all_equal']:.1f}" in r and "所有滑杆一样高" in r for r in said)
    silent = api.silent_heads(api.text_reading(SENTENCE, "zh"))
    assert silent and all(any(head_name(h, "zh") in r for r in said) for h in silent)


def test_a_made_level_opens_and_its_why_names_what_its_heads_find():
    out = opened(lang="zh", sandbox=True, text=SENTENCE)
    gates = [0, 0, 0.9, 0, 0.8, 0, 0, 0.2]
    made = sandbox.make_level(out["session"], out["saved"], gates, {"title_zh": "公园"})
    level = level_of(made["session"])
    assert level.target_for("zh") == tuple(gates) and made["panel"]["code"] == made["session"]["custom"]
    why = play.why_block(level, "zh")
    reading = api.level_reading(level, "zh")
    for head in ("emotion", "time"):
        w, v = top_words(reading, head, 1)[0]
        assert f"{w} {v:.2f}" in why


def test_a_bad_file_in_the_teachers_box_changes_nothing_but_its_message():
    out = opened(lang="en", level="2-1")
    answer = teacher_box.open_source(out["session"], out["saved"], {"source": "title: [oops"})
    assert set(answer) == {"teacher"} and "cannot be read as YAML or JSON" in answer["teacher"]["message"]
    answer = teacher_box.open_source(out["session"], out["saved"], {"source": "<script>alert(1)</script>"})
    assert "<script>" not in answer["teacher"]["message"]


def test_the_box_is_left_open_or_shut_as_the_teacher_has_it_unless_it_answers() -> None:
    """A view that lands after the teacher opened the box (a slow sandbox reading, a level's first view) must not shut
    it: only an answer the box shows (a refusal, a level opened) says it is open."""
    from dragon.levels.loader import get_level
    from ui.teacher.view import teacher_props

    for level in (get_level("2-1"), None):
        assert "open" not in teacher_props(level, "en", {"level": "2-1"})
        assert teacher_props(level, "en", {"level": "2-1"}, "said", opened=True)["open"] is True

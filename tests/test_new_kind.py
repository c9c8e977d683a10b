"""README's "Adding a level kind" is the whole recipe: a made-up kind ("loudest": which head speaks loudest on the
level's text) added through it alone gets its answer key from explain, a panel and a checked answer from its room,
a printed worksheet, and the margin rule of tests/test_fair.py."""

import dataclasses

import pytest

from dragon import answer_keys, api, game, margins
from dragon.config import HEADS
from dragon.levels.claims import loudness
from dragon.levels.loader import get_level
from tests.test_fair import check_margins
from ui.rooms import lab, registry
from ui.strings import head_name
from ui.teacher import worksheet

KIND = "loudest"


def loudest_questions(level, lang: str) -> list[dict]:
    """The made-up lesson's answer key: the loudest head on the level's text, by its lead over the next."""
    loud = {h: float(v) for h, v in zip(HEADS, loudness(api.level_reading(level, lang)), strict=True)}
    best = max(loud, key=loud.get)
    return [margins.question("loudest", [best], loud[best], margins.lead(loud, [best]), "share")]


def loudest_panel(level, lang: str, progress: dict, attempt: dict, note: str) -> str:
    choices = [(h, head_name(h, lang)) for h in HEADS]
    ask = lab.asks(lab.select("loudest", "head", choices, None, lang))
    return lab.question("Which head speaks loudest?") + ask + note


def check_loudest(level, lang: str, progress: dict, attempt: dict, data: dict):
    right = answer_keys.questions(level, lang)[0]["accepted"]
    return progress, {**attempt, "right": data.get("loudest") in right}, ""


@pytest.fixture
def new_kind(monkeypatch: pytest.MonkeyPatch):
    """The recipe's registrations, each in its one place (undone after the test)."""
    monkeypatch.setitem(answer_keys.QUESTIONS, KIND, loudest_questions)
    monkeypatch.setitem(registry.ROOMS, KIND, lab.Room(loudest_panel, {"check": lab.Action(check_loudest)}))
    base = get_level("3-3")  # any level's text; a level file of the kind would say `kind: loudest`
    return dataclasses.replace(base, id="9-1", kind=KIND)


def test_a_new_kind_is_explained_played_printed_and_fair(new_kind) -> None:
    level = new_kind
    for lang in ("zh", "en"):
        out = api.explain_level(level, lang)
        assert out["kind"] == KIND and [q["id"] for q in out["questions"]] == ["loudest"]
        check_margins(out, level.id)  # the fairness rule holds for it, or the kind is not ready
        body = registry.lab_props(level, lang, game.new_progress())["body"]
        assert 'data-answer="loudest"' in body  # its room's panel
        right = out["questions"][0]["accepted"][0]
        action = registry.actions(registry.ROOMS[KIND])["check"]
        assert action.fn(level, lang, {}, {"level": level.id}, {"loudest": right})[1]["right"] is True
        assert "again" in registry.actions(registry.ROOMS[KIND])  # every room can start over
        page = worksheet.worksheet_html(level, lang, answers=True)  # printed plainly until it has wording
        assert "loudest" in page and right in page.split('class="key"')[1]  # the question asked, answered in the key


def test_a_kind_without_an_answer_key_is_said_not_guessed() -> None:
    level = dataclasses.replace(get_level("3-3"), id="9-2", kind="nobody-registered")
    with pytest.raises(ValueError, match="has no answer key"):
        api.explain_level(level, "en")

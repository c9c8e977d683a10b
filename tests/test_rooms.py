"""The registry of rooms (ui/rooms/registry.py) and the lab toolkit (ui/rooms/lab.py): every lab level kind has one
room, every button on a panel is an action of its room, a new kind is one entry, and only the toolkit writes the
blocks."""

import dataclasses
import re
from pathlib import Path

import pytest

from dragon import game
from dragon.levels.level import LAB_KINDS
from dragon.levels.loader import all_levels, get_level
from ui.rooms import lab
from ui.rooms import registry as rooms
from ui.rooms.lab import Action, Room

ROOT = Path(__file__).resolve().parent.parent
# the blocks every lab level is made of: only ui/rooms/lab.py writes their HTML
BLOCKS = (
    "answer-row", "result-box", "result-head", "lab-end", "cap-note", 'class="question', 'class="rule', "lab-buttons",
    "<select", 'role="status"', 'class="asks', 'class="note', 'class="sub"', "<h3", "data-answer",
)


def test_every_lab_kind_has_one_room_and_no_other_kind_has_one() -> None:
    assert set(rooms.ROOMS) == set(LAB_KINDS)
    for level in all_levels().values():
        assert (level.kind in rooms.ROOMS) == level.lab, level.id


def test_every_event_is_named_once_and_none_runs_in_gradios_queue_for_long() -> None:
    """One listener per event name; a race, a training or a load hands its run to the lane and answers at once
    (tests/test_runs.py), so no lab action takes a progress bar or a concurrency limit."""
    assert len(rooms.EVENTS) == len(set(rooms.EVENTS)) and {"race", "train", "grow", "warm"} <= set(rooms.EVENTS)
    every = [a for room in rooms.ROOMS.values() for a in rooms.actions(room).values()]
    assert all(set(dataclasses.asdict(a)) == {"fn", "scored"} for a in every)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_button_on_a_lab_panel_is_an_action_of_its_room(lang: str) -> None:
    progress = game.new_progress()
    for level in all_levels().values():
        if not level.lab:
            continue
        body = rooms.lab_props(level, lang, progress)["body"]
        asked = set(re.findall(r'data-act="(\w+)"', body)) | set(re.findall(r'data-autoload="(\w+)"', body))
        assert asked, level.id
        assert asked <= set(rooms.actions(rooms.ROOMS[level.kind])) | {"next"}, (level.id, asked)


def test_a_new_kind_is_one_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A room added to ROOMS is drawn and answered with nothing else changed (here a level of a made-up kind)."""
    level = dataclasses.replace(get_level("5-1"), kind="echo")
    seen = []

    def panel(level, lang, progress, attempt, note) -> str:
        said = note + attempt.get("said", "")
        check = lab.checking(level, lang, progress, attempt, check=lab.button("say", "Say"), result=said)
        return lab.room("echo", lab.question("say?"), check)

    def say(level, lang, progress, attempt, data):
        seen.append(data)
        if data.get("word") != "hi":
            return progress, attempt, lab.refusal("say hi")
        return lab.record(progress, level, 100.0, 3), {**attempt, "said": "hi!", "stars": 3}, ""

    monkeypatch.setitem(rooms.ROOMS, "echo", Room(panel, {"say": Action(say)}))
    monkeypatch.setattr(rooms, "get_level", lambda level_id: level)
    state, saved = {"level": "5-1", "lang": "en"}, game.save(game.new_progress())
    assert 'data-act="say"' in rooms.lab_props(level, "en", game.new_progress())["body"]
    refused = rooms.answer("say", state, saved, {"word": "bye"})
    assert set(refused) == {"lab"} and "say hi" in refused["lab"]["body"]
    out = rooms.answer("say", state, saved, {"word": "hi"})
    assert "hi!" in out["lab"]["body"] and game.load(out["saved"]).progress["stars"]["5-1"] == 3
    assert rooms.answer("again", out["session"], out["saved"])["session"]["lab"] == {"level": "5-1"}
    assert rooms.answer("predict", state, saved, {}) == {}  # another room's button does nothing here
    assert len(seen) == 2


def test_only_the_toolkit_writes_the_blocks() -> None:
    """The question / check / result / retry blocks come from ui/rooms/lab.py; the rooms' modules only call it."""
    uses = re.compile(r"^from ui\.rooms\.lab import|^from ui\.rooms import .*\blab\b", re.M)
    users = [p for p in sorted((ROOT / "ui").rglob("*.py"))
             if p.stem not in ("lab", "registry") and uses.search(p.read_text(encoding="utf-8"))]
    rooms_by_kind = {"formula", "race", "fusion", "heads", "scroll", "crystal", "tower", "grow", "prune", "stability",
                     "router", "positions", "badge"}
    assert {p.stem for p in users} >= rooms_by_kind
    found = [f"{p.name}: {b}" for p in users for b in BLOCKS if b in p.read_text(encoding="utf-8")]
    assert found == []
    toolkit = (ROOT / "ui" / "rooms" / "lab.py").read_text(encoding="utf-8")
    assert all(b in toolkit for b in BLOCKS)


def test_the_toolkit_escapes_what_it_is_given() -> None:
    nasty = "<script>x</script> ${y} {{z}}"
    html = lab.question(nasty) + lab.note(nasty, v=nasty) + lab.verdict(nasty, w=nasty) + lab.rule(nasty)
    html += lab.select("a", nasty, [(nasty, nasty)], nasty, "en") + lab.text_field("b", nasty, nasty, 9)
    assert "<script" not in html and "${" not in html and "{{" not in html


def test_a_read_rooms_star_rule_says_what_its_predictions_can_add() -> None:
    """game.points_stars: all but one right adds a star only with three or more predictions; the rule says so."""
    from dragon import game
    from ui.rooms import lab

    for n in (1, 2, 3, 4):
        said_all_but_one = "all but one" in lab.read_rule("en", n)
        all_but_one = game.read_stars(game.points_stars(n - 1, n), True) if n > 1 else 1
        assert said_all_but_one == (all_but_one == 2), n

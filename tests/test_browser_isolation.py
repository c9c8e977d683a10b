"""Isolation, in real Chromium: two browser contexts of one browser play at the same time — one in the sandbox with
a sentence of its own (and a level made of it), the other mid-demo on a slider level or mid-training on 3-4 with a
seed of its own — and neither ever shows the other's level, sentence, demo, run or stars. A watcher in each page looks
at its whole text every 100 ms from the first moment on, so a leak that shows and goes again is caught too; each
context's storage (language, projector mode, progress) stays its own, and a reload brings back only its own."""

import json
import threading
import time

import pytest

from dragon import game
from dragon.config import HEADS
from dragon.lessons import heads_experiment as heads_lesson
from dragon.levels.loader import get_level, load_levels
from tests.test_browser import SIZES, shot
from tests.test_browser_injection import fair_target, set_gates
from tests.test_browser_teacher import ready_any
from ui.rooms import sliders as play
from ui.strings import t

pytestmark = pytest.mark.browser

SENTENCE = "Seven quiet zebras juggled purple lanterns beside the frozen harbour."  # A's own, seen nowhere else
OWN_TITLE = "Zebra lanterns at the harbour"  # the level A makes of it
SEED = 73129  # B's own training run: no other test trains it
PROGRESS = "multi-head-dragon-progress"

# Every 100 ms: the page's whole text (with every box's value) searched for what must never show there, and the
# page searched for the elements named (a selector: "#…").
NEVER = """(never) => {
  const seen = [];
  Object.defineProperty(window, "__seen", { value: seen, configurable: false });
  const look = () => {
    if (!document.body) return;
    const boxes = [...document.querySelectorAll("input, textarea")].map((e) => e.value).join("\\n");
    const text = document.body.innerText + "\\n" + boxes;
    const found = never.filter((s) => text.includes(s) || (s.startsWith("#") && document.querySelector(s)));
    for (const s of found) {
      if (seen.includes(s)) continue;
      seen.push(s);
      window.__reportSeen(s); // to the test at once: a reload forgets this page's list, not the test's
    }
  };
  setInterval(look, 100);
  document.addEventListener("DOMContentLoaded", look);
}"""


class Player:
    """One browser context of its own, watched for what must never show in it."""

    def __init__(self, browser, app_url: str, query: str, never: list[str]):
        width, height = SIZES["desktop"]
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.found: list[str] = []
        self.context.expose_function("__reportSeen", lambda s: self.found.append(s))
        self.context.add_init_script(script=f"({NEVER})({json.dumps(never)})")
        self.errors: list[str] = []
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(f"{app_url}?{query}")
        ready_any(self.page)

    def text(self) -> str:
        return self.page.locator("body").inner_text()

    def seen(self) -> list[str]:
        """Everything forbidden this context ever showed, in any of its pages, since it opened."""
        self.page.wait_for_timeout(150)  # one more look
        return sorted(set(self.found) | set(self.page.evaluate("window.__seen")))

    def storage(self) -> dict:
        return self.page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")

    def stars(self) -> str:
        return self.page.locator("#top .xp").inner_text()

    def gates(self) -> list[float]:
        return [float(self.page.locator(f"#mhd-s{i}").input_value()) for i in range(len(HEADS))]


@pytest.fixture
def players(browser, app_url):
    made: list[Player] = []

    def open_player(query: str, never: list[str]) -> Player:
        made.append(Player(browser, app_url, query, never))
        return made[-1]

    yield open_player
    for p in made:
        p.context.close()
    assert not [e for p in made for e in p.errors], [e for p in made for e in p.errors]


def total_stars() -> int:
    """The most stars of the shipped levels, as the top bar counts them."""
    return 3 * sum(len(c.levels) for c in load_levels())


def read_sandbox(a: Player) -> None:
    """A types its sentence and the dragon reads it."""
    a.page.fill("#mhd-sb-text", SENTENCE)
    a.page.click("#mhd-sb-read")
    a.page.wait_for_function("(x) => document.querySelector('#sandbox .top-words') && "
                             "document.querySelector('#mhd-sb-text').value === x", arg=SENTENCE)


class HeldClock:
    """ui/rooms/sliders.py's clock, whose pause after the demo's second step waits until the test lets it go: B is
    mid-demo (the goddess's gauge on screen, her sliders off the player's) for as long as A is being checked."""

    def __init__(self) -> None:
        self.gate, self.held, self.steps = threading.Event(), threading.Event(), 0

    def __getattr__(self, name: str):
        return getattr(time, name)

    def sleep(self, seconds: float) -> None:
        self.steps += 1
        if self.steps == 2:
            self.held.set()
            self.gate.wait(90)
        time.sleep(seconds)


def test_the_sandbox_and_a_goddess_demo_at_the_same_time(players, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = HeldClock()
    monkeypatch.setattr(play, "time", clock)
    level = get_level("2-4")
    b_says = [t("demo_says", "zh"), t("demo_done", "zh"), level.story["zh"], level.title["zh"]]
    a = players("sandbox=1&lang=en", never=[*b_says, t("demo_says", "en"), "#panel .gauge.demo"])
    b = players("level=2-4&lang=zh&projector=1", never=[SENTENCE, "zebras", "lanterns"])
    read_sandbox(a)
    mine = [0.9, 0.5, 0.5, 0.2, 0.5, 0.5, 0.5, 0.5]
    b.page.click("#mhd-demo")
    try:
        assert clock.held.wait(60), "the demo never reached its second step"
        b.page.wait_for_selector("#panel .gauge.demo")  # B is mid-demo: its sliders on the gradient's path
        for i in (0, 3):  # meanwhile A moves its own sliders
            box = a.page.locator(f"#panel .srow >> nth={i} >> input.num")
            box.fill(str(mine[i]))
            box.press("Enter")
        same = "g => [...document.querySelectorAll('#panel input.range')].every((r, i) => +r.value === g[i])"
        a.page.wait_for_function(same, arg=mine)
        during = b.gates()
        assert a.gates() == mine and a.page.locator("#panel .gauge.demo").count() == 0
        assert a.page.locator("#top .level-title").inner_text() == t("sb_title", "en")
        assert level.title["zh"] in b.page.locator("#top .level-title").inner_text()
        shot(a.page, "isolation-sandbox-during-demo")
        shot(b.page, "isolation-demo-during-sandbox")
        assert a.seen() == [] and b.seen() == [], (a.seen(), b.seen())
        assert b.page.locator("#panel .gauge.demo").count() == 1, "the demo ended before A was checked: no overlap"
    finally:
        clock.gate.set()
    b.page.wait_for_function("(x) => document.querySelector('#panel .feedback').textContent.includes(x)",
                             arg=t("demo_done", "zh"), timeout=60_000)
    assert during != [0.5] * 8 and b.gates() == [0.5] * 8  # B's own sliders, put back: none of A's
    assert a.gates() == mine and SENTENCE == a.page.locator("#mhd-sb-text").input_value()
    set_gates(b.page, dict(zip(HEADS, level.target_for("zh"), strict=True)))  # B wins 2-4 (★ after the demo)
    b.page.wait_for_function(f"document.querySelector('#top .xp').textContent.includes('★ 1/{total_stars()}')")
    b.page.wait_for_function(f"localStorage.getItem('{PROGRESS}') !== null")
    assert f"★ 0/{total_stars()}" in a.stars()
    option = a.page.locator("#top .level-pick option[value='2-4']").inner_text()
    assert "★" not in option and t("shown_mark", "en") not in option  # B's demo and star are B's
    sa, sb = a.storage(), b.storage()
    assert (sa["dragon-lang"], sb["dragon-lang"]) == ("en", "zh")
    assert (sa["dragon-projector"], sb["dragon-projector"]) == ("0", "1")
    assert sa.get(PROGRESS) != sb[PROGRESS]
    a.page.reload()  # A's browser brings back A's own progress and text, nothing of B's
    ready_any(a.page)
    assert f"★ 0/{total_stars()}" in a.stars() and a.page.locator("#mhd-sb-text").input_value() == SENTENCE
    b.page.reload()
    ready_any(b.page)
    assert f"★ 1/{total_stars()}" in b.stars() and level.title["zh"] in b.page.locator("#top .level-title").inner_text()
    assert a.seen() == [] and b.seen() == [], (a.seen(), b.seen())
    assert "zebras" not in b.text() and t("demo_done", "zh") not in a.text()


def test_the_sandbox_and_a_training_run_at_the_same_time(players, monkeypatch: pytest.MonkeyPatch) -> None:
    """B trains 3-4 with a seed of its own, held mid-training (the live curve begun) while A reads its sentence and
    makes a level of it, then wins that level; B reads its bars and earns its stars. Neither sees the other's."""
    gate, held = threading.Event(), threading.Event()
    real = heads_lesson.run

    def held_run(ex, device=None, progress=None):
        points = []

        def report(fraction, what, point=None):
            out = progress(fraction, what, point) if point is not None else progress(fraction, what)
            points.append(point) if point is not None else None
            if len(points) == 3 and not held.is_set():  # mid-training: three points of the live curve drawn
                held.set()
                gate.wait(90)
            return out

        return real(ex, device, report if progress is not None else None)

    monkeypatch.setattr(heads_lesson, "run", held_run)
    seed_words = [t("w_seed", "zh", seed=SEED).strip("（）"), t("w_seed", "en", seed=SEED).strip(), str(SEED)]
    a = players("sandbox=1&lang=en", never=[*seed_words, t("w_train", "zh"), "#lab .wait-box"])
    b = players("level=3-4&lang=zh", never=[SENTENCE, "zebras", OWN_TITLE])
    try:
        ranking = [16, 8, 4, 2, 1]
        for i, h in enumerate(ranking):
            b.page.locator(f"#lab [data-answer=r{i}]").select_option(str(h))
        b.page.locator('#lab [data-answer="seed"]').fill(str(SEED))
        b.page.locator("#mhd-lab-train").click()
        assert held.wait(120), "B's training never reached its third curve point"
        b.page.wait_for_selector("#lab .wait-box svg", timeout=30_000)  # B is mid-training: the live curve
        read_sandbox(a)
        target = fair_target(SENTENCE)
        set_gates(a.page, target)
        a.page.fill("#sandbox [data-field=title_en]", OWN_TITLE)
        a.page.click("#mhd-sb-make")
        a.page.wait_for_function("(x) => document.querySelector('#top .level-title').textContent.includes(x)",
                                 arg=OWN_TITLE)
        a.page.wait_for_selector("#panel .score-value")
        set_gates(a.page, {h: 0.0 for h in HEADS})  # moved away, then A wins its own level
        set_gates(a.page, target)
        a.page.wait_for_selector("#panel .scorebox.w3")
        assert a.page.locator("#lab .wait-box").count() == 0 and str(SEED) not in a.text()
        assert a.seen() == [] and b.seen() == [], (a.seen(), b.seen())
        assert b.page.locator("#lab .wait-box").count() == 1, "B's run ended before A was checked: no overlap"
        assert t("w_train", "zh") in b.page.locator("#lab .wait-line").inner_text()
        assert not [o for o in b.page.locator("#top .level-pick option").all_inner_texts() if OWN_TITLE in o]
        shot(a.page, "isolation-own-level-during-training")
        shot(b.page, "isolation-training-during-sandbox")
    finally:
        gate.set()
    b.page.wait_for_selector("#lab .heads-result", timeout=120_000)
    bars = json.loads(b.page.locator("#lab .acc-box").get_attribute("data-accuracy"))
    accuracy = {int(h): v for h, v in bars.items()}
    b.page.locator("#lab [data-answer=read]").select_option(str(min(accuracy, key=accuracy.get)))
    b.page.locator("#mhd-lab-check").click()
    b.page.wait_for_selector("#lab .lab-end")
    earned = int(b.page.locator("#lab .lab-end").get_attribute("data-stars"))
    assert earned == game.read_stars(game.rank_stars(*game.rank_pairs(ranking, accuracy)), True) >= 1
    b.page.wait_for_function("(s) => document.querySelector('#top .xp').textContent.includes(s)",
                             arg=f"★ {earned}/{total_stars()}")
    assert f"★ 0/{total_stars()}" in a.stars()  # A won only its own level, which earns no shipped star
    assert "★" not in a.page.locator("#top .level-pick option[value='3-4']").inner_text()
    assert not [o for o in b.page.locator("#top .level-pick option").all_inner_texts() if OWN_TITLE in o]
    sa, sb = a.storage(), b.storage()
    assert (sa["dragon-lang"], sb["dragon-lang"]) == ("en", "zh") and sa[PROGRESS] != sb[PROGRESS]
    for p in (a, b):
        p.page.reload()
        ready_any(p.page)
    assert OWN_TITLE in a.page.locator("#top .level-title").inner_text() and f"★ 0/{total_stars()}" in a.stars()
    assert "★★★" in a.page.locator("#top .level-pick option", has_text=OWN_TITLE).inner_text()  # A's own stars kept
    assert f"★ {earned}/{total_stars()}" in b.stars()
    assert not [o for o in b.page.locator("#top .level-pick option").all_inner_texts() if OWN_TITLE in o]
    assert a.seen() == [] and b.seen() == [], (a.seen(), b.seen())

"""The classroom in headless Chromium: on the projector (1920 × 1080) every lab level's answer is in view, whole, right
after the action that asks for it, and 4-1's heads read from the back row; on a 390 × 844 phone nothing scrolls while
a finger is down, the sticky block takes at most a quarter of the screen and every control is 44 × 44 CSS px; a slider
level and a lab level are played with the keyboard alone; every attention map says its numbers in words; colour is
never the only cue; and axe-core finds no serious or critical violation (tests/a11y.py). Viewport screenshots land
in test-artifacts/."""

import json

import pytest

from dragon import api, game
from dragon.config import HEADS
from dragon.lessons import fusion as fusion_lesson
from dragon.lessons import positions as positions_lesson
from dragon.lessons import router as router_lesson
from dragon.lessons import stability as stability_lesson
from dragon.lessons import tower as tower_lesson
from dragon.levels.claims import top_words
from dragon.levels.loader import get_level, load_levels
from tests.a11y import audit, summary
from tests.test_browser import SIZES, in_view, open_codes, open_page, shot, wait_score, win  # noqa: F401  (fixtures)
from tests.test_browser_chapter3 import MOBILE, open_lab, wait_text  # noqa: F401  (open_lab: a fixture)
from ui.rooms import formula as formula_room
from ui.rooms import fusion as fusion_room
from ui.strings import head_label, t

pytestmark = pytest.mark.browser
SLOW = 60_000
SCREEN = SIZES["projector"][1]
PHONE_H = SIZES["phone"][1]
TAP = 44  # CSS px, each side

# --- 5. projector: each lab level's answer in view, whole, as the teacher explains it -----------------------------

RESULT = "#lab .result-box"


def answer_fits(page, what: str) -> dict:
    """The answer just given lies wholly inside the 1920 × 1080 screen (the page brings it into view itself)."""
    fits = in_view(page, RESULT, within_ms=3000)
    box = page.evaluate(
        "(s) => { const r = document.querySelector(s).getBoundingClientRect();"
        " return {top: r.top, bottom: r.bottom, height: r.height, pageBottom: r.bottom + scrollY}; }", RESULT
    )
    assert fits, f"{what}: the answer is not wholly in view: {box}"
    assert box["height"] <= SCREEN, f"{what}: the answer is {box['height']:.0f} px tall"
    return box


def play_lab(page, level_id: str, lang: str) -> list[str]:
    """Play a lab level as a player would, checking after each action that its answer fits the screen; the names of
    the actions checked."""
    L = page.locator
    done = []

    def acted(name: str) -> None:
        answer_fits(page, f"{level_id} {name}")
        done.append(name)
        shot(page, f"classroom-projector-{level_id}-{name}")

    if level_id == "3-1":
        m = formula_room.round_math(get_level("3-1"), lang, 0)
        L("#lab [data-answer=winner]").select_option(str(m["winner"]))
        L("#lab [data-answer=share]").select_option(str(game.bucket(max(m["weights"]), game.SHARE_BUCKETS)))
        L("#mhd-lab-check").click()
        page.wait_for_selector("#lab .result-head")
        acted("check")
    elif level_id == "3-2":
        L("#lab [data-answer=guess]").fill("2")
        L("#mhd-lab-race").click()
        page.wait_for_selector("#lab .result-head[data-measured]", timeout=SLOW)
        acted("race")
        L("#lab [data-answer=work]").select_option("same")
        L("#mhd-lab-check").click()
        page.wait_for_selector("#lab .lab-end")
        acted("read")
    elif level_id == "3-3":
        for i, step in enumerate(fusion_room.STEP_KEYS):
            L(f"#lab [data-answer=o{i}]").select_option(step)
        L("#lab [data-answer=keep]").select_option("0")
        L("#lab [data-answer=reach]").select_option("1")
        L("#mhd-lab-predict").click()
        page.wait_for_selector("#lab [data-switch]")
        acted("predict")
        f = api.fusion(get_level("3-3").text[lang], lang)
        L("#lab [data-answer=read]").select_option(str(fusion_lesson.read_answer(f, game.REACH_BUCKETS)))
        L("#mhd-lab-check").click()
        page.wait_for_selector("#lab .lab-end")
        acted("read")
    elif level_id == "3-4":
        for i, h in enumerate([16, 8, 4, 2, 1]):
            L(f"#lab [data-answer=r{i}]").select_option(str(h))
        L("#mhd-lab-train").click()
        page.wait_for_selector("#lab .acc-box", timeout=120_000)
        acted("train")
        accuracy = {int(h): a for h, a in json.loads(L("#lab .acc-box").get_attribute("data-accuracy")).items()}
        L("#lab [data-answer=read]").select_option(str(min(accuracy, key=accuracy.get)))
        L("#mhd-lab-check").click()
        page.wait_for_selector("#lab .lab-end")
        acted("read")
    elif level_id == "3-5":
        L("#lab [data-answer=cross]").select_option("512")
        L("#lab [data-answer=heads]").select_option("0")
        L("#mhd-lab-scroll").click()
        page.wait_for_selector("#lab .result-head", timeout=SLOW)
        acted("scroll")
        L("#lab [data-answer=read]").select_option("1")
        L("#mhd-lab-check").click()
        page.wait_for_selector("#lab .lab-end")
        acted("read")
    elif level_id == "4-1":
        L('#lab .cb-map[data-pick="3,1"]').click()
        page.wait_for_selector("#lab .lab-end")
        acted("pick")
    elif level_id == "4-2":
        key = tower_lesson.answer_key(api.tower())
        L("#lab [data-answer=rises]").select_option("yes")
        L("#lab [data-answer=adjacent]").select_option(key["adjacent"]["accepted"][0])
        L("#lab [data-answer=quiet]").select_option(key["quiet"]["accepted"][0])
        L("#mhd-lab-predict").click()
        page.wait_for_selector("#lab [data-answer=nearest]")
        acted("predict")
        L("#lab [data-answer=nearest]").select_option(key["nearest"]["accepted"][0])
        L("#mhd-lab-check").click()
        page.wait_for_selector("#lab .lab-end")
        acted("read")
    elif level_id == "4-3":
        L("#mhd-lab-grow").click()
        page.wait_for_selector("#lab .snap", timeout=SLOW)
        for i in range(L("#lab .snap").count()):
            L(f"#lab [data-answer=s{i}]").select_option("random")
        L("#mhd-lab-stages").click()
        page.wait_for_selector("#lab .lab-end")
        acted("stages")
    elif level_id == "4-4":
        L("#lab [data-answer=h0]").set_checked(False)
        L("#mhd-lab-measure").click()
        page.wait_for_selector("#lab .result-head[data-accuracy]")
        acted("measure")
        for i, on in enumerate(api.prune_best(0)["patterns"][0]):
            L(f"#lab [data-answer=h{i}]").set_checked(bool(on))
        L("#mhd-lab-submit").click()
        page.wait_for_selector("#lab .lab-end")
        acted("submit")
    elif level_id == "4-5":
        L("#lab [data-answer=who]").select_option("eight")  # the lesson's claim
        L("#lab [data-answer=rate]").select_option("0.3")
        L("#mhd-lab-grid").click()
        page.wait_for_selector("#lab [data-answer=read]", timeout=SLOW)
        acted("grid")
        L("#lab [data-answer=read]").select_option(str(stability_lesson.fixes(api.stability(0))[0]))
        L("#mhd-lab-check").click()
        page.wait_for_selector("#lab .lab-end")
        acted("read")
    elif level_id == "4-6":
        L("#lab [data-answer=k]").select_option("1")
        L("#mhd-lab-route").click()
        page.wait_for_selector("#lab [data-answer=read]", timeout=SLOW)
        acted("route")
        share = api.router(0)["kept_share"][str(router_lesson.READ_K)]
        L("#lab [data-answer=read]").select_option(str(router_lesson.read_bucket(share)))
        L("#mhd-lab-check").click()
        page.wait_for_selector("#lab .lab-end")
        acted("read")
    elif level_id == "5-1":
        L("#lab [data-answer=free]").select_option("differ")
        L("#lab [data-answer=pos]").select_option("differ")
        L("#mhd-lab-predict").click()
        page.wait_for_selector("#lab [data-answer=read]")
        acted("predict")
        p = api.positions(get_level("5-1").text[lang], lang)
        L("#lab [data-answer=read]").select_option(str(positions_lesson.reading_answer(p)))
        L("#mhd-lab-check").click()
        page.wait_for_selector("#lab .lab-end")
        acted("read")
    elif level_id == "5-2":
        L("#lab [data-answer=name]").fill("Bo")
        L("#mhd-lab-badge").click()
        page.wait_for_selector("#lab .badge-svg svg")
        assert in_view(page, "#mhd-badge-png") and in_view(page, "#mhd-badge-svg")  # the downloads too
        acted("badge")
    return done


LAB_LEVELS = [lv.id for ch in load_levels() for lv in ch.levels if lv.chapter >= 3]


def test_every_lab_level_is_played_here() -> None:
    assert LAB_LEVELS == ["3-1", "3-2", "3-3", "3-4", "3-5", "4-1", "4-2", "4-3", "4-4", "4-5", "4-6", "5-1", "5-2"]


@pytest.mark.parametrize("level_id", LAB_LEVELS)
def test_projector_every_lab_answer_is_in_view_whole_after_its_action(open_lab, level_id) -> None:  # noqa: F811
    # 3-4 and 4-3 train the suite's short runs (dragon/runs.py SHORT), shared with every other test
    page = open_lab(f"level={level_id}&lang=en&projector=1", "projector")
    page.wait_for_selector("#lab [data-act]:not([data-act=again])", timeout=SLOW)  # the model loaded, where needed
    assert play_lab(page, level_id, "en")


def test_projector_answers_in_view_in_chinese_too(open_lab) -> None:  # noqa: F811
    for level_id in ("4-2", "5-1"):  # the two tallest answers
        page = open_lab(f"level={level_id}&lang=zh&projector=1", "projector")
        page.wait_for_selector("#lab [data-act]:not([data-act=again])", timeout=SLOW)
        assert play_lab(page, level_id, "zh")


def test_projector_crystal_ball_grid_reads_from_the_back_row(open_lab) -> None:  # noqa: F811
    page = open_lab("level=4-1&lang=en&projector=1", "projector")
    page.wait_for_selector("#lab .cb-map", timeout=SLOW)
    assert in_view(page, "#lab .cb-grid", within_ms=3000), "the 72 heads, the question, are not all in view"
    heights = page.eval_on_selector_all("#lab .cb-strip", "ss => ss.map(s => s.getBoundingClientRect().height)")
    assert len(heights) == 72 and min(heights) >= 40, min(heights)
    page.locator('#lab .cb-map[data-pick="3,1"]').click()
    page.wait_for_selector("#lab .cb-map.picked")
    size = page.eval_on_selector("#lab .cb-map.picked .cb-w", "e => parseFloat(getComputedStyle(e).fontSize)")
    assert size >= 32, f"the chosen head's weight is drawn at {size} px"
    bars = page.eval_on_selector_all("#lab .cb-row .bar-value",
                                     "bs => bs.map(b => parseFloat(getComputedStyle(b).fontSize))")
    assert bars and min(bars) >= 28, bars
    assert in_view(page, RESULT)
    shot(page, "classroom-projector-4-1-picked")


# --- 5. phone: a quarter of the screen at most, nothing scrolls under a finger, 44 px targets ----------------------


def sticky_share(page) -> float:
    return page.evaluate("document.querySelector('#panel .summary').getBoundingClientRect().height") / PHONE_H


@pytest.mark.parametrize("level_id, lang", [("2-1", "zh"), ("2-10", "en"), ("2-8", "en")])
def test_phone_sticky_block_takes_at_most_a_quarter_of_the_screen(open_page, level_id, lang) -> None:  # noqa: F811
    page = open_page(f"level={level_id}&lang={lang}", "phone", **MOBILE)
    shares = [sticky_share(page)]
    for gates in ([0.0] * 8, [1.0, 0.0] * 4, [0.3, 0.9, 0.1, 0.8, 0.2, 0.7, 0.4, 0.6]):  # far from the target
        for i, g in enumerate(gates):
            page.locator(f"#mhd-s{i}").fill(f"{g:.2f}")
        page.wait_for_timeout(400)
        shares.append(sticky_share(page))
    win(page, level_id, lang)
    page.wait_for_timeout(500)
    shares.append(sticky_share(page))
    assert max(shares) <= 0.25, [f"{s:.0%}" for s in shares]
    page.evaluate("""() => { const row = document.querySelector('#panel .srow');
        const top = document.querySelector('#panel .summary');
        scrollBy(0, row.getBoundingClientRect().top - top.getBoundingClientRect().height); }""")  # ① just under it
    free = page.evaluate(
        """() => [...document.querySelectorAll('#panel input.range')].filter(s => {
          const r = s.getBoundingClientRect(), y = r.top + r.height / 2;
          return y > 0 && y < innerHeight && document.elementFromPoint(r.left + r.width / 2, y) === s; }).length"""
    )
    assert free >= 5, f"only {free} sliders can be reached under the sticky block"
    shot(page, f"classroom-phone-sticky-{level_id}-{lang}")


def touch(cdp, kind: str, x: float = 0, y: float = 0) -> None:
    points = [] if kind == "touchEnd" else [{"x": x, "y": y}]
    cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})


def test_phone_first_star_never_scrolls_under_the_finger(open_page) -> None:  # noqa: F811
    """The finger drags slider ③ into the winning range and stays down: the star comes, the page stays still (and
    the slider under the finger with it); once the finger lifts, the won line and the why come into view."""
    page = open_page("level=2-1&lang=zh", "phone", **MOBILE)
    gates = list(get_level("2-1").target_for("zh"))
    assert gates[2] == 1.0  # the emotion head carries this poem: from 0 to 1 wins it
    gates[2] = 0.0
    for i, g in enumerate(gates):
        page.locator(f"#mhd-s{i}").fill(f"{g:.2f}")
    page.wait_for_function("parseFloat(document.querySelector('#panel .score-value').textContent) < 70")
    slider = page.locator("#mhd-s2")
    slider.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    box = slider.bounding_box()
    cdp = page.context.new_cdp_session(page)
    y, x0, x1 = box["y"] + box["height"] / 2, box["x"] + 12, box["x"] + box["width"] - 4
    touch(cdp, "touchStart", x0, y)
    before = page.evaluate("[scrollY, document.querySelector('#mhd-s2').getBoundingClientRect().top]")
    for k in range(1, 21):
        touch(cdp, "touchMove", x0 + (x1 - x0) * k / 20, y)
        page.wait_for_timeout(30)
    page.wait_for_selector("#panel .scorebox.won")  # the star came while the finger is down
    page.wait_for_selector("#panel .feedback .why")
    page.wait_for_timeout(1500)
    held = page.evaluate("[scrollY, document.querySelector('#mhd-s2').getBoundingClientRect().top]")
    assert held == before, f"the page moved under the finger: scrollY, slider top {before} → {held}"
    touch(cdp, "touchEnd")
    assert in_view(page, "#panel .won-line") and in_view(page, "#panel .next"), "after the lift: the way on"
    shot(page, "classroom-phone-after-the-finger-lifts")


def test_phone_lab_answer_waits_for_the_finger(open_lab) -> None:  # noqa: F811
    """A lab answer that lands while a finger rests on the screen is brought into view only once it lifts."""
    page = open_lab("level=5-1&lang=en", "phone", **MOBILE)
    page.locator("#lab [data-answer=free]").select_option("same")
    page.locator("#lab [data-answer=pos]").select_option("differ")
    cdp = page.context.new_cdp_session(page)
    touch(cdp, "touchStart", 20, 300)  # a finger resting on the page (not on a control)
    before = page.evaluate("scrollY")
    page.locator("#mhd-lab-predict").evaluate("b => b.click()")  # pressed meanwhile (another finger's tap)
    page.wait_for_selector("#lab [data-answer=read]")
    page.wait_for_timeout(1200)
    assert page.evaluate("scrollY") == before, "the page scrolled under the finger"
    touch(cdp, "touchEnd")
    assert in_view(page, "#lab .result-box > :first-child"), "after the lift the answer comes into view"


TARGETS = """() => [...document.querySelectorAll('button, input, select, textarea, a, summary, [role=button]')]
  .map(e => { const s = getComputedStyle(e);
    // a checkbox (or a file input) is tapped through its label, which holds it: the label is the target
    const t = ['checkbox', 'radio', 'file'].includes(e.type) && e.closest('label') ? e.closest('label') : e;
    const r = t.getBoundingClientRect();
    const hidden = !r.width || !r.height || s.visibility === 'hidden' || !!e.closest('[hidden]') || e.type === 'hidden';
    return {e, r, hidden}; })
  .filter(x => !x.hidden && (x.r.width < 44 || x.r.height < 44))
  .map(x => x.e.tagName.toLowerCase() + (x.e.id ? '#' + x.e.id : '')
      + (x.e.dataset.act ? '[data-act=' + x.e.dataset.act + ']' : '')
      + (x.e.className && typeof x.e.className === 'string' ? '.' + x.e.className.split(' ')[0] : '')
      + ` "${(x.e.textContent || x.e.value || '').trim().slice(0, 16)}"`
      + ` ${Math.round(x.r.width)}×${Math.round(x.r.height)}`)"""


def small_targets(page) -> list[str]:
    return page.evaluate(TARGETS)


def test_phone_every_control_is_big_enough_to_tap(open_page, open_lab) -> None:  # noqa: F811
    page = open_page("level=2-1&lang=zh", "phone", **MOBILE)
    open_codes(page)  # the progress code's box and buttons, open
    assert small_targets(page) == []
    win(page, "2-1", "zh")  # the won line's link and next-level button
    assert small_targets(page) == []
    lab = open_lab("level=4-1&lang=en", "phone", **MOBILE)
    lab.wait_for_selector("#lab .cb-map", timeout=SLOW)
    lab.locator('#lab .cb-map[data-pick="3,1"]').click()
    lab.wait_for_selector("#lab .cb-try")  # the own-sentence box: a text box, a choice, a button
    assert small_targets(lab) == []
    race = open_lab("level=3-2&lang=zh", "phone", **MOBILE)
    assert small_targets(race) == []
    shot(race, "classroom-phone-race-targets")


# --- 6. keyboard alone -------------------------------------------------------------------------------------------

FOCUS = """() => { const e = document.activeElement; if (!e || e === document.body) return {where: 'body'};
  return {id: e.id, act: e.dataset.act || '', cls: e.className && typeof e.className === 'string' ? e.className : '',
          i: e.dataset.i || '', answer: e.dataset.answer || '',
          where: e.closest('#panel') ? 'panel' : e.closest('#lab') ? 'lab' : e.closest('#maps') ? 'maps' : 'page'}; }"""


def focus(page) -> dict:
    return page.evaluate(FOCUS)


def tab_to(page, test, most: int = 30) -> list[dict]:
    """Press Tab until `test(focus)` holds; every stop on the way (it fails after `most` presses)."""
    stops = []
    for _ in range(most):
        page.keyboard.press("Tab")
        stops.append(focus(page))
        if test(stops[-1]):
            return stops
    raise AssertionError(f"never reached: {stops}")


def test_slider_level_played_with_the_keyboard_alone(open_page) -> None:  # noqa: F811
    page = open_page("level=2-1&lang=en")
    order = page.evaluate("""() => { const next = document.querySelector('#panel .won-slot');
        const last = document.querySelector('#mhd-s7');
        return last.compareDocumentPosition(next) & Node.DOCUMENT_POSITION_FOLLOWING; }""")
    assert order, "the won line (next level) must come after the sliders"
    stops = tab_to(page, lambda f: f["id"] == "mhd-s0")
    assert all(s["where"] == "page" for s in stops[:-1])  # the top's controls, then slider ①
    target = get_level("2-1").target_for("en")
    assert target[0] in (0.0, 1.0)
    page.keyboard.press("Home" if target[0] == 0 else "End")  # slider ① by its keys
    page.wait_for_function("(v) => document.querySelector('#mhd-s0').value === v", arg=f"{target[0]:g}")
    starred = False
    for i, value in enumerate(target):
        if i:
            page.keyboard.press("Tab")
            assert focus(page)["id"] == f"mhd-s{i}", focus(page)
        page.keyboard.press("Tab")
        assert "num" in focus(page)["cls"] and focus(page)["i"] == str(i), focus(page)
        page.keyboard.press("Control+A")
        page.keyboard.type(f"{value:g}")
        page.keyboard.press("Enter")
        page.wait_for_function("(v) => document.querySelector('#mhd-s' + v[0]).value === v[1]", arg=[i, f"{value:g}"])
        page.wait_for_timeout(400)  # the live answer, and a star's redraw, land
        if not starred and page.locator("#panel .scorebox.won").count():
            starred = True
            page.wait_for_timeout(600)
        f = focus(page)
        assert f["where"] == "panel" and f["i"] == str(i), f"after slider {i + 1}'s box (star: {starred}): {f}"
    assert starred
    wait_score(page, "100.0")
    stops = tab_to(page, lambda f: f["act"] == "next", most=6)
    assert all(s["where"] == "panel" for s in stops), stops  # from slider ⑧'s box, never off the panel
    shot(page, "classroom-keyboard-won")
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('#top .level-title').textContent.includes('2-2')")


def test_lab_level_played_with_the_keyboard_alone(open_lab) -> None:  # noqa: F811
    page = open_lab("level=5-1&lang=en")
    p = api.positions(get_level("5-1").text["en"], "en")
    truth = positions_lesson.answer_key(p)
    tab_to(page, lambda f: f["answer"] == "free")
    for name in ("free", "pos"):
        assert focus(page)["answer"] == name
        for _ in range(("same", "differ").index(truth[name]) + 1):  # from "choose…", one step per option
            page.keyboard.press("ArrowDown")
        assert page.locator(f"#lab [data-answer={name}]").input_value() == truth[name]
        page.keyboard.press("Tab")
    assert focus(page)["id"] == "mhd-lab-predict"
    page.keyboard.press("Enter")
    page.wait_for_selector("#lab [data-answer=read]")
    page.wait_for_timeout(300)
    assert focus(page)["where"] == "lab", "the checked button went away: the focus stays in the lab"
    tab_to(page, lambda f: f["answer"] == "read", most=4)
    right = positions_lesson.reading_answer(p)
    for _ in range(right + 1):  # from "choose…", one step per option
        page.keyboard.press("ArrowDown")
    assert page.locator("#lab [data-answer=read]").input_value() == str(right)
    page.keyboard.press("Tab")
    assert focus(page)["id"] == "mhd-lab-check"
    page.keyboard.press("Enter")
    page.wait_for_selector('#lab .lab-end[data-stars="3"]')
    page.wait_for_timeout(300)
    assert focus(page)["where"] == "lab"
    tab_to(page, lambda f: f["act"] == "next", most=4)
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('#top .level-title').textContent.includes('5-2')")


# --- 6. screen reader: every map in words, colour never alone, axe ---------------------------------------------------


@pytest.mark.parametrize("level_id, lang", [("2-1", "zh"), ("2-5", "en")])
def test_every_attention_map_says_its_top_words_with_their_shares(open_page, level_id, lang) -> None:  # noqa: F811
    page = open_page(f"level={level_id}&lang={lang}")
    reading = api.level_reading(get_level(level_id), lang)
    silent = set(api.silent_heads(reading))
    labels = page.eval_on_selector_all("#maps .tile svg.attn-map", "ss => ss.map(s => s.getAttribute('aria-label'))")
    assert len(labels) == len(HEADS)
    for i, (head, said) in enumerate(zip(HEADS, labels, strict=True)):
        found = top_words(reading, head)
        if head in silent or not found:
            assert said.startswith(head_label(i, lang)), said
            continue
        shares = ", ".join(f"{w} {v:.2f}" for w, v in found[:5])
        assert said.startswith(f"{head_label(i, lang)} → {shares}"), (said, shares)  # "⑤ 时序头 → 昨天 0.62, 正在 0.31"


def test_one_or_eight_maps_and_the_crystal_ball_say_their_numbers(open_page, open_lab) -> None:  # noqa: F811
    page = open_page("level=1-1&lang=en")
    labels = page.eval_on_selector_all("#quiz svg.attn-map", "ss => ss.map(s => s.getAttribute('aria-label'))")
    assert len(labels) == 2 and all("→" in x and any(ch.isdigit() for ch in x) for x in labels), labels
    assert all(head_label(i, "en") + " →" in labels[1] for i in range(len(HEADS)))  # one row per head
    lab = open_lab("level=4-1&lang=en")
    lab.wait_for_selector("#lab .cb-map", timeout=SLOW)
    r = api.crystal_ball(get_level("4-1").text["en"], "they", "students")
    row = r["attention"][3][1]
    top = max(v for j, v in enumerate(row) if j != r["position"])  # the word itself left out
    said = lab.locator('#lab .cb-map[data-pick="3,1"]').get_attribute("aria-label")
    words = said.removeprefix("L4 H2 → ").split(", ")
    # before the pick: its words in order, as the colours show them, no weights (the pick is not the largest number)
    assert said.startswith("L4 H2 → ") and words[0] == "students" and not any(c.isdigit() for c in said[6:]), said
    lab.locator('#lab .cb-map[data-pick="0,0"]').click()
    lab.wait_for_selector("#lab .cb-map.picked")
    said = lab.locator('#lab .cb-map[data-pick="3,1"]').get_attribute("aria-label")
    first = said.removeprefix("L4 H2 → ").split(", ")[0]
    assert said.startswith("L4 H2 → ") and first.endswith(f" {top:.2f}") and first[: -5] in r["tokens"], said
    assert "students" in first  # 4-1's answer head sends "they" to "students" above all


def test_colour_is_never_the_only_cue(open_page, open_lab) -> None:  # noqa: F811
    page = open_page("level=2-5&lang=en")
    signs = page.eval_on_selector_all(
        "#panel .hl.diff .w.over, #panel .hl.diff .w.under",
        "ws => ws.map(w => [w.classList.contains('over'), getComputedStyle(w, '::after').content])",
    )
    assert signs and all(sign == ('"+"' if over else '"−"') for over, sign in signs), signs  # + too much, − too little
    lab = open_lab("level=4-1&lang=en")
    lab.wait_for_selector("#lab .cb-map", timeout=SLOW)
    style = lab.evaluate("(s) => [...document.querySelectorAll(s)].map(e => getComputedStyle(e).borderBottomStyle)",
                         "#lab .cb-key span.tgt, #lab .cb-key span.self")
    assert style == ["solid", "dotted"] or style == ["dotted", "solid"], style  # the target and the word itself
    lab.locator('#lab .cb-map[data-pick="0,0"]').click()
    lab.wait_for_selector("#lab .cb-map.best")
    assert t("c_tag_picked", "en") in lab.locator("#lab .cb-map.picked").inner_text()
    assert t("c_tag_best", "en") in lab.locator("#lab .cb-map.best").inner_text()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_axe_finds_nothing_serious_on_a_slider_level(open_page, lang) -> None:  # noqa: F811
    page = open_page(f"level=2-1&lang={lang}")
    assert audit(page) == [], summary(audit(page))
    page.locator("#mhd-hint").click()
    page.wait_for_selector("#panel .hint-arrow")
    win(page, "2-1", lang, stars=2)  # the hint cost a star
    page.wait_for_timeout(800)
    found = audit(page)
    assert found == [], summary(found)
    picture = open_page(f"level=2-7&lang={lang}&projector=1", "projector")  # shaded words, in projector type
    found = audit(picture)
    assert found == [], summary(found)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_axe_finds_nothing_serious_on_a_lab_level(open_lab, lang) -> None:  # noqa: F811
    page = open_lab(f"level=4-1&lang={lang}")
    page.wait_for_selector("#lab .cb-map", timeout=SLOW)
    assert audit(page) == [], summary(audit(page))
    page.locator('#lab .cb-map[data-pick="3,1"]').click()
    page.wait_for_selector("#lab .lab-end")
    page.wait_for_timeout(500)
    found = audit(page)
    assert found == [], summary(found)
    race = open_lab(f"level=3-2&lang={lang}&projector=1", "projector")
    race.locator("#lab [data-answer=guess]").fill("2")
    race.locator("#mhd-lab-race").click()
    race.wait_for_selector("#lab .result-head[data-measured]", timeout=SLOW)
    found = audit(race)
    assert found == [], summary(found)

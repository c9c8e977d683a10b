"""The app in headless Chromium, as a player uses it, at 1366 × 900, in projector mode at 1920 × 1080 and on a
390 × 844 phone. "In view" is checked against the viewport (getBoundingClientRect vs window.innerHeight), and
viewport screenshots land in test-artifacts/ to be looked at."""

import os
import re
import shutil
from pathlib import Path

import pytest

from dragon import api, game
from dragon.chapter1 import finding_heads
from dragon.config import HEADS
from dragon.levels.loader import get_level, load_levels
from ui import handlers
from ui.rooms import sliders as play
from ui.strings import head_label, head_name, t

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
# The browser the tests drive: CHROMIUM_PATH, else Debian's chromium-headless-shell (Chromium's own headless build,
# the one Playwright runs headless by default: the same Blink, V8 and Skia at the same version as the chromium
# package, without the full browser around them; a page costs it about a quarter less CPU), else the full chromium.
# With --font-render-hinting=none (the full browser's default) the shell lays the app out box for box as the full
# browser does; tests/test_browser_engines.py holds that wherever both are installed (CI installs both).
FULL_CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium-headless-shell") or FULL_CHROMIUM
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--disable-quic", "--font-render-hinting=none"]
SIZES = {"desktop": (1366, 900), "projector": (1920, 1080), "phone": (390, 844)}
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")

pytestmark = pytest.mark.browser


def opening(browser, app_url: str, ready):
    """The generator behind the page fixtures: opener(query, size="desktop", **context options) → a page of the app,
    made ready by `ready(page)`; pages are given back afterwards and page errors fail the test."""
    pages, errors = [], []

    def note(error) -> None:
        errors.append(str(error))

    def opener(query: str, size: str = "desktop", **options):
        width, height = SIZES[size]
        page = browser.take_page({"width": width, "height": height}, options)  # a fresh start (conftest.py)
        pages.append(page)
        page.on("pageerror", note)
        page.goto(f"{app_url}?{query}")
        ready(page)
        return page

    yield opener
    for page in pages:
        browser.give_back(page, {"pageerror": note})
    assert not errors, errors


@pytest.fixture
def open_page(browser, app_url):
    """open_page(query, size="desktop", **context options) → a page of the app, ready; page errors fail the test."""
    yield from opening(browser, app_url, wait_ready)


def wait_ready(page) -> None:
    page.wait_for_selector("#top .level-title")
    page.wait_for_function(
        "document.querySelector('#panel .score-value') || !document.querySelector('.mhd-quiz[hidden]')"
    )


def shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))  # the viewport: what the player sees


IN_VIEW = """(sel) => { const el = document.querySelector(sel); if (!el) return false;
    const r = el.getBoundingClientRect();
    return r.height > 0 && r.top >= -1 && r.left >= -1
      && r.bottom <= innerHeight + 1 && r.right <= innerWidth + 1; }"""


def in_view(page, selector: str, within_ms: int = 4000) -> bool:
    """The element's whole box lies inside the viewport, now or within a moment (the page scrolls an answer into
    view in the frames after it arrives, as the player sees it; on a machine running two suites at once those frames
    can take seconds). It returns as soon as the box is in view."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(IN_VIEW, arg=selector, timeout=within_ms)
        return True
    except PlaywrightTimeout:
        return False


def open_codes(page) -> None:
    """Open the progress-code box as a player does, a click on its summary, and wait until it is open; a click that a
    late redraw moved the summary from under (a busy machine) is given again. A box that opens and then shuts by itself
    still fails the test where its buttons are pressed."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(3):
        if page.locator("#codes details[open]").count():
            return
        page.locator("#codes summary").click()
        try:
            page.wait_for_selector("#codes details[open]", timeout=10_000)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError("the progress-code box did not open on three clicks of its summary")


def score(page) -> str:
    return page.locator("#panel .score-value").text_content()


def set_gates(page, gates) -> None:
    """Drag each slider to its value (Playwright's fill on a range input fires its input event, as dragging does)."""
    for i, value in enumerate(gates):
        page.locator(f"#mhd-s{i}").fill(f"{value:.2f}")


def set_gates_in_place(page, gates) -> None:
    """Move the sliders as a hand does, where they are: their input events, without Playwright scrolling each into
    view (so a test can tell whether the page itself scrolled)."""
    page.evaluate("""(gates) => gates.forEach((v, i) => { const el = document.querySelector(`#mhd-s${i}`);
        el.value = String(v); el.dispatchEvent(new Event('input', { bubbles: true })); })""", [float(g) for g in gates])


def win(page, level_id: str, lang: str, stars: int = 3) -> None:
    """Set the sliders to the level's target: 100 points, and the win moment for `stars` (fewer after help)."""
    set_gates(page, get_level(level_id).target_for(lang))
    page.wait_for_selector(f"#panel .scorebox.w{stars}")
    assert score(page) == "100.0"


def engine_score(level_id: str, gates, lang: str) -> str:
    """The score the engine gives these gates, as the gauge prints it."""
    gauge = play.live({"level": level_id, "lang": lang, "gates": gates, "saved": ""})["view"]["gauge"]
    return re.search(r'class="score-value">([0-9.]+)<', gauge).group(1)


def slider_gates(page) -> list[float]:
    return [float(page.locator(f"#mhd-s{i}").input_value()) for i in range(len(HEADS))]


def wait_score(page, expected: str) -> None:
    page.wait_for_function("(s) => document.querySelector('#panel .score-value').textContent === s", arg=expected)


# --- 1. one screen ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("level_id, lang", [("2-1", "zh"), ("2-7", "en")])
def test_score_stars_and_comparison_stay_in_view_while_any_slider_moves(open_page, size, level_id, lang) -> None:
    page = open_page(f"level={level_id}&lang={lang}&projector={int(size == 'projector')}", size)
    # a phone's sticky block keeps, of the pictures, the one that says where yours differs from the target
    comparison = "#panel .profile" if get_level(level_id).show == "silhouette" else (
        "#panel .hl.diff" if size == "phone" else "#panel .pictures")
    for i in range(len(HEADS)):
        slider = page.locator(f"#mhd-s{i}")
        slider.scroll_into_view_if_needed()
        slider.focus()
        for _ in range(6):  # a keyboard player: the arrow keys move the real <input type=range>
            page.keyboard.press("ArrowRight" if i % 2 else "ArrowLeft")
        wait_score(page, engine_score(level_id, slider_gates(page), lang))  # the engine's number, on screen
        covered = page.evaluate(
            """(i) => { const r = document.querySelector('#mhd-s' + i).getBoundingClientRect();
            const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            return !(hit && hit.id === 'mhd-s' + i); }""",
            i,
        )
        assert not covered, f"slider {i} is hidden under something"
        for part in ("#panel .score-value", "#panel .stars", comparison):
            assert in_view(page, part), f"{part} is out of view while slider {i} moves ({size})"
        if i == 6:  # on a phone the page has scrolled: the summary rides along at the top
            shot(page, f"one-screen-{size}-{level_id}-{lang}")


def text_sizes_below(page, selectors: list[str], limit: float) -> list[str]:
    """Visible text in these parts of the page drawn smaller than `limit` px (SVG text scaled as drawn)."""
    return page.evaluate(
        """([sels, limit]) => { const small = [];
        for (const sel of sels) for (const root of document.querySelectorAll(sel)) {
          const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
          for (let n = walker.nextNode(); n; n = walker.nextNode()) {
            const el = n.parentElement;
            if (!n.textContent.trim() || !el || el.closest('.sr-only, option, title')) continue;
            if (el.closest('.progress-text, .eta-bar, .meta-text, .meta-text-center')) continue;  // Gradio's own
            // "processing | 0.0s" flashes while an event runs: it is not the lesson's text
            const box = el.getBoundingClientRect(); if (!box.width || !box.height) continue;
            let px = parseFloat(getComputedStyle(el).fontSize);
            if (el instanceof SVGElement) { const m = el.getScreenCTM(); px *= Math.hypot(m.a, m.b); }
            if (px < limit - 0.05) small.push(`${n.textContent.trim().slice(0, 20)} ${px.toFixed(1)}px`);
          } }
        return small; }""",
        [selectors, limit],
    )


@pytest.mark.parametrize("level_id", ["2-7", "2-2"])
def test_projector_panel_fits_one_screen_in_big_type(open_page, level_id) -> None:
    page = open_page(f"level={level_id}&lang=en&projector=1", "projector")
    assert page.evaluate("document.body.classList.contains('projector')")
    box = page.locator("#panel .mhd-panel").bounding_box()
    assert box["height"] <= 1080 and box["width"] <= 1920
    page.locator("#panel .mhd-panel").evaluate("el => el.scrollIntoView({block: 'start'})")
    assert in_view(page, "#panel .mhd-panel")
    win(page, level_id, "en")  # the why and the next-level button appear: it still fits
    assert page.locator("#panel .mhd-panel").bounding_box()["height"] <= 1080
    small = text_sizes_below(page, ["#top", "#panel", "#maps"], 20)
    assert small == [], f"{len(small)} texts under 20 px: {sorted(set(small))[:40]}"
    shot(page, f"projector-{level_id}-won")


def test_projector_chapter_one_in_big_type(open_page) -> None:
    page = open_page("level=1-1&lang=zh&projector=1", "projector")
    small = text_sizes_below(page, ["#top", "#quiz"], 20)
    assert small == [], f"{len(small)} texts under 20 px: {sorted(set(small))[:40]}"


# --- 2. feedback where the eye is ---------------------------------------------------------------------------------


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_every_button_answers_in_view(open_page, size) -> None:
    page = open_page("level=2-4&lang=en", size)
    for act, expect in (("hint", "Little T"), ("reveal", "Target weights"), ("reset", "back at 0.5")):
        page.locator(f"#mhd-{act}").scroll_into_view_if_needed()
        page.locator(f"#mhd-{act}").click()
        page.wait_for_function("(x) => document.querySelector('#panel .feedback').textContent.includes(x)", arg=expect)
        assert in_view(page, "#panel .feedback .coach"), f"{act}: its answer is out of view ({size})"
    shot(page, f"feedback-{size}-after-reset")
    before = page.evaluate("scrollY")
    set_gates_in_place(page, get_level("2-4").target_for("en"))  # a hint and the reveal were used: ★
    page.wait_for_selector("#panel .scorebox.w1")
    page.wait_for_timeout(600)
    assert page.evaluate("scrollY") == before  # a star never scrolls the page (the sliders stay under the hand)
    assert in_view(page, "#panel .summary .stars")  # the stars say it where the player looks (sticky on a phone)
    page.locator("#panel .next").scroll_into_view_if_needed()  # the won line sits right under the sliders
    page.locator("#panel .next").click()
    page.wait_for_function("document.querySelector('#top .level-title').textContent.includes('2-5')")
    assert in_view(page, "#top .level-title")


def test_chapter_one_and_progress_code_answers_in_view(open_page) -> None:
    page = open_page("level=1-1&lang=en")
    page.locator("#quiz [data-answer=one]").fill("40")
    page.locator("#quiz [data-answer=eight]").fill("40")
    page.locator("#mhd-check").click()
    page.wait_for_selector("#quiz .result")
    assert in_view(page, "#quiz .result")
    open_codes(page)
    page.locator("#codes [data-act=import]").click()
    page.wait_for_function("document.querySelector('#codes .code-msg').textContent.includes('not a valid')")
    assert in_view(page, "#codes .code-msg")
    shot(page, "feedback-bad-code")


# --- 3–4. every finding fixed ------------------------------------------------------------------------------------


def test_progress_code_carries_progress_to_a_fresh_browser(open_page) -> None:
    page = open_page("level=2-1&lang=zh")
    win(page, "2-1", "zh")
    page.wait_for_timeout(1000)  # the stars settle
    shot(page, "won-zh")
    open_codes(page)
    page.locator("#codes [data-act=export]").click()
    page.wait_for_function("document.querySelector('#codes textarea').value.startsWith('DRAGON1-')")
    code = page.locator("#codes textarea").input_value()
    assert "(" not in code and "'" not in code  # the code itself, not a Python tuple
    assert in_view(page, "#codes textarea")
    assert "[object Object]" not in page.locator("body").inner_text()

    other = open_page("level=1-1&lang=zh")  # another computer: a fresh browser context
    assert "★ 0/" in other.locator("#top .xp").text_content()
    open_codes(other)
    other.locator("#codes textarea").fill(code)
    other.locator("#codes [data-act=import]").click()
    other.wait_for_function("document.querySelector('#top .xp').textContent.includes('★ 3/')")
    assert "进度已导入" in other.locator("#codes .code-msg").text_content() and in_view(other, "#codes .code-msg")
    assert "★★★" in other.locator("#top .level-pick option[value='2-1']").text_content()
    other.reload()
    wait_ready(other)
    assert "★ 3/" in other.locator("#top .xp").text_content()  # kept in this browser from now on


def test_bad_number_box_values_leave_slider_box_and_score_agreeing(open_page) -> None:
    page = open_page("level=2-1&lang=zh")
    box, slider = page.locator(".srow[data-head=emotion] input.num"), page.locator("#mhd-s2")
    before = score(page)
    for bad in ("-5", "1e3", "2"):
        box.fill(bad)
        box.press("Tab")
        assert box.input_value() == "0.5" and slider.input_value() == "0.5", bad
        assert t("bad_box", "zh") in page.locator(".srow[data-head=emotion] .smsg").text_content()
        assert score(page) == before
    box.fill("0.83")
    box.press("Enter")
    wait_score(page, engine_score("2-1", [0.5, 0.5, 0.83, 0.5, 0.5, 0.5, 0.5, 0.5], "zh"))
    assert slider.input_value() == "0.83" and box.input_value() == "0.83"
    assert page.locator(".srow[data-head=emotion] .smsg").text_content() == ""


def import_progress(page, progress: dict) -> None:
    """Paste a progress code made for `progress` into the page's codes box (as a player moving computers does)."""
    code = handlers.export_code({}, game.save(progress))["codes"]["code"]
    open_codes(page)
    page.locator("#codes textarea").fill(code)
    page.locator("#codes [data-act=import]").click()
    page.wait_for_function("document.querySelector('#codes .code-msg').textContent.trim().length > 0")


def test_language_switch_and_the_level_list_open_a_level_at_its_own_start(open_page) -> None:
    page = open_page("level=2-3&lang=zh")
    progress = game.new_progress()
    for level_id in [lv.id for lv in load_levels()[0].levels]:
        progress = game.record(progress, level_id, 100.0, 3)
    import_progress(page, progress)  # chapter 2 open: its levels can be picked from the list
    page.locator("#mhd-s5").fill("0.9")
    wait_score(page, engine_score("2-3", [0.5] * 5 + [0.9, 0.5, 0.5], "zh"))  # a new best: saved
    page.locator("#mhd-s4").fill("0.8")  # worse than the best: nothing is saved
    wait_score(page, engine_score("2-3", [0.5] * 4 + [0.8, 0.9, 0.5, 0.5], "zh"))
    page.locator("#top button[data-lang=en]").click()
    page.wait_for_function("document.querySelector('#top .level-title').textContent.includes('On the Stork Tower')")
    assert "lang=en" in page.url and "level=2-3" in page.url
    wait_score(page, engine_score("2-3", [0.5] * 8, "en"))  # the English target is another: the level's own start
    assert slider_gates(page) == [0.5] * 8
    # the level list: the sliders moved here never carry over to the level picked (nor score it)
    page.locator("#mhd-s1").fill("0.9")
    page.locator("#mhd-s0").fill("0.1")
    wait_score(page, engine_score("2-3", [0.1, 0.9] + [0.5] * 6, "en"))
    page.locator("#top .level-pick").select_option("2-4")
    page.wait_for_function("document.querySelector('#panel').dataset.level === '2-4' || "
                           "document.querySelector('#top .level-title').textContent.includes('2-4')")
    wait_score(page, engine_score("2-4", [0.5] * 8, "en"))
    assert slider_gates(page) == [0.5] * 8
    page.locator("#top .level-pick").select_option("2-3")
    wait_score(page, engine_score("2-3", [0.5] * 8, "en"))
    page.wait_for_function("document.querySelector('footer').innerText.includes('Use via API')")
    assert in_view(page, "#top .level-title")
    shot(page, "lang-switch-en")
    page.reload()
    wait_ready(page)
    assert "On the Stork Tower" in page.locator("#top .level-title").text_content()


def test_star_caps_shown_first_and_the_demo_awards_nothing(open_page) -> None:
    page = open_page("level=2-4&lang=en")
    assert "then at most ★★☆" in page.locator("#mhd-hint").text_content()
    assert "then at most ★☆☆" in page.locator("#mhd-demo").text_content()
    assert "Best reachable on this level: ★★★" in page.locator("#panel .cap").text_content()
    page.locator("#mhd-demo").click()
    page.wait_for_selector("#panel .gauge.demo")  # the goddess climbs; her score is marked as not scored
    page.wait_for_function("document.querySelector('#panel .feedback').textContent.includes('back where you left')",
                           timeout=30_000)
    assert in_view(page, "#panel .feedback .coach")  # the goddess's last word, beside the buttons
    assert [page.locator(f"#mhd-s{i}").input_value() for i in range(8)] == ["0.5"] * 8
    assert score(page) == engine_score("2-4", [0.5] * 8, "en")
    option = page.locator("#top .level-pick option[value='2-4']").text_content()
    assert "☆☆☆" in option and "shown by the goddess" in option
    assert "Best reachable on this level: ★☆☆" in page.locator("#panel .cap").text_content()


def test_chapter_one_answers_cannot_be_farmed(open_page) -> None:
    page = open_page("level=1-2&lang=en")
    answers = finding_heads(get_level("1-2"), "en")
    picks = [answers[1], answers[0], *answers[2:]]  # two findings swapped: one star, and the answer is shown
    for i, head in enumerate(picks):
        page.locator(f"#quiz [data-answer=p{i}]").select_option(head)
    page.locator("#mhd-check").click()
    page.wait_for_selector("#quiz .result")
    assert "★☆☆" in page.locator("#quiz .result").text_content()
    assert f"it was the {head_name(answers[0], 'en')} head" in page.locator("#quiz .result").text_content()
    for i, head in enumerate(answers):  # retype the answer just shown
        page.locator(f"#quiz [data-answer=p{i}]").select_option(head)
    page.locator("#mhd-check").click()
    page.wait_for_function("document.querySelector('#quiz .result').textContent.includes('4 of 4')")
    assert "★☆☆" in page.locator("#quiz .result").text_content()
    assert "★☆☆" in page.locator("#top .level-pick option[value='1-2']").text_content()
    options = page.locator("#quiz [data-answer=p0] option").all_text_contents()
    assert head_label(4, "en") in options and not any(CJK.search(o) for o in options)  # translated choices
    shot(page, "chapter-one-match-en")


def test_every_map_labels_its_tokens_and_shows_a_cell_on_hover_and_focus(open_page) -> None:
    page = open_page("level=2-1&lang=zh")
    reading = api.level_reading(get_level("2-1"), "zh")
    tokens, h = reading.tokens, HEADS.index("emotion")
    for svg in page.locator("#maps svg.attn-map").all():
        labels = svg.locator("text").all_text_contents()
        assert labels == tokens * 2
    maps = reading.weights[h, 1:, 1:].numpy()
    i, j = divmod(int(maps.argmax()), maps.shape[1])
    expected = f"{head_name('emotion', 'zh')}: {tokens[i]} ← {tokens[j]} {maps[i, j]:.2f}"
    emotion = page.locator("#maps .tile[data-head=emotion] svg.attn-map")
    emotion.scroll_into_view_if_needed()
    x, y = emotion.evaluate(
        """(svg, [i, j]) => { const d = svg.dataset, r = svg.getBoundingClientRect();
        const k = r.width / svg.viewBox.baseVal.width;
        const c = parseFloat(d.cell); return [r.left + (parseFloat(d.x0) + (j + 0.5) * c) * k,
                                              r.top + (parseFloat(d.y0) + (i + 0.5) * c) * k]; }""",
        [i, j],
    )
    page.mouse.move(x, y)
    page.wait_for_function("(s) => document.querySelector('.cell-tip')?.textContent === s", arg=expected)
    shot(page, "map-hover")
    emotion.focus()
    page.keyboard.press("ArrowDown")
    down = f"{head_name('emotion', 'zh')}: {tokens[1]} ← {tokens[0]} {reading.weights[h, 2, 1]:.2f}"
    page.wait_for_function("(s) => document.querySelector('.cell-tip')?.textContent === s", arg=down)
    en = open_page("level=1-1&lang=en")
    for svg in en.locator("#quiz svg.attn-map").all():
        assert "Yesterday" in svg.locator("text").all_text_contents()


def test_win_moment_next_level_and_reduced_motion(open_page) -> None:
    page = open_page("level=2-1&lang=en")
    page.locator("#mhd-s0").scroll_into_view_if_needed()
    before = page.evaluate("scrollY")
    set_gates_in_place(page, get_level("2-1").target_for("en"))
    page.wait_for_selector("#panel .scorebox.w3")
    assert score(page) == "100.0"
    assert page.evaluate("getComputedStyle(document.querySelector('#panel .stars')).animationName") == "star-pop-3"
    assert page.locator("#panel .dragon-box.won").count() == 1
    page.wait_for_timeout(600)  # any scroll the star could set off has happened by now
    assert page.evaluate("scrollY") == before  # a star never moves the page under the player's hand
    assert in_view(page, "#panel .won-line")  # the won line, beside the stars: the why's link and the next level
    page.locator("#panel .why-link").click()
    assert in_view(page, "#panel .feedback .why")  # the why, when the player asks for it
    shot(page, "win-en")
    page.locator("#panel .next").click()
    page.wait_for_function("document.querySelector('#top .level-title').textContent.includes('2-2')")
    assert in_view(page, "#top .level-pick") and in_view(page, "#top .level-title")  # the next level at its top
    calm = open_page("level=2-1&lang=en", reduced_motion="reduce")
    win(calm, "2-1", "en")
    assert calm.evaluate("getComputedStyle(document.querySelector('#panel .stars')).animationName") == "none"
    assert calm.evaluate("getComputedStyle(document.querySelector('svg.dragon .head')).animationName") == "none"


def test_ids_stay_unique_and_the_legend_survives_level_changes(open_page) -> None:
    page = open_page("level=2-1&lang=zh")
    for level_id in ("1-1", "1-2", "1-1"):
        page.locator("#top .level-pick").select_option(level_id)
        page.wait_for_function(
            "(i) => document.querySelector('#top .level-title').textContent.includes(i)", arg=level_id
        )
        ids = page.evaluate("[...document.querySelectorAll('[id]')].map(e => e.id)")
        assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    ramp = page.locator("#quiz .legend .ramp")
    assert ramp.bounding_box()["width"] > 50 and "gradient" in ramp.evaluate("e => getComputedStyle(e).backgroundImage")


@pytest.mark.parametrize("level_id", ["2-7", "1-2"])
def test_english_pages_have_no_chinese_and_chinese_pages_translate_gradio(open_page, level_id) -> None:
    page = open_page(f"level={level_id}&lang=en")
    page.wait_for_function("document.querySelector('footer').innerText.includes('Use via API')")
    text = page.locator("body").inner_text().replace("中文", "")
    assert not CJK.search(text), CJK.findall(text)[:10]
    assert "[object Object]" not in text
    zh = open_page(f"level={level_id}&lang=zh")
    zh.wait_for_function("document.querySelector('footer').innerText.includes('通过 API 使用')")
    assert "[object Object]" not in zh.locator("body").inner_text()


def test_tampered_storage_resets_without_a_crash(open_page) -> None:
    page = open_page("level=2-2")
    page.reload()  # a fresh player reloading: nothing was damaged, nothing is said
    wait_ready(page)
    assert "损坏" not in page.locator("#top").inner_text()
    page.locator("#mhd-s4").fill("0.9")  # a new best is saved; reading it back is no damage either
    page.wait_for_function("localStorage.getItem('multi-head-dragon-progress') !== null")
    page.reload()
    wait_ready(page)
    assert "损坏" not in page.locator("#top").inner_text()
    page.evaluate("localStorage.setItem('multi-head-dragon-progress', 'garbage{{')")
    page.reload()
    wait_ready(page)
    assert "相思" in page.locator("#top .level-title").text_content()
    assert "保存的进度已损坏或被改动" in page.locator("#top").inner_text()  # the player is told, not left guessing


def test_a_new_best_counts_at_once_and_is_kept(open_page) -> None:
    """A better score (no star yet) is the best the gauge shows from the very next move on, and a reload still has
    it: the live answer brought it back to the panel, and 'record' saved it in the browser."""
    page = open_page("level=2-1&lang=zh")
    stored = "() => localStorage.getItem('multi-head-dragon-progress')"
    before = page.evaluate(stored)
    best, worse = [0.5] * 7 + [0.0], [0.5] * 7 + [1.0]
    assert float(engine_score("2-1", worse, "zh")) < float(engine_score("2-1", best, "zh")) < 70  # no star
    page.locator("#mhd-s7").fill("0.0")
    wait_score(page, engine_score("2-1", best, "zh"))
    page.locator("#mhd-s7").fill("1.0")
    wait_score(page, engine_score("2-1", worse, "zh"))
    assert engine_score("2-1", best, "zh") in page.locator("#panel .best").text_content()
    page.wait_for_function(f"(b) => ({stored})() !== b", arg=before)
    page.reload()
    wait_ready(page)
    assert engine_score("2-1", best, "zh") in page.locator("#panel .best").text_content()
    shot(page, "best-kept-after-reload")


SLOW_LIVE = """() => { const real = window.fetch;  // each live answer (a component's server function) comes 600 ms late
  window.fetch = (url, ...rest) => String(url).includes('component_server')
    ? new Promise((ok) => setTimeout(ok, 600)).then(() => real(url, ...rest)) : real(url, ...rest); }"""


def test_a_record_is_its_live_answers_though_the_sliders_moved_on(open_page) -> None:
    """The player moves to a better place and on to a worse one before the first move's answer is back: what is
    saved (and shown after a reload) is the better place's score, the record that answer reported, never the
    worse one the sliders sat on when 'record' ran."""
    page = open_page("level=2-1&lang=zh")
    page.evaluate(SLOW_LIVE)
    stored = "() => localStorage.getItem('multi-head-dragon-progress')"
    before = page.evaluate(stored)
    best, worse = [0.5] * 7 + [0.0], [0.5] * 7 + [1.0]
    assert float(engine_score("2-1", worse, "zh")) < float(engine_score("2-1", best, "zh")) < 70
    page.locator("#mhd-s7").fill("0.0")
    page.wait_for_timeout(100)
    page.locator("#mhd-s7").fill("1.0")  # while the first answer is on its way
    wait_score(page, engine_score("2-1", worse, "zh"))
    page.wait_for_function(f"(b) => ({stored})() !== b", arg=before)
    assert engine_score("2-1", best, "zh") in page.locator("#panel .best").text_content()
    page.reload()
    wait_ready(page)
    assert engine_score("2-1", best, "zh") in page.locator("#panel .best").text_content()


def test_little_ts_advice_fades_when_the_player_moves_on(open_page) -> None:
    page = open_page("level=2-4&lang=zh")
    page.locator("#mhd-hint").click()
    page.wait_for_selector("#panel .hint-arrow")
    page.locator("#mhd-s0").fill("0.9")
    page.wait_for_function("!document.querySelector('#panel .hint-arrow')")
    assert page.locator("#panel .feedback .coach.stale").count() == 1  # still readable, marked as old


def test_number_boxes_typed_in_quick_succession_all_stick(open_page) -> None:
    """A player who types all eight boxes fast (each committed with Enter) keeps every value, even while a new best
    is being saved in the background."""
    page = open_page("level=2-1&lang=zh")
    gates = [0.1, 0.2, 0.9, 0.3, 0.4, 0.7, 0.6, 0.8]
    for head, value in zip(HEADS, gates, strict=True):
        box = page.locator(f".srow[data-head={head}] input.num")
        box.fill(str(value))  # at once: faster than any person types
        box.press("Enter")
    wait_score(page, engine_score("2-1", gates, "zh"))
    assert slider_gates(page) == gates
    assert [float(page.locator(f".srow[data-head={h}] input.num").input_value()) for h in HEADS] == gates


def test_the_live_region_speaks_the_level_on_screen_in_its_language(open_page) -> None:
    """Screen readers hear the level and language on screen (not the last level's score), and never a raw key."""
    page = open_page("level=2-1&lang=zh")
    say = page.locator("#panel [data-live=say]")
    page.locator("#mhd-s2").fill("0.8")
    page.wait_for_function("document.querySelector('#panel [data-live=say]').textContent.includes('静夜思')")
    page.locator("#top button[data-lang=en]").click()
    page.wait_for_function("document.querySelector('#panel [data-live=say]').textContent.includes('Quiet Night')")
    assert not CJK.search(say.text_content()), say.text_content()
    page.locator("#top select.level-pick").select_option("1-1")  # a level without the panel: nothing left to say
    page.wait_for_function("!document.querySelector('#panel [data-live=say]')?.textContent")
    page.wait_for_timeout(500)
    spoken = page.evaluate(
        "[...document.querySelectorAll('[aria-live], [role=status], [role=alert]')].map(e => e.textContent).join(' ')"
        " + ' ' + document.body.innerText"
    )
    assert "common." not in spoken  # Gradio's status words are translated, not read out as raw keys

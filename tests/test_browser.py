"""The app in headless Chromium, as a player uses it; screenshots land in test-artifacts/ to be looked at."""

import os
import shutil
from pathlib import Path

import pytest

from dragon.config import HEADS
from dragon.levels import get_level

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--disable-quic"]  # fmt: skip

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM:
        reason = "no Chromium found (install Debian's chromium or set CHROMIUM_PATH)"
        if os.environ.get("CI"):
            pytest.fail(f"browser tests must run in CI: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    context.close()
    assert not errors, errors


def shot(pg, name: str) -> None:
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def set_sliders(pg, gates) -> None:
    for head, value in zip(HEADS, gates, strict=True):
        pg.locator(f"#slider-{head} input[type=range]").fill(str(value))


def test_win_a_poem_switch_to_english_and_keep_the_stars(page, app_url) -> None:
    page.goto(f"{app_url}?level=2-1")
    page.wait_for_selector("svg.dragon")
    assert "多头龙的秘密" in page.locator("#header").text_content()
    assert "语法头" in page.locator("#slider-grammar").text_content()  # gr.I18n labels in Chinese
    assert "静夜思" in page.locator("#story").text_content()
    shot(page, "01-zh-poem-start")

    set_sliders(page, get_level("2-1").target_for("zh"))
    page.wait_for_function("document.querySelector('#gauge .stars').textContent.includes('★★★')")
    assert page.locator("#gauge .score-value").text_content() == "100.0"
    page.wait_for_selector("#story .why")  # the reveal of why, after a star
    shot(page, "02-zh-poem-won")

    page.get_by_label("English").check()
    page.wait_for_url("**lang=en**")
    page.wait_for_selector("svg.dragon")
    page.wait_for_function("document.querySelector('#hint-btn').textContent.includes(\"Little T's hint\")")
    assert "Quiet Night Thought" in page.locator("#story").text_content()
    page.wait_for_function("document.querySelector('#gauge .best').textContent.includes('100.0')")
    shot(page, "03-en-after-switch")

    page.reload()
    page.wait_for_selector("svg.dragon")
    page.wait_for_function("document.querySelector('#gauge .best').textContent.includes('100.0')")
    assert "★ 3/36" in page.locator(".xp").text_content()
    assert "★★★" in page.locator("#level-dd input").input_value()
    shot(page, "04-en-reloaded")


def test_projector_mode_and_picture_level(page, app_url) -> None:
    page.goto(f"{app_url}?level=2-7&lang=en&projector=1")
    page.wait_for_selector("svg.dragon")
    assert page.evaluate("document.body.classList.contains('projector')")
    assert page.locator("#target-view svg.attn-map").count() == 2  # later levels: only the pictures
    shot(page, "05-en-projector-dialogue")


def test_chapter_one_compare(page, app_url) -> None:
    page.goto(f"{app_url}?level=1-1")
    page.wait_for_selector("#compare-maps svg")
    page.locator("#guess-one input").fill("1")
    page.locator("#guess-eight input").fill("7")
    page.locator("#compare-btn").click()
    page.wait_for_selector("#compare-result .result")
    assert "★★★" in page.locator("#compare-result").text_content()
    shot(page, "06-zh-one-head-or-eight")


def test_chapter_one_match_in_english(page, app_url) -> None:
    page.goto(f"{app_url}?level=1-2&lang=en")
    page.wait_for_selector("#pick-0 input")
    for i, name in enumerate(["Time", "Space", "Emotion", "Grammar"]):
        box = page.locator(f"#pick-{i} input")
        box.click()
        box.fill(name)
        page.locator("ul[role=listbox] li", has_text=name).first.click()
    page.locator("#match-btn").click()
    page.wait_for_selector("#match-result .result")
    assert "4 of 4 right" in page.locator("#match-result").text_content()
    page.wait_for_selector("#story .why")
    shot(page, "07-en-first-collaboration")


def test_hint_then_goddess_demo(page, app_url) -> None:
    page.goto(f"{app_url}?level=2-4")
    page.wait_for_selector("svg.dragon")
    page.locator("#hint-btn").click()
    page.wait_for_selector("#story .coach")
    assert "小T" in page.locator("#story .coach").text_content()
    page.wait_for_selector("#gauge .note")  # "at most 2 stars" after a hint
    page.locator("#demo-btn").click()
    page.wait_for_function(
        "parseFloat(document.querySelector('#gauge .score-value').textContent) >= 95", timeout=30_000
    )
    value = float(page.locator("#slider-logic input[type=number]").input_value())
    assert value != 0.5  # the sliders themselves moved
    shot(page, "08-zh-goddess-demo")


def test_tampered_storage_resets_without_a_crash(page, app_url) -> None:
    page.goto(f"{app_url}?level=2-2")
    page.wait_for_selector("svg.dragon")
    page.evaluate("localStorage.setItem('multi-head-dragon-progress', 'garbage{{')")
    page.reload()
    page.wait_for_selector("svg.dragon")
    assert "春晓" in page.locator("#story").text_content()

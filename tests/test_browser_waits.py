"""Waits in headless Chromium: a run behind another in the server's lane is said on the page — what runs, how far,
the place in the queue — in the language on screen, in type as large as the body (20 px and up in projector mode),
never as Gradio's own English queue line; once it is done the page asks again and shows the run it watched."""

import threading
import time

import pytest

from dragon.runtime import lane as runs
from tests.test_browser import opening, shot, text_sizes_below
from ui.strings import t

pytestmark = pytest.mark.browser


@pytest.fixture
def open_lab(browser, app_url):
    def ready(page) -> None:
        page.wait_for_selector("#top .level-title")
        page.wait_for_selector("#lab .mhd-lab:not([hidden])")

    yield from opening(browser, app_url, ready)


@pytest.mark.parametrize("lang, size", [("zh", "projector"), ("en", "desktop")])
def test_a_player_behind_a_run_sees_their_place_then_their_run(open_lab, monkeypatch, lang: str, size: str) -> None:
    seed = {"zh": 1001, "en": 1002}[lang]  # nobody trained these
    page = open_lab(f"level=3-4&lang={lang}" + ("&projector=1" if size == "projector" else ""), size)
    for i, h in enumerate([16, 8, 4, 2, 1]):
        page.locator(f"#lab [data-answer=r{i}]").select_option(str(h))
    page.locator('#lab [data-answer="seed"]').fill(str(seed))
    gate = threading.Event()
    held = runs.LANE.submit(f"hold/{time.time_ns()}", lambda report: gate.wait(60), "train")  # another player's run
    try:
        page.locator("#mhd-lab-train").click()
        page.wait_for_selector("#lab .wait-box", timeout=10_000)
        line = page.locator("#lab .wait-box .wait-line")
        page.wait_for_function("(x) => document.querySelector('#lab .wait-line').textContent.includes(x)",
                               arg=t("w_ahead1", lang)[:12], timeout=10_000)
        assert t("w_train", lang) in line.inner_text()  # what runs now
        assert "queue:" not in page.locator("body").inner_text()  # never Gradio's own English line
        size_of = "(el) => parseFloat(getComputedStyle(el).fontSize)"
        body_px = page.locator("#lab .mhd-lab").first.evaluate(size_of)
        px = page.wait_for_function(  # the line as drawn (the box is redrawn by each poll: never a detached copy)
            "() => { const el = document.querySelector('#lab .wait-line'); const v = el && el.isConnected "
            "&& parseFloat(getComputedStyle(el).fontSize); return v > 0 ? v : null; }").json_value()
        assert px >= (20 if size == "projector" else body_px - 0.5), (px, body_px)
        assert text_sizes_below(page, ["#lab .wait-box"], 20 if size == "projector" else 12) == []
        page.locator("#lab .wait-box").scroll_into_view_if_needed()
        shot(page, f"wait-queued-{lang}-{size}")
    finally:
        gate.set()
    assert held.done.wait(30)
    page.wait_for_selector("#lab .heads-result", timeout=60_000)  # the page asked again by itself
    record = page.locator("#lab .run-record").inner_text()
    assert t("w_watched", lang, at="", device="", s="")[:6] in record
    shot(page, f"wait-done-{lang}-{size}")

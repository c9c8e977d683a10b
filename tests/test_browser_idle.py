"""An open page nobody touches draws nothing (assets/ui/idle.js): Gradio's status tracker would otherwise ask for a
frame 60 times a second for good, on every student's device."""

import pytest

from tests.test_browser import SIZES

pytestmark = pytest.mark.browser

READY = {"2-1": "#panel .score-value", "4-3": "#lab .mhd-lab button[data-act]"}
COUNT_FRAMES = r"""(() => {  // before the page's scripts: count the frames that reach the browser, by who asked
  const frame = window.requestAnimationFrame;
  window.__frames = 0;
  window.__askers = {};
  window.requestAnimationFrame = function (cb) {
    window.__frames += 1;
    const who = (new Error().stack || "").split("\n").slice(2, 4).join(" | ");
    window.__askers[who] = (window.__askers[who] || 0) + 1;
    return frame.call(window, cb);
  };
})()"""


@pytest.mark.parametrize("level", ["2-1", "4-3"])
def test_an_idle_page_asks_for_almost_no_frames(browser, app_url, level: str) -> None:
    width, height = SIZES["desktop"]
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        context.add_init_script(COUNT_FRAMES)
        page = context.new_page()
        page.goto(f"{app_url}?level={level}&lang=en")
        page.wait_for_selector("#top .level-title")
        page.wait_for_selector(READY[level])
        asked = []  # frames asked for in each 1.5 s, until a window asks for almost none (what opening animates ends)
        for _ in range(10):
            before = page.evaluate("window.__frames")
            page.wait_for_timeout(1500)
            asked.append(page.evaluate("window.__frames") - before)
            if asked[-1] < 10:
                break
        askers = page.evaluate("window.__askers")
        assert asked[-1] < 10, f"frames in each 1.5 s on an idle page: {asked} (a loop asks 90), by who: {askers}"
        assert page.evaluate("window.__dragonFrames.skipped") >= 1  # the tracker's loop was there, and was stopped
    finally:
        context.close()

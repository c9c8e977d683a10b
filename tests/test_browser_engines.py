"""The headless shell the browser tests drive lays the app out exactly as the full Chromium does: every element's
box, to a quarter pixel, on five pages at the three sizes (tests/test_browser.py says why the shell)."""

import os

import pytest

from tests.a11y import SETTLED
from tests.test_browser import CHROMIUM, FULL_CHROMIUM, SIZES

pytestmark = pytest.mark.browser

PAGES = [  # (query, size, what marks it ready)
    ("level=2-1&lang=zh", "desktop", "#panel .score-value"),
    ("level=2-7&lang=en&projector=1", "projector", "#panel .score-value"),
    ("level=4-3&lang=en", "phone", "#lab .mhd-lab button[data-act]"),
    ("level=1-1&lang=zh", "phone", "#quiz .mhd-quiz"),
    ("sandbox=1&lang=en", "desktop", "#top .level-title"),
]
BOXES = """() => [...document.querySelectorAll('body *')].map((e) => {
  const r = e.getBoundingClientRect(), q = (v) => Math.round(v * 4) / 4;
  const id = e.id && !/^html-/.test(e.id) ? '#' + e.id : '';  // Gradio's html-… ids are drawn anew each load
  return [e.tagName + id, q(r.x), q(r.y), q(r.width), q(r.height)]; })"""


def boxes(browser, url: str) -> list[list]:
    """Every element's box on each page, in document order, once its fonts are in and nothing moves."""
    out = []
    for query, size, ready in PAGES:
        width, height = SIZES[size]
        context = browser.new_context(viewport={"width": width, "height": height})
        try:
            page = context.new_page()
            page.goto(f"{url}?{query}")
            page.wait_for_selector("#top .level-title")
            page.wait_for_selector(ready)
            page.wait_for_function(f"document.fonts.status === 'loaded' && ({SETTLED})()")
            out.append(page.evaluate(BOXES))
        finally:
            context.close()
    return out


def test_the_headless_shell_lays_the_app_out_as_the_full_chromium_does(browser, app_url) -> None:
    if not FULL_CHROMIUM or not CHROMIUM or os.path.realpath(CHROMIUM) == os.path.realpath(FULL_CHROMIUM):
        reason = "two Chromiums to compare are not installed (Debian: chromium and chromium-headless-shell)"
        if os.environ.get("CI"):
            pytest.fail(f"must run in CI: {reason}")
        pytest.skip(reason)
    shell = boxes(browser, app_url)
    full_browser = browser.launch(FULL_CHROMIUM)
    try:
        full = boxes(full_browser, app_url)
    finally:
        full_browser.close()
    for (query, size, _), a, b in zip(PAGES, shell, full, strict=True):
        assert len(a) == len(b), f"{query} ({size}): {len(a)} elements in the shell, {len(b)} in the full Chromium"
        differ = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
        assert not differ, f"{query} ({size}): {len(differ)} of {len(a)} boxes differ, first {differ[:3]}"

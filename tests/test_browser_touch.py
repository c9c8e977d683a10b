"""A phone's finger on the sliders, in headless Chromium with touch events (CDP): a vertical swipe that starts on a
slider's track scrolls the page and moves no slider (no new score, no move counted); a sideways drag and a tap move
it. At 390 × 844, touch and mobile emulation on: the game's panel, and a live class's everyone-plays round."""

import pytest

from tests.test_browser import SIZES, open_page  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser
PHONE = {"has_touch": True, "is_mobile": True}


def touch_path(page, points: list[tuple[float, float]]) -> None:
    """A finger put down at the first point, moved through the rest a frame apart, and lifted."""
    cdp = page.context.new_cdp_session(page)
    (x, y), rest = points[0], points[1:]
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for x, y in rest:
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]})
        page.wait_for_timeout(16)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    page.wait_for_timeout(400)


def track(page, i: int = 2) -> tuple:
    slider = page.locator("#panel input.range").nth(i)
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    return slider, box["x"], box["y"] + box["height"] / 2, box["width"]


def live_score(page) -> str:
    return page.locator("#panel [data-live=gauge]").inner_html()


def test_a_vertical_swipe_on_a_slider_scrolls_and_moves_nothing(open_page) -> None:  # noqa: F811
    page = open_page("level=2-1&lang=en", "phone", **PHONE)
    slider, x, y, w = track(page)
    assert page.evaluate("(el) => getComputedStyle(el).touchAction", slider.element_handle()) == "pan-y"
    before, score, top = slider.input_value(), live_score(page), page.evaluate("scrollY")
    touch_path(page, [(x + 0.85 * w, y - k * 30) for k in range(9)])  # up 240 px, from far right on the track
    assert slider.input_value() == before  # the thumb did not jump to the finger
    assert page.evaluate("scrollY") > top + 100  # the page scrolled instead
    assert live_score(page) == score  # no new score: no move was sent


def test_a_sideways_drag_and_a_tap_move_the_slider(open_page) -> None:  # noqa: F811
    page = open_page("level=2-1&lang=en", "phone", **PHONE)
    slider, x, y, w = track(page)
    before, score = float(slider.input_value()), live_score(page)
    touch_path(page, [(x + w * (0.5 + k * 0.05), y) for k in range(8)])  # right, along the track
    dragged = float(slider.input_value())
    assert dragged > before + 0.1
    page.wait_for_function("(g) => document.querySelector('#panel [data-live=gauge]').innerHTML !== g", arg=score)
    slider, x, y, w = track(page)
    touch_path(page, [(x + 0.1 * w, y)])  # a tap near the left end
    assert float(slider.input_value()) < dragged - 0.3


def test_on_a_class_page_a_swipe_scrolls_and_a_drag_plays(browser, app_url: str) -> None:
    teacher_context = browser.new_context(viewport={"width": 1366, "height": 900})
    width, height = SIZES["phone"]
    phone_context = browser.new_context(viewport={"width": width, "height": height}, **PHONE)
    try:
        teacher = teacher_context.new_page()
        teacher.goto(f"{app_url}?teach=1")
        teacher.click("#open")
        teacher.wait_for_function("document.querySelector('#code').textContent.length === 6")
        code = teacher.text_content("#code")
        phone = phone_context.new_page()
        errors = []
        phone.on("pageerror", lambda e: errors.append(str(e)))
        phone.goto(f"{app_url}?class={code}")
        phone.fill("#nickname", "Dee")
        phone.click("#join-form button[type=submit]")
        phone.wait_for_selector("#my-name:visible")
        teacher.select_option("#everyone-level", "2-3")
        teacher.click("#start-everyone")
        phone.wait_for_selector("#g-7")
        slider = phone.locator("#g-2")
        slider.scroll_into_view_if_needed()
        box = slider.bounding_box()
        x, y, w = box["x"], box["y"] + box["height"] / 2, box["width"]
        assert phone.evaluate("(el) => getComputedStyle(el).touchAction", slider.element_handle()) == "pan-y"
        before, top = slider.input_value(), phone.evaluate("scrollY")
        touch_path(phone, [(x + 0.9 * w, y - k * 30) for k in range(9)])  # up 240 px, from the track's right end
        assert slider.input_value() == before and phone.text_content("#g-2-v") == f"{float(before):.2f}"
        most = phone.evaluate("document.documentElement.scrollHeight - innerHeight")  # as far as the page goes
        assert most > top and phone.evaluate("scrollY") >= min(top + 100, most) - 1  # the page scrolled instead
        phone.wait_for_timeout(1500)  # a poll or two: no move reached the server, the board lists no player
        assert teacher.locator(".players li").count() == 0 and slider.input_value() == before
        slider.scroll_into_view_if_needed()
        box = slider.bounding_box()
        x, y, w = box["x"], box["y"] + box["height"] / 2, box["width"]
        touch_path(phone, [(x + w * (0.3 + k * 0.08), y) for k in range(8)])  # sideways: a move
        assert float(slider.input_value()) > float(before) + 0.2
        teacher.wait_for_function("document.querySelectorAll('.players li').length === 1")  # sent and counted
        assert not errors, errors
    finally:
        phone_context.close()
        teacher_context.close()

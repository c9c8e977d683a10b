"""A live class in real Chromium: a teacher at a 1920 × 1080 projector and nine students (one on a 390 × 844 phone)
play a class-dragon round to ★★★ and an everyone-plays round, the teacher exports the CSV and reads it back. Nicknames
carrying markup and template text show as text, and no script of theirs runs; viewport screenshots go to
test-artifacts/ to be looked at."""

import csv
import io

import pytest

from dragon.levels import get_level, load_levels
from tests.test_browser import ARTIFACTS, SIZES, browser, shot  # noqa: F401  (browser: a fixture)

pytestmark = pytest.mark.browser

# nicknames are at most 20 characters: each of these opens a dialog if it is ever run as markup or script
NAMES = ["小明", "<svg/onload=alert()>", "${alert('tpl')}", "{{7*7}}", "<img src=x onerror", "Ana", "Ben", "Cai",
         "javascript:alert()"]  # fmt: skip
DRAGON, EVERYONE = "2-1", "2-3"


@pytest.fixture
def contexts(browser):  # noqa: F811
    made, dialogs, errors = [], [], []

    def new(size: str):
        width, height = SIZES[size]
        context = browser.new_context(viewport={"width": width, "height": height}, accept_downloads=True)
        made.append(context)
        page = context.new_page()
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("pageerror", lambda e: errors.append(str(e)))
        return page

    yield new, dialogs, errors
    for context in made:
        context.close()


def set_slider(page, selector: str, value: float) -> None:
    page.eval_on_selector(selector, """(el, v) => { el.value = String(v);
        el.dispatchEvent(new Event("input", { bubbles: true })); }""", value)


def test_a_class_plays_both_modes_and_exports_its_results(app_url: str, contexts) -> None:
    load_levels()
    new, dialogs, errors = contexts
    teacher = new("projector")
    teacher.goto(f"{app_url}?teach=1")
    teacher.wait_for_selector("#open:visible")
    assert "/class/teach" in teacher.url
    teacher.click("#open")
    teacher.wait_for_function("document.querySelector('#code').textContent.length === 6")
    code = teacher.text_content("#code")
    teacher.wait_for_selector("#qr svg")
    assert teacher.text_content("#join-url").endswith(f"/?class={code}")
    assert "secret=" in teacher.url and teacher.input_value("#secret-link") == teacher.url
    shot(teacher, "class-projector-open")

    students = []
    for k, name in enumerate(NAMES):
        page = new("phone" if k == 0 else "desktop")
        page.goto(f"{app_url}?class={code.lower()}")
        page.wait_for_selector("#nickname:visible")
        assert page.input_value("#join-code") == code
        page.fill("#nickname", name)
        page.click("#join-form button[type=submit]")
        page.wait_for_selector("#my-name:visible")
        assert page.text_content("#my-name") == name
        students.append(page)
    teacher.wait_for_function("document.querySelector('#count').textContent === '9'")
    shown = teacher.eval_on_selector_all("#members li > span", "els => els.map(e => e.textContent)")
    assert shown == NAMES  # markup and templates as typed, as text
    assert teacher.locator("#members img").count() == 0

    # --- the class dragon: each student sets their head to the level's target until the class reaches ★★★
    teacher.select_option("#dragon-level", DRAGON)
    teacher.click("#start-dragon")
    target = get_level(DRAGON).target_for("zh")
    for page in students:
        page.wait_for_selector(".mine-head input[type=range]")
    shot(students[0], "class-student-phone-dragon")
    for page in students:
        if teacher.locator(".won").count():
            break
        for slider in page.eval_on_selector_all(".mine-head input[type=range]", "els => els.map(e => e.id)"):
            set_slider(page, f"#{slider}", target[int(slider.removeprefix("head-"))])
        page.wait_for_timeout(300)
    teacher.wait_for_selector(".won", timeout=15_000)
    assert float(teacher.get_attribute(".board .score", "data-score")) >= 95
    shot(teacher, "class-projector-dragon-won")
    students[-1].wait_for_selector(".won", timeout=10_000)  # every page shows the win
    teams = teacher.eval_on_selector_all(".board .head .team", "els => els.map(e => e.textContent)")
    assert len(teams) == 8 and sum(": 2 " in t for t in teams) == 1  # nine students: one head has a team of two

    # --- everyone plays a slider level: the projector counts the students at each star count
    teacher.select_option("#everyone-level", EVERYONE)
    teacher.click("#start-everyone")
    goal = get_level(EVERYONE).target_for("zh")
    for k, page in enumerate(students[:6]):
        page.wait_for_selector("#g-7")
        for h in range(8):
            set_slider(page, f"#g-{h}", goal[h] if k < 4 else 0.0 if h % 2 else 1.0)
        page.wait_for_timeout(400)
    teacher.wait_for_function("() => document.querySelectorAll('.players li').length === 6", timeout=15_000)
    counts = teacher.eval_on_selector_all(".hist > div > span:first-child", "els => els.map(e => +e.textContent)")
    assert sum(counts) == 6 and counts[3] >= 4  # the four at the target have ★★★
    assert teacher.locator(".spread svg").count() == 1
    shot(teacher, "class-projector-everyone")
    shot(students[0], "class-student-phone-everyone")
    teacher.uncheck("#show-names")
    teacher.wait_for_function("() => !document.querySelector('.players')", timeout=10_000)

    # --- the CSV, read back
    with teacher.expect_download() as download:
        teacher.click("#csv")
    path = ARTIFACTS / "class-results.csv"
    download.value.save_as(path)
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    everyone = [r for r in rows if r["kind"] == "everyone"]
    assert sorted(r["nickname"] for r in everyone) == sorted(NAMES[:6])
    assert sum(r["stars"] == "3" for r in everyone) >= 4
    assert any(r["kind"] == "dragon" and r["stars"] == "3" for r in rows)

    # --- everyone plays a lab level: each page frames the game itself, which carries the student's token (the results
    # the server scores there count for the class: tests/test_classroom.py), in an exam without its hints
    teacher.check("#exam")
    teacher.select_option("#everyone-level", "3-1")
    teacher.click("#start-everyone")
    phone = students[0]
    phone.wait_for_selector("iframe.game-frame")
    frame = phone.frame_locator("iframe.game-frame")
    frame.locator("#top .level-title").wait_for(timeout=30_000)
    src = phone.get_attribute("iframe.game-frame", "src")
    assert "level=3-1" in src and "classplay=1" in src and "exam=1" in src
    game = next(f for f in phone.frames if "classplay=1" in f.url)
    assert game.evaluate("window.__dragon.classplay") == phone.evaluate("localStorage.getItem('dragon.class.current')")
    shot(phone, "class-student-phone-lab")

    assert teacher.locator("#members svg, #members img, .players svg").count() == 0
    assert not dialogs and not errors, (dialogs, errors)

"""The classroom in headless Chromium: the sandbox, a level made from it, an uploaded level and pack, a share link
opened in a fresh browser, the exam switch, and the teachers' files (worksheet, PNG of the maps, report)."""

import json
import urllib.parse

import pytest

import dragon
from dragon import api
from dragon.config import HEADS
from dragon.levels import teacher as teacher_levels
from dragon.levels.loader import get_level
from dragon.scoring import score
from dragon.text.analyser import MAX_TOKENS
from tests.test_browser import in_view, opening, shot
from ui.strings import t
from ui.widgets.draw import shown_score

pytestmark = pytest.mark.browser

SENTENCE = "昨天在公园里，那个悲伤的小女孩正在快乐地玩耍。"
GATES = [0, 0, 0.9, 0, 0.8, 0, 0, 0.2]  # emotion, time, context: heads that speak in SENTENCE
POEM = {"title": {"zh": "床前明月", "en": "Moon by My Bed"}, "lang": "zh",
        "text": "床前明月光，疑是地上霜。举头望明月，低头思故乡。",
        "target": {"emotion": 0.9, "tone": 0.8, "space": 0.3}}
TEACHER = {"title": {"zh": "老师", "en": "The teacher"}, "lang": "en",
           "text": "The teacher told the students that they should study hard.",
           "target": {"context": 0.9, "semantics": 0.6}}


def ready_any(page) -> None:
    page.wait_for_selector("#top .level-title")
    page.wait_for_function(
        "document.querySelector('#panel .score-value') || document.querySelector('#panel .free-note') "
        "|| !document.querySelector('.mhd-quiz[hidden]') || document.querySelector('#lab .mhd-lab:not([hidden])') "
        "|| document.querySelector('#top #mhd-sb-text')"
    )


@pytest.fixture
def open_any(browser, app_url):
    yield from opening(browser, app_url, ready_any)


def open_box(page) -> None:
    """Open the teachers' box (a click on its summary) and wait until its buttons show. The box keeps the open or shut
    state the teacher left it in across a redraw, so a redraw that lands between the look and the click can shut it
    again (seen once in CI on a busy machine): the look and the click are tried again, at most three times."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.wait_for_selector("#teacher summary")
    for _ in range(3):
        if not page.locator("#teacher details[open]").count():
            page.click("#teacher summary")
        try:
            page.wait_for_selector("#teacher [data-act=open]", state="visible", timeout=10_000)
            return
        except PlaywrightTimeout:
            continue
    page.wait_for_selector("#teacher [data-act=open]", state="visible")


def set_gates(page, gates: list[float]) -> None:
    for i, v in enumerate(gates):
        box = page.locator(f"#panel .srow >> nth={i} >> input.num")
        box.fill(str(v))
        box.press("Enter")
    page.wait_for_function(
        "g => [...document.querySelectorAll('#panel input.range')].every((r, i) => Math.abs(+r.value - g[i]) < 1e-9)",
        arg=gates,
    )


def test_the_sandbox_reads_any_text_and_makes_a_level_that_a_fresh_browser_opens_by_its_share_link(open_any, browser):
    page = open_any(f"sandbox=1&lang=zh&text={urllib.parse.quote(SENTENCE)}")
    page.wait_for_selector("#sandbox .top-words")
    truth = dragon.analyze(SENTENCE, "auto")
    # the eight real maps, each head's words as text, the token cap said
    assert page.locator("#maps .tile").count() == len(HEADS)
    words = page.locator("#sandbox .top-words li").all_inner_texts()
    assert len(words) == len(HEADS) and "悲伤" in words[HEADS.index("emotion")]
    assert str(MAX_TOKENS) in page.locator("#top .sb-form .note").inner_text()  # the cap said under the box
    assert page.locator("#top .tok").count() == len(truth["tokens"])
    shot(page, "sandbox-zh-desktop")
    # live sliders move the fused output without any score
    before = page.locator("#panel [data-live=compare]").inner_html()
    set_gates(page, GATES)
    page.wait_for_function("b => document.querySelector('#panel [data-live=compare]').innerHTML !== b", arg=before)
    assert page.locator("#panel .score-value").count() == 0
    # make a level of it: the sliders become the target
    page.fill("#sandbox [data-field=title_zh]", "公园里的女孩")
    page.fill("#sandbox [data-field=title_en]", "The girl in the park")
    page.click("#mhd-sb-make")
    page.wait_for_selector("#panel .score-value")
    assert "公园里的女孩" in page.locator("#top .level-title").inner_text()
    shown = float(page.locator("#panel .score-value").text_content())
    reading = api.text_reading(SENTENCE, "zh")
    assert shown == pytest.approx(score(reading, [0.5] * 8, GATES), abs=0.05)  # opened as the class will see it
    share = page.locator('#teacher input[data-link="plain"]').input_value()
    assert "custom=T1." in share and len(share) < 2000
    # a fresh browser (no storage) opens the level from the link alone and plays it with stars and hints
    fresh = browser.take_page({"width": 1366, "height": 900}, {})  # a fresh start (conftest.py)
    try:
        fresh.goto(share)
        fresh.wait_for_selector("#panel .score-value")
        assert "公园里的女孩" in fresh.locator("#top .level-title").inner_text()
        assert float(fresh.locator("#panel .score-value").text_content()) < 70  # opened at 0.5 each: not won
        assert fresh.locator("#mhd-hint").count() == 1
        set_gates(fresh, GATES)
        fresh.wait_for_function("document.querySelector('#panel .stars').textContent.includes('★★★')")
        shot(fresh, "teacher-level-fresh-browser")
    finally:
        browser.give_back(fresh)


def test_an_exam_link_hides_hints_demo_and_reveal_for_whoever_opens_it(open_any):
    code = api.check_level({"levels": [POEM, TEACHER]})["code"]
    page = open_any(f"custom={urllib.parse.quote(code)}&exam=1&lang=en")
    page.wait_for_selector("#panel .score-value")
    for act in ("hint", "demo", "reveal"):
        assert page.locator(f"#panel [data-act={act}]").count() == 0
    assert t("exam_on", "en") in page.locator("#panel .buttons").inner_text()
    assert page.locator("#teacher .mhd-teacher[hidden]").count() == 1  # no answer key for the class
    second = teacher_levels.levels_from_code(code)[1].id
    page.select_option("#top .level-pick", second)  # the exam goes on to the next level chosen
    page.wait_for_function("document.querySelector('#top .level-title').textContent.includes('The teacher')")
    page.wait_for_selector("#panel .score-value")
    assert page.locator("#panel [data-act=hint]").count() == 0
    assert "exam=1" in page.url
    shot(page, "exam-en-desktop")


def test_the_reveal_moves_the_sliders_to_the_target(open_any):
    page = open_any("level=2-1&lang=zh")
    page.click("#mhd-reveal")
    target = api.explain("2-1", "zh")["target"]
    page.wait_for_function(
        "g => [...document.querySelectorAll('#panel input.range')].every((r, i) => Math.abs(+r.value - g[i]) < 0.006)",
        arg=target,
    )
    assert float(page.locator("#panel .score-value").text_content()) > 99.9


def test_the_teachers_box_stays_open_or_shut_as_the_teacher_left_it_across_a_redraw(open_any):
    """Opened, it stays open through the other language and a new level (each redraws it); shut, it stays shut."""
    page = open_any("level=2-1&lang=en")
    open_box(page)
    for lang, level in (("zh", "2-1"), ("zh", "2-2"), ("en", "2-2")):
        title = t("tb_title", lang)
        if page.locator("#top .level-pick").input_value() != level:
            page.select_option("#top .level-pick", level)
        page.click(f"#top button[data-lang={lang}]")
        page.wait_for_function("([x, lv]) => document.querySelector('#teacher summary').textContent.includes(x) && "
                               "document.querySelector('#top .level-pick').value === lv", arg=[title, level])
        page.wait_for_timeout(300)  # a late answer would shut it here
        assert page.locator("#teacher details[open]").count() == 1, (lang, level)
    page.click("#teacher summary")
    page.click("#top button[data-lang=zh]")
    page.wait_for_function("(x) => document.querySelector('#teacher summary').textContent.includes(x)",
                           arg=t("tb_title", "zh"))
    page.wait_for_timeout(300)
    assert page.locator("#teacher details[open]").count() == 0


def test_a_pasted_pack_opens_and_a_bad_one_is_refused_with_every_reason(open_any):
    page = open_any("level=2-1&lang=en")
    open_box(page)
    bad = {**POEM, "target": {"emotion": 1.5, "humour": 1}, "genre": "novel"}
    page.fill("#mhd-tb-source", json.dumps(bad, ensure_ascii=False))
    page.click("#teacher [data-act=open]")
    page.wait_for_selector("#teacher .refusal")
    said = page.locator("#teacher .refusal li").all_inner_texts()
    assert said == api.check_level(bad)["errors"] and len(said) == 3
    assert "2-1" in page.locator("#top .level-title").inner_text()  # nothing else changed
    pack = {"levels": [POEM, TEACHER]}
    page.fill("#mhd-tb-source", json.dumps(pack, ensure_ascii=False))
    page.click("#teacher [data-act=open]")
    page.wait_for_function("document.querySelector('#top .level-title').textContent.includes('Moon by My Bed')")
    options = page.locator("#top .level-pick option").all_inner_texts()
    assert any("Moon by My Bed" in o for o in options) and any("The teacher" in o for o in options), options
    set_gates(page, [POEM["target"].get(h, 0.0) for h in HEADS])
    page.wait_for_selector("#panel [data-act=next]")
    page.click("#panel [data-act=next]")
    page.wait_for_function("document.querySelector('#top .level-title').textContent.includes('The teacher')")
    levels = teacher_levels.levels_from_code(api.check_level(pack)["code"])
    assert page.locator("#top .tok").count() == len(api.level_reading(levels[1], "en").tokens)
    shot(page, "teacher-pack-en-desktop")


DIALOGUE = {"title": {"zh": "满分", "en": "Full marks"}, "lang": "en",
            "text": "Mum: Why are you so happy today?\nChild: Because I got full marks in the test!",
            "target": {"emotion": 0.9, "tone": 0.8, "space": 0.3}}  # space is silent in a dialogue at home


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_refused_level_offers_its_repair_and_one_click_opens_it(open_any, lang):
    page = open_any(f"level=2-1&lang={lang}")
    open_box(page)
    page.fill("#mhd-tb-source", json.dumps(DIALOGUE, ensure_ascii=False))
    page.click("#teacher [data-act=open]")
    page.wait_for_selector("#teacher .repair a[data-repair]")
    assert t("sug_title", lang) in page.locator("#teacher .repair").inner_text()
    shot(page, f"teacher-repair-{lang}")
    page.click("#teacher .repair a[data-repair]")
    s = api.check_level(DIALOGUE)["suggestion"]
    page.wait_for_function("(x) => document.querySelector('#top .level-title')?.textContent.includes(x)",
                           arg=DIALOGUE["title"][lang])
    assert f"level={s['id']}" in page.url and f"lang={lang}" in page.url
    assert page.locator("#top .tok").count() == len(api.level_reading(teacher_levels.build(s["level"]), "en").tokens)


def test_the_sandbox_offers_the_repair_of_a_level_it_cannot_make(open_any):
    page = open_any(f"sandbox=1&lang=en&text={urllib.parse.quote(DIALOGUE['text'])}")
    page.wait_for_selector("#mhd-sb-make")
    set_gates(page, [DIALOGUE["target"].get(h, 0.0) for h in HEADS])
    page.click("#mhd-sb-make")
    page.wait_for_selector("#sandbox .repair a[data-repair]")
    page.click("#sandbox .repair a[data-repair]")
    page.wait_for_function("document.querySelector('#top .level-title')?.textContent.includes('" +
                           t("sb_default_en", "en") + "')")
    assert "custom=T1." in page.url


def test_an_uploaded_file_is_read_into_the_box_and_opens(open_any, tmp_path):
    page = open_any("level=2-2&lang=zh")
    open_box(page)
    path = tmp_path / "level.yaml"
    path.write_text("title: {zh: 静夜思, en: Quiet Night}\nlang: zh\n"
                    "text: 床前明月光，疑是地上霜。举头望明月，低头思故乡。\n"
                    "target: {emotion: 0.9, tone: 0.8, space: 0.3}\n", encoding="utf-8")
    page.set_input_files("#teacher .tb-upload", str(path))
    page.wait_for_function("document.querySelector('#mhd-tb-source').value.includes('静夜思')")
    page.click("#teacher [data-act=open]")
    page.wait_for_function("document.querySelector('#top .level-title').textContent.includes('静夜思')")
    assert "custom=T1." in page.url


def test_a_damaged_share_link_says_why_and_opens_the_game(open_any):
    page = open_any("custom=T1.damaged@@&lang=en")
    notice = page.locator("#top .notice").inner_text()
    assert "cannot be opened" in notice and "damaged" in notice


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_long_paste_is_cut_in_the_box_too_and_said_by_the_read_button(open_any, size):
    """The box showed all 980 characters typed while the note said only 800 were read (its markup is patched, and a
    box typed in keeps its own value): once read it holds what was read. What the reading met is said under the
    button, in view where it was pressed, even on a phone scrolled down to the box."""
    from ui.session import MAX_SANDBOX_CHARS

    page = open_any("sandbox=1&lang=en", size)
    page.fill("#mhd-sb-text", "The cat sat on the mat.")
    page.click("#mhd-sb-read")
    page.wait_for_selector("#maps svg.attn-map")
    for text in ("The students read the book. " * 35, "今天天气很好。" * 140):  # 980 characters each
        page.locator("#mhd-sb-text").evaluate("e => e.scrollIntoView({block: 'start'})")  # the top notice above
        page.fill("#mhd-sb-text", text)
        page.click("#mhd-sb-read")
        page.wait_for_function("(n) => document.querySelector('#mhd-sb-text').value.length === n",
                               arg=MAX_SANDBOX_CHARS)
        assert page.locator("#mhd-sb-text").input_value() == text.strip()[:MAX_SANDBOX_CHARS]
        said = page.locator("#top .sb-said")
        assert t("sb_cut_chars", "en", chars=MAX_SANDBOX_CHARS) in said.inner_text()
        assert in_view(page, "#top .sb-said"), said.bounding_box()
    shot(page, f"sandbox-long-paste-{size}")


def test_hostile_text_in_the_sandbox_is_shown_as_text(open_any):
    hostile = "<img src=x onerror=alert(1)> ${document.title} hello world"
    page = open_any(f"sandbox=1&lang=en&text={urllib.parse.quote(hostile)}")
    page.wait_for_selector("#sandbox .top-words")
    assert page.locator("#top img[src=x], #sandbox img[src=x]").count() == 0
    assert "${document.title}" in page.locator("#mhd-sb-text").input_value()


def test_the_teachers_box_prints_the_worksheet_and_downloads_the_maps_png_and_the_report(open_any, tmp_path):
    import io
    import unicodedata

    from PIL import Image
    from pypdf import PdfReader

    page = open_any("level=2-1&lang=zh")
    level = api.explain("2-1", "zh")
    open_box(page)
    # the worksheet goes to the browser's print: catch the document, print it to PDF, read it back
    page.evaluate("() => { window.__printed = []; window.__dragonExport.printHtml = (h) => window.__printed.push(h); }")
    page.click("#teacher [data-file=worksheet]")
    page.wait_for_function("window.__printed.length === 1")
    sheet = page.evaluate("window.__printed[0]")
    printer = page.context.new_page()
    printer.set_content(sheet)
    printer.emulate_media(media="print")
    pdf = PdfReader(io.BytesIO(printer.pdf(format="A4")))
    printer.close()
    # NFKC: the PDF's text layer spells some CJK characters as their Kangxi radicals (⽉ for 月)
    text = unicodedata.normalize("NFKC", "".join(p.extract_text() for p in pdf.pages))
    text = text.replace(" ", "").replace("\n", "")
    assert level["text"][:5] in text and t("ws_questions", "zh") in text
    # the maps as one PNG, drawn by the browser at 2×
    with page.expect_download() as got:
        page.click("#teacher [data-file=png]")
    path = tmp_path / "maps.png"
    got.value.save_as(path)
    image = Image.open(path)
    assert got.value.suggested_filename == "maps-2-1.png" and image.width >= 1000 and len(image.getcolors(1 << 20)) > 50
    # the report of this play: the sliders on screen, their score
    set_gates(page, [0.2] * 8)
    with page.expect_download() as got:
        page.click("#teacher [data-file=report]")
    report = got.value.path().read_text(encoding="utf-8")
    reading = api.level_reading(get_level("2-1"), "zh")
    assert f"{shown_score(score(reading, [0.2] * 8, level['target'])):.1f}" in report  # cut to a tenth, as the gauge


def test_an_english_sandbox_text_shows_one_words_row_in_the_real_models_72_heads(open_any):
    text = "The teacher told the students that they should study hard."
    page = open_any(f"sandbox=1&lang=en&text={urllib.parse.quote(text)}")
    page.wait_for_selector("#sandbox .sb-model select")
    page.select_option("#sandbox [data-field=word]", "they")
    page.click("#mhd-sb-word")
    page.wait_for_selector("#sandbox .cb-grid", timeout=120_000)
    truth = api.crystal_ball(text, "they")
    assert page.locator("#sandbox .cb-grid .cb-map").count() == truth["layers"] * truth["heads"] == 72
    best = truth["best"]
    said = page.locator("#sandbox .sb-model .result").inner_text()
    assert f"L{best['layer'] + 1}H{best['head'] + 1}" in said and f"{best['weight']:.2f}" in said
    marked = page.locator("#sandbox .cb-map.best")
    assert marked.get_attribute("data-head") == f"L{best['layer'] + 1} H{best['head'] + 1}"
    assert f"{best['token']} {best['weight']:.2f}" in marked.get_attribute("aria-label")  # its row in words
    shot(page, "sandbox-en-model-desktop")
    # an instrument: which head sends "they" to "students"? the heads ranked by that link; any head read out
    page.select_option("#sandbox [data-field=target]", "students")
    page.click("#mhd-sb-word")
    page.wait_for_selector("#sandbox .cb-rank")
    ranked = api.crystal_ball(text, "they", "students")
    to = ranked["tokens"].index("students")
    first = max(((row[to], li, hi) for li, layer in enumerate(ranked["attention"]) for hi, row in enumerate(layer)))
    top = f"L{first[1] + 1} H{first[2] + 1} {first[0]:.2f}"
    page.wait_for_function(  # the ranking by the new target replaces the one by the strongest link
        "(top) => (document.querySelector('#sandbox .cb-rank li')?.innerText || '').startsWith(top)", arg=top)
    tile = page.locator('#sandbox .cb-map[data-head="L4 H2"]')
    tile.click()
    detail = page.locator("#sandbox .cb-detail")
    assert in_view(page, "#sandbox .cb-detail"), "the clicked head's readout is not in view"
    row = ranked["attention"][3][1]
    assert "L4 H2" in detail.inner_text() and f"{row[to]:.2f}" in detail.inner_text()
    assert detail.locator(".bar-row").count() == len(ranked["tokens"])
    page.keyboard.press("ArrowRight")  # the keyboard walks the heads: the next one is read out
    page.wait_for_function("document.querySelector('#sandbox .cb-detail .sub').textContent.startsWith('L4 H3')")
    strip = page.locator("#sandbox .cb-strip").first.bounding_box()
    assert strip["height"] >= 24  # readable strips
    detail.scroll_into_view_if_needed()
    shot(page, "sandbox-en-model-detail")


SMALL_TARGETS = """(root) => [...document.querySelectorAll(root)].flatMap((box) =>
  [...box.querySelectorAll('button, input, select, textarea, a[href], summary')]
    .filter((el) => el.offsetParent !== null && el.type !== 'file')
    .map((el) => [el.id || el.dataset.act || el.dataset.file || el.dataset.copy || el.tagName,
                  el.getBoundingClientRect()])
    .filter(([, r]) => r.width < 44 || r.height < 44)
    .map(([name, r]) => `${name} ${Math.round(r.width)}×${Math.round(r.height)}`))"""


@pytest.mark.parametrize("size", ["phone", "projector"])
def test_the_sandbox_and_the_teachers_box_fit_a_phone_and_a_projector(open_any, size):
    projector = "&projector=1" if size == "projector" else ""
    page = open_any(f"sandbox=1&lang=zh&text={urllib.parse.quote(SENTENCE)}{projector}", size=size)
    page.wait_for_selector("#sandbox .top-words")
    open_box(page)
    small = page.evaluate(SMALL_TARGETS, "#sandbox, #teacher, #top .sb-form")
    assert not small, small  # every control of the new rooms is at least 44 × 44 CSS px
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"] + 1  # nothing wider than the screen
    if size == "phone":  # among the sliders, the sticky block takes at most a quarter of the screen
        page.locator("#mhd-s3").scroll_into_view_if_needed()
        sticky = page.evaluate("document.querySelector('#panel .summary').getBoundingClientRect().height")
        assert sticky <= page.viewport_size["height"] / 4, sticky
    page.locator("#top .sb-form").scroll_into_view_if_needed()
    shot(page, f"sandbox-zh-{size}")
    page.locator("#sandbox .sb-make").scroll_into_view_if_needed()
    shot(page, f"sandbox-make-zh-{size}")
    page.locator("#teacher").scroll_into_view_if_needed()
    shot(page, f"teacher-box-zh-{size}")


def focused(page) -> dict:
    return page.evaluate("""() => { const el = document.activeElement;
        return { id: el.id || "", act: (el.dataset && el.dataset.act) || "", tag: el.tagName,
                 where: el.closest('#top') ? 'top' : el.closest('#panel') ? 'panel' : el.closest('#sandbox') ? 'sandbox'
                        : 'page' }; }""")


def test_the_sandbox_is_played_with_the_keyboard_alone(open_any):
    page = open_any("sandbox=1&lang=en")
    page.wait_for_selector("#mhd-sb-text")
    page.focus("#mhd-sb-text")  # the box where the player starts; from here on, keys only
    page.keyboard.type("The old fisherman said that he would sail home before the storm.")
    page.keyboard.press("Tab")
    assert focused(page)["tag"] == "SELECT"
    page.keyboard.press("Tab")
    assert focused(page)["id"] == "mhd-sb-read"
    page.keyboard.press("Enter")
    page.wait_for_selector("#sandbox .top-words")
    for _ in range(30):  # on to slider ①
        page.keyboard.press("Tab")
        if focused(page)["id"] == "mhd-s0":
            break
    assert focused(page)["id"] == "mhd-s0"
    before = page.locator("#panel [data-live=compare]").inner_html()
    page.keyboard.press("End")
    page.wait_for_function("b => document.querySelector('#panel [data-live=compare]').innerHTML !== b", arg=before)
    assert page.locator("#mhd-s0").input_value() == "1"
    for _ in range(40):  # through the sliders and their boxes to the sandbox's make button
        page.keyboard.press("Tab")
        if focused(page)["id"] == "mhd-sb-make":
            break
    assert focused(page)["id"] == "mhd-sb-make"
    page.keyboard.press("Enter")
    page.wait_for_selector("#sandbox .refusal, #panel .score-value")
    shot(page, "sandbox-keyboard-en")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_axe_finds_nothing_serious_in_the_sandbox_and_the_teachers_box(open_any, lang):
    from tests.a11y import audit, summary

    text = SENTENCE if lang == "zh" else TEACHER["text"]
    page = open_any(f"sandbox=1&lang={lang}&text={urllib.parse.quote(text)}")
    page.wait_for_selector("#sandbox .top-words")
    open_box(page)
    found = audit(page)
    assert found == [], summary(found)
    code = api.check_level(POEM)["code"]
    level = open_any(f"custom={urllib.parse.quote(code)}&lang={lang}")
    level.wait_for_selector("#panel .score-value")
    open_box(level)
    found = audit(level)
    assert found == [], summary(found)


def test_opening_the_page_runs_only_its_own_start_never_the_teachers_open(browser, app_url) -> None:
    """Gradio runs every event named "load" as a page starts: the box's button is "open", so a page's start sends
    one event (the boot), and the box stays closed with no message, in either language."""
    for lang in ("en", "zh"):
        page = browser.take_page({"width": 1280, "height": 720}, {})  # a fresh start (conftest.py)
        joins: list = []

        def join(request, joins=joins) -> None:
            if "/queue/join" in request.url:
                joins.append(request.post_data)

        try:
            page.on("request", join)
            page.goto(f"{app_url}?level=2-1&lang={lang}")
            page.wait_for_selector("#panel .score-value")
            page.wait_for_timeout(1500)
            assert len(joins) == 1, joins
            assert not page.locator("#teacher details[open], #teacher .refusal").count()
        finally:
            browser.give_back(page, {"request": join})

"""The classroom's exports in headless Chromium: worksheets printed to A4 PDF and read back with pypdf, the maps
figure rasterised to PNG by assets/ui/exports.js (2×, labels drawn, CJK glyphs real), downloads and printing from
the script, and the app's page carrying it. PDFs and PNGs land in test-artifacts/ to be looked at."""

import base64
import datetime
import functools
import io
import re
import subprocess
import unicodedata
from html import unescape
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont
from pypdf import PdfReader

from dragon import api
from dragon.config import HEADS
from dragon.levels.loader import get_level
from dragon.scoring import score, stars
from tests.test_browser import ARTIFACTS, open_page  # noqa: F401  (fixtures)
from ui.strings import head_name, t
from ui.teacher.exports import font_stack, maps_figure_svg
from ui.teacher.report import report_html
from ui.teacher.worksheet import lab_items, slider_items, worksheet_html
from ui.widgets.draw import shown_score

pytestmark = pytest.mark.browser

SCRIPT = Path(__file__).resolve().parent.parent / "assets" / "ui" / "exports.js"
A4_CONTENT = (680, 1009)  # A4 less 15 mm margins, in CSS px: what one printed page holds


@pytest.fixture
def page(browser):
    """A page of one printed page's width (the session's pool: conftest.py take_page), downloads accepted."""
    errors = []

    def error(e) -> None:
        errors.append(str(e))

    p = browser.take_page({"width": A4_CONTENT[0], "height": A4_CONTENT[1]}, {"accept_downloads": True})
    p.on("pageerror", error)
    yield p
    browser.give_back(p, {"pageerror": error})
    assert not errors, errors


def blank_with_script(page) -> None:
    page.set_content("<!doctype html><html><head><meta charset='utf-8'></head><body style='margin:0'></body></html>")
    page.add_script_tag(path=str(SCRIPT))


# --- reading a PDF back: CJK text as it was printed -----------------------------------------------------------------


@functools.cache
def cjk_font() -> ImageFont.FreeTypeFont:
    found = subprocess.run(["fc-match", "-f", "%{file}:%{index}", "Noto Sans CJK SC"], capture_output=True, text=True)
    path, _, index = found.stdout.rpartition(":")
    return ImageFont.truetype(path, 40, index=int(index or 0))


@functools.cache
def glyph(ch: str) -> bytes:
    img = Image.new("L", (48, 48), 255)
    ImageDraw.Draw(img).text((2, 2), ch, font=cjk_font(), fill=0)
    return img.tobytes()


def flat(text: str, like: str = "") -> str:
    """Text compared as printed: NFKC (a PDF's ToUnicode often names a Kangxi radical for a shared glyph, e.g. ⽉ for
    月), a radical of the CJK supplement (⻰) read as the character of `like` drawn with the same glyph, one kind of
    dash, and no whitespace (PDF text comes back broken into lines and spaced oddly)."""
    out = []
    candidates = {c for c in like if "\u4e00" <= c <= "\u9fff"}
    for ch in unicodedata.normalize("NFKC", text):
        if "\u2e80" <= ch <= "\u2eff":
            ch = next((c for c in sorted(candidates) if glyph(c) == glyph(ch)), ch)
        out.append(ch)
    return re.sub(r"[\u2010-\u2015]", "-", re.sub(r"\s+", "", "".join(out)))


def printed(page, html: str) -> tuple[str, int, bytes]:
    """The HTML printed by Chromium to A4 PDF: its text, its page count, the file."""
    page.set_content(html)
    page.emulate_media(media="print")
    pdf = page.pdf(format="A4")
    reader = PdfReader(io.BytesIO(pdf))
    return "\n".join(p.extract_text() for p in reader.pages), len(reader.pages), pdf


CASES = [("2-1", "zh"), ("2-1", "en"), ("4-4", "zh"), ("4-4", "en"), ("1-2", "zh"), ("1-2", "en")]


@pytest.mark.parametrize("level_id, lang", CASES)
def test_worksheet_prints_to_a4_and_reads_back(page, level_id, lang) -> None:
    level = get_level(level_id)
    items = slider_items(level, lang, api.level_reading(level, lang)) if level.sliders else lab_items(level, lang)
    wanted = [level.title[lang], level.text[lang], *(head_name(h, lang) for h in HEADS), *(it.ask for it in items)]
    if level.source:
        wanted.append(level.source[lang])
    like = "".join(wanted)
    text, pages, pdf = printed(page, worksheet_html(level, lang))
    got = flat(text, like)
    missing = [w for w in wanted if flat(w) not in got]
    assert missing == [], f"not in the PDF's text: {missing}"
    assert flat(t("ws_key_title", lang)) not in got  # no key on a student's sheet
    assert pages <= 4, f"{pages} pages"
    if (level_id, lang) == ("2-1", "zh"):
        (ARTIFACTS / "worksheet-2-1-zh.pdf").write_bytes(pdf)
        page.screenshot(path=str(ARTIFACTS / "worksheet-2-1-zh-page1.png"))  # the first page's content, as printed
        page.screenshot(path=str(ARTIFACTS / "worksheet-2-1-zh-full.png"), full_page=True)
    keyed, key_pages, pdf = printed(page, worksheet_html(level, lang, answers=True))
    assert flat(t("ws_key_title", lang)) in flat(keyed, like) and key_pages > pages  # the key, on a page of its own
    if (level_id, lang) == ("4-4", "en"):
        (ARTIFACTS / "worksheet-4-4-en-key.pdf").write_bytes(pdf)
        page.screenshot(path=str(ARTIFACTS / "worksheet-4-4-en-key-full.png"), full_page=True)


def test_report_prints_its_numbers(page) -> None:
    level, lang, gates = get_level("2-1"), "zh", [0.1, 0.2, 0.9, 0.0, 0.1, 0.6, 0.5, 0.0]
    s = score(api.level_reading(level, lang), gates, level.target_for(lang))
    when = datetime.datetime(2026, 5, 4, 10, 30, tzinfo=datetime.timezone.utc)
    text, pages, pdf = printed(page, report_html(level, lang, gates, s, stars(s), when))
    got = flat(text, level.text[lang] + level.title[lang])
    assert pages == 1 and flat(f"{shown_score(s):.1f}") in got and "2026-05-04T10:30:00+00:00" in got
    assert all(f"{g:.2f}" in got for g in gates) and flat(level.text[lang]) in got
    (ARTIFACTS / "report-2-1-zh.pdf").write_bytes(pdf)
    page.screenshot(path=str(ARTIFACTS / "report-2-1-zh.png"))


# --- the maps as PNG, drawn by the browser script -----------------------------------------------------------------

TO_PNG = """async ([svg, scale]) => {
  const blob = await window.__dragonExport.svgToPng(svg, scale);
  return await new Promise((ok) => {
    const r = new FileReader();
    r.onload = () => ok(r.result);
    r.readAsDataURL(blob);
  });
}"""


def to_png(page, svg: str, scale: int = 2) -> Image.Image:
    uri = page.evaluate(TO_PNG, [svg, scale])
    assert uri.startswith("data:image/png;base64,")
    return Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).convert("RGB")


BOX = "(s) => { const r = document.querySelector(s).getBoundingClientRect();"
BOX += " return [r.left, r.top, r.right, r.bottom]; }"


def no_text(svg: str) -> str:
    return re.sub(r"<text\b[^>]*>.*?</text>", "", svg, flags=re.S)


@pytest.mark.parametrize("level_id, lang", [("2-1", "zh"), ("2-7", "en")])
def test_maps_png_is_twice_the_svg_with_its_labels_drawn(page, level_id, lang) -> None:
    reading = api.level_reading(get_level(level_id), lang)
    title = f"{level_id} {get_level(level_id).title[lang]}"
    svg = maps_figure_svg(reading, lang, title)
    blank_with_script(page)
    png = to_png(page, svg)
    w, h = (float(v) for v in re.search(r'<svg [^>]*width="([\d.]+)" height="([\d.]+)"', svg).groups())
    assert png.size == (round(2 * w), round(2 * h))
    bare = to_png(page, no_text(svg))
    diff = np.abs(np.asarray(png, dtype=int) - np.asarray(bare, dtype=int)).sum(axis=2) > 60
    page.evaluate("(svg) => { document.body.innerHTML = svg.replace(/^<\\?xml[^>]*>/, ''); }", svg)
    for sel in ("text.title", "g.panel text.label", "g.panel text.caption", "g.panel text.row", "g.panel text.col",
                "g.legend text"):
        box = page.evaluate(BOX, sel)
        x0, y0, x1, y1 = (round(2 * v) for v in box)
        inked = int(diff[y0:y1, x0:x1].sum())
        assert inked > 20, f"{sel}: the label did not draw ({inked} px differ)"
    png.save(ARTIFACTS / f"maps-{level_id}-{lang}.png")


def lone_label(text: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="120" height="48" viewBox="0 0 120 48" '
        f'font-family="{font_stack("zh").replace(chr(39), "&apos;")}"><rect width="120" height="48" fill="#fff"/>'
        f'<text x="4" y="38" font-size="32">{text}</text></svg>'
    )


def test_cjk_labels_draw_real_glyphs_not_boxes(page) -> None:
    """Missing glyphs all draw the same box: two different Chinese labels must give different pixels."""
    blank_with_script(page)
    drawn = {word: np.asarray(to_png(page, lone_label(word))) for word in ("情感头", "语法头", "思故乡")}
    blank = np.asarray(to_png(page, lone_label("")))
    for word, img in drawn.items():
        assert (np.abs(img.astype(int) - blank).sum(axis=2) > 60).sum() > 200, f"{word} drew nothing"
    a, b, c = drawn.values()
    assert not np.array_equal(a, b) and not np.array_equal(b, c) and not np.array_equal(a, c)
    first = [np.asarray(to_png(page, lone_label(ch))) for ch in "情语思"]  # single characters too
    assert not np.array_equal(first[0], first[1]) and not np.array_equal(first[1], first[2])


def test_script_downloads_text_and_png(page) -> None:
    blank_with_script(page)
    with page.expect_download() as got:
        page.evaluate("() => window.__dragonExport.download('report.txt', '得分 97.5', 'text/plain;charset=utf-8')")
    assert got.value.suggested_filename == "report.txt"
    assert Path(got.value.path()).read_text(encoding="utf-8") == "得分 97.5"
    svg = maps_figure_svg(api.level_reading(get_level("2-1"), "zh"), "zh", "2-1")
    with page.expect_download() as got:
        page.evaluate("(svg) => window.__dragonExport.downloadPng('maps.png', svg)", svg)
    data = Path(got.value.path()).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and Image.open(io.BytesIO(data)).size[0] > 1000


def test_script_prints_a_worksheet_from_a_hidden_frame(page) -> None:
    blank_with_script(page)
    html = worksheet_html(get_level("2-1"), "en")
    title = page.evaluate(
        """async (html) => { const frame = await window.__dragonExport.printHtml(html);
        return [frame.contentDocument.title, frame.contentDocument.querySelectorAll('.tile').length]; }""",
        html,
    )
    assert title == [unescape(re.search(r"<title>(.*?)</title>", html).group(1)), len(HEADS)]


def test_the_apps_page_carries_the_export_script(open_page) -> None:  # noqa: F811
    page = open_page("level=2-1&lang=zh")
    kinds = page.evaluate("Object.entries(window.__dragonExport || {}).map(([k, v]) => k + ':' + typeof v)")
    assert sorted(kinds) == ["download:function", "downloadPng:function", "printHtml:function", "svgToPng:function"]

"""The classroom's exports without a browser: the maps figure (one standalone SVG of the real maps), the worksheet's
structure (eight maps, one answer box per question, the key only when asked for), the report's numbers, escaping."""

import base64
import dataclasses
import datetime
import io
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PIL import Image

from dragon import api
from dragon.config import HEADS
from dragon.levels import loader as level_registry
from dragon.levels.claims import measure, silent_heads
from dragon.levels.loader import get_level, load_levels
from dragon.scoring import score, stars
from ui.rooms import slider_views as views
from ui.rooms.slider_views import map_caption
from ui.strings import head_label, head_name, t
from ui.teacher.exports import FONT_STACK, NUMBER_MIN, UPSCALE, cell_number, maps_figure_svg
from ui.teacher.report import report_html, report_text
from ui.teacher.worksheet import lab_items, slider_items, worksheet_html
from ui.widgets.draw import esc, shown_score
from ui.widgets.heatmap import VIRIDIS

SVG = "{http://www.w3.org/2000/svg}"
NASTY = "<script>alert(1)</script> ${x} `y` {{z}} 床前"
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans SC", "Microsoft YaHei", "PingFang SC", "sans-serif")


def reading_of(level_id: str, lang: str):
    return api.level_reading(get_level(level_id), lang)


# --- the maps figure --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level_id, lang", [("2-1", "zh"), ("2-7", "en"), ("1-1", "zh")])
def test_maps_figure_is_one_standalone_svg_of_the_real_maps(level_id, lang) -> None:
    reading = reading_of(level_id, lang)
    svg = maps_figure_svg(reading, lang, "Title 标题")
    root = ET.fromstring(svg.encode("utf-8"))  # well-formed XML: a file of its own
    assert root.tag == f"{SVG}svg"
    w, h = float(root.get("width")), float(root.get("height"))
    assert root.get("viewBox") == f"0 0 {w:.0f} {h:.0f}" and w > 0 and h > 0
    assert all(name in root.get("font-family") for name in CJK_FONTS)
    first = root.find(f"{SVG}rect")
    assert first.get("fill") == "#ffffff" and first.get("width") == f"{w:.0f}"  # a white background, all of it
    assert root.find(f"{SVG}text").text == "Title 标题"
    panels = root.findall(f"{SVG}g[@class='panel']")
    assert [p.get("data-head") for p in panels] == list(HEADS)
    maps = reading.weights[:, 1:, 1:].numpy()
    for i, panel in enumerate(panels):
        texts = {"num": [], "caption": []}
        for el in panel.iter(f"{SVG}text"):
            texts.setdefault(el.get("class"), [])
            texts[el.get("class")].append(el.text)
        assert texts["label"] == [head_label(i, lang)]
        assert "".join(texts["caption"]).replace(" ", "") == map_caption(reading, i, lang).replace(" ", "")
        assert texts["row"] == reading.tokens and texts["col"] == reading.tokens  # both axes, every token
        m = maps[i]
        assert sorted(texts["num"]) == sorted(cell_number(v) for v in m[m >= NUMBER_MIN])
        image = panel.find(f".//{SVG}image")
        png = Image.open(io.BytesIO(base64.b64decode(image.get("href").split(",", 1)[1]))).convert("RGB")
        pixels = np.asarray(png)[UPSCALE // 2 :: UPSCALE, UPSCALE // 2 :: UPSCALE]  # one pixel per cell
        assert np.array_equal(pixels, VIRIDIS[(m.clip(0, 1) * 255).round().astype(int)])  # the real attention
    sizes = [float(el.get("font-size")) for el in root.iter(f"{SVG}text") if el.get("class") != "num"]
    assert min(sizes) >= 12  # every label 12 px or more at 1×


def test_map_captions_say_what_the_page_says() -> None:
    for level_id, lang in (("2-1", "zh"), ("2-1", "en"), ("2-9", "zh"), ("4-4", "en")):
        reading = reading_of(level_id, lang)
        page = views.maps_html(reading, lang)
        for i in range(len(HEADS)):
            assert f'<span class="caption">{esc(map_caption(reading, i, lang))}</span>' in page


def test_numbers_fit_a_cell() -> None:
    assert [cell_number(v) for v in (0.1, 0.623, 0.996, 1.0)] == [".10", ".62", "1", "1"]


def test_font_stack_lists_the_cjk_fonts() -> None:
    assert all(name in FONT_STACK for name in CJK_FONTS)


# --- the worksheet's structure ------------------------------------------------------------------------------------


def count(html: str, cls: str) -> int:
    return len(re.findall(rf'class="{cls}"', html))


def tiles(html: str) -> list[str]:
    return re.findall(r'<figure class="tile" data-head="(\w+)".*?</figure>', html, re.S)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_slider_worksheet_has_eight_maps_and_a_box_per_question(lang) -> None:
    level = get_level("2-1")
    html = worksheet_html(level, lang)
    assert html.startswith("<!doctype html>") and '<meta charset="utf-8">' in html
    assert "@page { size: A4; margin: 15mm; }" in html and all(name in html for name in CJK_FONTS)
    assert tiles(html) == list(HEADS)
    for i, head in enumerate(HEADS):
        tile = re.search(rf'<figure class="tile" data-head="{head}".*?</figure>', html, re.S).group(0)
        assert f"<figcaption>{esc(head_label(i, lang))}</figcaption>" in tile and head_name(head, lang) in tile
    reading = api.level_reading(level, lang)
    claims = [c for c in measure(reading, level.claims_for(lang)) if not c["silent"]]
    expected = 1 + len(claims) + (1 if silent_heads(reading) else 0)  # the weights, each claim, who is silent
    assert count(html, "q") == count(html, "answer") == expected
    assert count(html, "box") == len(HEADS)  # the weights table: a box per head
    assert esc(level.title[lang]) in html and esc(level.text[lang]) in html and esc(level.source[lang]) in html
    assert 'class="key"' not in html and t("ws_key_title", lang) not in html


def test_slider_questions_come_from_the_claims_and_the_measured_silence() -> None:
    level, lang = get_level("2-1"), "zh"
    items = slider_items(level, lang, api.level_reading(level, lang))
    asks = [it.ask for it in items]
    assert asks[0] == t("ws_q_weights", "zh") and any("“思”" in a for a in asks)
    silent = silent_heads(api.level_reading(level, lang))
    assert asks[-1] == (t("ws_q_silent_one", lang) if len(silent) == 1 else t("ws_q_silent_many", lang, n=len(silent)))
    assert all(head_label(HEADS.index(h), lang) in items[-1].key for h in silent)


def test_answer_key_only_when_asked_and_it_carries_the_target_and_the_measured_claims() -> None:
    level, lang = get_level("2-1"), "en"
    html = worksheet_html(level, lang, answers=True)
    key = html[html.index('<section class="key">') :]
    assert t("ws_key_title", lang) in key and esc(level.why[lang]) in key
    for i, v in enumerate(level.target_for(lang)):
        assert re.search(rf"{re.escape(esc(head_label(i, lang)))}</th><td class=\"num\">{v:g}</td>", key)
    for c in api.explain("2-1", lang)["claims"]:
        for word, share in c["attention"].items():
            assert f"{word} {share:.2f}" in key  # the engine's number, as explain() measures it


@pytest.mark.slow
@pytest.mark.parametrize("level_id", ["1-1", "1-2", "4-4", "5-1"])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_lab_and_chapter_one_worksheets_ask_the_scored_questions(level_id, lang) -> None:
    level = get_level(level_id)
    questions = api.explain(level_id, lang)["questions"]
    html = worksheet_html(level, lang, answers=True)
    assert tiles(html) == list(HEADS)
    assert count(html, "q") == count(html, "answer") == len(questions) == len(lab_items(level, lang))
    assert esc(level.story[lang]) in html
    key = html[html.index('<section class="key">') :]
    assert len(re.findall(r"<li>", key.split("</ol>")[0])) == len(questions)


def test_chapter_one_match_offers_every_head_and_keys_the_computed_one() -> None:
    items = lab_items(get_level("1-2"), "en")
    questions = api.explain("1-2", "en")["questions"]
    for it, q in zip(items, questions, strict=True):
        assert it.choices == tuple(head_label(i, "en") for i in range(len(HEADS)))
        assert it.key.startswith(head_label(HEADS.index(q["accepted"][0]), "en"))


@pytest.mark.slow
def test_every_level_has_a_worksheet_in_both_languages() -> None:
    """Every kind of level's questions are worded (a new question id without wording fails here)."""
    for chapter in load_levels():
        for level in chapter.levels:
            for lang in ("zh", "en"):
                html = worksheet_html(level, lang, answers=True)
                assert count(html, "q") == count(html, "answer") >= 1, (level.id, lang)


def test_a_teachers_level_needs_only_its_level_object(monkeypatch) -> None:
    """A custom level is not in the registry: the worksheet must not look its id up."""
    custom = dataclasses.replace(get_level("2-7"), id="custom-1", kind="custom")

    def unknown(level_id: str):
        raise AssertionError(f"looked up {level_id} by id")

    monkeypatch.setattr(level_registry, "get_level", unknown)
    monkeypatch.setattr(api, "get_level", unknown)
    html = worksheet_html(custom, "en", answers=True)
    assert tiles(html) == list(HEADS) and count(html, "q") == count(html, "answer") >= 2
    assert esc(t("ws_custom", "en")) in html and "custom-1" not in html  # its id is only a code: the title names it
    report = report_text(custom, "en", GATES, 50.0, 1, datetime.datetime.now())
    assert report.splitlines()[1].startswith(custom.title["en"])


# --- the report ---------------------------------------------------------------------------------------------------

GATES = [0.2, 0.9, 0.4, 0.1, 0.3, 0.6, 0.5, 0.7]


def test_report_prints_the_computed_score_and_the_gates_as_given() -> None:
    level, lang = get_level("2-4"), "en"
    s = score(api.level_reading(level, lang), GATES, level.target_for(lang))
    n = stars(s)
    when = datetime.datetime(2026, 3, 14, 9, 26, 53, tzinfo=datetime.timezone(datetime.timedelta(hours=8)))
    html = report_html(level, lang, GATES, s, n, when)
    assert f'<span class="score">{shown_score(s):.1f}</span>' in html  # cut to a tenth, as the gauge prints it
    assert f"{'★' * n}{'☆' * (3 - n)} {t('ws_r_stars', lang, n=n)}" in html
    assert "<time>2026-03-14T09:26:53+08:00</time>" in html
    for i, head in enumerate(HEADS):
        row = re.search(rf'<tr data-head="{head}">.*?</tr>', html).group(0)
        assert esc(head_label(i, lang)) in row
        goal, mine = level.target_for(lang)[i], GATES[i]
        assert f'<td class="num goal">{goal:.2f}</td><td class="num mine">{mine:.2f}</td>' in row
    text = report_text(level, lang, GATES, s, n, when)
    assert f"{t('score', lang)}: {shown_score(s):.1f}" in text and "2026-03-14T09:26:53+08:00" in text
    target = level.target_for(lang)
    assert all(f"{head_label(i, lang)} | {target[i]:.2f} | {g:.2f}" in text for i, g in enumerate(GATES))


def test_report_time_always_names_its_zone() -> None:
    out = report_text(get_level("2-1"), "zh", GATES, 50.0, 0, datetime.datetime(2026, 1, 2, 3, 4, 5))
    assert re.search(r"2026-01-02T03:04:05[+-]\d\d:\d\d\n", out)


@pytest.mark.parametrize("bad", [{"gates": [0.5] * 7}, {"stars": 4}])
def test_report_refuses_a_malformed_result(bad) -> None:
    args = {"gates": GATES, "stars": 1} | bad
    with pytest.raises(ValueError):
        report_html(get_level("2-1"), "zh", args["gates"], 70.0, args["stars"], datetime.datetime.now())


# --- escaping -------------------------------------------------------------------------------------------------------


def hostile_level():
    nasty = {"zh": NASTY, "en": NASTY}
    return dataclasses.replace(get_level("2-1"), title=nasty, text=nasty, source=nasty, why=nasty, story=nasty)


def safe(out: str) -> bool:
    return "<script" not in out and "${" not in out and "{{" not in out and "`" not in out


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_hostile_level_text_is_escaped_in_every_export(lang) -> None:
    level = hostile_level()
    sheet = worksheet_html(level, lang, answers=True)
    report = report_html(level, lang, GATES, 12.5, 0, datetime.datetime.now())
    figure = maps_figure_svg(api.level_reading(level, lang), lang, NASTY)
    for out in (sheet, report, figure):
        assert safe(out) and "床前" in out
    ET.fromstring(figure.encode("utf-8"))  # still well-formed
    assert NASTY in report_text(level, lang, GATES, 12.5, 0, datetime.datetime.now())  # plain text: verbatim

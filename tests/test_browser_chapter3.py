"""Chapter 3 in headless Chromium, one test per level, each played as a player would: predict, check, read the
answer beside the button (in view), then read the measurement where a reading passes the level; at 1366 × 900, in
projector mode at 1920 × 1080 and on a 390 × 844 phone. Viewport screenshots land in test-artifacts/."""

import json
import re

import pytest

from dragon import api, game
from dragon.lessons import fusion as fusion_lesson
from dragon.levels.loader import get_level
from tests.test_browser import SIZES, in_view, opening, shot, text_sizes_below  # noqa: F401  (browser: a fixture)
from ui.rooms import formula as formula_room
from ui.rooms import formula_drawing as formula
from ui.rooms import fusion as fusion_room
from ui.strings import t

pytestmark = pytest.mark.browser


@pytest.fixture
def open_lab(browser, app_url):
    """open_lab(query, size) → a page of the app on a chapter-3 lab, ready; page errors fail the test."""
    yield from opening(browser, app_url, wait_lab)


def wait_lab(page) -> None:
    page.wait_for_selector("#top .level-title")
    page.wait_for_selector("#lab .mhd-lab:not([hidden])")


def wait_text(page, selector: str, text: str, timeout: int = 15_000) -> None:
    page.wait_for_function(
        "([s, x]) => { const el = document.querySelector(s); return el && el.textContent.includes(x); }",
        arg=[selector, text],
        timeout=timeout,
    )


def visible_tensor(page) -> str:
    return page.locator("#lab .tensor:not([hidden])").inner_text()


def test_inside_the_formula_three_rounds_zh(open_lab) -> None:
    page = open_lab("level=3-1&lang=zh")
    level = get_level("3-1")
    assert "(d_head) = (16)" in visible_tensor(page)  # q is open first: the scores would give the winner away
    page.locator("#lab button[data-sym=q]").click()
    assert "(d_head) = (16)" in visible_tensor(page)
    page.locator("#lab button[data-sym=K]").click()
    tokens = api.level_reading(level, "zh").tokens
    assert f"(T+1, d_head) = ({len(tokens) + 1}, 16)" in visible_tensor(page)
    page.locator("#lab button[data-sym=softmax]").click()
    assert t("f_locked", "zh") in visible_tensor(page)  # predict first: the softmax is not on the page yet
    page.locator("#mhd-lab-check").click()  # nothing chosen: a clear message, nothing changed
    wait_text(page, "#lab .result-box", "什么都没有改变")
    assert in_view(page, "#lab .result-box .notice") and page.locator("#lab .result-head").count() == 0
    for i in range(3):
        m = formula_room.round_math(level, "zh", i)
        wait_text(page, "#lab h3.round", f"第 {i + 1}/3 轮")
        page.locator("#lab [data-answer=winner]").select_option(str(m["winner"]))
        page.locator("#lab [data-answer=share]").select_option(str(game.bucket(max(m["weights"]), game.SHARE_BUCKETS)))
        page.locator("#mhd-lab-check").click()
        wait_text(page, "#lab .result-head", "本轮 2/2 分")
        assert in_view(page, "#lab .result-head"), f"round {i + 1}: the answer is out of view"
        winner = page.locator("#lab [data-for=softmax] .kbar.win")  # the real softmax row, its winner framed
        assert winner.locator(".kval").inner_text() == f"{max(m['weights']):.3f}"
        assert formula.key_labels(m, "zh")[m["winner"]] in winner.locator(".kname").inner_text()
        assert "sink" not in page.locator("#lab").inner_text()  # the sink key is ⟨汇点⟩ in Chinese
        if i == 0:
            shot(page, "ch3-formula-zh-round1")
        if i < 2:
            page.locator("#mhd-lab-round").click()
    page.wait_for_selector('#lab .lab-end[data-stars="3"]')
    assert in_view(page, "#lab .lab-end")
    assert "★★★" in page.locator("#top .level-pick option[value='3-1']").text_content()
    shot(page, "ch3-formula-zh-won")


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_next_round_of_3_1_starts_empty_with_its_question_in_view(open_lab, size: str) -> None:
    touch = {"has_touch": True, "is_mobile": True} if size == "phone" else {}
    page = open_lab("level=3-1&lang=en", size, **touch)
    level = get_level("3-1")
    m = formula_room.round_math(level, "en", 0)
    winner, share = page.locator("#lab [data-answer=winner]"), page.locator("#lab [data-answer=share]")
    empty = (winner.input_value(), share.input_value())
    winner.select_option(str(m["winner"]))
    share.select_option(str(game.bucket(max(m["weights"]), game.SHARE_BUCKETS)))
    page.locator("#mhd-lab-check").click()
    wait_text(page, "#lab .result-head", "2 of 2 points")
    page.locator("#mhd-lab-round").click()
    wait_text(page, "#lab h3.round", "Round 2 of 3")
    page.wait_for_function("document.activeElement && document.activeElement.dataset.answer === 'winner'")
    assert (winner.input_value(), share.input_value()) == empty  # not the last round's answers
    assert in_view(page, "#lab h3.round"), "the new round's question is out of view"
    shot(page, f"ch3-formula-round2-{size}")


def test_the_race_guess_then_run_en_projector(open_lab) -> None:
    page = open_lab("level=3-2&lang=en&projector=1", "projector")
    guess = page.locator("#lab [data-answer=guess]")
    guess.fill("0.01")  # below the range: refused
    page.locator("#mhd-lab-race").click()
    wait_text(page, "#lab .result-box", "nothing was changed")
    assert in_view(page, "#lab .result-box .notice") and page.locator("#lab svg.chart").count() == 0
    guess.fill("2")
    page.locator("#mhd-lab-race").click()
    page.wait_for_selector("#lab .result-head[data-measured]", timeout=60_000)
    assert in_view(page, "#lab .result-head")
    measured = float(page.locator("#lab .result-head").get_attribute("data-measured"))
    fact = page.locator("#lab .fact-check:not(.grad-fact)").inner_text()
    assert f"the loop took {measured:.2f} times as long" in fact
    grads = page.locator("#lab .grad-fact").inner_text()  # the second fact check: "gradient sharing", measured
    assert "not a technique the literature names" in grads and "exactly 0 (0 nonzero numbers)" in grads
    server = api.race_reference(get_level("3-2").guess_at)  # the server's races (once per server) and this one
    ref = {"lo": min(server["lo"], measured), "hi": max(server["hi"], measured)}
    page.locator("#lab [data-answer=work]").select_option("same")  # read off the workload table
    page.locator("#mhd-lab-check").click()
    page.wait_for_selector("#lab .lab-end")
    stars = game.read_stars(game.guess_stars(2.0, ref["lo"], ref["hi"])[1], True)
    assert page.locator("#lab .lab-end").get_attribute("data-stars") == str(stars)
    assert in_view(page, "#lab .result-box > :first-child")
    chart = page.locator("#lab svg.chart")
    labels = " ".join(chart.locator("text").all_text_contents())
    assert "sequence length T" in labels and "ms (median" in labels and "CPU" in labels
    assert page.locator("#lab table.flops td", has_text="equal").count() == len(get_level("3-2").lengths)
    small = text_sizes_below(page, ["#lab"], 20)
    assert small == [], f"{len(small)} texts under 20 px: {sorted(set(small))[:40]}"
    shot(page, "ch3-race-projector-en")
    chart.scroll_into_view_if_needed()
    shot(page, "ch3-race-projector-en-chart")


def test_fusion_order_predict_switch_and_read_zh_phone(open_lab) -> None:
    page = open_lab("level=3-3&lang=zh", "phone")
    page.locator("#lab [data-answer=o0]").select_option("concat")
    page.locator("#mhd-lab-predict").click()
    wait_text(page, "#lab .result-box", "什么都没有改变")
    assert in_view(page, "#lab .result-box .notice") and page.locator("#lab [data-switch]").count() == 0
    for i, step in enumerate(fusion_room.STEP_KEYS):
        page.locator(f"#lab [data-answer=o{i}]").select_option(step)
    page.locator("#lab [data-answer=keep]").select_option("0")
    f = api.fusion(get_level("3-3").text["zh"], "zh")
    reach = fusion_lesson.answer_key(f, game.KEEP_BUCKETS, game.REACH_BUCKETS)[2]
    page.locator("#lab [data-answer=reach]").select_option(str(reach))
    page.locator("#mhd-lab-predict").click()
    wait_text(page, "#lab .result-head", "3/3 分")
    assert in_view(page, "#lab .result-head") and page.locator("#lab .lab-end").count() == 0  # read first
    assert page.locator("#lab [data-answer=o0]").is_disabled()  # checked predictions are locked
    shot(page, "ch3-fusion-phone-zh")
    keep = {(s["w_o"], s["residual"]): s["keep"] for s in f["switches"]}
    page.locator("#lab [data-switch=res]").scroll_into_view_if_needed()
    for w_o, residual in ((True, False), (False, False), (False, True)):
        page.locator("#lab [data-switch=wo]").set_checked(w_o)
        page.locator("#lab [data-switch=res]").set_checked(residual)
        shown = page.locator("#lab .setting:not([hidden]) .keep-mean").inner_text()
        assert shown.endswith(f"= {keep[w_o, residual]:.2f}"), (w_o, residual, shown)
    assert page.locator("#lab .setting:not([hidden]) .reach img").count() == 1
    page.locator("#lab .setting:not([hidden]) .keep-mean").scroll_into_view_if_needed()
    shot(page, "ch3-fusion-phone-zh-switched")
    page.locator("#lab [data-answer=read]").select_option(str(fusion_lesson.read_answer(f, game.REACH_BUCKETS)))
    page.locator("#mhd-lab-check").click()  # the reading off the Wᴼ-off picture passes the level
    page.wait_for_selector('#lab .lab-end[data-stars="3"]')
    page.locator("#lab [data-switch=wo]").set_checked(False)
    assert "正好来自一个头" in page.locator("#lab .setting:not([hidden])").inner_text()
    assert "★★★" in page.locator("#top .level-pick option[value='3-3']").text_content()


def test_how_many_heads_rank_train_and_quiz_en(open_lab) -> None:
    page = open_lab("level=3-4&lang=en")
    assert "all equal" in page.locator("#lab .formula-line").inner_text()  # parameters counted before training
    for i in range(5):
        page.locator(f"#lab [data-answer=r{i}]").select_option("8")
    page.locator("#mhd-lab-train").click()
    wait_text(page, "#lab .result-box", "nothing was changed")
    ranking = [16, 8, 4, 2, 1]
    for i, h in enumerate(ranking):
        page.locator(f"#lab [data-answer=r{i}]").select_option(str(h))
    page.locator('#lab [data-answer="seed"]').fill("34")  # a seed no other test trains (runs are shared), so it waits
    page.locator("#mhd-lab-train").click()
    page.wait_for_selector("#lab .wait-box", timeout=20_000)  # the lane's wait: what trains, how far, the live curve
    wait_text(page, "#lab .wait-box", "now h =")
    assert "queue:" not in page.locator("body").inner_text()  # never Gradio's own English queue line
    page.wait_for_selector("#lab .result-head", timeout=120_000)
    assert in_view(page, "#lab .result-head") and page.locator("#lab .lab-end").count() == 0  # read first
    accuracy = {int(h): a for h, a in json.loads(page.locator("#lab .acc-box").get_attribute("data-accuracy")).items()}
    assert "training step" in " ".join(page.locator("#lab svg.chart text").all_text_contents())
    shot(page, "ch3-heads-en")
    page.locator("#lab [data-answer=read]").select_option(str(min(accuracy, key=accuracy.get)))  # read off the bars
    page.locator("#mhd-lab-check").click()
    page.wait_for_selector("#lab .lab-end")
    stars = game.read_stars(game.rank_stars(*game.rank_pairs(ranking, accuracy)), True)
    assert page.locator("#lab .lab-end").get_attribute("data-stars") == str(stars)
    assert in_view(page, "#lab .result-box > :first-child") and page.locator("#lab .lines.findings li").count() == 3
    box = page.locator('#lab [data-answer="q:gpt3-total-heads"]')
    box.scroll_into_view_if_needed()
    box.fill("1152")
    page.locator("#mhd-lab-quiz").click()
    page.wait_for_selector("#lab .q-result.wrong")
    gpt3 = next(m for m in api.facts()["models"] if m["id"] == "gpt3-175b")
    assert re.sub(r"\s", "", page.locator("#lab .q-result.wrong").inner_text()).endswith(str(gpt3["total_heads"]))
    fact = page.locator("#lab .facts-quiz .fact-check").inner_text()
    assert f"{gpt3['layers']} layers × {gpt3['heads']} heads" in fact and "1\u2009152" in fact
    assert in_view(page, "#lab .q-result.wrong")
    shot(page, "ch3-heads-en-quiz")


# --- QA round 2: a refusal twice frees the button; a phone never scrolls sideways ------------------------------------

MOBILE = {"is_mobile": True, "has_touch": True, "device_scale_factor": 2}


def page_fits(page) -> bool:
    """No sideways scroll: the page is no wider than the phone's own width."""
    width = page.viewport_size["width"]
    return page.evaluate("(w) => document.documentElement.scrollWidth <= Math.min(w, window.innerWidth)", width)


def refused_twice(page, act: str, text: str) -> None:
    """Press the button twice with the same bad input: the same refusal both times, and the button is free again."""
    for _ in range(2):
        page.locator(f"#mhd-lab-{act}").click(timeout=30_000)
        wait_text(page, "#lab .result-box", text)
        free = f"!document.querySelector('#mhd-lab-{act}').classList.contains('running')"
        page.wait_for_function(free, timeout=30_000)


def test_race_refused_twice_then_runs_and_fits_a_phone(open_lab) -> None:
    page = open_lab("level=3-2&lang=en", "phone", **MOBILE)
    assert page_fits(page)
    page.locator("#lab [data-answer=guess]").fill("-1")
    refused_twice(page, "race", "nothing was changed")
    page.locator("#lab [data-answer=guess]").fill("3")
    page.locator("#mhd-lab-race").click(timeout=30_000)
    page.wait_for_selector("#lab .result-head[data-measured]", timeout=60_000)
    assert page_fits(page), page.evaluate("document.documentElement.scrollWidth")
    chart = page.locator("#lab svg.chart").bounding_box()
    assert chart["x"] >= 0 and chart["x"] + chart["width"] <= 390  # the chart shrinks to the screen
    assert f"{game.GUESS_FACTORS[0]:g}" in page.locator("#lab .rule").inner_text()  # the star rule, under the question
    assert page.eval_on_selector("#lab .table-wrap", "w => w.scrollWidth <= w.clientWidth")  # every column shows
    page.locator("#lab table.flops").scroll_into_view_if_needed()
    shot(page, "ch3-race-phone-en-flops")


def test_heads_refused_twice_then_trains_and_fits_a_phone_zh(open_lab) -> None:
    page = open_lab("level=3-4&lang=zh", "phone", **MOBILE)
    assert page_fits(page), page.evaluate("document.documentElement.scrollWidth")
    refused_twice(page, "train", "什么都没有改变")  # an empty ranking, twice
    for i, h in enumerate([16, 8, 4, 2, 1]):
        page.locator(f"#lab [data-answer=r{i}]").select_option(str(h))
    page.locator("#mhd-lab-train").click(timeout=30_000)
    page.wait_for_selector("#lab .result-head", timeout=120_000)
    assert page_fits(page), page.evaluate("document.documentElement.scrollWidth")
    assert page.locator("#lab .vaswani").count() == 0  # the paper's table would answer the quiz's question
    page.locator("#lab svg.chart").scroll_into_view_if_needed()
    shot(page, "ch3-heads-phone-zh-chart")
    page.locator('#lab [data-answer="q:vaswani-one-head-bleu"]').fill("20")
    page.locator("#mhd-lab-quiz").click()
    page.wait_for_selector("#lab .vaswani")
    one_head = next(r for r in api.facts()["vaswani"]["rows"] if r["h"] == 1)
    assert f"h = 1: {one_head['bleu']:.1f} BLEU" in page.locator("#lab .vaswani").inner_text()
    assert page_fits(page)


def test_formula_buttons_and_fusion_switches_are_big_enough_to_tap(open_lab) -> None:
    page = open_lab("level=3-1&lang=en", "phone", **MOBILE)
    heights = page.eval_on_selector_all("#lab button[data-sym]", "bs => bs.map(b => b.getBoundingClientRect().height)")
    assert heights and min(heights) >= 40, heights
    assert page_fits(page)
    page = open_lab("level=3-3&lang=en", "phone", **MOBILE)
    for i, step in enumerate(fusion_room.STEP_KEYS):
        page.locator(f"#lab [data-answer=o{i}]").select_option(step)
    page.locator("#lab [data-answer=keep]").select_option("0")
    page.locator("#lab [data-answer=reach]").select_option("1")
    page.locator("#mhd-lab-predict").click()
    page.wait_for_selector("#lab [data-switch]")
    heights = page.eval_on_selector_all("#lab .switches label", "ls => ls.map(l => l.getBoundingClientRect().height)")
    assert heights and min(heights) >= 40, heights
    assert page_fits(page)

"""A teacher's own texts in the sandbox and the teachers' box, as a teacher met them: the real model's word picker
offers only words its own tokenizer gives (it's is it / ' / s there), a text longer than a reader takes is said in
the page's language, an unreadable file too, a text in which all eight heads attend alike is said to be one, a head
spread thin over a paragraph is not "looking at itself", an even target is told apart instead of losing the poem's
own head, and the box is there before any text is read."""

import pytest
import torch

from dragon import api, game
from dragon.config import HEADS
from dragon.lessons import crystal_ball
from dragon.levels import claims
from dragon.text.analyser import MAX_TOKENS
from ui.rooms import slider_views as views
from ui.session import MAX_SANDBOX_CHARS
from ui.strings import t
from ui.teacher import box, sandbox, view
from ui.widgets.draw import esc, shown_score

SAVED = game.save(game.new_progress())
CONTRACTION = "I think it's a great idea, and the students agree."


def sandbox_state(text: str, lang: str) -> dict:
    return {"level": "sandbox", "lang": lang, "text": text, "tlang": "auto"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_word_picker_offers_only_the_real_models_words(lang: str) -> None:
    out = sandbox.sandbox_page(lang, game.new_progress(), sandbox_state(CONTRACTION, lang))
    picker = out["sandbox"]["body"].split('<div class="sb-model">', 1)[1].split('<div class="sb-make">', 1)[0]
    model = [w.text for w in crystal_ball.words_of(CONTRACTION)]
    assert "it" in model and "it's" not in model
    assert '<option value="it">' in picker and "it&#x27;s" not in picker
    assert sandbox.pick_word(sandbox_state(CONTRACTION, lang), SAVED, {"word": "it's"}) == {}  # never offered
    picked = sandbox.pick_word(sandbox_state(CONTRACTION, lang), SAVED, {"word": "it"})["sandbox"]["body"]
    assert "refusal" not in picked and "cb-grid" in picked


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_text_longer_than_the_real_model_reads_is_said_in_the_pages_language(lang: str) -> None:
    text = " ".join(["The students read."] * 40)  # 160 words with the full stops
    body = sandbox.sandbox_page(lang, game.new_progress(), sandbox_state(text, lang))["sandbox"]["body"]
    n = len(crystal_ball.words_of(text))
    assert esc(t("sb_model_long", lang, most=crystal_ball.MAX_WORDS, pieces=crystal_ball.MAX_PIECES, n=n,
                 p=crystal_ball.pieces_of(crystal_ball.words_of(text)))) in body


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_level_from_a_text_the_dragon_cuts_is_refused_in_the_pages_language(lang: str) -> None:
    text = "。".join(["我们今天在教室里学习多头注意力"] * 25)
    gates = [0.9 if h in ("grammar", "time") else 0.0 for h in HEADS]
    body = sandbox.make_level(sandbox_state(text, lang), SAVED, gates, {})["sandbox"]["body"]
    assert esc(t("why_long", lang, n=MAX_TOKENS)) in body and "text: the dragon reads" not in body


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_text_longer_than_the_dragon_reads_is_said_once_by_the_read_button(lang: str) -> None:
    """Under the read button, in view where the button was pressed (a note under the maps was out of view on a phone),
    in the words of the token line's end (far down a phone's screen after 128 tokens); and only when the dragon cut.
    What the reading met otherwise (emoji alone, an empty text) is said there too, not in the page's top notice, which
    a phone may have scrolled past."""
    text = " ".join(["The students read the book."] * 30)  # 180 tokens with the full stops
    assert api.text_reading(text, "auto").analysis.truncated
    said = esc(t("truncated", lang, n=MAX_TOKENS))
    for given, cut in ((text, True), (CONTRACTION, False)):
        out = sandbox.read_text(sandbox_state("", lang), SAVED, [0.5] * 8, {"text": given, "tlang": "auto"})
        under_button = out["top"]["story"].split('id="mhd-sb-read"')[1].split('class="tokens')[0]
        assert (said in under_button) == cut
        assert (str(out["top"]) + out["sandbox"]["body"]).count(said) == 2 * cut  # there, and at the token line's end
    for given, key in (("😀😀😀 🎉", "sb_heads_alike"), ("", "sb_empty")):
        out = sandbox.read_text(sandbox_state("", lang), SAVED, [0.5] * 8, {"text": given, "tlang": "auto"})
        assert esc(t(key, lang)) in out["top"]["story"].split('id="mhd-sb-read"')[1]  # after the button
        assert esc(t(key, lang)) not in out["top"]["notice"]


def test_a_paste_longer_than_the_box_says_it_was_cut() -> None:
    long = {"text": "今天天气很好。" * 300, "tlang": "auto"}
    out = sandbox.read_text(sandbox_state("", "zh"), SAVED, [0.5] * 8, long)
    assert esc(t("sb_cut_chars", "zh", chars=MAX_SANDBOX_CHARS)) in out["top"]["story"].split('id="mhd-sb-read"')[1]
    assert len(out["session"]["text"]) == MAX_SANDBOX_CHARS


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_unreadable_file_is_said_in_the_pages_language(lang: str) -> None:
    source = "title: {zh: 江雪, en: River Snow\nlang: zh\ntext: 千山鸟飞绝\ntarget: {emotion: 0.9}\n"
    message = box.open_source({"level": "2-1", "lang": lang}, SAVED, {"source": source})["teacher"]["message"]
    assert esc(t("tb_unreadable", lang, line=2, col=5)) in message and "level: cannot" not in message  # as YAML says


def test_a_head_spread_thin_over_a_paragraph_is_not_said_to_look_at_itself() -> None:
    from benchmarks.app import PARAGRAPH

    reading = api.text_reading(PARAGRAPH["text"], "zh")
    spread = [h for h in HEADS if claims.links_words(reading, h) and not claims.top_words(reading, h)
              and h not in api.silent_heads(reading)]
    for h in spread:
        caption = views.caption_text([], False, "en", links=True)
        assert caption == t("looks_spread", "en", share=f"{claims.FOUND_SHARE:g}")
        assert caption in views.map_caption(reading, HEADS.index(h), "en")
    assert views.caption_text([], False, "en") == t("looks_self", "en")  # no link between words: itself


def test_an_even_target_on_a_poem_is_told_apart_and_keeps_every_head() -> None:
    poem = "千山鸟飞绝，万径人踪灭。孤舟蓑笠翁，独钓寒江雪。"
    data = {"title": {"zh": "江雪", "en": "River Snow"}, "lang": "zh", "text": poem,
            "target": {"emotion": 0.5, "tone": 0.5, "space": 0.5, "context": 0.5}}
    s = api.check_level(data)["suggestion"]
    assert set(s["level"]["target"]) == set(data["target"])  # nobody turned off: the poem keeps its Emotion head
    assert len(set(s["level"]["target"].values())) == 4 and api.check_level(s["level"])["ok"]


def test_the_repairs_figures_are_the_ones_the_opened_level_shows() -> None:
    from dragon.levels import teacher as teacher_levels

    data = {"title": {"zh": "满分", "en": "Full marks"}, "lang": "en",
            "text": "Mum: Why are you so happy today?\nChild: Because I got full marks in the test!",
            "target": {"emotion": 0.9, "tone": 0.8, "space": 0.3}}
    checked = teacher_levels.check_data(data)
    html = view.repair_html([checked], "en", {})
    q = api.check_level(data)["suggestion"]["quality"]
    assert f"{shown_score(q['all_equal']):.1f}" in html and f"{shown_score(q['random_median']):.1f}" in html


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_teachers_box_is_there_in_an_empty_sandbox(lang: str) -> None:
    out = sandbox.sandbox_page(lang, game.new_progress(), sandbox_state("", lang))
    assert out["teacher"]["body"] and 'data-act="open"' in out["teacher"]["body"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_text_that_sets_no_head_apart_is_said_to_and_a_sentence_is_not(lang: str) -> None:
    """Emoji or numbers alone: the eight maps would be identical, with no word of why; the page says so, and what to
    try. Its sentence is held against the real attention: said only where every head's weights are the first's."""
    for text in ("😀😀😀 🎉", "123 456", "The cat sat on the mat.", "今天天气很好。"):
        out = sandbox.read_text(sandbox_state("", lang), SAVED, [0.5] * 8, {"text": text, "tlang": "auto"})
        weights = api.text_reading(text, "auto").weights
        spread = float((weights - weights[:1]).abs().amax(dim=(1, 2)).max())  # the most any head differs from head 1
        alike = text[0] in "😀1"
        assert (spread == 0.0) if alike else (spread > 0.1), (text, spread)  # decided by a clear margin either way
        assert (esc(t("sb_heads_alike", lang)) in str(out["top"])) == alike, text
        assert torch.equal(weights[0], weights[-1]) == alike


def test_a_map_says_its_words_look_at_themselves_only_where_one_does() -> None:
    """Emoji alone: every row of every head gives its words crumbs (the rest rests on the sink), yet the captions said
    "each word looks only at itself". Now that is said only where some word gives itself a link's share of its row;
    elsewhere the map says "nothing to say", as its title defines a dark row. Held on every level text too."""
    from dragon.levels.claims import SELF_SHARE
    from dragon.levels.loader import load_levels

    readings = [api.level_reading(lv, lang) for c in load_levels() for lv in c.levels if lv.sliders
                for lang in ("zh", "en")]
    readings += [api.text_reading(x, "auto") for x in ("😀😀😀 🎉", "123 456", "hello", "The cat sat on the mat.")]
    said_self = 0
    for reading in readings:
        for i in range(len(HEADS)):
            own = float(reading.weights[i, 1:, 1:].diagonal().max())  # the most any word gives itself
            caption = views.map_caption(reading, i, "en")
            if caption == t("looks_self", "en"):
                said_self += 1
                assert own >= SELF_SHARE, (reading.tokens[:5], HEADS[i], own)
    assert said_self >= 4  # the caption is still said where it is true
    emoji = api.text_reading("😀😀😀 🎉", "auto")
    assert float(emoji.weights[:, 1:, 1:].sum(dim=-1).max()) < 0.05  # every row: crumbs to the words
    assert [views.map_caption(emoji, i, lang) for i in range(len(HEADS)) for lang in ("zh", "en")] == [
        t("silent", lang) for _ in HEADS for lang in ("zh", "en")]

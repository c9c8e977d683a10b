"""Saved progress in real Chromium: a tampered, truncated, oversized or foreign value in the browser's storage resets
with the notice in the language on screen, and nothing else kept there is lost; a garbage progress code is refused
and the player's own progress stays; a code over other progress asks first, and only 'replace' replaces it.

Gradio keeps gr.BrowserState in localStorage encrypted (CryptoJS AES with a passphrase: OpenSSL's "Salted__" format
and an MD5 key derivation); the helpers below write such values with the page's own WebCrypto, so a test can store
exactly what it means to (they are checked against what Gradio itself stores)."""

import base64
import hashlib
import json
import os
import re
from pathlib import Path

import gradio as gr
import pytest

from dragon import game
from dragon.levels.loader import get_level, load_levels
from tests.a11y import audit, summary
from tests.test_browser import in_view, open_codes, open_page, shot, wait_ready  # noqa: F401  (fixtures)
from ui.strings import t

pytestmark = pytest.mark.browser

HEAD_JS = Path(__file__).resolve().parent.parent / "assets" / "ui" / "head.js"
MAX_SAVED = int(re.search(r"const MAX_SAVED = (\d+);", HEAD_JS.read_text(encoding="utf-8")).group(1))
ERRORS = "[data-testid='status-tracker'] .error:visible, .toast-wrap .toast-body.error, [data-testid='toast-body']"
OTHER = {"another-app": "keep me"}  # a key this page never uses: it must outlive any reset

MINE = game.record(game.record(game.new_progress(), "1-1", 100, 3), "2-1", 80, 1)  # ★ 4 from 2 levels
THEIRS = game.record(game.new_progress(), "2-2", 96, 3)  # ★ 3 from 1 level


@pytest.fixture(scope="module")
def store(app_server):
    """(the storage key, the secret) of the app's gr.BrowserState, as the running app has them."""
    demo = app_server[0]
    state = next(b for b in demo.blocks.values() if isinstance(b, gr.BrowserState))
    return state.storage_key, state.secret


def _key_iv(secret: str, salt: bytes) -> tuple[bytes, bytes]:
    """CryptoJS's passphrase key derivation (OpenSSL EVP_BytesToKey, MD5, one round) of SHA-256(secret) as hex."""
    passphrase, out, block = hashlib.sha256(secret.encode()).hexdigest().encode(), b"", b""
    while len(out) < 48:
        block = hashlib.md5(block + passphrase + salt).digest()
        out += block
    return out[:32], out[32:]


AES = """async ([mode, key, iv, data]) => {
  const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const k = await crypto.subtle.importKey('raw', bytes(key), 'AES-CBC', false, [mode]);
  const out = new Uint8Array(await crypto.subtle[mode]({name: 'AES-CBC', iv: bytes(iv)}, k,
    mode === 'encrypt' ? new TextEncoder().encode(data) : bytes(data)));
  let text = '';
  for (let i = 0; i < out.length; i += 0x8000) text += String.fromCharCode(...out.subarray(i, i + 0x8000));
  return btoa(text);
}"""  # bytes cross as base64 both ways (a megabyte as a list of numbers took seconds to pass through Playwright)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def encrypt(page, secret: str, value) -> str:
    """What gr.BrowserState stores for `value`: base64(iv) ':' base64("Salted__" salt ciphertext) of its JSON."""
    salt = os.urandom(8)
    key, iv = _key_iv(secret, salt)
    ciphertext = base64.b64decode(page.evaluate(AES, ["encrypt", _b64(key), _b64(iv), json.dumps(value)]))
    return _b64(os.urandom(16)) + ":" + _b64(b"Salted__" + salt + ciphertext)


def decrypt(page, secret: str, stored: str):
    raw = base64.b64decode(stored.split(":")[1])
    assert raw[:8] == b"Salted__"
    key, iv = _key_iv(secret, raw[8:16])
    return json.loads(base64.b64decode(page.evaluate(AES, ["decrypt", _b64(key), _b64(iv), _b64(raw[16:])])).decode())


def stored_progress(page, store) -> game.Loaded:
    """The progress this browser holds now, read back from its storage as the server would."""
    key, secret = store
    return game.load(decrypt(page, secret, page.evaluate("(k) => localStorage.getItem(k)", key)))


def put(page, key: str, value: str) -> None:
    page.evaluate("([k, v]) => localStorage.setItem(k, v)", [key, value])


def no_errors(page) -> None:
    assert not page.locator(ERRORS).count(), page.locator(ERRORS).all_text_contents()


def earn_a_best(page, store) -> str:
    """Move a slider on 2-2 (a new best, saved by the page): the real value this browser then stores."""
    before = page.evaluate("(k) => localStorage.getItem(k)", store[0])
    page.locator("#mhd-s4").fill("0.9")
    page.wait_for_function("([k, b]) => localStorage.getItem(k) !== b", arg=[store[0], before])
    return page.evaluate("(k) => localStorage.getItem(k)", store[0])


# --- the helpers write what Gradio writes -----------------------------------------------------------------------


def test_the_helpers_read_what_gradio_stores_and_gradio_reads_what_they_write(open_page, store) -> None:  # noqa: F811
    page = open_page("level=2-2&lang=zh")
    stored = earn_a_best(page, store)
    loaded = game.load(decrypt(page, store[1], stored))
    assert loaded.notice is None and loaded.progress["best"].get("2-2", 0) > 0  # Gradio's value, read by the helper
    put(page, store[0], encrypt(page, store[1], game.save(MINE)))
    page.reload()
    wait_ready(page)
    assert "★ 4/" in page.locator("#top .xp").text_content()  # the helper's value, read by Gradio: the real progress
    assert t("damaged", "zh") not in page.locator("#top").inner_text()


# --- a damaged value in the browser's storage --------------------------------------------------------------------


def edited(page, store, real: str) -> str:
    """The real stored value with one character of its ciphertext changed (no decryption needed to do it)."""
    iv, body = real.split(":")
    i = len(body) // 2
    return f"{iv}:{body[:i]}{'A' if body[i] != 'A' else 'B'}{body[i + 1 :]}"


def stars_raised(page, store, real: str) -> str:
    """The real progress decrypted and its stars raised, the signature left as it was."""
    saved = json.loads(decrypt(page, store[1], real))
    return encrypt(page, store[1], json.dumps({**saved, "stars": {"2-2": 3}}))


def impossible(page, store, real: str) -> str:
    """Valid JSON, correctly signed, with seven stars on a level."""
    return encrypt(page, store[1], json.dumps(game.sign({**game.new_progress(), "stars": {"2-2": 7}})))


def truncated(page, store, real: str) -> str:
    return real[: len(real) // 2]


def oversized(page, store, real: str) -> str:
    """1 MB that decrypts: 600,000 quotes, 1.2 MB once JSON-escaped for the page's start, over the body limit (before
    head.js removed it, the page never opened and showed error badges)."""
    return encrypt(page, store[1], '"' * 600_000)


DAMAGE = {
    "edited": edited,
    "stars-raised": stars_raised,
    "impossible-stars": impossible,
    "truncated": truncated,
    "oversized": oversized,
    "oversized-plain": lambda page, store, real: "x" * 1_000_000,
    "foreign-json": lambda page, store, real: '{"theme":"dark"}',
    "foreign-text": lambda page, store, real: "hello",
}


NEEDS_REAL = {"edited", "stars-raised", "truncated"}  # made from the value this browser really stored
IN_ENGLISH_TOO = ("edited", "oversized", "foreign-text")  # the notice's language: one of each family is enough


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_damaged_saved_value_resets_with_a_notice_and_nothing_else_is_lost(open_page, store, lang) -> None:  # noqa: F811
    """Each kind of damage in turn, in one browser (every kind in Chinese, one of each family in English): the language
    and projector mode it remembers, and another app's key, outlive every reset."""
    page = open_page(f"level=2-2&lang={lang}&projector=1", "projector")  # remembered from now on
    plain = page.url.split("?")[0] + "?level=2-2"  # no language or projector in the link: from the browser's memory
    for key, value in OTHER.items():
        put(page, key, value)
    for kind, damage in DAMAGE.items():
        if lang != "zh" and kind not in IN_ENGLISH_TOO:
            continue
        real = earn_a_best(page, store) if kind in NEEDS_REAL else ""
        put(page, store[0], damage(page, store, real))
        page.goto(plain)
        wait_ready(page)
        assert get_level("2-2").title[lang] in page.locator("#top .level-title").text_content(), kind  # the level
        assert t("damaged", lang) in page.locator("#top .notice").inner_text(), kind  # in the language on screen
        assert "★ 0/" in page.locator("#top .xp").text_content(), kind
        no_errors(page)
        keys = ["dragon-lang", "dragon-projector", *OTHER]
        kept = page.evaluate("(keys) => keys.map((k) => localStorage.getItem(k))", keys)
        assert kept == [lang, "1", *OTHER.values()], kind
        assert page.evaluate("document.body.classList.contains('projector')"), kind
        assert stored_progress(page, store) == game.Loaded(game.new_progress(), None), kind  # reset, stored afresh
        if kind in ("oversized", "foreign-text"):
            shot(page, f"saved-{kind}-{lang}")
    page.reload()  # said once: the fresh progress reads back without a notice
    wait_ready(page)
    assert t("damaged", lang) not in page.locator("#top").inner_text()


def full_progress() -> dict:
    """The largest real progress: every level and the most teachers' levels kept, in every table."""
    ids = [lv.id for c in load_levels() for lv in c.levels] + [f"t-{i:012x}" for i in range(game.MAX_TEACHER_LEVELS)]
    full = game.new_progress()
    for table, value in (("stars", 3), ("best", 99.99), ("hints", 99), ("shown", 1)):
        full[table].update(dict.fromkeys(ids, value))
    return full


def test_the_largest_real_progress_loads_and_the_bound_is_where_head_js_says(open_page, store) -> None:  # noqa: F811
    page = open_page("level=2-2&lang=en")
    full = full_progress()
    largest = encrypt(page, store[1], game.save(full))
    assert len(largest) * 5 < MAX_SAVED  # the bound is far above any real value (about 13,400 characters)
    put(page, store[0], largest)
    page.reload()
    wait_ready(page)
    assert f"★ {3 * sum(len(c.levels) for c in load_levels())}/" in page.locator("#top .xp").text_content()
    assert stored_progress(page, store).progress == full
    # the same progress padded with spaces (JSON allows them) to just under the bound still loads; just over, it resets
    padded = {}
    for name, target in (("under", MAX_SAVED - 64), ("over", MAX_SAVED + 64)):
        pad = (target - len(largest)) * 3 // 4
        padded[name] = encrypt(page, store[1], game.save(full) + " " * pad)
    assert len(padded["under"]) <= MAX_SAVED < len(padded["over"])
    for name, value in padded.items():
        put(page, store[0], value)
        page.reload()
        wait_ready(page)
        damaged = t("damaged", "en") in page.locator("#top").inner_text()
        assert damaged == (name == "over"), name
        no_errors(page)


# --- a garbage progress code -------------------------------------------------------------------------------------


def import_text(page, text: str, lang: str) -> str:
    """Paste `text` into the code box and press Import: the message that answers (the box's message first becomes
    the export's, so two refusals in a row are both seen)."""
    exported = t("exported", lang)
    page.locator("#codes [data-act=export]").click()
    page.wait_for_function("(m) => document.querySelector('#codes .code-msg').textContent === m", arg=exported)
    page.locator("#codes textarea").fill(text)
    page.locator("#codes [data-act=import]").click()
    page.wait_for_function("(m) => document.querySelector('#codes .code-msg').textContent !== m", arg=exported)
    return page.locator("#codes .code-msg").text_content()


def garbage_codes() -> dict[str, str]:
    real = game.export_code(THEIRS)
    return {
        "random text": "the dragon ate my homework 🐉 ${alert(1)}",
        "prefix and garbage": "DRAGON1-!!not*base64%%",
        "prefix and base64 of garbage": game.CODE_PREFIX + base64.urlsafe_b64encode(b"\xff\xfe garbage").decode(),
        "prefix and null": game.CODE_PREFIX + base64.urlsafe_b64encode(b"null").decode().rstrip("="),
        "truncated real code": real[: len(real) // 2],
        "100k characters": game.CODE_PREFIX + "A" * 100_000,
        "1.5 MB pasted": "DRAGON1-" + "B" * 1_500_000,  # over the body limit if it were sent whole
    }


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_garbage_code_is_refused_and_the_players_progress_stays(open_page, store, lang) -> None:  # noqa: F811
    page = open_page(f"level=2-1&lang={lang}")
    open_codes(page)
    # a fresh browser: the code goes in at once, no question
    assert import_text(page, game.export_code(MINE), lang) == t("imported", lang)
    page.wait_for_function("document.querySelector('#top .xp').textContent.includes('★ 4/')")
    for name, code in garbage_codes().items():
        assert import_text(page, code, lang) == t("bad_code", lang), name
        assert page.locator("#codes .code-ask").is_hidden(), name
        no_errors(page)
    assert in_view(page, "#codes .code-msg")
    shot(page, f"saved-bad-code-{lang}")
    assert "★ 4/" in page.locator("#top .xp").text_content()
    assert stored_progress(page, store).progress == MINE
    page.reload()
    wait_ready(page)
    assert "★ 4/" in page.locator("#top .xp").text_content() and stored_progress(page, store).progress == MINE


# --- a code over other progress: asked first ---------------------------------------------------------------------


def ask(page, code: str) -> None:
    page.locator("#codes textarea").fill(code)
    page.locator("#codes [data-act=import]").focus()
    page.keyboard.press("Enter")  # a keyboard player
    page.wait_for_selector("#codes .code-ask:not([hidden])")


@pytest.mark.parametrize("size, lang", [("desktop", "zh"), ("projector", "en"), ("phone", "zh"), ("phone", "en")])
def test_a_code_over_other_progress_asks_and_only_replace_replaces(open_page, store, size, lang) -> None:  # noqa: F811
    page = open_page(f"level=2-1&lang={lang}&projector={int(size == 'projector')}", size)
    open_codes(page)
    import_text(page, game.export_code(MINE), lang)
    page.wait_for_function("document.querySelector('#top .xp').textContent.includes('★ 4/')")

    ask(page, game.export_code(THEIRS))
    assert page.locator("#codes .code-msg").text_content() == t("ci_question", lang)
    here = t("ci_here", lang, stars=4, levels=2, xp=game.xp(MINE))
    there = t("ci_code", lang, stars=3, levels=1, xp=game.xp(THEIRS))
    assert page.locator("#codes .code-ask li").all_text_contents() == [here, there]
    keep = page.locator("#codes .code-ask [data-act=keep]")
    page.wait_for_function("document.activeElement && document.activeElement.dataset.act === 'keep'")
    for part in ("#codes .code-msg", "#codes .code-ask [data-act=replace]", "#codes .code-ask [data-act=keep]"):
        assert in_view(page, part), f"{part} is out of view ({size})"
    assert keep.text_content() == t("ci_keep", lang)
    shot(page, f"saved-ask-{size}-{lang}")
    violations = audit(page)  # axe-core: the question and its answers, as a screen reader meets them
    assert violations == [], summary(violations)
    assert stored_progress(page, store).progress == MINE  # asking changes nothing

    page.keyboard.press("Enter")  # 'keep mine', where the focus is
    message = "(m) => document.querySelector('#codes .code-msg').textContent === m"
    page.wait_for_function(message, arg=t("ci_kept", lang))
    assert page.locator("#codes .code-ask").is_hidden() and "★ 4/" in page.locator("#top .xp").text_content()
    assert stored_progress(page, store).progress == MINE
    page.wait_for_function("document.activeElement && document.activeElement.dataset.act === 'import'")

    ask(page, game.export_code(THEIRS))
    page.keyboard.press("Shift+Tab")  # from 'keep mine' back to 'replace'
    assert page.evaluate("document.activeElement.dataset.act") == "replace"
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('#top .xp').textContent.includes('★ 3/')")
    assert page.locator("#codes .code-msg").text_content() == t("imported", lang)
    assert page.locator("#codes .code-ask").is_hidden() and stored_progress(page, store).progress == THEIRS
    no_errors(page)
    shot(page, f"saved-replaced-{size}-{lang}")

    assert import_text(page, game.export_code(THEIRS), lang) == t("imported", lang)  # the same progress: at once
    assert page.locator("#codes .code-ask").is_hidden()
    page.reload()
    wait_ready(page)
    assert "★ 3/" in page.locator("#top .xp").text_content() and stored_progress(page, store).progress == THEIRS

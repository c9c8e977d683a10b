"""No injection, in real Chromium: markup, template syntax and javascript: URLs typed or linked into every place the
page shows text — the sandbox's text box and word picker, a level made there, a teacher's level or pack (title, text,
story, explanation, the refusal that quotes it, its share link opened in a fresh browser, its worksheet and report),
5-2's badge name (and the SVG file it downloads), 4-1's own sentence, the progress code box and every URL parameter
the page reads (head.js: level, lang, projector, custom, exam, sandbox, text, tlang; Gradio's __theme) — render as
text. A watcher set up before the page's own scripts (add_init_script) records any flag a payload's script sets, any
payload node (script, iframe, on… handler, javascript: URL) that ever enters the DOM, and every dialog; after the page
rendered, every element is pointed at and focused (its handlers would run), and nothing may have fired."""

import base64
import functools
import itertools
import json
import urllib.parse
import xml.etree.ElementTree as ET

import pytest

import dragon
from dragon import api
from dragon.config import HEADS
from dragon.lessons import crystal_ball
from dragon.lessons.badge import clean_name
from dragon.levels import teacher as teacher_levels
from tests.test_browser import SIZES, open_codes, shot, wait_ready  # noqa: F401  (browser: a fixture)
from tests.test_browser_teacher import open_box, ready_any  # ready_any: whatever the link opened is drawn
from tests.test_browser_teacher import set_gates as teacher_set_gates
from ui.strings import t

pytestmark = pytest.mark.browser

# Each payload's script sets the flag (window.__pwned, which the watcher turns into a record) and some open a dialog.
PAYLOADS = {
    "img": '<img src=x onerror="__pwned=1;alert(1)">',
    "script": "<script>__pwned=2;alert(2)</script>",
    "template": "q${7*7}q${__pwned=3}",  # a JS template literal (gr.HTML's template is one)
    "handlebars": 'w{{7*7}}w{{constructor.constructor("__pwned=4")()}}',  # and Handlebars before it
    "js_url": "javascript:__pwned=5;alert(5)",
    "svg": '<svg onload="__pwned=6">',
    "iframe": '"><iframe srcdoc="<script>parent.__pwned=7</script>">',
    "attr": "\" onmouseover=\"__pwned=8\" x=' onmouseover='__pwned=8'",
    "textarea": "</textarea><img src=x onerror=__pwned=9>",
}
LONG = " ".join(PAYLOADS.values())  # all at once, where a box takes long text (366 characters)
# whole and live in at most 20 characters: a link's level (cut at 20) and the badge's name (cut at 24)
SHORT = ["<svg/onload=alert()>", '"onmouseover=alert()', "${7*7}{{7*7}}", "javascript:alert()", "<script>alert()",
         '"><iframe src=x>']
EVALUATED = ("q49q", "w49w", "4949")  # what ${7*7} and {{7*7}} would have become
SENTENCE = "The teacher told the students that they should study hard."

# Set up before any script of the page, in every frame: the flag's setter records, a MutationObserver records every
# payload node that enters the DOM (even one removed again), __look scans a tree on demand; each record also goes to
# the test at once (__reportHit), so a reload or a new document forgets none.
WATCH = r"""(() => {
  const list = [];
  const hits = { push: (h) => { list.push(h); if (window.__reportHit) window.__reportHit(h); } };  // and to the test
  Object.defineProperty(window, "__hits", { value: list, configurable: false });
  Object.defineProperty(window, "__pwned", { configurable: false, get() { return undefined; },
                                             set(v) { hits.push("flag " + String(v)); } });
  const BAD = /pwned|alert\(/i;
  const URLS = ["href", "src", "action", "formaction", "xlink:href", "data", "srcdoc"];
  function look(root, why) {
    if (!root || !root.querySelectorAll) return;
    for (const node of [root, ...root.querySelectorAll("*")]) {
      const tag = String(node.tagName).toUpperCase();
      if (["IFRAME", "FRAME", "OBJECT", "EMBED"].includes(tag)) hits.push(`${why} node ${tag}`);
      const code = tag === "SCRIPT" ? node.textContent : "";
      if (BAD.test(code)) hits.push(`${why} node SCRIPT ${code.slice(0, 40)}`);
      for (const a of node.attributes || []) {
        if (a.name.startsWith("on")) hits.push(`${why} handler ${tag} ${a.name}=${a.value.slice(0, 40)}`);
        if (URLS.includes(a.name) && /^\s*javascript:/i.test(a.value)) hits.push(`${why} url ${tag} ${a.name}`);
      }
    }
  }
  Object.defineProperty(window, "__look", { value: look, configurable: false });
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "attributes") look(r.target, "changed");
      else r.addedNodes.forEach((n) => look(n, "added"));
    }
  }).observe(document, { childList: true, subtree: true, attributes: true });
})();"""

# Point at and focus every element the app drew (its inline handlers, had any got in, run on these events).
NUDGE = """() => {
  const roots = document.querySelectorAll('#top, #panel, #maps, #quiz, #lab, #sandbox, #teacher, #codes');
  const all = roots.length ? [...roots].flatMap((r) => [r, ...r.querySelectorAll('*')])
                           : [...document.documentElement.querySelectorAll('*')];
  for (const el of all) {
    if (['SCRIPT', 'LINK', 'STYLE'].includes(String(el.tagName).toUpperCase())) continue;
    for (const type of ['mouseover', 'mouseenter', 'focus', 'focusin', 'error', 'load', 'toggle']) {
      el.dispatchEvent(new Event(type));
    }
  }
  return all.length;
}"""

# What the page holds now: the watcher's records (and a scan of the whole DOM), its text, its boxes' values.
SCAN = """() => {
  window.__look(document.documentElement, 'now');
  const root = document.body || document.documentElement;
  return { hits: [...window.__hits], text: root.innerText !== undefined ? root.innerText : root.textContent,
           values: [...document.querySelectorAll('input, textarea')].map((e) => e.value),
           options: [...document.querySelectorAll('option')].map((o) => o.textContent) };
}"""


class Watched:
    """A page of the app in a context of its own, with the watcher, its dialogs and its errors."""

    def __init__(self, context, size: str = "desktop"):
        self.context, self.size = context, size
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.hits: list[str] = []
        context.expose_function("__reportHit", lambda h: self.hits.append(h))
        self.page = self.watch(context.new_page())

    def watch(self, page):
        page.on("dialog", lambda d: (self.dialogs.append(f"{d.type}: {d.message}"), d.dismiss()))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        return page


@pytest.fixture
def hostile(browser, app_url):
    """hostile(query or URL, size="desktop", ready=ready_any, go=True) → a Watched page of the app in a fresh context
    (go=False: opened but not waited for, so several pages load at once)."""
    made: list[Watched] = []

    def opener(where: str, size: str = "desktop", ready=ready_any, go: bool = True) -> Watched:
        width, height = SIZES[size]
        context = browser.new_context(viewport={"width": width, "height": height})
        context.add_init_script(WATCH)
        w = Watched(context, size)
        made.append(w)
        w.page.goto(where if where.startswith("http") else f"{app_url}?{where}", wait_until="commit")
        if go:
            ready(w.page)
        return w

    yield opener
    for w in made:
        w.context.close()
    assert not [e for w in made for e in w.errors], [e for w in made for e in w.errors]


def assert_inert(w: Watched, shown: list[str] = (), hover: list[str] = (), page=None) -> dict:
    """Point at the rendered nodes (`hover`: the first few of each selector, with the real mouse), then at every
    element; no flag, no payload node, no dialog, no page error, ${7*7} and {{7*7}} not evaluated, and every string of
    `shown` on the page as text (its text, a box's value or an option). Returns the scan."""
    page = page or w.page
    for selector in hover:
        for el in page.locator(selector).all()[:2]:
            if el.is_visible():  # what a hover sets off is held here, not how soon: a map of the long text's 90
                el.hover(timeout=30_000)  # words took over 5 s to take the pointer with two copies of the suite at once
    assert page.evaluate(NUDGE) > 0
    page.wait_for_timeout(200)  # an <img src=x> would have failed to load by now (a 404 from this server)
    found = page.evaluate(SCAN)
    assert found["hits"] == [] and w.hits == [], (found["hits"][:10], w.hits[:10])
    assert w.dialogs == [] and w.errors == [], (w.dialogs, w.errors)
    everything = "\n".join([found["text"], *found["values"], *found["options"]])
    assert not [e for e in EVALUATED if e in everything], [e for e in EVALUATED if e in everything]
    missing = [s for s in shown if s not in everything]
    assert missing == [], missing
    return found


@functools.cache
def fair_target(text: str, lang: str = "en") -> dict[str, float]:
    """A target that makes `text` a fair puzzle, as the level checks measure it (one or two heads up, others at 0)."""
    for a, b in itertools.permutations(HEADS, 2):
        for target in ({a: 1.0}, {a: 1.0, b: 0.3}, {a: 0.9, b: 0.6}):
            if api.check_level({"title": "x", "lang": lang, "text": text, "target": target})["ok"]:
                return target
    raise AssertionError(f"no fair target found for {text!r}")


def set_gates(page, target: dict[str, float]) -> None:
    """Type the target into the eight number boxes (each committed with Enter) and wait until the sliders hold it."""
    teacher_set_gates(page, [target.get(h, 0.0) for h in HEADS])


# --- the watcher itself ---------------------------------------------------------------------------------------------


def test_the_watcher_sees_a_planted_injection(hostile) -> None:
    """The harness can fail: markup planted with innerHTML is seen (flag, handler, node) and its dialog caught."""
    w = hostile("level=1-1&lang=en")
    w.page.evaluate("""() => { const box = document.createElement('div'); document.querySelector('#top').append(box);
        box.innerHTML = '<img src=x onerror="__pwned=1;alert(1)"><span onmouseover="__pwned=8">x</span>'
                      + '<iframe srcdoc="<script>parent.__pwned=7</script>"></iframe>'; }""")
    w.page.evaluate(NUDGE)
    w.page.wait_for_timeout(500)
    hits = w.page.evaluate(SCAN)["hits"]
    w.page.wait_for_timeout(100)  # the reports to the test arrive
    assert {"flag 1", "flag 7", "flag 8"} <= set(hits) and {"flag 1", "flag 7", "flag 8"} <= set(w.hits), hits
    assert any("handler IMG onerror" in h for h in hits) and any("node IFRAME" in h for h in hits), hits
    assert w.dialogs and set(w.dialogs) == {"alert: 1"}  # on its load error, and again when pointed at
    w.page.evaluate("document.querySelector('#top').lastChild.remove()")


# --- every URL parameter ----------------------------------------------------------------------------------------------


def test_every_url_parameter_renders_as_text(hostile) -> None:
    """head.js reads level, lang, projector, custom, exam, sandbox, text and tlang; Gradio reads __theme. Every one
    given the payloads (a level as whole as its 20 characters allow); the pages load side by side."""
    q = urllib.parse.quote
    cases: list[tuple[str, list[str]]] = []
    for p in SHORT[:3]:  # an unknown level is named in its notice (a tag, an attribute break-out, templates)
        cases.append((f"level={q(p)}&lang=en", [t("unknown_level", "en", id=p)]))
    cases.append((f"sandbox=1&lang=en&tlang={q(PAYLOADS['img'])}&text={q(LONG)}", [LONG]))
    try:
        teacher_levels.levels_from_code(LONG)
        raise AssertionError("the payloads opened as a share code")
    except teacher_levels.TeacherLevelError as err:
        bad_link = t("tb_bad_link", "zh", why=err.errors[0].removeprefix("share link: "))
    params = ("lang", "projector", "exam", "sandbox", "tlang", "custom", "__theme", "view", "x")  # x: never read
    rest = "&".join(f"{k}={q(LONG)}" for k in params)
    cut = PAYLOADS["img"][:20]  # the link's level, cut at 20 characters by the page
    cases.append((f"level={q(PAYLOADS['img'])}&{rest}#{q(LONG)}", [bad_link, t("unknown_level", "zh", id=cut)]))
    pages = [hostile(query, go=False) for query, _ in cases]
    for w, (_, shown) in zip(pages, cases, strict=True):
        ready_any(w.page)
        assert_inert(w, shown, hover=["#top .notice", "#top .tok"])
    sandbox, everything = pages[-2].page, pages[-1].page
    assert sandbox.locator("#mhd-sb-text").input_value() == LONG
    assert sandbox.locator("#top [data-field=tlang]").input_value() == "auto"
    assert sandbox.locator("#top .tok").all_inner_texts() == dragon.analyze(LONG, "auto")["tokens"]
    # the game opened as usual: Chinese, no projector, no exam, no sandbox, the first level; the notices say why
    state = "[window.__dragon.lang, window.__dragon.projector, window.__dragon.exam, window.__dragon.sandbox]"
    assert everything.evaluate(state) == ["zh", False, False, False]
    assert everything.locator("#top .notice").inner_text() == f"{bad_link} {t('unknown_level', 'zh', id=cut)}"
    assert "1-1" in everything.locator("#top .level-title").inner_text() and "#" + q(LONG) in everything.url
    pages[0].page.locator("#top .notice").scroll_into_view_if_needed()
    shot(pages[0].page, "injection-url-level-notice")
    shot(sandbox, "injection-url-sandbox-text")
    shot(everything, "injection-url-every-parameter")


# --- the sandbox ------------------------------------------------------------------------------------------------------


def built_link(page, app_url: str, kind: str = "plain") -> dict[str, str]:
    """A link the teachers' box built (from the page's address and the server's parameters): on this app's own
    address, never a javascript: URL, whatever the text it carries; its parameters."""
    link = page.locator(f'#teacher input[data-link="{kind}"]').input_value()
    assert link.startswith(app_url), link
    return {k: v[0] for k, v in urllib.parse.parse_qs(urllib.parse.urlparse(link).query).items()}


def test_the_sandbox_text_box_and_word_picker_render_payloads_as_text(hostile, app_url) -> None:
    w = hostile("sandbox=1&lang=en")
    page = w.page
    page.fill("#mhd-sb-text", LONG)
    page.click("#mhd-sb-read")
    page.wait_for_selector("#sandbox .top-words")
    tokens = dragon.analyze(LONG, "auto")["tokens"]
    assert page.locator("#top .tok").all_inner_texts() == tokens  # each piece of markup a word, as the dragon read it
    for svg in page.locator("#maps svg.attn-map").all()[:2]:
        assert svg.locator("text").all_text_contents() == tokens * 2
    model = crystal_ball.words_of(LONG)  # more words than the real model reads: the picker says so, as text
    assert len(model) > crystal_ball.MAX_WORDS and page.locator("#sandbox [data-field=word]").count() == 0
    said = t("sb_model_long", "en", most=crystal_ball.MAX_WORDS, pieces=crystal_ball.MAX_PIECES, n=len(model),
             p=crystal_ball.pieces_of(model))
    assert said in page.locator("#sandbox .sb-model").inner_text()
    assert_inert(w, [LONG], hover=["#top .tok", "#maps svg.attn-map", "#sandbox .top-words li"])
    page.locator("#top .tokens").scroll_into_view_if_needed()
    shot(page, "injection-sandbox-tokens")
    short = f"{SENTENCE} {PAYLOADS['img']} {PAYLOADS['attr']}"  # within what the real model reads
    page.fill("#mhd-sb-text", short)
    page.click("#mhd-sb-read")
    page.wait_for_function("(n) => document.querySelectorAll('#top .tok').length === n",
                           arg=len(dragon.analyze(short, "auto")["tokens"]))
    offered = [w.text for w in crystal_ball.words_of(short)]  # the real model's own words, each offered once
    assert page.locator("#sandbox [data-field=word] option").all_inner_texts() == [
        w for w in dict.fromkeys(offered) if w[:1].isalnum()]
    page.select_option("#sandbox [data-field=word]", "onerror")  # the word picker: the real model's 72 heads
    page.click("#mhd-sb-word")
    page.wait_for_selector("#sandbox .cb-grid", timeout=120_000)
    assert page.locator("#sandbox .cb-key span").all_inner_texts() == api.crystal_ball(short, "onerror")["tokens"]
    assert_inert(w, [short], hover=["#sandbox .cb-map", "#sandbox .cb-key span"])
    assert built_link(page, app_url)["text"] == short  # the sandbox's link carries the text as a parameter
    page.reload()  # the link in the address bar carries the text: it comes back whole
    ready_any(page)
    assert page.locator("#mhd-sb-text").input_value() == short
    assert_inert(w, [short])


def test_a_level_made_in_the_sandbox_and_opened_by_its_share_link(hostile, app_url) -> None:
    text = f"{SENTENCE} {PAYLOADS['svg']}"
    target = fair_target(text)
    titles = {"zh": PAYLOADS["img"], "en": PAYLOADS["attr"]}
    w = hostile(f"sandbox=1&lang=en&text={urllib.parse.quote(text)}")
    page = w.page
    page.wait_for_selector("#sandbox .top-words")
    set_gates(page, target)
    page.fill("#sandbox [data-field=title_zh]", titles["zh"])
    page.fill("#sandbox [data-field=title_en]", titles["en"])
    page.fill("#sandbox [data-field=explanation]", LONG)
    assert_inert(w, [text, *titles.values(), LONG])
    page.click("#mhd-sb-make")
    page.wait_for_selector("#panel .score-value")
    assert titles["en"] in page.locator("#top .level-title").inner_text()
    assert_inert(w, [titles["en"]], hover=["#top .level-title", "#top .tok"])
    share = page.locator('#teacher input[data-link="plain"]').input_value()
    assert built_link(page, app_url)["custom"].startswith("T1.")
    fresh = hostile(share)  # a student: a fresh browser with nothing but the link
    set_gates(fresh.page, target)
    fresh.page.wait_for_selector("#panel .feedback .why")
    assert LONG in fresh.page.locator("#panel .feedback .why").inner_text()
    assert_inert(fresh, [titles["en"], LONG], hover=["#top .level-title", "#panel .feedback .why"])
    fresh.page.locator("#panel .feedback .why").scroll_into_view_if_needed()
    shot(fresh.page, "injection-made-level-why")
    fresh.page.click("#top button[data-lang=zh]")
    fresh.page.wait_for_function("(x) => document.querySelector('#top .level-title').textContent.includes(x)",
                                 arg=titles["zh"])
    assert_inert(fresh, [titles["zh"]], hover=["#top .level-title"])


# --- a teacher's level or pack ----------------------------------------------------------------------------------------


def hostile_pack() -> dict:
    """Two payloads a level: its Chinese and English titles, and the end of its text; every payload in each story
    and explanation."""
    levels, payloads = [], list(PAYLOADS.values())
    for zh, en in itertools.zip_longest(payloads[::2], payloads[1::2], fillvalue=PAYLOADS["img"]):
        text = f"{SENTENCE} {zh} {en}"
        levels.append({"title": {"zh": zh, "en": en}, "lang": "en", "text": text, "target": fair_target(text),
                       "story": {"zh": LONG, "en": LONG}, "explanation": {"zh": LONG, "en": LONG}})
    return {"levels": levels}


def test_a_teachers_pack_its_refusal_share_link_and_files_render_payloads_as_text(hostile, app_url) -> None:
    pack = hostile_pack()
    w = hostile("level=2-1&lang=en")
    page = w.page
    open_box(page)
    bad = {"title": PAYLOADS["img"], "lang": PAYLOADS["svg"], "text": LONG + LONG,
           "target": {PAYLOADS["attr"]: 1, "grammar": PAYLOADS["template"]}, "genre": PAYLOADS["script"],
           PAYLOADS["iframe"]: PAYLOADS["js_url"]}
    page.fill("#mhd-tb-source", json.dumps(bad))
    page.click("#teacher [data-act=open]")
    page.wait_for_selector("#teacher .refusal")
    said = page.locator("#teacher .refusal li").all_inner_texts()
    assert said == api.check_level(bad)["errors"] and len(said) >= 4, said  # each quoting the payload, as text
    assert_inert(w, said, hover=["#teacher .refusal li"])
    page.locator("#teacher .refusal").scroll_into_view_if_needed()
    shot(page, "injection-teacher-refusal")
    page.fill("#mhd-tb-source", json.dumps(pack))
    page.click("#teacher [data-act=open]")
    page.wait_for_function("(x) => document.querySelector('#top .level-title').textContent.includes(x)",
                           arg=pack["levels"][0]["title"]["en"])
    titles = {lang: [lv["title"][lang] for lv in pack["levels"]] for lang in ("zh", "en")}
    assert_inert(w, [*titles["en"], LONG], hover=["#top .level-title", "#top .story p", "#top .tok"])
    shot(page, "injection-teacher-pack-opened")
    open_box(page)
    share = page.locator('#teacher input[data-link="plain"]').input_value()
    fresh = hostile(share)  # a student: a fresh browser with nothing but the link
    levels = teacher_levels.levels_from_code(built_link(page, app_url)["custom"])
    for level in levels:  # every level of the pack, picked as the class would
        fresh.page.select_option("#top .level-pick", level.id)
        fresh.page.wait_for_function("(x) => document.querySelector('#top .level-title').textContent.includes(x)",
                                     arg=level.title["en"])
        assert fresh.page.locator("#top .tok").all_inner_texts() == api.level_reading(level, "en").tokens
        assert_inert(fresh, [level.title["en"], LONG], hover=["#top .level-title", "#top .story p"])
    set_gates(fresh.page, dict(zip(HEADS, levels[-1].target_for("en"), strict=True)))
    fresh.page.wait_for_selector("#panel .feedback .why")
    assert_inert(fresh, [LONG], hover=["#panel .feedback .why"])
    fresh.page.click("#top button[data-lang=zh]")
    fresh.page.wait_for_function("(x) => document.querySelector('#top .level-title').textContent.includes(x)",
                                 arg=levels[-1].title["zh"])
    assert_inert(fresh, [*titles["zh"], LONG], hover=["#top .level-title"])
    # the teacher's files: the worksheet and its key (printed), the report (downloaded), each opened in the browser
    open_box(fresh.page)
    fresh.page.evaluate("() => { window.__printed = []; window.__dragonExport.printHtml = (h) => __printed.push(h); }")
    sheets = []
    for what in ("worksheet", "key"):
        fresh.page.click(f"#teacher [data-file={what}]")
        fresh.page.wait_for_function("(n) => window.__printed.length === n", arg=len(sheets) + 1)
        sheets.append(fresh.page.evaluate("window.__printed.at(-1)"))
    with fresh.page.expect_download() as got:
        fresh.page.click("#teacher [data-file=report]")
    sheets.append(got.value.path().read_text(encoding="utf-8"))
    viewer = fresh.watch(fresh.context.new_page())
    for sheet in sheets:
        viewer.set_content(sheet)
        assert_inert(fresh, [levels[-1].title["zh"], levels[-1].text["en"]], page=viewer)
    shot(viewer, "injection-teacher-report")


# --- 5-2's badge, 4-1's own sentence, the progress code ---------------------------------------------------------------


def test_the_badge_name_and_its_svg_file_render_payloads_as_text(hostile) -> None:
    w = hostile("level=5-2&lang=en")
    page = w.page
    box = page.locator("#lab [data-answer=name]")
    names = [*SHORT, "<svg/onload=__pwned=1>", '" onmouseover="__pwned=1', "<script>alert()</script>", PAYLOADS["img"]]
    for i, name in enumerate(names):
        box = page.locator("#lab [data-answer=name]")
        box.fill(name)
        sent = clean_name(box.input_value())  # what the box holds (its maxlength), as the server keeps it
        page.locator("#mhd-lab-badge").click()
        page.wait_for_function("(x) => document.querySelector('#lab .badge-name')?.textContent === x", arg=sent)
        assert page.locator("#lab [data-answer=name]").input_value() == sent
        assert_inert(w, [sent], hover=["#lab .badge-svg svg", "#lab .badge-name"])
        if i == 0:
            shot(page, "injection-badge")
        href = page.locator("#mhd-badge-svg").get_attribute("href")
        svg = base64.b64decode(href.removeprefix("data:image/svg+xml;base64,")).decode("utf-8")
        root = ET.fromstring(svg)  # the downloaded file: well-formed, no script, no handler, the name as text
        tags = {el.tag.rsplit("}", 1)[-1] for el in root.iter()}
        assert not tags & {"script", "foreignObject", "iframe", "a"}, tags
        assert not [a for el in root.iter() for a in el.attrib if a.lower().startswith("on")]
        names_drawn = [el.text for el in root.iter() if el.get("class") == "badge-name"]
        assert names_drawn == [sent], names_drawn
        if i in (0, 1, len(names) - 1):  # the file opened in the browser, as whoever downloads it would
            url = f"http://badge.test/{i}.svg"
            w.context.route(url, lambda route, _, svg=svg: route.fulfill(body=svg, content_type="image/svg+xml"))
            viewer = w.watch(w.context.new_page())
            viewer.goto(url)
            assert_inert(w, [sent], page=viewer)
            viewer.close()


def test_the_own_sentence_of_the_crystal_ball_renders_payloads_as_text(hostile) -> None:
    w = hostile("level=4-1&lang=en")
    page = w.page
    page.wait_for_selector("#lab .cb-map", timeout=120_000)
    page.locator('#lab .cb-map[data-pick="0,0"]').click()
    page.wait_for_selector("#lab [data-answer=means]")
    text = f"The boy kicked the ball and it rolled away. {PAYLOADS['img']} {PAYLOADS['attr']}"
    for means in ("ball", PAYLOADS["attr"][:40]):  # a sentence judged, then a referent that is no word of it
        page.locator("#lab [data-answer=text]").fill(text)
        page.locator("#lab [data-answer=word]").select_option("it")
        page.locator("#lab [data-answer=means]").fill(means)
        result = "#lab .try-box .result-head, #lab .try-box .notice"
        page.evaluate("(s) => document.querySelectorAll(s).forEach((e) => e.classList.add('stale'))", result)
        page.locator("#mhd-lab-try").click()  # wait for this try's answer, not the last one's (redrawn under the hover)
        page.wait_for_selector("#lab .try-box .result-head:not(.stale), #lab .try-box .notice:not(.stale)")
        assert_inert(w, [text, means], hover=["#lab .try-box .bar-name", "#lab .try-box .result-head"])
    page.locator("#lab .try-box").scroll_into_view_if_needed()
    shot(page, "injection-own-sentence")


def test_a_hostile_progress_code_is_refused_as_text(hostile) -> None:
    w = hostile("level=2-1&lang=en")
    page = w.page
    open_codes(page)
    page.locator("#codes textarea").fill("DRAGON1-" + LONG)
    page.locator("#codes [data-act=import]").click()
    page.wait_for_function("(x) => document.querySelector('#codes .code-msg').textContent.includes(x)",
                           arg=t("bad_code", "en"))
    assert_inert(w, ["DRAGON1-" + LONG, t("bad_code", "en")])

"""Shared test helpers."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The suite keeps the bytecode of the project and of its rewritten tests (in the gitignored __pycache__ folders) even
# where the shell says not to write it (PYTHONDONTWRITEBYTECODE, set on these machines): every worker, and every app a
# test starts, would otherwise compile the ~33,000 lines again (collection: 15 s uncached, 9 s cached, on 2 cores).
sys.dont_write_bytecode = False

import atexit  # noqa: E402
import functools  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

import httpx._config as _httpx_config  # noqa: E402
import httpx._transports.default as _httpx_transports  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

# Torch's threads, set once for the whole run: the lessons' computations here are tiny (a 13-word sentence, a 16-token
# ring), and on 2 cores a second intra-op thread mostly waits for the first (one MiniLM forward: 0.47 s with two
# threads beside the app's own, 0.023 s with one). A test that races at other thread counts sets them itself
# (heads_experiment.threads) and gives them back.
torch.set_num_threads(1)

# every test and the app the tests start train the suite's one short configuration of each lesson (dragon/runs.py
# SHORT), each seed once per run; a test that needs the app's full sizes asks for them by argument
os.environ["DRAGON_RUNS"] = "short"
# ... and each once per session, not once per process: the session's processes (pytest-xdist's workers, the apps they
# start) keep the lessons' fixed results in one folder (dragon/runtime/shared.py), made by the first process (the
# controller, whose environment the workers inherit) and deleted when it ends
if "PYTEST_XDIST_WORKER" not in os.environ and "DRAGON_RESULTS_DIR" not in os.environ:
    os.environ["DRAGON_RESULTS_DIR"] = tempfile.mkdtemp(prefix="dragon-test-results-")
    atexit.register(shutil.rmtree, os.environ["DRAGON_RESULTS_DIR"], ignore_errors=True)

# httpx makes a new SSL context for every client it builds (reading certifi's CA bundle: ~25 ms of CPU each), and
# gradio_client builds one per prediction, the tests' own calls one per httpx.get/post: some 14 core-seconds a run,
# though every one of them goes to http://127.0.0.1. One default context (read once; safe to share between threads)
# serves them all; any other verify= still gets its own.
@functools.cache
def _default_ssl_context():
    return _httpx_config.create_ssl_context()


def _one_ssl_context(verify=True, cert=None, trust_env=True):
    if verify is True and cert is None and trust_env:
        return _default_ssl_context()
    return _httpx_config.create_ssl_context(verify=verify, cert=cert, trust_env=trust_env)


_httpx_transports.create_ssl_context = _one_ssl_context

# the app the tests start keeps its live classes in a folder of the test run's own, never in the repository's data/
# (each of pytest-xdist's workers its own: two workers' classes never meet), deleted when the run ends
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if WORKER or "DRAGON_DATA_DIR" not in os.environ:
    os.environ["DRAGON_DATA_DIR"] = tempfile.mkdtemp(prefix=f"dragon-test-data-{WORKER or 'main'}-")
    atexit.register(shutil.rmtree, os.environ["DRAGON_DATA_DIR"], ignore_errors=True)


# What a test costs, roughly, by its marks (core-seconds on this 2-core machine): a browser test drives Chromium through
# a page or more; a slow one trains, races or loads the real model; the rest are quick.
COST = {"browser": 3.0, "slow": 1.0}
QUICK = 0.02


def pytest_collection_modifyitems(config, items) -> None:
    """Modules heaviest first (by their tests' marks: COST), so that pytest-xdist's two workers, each taking the next
    module as it finishes one (--dist loadfile, --no-loadscope-reorder), end together: the last modules handed out
    are the quick ones. Within a module the order is as written."""
    cost: dict = {}
    for item in items:
        marks = {m.name for m in item.iter_markers()}
        weight = max((COST[m] for m in marks & COST.keys()), default=QUICK)
        cost[item.module.__name__] = cost.get(item.module.__name__, 0.0) + weight
    first = {name: i for i, name in enumerate(dict.fromkeys(item.module.__name__ for item in items))}
    items.sort(key=lambda item: (-cost[item.module.__name__], first[item.module.__name__]))


@pytest.fixture(scope="session")
def app_server():
    """The real app, launched once for the API and browser tests: (its Blocks, its URL)."""
    from tests.app_server import start

    demo, url = start()
    yield demo, url
    demo.close()


@pytest.fixture(scope="session")
def app_url(app_server):
    return app_server[1]


@pytest.fixture(scope="session")
def client(app_url):
    """One gradio_client Client on the real app, shared by every API test."""
    from gradio_client import Client

    return Client(app_url, verbose=False)


# Playwright's wait_for_selector looks again after 0, 20, 50, 100, 100 and then every 500 ms, so an element that comes
# after a quarter second is seen on average 0.2 s late (measured: a mean of 219 ms, at most 429, against 12 ms for a
# wait_for_function polled every frame); with ~150 such waits a test run spent minutes looking too late. A selector
# wait therefore first watches the page itself, every PROMPT_POLL_MS, for what the selector asks (plain CSS; a
# trailing :visible read as the default state), then hands over to Playwright's own wait, which then finds it at its
# first look and decides as before: nothing is accepted that Playwright would not accept. A selector the page's
# querySelectorAll does not read (Playwright's own syntax) is left to Playwright's wait alone.
PROMPT_POLL_MS = 20
PROMPT_WAIT = """([selector, state]) => {
  let found;
  try { found = [...document.querySelectorAll(selector)]; } catch (e) { return true; }  // not CSS: Playwright's wait
  const shown = (e) => { const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'; };
  if (state === 'attached') return found.length > 0;
  if (state === 'detached') return found.length === 0;
  if (state === 'hidden') return !found.length || !shown(found[0]);
  return found.some(shown);
}"""


def prompt_selector_waits() -> None:
    """Make every wait_for_selector of the sync API look first as the page changes (see PROMPT_WAIT), once."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import Frame, Page

    for cls in (Page, Frame):
        if getattr(cls.wait_for_selector, "prompt", False):
            continue
        original = cls.wait_for_selector

        def wait_for_selector(self, selector, *, timeout=None, state=None, strict=None, _original=original):
            css = selector.removesuffix(":visible") if selector.endswith(":visible") and state in (None, "visible") \
                else selector
            try:
                self.wait_for_function(PROMPT_WAIT, arg=[css, state or "visible"], polling=PROMPT_POLL_MS,
                                       timeout=timeout)
            except PlaywrightError:  # timed out, or the page went on to another document meanwhile
                pass  # Playwright's own wait below says what it says (and fails the test where it should)
            return _original(self, selector, timeout=timeout, state=state, strict=strict)

        wait_for_selector.prompt = True
        cls.wait_for_selector = wait_for_selector


_CHROMIUM: dict = {}  # the one running Chromium of this session's browser tests, and its Playwright


class Chromium:
    """The session's Chromium, started on first use and again after stop_chromium (a session fixture holds this,
    so that module-scoped fixtures may use it too)."""

    def __getattr__(self, name: str):
        return getattr(self.real(), name)

    @staticmethod
    def real():
        if not _CHROMIUM:
            from playwright.sync_api import sync_playwright

            from tests.test_browser import ARTIFACTS, CHROMIUM, FLAGS

            ARTIFACTS.mkdir(exist_ok=True)
            prompt_selector_waits()
            _CHROMIUM["playwright"] = sync_playwright().start()
            _CHROMIUM["browser"] = _CHROMIUM["playwright"].chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            _CHROMIUM["idle"] = {}
        return _CHROMIUM["browser"]

    def launch(self, executable: str):
        """Another Chromium, started with this one's flags from `executable` (the caller closes it)."""
        from tests.test_browser import FLAGS

        self.real()
        return _CHROMIUM["playwright"].chromium.launch(executable_path=executable, args=FLAGS)

    # A page the app has been loaded in before loads it again in a third of the time (its renderer and its compiled
    # scripts are warm: 0.5 s against 1.5 s on this machine; a new page costs Chromium 2.2 core-s, a warm one 1.1),
    # so a test's page is an idle one of a finished test when there is one, in a context made with the same options
    # (of any viewport: it is set to the test's before the page loads), its storage and cookies cleared: a fresh
    # browser's start, as a new player's (the page's own routes and the test's listeners are removed when it is given
    # back). A test that needs more of a fresh context (init scripts, exposed functions, the context's routes) makes
    # its own.
    def take_page(self, viewport: dict, options: dict):
        key = repr(sorted(options.items()))
        browser = self.real()
        idle = _CHROMIUM["idle"].setdefault(key, [])
        if idle:
            page = idle.pop()
            page.set_viewport_size(viewport)
            return page
        page = browser.new_context(viewport=viewport, **options).new_page()
        page.pooled_key = key
        return page

    @staticmethod
    def give_back(page, listeners: dict | None = None) -> None:
        """The page's routes and the test's `listeners` ({event: handler}) removed, the page left (its unload done),
        then its origin's storage, its cookies, any print emulation and any other page of its context reset (its size
        is set when it is taken again); a page the test closed takes its context with it."""
        context = page.context
        if page.is_closed() or not _CHROMIUM:
            context.close()
            return
        for event, handler in (listeners or {}).items():
            page.remove_listener(event, handler)
        page.unroute_all(behavior="ignoreErrors")  # a handler still running is not waited for
        for other in context.pages:
            if other is not page:
                other.close()
        origin = re.match(r"https?://[^/]+/", page.url)
        if origin:
            page.goto(origin.group(0) + "gradio_api/upload")  # a 404 of the app's origin that runs no script
            page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
        context.clear_cookies()
        page.emulate_media(media="null")
        _CHROMIUM["idle"][page.pooled_key].append(page)


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the browser tests (each test opens its own contexts): the system one, or
    CHROMIUM_PATH; where none exists they skip with the reason, and in CI they fail instead. It starts at the first
    browser test and stops after the last of a run of them (pytest_runtest_teardown): Playwright's sync API keeps an
    event loop running in this thread, where the other tests' asyncio.run() must start their own."""
    from tests.test_browser import CHROMIUM

    if not CHROMIUM:
        reason = "no Chromium found (install Debian's chromium or set CHROMIUM_PATH)"
        if os.environ.get("CI"):
            pytest.fail(f"browser tests must run in CI: {reason}")
        pytest.skip(reason)
    yield Chromium()
    stop_chromium()


def stop_chromium() -> None:
    if _CHROMIUM:
        _CHROMIUM.pop("idle")
        _CHROMIUM.pop("browser").close()
        _CHROMIUM.pop("playwright").stop()


@pytest.hookimpl(trylast=True)  # after the test's own fixtures (its module's contexts) are torn down
def pytest_runtest_teardown(item, nextitem) -> None:
    """After the last browser test of a run of them (the next test, in another module, has no browser fixture),
    Chromium stops; a later browser test starts it again."""
    if not _CHROMIUM:
        return
    if nextitem is None or (nextitem.module is not item.module and "browser" not in nextitem.fixturenames):
        stop_chromium()

"""Shared test helpers."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import os  # noqa: E402
import tempfile  # noqa: E402

import pytest  # noqa: E402

# the app the tests start keeps its live classes in a folder of the test run's own, never in the repository's data/
os.environ.setdefault("DRAGON_DATA_DIR", tempfile.mkdtemp(prefix="dragon-test-data-"))


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


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the whole session (each test opens its own contexts): the system one, or CHROMIUM_PATH;
    where none exists the browser tests skip with the reason, and in CI they fail instead."""
    from tests.test_browser import ARTIFACTS, CHROMIUM, FLAGS

    if not CHROMIUM:
        reason = "no Chromium found (install Debian's chromium or set CHROMIUM_PATH)"
        if os.environ.get("CI"):
            pytest.fail(f"browser tests must run in CI: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()

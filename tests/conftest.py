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

"""The wait page's server (ui/server/waking.py): every request answered at once with 503 and the wait in both
languages; closed, the address is free for the app at once; importing app starts none."""

import socket

import httpx
import pytest

from tests.app_server import free_port
from ui.server import waking
from ui.strings import STRINGS


@pytest.fixture
def wait_server():
    port = free_port()
    server = waking.Waking("127.0.0.1", port)
    yield server, f"http://127.0.0.1:{port}"
    server.close()


@pytest.mark.parametrize("path", ["/", "/?level=2-1&lang=en", "/config", "/gradio_api/info"])
def test_every_path_gets_the_wait_in_both_languages(wait_server, path: str) -> None:
    answer = httpx.get(wait_server[1] + path, timeout=5)
    assert answer.status_code == 503 and answer.headers[waking.WAKING_HEADER] == "1"
    assert answer.headers["retry-after"] == str(waking.RETRY_S) and answer.headers["cache-control"] == "no-store"
    zh, en = STRINGS["boot_wait"]
    assert zh in answer.text and en in answer.text and 'role="status"' in answer.text
    assert "location.reload()" in answer.text  # it turns into the game by itself


def test_a_head_or_a_post_gets_no_page(wait_server) -> None:
    for method in ("HEAD", "POST"):
        answer = httpx.request(method, wait_server[1] + "/gradio_api/queue/join", timeout=5)
        assert answer.status_code == 503 and answer.content == b""


def test_closed_the_address_is_free_at_once() -> None:
    port = free_port()
    server = waking.Waking("127.0.0.1", port)
    assert httpx.get(f"http://127.0.0.1:{port}/", timeout=5).status_code == 503  # a connection was served
    server.close()
    with socket.socket() as s:  # as the app's server binds it (uvicorn sets SO_REUSEADDR)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))


def test_a_taken_address_starts_no_wait_page(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        monkeypatch.setenv("GRADIO_SERVER_PORT", str(taken.getsockname()[1]))
        assert waking.answer_while_waking() is None  # the app's own launch then says the port is taken


def test_the_address_is_the_apps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADIO_SERVER_NAME", "0.0.0.0")
    monkeypatch.setenv("GRADIO_SERVER_PORT", "7999")
    assert waking.address() == ("0.0.0.0", 7999)
    monkeypatch.delenv("GRADIO_SERVER_NAME")
    monkeypatch.delenv("GRADIO_SERVER_PORT")
    assert waking.address() == ("127.0.0.1", 7860)


def test_importing_the_app_starts_no_wait_page() -> None:
    import app

    assert app.WAKING is None

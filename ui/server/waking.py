"""While `python app.py` loads (Gradio, torch, the page), its port already answers: a wait page in both languages that
turns into the game by itself once the game is served."""

import html
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ui.strings import STRINGS

WAKING_HEADER = "X-Dragon-Waking"  # on every answer of the wait page's server, never on the app's
RETRY_S = 1

# the page asks the same address again every half second (a refused connection, in the moment between this server
# and the app's, is asked again too) and loads the game once the answer is the app's own
PAGE = """<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>多头龙的秘密 · The Multi-Head Dragon</title>
<style>
body {{ font-family: system-ui, "Noto Sans CJK SC", sans-serif; display: grid; place-items: center; min-height: 90vh;
  margin: 0; color: #1f2937; background: #faf5ff; }}
main {{ text-align: center; padding: 1rem; }}
h1 {{ font-size: clamp(1.4rem, 4vw, 2.4rem); color: #7b3fbf; margin: 0 0 0.8rem; }}
p {{ font-size: clamp(1rem, 2.5vw, 1.5rem); margin: 0.3rem 0; }}
</style></head>
<body><main>
<h1>多头龙的秘密 · <span lang="en">The Multi-Head Dragon</span></h1>
<p role="status" class="boot-wait"><span lang="zh-CN">{zh}</span><br><span lang="en">{en}</span></p>
</main>
<script>
(function ask() {{
  fetch(location.href, {{ cache: "no-store" }}).then(
    (r) => (r.ok && !r.headers.has("{header}") ? location.reload() : setTimeout(ask, 500)),
    () => setTimeout(ask, 500));
}})();
</script></body></html>
"""


def wait_page() -> bytes:
    zh, en = STRINGS["boot_wait"]
    return PAGE.format(zh=html.escape(zh), en=html.escape(en), header=WAKING_HEADER).encode("utf-8")


class _Answer(BaseHTTPRequestHandler):
    """Every request: 503 (Service Unavailable, Retry-After); a GET gets the wait page, a HEAD its headers, a POST
    nothing."""

    page = wait_page()

    def answer(self) -> None:
        self.send_response(503)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", "0" if self.command == "POST" else str(len(self.page)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Retry-After", str(RETRY_S))
        self.send_header(WAKING_HEADER, "1")
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(self.page)

    do_GET = do_HEAD = do_POST = answer  # noqa: N815  (http.server looks its methods up by these names)

    def log_message(self, format: str, *args) -> None:
        pass  # no line per request on the app's console


def address() -> tuple[str, int]:
    """Where the app serves: GRADIO_SERVER_NAME and GRADIO_SERVER_PORT, as app.launch reads them."""
    return os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"), int(os.environ.get("GRADIO_SERVER_PORT", "7860"))


class Waking:
    """The wait page's server on the app's address, in a thread of its own, until close() (just before the app binds
    the same address)."""

    def __init__(self, host: str, port: int) -> None:
        self.server = ThreadingHTTPServer((host, port), _Answer)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, args=(0.05,), name="waking", daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def answer_while_waking() -> Waking | None:
    """Start the wait page's server, or None where the address is taken (the app's own launch then says so)."""
    try:
        return Waking(*address())
    except (OSError, ValueError):
        return None

"""Gradio routes this app never uses, refused (404) before Gradio sees them: file uploads (the app takes no files: a
teacher's file is read in the browser) and deep links (each would write a session's page to the server's disk)."""

import json

from starlette.types import ASGIApp, Receive, Scope, Send

UNUSED = ("/gradio_api/upload", "/gradio_api/deep_link")  # and anything under them


class RefuseUnused:
    """An ASGI middleware: a request for an unused route gets a 404 with one JSON line saying why."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not any(path == route or path.startswith(route + "/") for route in UNUSED):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"error": "this app takes no uploads and makes no deep links"}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 404, "headers": headers})
        await send({"type": "http.response.body", "body": body})

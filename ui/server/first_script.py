"""A script that runs before Gradio's own modules: an ASGI middleware puts it first in the page's <head>."""

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class FirstScript:
    """Put `<script>{script}</script>` right after `<head>` in every HTML page the app sends (Gradio's `head=` runs
    only after its modules have started, too late for what must be in place before them)."""

    def __init__(self, app: ASGIApp, script: str) -> None:
        self.app = app
        self.tag = f"<script>{script}</script>".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        start: Message | None = None  # an HTML page's start, held until its body is whole
        body: list[bytes] = []

        async def sending(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                headers = {k.lower(): v for k, v in message.get("headers", [])}
                html = headers.get(b"content-type", b"").startswith(b"text/html")
                if html and b"content-encoding" not in headers:
                    start = message
                    return
                await send(message)
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            body.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            page = b"".join(body)
            at = page.find(b"<head>")
            if at >= 0:
                page = page[: at + 6] + self.tag + page[at + 6 :]
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(page)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": page})

        await self.app(scope, receive, sending)

"""The largest request body the app reads (an ASGI middleware): a bigger one is refused before it is read whole."""

import json
import logging

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY_BYTES = 1_048_576  # 1 MiB: a teacher's 40,000-character file, JSON-escaped, with the player's progress, fits
log = logging.getLogger("dragon.refused")


class TooLarge(HTTPException):
    """Raised from inside the app's read of the body: FastAPI passes an HTTPException on as it is (a 413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body over {limit} bytes: refused unread")


class BodyLimit:
    """Refuse (413, one JSON line saying why) a request whose body is over `limit` bytes: by its Content-Length before
    any of it is read, or, sent in chunks without one, as soon as the chunks pass the limit."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    def logged(self, scope: Scope) -> TooLarge:
        """The refusal, logged once on one line."""
        err = TooLarge(self.limit)
        log.warning("refused %s %s: %s", scope.get("method"), scope.get("path", "")[:80], err.detail)
        return err

    async def refuse(self, send: Send, err: TooLarge) -> None:
        body = json.dumps({"error": err.detail}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await self.refuse(send, self.logged(scope))
            return
        seen = 0
        started = False

        async def receiving() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise self.logged(scope)
            return message

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receiving, sending)
        except TooLarge as err:
            if not started:
                await self.refuse(send, err)

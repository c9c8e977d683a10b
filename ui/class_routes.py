"""The live class's pages and JSON API under /class (an ASGI middleware in front of Gradio): light pages that poll,
so forty students and a projector cost the server a few small requests a second, outside Gradio's queue."""

import asyncio
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import segno
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from dragon.classroom import Classroom, dragon_levels, level_choice
from dragon.classroom_store import ClassroomError, ClassroomStore, checked_gate, normal_code
from dragon.config import HEAD_COLORS, HEAD_NAMES, HEADS
from dragon.levels import LANGS, all_levels
from ui.admission import address_of

UI_ASSETS = Path(__file__).resolve().parent.parent / "assets" / "ui"
MAX_API_BODY = 16_384  # a class request is small: a teacher level's share code (≤ 6,000 characters) is the largest
OPENS_PER_HOUR = 20  # classes one address may open in an hour
SWEEP_EVERY_S = 300.0  # expired classes are deleted this often (and whenever a class is opened)
STATUS = {"class.unknown": 404, "member.unknown": 404, "teacher.wrong_secret": 403, "move.too_fast": 429,
          "class.opens": 429}  # any other rule refused: 409
log = logging.getLogger("dragon.refused")


class Opens:
    """How many classes each address opened in the last hour (bounded: the 1,000 most recent addresses)."""

    def __init__(self, limit: int = OPENS_PER_HOUR, addresses: int = 1000) -> None:
        self.limit, self.addresses = limit, addresses
        self.times: OrderedDict[str, list[float]] = OrderedDict()
        self.lock = threading.Lock()

    def take(self, address: str, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        with self.lock:
            recent = [t for t in self.times.pop(address, []) if now - t < 3600.0]
            allowed = len(recent) < self.limit
            if allowed:
                recent.append(now)
            self.times[address] = recent
            while len(self.times) > self.addresses:
                self.times.popitem(last=False)
            return allowed


def page(role: str) -> str:
    """The class page for a role (teach / join): one HTML file with its style and script inlined."""
    html = (UI_ASSETS / "class.html").read_text(encoding="utf-8")
    return (html.replace("{{ROLE}}", role).replace("{{STYLE}}", (UI_ASSETS / "class.css").read_text("utf-8"))
            .replace("{{SCRIPT}}", (UI_ASSETS / "class.js").read_text("utf-8")))


def qr_svg(url: str) -> str:
    """A QR code of the join link as SVG (segno: pure Python, made on this server)."""
    return segno.make(url, error="m").svg_inline(scale=8, border=2, dark="#2d1b4e")


def checked_origin(origin: Any) -> str:
    """The origin the teacher's browser sees (http(s)://host[:port]), or ValueError."""
    parts = urlsplit(origin) if isinstance(origin, str) and len(origin) <= 200 else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
        raise ValueError("origin must be the page's http(s)://host")
    return f"{parts.scheme}://{parts.netloc}"


def as_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number")
    return value


def as_str(value: Any, name: str, cap: int) -> str:
    if not isinstance(value, str) or len(value) > cap:
        raise ValueError(f"{name} must be text of at most {cap} characters")
    return value


class ClassApi:
    """The actions behind /class/api: each a plain function of the JSON body, run off the event loop."""

    def __init__(self, store: ClassroomStore) -> None:
        self.store = store
        self.room = Classroom(store)
        self.opens = Opens()
        self.pages = {role: page(role) for role in ("teach", "join")}

    def open_class(self, body: dict, address: str) -> dict:
        if not self.opens.take(address):
            raise ClassroomError("class.opens", limit=OPENS_PER_HOUR)
        made = self.store.open_class()
        return {"code": made.code, "secret": made.secret, "expires": made.expires.isoformat() + "Z"}

    def teacher(self, body: dict) -> dict:
        code, secret = as_str(body.get("code"), "code", 16), as_str(body.get("secret"), "secret", 100)
        action = body.get("action")
        if action == "view":
            return self.room.teacher_view(code, secret)
        if action == "start":
            lang = body.get("lang", "zh")
            return self.room.start(code, secret, as_str(body.get("kind"), "kind", 16),
                                   as_str(body.get("level"), "level", 64), lang if lang in LANGS else "zh",
                                   as_str(body.get("level_code") or "", "level_code", 6_100) or None)
        if action == "end_round":
            self.store.end_round(code, secret, as_int(body.get("round"), "round"))
            return {"ok": True}
        if action == "remove":
            return {"removed": self.store.remove_member(code, secret, as_int(body.get("member"), "member"))}
        if action == "settings":
            settings = body.get("settings")
            if not isinstance(settings, dict):
                raise ValueError("settings must be an object")
            return {"settings": self.store.set_settings(code, secret, settings)}
        if action == "end_class":
            self.store.end_class(code, secret)
            return {"ended": True}
        if action == "csv":
            return {"csv": self.room.csv_text(code, secret)}
        if action == "qr":
            if not self.store.is_teacher(code, secret):
                raise ClassroomError("teacher.wrong_secret")
            url = f"{checked_origin(body.get('origin'))}/?class={quote(normal_code(code))}"
            return {"url": url, "svg": qr_svg(url)}
        raise ValueError("unknown teacher action")

    def join(self, body: dict) -> dict:
        made = self.store.join(as_str(body.get("code"), "code", 16), as_str(body.get("nickname"), "nickname", 200))
        return {"token": made.token, "nickname": made.nickname, "code": normal_code(body["code"])}

    def student(self, body: dict) -> dict:
        token = as_str(body.get("token"), "token", 100)
        action = body.get("action")
        if action == "view":
            return self.room.student_view(token)
        if action == "move":
            head = body.get("head")
            return self.room.dragon_move(token, as_int(body.get("round"), "round"),
                                         None if head is None else as_int(head, "head"), checked_gate(body.get("gate")))
        if action in ("play", "hint"):
            gates = body.get("gates")
            if not isinstance(gates, list) or len(gates) != 8:
                raise ValueError("gates must be a list of 8 numbers in 0…1")
            gates = [checked_gate(g) for g in gates]
            fn = self.room.everyone_move if action == "play" else self.room.everyone_hint
            return fn(token, as_int(body.get("round"), "round"), gates)
        if action == "leave":
            return {"left": self.store.leave(token)}
        raise ValueError("unknown student action")

    def levels(self, lang: str) -> dict:
        lang = lang if lang in LANGS else "zh"
        return {"dragon": [level_choice(lv, lang) for lv in dragon_levels()],
                "all": [level_choice(lv, lang) for lv in all_levels().values()],
                "heads": [{"id": h, "zh": HEAD_NAMES[h][0], "en": HEAD_NAMES[h][1], "color": HEAD_COLORS[h]}
                          for h in HEADS]}


def refused(err: Exception) -> JSONResponse:
    """A refused request: its reason (the page words it) and numbers, logged on one line."""
    if isinstance(err, ClassroomError):
        status, body = STATUS.get(err.reason, 409), {"error": err.reason, "detail": err.detail}
    else:
        status, body = 400, {"error": "bad_request", "message": " ".join(str(err).split())[:200]}
    log.warning("refused class request: %s", body)
    return JSONResponse(body, status_code=status)


ROOM: list[Classroom] = []  # the server's one class service (set when the routes start): a live class's results


def listener(state) -> Callable[[str, float, int], None] | None:
    """For a game event of a session a class page frames (its "class" token): a listener telling the class of each
    result the server scores (dragon/game.py RESULTS_TO); None for any other session."""
    token = state.get("class") if isinstance(state, dict) else None
    if not isinstance(token, str) or not token or not ROOM:
        return None
    room = ROOM[0]

    def tell(level_id: str, score: float, stars: int) -> None:
        try:
            room.report(token, level_id, score, stars)
        except (ClassroomError, ValueError) as err:  # removed, ended, too fast: the game goes on as ever
            log.warning("class result not counted: %s", err)

    return tell


class ClassRoutes:
    """An ASGI middleware: /class pages and API are answered here; `/?class=CODE` and `/?teach=1` lead to them;
    every other request goes on to Gradio."""

    def __init__(self, app: ASGIApp, store: ClassroomStore) -> None:
        self.app = app
        self.api = ClassApi(store)
        ROOM[:] = [self.api.room]
        threading.Thread(target=self.sweep, daemon=True, name="class-sweep").start()

    def sweep(self) -> None:
        while True:
            time.sleep(SWEEP_EVERY_S)
            try:
                self.api.store.delete_expired()
            except Exception:  # a database away for a moment: the next sweep tries again
                logging.getLogger("dragon").exception("class sweep failed")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path == "/" and scope.get("method") == "GET":
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            lang = f"lang={query['lang'][0]}" if query.get("lang", [""])[0] in LANGS else ""
            if "class" in query:
                code = normal_code(query["class"][0]) or ""
                await RedirectResponse(f"/class/join?code={quote(code)}" + (f"&{lang}" if lang else ""), 302)(
                    scope, receive, send)
                return
            if query.get("teach") == ["1"]:
                await RedirectResponse("/class/teach" + (f"?{lang}" if lang else ""), 302)(scope, receive, send)
                return
        if path != "/class" and not path.startswith("/class/"):
            await self.app(scope, receive, send)
            return
        response = await self.answer(Request(scope, receive), path)
        await response(scope, receive, send)

    async def answer(self, request: Request, path: str) -> Response:
        if request.method == "GET":
            if path in ("/class", "/class/", "/class/join"):
                return HTMLResponse(self.api.pages["join"], headers=NO_STORE)
            if path == "/class/teach":
                return HTMLResponse(self.api.pages["teach"], headers=NO_STORE)
            if path == "/class/api/levels":
                return JSONResponse(self.api.levels(request.query_params.get("lang", "zh")))
            return JSONResponse({"error": "not_found"}, status_code=404)
        if request.method != "POST" or not path.startswith("/class/api/"):
            return JSONResponse({"error": "not_found"}, status_code=404)
        try:
            body = await read_json(request)
            name = path.removeprefix("/class/api/")
            if name == "open":
                result = await run_in_threadpool(self.api.open_class, body, address_of(request))
            elif name in ("teacher", "join", "student"):
                result = await run_in_threadpool(getattr(self.api, name), body)
            else:
                return JSONResponse({"error": "not_found"}, status_code=404)
        except (ClassroomError, ValueError, OverflowError) as err:
            return refused(err)
        except asyncio.CancelledError:
            raise
        except Exception:
            logging.getLogger("dragon").exception("class request failed: %s", path)
            return JSONResponse({"error": "server"}, status_code=500)
        return JSONResponse(result, headers=NO_STORE)


NO_STORE = {"cache-control": "no-store"}


async def read_json(request: Request) -> dict:
    """The request's JSON object, at most MAX_API_BODY bytes (ValueError otherwise)."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_API_BODY:
            raise ValueError(f"a class request is at most {MAX_API_BODY} bytes")
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError("the request is not JSON") from None
    if not isinstance(body, dict):
        raise ValueError("the request must be a JSON object")
    return body

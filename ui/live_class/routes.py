"""The live class's pages and JSON API under /class (an ASGI middleware in front of Gradio): light pages that poll,
so forty students and a projector cost the server a few small requests a second, outside Gradio's queue."""

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import segno
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from dragon.classroom.records import ClassroomError
from dragon.classroom.room import Classroom, dragon_levels, level_choice
from dragon.classroom.rules import checked_gate, checked_id, normal_code
from dragon.classroom.store import ClassroomStore
from dragon.config import HEAD_COLORS, HEAD_NAMES, HEADS
from dragon.levels.loader import LANGS, all_levels
from ui.server.admission import address_of, trusted_proxies
from ui.strings import class_tables

UI_ASSETS = Path(__file__).resolve().parents[2] / "assets" / "ui"
MAX_API_BODY = 16_384  # a class request is small: a teacher level's share code (≤ 6,000 characters) is the largest
MAX_JSON_DEPTH = 32  # a class request nests two or three deep: far past that is an attack on the parser
MAX_BROWSER_ID = 64
SWEEP_EVERY_S = 300.0  # expired classes are deleted this often (and whenever a class is opened)
STATUS = {"class.unknown": 404, "member.unknown": 404, "move.too_fast": 429, "class.opens": 429,
          "code.too_many": 429}  # any other rule refused: 409
ROLES = ("teach", "join", "projector")
log = logging.getLogger("dragon.refused")


def page(role: str) -> str:
    """The class page for a role (teach / join / projector): one HTML file with its style and script inlined."""
    html = (UI_ASSETS / "class.html").read_text(encoding="utf-8")
    words = json.dumps(class_tables(), ensure_ascii=False).replace("</", "<\\/")  # JSON that cannot end the <script>
    return (html.replace("{{ROLE}}", role).replace("{{STYLE}}", (UI_ASSETS / "class.css").read_text("utf-8"))
            .replace("{{STRINGS}}", words).replace("{{SCRIPT}}", "".join((UI_ASSETS / f).read_text("utf-8") for f in ("touch_guard.js", "class.js"))))


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


def as_id(value: Any, name: str) -> int:
    """A round's or member's id: a whole number 1…2³¹−1 (ValueError: a 400 on every backend, no engine's words)."""
    return checked_id(value, name)  # it refuses a bool or a non-integer too


def as_str(value: Any, name: str, cap: int) -> str:
    if not isinstance(value, str) or len(value) > cap:
        raise ValueError(f"{name} must be text of at most {cap} characters")
    return value


class ClassApi:
    """The actions behind /class/api: each a plain function of the JSON body, run off the event loop."""

    def __init__(self, store: ClassroomStore) -> None:
        self.store = store
        self.room = Classroom(store)
        self.pages = {role: page(role) for role in ROLES}

    def open_class(self, body: dict, address: str) -> dict:
        self.store.take_open(address)  # counted in the database: replicas share it, a restart keeps it
        made = self.store.open_class()
        return {"code": made.code, "secret": made.secret, "projector": made.projector,
                "expires": made.expires.isoformat() + "Z"}

    def guarded(self, action: Callable[[dict], dict], body: dict, address: str) -> dict:
        """A join, teacher or projector request: a wrong code (or secret, or key) counts against the address, and past
        the limit is answered code.too_many; a right one is never slowed."""
        try:
            return action(body)
        except ClassroomError as err:
            if err.reason == "class.unknown":
                self.store.wrong_code(address)
            raise

    def teacher(self, body: dict) -> dict:
        code, secret = as_str(body.get("code"), "code", 16), as_str(body.get("secret"), "secret", 100)
        action = body.get("action")
        if action == "view":
            return self.room.teacher_view(code, secret)
        if action == "show_target":
            self.store.show_target(code, secret, as_id(body.get("round"), "round"))
            return {"ok": True}
        if action == "start":
            lang = body.get("lang", "zh")
            return self.room.start(code, secret, as_str(body.get("kind"), "kind", 16),
                                   as_str(body.get("level"), "level", 64), lang if lang in LANGS else "zh",
                                   as_str(body.get("level_code") or "", "level_code", 6_100) or None)
        if action == "end_round":
            self.store.end_round(code, secret, as_id(body.get("round"), "round"))
            return {"ok": True}
        if action == "remove":
            many = body.get("members")
            if many is not None and (not isinstance(many, list) or len(many) > 200):
                raise ValueError("members must be a list of at most 200 member ids")
            ids = [as_id(m, "member") for m in many] if many is not None else [as_id(body.get("member"), "member")]
            return {"removed": self.store.remove_members(code, secret, ids)}
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
                raise ClassroomError("class.unknown")
            return join_qr(code, body.get("origin"))
        raise ValueError("unknown teacher action")

    def projector(self, body: dict) -> dict:
        """The projector's read-only calls, on its own key: the class's view (no CSV, no control) and the join QR."""
        code, key = as_str(body.get("code"), "code", 16), as_str(body.get("key"), "key", 100)
        action = body.get("action")
        if action == "view":
            return self.room.teacher_view(code, key, projector=True)
        if action == "qr":
            if not self.store.is_projector(code, key):
                raise ClassroomError("class.unknown")
            return join_qr(code, body.get("origin"))
        raise ValueError("unknown projector action")

    def join(self, body: dict) -> dict:
        browser = body.get("browser")
        made = self.store.join(as_str(body.get("code"), "code", 16), as_str(body.get("nickname"), "nickname", 200),
                               None if browser is None else as_str(browser, "browser", MAX_BROWSER_ID))
        return {"token": made.token, "nickname": made.nickname, "code": normal_code(body["code"]),
                "rejoined": made.rejoined}

    def student(self, body: dict) -> dict:
        token = as_str(body.get("token"), "token", 100)
        action = body.get("action")
        if action == "view":  # the page's language, for the story and every line (the level's text keeps its own)
            lang = body.get("lang")
            return self.room.student_view(token, lang if lang in LANGS else None)
        if action == "move":
            head = body.get("head")
            return self.room.dragon_move(token, as_id(body.get("round"), "round"),
                                         None if head is None else as_int(head, "head"), checked_gate(body.get("gate")))
        if action in ("play", "hint"):
            gates = body.get("gates")
            if not isinstance(gates, list) or len(gates) != 8:
                raise ValueError("gates must be a list of 8 numbers in 0…1")
            gates = [checked_gate(g) for g in gates]
            fn = self.room.everyone_move if action == "play" else self.room.everyone_hint
            return fn(token, as_id(body.get("round"), "round"), gates)
        if action == "leave":
            return {"left": self.store.leave(token)}
        raise ValueError("unknown student action")

    def levels(self, lang: str) -> dict:
        lang = lang if lang in LANGS else "zh"
        return {"dragon": [level_choice(lv, lang) for lv in dragon_levels()],
                "all": [level_choice(lv, lang) for lv in all_levels().values()],
                "heads": [{"id": h, "zh": HEAD_NAMES[h][0], "en": HEAD_NAMES[h][1], "color": HEAD_COLORS[h]}
                          for h in HEADS]}


def join_qr(code: str, origin: Any) -> dict:
    """The class's join link on the page's origin, and its QR code."""
    url = f"{checked_origin(origin)}/?class={quote(normal_code(code))}"
    return {"url": url, "svg": qr_svg(url)}


def refused(err: Exception) -> JSONResponse:
    """A refused request: its reason (the page words it) and numbers, logged on one line."""
    if isinstance(err, ClassroomError):
        status, body = STATUS.get(err.reason, 409), {"error": err.reason, "detail": err.detail}
    else:
        status, body = 400, {"error": "bad_request", "message": " ".join(str(err).split())[:200]}
    log.warning("refused class request: %s", body)
    return JSONResponse(body, status_code=status)


# the class service the app's own games report to and take their rules from (ui/live_class/link.py): set by the app's
# routes alone (games=True), so routes made elsewhere in the same process (a test's, on its own store) never take it
ROOM: list[Classroom] = []


class ClassRoutes:
    """An ASGI middleware: /class pages and API are answered here; `/?class=CODE` and `/?teach=1` lead to them;
    every other request goes on to Gradio."""

    def __init__(self, app: ASGIApp, store: ClassroomStore, games: bool = False) -> None:
        self.app = app
        trusted_proxies()  # a TRUSTED_PROXIES the server cannot read stops the start, not every request
        self.api = ClassApi(store)
        if games:  # the app's one class service: the games it frames tell this one, and take its rounds' rules
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
            if path == "/class/projector":
                return HTMLResponse(self.api.pages["projector"], headers=NO_STORE)
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
            elif name in ("teacher", "join", "projector"):
                result = await run_in_threadpool(self.api.guarded, getattr(self.api, name), body, address_of(request))
            elif name == "student":
                result = await run_in_threadpool(self.api.student, body)
            else:
                return JSONResponse({"error": "not_found"}, status_code=404)
        except (ClassroomError, ValueError, OverflowError) as err:
            return refused(err)
        except ClientDisconnect:  # the caller went mid-body: nothing to answer, one line to say so
            log.warning("class request dropped by the client: %s", path)
            return Response(status_code=400)
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
        text = b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the request is not JSON") from None
    if json_depth(text) > MAX_JSON_DEPTH:  # before the parser recurses into it
        raise ValueError(f"a class request nests at most {MAX_JSON_DEPTH} deep")
    try:
        body = json.loads(text)
    except json.JSONDecodeError:
        raise ValueError("the request is not JSON") from None
    if not isinstance(body, dict):
        raise ValueError("the request must be a JSON object")
    return body


def json_depth(text: str) -> int:
    """How deep JSON text nests its arrays and objects (brackets inside strings left out)."""
    depth = most = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            most = max(most, depth)
        elif char in "]}":
            depth -= 1
    return most

"""A simulated class for benchmarks/app.py: pupils moving sliders over loopback, each request as its page sends it.

The requests were captured once from the real pages in Chromium (Playwright, every request to /gradio_api):
  the game's page  load: GET heartbeat/{hash} (held open), queue/join of the page's load event (the boot), then
                   queue/data (the session's event stream) until it is done.
                   move: POST component_server/ {data: {level, lang, gates, saved, code}, component_id: the panel,
                   fn_name: "live", session_hash}; when the answer says record: true, the panel's 'record' event
                   with [session state, saved, gates]: queued, a queue/join and then queue/data until done; not
                   queued (queue=False), one POST run/predict. The page keeps two copies of the progress: the
                   browser's (BrowserState, the events' input, set by their answers) and the panel's (sent with
                   each move: the panel's `saved` property when the server sets it, or the `saved` a live answer
                   brings back when it beat the record), and so does each simulated pupil.
  the echo page    move: queue/join {data: [value], fn_index, trigger_id, session_hash}, then queue/data until done.
A player moves once a period on an open-loop schedule (staggered), but never sends a move before the last one is
answered: moves that come due meanwhile go together in the next request, as the page sends only its latest gates. A
move's time runs from when it came due to the answer that showed it.

The client is a few lines of HTTP/1.1 over asyncio streams (keep-alive, chunked SSE), so that hundreds of players
cost the machine little beside the servers they load.
"""

import asyncio
import json
import os
import random
import secrets
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

TIMEOUT_S = 30.0


class Http:
    """One keep-alive HTTP/1.1 connection, as a browser tab holds one."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.reused = False  # it has answered before: the server may have let it go meanwhile

    async def _send(self, method: str, path: str, body: bytes | None, accept: str) -> None:
        if self.writer is not None and (self.writer.is_closing() or self.reader.at_eof()):
            self.close()  # the server let the idle connection go (keep-alive timeout): open another, as a browser does
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            self.reused = False
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nAccept: {accept}\r\n"
            f"Accept-Encoding: gzip, deflate, br, zstd\r\n"
        )
        if body is not None:
            head += (
                f"Origin: http://{self.host}:{self.port}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n"
            )
        self.writer.write(head.encode() + b"\r\n" + (body or b""))

    async def _exchange(self, method: str, path: str, body: bytes | None, accept: str):
        """Send, and read the response's head; a reused connection found closed is opened again once (a browser
        retries then too)."""
        for attempt in (0, 1):
            retry = self.reused and attempt == 0
            try:
                await self._send(method, path, body, accept)
                return await self._head()
            except (asyncio.IncompleteReadError, ConnectionError):
                self.close()
                if not retry:
                    raise
        raise AssertionError("unreachable")

    async def _head(self) -> tuple[int, dict[bytes, bytes]]:
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.split(b"\r\n")
        headers = {}
        for line in lines[1:]:
            if b":" in line:
                k, v = line.split(b":", 1)
                headers[k.strip().lower()] = v.strip()
        return int(lines[0].split()[1]), headers

    async def _chunks(self, headers: dict[bytes, bytes]):
        if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            while True:
                size = int((await self.reader.readline()).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readline()
                    return
                yield await self.reader.readexactly(size)
                await self.reader.readexactly(2)
        else:
            yield await self.reader.readexactly(int(headers.get(b"content-length", b"0")))

    def _done(self, headers: dict[bytes, bytes]) -> None:
        if headers.get(b"content-encoding"):
            raise RuntimeError("a compressed answer: this client reads only plain ones")
        self.reused = True
        if headers.get(b"connection", b"").lower() == b"close":
            self.close()

    async def request(self, method: str, path: str, body: object = None) -> tuple[int, bytes]:
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        status, headers = await self._exchange(method, path, data, "*/*")
        content = b"".join([c async for c in self._chunks(headers)])
        self._done(headers)
        return status, content

    async def events(self, path: str, on_message) -> int:
        """GET an event stream to its end, calling on_message(dict) with each `data:` JSON."""
        status, headers = await self._exchange("GET", path, None, "text/event-stream")
        buffer = b""
        async for chunk in self._chunks(headers):
            buffer += chunk
            *blocks, buffer = buffer.split(b"\n\n")
            for block in blocks:
                for line in block.split(b"\n"):
                    if line.startswith(b"data:"):
                        on_message(json.loads(line[5:]))
        self._done(headers)
        return status

    async def hold(self, path: str) -> None:
        """GET a stream and keep it open, reading and dropping what comes (the page's heartbeat)."""
        _, headers = await self._exchange("GET", path, None, "text/event-stream")
        async for _ in self._chunks(headers):
            pass

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


class Pool:
    """A browser's connections to one server: a request takes an idle one, or opens another."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.idle: list[Http] = []
        self.all: list[Http] = []

    async def request(self, method: str, path: str, body: object = None) -> tuple[int, bytes]:
        if self.idle:
            conn = self.idle.pop()
        else:
            conn = Http(self.host, self.port)
            self.all.append(conn)
        try:
            answer = await conn.request(method, path, body)
        except BaseException:
            conn.close()
            raise
        self.idle.append(conn)
        return answer

    def close(self) -> None:
        for conn in self.all:
            conn.close()


class Session:
    """A page's Gradio session: its queued events and the one event stream they are answered on."""

    def __init__(self, host: str, port: int, session_hash: str) -> None:
        self.posts = Pool(host, port)
        self.stream = Http(host, port)
        self.hash = session_hash
        self.waiting: dict[str, asyncio.Future] = {}
        self.early: dict[str, dict] = {}
        self.reading: asyncio.Future | None = None

    async def event(self, path: str, body: dict) -> dict:
        """queue/join, then the answer from the event stream (opened if it is not): the process_completed message."""
        status, content = await self.posts.request("POST", path, {**body, "session_hash": self.hash})
        if status != 200:
            raise RuntimeError(f"join {status}: {content[:200]!r}")
        event_id = json.loads(content)["event_id"]
        if event_id in self.early:
            return self.early.pop(event_id)
        future = asyncio.get_running_loop().create_future()
        self.waiting[event_id] = future
        if self.reading is None:
            self.reading = asyncio.ensure_future(self._read())
        try:
            return await future
        finally:
            self.waiting.pop(event_id, None)  # answered, or given up on (a timeout)

    def _on(self, message: dict) -> None:
        if message.get("msg") != "process_completed":
            return
        future = self.waiting.pop(message.get("event_id"), None)
        if future is None:
            self.early[message.get("event_id")] = message
        elif not future.done():
            future.set_result(message)

    async def _read(self) -> None:
        try:
            while self.waiting:
                status = await self.stream.events(f"/gradio_api/queue/data?session_hash={self.hash}", self._on)
                if status != 200:
                    raise RuntimeError(f"stream {status}")
        except Exception as err:
            for future in self.waiting.values():
                if not future.done():
                    future.set_exception(err)
            self.waiting.clear()
            self.stream.close()
        finally:
            self.reading = None

    def close(self) -> None:
        self.posts.close()
        self.stream.close()


def output(message: dict) -> list:
    """The data of a completed event (raises when the event failed)."""
    if not message.get("success", False):
        raise RuntimeError(f"event failed: {str(message)[:300]}")
    return message["output"]["data"]


@dataclass
class Tally:
    """What one stretch of load measured: each move's time (due → shown), each call's time, errors, records."""

    moves: list[float] = field(default_factory=list)
    calls: list[float] = field(default_factory=list)
    errors: int = 0
    records: int = 0
    first_error: str = ""

    def error(self, err: BaseException) -> None:
        self.errors += 1
        self.first_error = self.first_error or f"{type(err).__name__}: {err}"[:300]


def p95(values: list[float]) -> float:
    """The 95th percentile in ms (inf when nothing was answered)."""
    if len(values) < 2:
        return float("inf") if not values else values[0] * 1e3
    return statistics.quantiles(values, n=20, method="inclusive")[-1] * 1e3


class Player:
    """One pupil: a page, its gates, and what its page would send for a move."""

    def __init__(self, host: str, port: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.session = Session(host, port, secrets.token_hex(5))
        self.gates = [0.5] * 8
        self.tally = Tally()

    def nudge(self) -> None:
        """The pupil drags one slider somewhere near where it was."""
        i = self.rng.randrange(8)
        self.gates[i] = round(min(1.0, max(0.0, self.gates[i] + self.rng.uniform(-0.3, 0.3))), 2)

    async def boot(self) -> None:
        """Open the page (only the requests a move needs: none for the echo)."""

    async def move(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.session.close()


@dataclass
class AppPage:
    """The game's page as captured: the panel's id, the level, and the events' fn indices."""

    host: str
    port: int
    level: str
    lang: str
    panel: int
    record_fn: int
    boot_fns: list[tuple[int, int, list]]  # (fn_index, trigger_id, data) of the page's load events
    record_queued: bool = True
    code: str = ""  # a teacher level's share code (the link's `custom`), sent with each move as the page sends it

    @classmethod
    def from_config(cls, url: str, level: str, lang: str = "zh", code: str = "") -> "AppPage":
        import httpx

        parts = urlsplit(url)
        config = httpx.get(f"{url}config", timeout=30).json()
        ids = {c.get("props", {}).get("elem_id"): c["id"] for c in config["components"]}
        fns = {(t[0], t[1]): i for i, d in enumerate(config["dependencies"]) for t in d["targets"]}
        link = {"lang": lang, "level": level, "projector": False, "custom": code, "exam": False, "sandbox": False,
                "text": "", "tlang": "", "stored": False}
        boot = json.dumps(link, separators=(",", ":"))  # what the load event's js sends: window.__dragon
        page = config["dependencies"][0]["targets"][0][0]
        loads = [(fns[(page, "load")], page, [boot, None])]
        record = fns[(ids["panel"], "record")]
        queued = config["dependencies"][record].get("queue") is not False
        return cls(parts.hostname, parts.port, level, lang, ids["panel"], record, loads, queued, code)


class AppPlayer(Player):
    """A pupil on the game's page: live answers a move; a move that beats the pupil's best fires 'record'."""

    def __init__(self, page: AppPage, seed: int) -> None:
        super().__init__(page.host, page.port, seed)
        self.page = page
        self.stored = None  # the browser's progress (BrowserState): what the page's events send
        self.panel_saved = None  # the panel's `saved` property, as the server last set it
        self.saved = None  # what the panel's script sends with a move
        self.saved_at = 0  # bumped when the server sets the panel's `saved`: older live answers keep out
        self.heartbeat = Http(page.host, page.port)
        self.recording: asyncio.Future | None = None
        self.record_again = False

    async def boot(self) -> None:
        self._beat = asyncio.ensure_future(self.heartbeat.hold(f"/gradio_api/heartbeat/{self.session.hash}"))
        path = f"/gradio_api/queue/join?level={self.page.level}&lang={self.page.lang}"
        answers = await asyncio.gather(*[
            self.session.event(path, {"data": data, "event_data": None, "fn_index": fn, "trigger_id": trigger})
            for fn, trigger, data in self.page.boot_fns
        ])
        page = output(answers[-1])
        self.stored = page[1]
        self._panel(page[3])
        self.gates = list(page[3].get("value") or self.gates)

    def _panel(self, update) -> None:
        """The server's update of the panel: a new `saved` property is what the next moves send."""
        value = update.get("props", {}).get("saved") if isinstance(update, dict) else None
        if isinstance(value, str) and value != self.panel_saved:
            self.panel_saved = self.saved = value
            self.saved_at += 1

    async def move(self) -> None:
        body = {"data": {"level": self.page.level, "lang": self.page.lang, "gates": list(self.gates),
                         "saved": self.saved, "code": self.page.code},
                "component_id": self.page.panel, "fn_name": "live", "session_hash": self.session.hash}
        sent_at = self.saved_at
        status, content = await self.session.posts.request("POST", "/gradio_api/component_server/", body)
        answer = json.loads(content) if status == 200 else {}
        if "view" not in answer:
            raise RuntimeError(f"live {status}: {content[:200]!r}")
        if isinstance(answer.get("saved"), str) and sent_at == self.saved_at:
            self.saved = answer["saved"]
        if answer.get("record"):
            self.fire_record()

    def fire_record(self) -> None:
        """trigger_mode always_last: while one 'record' runs, the next waits and goes with the gates of then."""
        if self.recording:
            self.record_again = True
            return
        self.recording = asyncio.ensure_future(self._record())

    async def _send_record(self) -> list:
        query = f"?lang={self.page.lang}&level={self.page.level}"
        body = {"data": [None, self.stored, list(self.gates)], "event_data": {}, "fn_index": self.page.record_fn,
                "trigger_id": self.page.panel}
        if self.page.record_queued:
            return output(await self.session.event(f"/gradio_api/queue/join{query}", body))
        status, content = await self.session.posts.request(
            "POST", f"/gradio_api/run/predict{query}", {**body, "session_hash": self.session.hash}
        )
        if status != 200:
            raise RuntimeError(f"record {status}: {content[:200]!r}")
        return json.loads(content)["data"]

    async def _record(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                self.record_again = False
                t0 = loop.time()
                try:
                    data = await asyncio.wait_for(self._send_record(), TIMEOUT_S)
                    self.tally.calls.append(loop.time() - t0)
                    self.tally.records += 1
                    if isinstance(data[1], str):
                        self.stored = data[1]
                    self._panel(data[0])
                except Exception as err:
                    self.tally.error(err)
                if not self.record_again:
                    return
        finally:
            self.recording = None

    def close(self) -> None:
        super().close()
        self.heartbeat.close()
        if getattr(self, "_beat", None) is not None:
            self._beat.cancel()


class EchoPlayer(Player):
    """A pupil on the bare echo page: Gradio's client joins the queue and reads the event stream."""

    def __init__(self, host: str, port: int, seed: int, fn_index: int = 0, trigger_id: int = 1) -> None:
        super().__init__(host, port, seed)
        self.fn_index, self.trigger_id = fn_index, trigger_id

    async def move(self) -> None:
        body = {"data": [self.gates[0]], "fn_index": self.fn_index, "trigger_id": self.trigger_id}
        output(await self.session.event("/gradio_api/queue/join?", body))


async def play(player: Player, start: float, end: float, period: float) -> None:
    """Moves due every `period` s from `start` to `end`; one request at a time, those due meanwhile go in the next."""
    loop = asyncio.get_running_loop()
    due = start
    tally = player.tally
    while due < end:
        now = loop.time()
        if now < due:
            await asyncio.sleep(due - now)
            now = loop.time()
        covered = []
        while due <= now and due < end:
            player.nudge()
            covered.append(due)
            due += period
        t0 = loop.time()
        try:
            await asyncio.wait_for(player.move(), TIMEOUT_S)
        except Exception as err:
            tally.error(err)
            continue
        t1 = loop.time()
        tally.calls.append(t1 - t0)
        tally.moves += [t1 - d for d in covered]


def merged(players: list[Player]) -> Tally:
    total = Tally()
    for p in players:
        total.moves += p.tally.moves
        total.calls += p.tally.calls
        total.errors += p.tally.errors
        total.records += p.tally.records
        total.first_error = total.first_error or p.tally.first_error
    return total


async def _boot(players: list[Player]) -> None:
    for k in range(0, len(players), 10):  # ten pages opening at a time
        await asyncio.gather(*(p.boot() for p in players[k : k + 10]))


def cpu_s(pid: int | None) -> float:
    """CPU seconds a process has used so far (user + system; 0 where /proc cannot say)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except (OSError, TypeError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Target:
    """A server under load: how to make a pupil for it, and its process (for the CPU it spends per move)."""

    name: str
    make: Callable[[int], Player]
    pid: int | None = None


async def _stretch(players: list[Player], seconds: float, period: float) -> None:
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.1
    await asyncio.gather(*(
        play(p, start + period * i / len(players), start + seconds, period) for i, p in enumerate(players)
    ))
    await asyncio.sleep(1.0)  # the last records land


async def _class(targets: list[Target], players: int, seconds: float, rounds: int, period: float) -> dict:
    classes = {t.name: [t.make(i) for i in range(players)] for t in targets}
    cpu = dict.fromkeys(classes, 0.0)
    try:
        for pupils in classes.values():
            await _boot(pupils)
        await asyncio.sleep(1.0)
        for _ in range(rounds):  # the targets take turns, so a busy moment of the machine hits each alike
            for t in targets:
                c0 = cpu_s(t.pid)
                await _stretch(classes[t.name], seconds / rounds, period)
                cpu[t.name] += cpu_s(t.pid) - c0
    finally:
        for pupils in classes.values():
            for p in pupils:
                p.close()
    out = {}
    for name, pupils in classes.items():
        tally = merged(pupils)
        out[name] = {**summary(tally), "server_cpu_ms_per_move": round(1e3 * cpu[name] / max(1, len(tally.moves)), 2)}
    return out


def run_class(targets: list[Target], players: int, seconds: float, rounds: int = 4, period: float = 1.0) -> dict:
    """Each target's class: `players` pupils each moving once a `period` for `seconds` in all, the targets taking
    turns in `rounds` stretches: p95 over moves and calls, errors, records, the server's CPU per move."""
    return asyncio.run(_class(targets, players, seconds, rounds, period))


def summary(tally: Tally) -> dict:
    return {
        "moves": len(tally.moves),
        "p95_ms": round(p95(tally.moves), 1),
        "median_ms": round(statistics.median(tally.moves) * 1e3, 1) if tally.moves else None,
        "calls_p95_ms": round(p95(tally.calls), 1),
        "errors": tally.errors,
        "records": tally.records,
        **({"first_error": tally.first_error} if tally.first_error else {}),
    }


Steps = tuple[int | None, list[dict]]


async def _saturate(make: Callable[[int], Player], rates: list[int], step_s: float, limit_ms: float) -> Steps:
    players: list[Player] = []
    steps = []
    found = None
    try:
        for rate in rates:  # each pupil moves once a second: `rate` pupils
            new = [make(len(players) + i) for i in range(rate - len(players))]
            await _boot(new)
            players += new
            for p in players:
                p.tally = Tally()
            await asyncio.sleep(0.5)
            await _stretch(players, step_s, 1.0)
            step = {"rate": rate, **summary(merged(players))}
            steps.append(step)
            if step["p95_ms"] > limit_ms or step["errors"]:
                found = rate
                break
    finally:
        await asyncio.sleep(0.5)
        for p in players:
            p.close()
    return found, steps


def saturate(make: Callable[[int], Player], rates: list[int], step_s: float = 4.0, limit_ms: float = 500.0) -> Steps:
    """Step the class up (rate pupils, one move a second each) until p95 over moves passes limit_ms: that rate
    (None when no step did), and each step's figures."""
    return asyncio.run(_saturate(make, rates, step_s, limit_ms))

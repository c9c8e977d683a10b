"""A live class on loopback: python benchmarks/classroom.py (last line: JSON summary).

Two passes, each one projector and STUDENTS simulated students for SECONDS seconds, making the requests the class pages
make (assets/ui/class.js): the projector asks for the class's board every PROJECTOR_POLL_S, each student asks for their
own view every STUDENT_POLL_S and moves about once a second. The first half of a pass is a class-dragon round (each
student moves their head's slider), the second an everyone-plays round of a slider level (each moves their eight).

  sqlite      one `python app.py` on its SQLite file (a fresh data folder)
  postgresql  two `python app.py` sharing one PostgreSQL (DATABASE_URL, or a throwaway cluster from .ci/postgres.sh);
              the students are split between them, the projector is on the first

errors                 requests that failed or timed out (goal 0); a polite "too fast" is counted apart (rate_limited)
move_p95_ms            a move's time, sent to answered (goal ≤ 200)
projector_lag_p95_ms   a class-dragon move, sent until the projector's board shows it (goal ≤ 1000)
rss_growth_pct         the servers' resident memory, from the class's start to its end (goal ≤ 10)

Bounded: STUDENTS students, SECONDS seconds a pass, each request 30 s at most. The servers start without their
warm-up training (DRAGON_WARM_UP=0): a class is the load here, not the start-up's own runs.
"""

import asyncio
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.app import start_server  # noqa: E402
from benchmarks.class_load import p95  # noqa: E402
from benchmarks.soak import rss_mb  # noqa: E402

STUDENTS = int(os.environ.get("CLASS_STUDENTS", "40"))
SECONDS = float(os.environ.get("CLASS_SECONDS", "180"))
PROJECTOR_POLL_S = 0.6  # as assets/ui/class.js: the teacher's page asks for the board this often
STUDENT_POLL_S = 1.0  # a student's page asks for their view this often
TIMEOUT_S = 30.0
DRAGON_LEVEL, EVERYONE_LEVEL = "2-1", "2-3"


def when(stamp: str | None) -> float:
    return datetime.fromisoformat(stamp.removesuffix("Z")).timestamp() if stamp else float("-inf")


class Tally:
    def __init__(self) -> None:
        self.moves: list[float] = []
        self.lags: list[float] = []
        self.errors: list[str] = []
        self.limited = 0
        self.requests = 0


async def call(http: httpx.AsyncClient, name: str, body: dict, tally: Tally) -> dict | None:
    tally.requests += 1
    try:
        answer = await http.post(f"/class/api/{name}", json=body, timeout=TIMEOUT_S)
    except httpx.HTTPError as err:
        tally.errors.append(f"{name}: {type(err).__name__}")
        return None
    if answer.status_code == 429:
        tally.limited += 1
        return None
    if answer.status_code != 200:
        data = answer.json() if answer.headers.get("content-type", "").startswith("application/json") else {}
        if data.get("error") in ("round.ended", "round.kind", "head.none"):  # the round moved on under a move
            return None
        tally.errors.append(f"{name} {answer.status_code}: {answer.text[:120]}")
        return None
    return answer.json()


class Projector:
    """The teacher's page: opens the class, starts the rounds, and polls the board; notes when each move shows."""

    def __init__(self, http: httpx.AsyncClient, tally: Tally) -> None:
        self.http, self.tally = http, tally
        self.code = self.secret = ""
        self.waiting: list[tuple[int, float, float]] = []  # (head, move's server time, when it was sent)

    async def ask(self, action: str, **extra) -> dict | None:
        return await call(self.http, "teacher", {"code": self.code, "secret": self.secret, "action": action, **extra},
                          self.tally)

    async def open(self) -> None:
        made = await call(self.http, "open", {}, self.tally)
        self.code, self.secret = made["code"], made["secret"]

    async def poll(self, until: float) -> None:
        loop = asyncio.get_running_loop()
        while loop.time() < until:
            view = await self.ask("view")
            seen = loop.time()
            board = (view or {}).get("round") or {}
            if board.get("kind") == "dragon":
                shown = [when(s) for s in board["moved_at"]]
                still = []
                for head, moved, sent in self.waiting:
                    if shown[head] >= moved:
                        self.tally.lags.append(seen - sent)
                    else:
                        still.append((head, moved, sent))
                self.waiting = still
            await asyncio.sleep(PROJECTOR_POLL_S)


class Student:
    def __init__(self, http: httpx.AsyncClient, projector: Projector, tally: Tally, seed: int) -> None:
        self.http, self.projector, self.tally = http, projector, tally
        self.rng = random.Random(seed)
        self.name = f"学生{seed}"
        self.token = ""
        self.view: dict = {}

    async def join(self) -> None:
        made = await call(self.http, "join", {"code": self.projector.code, "nickname": self.name}, self.tally)
        self.token = made["token"]

    async def look(self, until: float) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(self.rng.random() * STUDENT_POLL_S)
        while loop.time() < until:
            seen = await call(self.http, "student", {"token": self.token, "action": "view"}, self.tally)
            self.view = seen or self.view
            await asyncio.sleep(STUDENT_POLL_S)

    async def move(self, until: float) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(1.0 + self.rng.random())
        gates = [0.5] * 8
        while loop.time() < until:
            r = (self.view or {}).get("round")
            if r and r.get("open", True):
                sent = loop.time()
                if r["kind"] == "dragon" and r.get("mine"):
                    mine = self.rng.choice(r["mine"])
                    body = {"action": "move", "round": r["id"], "head": mine["head"],
                            "gate": round(self.rng.random() * 0.6, 2)}  # never all to the target: the round goes on
                else:
                    i = self.rng.randrange(8)
                    gates[i] = round(self.rng.random(), 2)
                    body = {"action": "play", "round": r["id"], "gates": gates}
                out = await call(self.http, "student", {"token": self.token, **body}, self.tally)
                if out is not None:
                    self.tally.moves.append(loop.time() - sent)
                    if "moved_at" in out:
                        self.projector.waiting.append((out["head"], when(out["moved_at"]), sent))
            await asyncio.sleep(0.8 + 0.4 * self.rng.random())


async def one_class(urls: list[str], pids: list[int]) -> dict:
    tally = Tally()
    limits = httpx.Limits(max_connections=STUDENTS + 4)
    clients = [httpx.AsyncClient(base_url=u.rstrip("/"), limits=limits) for u in urls]
    try:
        projector = Projector(clients[0], tally)
        await projector.open()
        students = [Student(clients[k % len(clients)], projector, tally, k) for k in range(STUDENTS)]
        for k in range(0, STUDENTS, 10):
            await asyncio.gather(*(s.join() for s in students[k : k + 10]))
        await projector.ask("start", kind="dragon", level=DRAGON_LEVEL, lang="zh")
        rss_start = sum(rss_mb(p) for p in pids)
        loop = asyncio.get_running_loop()
        start = loop.time()
        end = start + SECONDS

        async def switch() -> None:
            await asyncio.sleep(SECONDS / 2)
            await projector.ask("start", kind="everyone", level=EVERYONE_LEVEL, lang="zh")

        await asyncio.gather(projector.poll(end), switch(), *(s.look(end) for s in students),
                             *(s.move(end) for s in students))
        rss_end = sum(rss_mb(p) for p in pids)
        csv = await projector.ask("csv")
        rows = len((csv or {}).get("csv", "").splitlines()) - 1
    finally:
        for c in clients:
            await c.aclose()
    return {
        "servers": len(urls), "students": STUDENTS, "seconds": SECONDS, "errors": len(tally.errors),
        "rate_limited": tally.limited, "requests": tally.requests, "moves": len(tally.moves),
        "move_p95_ms": round(p95(tally.moves), 1), "projector_lag_p95_ms": round(p95(tally.lags), 1),
        "lags_measured": len(tally.lags), "rss_start_mb": round(rss_start), "rss_end_mb": round(rss_end),
        "rss_growth_pct": round(100 * (rss_end - rss_start) / rss_start, 1), "csv_rows": rows,
        **({"first_error": tally.errors[0]} if tally.errors else {}),
    }


def run_pass(env: dict[str, str], servers: int) -> dict:
    started = [start_server("app.py", {**env, "DRAGON_WARM_UP": "0"}) for _ in range(servers)]
    try:
        return asyncio.run(one_class([url for _, url, _ in started], [proc.pid for proc, _, _ in started]))
    finally:
        for proc, _, _ in started:
            proc.terminate()
            proc.wait(timeout=30)


def postgres_url() -> tuple[str, str]:
    """DATABASE_URL, or a throwaway cluster started by .ci/postgres.sh (and its folder, which this run stops)."""
    if os.environ.get("DATABASE_URL"):
        return os.environ["DATABASE_URL"], ""
    out = subprocess.run(["bash", str(ROOT / ".ci" / "postgres.sh"), "start"], capture_output=True, text=True,
                         check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("export PG_DIR="))
    values = dict(part.split("=", 1) for part in shlex.split(line.removeprefix("export ")))
    return values["DATABASE_URL"], values["PG_DIR"]


def main() -> None:
    t0 = time.perf_counter()
    folder = tempfile.mkdtemp(prefix="dragon-class-bench-")
    try:
        sqlite = run_pass({"DRAGON_DATA_DIR": folder, "DATABASE_URL": ""}, servers=1)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    url, pg_dir = postgres_url()
    try:
        postgres = run_pass({"DATABASE_URL": url}, servers=2)
    finally:
        if pg_dir:
            subprocess.run(["bash", str(ROOT / ".ci" / "postgres.sh"), "stop"], capture_output=True,
                           env={**os.environ, "PG_DIR": pg_dir})
    passes = {"sqlite": sqlite, "postgresql": postgres}
    summary = {
        "errors": sqlite["errors"] + postgres["errors"],
        "move_p95_ms": max(sqlite["move_p95_ms"], postgres["move_p95_ms"]),
        "projector_lag_p95_ms": max(sqlite["projector_lag_p95_ms"], postgres["projector_lag_p95_ms"]),
        "rss_growth_pct": max(sqlite["rss_growth_pct"], postgres["rss_growth_pct"]),
        "passes": passes, "machine_load": round(os.getloadavg()[0], 2), "cores": os.cpu_count(),
        "wall_s": round(time.perf_counter() - t0, 1),
    }
    for name, p in passes.items():
        print(f"{name:<11} errors {p['errors']}  move p95 {p['move_p95_ms']} ms (goal ≤ 200)  projector lag p95 "
              f"{p['projector_lag_p95_ms']} ms (goal ≤ 1000)  rss {p['rss_growth_pct']} % (goal ≤ 10)")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

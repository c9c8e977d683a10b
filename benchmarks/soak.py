"""Forty players for three minutes on loopback: python benchmarks/soak.py (last line: JSON summary).

`python app.py` starts (its fixed runs are trained first, as before a class); then PLAYERS simulated players
(benchmarks/class_load.py: each request as the page sends it) each act once a second for SECONDS: most move a slider
(the panel's live answer, and 'record' when it beats their best), some ask for a hint, open a lesson level or type a
new text into the sandbox (the analysis of a text no one typed before). A lesson level is opened as a player opens one:
from the level picker of the second tab they keep for the lessons (its 'choose' event); one time in RELOADS it is a
new page instead (a new session: the page's load events, then the page is closed). Bounded: PLAYERS players, SECONDS
seconds, each request 30 s at most.

errors                 requests that failed or timed out (goal 0)
p95_ms                 every request's time, 95th percentile; also its first and last minute's
                       (goal: the last minute ≤ 1.2 × the first)
requests               requests answered
rss_growth_pct         the server's resident memory from the start of the run (the pages open, after the server's first
                       trim of freed memory) to its end (goal ≤ 10); also every 30 s
"""

import asyncio
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.app import start_server, wait_warm  # noqa: E402
from benchmarks.class_load import TIMEOUT_S, AppPage, AppPlayer, Http, output, p95  # noqa: E402
from ui.server.heap import TRIM_EVERY_S  # noqa: E402

PLAYERS = int(os.environ.get("SOAK_PLAYERS", "40"))
SECONDS = float(os.environ.get("SOAK_SECONDS", "180"))
LESSONS = ["3-1", "3-2", "3-3", "3-4", "4-1", "4-2", "4-3", "4-4", "5-1"]
WORDS = ["月光", "故乡", "老师", "学生", "实验", "数据", "今天", "明天", "公园", "春风", "书", "山", "水"]
MIX = (("move", 0.7), ("hint", 0.1), ("open", 0.1), ("text", 0.1))  # what a player does, how often
RELOADS = 10  # one lesson opened in ten is a new page (a reload, a new tab), the others come from the level picker
if os.environ.get("SOAK_MIX"):  # e.g. SOAK_MIX=text:1 — one kind alone, to see which of them holds memory
    MIX = tuple((k, float(w)) for k, w in (part.split(":") for part in os.environ["SOAK_MIX"].split(",")))


def rss_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class SoakPlayer(AppPlayer):
    """A pupil who mostly moves sliders and now and then asks, opens or types something else."""

    def __init__(self, page: AppPage, lessons: dict[str, AppPage], choose: tuple[int, int], seed: int) -> None:
        super().__init__(page, seed)
        self.lessons = lessons
        self.choose = choose  # the level picker's 'choose' event: (fn index, the top component's id)
        self.lesson_tab = AppPlayer(lessons[LESSONS[seed % len(LESSONS)]], seed + 10**6)
        self.api = Http(page.host, page.port)
        self.texts = 0
        self.done: list[tuple[float, float, str]] = []  # (when answered, seconds, what)
        self.failed: list[str] = []

    async def call(self, name: str, data: list) -> None:
        """An API call as gradio_client makes it: POST the inputs, then read the answer's event stream to its end."""
        status, content = await self.api.request("POST", f"/gradio_api/call/{name}", {"data": data})
        if status != 200:
            raise RuntimeError(f"{name} {status}: {content[:200]!r}")
        event = json.loads(content)["event_id"]
        status, content = await self.api.request("GET", f"/gradio_api/call/{name}/{event}")
        if status != 200 or not content.startswith(b"event: complete"):
            raise RuntimeError(f"{name}: {content[:200]!r}")

    async def boot(self) -> None:
        await super().boot()
        await self.lesson_tab.boot()

    async def open_lesson(self) -> None:
        level = self.rng.choice(LESSONS)
        if self.rng.randrange(RELOADS) == 0:
            page = AppPlayer(self.lessons[level], self.rng.randrange(10**9))
            try:
                await page.boot()
            finally:
                page.close()
            return
        tab = self.lesson_tab
        body = {"data": [None, tab.stored], "event_data": {"level": level}, "fn_index": self.choose[0],
                "trigger_id": self.choose[1]}
        output(await tab.session.event(f"/gradio_api/queue/join?level={level}&lang={tab.page.lang}", body))

    def new_text(self) -> str:
        self.texts += 1
        words = self.rng.sample(WORDS, 4)
        return f"{words[0]}{words[1]}和{words[2]}{self.session.hash}{self.texts}{words[3]}。"

    async def act(self, what: str) -> None:
        if what == "move":
            self.nudge()
            await self.move()
        elif what == "hint":
            await self.call("hint", [self.page.level, list(self.gates), self.page.lang])
        elif what == "open":
            await self.open_lesson()
        else:
            await self.call("analyze", [self.new_text(), "auto"])

    async def play(self, start: float, end: float) -> None:
        loop = asyncio.get_running_loop()
        due = start
        kinds, weights = zip(*MIX, strict=True)
        while due < end:
            if loop.time() < due:
                await asyncio.sleep(due - loop.time())
            what = self.rng.choices(kinds, weights)[0]
            t0 = loop.time()
            try:
                await asyncio.wait_for(self.act(what), TIMEOUT_S)
            except Exception as err:
                self.failed.append(f"{what}: {type(err).__name__}: {err}"[:200])
            else:
                self.done.append((loop.time(), loop.time() - t0, what))
            due = max(due + 1.0, loop.time())  # one act a second, never two at once

    def close(self) -> None:
        super().close()
        self.lesson_tab.close()
        self.api.close()


def choose_index(url: str) -> tuple[int, int]:
    """The level picker's 'choose' event: (its fn index, the top component's id), from the page's config."""
    import httpx

    config = httpx.get(f"{url}config", timeout=30).json()
    top = next(c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == "top")
    fn = next(i for i, d in enumerate(config["dependencies"]) if [top, "choose"] in [list(t) for t in d["targets"]])
    return fn, top


async def soak(url: str, pid: int) -> dict:
    page = AppPage.from_config(url, "2-1")
    lessons = {lv: AppPage.from_config(url, lv) for lv in LESSONS}
    choose = choose_index(url)
    players = [SoakPlayer(page, lessons, choose, seed) for seed in range(PLAYERS)]
    try:
        for k in range(0, PLAYERS, 10):  # ten pages opening at a time
            await asyncio.gather(*(p.boot() for p in players[k : k + 10]))
        # the pages stay open, idle, until the server has given its freed pages back once (ui/server/heap.py trims every
        # TRIM_EVERY_S): the start is what it holds, not what its start-up once took
        await asyncio.sleep(TRIM_EVERY_S + 2.0)
        rss_start = rss_mb(pid)
        loop = asyncio.get_running_loop()
        start = loop.time() + 0.2
        rng = random.Random(0)
        rss_track = [round(rss_start)]  # every 30 s: whether the memory levels off once the sessions held are full

        async def track() -> None:
            while True:
                await asyncio.sleep(30)
                rss_track.append(round(rss_mb(pid)))

        tracking = asyncio.ensure_future(track())
        await asyncio.gather(*(p.play(start + rng.random(), start + SECONDS) for p in players))
        tracking.cancel()
        rss_end = rss_mb(pid)
    finally:
        for p in players:
            p.close()
    done = sorted(d for p in players for d in p.done)
    failed = [f for p in players for f in p.failed]
    first = [s for t, s, _ in done if t - start < 60]
    last = [s for t, s, _ in done if t - start >= SECONDS - 60]
    by_kind = {k: round(p95([s for _, s, w in done if w == k]), 1) for k, w in MIX if w}
    return {
        "players": PLAYERS, "seconds": SECONDS, "errors": len(failed), "requests": len(done),
        "p95_ms": round(p95([s for _, s, _ in done]), 1), "p95_first_minute_ms": round(p95(first), 1),
        "p95_last_minute_ms": round(p95(last), 1), "p95_ms_by_kind": by_kind,
        "rss_start_mb": round(rss_start), "rss_end_mb": round(rss_end),
        "rss_growth_pct": round(100 * (rss_end - rss_start) / rss_start, 1), "rss_every_30s_mb": rss_track,
        **({"first_error": failed[0]} if failed else {}),
    }


def main() -> None:
    proc, url, _ = start_server("app.py")
    try:
        wait_warm(url)
        t0 = time.perf_counter()
        summary = asyncio.run(soak(url, proc.pid))
        summary["wall_s"] = round(time.perf_counter() - t0, 1)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    ratio = summary["p95_last_minute_ms"] / max(summary["p95_first_minute_ms"], 1e-9)
    summary["p95_last_over_first"] = round(ratio, 2)
    print(f"errors              {summary['errors']:>8}  goal 0")
    print(f"p95 last ÷ first    {ratio:>8.2f}  goal ≤ 1.2")
    print(f"rss_growth_pct      {summary['rss_growth_pct']:>8}  goal ≤ 10")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

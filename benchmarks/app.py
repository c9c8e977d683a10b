"""App speed, as ratios taken in one run: python benchmarks/app.py (last line: JSON summary).

handler_ms     median server time to answer one slider change (the panel's server function, in process); _128:
               on a teacher's paragraph of 128 tokens (PARAGRAPH, carried by its share code), the most the dragon reads
browser_ratio  real Chromium: slider change → new score shown, median, ÷ the same on a bare echo app; both pages
               are measured in alternating rounds, so a busy moment of the machine hits both alike
answer_s       `python app.py` until its address first answers (the wait page in both languages, ui/server/waking.py)
start_s        `python app.py` until the game's page is served
warm_up_s      then until its runs at start (3-4's, 4-3's, 4-5's, 4-6's, in the lane) are done: the class comes to
               a server that is up
class_*        a class: 40 players, each moving a slider once a second for 60 s, against the app and then the echo,
               each move sent as its own page sends it (benchmarks/class_load.py): p95 over moves (from when a move
               came due to its answer), over all calls (the app's 'record' events too), errors; class_128_*: the same
               class on the 128-token paragraph
saturation_*   the class grown 40 → 400 players (one move a second each) in steps of a few seconds: the first rate
               whose p95 passes 500 ms, app and echo, and their ratio
machine_load   context: the machine's 1-minute load average at the start and the end (other work on a shared machine
               slows both servers alike, but not their p95 in ms), and http: the servers' HTTP parser and event loop
"""

import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import class_load  # noqa: E402
from dragon import game  # noqa: E402
from ui.rooms import sliders as play  # noqa: E402

CLASS, CLASS_S = 40, 60  # players, seconds
RATES = list(range(40, 401, 20))  # saturation: moves per second (one pupil per move a second)
STEP_S = 4.0
ROUNDS, ROUND_MOVES = 4, 16  # browser latency: alternating rounds of slider moves on each page
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")
# A teacher's paragraph of exactly 128 tokens (the most the dragon reads), made a level as the teachers' box makes one
PARAGRAPH = {"title": {"zh": "红叶", "en": "Red leaves"}, "lang": "zh",
             "target": {"time": 0.9, "space": 0.5, "context": 0.2},
             "text": "去年秋天，我们班的同学一起去山里看红叶。早上六点，大家在学校门口集合，老师给每个人发了一张地图。"
                     "山路很窄，两边长满了高高的竹子，风吹过的时候，竹叶沙沙作响。走了两个小时，我们终于到了山顶。"
                     "远处的山一层一层的，红叶像火一样燃烧。小明说他从来没有见过这么美的景色，小红拿出相机拍了很多照片。"
                     "中午我们在山顶吃午饭，吃完以后又唱歌又做游戏。下山的时候天已经暗了，"
                     "可是大家都觉得这一天过得实在太快了！"}


def paragraph_level() -> tuple[str, str]:
    """PARAGRAPH as a checked teacher level: (its id, its share code); it must be read whole at 128 tokens."""
    from dragon import api
    from dragon.text.analyser import MAX_TOKENS, analyse

    reading = analyse(PARAGRAPH["text"], "zh")
    assert len(reading.tokens) == MAX_TOKENS == 128 and not reading.truncated, len(reading.tokens)
    checked = api.check_level(PARAGRAPH)
    assert checked["ok"], checked["errors"]
    return checked["id"], checked["code"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(script: str, env: dict[str, str] | None = None,
                 answered: list[float] | None = None) -> tuple[subprocess.Popen, str, float]:
    """Start a server script on a free port (with `env` added to this process's); return it, its URL and the seconds
    until its page was served (200); `answered` gets the seconds until the address first answered at all (app.py's
    wait page, ui/server/waking.py, answers 503 before the game is served)."""
    port = free_port()
    env = {**os.environ, **(env or {}), "GRADIO_SERVER_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False"}
    t0 = time.perf_counter()
    log = tempfile.TemporaryFile()  # a file, not a pipe: a pipe nobody reads would stop the server once full
    proc = subprocess.Popen([sys.executable, script], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log)
    url = f"http://127.0.0.1:{port}/"
    while True:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"{script} exited: {log.read().decode()[-2000:]}")
        try:
            status = httpx.get(url, timeout=1).status_code
            if answered is not None and not answered:
                answered.append(time.perf_counter() - t0)
            if status == 200:
                return proc, url, time.perf_counter() - t0
        except httpx.HTTPError:
            pass
        time.sleep(0.05)


def handler_ms(level_id: str, samples: int = 200, code: str = "") -> float:
    rng = random.Random(0)
    saved = game.save(game.new_progress())
    payload = {"level": level_id, "lang": "zh", "saved": saved, "code": code}
    play.live({**payload, "gates": [0.5] * 8})  # warm: the level's reading is cached, as after opening it
    times = []
    for _ in range(samples):
        gates = [round(rng.random(), 2) for _ in range(8)]
        t0 = time.perf_counter()
        assert "view" in play.live({**payload, "gates": gates})
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def browser_latencies(page, slider: str, shown: str, expect_js: str, moves: int, offset: int) -> list[float]:
    """Seconds from setting a slider in Chromium to the new value being on screen, for `moves` moves."""
    times = []
    for i in range(moves):
        value = 0.05 + 0.9 * (((i + offset) * 7) % moves) / moves
        before = page.evaluate(
            f"document.querySelector('{shown}')?.textContent ?? document.querySelector('{shown}')?.value"
        )
        t0 = time.perf_counter()
        page.locator(slider).fill(f"{value:.2f}")
        page.wait_for_function(expect_js, arg=before, timeout=10_000)
        times.append(time.perf_counter() - t0)
    return times


def browser_medians(pages: list[tuple[str, str, str, str]]) -> list[float]:
    """Median latency for each (url, slider, shown, expect_js): every page open in its own tab, measured in
    alternating rounds (the first two moves of each round are warm-up)."""
    from playwright.sync_api import sync_playwright

    flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
    samples: list[list[float]] = [[] for _ in pages]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=flags)
        tabs = []
        for url, slider, _, _ in pages:
            tab = browser.new_page()
            tab.goto(url)
            tab.wait_for_selector(slider)
            tabs.append(tab)
        time.sleep(0.5)
        for r in range(ROUNDS):
            for k, (tab, (_, slider, shown, expect_js)) in enumerate(zip(tabs, pages, strict=True)):
                tab.bring_to_front()
                samples[k] += browser_latencies(tab, slider, shown, expect_js, ROUND_MOVES, r)[2:]
        browser.close()
    return [statistics.median(s) for s in samples]


def class_figures(app_proc: subprocess.Popen, app_url: str, echo_proc: subprocess.Popen, echo_url: str) -> dict:
    """The class load on both servers (taking turns: 2-1, the 128-token paragraph, the echo), then each grown until
    its p95 passes 500 ms."""
    page = class_load.AppPage.from_config(app_url, "2-1")
    para_id, para_code = paragraph_level()
    paragraph = class_load.AppPage.from_config(app_url, para_id, code=para_code)
    echo = httpx.URL(echo_url)

    def app_player(i: int) -> class_load.Player:
        return class_load.AppPlayer(page, i)

    def echo_player(i: int) -> class_load.Player:
        return class_load.EchoPlayer(echo.host, echo.port, i)

    classes = class_load.run_class(
        [class_load.Target("app", app_player, app_proc.pid),
         class_load.Target("app_128", lambda i: class_load.AppPlayer(paragraph, i), app_proc.pid),
         class_load.Target("echo", echo_player, echo_proc.pid)],
        CLASS, CLASS_S,
    )
    app_sat, app_steps = class_load.saturate(lambda i: app_player(10_000 + i), RATES, STEP_S)
    echo_sat, echo_steps = class_load.saturate(lambda i: echo_player(10_000 + i), RATES, STEP_S)
    for name, steps in (("app", app_steps), ("echo", echo_steps)):
        print(f"saturation {name:4s} " + "  ".join(f"{s['rate']}/s p95 {s['p95_ms']:.0f} ms" for s in steps))
    beyond = RATES[-1] + (RATES[1] - RATES[0])  # no step passed 500 ms: at least the next step
    app, bare, para = classes["app"], classes["echo"], classes["app_128"]
    return {
        "class_128_p95_ms": para["p95_ms"],
        "class_128_p95_ratio": round(para["p95_ms"] / bare["p95_ms"], 2),
        "class_128_errors": para["errors"],
        "class_p95_ms": app["p95_ms"],
        "echo_class_p95_ms": bare["p95_ms"],
        "class_p95_ratio": round(app["p95_ms"] / bare["p95_ms"], 2),
        "class_calls_p95_ms": app["calls_p95_ms"],
        "echo_class_calls_p95_ms": bare["calls_p95_ms"],
        "class_errors": app["errors"] + bare["errors"],
        "class_app": app,
        "class_echo": bare,
        "saturation_moves_per_s": app_sat or beyond,
        "echo_saturation_moves_per_s": echo_sat or beyond,
        "saturation_ratio": round((app_sat or beyond) / (echo_sat or beyond), 2),
        "saturation_steps": {"app": app_steps, "echo": echo_steps},
    }


def wait_warm(url: str) -> None:
    """Wait for the runs `python app.py` starts in the background (its API answers 3-4's, 4-3's, 4-5's and 4-6's
    once trained)."""
    from gradio_client import Client

    client = Client(url, verbose=False)
    client.predict(api_name="/heads_experiment")
    client.predict(600, 0, api_name="/grow")
    client.predict(0, api_name="/stability")
    client.predict(0, api_name="/router")


def main() -> None:
    # context: the machine's load (runnable processes, 1-minute mean) at the start and the end, the cores it has
    load_at_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    summary: dict = {"handler_ms": round(handler_ms("2-1"), 2), "handler_ms_picture_level": round(handler_ms("2-5"), 2),
                     "handler_ms_128": round(handler_ms(paragraph_level()[0], code=paragraph_level()[1]), 2)}
    answered: list[float] = []
    app_proc, app_url, summary["start_s"] = start_server("app.py", answered=answered)
    summary["answer_s"] = round(answered[0], 2)
    echo_proc, echo_url, _ = start_server("benchmarks/echo_app.py")
    try:
        t0 = time.perf_counter()
        wait_warm(app_url)  # the class comes to a server that is up: its runs at start are done (python app.py)
        summary["warm_up_s"] = round(time.perf_counter() - t0, 1)
        if CHROMIUM:
            score_changed = "(before) => document.querySelector('#panel .score-value').textContent !== before"
            echo_changed = "(before) => document.querySelector('#echo-out textarea').value !== before"
            sum_changed = "(before) => document.querySelector('#eight-out .sum')?.textContent !== before"
            ours, bare, shape = browser_medians([
                (f"{app_url}?level=2-1", "#panel input.range[data-i='2']", "#panel .score-value", score_changed),
                (echo_url, "#echo-slider input[type=range]", "#echo-out textarea", echo_changed),
                (echo_url, "#eight-3 input[type=range]", "#eight-out .sum", sum_changed),
            ])
            summary.update(
                browser_ms=round(ours * 1e3, 1),
                echo_browser_ms=round(bare * 1e3, 1),
                browser_ratio=round(ours / bare, 2),
                # context: a bare page with only the game's input shape (8 sliders → 1 HTML), ÷ the echo
                eight_slider_page_ms=round(shape * 1e3, 1),
                eight_slider_page_ratio=round(shape / bare, 2),
            )
        summary.update(class_figures(app_proc, app_url, echo_proc, echo_url))
    finally:
        for proc in (app_proc, echo_proc):
            proc.terminate()
            proc.wait(timeout=20)
    summary["start_s"] = round(summary["start_s"], 2)
    if load_at_start is not None:
        summary["machine_load"] = {"start": round(load_at_start, 2), "end": round(os.getloadavg()[0], 2),
                                   "cores": os.cpu_count()}
    try:
        import httptools  # noqa: F401
        import uvloop  # noqa: F401

        summary["http"] = "httptools + uvloop"
    except ImportError:
        summary["http"] = "h11 + asyncio"
    goals = [
        ("handler_ms", "≤ 25", summary["handler_ms"] <= 25),
        ("handler_ms_128", "≤ 25", summary["handler_ms_128"] <= 25),
        ("browser_ratio", "≤ 1.5", summary.get("browser_ratio", 99) <= 1.5),
        ("answer_s", "≤ 4", summary["answer_s"] <= 4),
        ("start_s", "≤ 8", summary["start_s"] <= 8),
        ("class_p95_ms", "≤ 150", summary["class_p95_ms"] <= 150),
        ("class_p95_ratio", "≤ 1.5", summary["class_p95_ratio"] <= 1.5),
        ("class_errors", "= 0", summary["class_errors"] == 0),
        ("class_128_p95_ms", "≤ 150", summary["class_128_p95_ms"] <= 150),
        ("class_128_p95_ratio", "≤ 1.5", summary["class_128_p95_ratio"] <= 1.5),
        ("class_128_errors", "= 0", summary["class_128_errors"] == 0),
        ("saturation_ratio", "≥ 0.8", summary["saturation_ratio"] >= 0.8),
    ]
    for name, goal, ok in goals:
        print(f"{name:16s} {summary.get(name)!s:>8}  goal {goal}  {'ok' if ok else 'MISSED'}")
    print(json.dumps(summary, ensure_ascii=False))


if __name__ == "__main__":
    main()

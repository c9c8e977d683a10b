"""App speed, as ratios taken in one run: python benchmarks/app.py (last line: JSON summary).

handler_ms     median server time to answer one slider change (the panel's server function, in process)
browser_ratio  real Chromium: slider change → new score shown, median, ÷ the same on a bare echo app; both pages
               are measured in alternating rounds, so a busy moment of the machine hits both alike
start_s        `python app.py` until the first page is served
load_*         40 players × 20 slider moves at once, each as the browser sends it: to the app's panel server
               function (one POST), and to the echo app's /echo through gradio_client
"""

import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dragon import game  # noqa: E402
from dragon.levels import get_level  # noqa: E402
from ui import play  # noqa: E402

PLAYERS, MOVES = 40, 20
ROUNDS, ROUND_MOVES = 4, 16  # browser latency: alternating rounds of slider moves on each page
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(script: str) -> tuple[subprocess.Popen, str, float]:
    """Start a server script on a free port; return it, its URL and the seconds until its page was served."""
    port = free_port()
    env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False"}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, script], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}/"
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{script} exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return proc, url, time.perf_counter() - t0
        except httpx.HTTPError:
            pass
        time.sleep(0.05)


def handler_ms(level_id: str, samples: int = 200) -> float:
    rng = random.Random(0)
    saved = game.save(game.new_progress())
    payload = {"level": level_id, "lang": "zh", "saved": saved}
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


def load(call) -> tuple[float, int]:
    """PLAYERS players in threads, MOVES calls each of call(player, rng); returns (calls per second, errors)."""
    errors = [0]
    lock = threading.Lock()

    def player(i: int) -> None:
        rng = random.Random(i)
        for _ in range(MOVES):
            try:
                call(i, rng)
            except Exception:
                with lock:
                    errors[0] += 1

    threads = [threading.Thread(target=player, args=(i,)) for i in range(PLAYERS)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return PLAYERS * MOVES / (time.perf_counter() - t0), errors[0]


def panel_mover(url: str, level_id: str):
    """A slider move as the panel's script sends it: one POST to its server function `live`."""
    config = httpx.get(f"{url}config").json()
    panel = next(c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == "panel")
    target = list(get_level(level_id).target_for("zh"))
    saved = game.save(game.new_progress())
    clients = [httpx.Client(timeout=30) for _ in range(PLAYERS)]

    def move(i: int, rng: random.Random) -> None:
        gates = [round(min(1, max(0, g + rng.uniform(-0.3, 0.3))), 2) for g in target]
        payload = {"level": level_id, "lang": "zh", "gates": gates, "saved": saved}
        body = {"data": payload, "component_id": panel, "fn_name": "live", "session_hash": f"load-{i}"}
        answer = clients[i].post(f"{url}gradio_api/component_server/", json=body)
        assert answer.status_code == 200 and "view" in answer.json()

    return move


def echo_mover(url: str):
    from gradio_client import Client

    clients = [Client(url, verbose=False) for _ in range(PLAYERS)]
    return lambda i, rng: clients[i].predict(rng.random(), api_name="/echo")


def main() -> None:
    summary: dict = {"handler_ms": round(handler_ms("2-1"), 2), "handler_ms_picture_level": round(handler_ms("2-5"), 2)}
    app_proc, app_url, summary["start_s"] = start_server("app.py")
    echo_proc, echo_url, _ = start_server("benchmarks/echo_app.py")
    try:
        if CHROMIUM:
            score_changed = "(before) => document.querySelector('#panel .score-value').textContent !== before"
            echo_changed = "(before) => document.querySelector('#echo-out textarea').value !== before"
            sum_changed = "(before) => document.querySelector('#eight-out .sum')?.textContent !== before"
            ours, bare, shape = browser_medians([
                (f"{app_url}?level=2-1", "#panel input.range[data-i='2']", "#panel .score-value", score_changed),
                (echo_url, "#echo-slider input[type=range]", "#echo-out textarea", echo_changed),
                (echo_url, "#eight-3 input[type=range]", "#eight-out .sum", sum_changed),
            ])  # fmt: skip
            summary.update(
                browser_ms=round(ours * 1e3, 1),
                echo_browser_ms=round(bare * 1e3, 1),
                browser_ratio=round(ours / bare, 2),
                # context: a bare page with only the game's input shape (8 sliders → 1 HTML), ÷ the echo
                eight_slider_page_ms=round(shape * 1e3, 1),
                eight_slider_page_ratio=round(shape / bare, 2),
            )
        app_rate, app_errors = load(panel_mover(app_url, "2-1"))
        echo_rate, echo_errors = load(echo_mover(echo_url))
        summary.update(
            load_errors=app_errors,
            echo_load_errors=echo_errors,
            load_moves_per_s=round(app_rate, 1),
            echo_moves_per_s=round(echo_rate, 1),
            load_ratio=round(app_rate / echo_rate, 2),
        )
    finally:
        for proc in (app_proc, echo_proc):
            proc.terminate()
            proc.wait(timeout=20)
    summary["start_s"] = round(summary["start_s"], 2)
    goals = [
        ("handler_ms", "≤ 25", summary["handler_ms"] <= 25),
        ("browser_ratio", "≤ 1.5", summary.get("browser_ratio", 99) <= 1.5),
        ("start_s", "≤ 8", summary["start_s"] <= 8),
        ("load_errors", "= 0", summary["load_errors"] == 0),
        ("load_ratio", "≥ 0.6", summary["load_ratio"] >= 0.6),
    ]
    for name, goal, ok in goals:
        print(f"{name:14s} {summary.get(name)!s:>8}  goal {goal}  {'ok' if ok else 'MISSED'}")
    print(json.dumps(summary, ensure_ascii=False))


if __name__ == "__main__":
    main()

"""The public API through the real app, driven with gradio_client."""

import inspect
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import gradio as gr
import httpx
import pytest
from gradio_client import Client

import app
from dragon import game
from dragon.levels.loader import get_level

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_api_page_lists_the_endpoints(client: Client) -> None:
    info = client.view_api(print_info=False, return_format="dict")
    assert {"/levels", "/play", "/hint", "/analyze"} <= set(info["named_endpoints"])


def test_levels(client: Client) -> None:
    levels = client.predict(api_name="/levels")
    ids = [lv["id"] for lv in levels]
    assert ids[:2] == ["1-1", "1-2"] and "2-10" in ids
    poem = next(lv for lv in levels if lv["id"] == "2-1")
    assert (
        poem["kind"] == "poem"
        and poem["chapter"] == 2
        and poem["title"] == {"zh": "静夜思", "en": "Quiet Night Thought"}
    )


@pytest.mark.slow
def test_play_and_hint(client: Client) -> None:
    target = list(get_level("2-1").target_for("zh"))
    won = client.predict("2-1", target, "zh", api_name="/play")
    assert won["score"] == 100 and won["stars"] == 3
    start = client.predict("2-1", [0.5] * 8, "en", api_name="/play")
    assert 0 <= start["score"] < 70 and start["stars"] == 0
    h = client.predict("2-1", [0.5] * 8, "zh", api_name="/hint")
    assert h["head"] == "emotion" and h["direction"] == 1 and len(h["gates"]) == 8
    better = client.predict("2-1", h["gates"], "zh", api_name="/play")
    assert better["score"] > start["score"] - 1e-9 or better["score"] > 59


def test_analyze(client: Client) -> None:
    r = client.predict("昨天在公园里，那个悲伤的小女孩正在快乐地玩耍。", "auto", api_name="/analyze")
    assert r["heads"][4] == "time" and set(r["top"]["time"][:2]) == {"昨天", "正在"}
    assert len(r["attention"]) == 8 and len(r["attention"][0]) == len(r["tokens"])


@pytest.mark.parametrize(
    "args, message",
    [
        (("2-1", [0.5] * 7), "8 values"),
        (("2-1", [0.5] * 7 + [1.5]), "between 0 and 1"),
        (("2-1", [-1] * 8), "between 0 and 1"),
        (("nope", [0.5] * 8), "unknown level"),
        (("1-2", [0.5] * 8), "not a slider level"),
    ],
)
@pytest.mark.parametrize("endpoint", ["/play", "/hint"])
def test_bad_calls_are_clear_errors_and_the_server_keeps_serving(client: Client, endpoint, args, message) -> None:
    with pytest.raises(Exception, match=message) as info:
        client.predict(*args, "zh", api_name=endpoint)
    assert "Traceback" not in str(info.value)
    assert client.predict("2-1", [0.5] * 8, "zh", api_name="/play")["score"] > 0  # still serving


def call_raw(app_url: str, endpoint: str, body: str) -> tuple[str, dict]:
    """POST a raw JSON body (NaN and Infinity included, as a hand-made client might send) and read the result."""
    post = httpx.post(
        f"{app_url}gradio_api/call/{endpoint}", content=body, headers={"Content-Type": "application/json"}
    )
    event_id = post.json()["event_id"]
    lines = httpx.get(f"{app_url}gradio_api/call/{endpoint}/{event_id}", timeout=30).text.splitlines()
    event = next(line.split(": ", 1)[1] for line in lines if line.startswith("event: "))
    data = json.loads(next(line.split(": ", 1)[1] for line in lines if line.startswith("data: ")))
    return event, data


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity", '"x"', "null"])
@pytest.mark.parametrize("endpoint", ["play", "hint"])
def test_nan_and_garbage_gates_over_raw_http(app_url, client: Client, endpoint, bad) -> None:
    event, data = call_raw(app_url, endpoint, f'{{"data": ["2-1", [{bad}, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5], "zh"]}}')
    assert event == "error"
    assert re.search("finite|numbers", data["error"]) and "Traceback" not in data["error"]
    assert client.predict("2-1", [0.5] * 8, "zh", api_name="/play")["score"] > 0  # still serving


@pytest.mark.parametrize("body", ['{"data": [["a", "b"], "auto"]}', '{"data": [null, "auto"]}', '{"data": ["hi", 3]}'])
def test_analyze_garbage_over_raw_http(app_url, body) -> None:
    event, data = call_raw(app_url, "analyze", body)
    assert event == "error" and "string" in data["error"]


@pytest.mark.parametrize("text, message", [("", "empty"), ("   ", "empty")])
def test_analyze_bad_text(client: Client, text, message) -> None:
    with pytest.raises(Exception, match=message):
        client.predict(text, "auto", api_name="/analyze")


def test_huge_text_through_the_api(client: Client) -> None:
    r = client.predict("很长的文字。" * 20000, "auto", api_name="/analyze")
    assert r["truncated"] is True and len(r["tokens"]) == 128


@pytest.mark.slow
def test_malformed_level_file_stops_startup(tmp_path: Path) -> None:
    bad = (
        (ROOT / "assets" / "levels" / "chapter2.yaml")
        .read_text(encoding="utf-8")
        .replace("emotion: 1.0", "emotion: 7", 1)
    )
    (tmp_path / "chapter2.yaml").write_text(bad, encoding="utf-8")
    env = {"DRAGON_LEVELS": str(tmp_path), "PATH": "/usr/bin:/bin", "GRADIO_SERVER_PORT": "1"}
    done = subprocess.run([sys.executable, "app.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "chapter2.yaml: levels[0] (2-1).target.emotion: must be a number between 0 and 1" in done.stderr
    assert "Traceback" not in done.stderr


def test_before_serving_the_levels_are_read_not_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    """app.py reads the level files' format before serving and nothing slower: no text goes through the analyser or
    the dragon (its dictionaries and the pronunciation data load after the page is served, with the claims)."""
    from dragon.levels import loader

    every = list(loader.all_levels())  # measured as the app does once it serves

    def slow(*args, **kwargs):
        raise AssertionError("a level was measured before serving")

    for name in ("check_level", "_missing_words", "read_tokens"):
        monkeypatch.setattr(loader, name, slow)
    chapters = loader.read_levels()
    assert [lv.id for c in chapters for lv in c.levels] == every  # every level, in order


def test_a_claim_the_engine_does_not_bear_out_stops_the_served_app(tmp_path: Path, capsys) -> None:
    """Measured after serving (app.measure_levels): a false claim stops the server with its file, as a bad field
    stops it before serving."""
    text = (ROOT / "assets" / "levels" / "chapter2.yaml").read_text(encoding="utf-8")
    assert "{head: emotion, words: [思]}" in text
    false = text.replace("{head: emotion, words: [思]}", "{head: emotion, silent: true}", 1)
    (tmp_path / "chapter2.yaml").write_text(false, encoding="utf-8")
    stopped: list[int] = []
    app.measure_levels(tmp_path, stop=stopped.append)
    assert stopped == [1] and "chapter2.yaml" in capsys.readouterr().err
    app.measure_levels(stop=stopped.append)  # the shipped levels: measured, nothing stops
    assert stopped == [1]


def live(app_url: str, payload) -> dict:
    """Call the control panel's server function the way its script does (one POST, outside the queue)."""
    config = httpx.get(f"{app_url}config").json()
    panel = next(c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == "panel")
    body = {"data": payload, "component_id": panel, "fn_name": "live", "session_hash": "test-live"}
    answer = httpx.post(f"{app_url}gradio_api/component_server/", json=body, timeout=30)
    assert answer.status_code == 200
    return answer.json()


@pytest.mark.slow
def test_the_panels_server_function_answers_a_slider_move(app_url) -> None:
    target = list(get_level("2-1").target_for("zh"))
    answer = live(app_url, {"level": "2-1", "lang": "zh", "gates": target, "saved": ""})
    assert answer["record"] is True and ">100.0<" in answer["view"]["gauge"]
    assert game.load(answer["saved"]).progress["stars"] == {"2-1": 3}  # what 'record' will save, signed
    for bad in ({"level": "2-1", "lang": "zh", "gates": [9] * 8}, {"level": "nope"}, "x", None):
        assert set(live(app_url, bad)) == {"error"}  # a clear refusal, never a crash


@pytest.mark.slow
def test_readme_api_example_runs(app_url) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"```python\nfrom gradio_client import Client\n(.+?)```", readme, re.S).group(0)
    code = code.strip("`").removeprefix("python\n").replace("http://localhost:7860/", app_url)
    lines = [line.split("  #")[0] for line in code.splitlines() if line.strip()]
    namespace: dict = {}
    exec("\n".join(lines[:2]), namespace)
    results = [eval(line, namespace) for line in lines[2:]]
    assert results[1]["score"] == 100 and results[1]["stars"] == 3
    assert results[2]["head"] == "emotion" and results[-1]["tokens"][0] == "昨天"
    assert results[3]["claims"] and results[3]["why"] == get_level("2-1").why["en"]
    checked = [r for r in results if isinstance(r, dict) and "quality" in r]
    assert len(checked) == 1 and checked[0]["ok"] and checked[0]["code"].startswith("T1.")


def test_check_level_over_the_api_as_the_readme_shows(client: Client) -> None:
    level = ('{"title": {"zh": "静夜思", "en": "Quiet Night"}, "lang": "zh", '
             '"text": "床前明月光，疑是地上霜。举头望明月，低头思故乡。", '
             '"target": {"emotion": 0.9, "tone": 0.8, "space": 0.3}}')
    good = client.predict(level, api_name="/check_level")
    assert good["ok"] and good["errors"] == [] and good["code"].startswith("T1.")
    assert set(good["quality"]) == {"all_equal", "random_median", "near_median", "ascent_steps"}
    bad = client.predict("title: x\nlang: fr\n", api_name="/check_level")
    assert bad["ok"] is False and "lang: must be zh or en, not 'fr'" in bad["errors"]


@pytest.mark.slow
def test_a_class_costs_the_server_little_per_move(app_url) -> None:
    """What a slider move costs the server: its answer runs on the event loop (no worker thread), a better score
    is saved by one POST outside the queue, and Gradio's per-event monitoring table is neither kept nor served."""
    demo = app.build_app()
    panel = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "panel")
    assert inspect.iscoroutinefunction(panel.live) and panel.live.__name__ == "live"
    config = httpx.get(f"{app_url}config").json()
    served = next(c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == "panel")
    record = next(d for d in config["dependencies"] if [served, "record"] in d["targets"])
    assert record["queue"] is False and record["trigger_mode"] == "always_last"
    assert httpx.get(f"{app_url}monitoring/summary").status_code == 403
    with gr.Blocks() as other:
        gr.Textbox()
    queue = app.queue(other)._queue  # as launch() makes it
    queue.events_recorded = 10**6  # however many events have passed…
    past = [{"function": "f", "status": "success", "process_time": 0.01, "time": 0.0, "session_hash": "s"}]
    assert queue.compute_analytics_summary(past) == {"functions": {}}  # …no table of them is built


BIG = "1" + "0" * 400  # 10^400 as a JSON number: an int Python cannot turn into a float


@pytest.mark.parametrize(
    "endpoint, data, message",
    [
        ("play", '["2-1", [true, true, true, true, true, true, true, true], "en"]', "8 numbers"),  # bools are no gates
        ("play", '["2-1", [[0.5], [0.5], [0.5], [0.5], [0.5], [0.5], [0.5], [0.5]], "en"]', "8 numbers"),
        ("play", '["2-1"]', "needs level_id, gates, lang; got 1"),  # a missing argument, named
        ("grow", f"[{BIG}, 0]", "steps must be in 30…3000, not a number of 401 digits"),
        ("grow", f"[600, {BIG}]", "seed must be in 0…2147483647, not a number of 401 digits"),
        ("grow", "[600, 1e400]", "seed must be a whole number"),  # 1e400 reads as infinity
        ("race", f"[[16, {BIG}]]", "each length must be in 1…2048"),
        ("race", "[[16, true]]", "True is not one"),
        ("prune", "[[1, 1, 1, 1, 1, 1, 1, [1]]]", "each switch must be 1 (on) or 0 (off), not [1]"),
    ],
)
def test_wrong_types_and_huge_numbers_are_clear_errors(app_url, endpoint: str, data: str, message: str) -> None:
    event, answer = call_raw(app_url, endpoint, f'{{"data": {data}}}')
    assert event == "error" and answer["error"] and message in answer["error"], answer


def test_an_unknown_id_is_echoed_at_most_40_characters_and_logged_in_one_line(app_url, capfd, caplog) -> None:
    long_id = "x" * 5000
    event, answer = call_raw(app_url, "play", json.dumps({"data": [long_id, [0.5] * 8, "en"]}))
    assert event == "error" and "unknown level" in answer["error"]
    assert "x" * 40 not in answer["error"] and len(answer["error"]) < 400, answer["error"]
    event, _ = call_raw(app_url, "explain", '{"data": ["2-1", "xx"]}')
    assert event == "error"
    assert "Traceback" not in capfd.readouterr().err
    lines = [r.getMessage() for r in caplog.records if r.name == "dragon.refused"]
    assert any("unknown level" in line and "\n" not in line and len(line) < 500 for line in lines), lines


def test_a_body_over_the_limit_is_refused_unread_and_the_others_keep_playing(app_url, client: Client) -> None:
    from ui.server.body_limit import MAX_BODY_BYTES

    body = json.dumps({"data": ["2-1", [0.5] * (MAX_BODY_BYTES // 4), "en"]})  # 10 MB of gates, in spirit
    assert len(body) > MAX_BODY_BYTES
    answer = httpx.post(f"{app_url}gradio_api/call/play", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 413 and f"over {MAX_BODY_BYTES} bytes" in answer.json()["error"]
    t0 = time.perf_counter()
    assert client.predict(api_name="/levels")
    assert time.perf_counter() - t0 < 1.0


def test_the_sessions_the_server_keeps_are_bounded(app_server, client: Client) -> None:
    demo, _ = app_server
    assert demo.state_holder.capacity == app.SESSIONS_HELD <= 2000  # ≈64 KB each: at most a stated ~130 MB
    for _ in range(3):
        client.predict(api_name="/levels")  # each API call is a session of its own
    assert 0 < len(demo.state_holder.session_data) <= app.SESSIONS_HELD

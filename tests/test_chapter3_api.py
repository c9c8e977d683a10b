"""Chapter 3's public endpoints through the real app with gradio_client: head_math, race, long_scroll, fusion,
heads_experiment, with clear errors for bad input (and the server keeps serving)."""

import pytest
from gradio_client import Client

from dragon.runs import RUNS
from tests.test_app_api import call_raw

ZH = "昨天在公园里，那个悲伤的小女孩正在快乐地玩耍。"
EN = "The teacher told the students that they should study hard."


def test_api_page_lists_the_chapter_three_endpoints(client: Client) -> None:
    info = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert {"/head_math", "/race", "/long_scroll", "/fusion", "/heads_experiment"} <= set(info)
    assert [p["parameter_name"] for p in info["/long_scroll"]["parameters"]] == ["lengths", "window"]
    assert [p["parameter_name"] for p in info["/head_math"]["parameters"]] == ["text", "lang", "word", "head"]
    assert info["/heads_experiment"]["parameters"] == []  # no progress parameter on the API


def test_head_math(client: Client) -> None:
    r = client.predict(EN, "en", "they", "context", api_name="/head_math")
    assert {"tokens", "scores", "weights", "output_norm", "shapes"} <= set(r)
    assert len(r["scores"]) == len(r["weights"]) == len(r["tokens"]) + 1  # the sink first
    assert abs(sum(r["weights"]) - 1) < 1e-5 and r["winner_key"] == "students" and r["device"] == "cpu"


def test_race(client: Client) -> None:
    r = client.predict([16, 64], api_name="/race")
    assert {"device", "lengths", "loop_ms", "batched_ms", "speedup", "flops_loop", "flops_batched"} <= set(r)
    assert r["lengths"] == [16, 64] and r["flops_loop"] == r["flops_batched"] and r["device"] == "cpu"
    assert all(v > 0 for v in r["loop_ms"] + r["batched_ms"] + r["speedup"])


def test_long_scroll(client: Client) -> None:
    r = client.predict([64, 256], 4, api_name="/long_scroll")
    assert r["lengths"] == [64, 256] and r["window"] == 4 and r["device"] == "cpu" and r["repeats"] == 5
    assert r["full_bytes"] == [8 * T * T * 4 for T in (64, 256)]  # h × T × T float32 scores
    assert all(d <= 1e-4 for d in r["kernel_diff"]) and set(r["heads"]) == {"zh", "en"}


def test_fusion(client: Client) -> None:
    r = client.predict(ZH, "zh", api_name="/fusion")
    assert r["keep_with_residual"] > r["keep_without_residual"] + 0.3
    assert len(r["switches"]) == 4 and r["steps"] == ["concat", "w_o", "residual"]


@pytest.mark.slow
def test_heads_experiment(client: Client) -> None:
    r = client.predict(api_name="/heads_experiment")  # the server's run (the suite's short one, shared)
    ex = RUNS.sizes.experiment
    assert {"heads", "params", "final_loss", "final_accuracy", "curves", "device", "seconds"} <= set(r)
    assert r["heads"] == [1, 2, 4, 8, 16] and r["params"] == [4 * 64 * 64 + 4 * 64] * 5
    assert len(r["curves"]["step"]) == ex.curve_points and all(len(c) == ex.curve_points for c in r["curves"]["loss"])


@pytest.mark.parametrize(
    "endpoint, args, message",
    [
        ("/race", ([0, 16],), r"in 1…2048, not 0"),
        ("/race", ([4096],), r"in 1…2048, not 4096"),
        ("/race", (list(range(1, 10)),), "at most 8 lengths"),
        ("/race", ([],), "non-empty list"),
        ("/long_scroll", ([], 8), "non-empty list"),
        ("/long_scroll", ([64, 20000], 8), "each length must be in 2…16384"),
        ("/long_scroll", ([64], 0), "window must be in 1…64"),
        ("/head_math", (ZH, "zh", "猫", "time"), "'猫' is not a token of the text; its tokens are: 昨天 / 在"),
        ("/head_math", (ZH, "zh", "公园", "cat"), "unknown head 'cat'"),
        ("/head_math", ("", "zh", "a", "time"), "text is empty"),
        ("/head_math", (ZH, "fr", "公园", "time"), "lang must be"),
        ("/fusion", ("   ", "en"), "text is empty"),
    ],
)
def test_bad_calls_are_clear_errors(client: Client, endpoint: str, args: tuple, message: str) -> None:
    with pytest.raises(Exception, match=message) as info:
        client.predict(*args, api_name=endpoint)
    assert "Traceback" not in str(info.value)
    assert client.predict([8, 16], api_name="/race")["lengths"] == [8, 16]  # still serving


@pytest.mark.parametrize("body", ['{"data": ["16"]}', '{"data": [[1.5]]}', '{"data": [["a"]]}', '{"data": [[true]]}'])
def test_race_garbage_over_raw_http(app_url: str, body: str) -> None:
    event, data = call_raw(app_url, "race", body)
    assert event == "error" and "Traceback" not in data["error"]

"""Chapters 4–5's public endpoints through the real app with gradio_client: crystal_ball, tower, grow, prune,
positions, with clear errors for bad input and capped sizes (and the server keeps serving)."""

import pytest
from gradio_client import Client

EN = "The teacher told the students that they should study hard."


def test_api_page_lists_the_chapter_four_and_five_endpoints(client: Client) -> None:
    info = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    params = {name: [p["parameter_name"] for p in info[f"/{name}"]["parameters"]]
              for name in ("crystal_ball", "tower", "grow", "prune", "positions")}
    assert params == {"crystal_ball": ["text", "word", "referent"], "tower": [], "grow": ["steps", "seed"],
                      "prune": ["active"], "positions": ["text", "lang"]}  # (no progress parameter)


def test_crystal_ball_finds_the_they_to_students_head(client: Client) -> None:
    r = client.predict(EN, "they", api_name="/crystal_ball")
    assert r["model"] == "all-MiniLM-L6-v2" and (r["layers"], r["heads"]) == (6, 12)
    assert len(r["attention"]) == 6 and all(len(row) == len(r["tokens"]) for layer in r["attention"] for row in layer)
    assert r["attention"][3][1][r["tokens"].index("students")] > 0.9  # L4H2 sends they → students
    assert set(r["best"]) >= {"layer", "head", "token", "weight"} and r["best"]["token"] != "they"


def test_crystal_ball_judges_the_head_against_your_referent(client: Client) -> None:
    j = client.predict(EN, "they", "students", api_name="/crystal_ball")["judged"]
    assert j["head"] == "L4H2" and j["verdict"] == "right" and j["top"] == "students" and j["mostly"]
    small = "The trophy did not fit in the suitcase because it was too small."
    j = client.predict(small, "it", "suitcase", api_name="/crystal_ball")["judged"]
    assert j["verdict"] == "wrong" and j["top"] == "trophy" and j["referent_w"] < j["top_w"]
    assert "judged" not in client.predict(EN, "they", api_name="/crystal_ball")  # no referent, no verdict


@pytest.mark.slow
def test_tower_grow_prune_positions(client: Client) -> None:
    tw = client.predict(api_name="/tower")
    assert len(tw["per_layer"]) == 6 and not tw["findings"]["distance_rises_every_layer"]
    g = client.predict(40, 1, api_name="/grow")
    assert len(g["loss"]) == len(g["specialisation"]) == len(g["steps"]) and g["steps"][-1] == 40 and g["snapshots"]
    p = client.predict([1, 1, 1, 1, 1, 1, 1, 0], api_name="/prune")
    assert 0 < p["accuracy"] <= 1 and p["full_accuracy"] > 0.9 and p["off"] == 1
    pos = client.predict("我爱你", "zh", api_name="/positions")
    assert pos["max_diff_unpermuted_no_positions"] < 1e-5 < 0.1 < pos["diff_with_positions"]


@pytest.mark.parametrize(
    "endpoint, args, message",
    [
        ("/crystal_ball", ("", "they"), "text is empty"),
        ("/crystal_ball", ("word " * 300, "word"), "at most 1000"),
        ("/crystal_ball", (EN, "she"), "'she' is not a word of the text"),
        ("/crystal_ball", (EN, "they", "pupils"), "'pupils' is not another word of the sentence"),
        ("/grow", (5000, 0), r"steps must be in 30…3000, not 5000"),
        ("/grow", (10, 0), r"steps must be in 30…3000, not 10"),
        ("/prune", ([1, 0],), "list of 8 switches"),
        ("/prune", ([1, 1, 1, 1, 1, 1, 1, 2],), "must be 1 \\(on\\) or 0 \\(off\\)"),
        ("/positions", ("", "zh"), "text is empty"),
        ("/positions", ("我爱你", "fr"), "lang must be"),
    ],
)
def test_bad_calls_are_clear_errors(client: Client, endpoint: str, args: tuple, message: str) -> None:
    with pytest.raises(Exception, match=message) as info:
        client.predict(*args, api_name=endpoint)
    assert "Traceback" not in str(info.value)
    assert client.predict("我爱你", "zh", api_name="/positions")["tokens_a"] == ["我", "爱", "你"]  # still serving

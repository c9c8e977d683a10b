"""Chapter 3's lessons through the API: the formula's numbers, the race, fusion, the heads experiment, the facts."""

import math
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from dragon import api
from dragon.analyze import analyze
from dragon.attention import MultiHeadAttention
from dragon.config import HEADS
from dragon.engine import default_dragon
from dragon.lessons import facts as facts_table
from dragon.lessons.fusion import block_output
from dragon.lessons.head_math import head_math
from dragon.lessons.heads_experiment import Experiment, curves_frame, run
from dragon.lessons.race import flops, race_frame
from dragon.lessons.race import gradients as race_gradients
from dragon.runtime.gpu import on_gpu

ROOT = Path(__file__).resolve().parent.parent
ZH = "昨天在公园里，那个悲伤的小女孩正在快乐地玩耍。"
EN = "The teacher told the students that they should study hard."


# 3-1 Inside the formula


@pytest.mark.parametrize(
    "text, lang, word, head",
    [
        (ZH, "zh", "玩耍", "time"),
        (ZH, "zh", "小女孩", "emotion"),
        (EN, "en", "they", "context"),
        (EN, "en", "hard", "tone"),
    ],
)
def test_head_math_row_is_the_engines_map_row(text: str, lang: str, word: str, head: str) -> None:
    m = api.head_math(text, lang, word, head)
    reading = default_dragon().read(text, lang)
    h, pos = HEADS.index(head), reading.tokens.index(word)
    assert m["position"] == pos and m["keys"] == ["⟨sink⟩", *reading.tokens] and m["tokens"] == reading.tokens
    weights = torch.tensor(m["weights"])
    assert abs(float(weights.sum()) - 1) <= 1e-5
    assert torch.allclose(weights, reading.weights[h, pos + 1], atol=1e-5)  # the engine's map row, sink first
    assert torch.allclose(weights[1:], torch.tensor(analyze(text, lang)["attention"][h][pos]), atol=1e-5)  # as drawn
    assert m["winner"] == int(reading.weights[h, pos + 1].argmax())
    assert torch.allclose(torch.tensor(m["output"]), reading.parts[h, pos], atol=1e-5)  # the head's part of fused
    assert m["output_norm"] == pytest.approx(float(reading.parts[h, pos].norm()), abs=1e-5)
    s = m["shapes"]
    T1, d, dh = len(reading.tokens) + 1, m["d_model"], m["d_head"]
    assert (s["q"], s["K"], s["scores"], s["W_O_slice"], s["output"]) == ([dh], [T1, dh], [T1], [d, dh], [d])
    assert (len(m["q"]), len(m["k"]), len(m["k"][0])) == (dh, T1, dh)
    assert (len(m["w_o_slice"]), len(m["w_o_slice"][0]), len(m["output"])) == (d, dh, d)


def test_head_math_scores_by_hand() -> None:
    """q·k/√d_head and the softmax, recomputed with plain Python sums from the packed W_Q/W_K rows."""
    m = api.head_math(ZH, "zh", "玩耍", "space")
    reading = default_dragon().read(ZH, "zh")
    mha = default_dragon().attention
    d, dh, h = mha.d_model, mha.d_head, HEADS.index("space")
    w = mha.in_proj.weight.cpu().tolist()
    x = reading.x.tolist()
    row = x[m["position"] + 1]
    q = [sum(w[h * dh + i][j] * row[j] for j in range(d)) for i in range(dh)]
    keys = [[sum(w[d + h * dh + i][j] * xk[j] for j in range(d)) for i in range(dh)] for xk in x]
    scores = [sum(a * b for a, b in zip(q, k, strict=True)) / math.sqrt(dh) for k in keys]
    assert m["sqrt_d_head"] == math.sqrt(dh) == 4
    assert m["q"] == pytest.approx(q, abs=1e-5)
    assert m["scores"] == pytest.approx(scores, abs=1e-4)
    z = sum(math.exp(s - max(scores)) for s in scores)
    assert m["weights"] == pytest.approx([math.exp(s - max(scores)) / z for s in scores], abs=1e-5)


# 3-2 The race


def test_race_same_flops_positive_times_same_output() -> None:
    r = api.race([16, 64])
    assert r["lengths"] == [16, 64] and r["device"] == "cpu" and r["kernel"] == "fused"
    assert r["flops_loop"] == r["flops_batched"] and all(f > 0 for f in r["flops_loop"])
    assert all(t > 0 for t in r["loop_ms"] + r["batched_ms"])
    assert r["speedup"] == pytest.approx([a / b for a, b in zip(r["loop_ms"], r["batched_ms"], strict=True)], rel=1e-2)
    assert r["same_output"] and max(r["max_abs_diff"]) <= 1e-4
    assert r["matmuls_loop"] == 5 * r["n_heads"] + 1 and r["matmuls_batched"] == 4
    frame = race_frame(r)
    assert list(frame.columns) == ["length", "path", "ms"] and len(frame) == 4


@pytest.mark.parametrize("T", [1, 33])
def test_race_paths_agree_and_flops_match_torchs_count(T: int) -> None:
    torch.manual_seed(T)
    mha = MultiHeadAttention(128, 8).eval()
    x = torch.randn(1, T, 128)
    counted = {}
    with torch.inference_mode():
        for path, fn, inp in (("batched", mha.forward, x), ("loop", mha.forward_sequential, x[None])):
            with FlopCounterMode(display=False) as fc:
                out = fn(inp, need_weights=True).out
            counted[path] = (fc.get_total_flops(), out.reshape(1, T, 128))
        fused_loop = mha.forward_sequential(x[None], need_weights=False).out[0]
        fused_batched = mha(x, need_weights=False).out
    assert torch.allclose(counted["loop"][1], counted["batched"][1], atol=1e-5)
    assert torch.allclose(fused_loop, fused_batched, atol=1e-5)
    assert counted["loop"][0] == counted["batched"][0] == flops("loop", T, 128, 8) == flops("batched", T, 128, 8)


def test_the_gradient_fact_check_one_backward_pass_and_no_parameter_shared_between_heads() -> None:
    """3-2's second fact check, against autograd directly: the batched backward equals the loop's; a loss on one
    head's output reaches only that head's rows of W_Q, W_K, W_V (and W^O); with two heads on, both heads' rows."""
    g = race_gradients()
    assert g == {"heads": 8, "max_abs_diff": g["max_abs_diff"], "same_gradients": True, "other_heads_nonzero": 0,
                 "own_heads_nonzero": 8, "out_proj_from": 8}
    assert g["max_abs_diff"] <= 1e-6
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4)
    x = torch.randn(1, 6, 16)
    gates = torch.tensor([0.0, 1.0, 0.0, 1.0])
    mha(x, gates=gates, residual=False).fused.pow(2).sum().backward()
    rows = mha.in_proj.weight.grad.view(3, 4, 4, 16).abs().sum(dim=(0, 2, 3))  # each head's Q, K, V rows
    assert rows[0] == 0 and rows[2] == 0 and rows[1] > 0 and rows[3] > 0  # a sensitive check: it can fail


# 3-3 Fusion


def test_fusion_residual_keeps_the_input() -> None:
    f = api.fusion(ZH, "zh")
    assert f["keep_with_residual"] > f["keep_without_residual"] + 0.3
    assert f["steps"] == ["concat", "w_o", "residual"]
    by = {(s["w_o"], s["residual"]): s["keep"] for s in f["switches"]}
    assert by[True, True] == f["keep_with_residual"] and by[True, False] == f["keep_without_residual"]
    assert by[False, True] > by[False, False]
    assert len(f["keep_per_token_with_residual"]) == len(f["tokens"])


def test_fusion_w_o_off_keeps_heads_apart_and_w_o_on_mixes_them() -> None:
    f = api.fusion(EN, "en")
    dh, n = f["d_head"], len(HEADS)
    off, on = torch.tensor(f["weight_reach"]["w_o_off"]), torch.tensor(f["weight_reach"]["w_o_on"])
    assert off.shape == on.shape == (n, f["d_model"])
    assert ((off > 0).sum(dim=0) == 1).all()  # each output dim reached by exactly one head …
    assert off.argmax(dim=0).tolist() == f["block_of_dim"] == [j // dh for j in range(f["d_model"])]  # … its own
    assert ((on > 0.01).sum(dim=0) == n).all()  # W^O: every head feeds every dim
    energy_off = torch.tensor(f["reach"]["w_o_off"])
    live = energy_off.sum(dim=0) > 0.5
    assert live.sum() >= 4 * dh and ((energy_off[:, live] > 1e-6).sum(dim=0) == 1).all()
    assert f["heads_per_dim"]["w_o_off"] == 1.0 and f["weight_heads_per_dim"]["w_o_off"] == 1.0
    assert f["heads_per_dim"]["w_o_on"] > 1.5 and f["weight_heads_per_dim"]["w_o_on"] > 4


def test_fusion_block_output_is_the_engines() -> None:
    dragon = default_dragon()
    reading = dragon.read(ZH, "zh")
    with torch.no_grad():
        res = dragon.forward(reading.x)
    assert torch.allclose(block_output(dragon.attention, reading, True, True), res.out[1:].cpu(), atol=1e-5)
    assert torch.allclose(block_output(dragon.attention, reading, True, False), reading.fused(torch.ones(8)), atol=1e-5)


# 3-4 How many heads?


@pytest.fixture(scope="module")
def short_run() -> tuple[dict, list[float]]:
    seen: list[float] = []
    threads = torch.get_num_threads()
    result = run(Experiment(steps=150, curve_points=15), progress=lambda f, *_: seen.append(f))
    assert torch.get_num_threads() == threads  # the one-thread training gives the threads back
    return result, seen


@pytest.mark.slow
def test_heads_experiment_equal_params_one_head_clearly_worse(short_run) -> None:
    r, seen = short_run
    d = r["d_model"]
    assert r["heads"] == [1, 2, 4, 8, 16] and r["d_head"] == [d // h for h in r["heads"]]
    assert r["params"] == [4 * d * d + 4 * d] * 5 == [r["params_formula"]] * 5
    assert len(set(r["params_total"])) == 1
    acc = r["final_accuracy"]
    assert max(acc) >= 0.9 and acc[0] <= max(acc) - 0.4  # one head: clearly worse than the best
    assert acc[0] < acc[1] < acc[2]  # more heads help until every relation has one
    assert r["final_loss"][0] > 3 * min(r["final_loss"])
    assert len(r["curves"]["step"]) == 15 and all(len(c) == 15 for c in r["curves"]["loss"])
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0)
    assert r["device"] == "cpu" and r["seconds"] > 0
    assert len(curves_frame(r)) == 5 * 15


def test_heads_experiment_is_deterministic() -> None:
    ex = Experiment(heads=(2,), steps=20, curve_points=5)
    a, b = run(ex), run(ex)
    for key in ("final_loss", "final_accuracy", "curves", "params"):
        assert a[key] == b[key]


# The facts table


def test_facts_table_computes_totals() -> None:
    f = api.facts()
    by = {m["id"]: m for m in f["models"]}
    assert by["gpt3-175b"]["total_heads"] == 96 * 96 == 9216 != by["gpt3-175b"]["lesson_says"]["total_heads"]
    assert (by["bert-base"]["total_heads"], by["bert-large"]["total_heads"]) == (144, 384)
    assert [by[f"gpt2-{s}"]["total_heads"] for s in ("small", "medium", "large", "xl")] == [144, 384, 720, 1200]
    assert (by["llama3-8b"]["total_heads"], by["llama3-8b"]["kv_heads"], by["llama3-8b"]["d_head"]) == (1024, 8, 128)
    assert {m["d_head"] for m in f["models"] if not m["id"].startswith(("gpt3", "llama"))} == {64}
    assert [(r["h"], r["d_k"], r["bleu"]) for r in f["vaswani"]["rows"]] == [
        (1, 512, 24.9), (4, 128, 25.5), (8, 64, 25.8), (16, 32, 25.8), (32, 16, 25.4)]


@pytest.mark.parametrize("h", [1, 12, 768])
def test_mha_params_identity_for_d_768(h: int) -> None:
    d = 768
    assert facts_table.mha_params(d) == 4 * d * d + 4 * d == api.facts()["models"][0]["mha_params"]
    assert sum(p.numel() for p in MultiHeadAttention(d, h).parameters()) == facts_table.mha_params(d)
    assert sum(p.numel() for p in torch.nn.MultiheadAttention(d, h).parameters()) == facts_table.mha_params(d)


def test_facts_quiz() -> None:
    right = api.facts_quiz("gpt3-total-heads", "9 216")
    assert right["correct"] and right["answer"] == 9216 and right["lesson_says"] == 1152
    wrong = api.facts_quiz("gpt3-total-heads", 1152)
    assert not wrong["correct"] and wrong["model"]["layers"] == wrong["model"]["heads"] == 96
    assert api.facts_quiz("mha-params-768", 2362368)["correct"]
    assert api.facts_quiz("vaswani-one-head-bleu", 24.9)["correct"]
    for q in api.facts()["quiz"]:
        assert set(q["question"]) == {"zh", "en"}
        assert api.facts_quiz(q["id"], facts_table.expected(api.facts(), q))["correct"]


def test_malformed_facts_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "facts.yaml"
    path.write_text("models:\n  - {id: x, name: X, layers: 12, heads: 0, d_model: 768, bias: true}\n")
    with pytest.raises(facts_table.FactsError, match=r"facts.yaml models\[0\]: heads must be a positive integer"):
        facts_table.load_facts(path)


# Errors and the GPU decorator


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: api.head_math("", "zh", "a", "time"), "text is empty"),
        (lambda: api.head_math(ZH, "zh", "猫", "time"), r"'猫' is not a token of the text; its tokens are: 昨天 / 在"),
        (lambda: api.head_math(ZH, "zh", "公园", "cat"), r"unknown head 'cat'; the heads are grammar, semantics"),
        (lambda: api.head_math(ZH, "fr", "公园", "time"), "lang must be"),
        (lambda: api.fusion("   ", "en"), "text is empty"),
        (lambda: api.race([]), "non-empty list of positive integers"),
        (lambda: api.race("1024"), "non-empty list of positive integers"),
        (lambda: api.race([0, 16]), r"in 1…2048, not 0"),
        (lambda: api.race([4096]), r"in 1…2048, not 4096"),
        (lambda: api.race([16.5]), "16.5 is not one"),
        (lambda: api.race([True]), "True is not one"),
        (lambda: api.race(list(range(1, 10))), "at most 8 lengths"),
        (lambda: api.facts_quiz("nope", 1), "unknown question 'nope'"),
        (lambda: api.facts_quiz("gpt3-total-heads", "many"), "answer must be a number"),
    ],
)
def test_api_errors_are_clear(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_on_gpu_is_the_identity_without_spaces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "spaces", None)  # `import spaces` now raises ImportError

    def f() -> int:
        return 1

    assert on_gpu(f) is f and on_gpu(duration=5)(f) is f


def test_on_gpu_applies_spaces_gpu_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    fake = types.ModuleType("spaces")
    fake.GPU = lambda duration: lambda fn: calls.append(duration) or (lambda: ("on gpu", fn()))
    monkeypatch.setitem(sys.modules, "spaces", fake)
    assert on_gpu(duration=7)(lambda: 2)() == ("on gpu", 2) and calls == [7]


@pytest.mark.slow
def test_lessons_import_no_ui() -> None:
    code = "import sys, dragon.api; assert not {'gradio', 'pandas', 'spaces'} & set(sys.modules), 'UI imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_lessons_handle_biases_like_the_block() -> None:
    """On a random block with biases (the dragon has none), the step-by-step numbers still equal the block's."""
    torch.manual_seed(4)
    mha = MultiHeadAttention(32, 4, bias=True).eval()
    x = torch.randn(6, 32)  # (T + 1, d), row 0 plays the sink
    with torch.no_grad():
        res = mha(x)
    reading = types.SimpleNamespace(x=x, weights=res.weights, tokens=list("abcde"))
    assert torch.allclose(block_output(mha, reading), res.out[1:], atol=1e-5)
    assert torch.allclose(block_output(mha, reading, residual=False), res.fused[1:], atol=1e-5)
    parts = [torch.tensor(head_math(mha, reading, 2, h)["output"]) for h in range(4)]
    assert torch.allclose(sum(parts) + mha.out_proj.bias, res.fused[3], atol=1e-5)  # Σ heads' parts + W^O's bias
    assert torch.tensor(head_math(mha, reading, 2, 1)["weights"]).allclose(res.weights[1, 3], atol=1e-5)

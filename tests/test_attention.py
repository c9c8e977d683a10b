"""The attention core equals PyTorch's own, gates remove exactly one head, batched == sequential."""

import pytest
import torch
from torch import nn

from dragon.attention import MultiHeadAttention
from dragon.runtime.device import best_device, interactive_device

D, H = 64, 8


def random_pair(seed: int = 0, bias: bool = True) -> tuple[MultiHeadAttention, nn.MultiheadAttention]:
    torch.manual_seed(seed)
    ours = MultiHeadAttention(D, H, bias=bias)
    for p in ours.parameters():
        nn.init.normal_(p, std=D**-0.5)  # realistic scale: outputs of order 1
    ref = nn.MultiheadAttention(D, H, bias=bias, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(ours.in_proj.weight)
        ref.out_proj.weight.copy_(ours.out_proj.weight)
        if bias:
            ref.in_proj_bias.copy_(ours.in_proj.bias)
            ref.out_proj.bias.copy_(ours.out_proj.bias)
    return ours.eval(), ref.eval()


@pytest.mark.parametrize("T", [1, 2, 7, 16, 64, 65])
@pytest.mark.parametrize("bias", [True, False])
def test_matches_torch_multihead_attention(T: int, bias: bool) -> None:
    ours, ref = random_pair(T, bias)
    x = torch.randn(3, T, D)
    with torch.no_grad():
        mine = ours(x, gates=torch.ones(H))
        theirs, their_weights = ref(x, x, x, need_weights=True, average_attn_weights=False)
    assert (mine.fused - theirs).abs().max() <= 1e-5
    assert (mine.out - (x + theirs)).abs().max() <= 1e-5  # residual
    assert (mine.weights - their_weights).abs().max() <= 1e-5


def test_matches_scaled_dot_product_attention() -> None:
    ours, _ = random_pair(3)
    x = torch.randn(2, 10, D)
    q, k, v = ours.in_proj(x).split(D, dim=-1)
    split = lambda t: t.view(2, 10, H, D // H).transpose(1, 2)  # noqa: E731
    sdpa = torch.nn.functional.scaled_dot_product_attention(split(q), split(k), split(v))
    expected = ours.out_proj(sdpa.transpose(1, 2).reshape(2, 10, D))
    with torch.no_grad():
        assert (ours(x).fused - expected).abs().max() <= 1e-5


@pytest.mark.parametrize("head", range(H))
def test_zero_gate_removes_exactly_that_head(head: int) -> None:
    ours, _ = random_pair(11, bias=False)
    x = torch.randn(12, D)
    dh = D // H
    with torch.no_grad():
        res = ours(x)
        v = ours.in_proj(x)[:, 2 * D + head * dh : 2 * D + (head + 1) * dh]  # (T, d_head)
        contribution = (res.weights[head] @ v) @ ours.out_proj.weight[:, head * dh : (head + 1) * dh].T
        gates = torch.ones(H)
        gates[head] = 0.0
        gated = ours(x, gates)
    assert (gated.fused - (res.fused - contribution)).abs().max() <= 1e-5
    assert contribution.abs().max() > 1e-2  # the head did contribute something to remove
    assert torch.equal(gated.weights, res.weights)  # gates act after attention, maps unchanged


def test_gates_scale_linearly() -> None:
    ours, _ = random_pair(5, bias=False)
    x = torch.randn(9, D)
    g = torch.rand(H)
    with torch.no_grad():
        assert (ours(x, g * 0.5).fused - 0.5 * ours(x, g).fused).abs().max() <= 1e-5
        assert ours(x, torch.zeros(H)).fused.abs().max() == 0


@pytest.mark.parametrize("T", [1, 5, 64, 256])
def test_batched_equals_sequential(T: int) -> None:
    ours, _ = random_pair(T)
    ours.norm = nn.LayerNorm(D)
    x = torch.randn(2, T, D)
    g = torch.rand(H)
    with torch.no_grad():
        a, b = ours(x, g), ours.forward_sequential(x, g)
    for left, right in zip(a, b, strict=True):
        assert (left - right).abs().max() <= 1e-5


@pytest.mark.parametrize("sequential", [False, True])
def test_fused_kernel_path_matches(sequential: bool) -> None:
    ours, _ = random_pair(8)
    x = torch.randn(2, 33, D)
    g = torch.rand(H)
    run = ours.forward_sequential if sequential else ours.forward
    with torch.no_grad():
        with_maps, without = run(x, g), run(x, g, need_weights=False)
    assert without.weights is None
    assert (with_maps.out - without.out).abs().max() <= 1e-5


def test_rejects_indivisible_width() -> None:
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(60, 8)


def test_device_override(monkeypatch: pytest.MonkeyPatch) -> None:
    for fn in (best_device, interactive_device):
        fn.cache_clear()
    monkeypatch.setenv("DRAGON_DEVICE", "cpu")
    assert best_device().type == "cpu" and interactive_device().type == "cpu"
    for fn in (best_device, interactive_device):
        fn.cache_clear()
    monkeypatch.delenv("DRAGON_DEVICE")
    expected = "cuda" if torch.cuda.is_available() else None
    if expected:
        assert best_device().type == expected
    assert interactive_device().type == "cpu"
    for fn in (best_device, interactive_device):
        fn.cache_clear()

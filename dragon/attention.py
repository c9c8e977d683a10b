"""One standard multi-head attention with per-head gates, batched and sequential."""

import math
from typing import NamedTuple

import torch
from torch import nn
from torch.nn import functional as F


class AttentionResult(NamedTuple):
    out: torch.Tensor  # (B, T, d) block output: residual + fused (+ LayerNorm)
    fused: torch.Tensor  # (B, T, d) the heads' gated concat after W^O, before the residual
    weights: torch.Tensor | None  # (B, h, T, T) attention weights, rows = queries (None if not asked for)


class MultiHeadAttention(nn.Module):
    """softmax(QKᵀ/√d_head)V for all heads at once; gates g ∈ [0,1]^h scale each head before the concat."""

    def __init__(self, d_model: int, n_heads: int, bias: bool = True, layer_norm: bool = False):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.in_proj = nn.Linear(d_model, 3 * d_model, bias=bias)  # packed W_Q, W_K, W_V
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)  # W^O
        self.norm = nn.LayerNorm(d_model) if layer_norm else None

    def _gates(self, gates: torch.Tensor | None, x: torch.Tensor) -> torch.Tensor:
        if gates is None:
            return torch.ones(self.n_heads, dtype=x.dtype, device=x.device)
        return gates.to(dtype=x.dtype, device=x.device)

    def _finish(self, x: torch.Tensor, concat: torch.Tensor, residual: bool) -> tuple[torch.Tensor, torch.Tensor]:
        fused = self.out_proj(concat)  # 4. W^O mixes the heads: (B, T, d)
        out = x + fused if residual else fused  # 5. residual: keep what the token already knew
        if self.norm is not None:
            out = self.norm(out)
        return out, fused

    def forward(
        self, x: torch.Tensor, gates: torch.Tensor | None = None, residual: bool = True, need_weights: bool = True
    ) -> AttentionResult:
        """Batched path. x: (B, T, d) or (T, d); gates: (h,). Without need_weights the attention runs in
        PyTorch's fused kernel (F.scaled_dot_product_attention), which never stores the T × T maps."""
        squeeze = x.dim() == 2
        if squeeze:
            x = x.unsqueeze(0)
        B, T, d = x.shape
        h, dh = self.n_heads, self.d_head
        # 1. project: one matmul makes Q, K and V for every head
        q, k, v = self.in_proj(x).split(d, dim=-1)  # 3 × (B, T, d)
        q = q.view(B, T, h, dh).transpose(1, 2)  # (B, h, T, d_head)
        k = k.view(B, T, h, dh).transpose(1, 2)  # (B, h, T, d_head)
        v = v.view(B, T, h, dh).transpose(1, 2)  # (B, h, T, d_head)
        # 2. attend: every head at once
        heads, weights = attend(q, k, v, need_weights)  # (B, h, T, d_head), (B, h, T, T)
        heads = heads * self._gates(gates, x).view(1, h, 1, 1)  # the goddess's sliders
        # 3. concat the heads side by side
        concat = heads.transpose(1, 2).reshape(B, T, d)  # (B, T, d)
        out, fused = self._finish(x, concat, residual)
        return _result(out, fused, weights, squeeze)

    def forward_sequential(
        self, x: torch.Tensor, gates: torch.Tensor | None = None, residual: bool = True, need_weights: bool = True
    ) -> AttentionResult:
        """The same computation as a Python loop over heads, one head after another (for the race)."""
        squeeze = x.dim() == 2
        if squeeze:
            x = x.unsqueeze(0)
        d, dh = self.d_model, self.d_head
        g = self._gates(gates, x)
        w_in = self.in_proj.weight
        b_in = self.in_proj.bias
        outputs, all_weights = [], []
        for i in range(self.n_heads):
            rows = [slice(j * d + i * dh, j * d + (i + 1) * dh) for j in range(3)]  # this head's Q, K, V rows
            q, k, v = (F.linear(x, w_in[r], None if b_in is None else b_in[r]) for r in rows)  # (B, T, d_head)
            head, weights = attend(q, k, v, need_weights)  # (B, T, d_head), (B, T, T)
            outputs.append(head * g[i])
            all_weights.append(weights)
        concat = torch.cat(outputs, dim=-1)  # (B, T, d)
        out, fused = self._finish(x, concat, residual)
        weights = torch.stack(all_weights, dim=1) if need_weights else None  # (B, h, T, T)
        return _result(out, fused, weights, squeeze)


def attend(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, need_weights: bool
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """softmax(QKᵀ/√d_head)V over the last two dims, with or without the weights kept."""
    if not need_weights:
        return F.scaled_dot_product_attention(q, k, v), None
    weights = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)  # (…, T, T)
    return weights @ v, weights


def _result(out: torch.Tensor, fused: torch.Tensor, weights: torch.Tensor | None, squeeze: bool) -> AttentionResult:
    if squeeze:
        out, fused = out[0], fused[0]
        weights = None if weights is None else weights[0]
    return AttentionResult(out, fused, weights)

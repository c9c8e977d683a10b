"""Each head's slice of the packed W_Q/W_K/W_V (and biases) and of W^O, as CPU tensors."""

from typing import NamedTuple

import torch

from dragon.attention import MultiHeadAttention


class HeadWeights(NamedTuple):
    w_q: torch.Tensor  # (d_head, d) this head's rows of W_Q
    w_k: torch.Tensor  # (d_head, d)
    w_v: torch.Tensor  # (d_head, d)
    w_o: torch.Tensor  # (d, d_head) this head's columns of W^O: where its d_head numbers go in the output
    b_q: torch.Tensor  # (d_head,) zeros when the block has no bias (the dragon has none)
    b_k: torch.Tensor  # (d_head,)
    b_v: torch.Tensor  # (d_head,)


def head_weights(mha: MultiHeadAttention, h: int) -> HeadWeights:
    """Head h's projections, cut out of the packed in_proj (rows [W_Q; W_K; W_V]) and out_proj (columns)."""
    if not 0 <= h < mha.n_heads:
        raise ValueError(f"head index {h} is not in 0…{mha.n_heads - 1}")
    d, dh = mha.d_model, mha.d_head
    w_in = mha.in_proj.weight.detach().cpu()  # (3d, d)
    b_in = mha.in_proj.bias
    b_in = torch.zeros(3 * d) if b_in is None else b_in.detach().cpu()  # (3d,)
    rows = [slice(j * d + h * dh, j * d + (h + 1) * dh) for j in range(3)]  # this head's Q, K, V rows
    w_o = mha.out_proj.weight.detach().cpu()[:, h * dh : (h + 1) * dh]  # (d, d_head)
    return HeadWeights(*(w_in[r] for r in rows), w_o, *(b_in[r] for r in rows))

"""A small BERT encoder of our own (embeddings → layers of self-attention + FFN, post-LayerNorm) that returns
every layer's attention weights, and a reader for the safetensors files that ship its weights."""

import json
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

from dragon.attention import MultiHeadAttention

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "I64": torch.int64}


@dataclass(frozen=True)
class BertConfig:
    vocab: int = 30522  # word pieces in vocab.txt
    d_model: int = 384  # hidden_size
    n_layers: int = 6  # num_hidden_layers
    n_heads: int = 12  # num_attention_heads: d_head = 384 / 12 = 32
    d_ff: int = 1536  # intermediate_size of the feed-forward network
    max_positions: int = 512  # learned position embeddings
    type_vocab: int = 2  # segment (token type) embeddings; one sentence uses type 0
    eps: float = 1e-12  # LayerNorm epsilon

    def __post_init__(self) -> None:
        if self.d_model % self.n_heads != 0:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")

    @classmethod
    def from_json(cls, path: Path) -> "BertConfig":
        """From a Hugging Face config.json (only the fields this encoder uses; GELU and absolute positions only)."""
        raw = json.loads(path.read_text(encoding="utf-8"))
        if raw.get("hidden_act", "gelu") != "gelu" or raw.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"{path}: only gelu activations and absolute positions are supported")
        return cls(
            vocab=raw["vocab_size"],
            d_model=raw["hidden_size"],
            n_layers=raw["num_hidden_layers"],
            n_heads=raw["num_attention_heads"],
            d_ff=raw["intermediate_size"],
            max_positions=raw["max_position_embeddings"],
            type_vocab=raw["type_vocab_size"],
            eps=raw.get("layer_norm_eps", 1e-12),
        )


class Layer(nn.Module):
    """One encoder layer: the dragon's multi-head attention block (residual, then LayerNorm), then the
    feed-forward network (d → d_ff → GELU → d, residual, LayerNorm)."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.attention = MultiHeadAttention(cfg.d_model, cfg.n_heads, bias=True, layer_norm=True)
        self.attention.norm.eps = cfg.eps
        self.ff_in = nn.Linear(cfg.d_model, cfg.d_ff)
        self.ff_out = nn.Linear(cfg.d_ff, cfg.d_model)
        self.ff_norm = nn.LayerNorm(cfg.d_model, eps=cfg.eps)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a = self.attention(x)  # 1–5: project, attend, concat, W^O, residual + LayerNorm
        out = self.ff_norm(a.out + self.ff_out(F.gelu(self.ff_in(a.out))))  # 6. feed-forward, residual, LayerNorm
        return out, a.weights  # (B, T, d), (B, h, T, T)


class Bert(nn.Module):
    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.cfg = cfg
        self.word = nn.Embedding(cfg.vocab, cfg.d_model)
        self.position = nn.Embedding(cfg.max_positions, cfg.d_model)
        self.segment = nn.Embedding(cfg.type_vocab, cfg.d_model)
        self.norm = nn.LayerNorm(cfg.d_model, eps=cfg.eps)
        self.layers = nn.ModuleList(Layer(cfg) for _ in range(cfg.n_layers))

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (B, T) → the first layer's input (B, T, d): word + position + segment embeddings, LayerNorm."""
        T = ids.shape[1]
        if T > self.cfg.max_positions:
            raise ValueError(f"at most {self.cfg.max_positions} word pieces, not {T}")
        positions = torch.arange(T, device=ids.device)  # (T,)
        return self.norm(self.word(ids) + self.position(positions) + self.segment(torch.zeros_like(ids)))  # (B, T, d)

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """ids (B, T) of one unpadded sentence each → last hidden states (B, T, d), attention (B, L, h, T, T)."""
        x = self.embed(ids)
        maps = []
        for layer in self.layers:
            x, w = layer(x)
            maps.append(w)
        return x, torch.stack(maps, dim=1)  # (B, T, d), (B, L, h, T, T)

    def value_norms(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (1, T) → (L, h, T): the length of every piece's value vector in every head of every layer (what a
        head adds to its output per unit of attention it gives that piece, before W^O)."""
        x, out = self.embed(ids), []
        for layer in self.layers:
            att = layer.attention
            v = att.in_proj(x)[0, :, 2 * att.d_model :]  # (T, d) the V part of the packed projection
            out.append(v.view(v.shape[0], att.n_heads, att.d_head).norm(dim=-1).T)  # (h, T)
            x, _ = layer(x)
        return torch.stack(out)  # (L, h, T)


def read_safetensors(path: Path) -> dict[str, torch.Tensor]:
    """Every tensor of a .safetensors file: an 8-byte little-endian header length, a JSON header naming each
    tensor's dtype, shape and byte range, then the raw little-endian bytes."""
    data = bytearray(path.read_bytes())
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + n])
    body = memoryview(data)[8 + n :]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in DTYPES:
            raise ValueError(f"{path.name}: {name} has dtype {info['dtype']}, which this reader does not know")
        start, end = info["data_offsets"]
        out[name] = torch.frombuffer(body[start:end], dtype=DTYPES[info["dtype"]]).reshape(info["shape"])
    return out


def hf_state_dict(weights: dict[str, torch.Tensor], cfg: BertConfig) -> dict[str, torch.Tensor]:
    """Hugging Face BertModel names → ours; Q, K and V packed into one in_proj as the dragon's block has them."""
    out = {
        "word.weight": weights["embeddings.word_embeddings.weight"],
        "position.weight": weights["embeddings.position_embeddings.weight"],
        "segment.weight": weights["embeddings.token_type_embeddings.weight"],
        "norm.weight": weights["embeddings.LayerNorm.weight"],
        "norm.bias": weights["embeddings.LayerNorm.bias"],
    }
    for i in range(cfg.n_layers):
        hf, ours = f"encoder.layer.{i}.", f"layers.{i}."
        for kind in ("weight", "bias"):
            qkv = [weights[f"{hf}attention.self.{p}.{kind}"] for p in ("query", "key", "value")]
            out[f"{ours}attention.in_proj.{kind}"] = torch.cat(qkv, dim=0)  # (3d, d) or (3d,): [W_Q; W_K; W_V]
            out[f"{ours}attention.out_proj.{kind}"] = weights[f"{hf}attention.output.dense.{kind}"]
            out[f"{ours}attention.norm.{kind}"] = weights[f"{hf}attention.output.LayerNorm.{kind}"]
            out[f"{ours}ff_in.{kind}"] = weights[f"{hf}intermediate.dense.{kind}"]
            out[f"{ours}ff_out.{kind}"] = weights[f"{hf}output.dense.{kind}"]
            out[f"{ours}ff_norm.{kind}"] = weights[f"{hf}output.LayerNorm.{kind}"]
    return out


def load_bert(model_dir: Path) -> Bert:
    """The encoder from a folder holding config.json and model.safetensors (a Hugging Face BERT export)."""
    cfg = BertConfig.from_json(model_dir / "config.json")
    with torch.device("meta"):  # no time spent on random initial weights that are overwritten at once
        model = Bert(cfg)
    model.load_state_dict(hf_state_dict(read_safetensors(model_dir / "model.safetensors"), cfg), assign=True)
    return model.float().eval().requires_grad_(False)

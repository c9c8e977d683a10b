"""3-1 Inside the formula: one word's row of one head, q → q·k/√d_head → softmax → weighted V → W^O slice."""

import math
from typing import Any

import torch

from dragon.analyze import rounded
from dragon.attention import MultiHeadAttention
from dragon.config import HEADS
from dragon.engine import Reading, default_dragon
from dragon.findings import Finding
from dragon.lessons.slices import head_weights
from dragon.margins import SHARE_MARGIN, accepted_best, accepted_buckets, edge_margin, lead, question

SINK = "⟨sink⟩"  # the key every head may park its attention on (value 0): "nothing to say"
DECIMALS = 6


def head_math(mha: MultiHeadAttention, reading: Reading, position: int, h: int) -> dict:
    """head_h = Attention(QW_h^Q, KW_h^K, VW_h^V) for the query row of visible token `position`, step by step,
    with every tensor and its shape. Keys are the sink then the T tokens, as in the engine's (h, T+1, T+1) maps."""
    tokens = reading.tokens
    if not 0 <= position < len(tokens):
        raise ValueError(f"position {position} is not in 0…{len(tokens) - 1}")
    w = head_weights(mha, h)
    x = reading.x.to(w.w_q.dtype)  # (T + 1, d) embedding, sink first
    dh = w.w_q.shape[0]
    row = position + 1  # the sink is row 0
    # 1. project: this head's own query for the word, keys and values for every token
    q = w.w_q @ x[row] + w.b_q  # (d_head,)
    k = x @ w.w_k.T + w.b_k  # (T + 1, d_head)
    v = x @ w.w_v.T + w.b_v  # (T + 1, d_head)
    # 2. attend: scores q·k/√d_head for every key, one softmax, the weighted sum of values
    dots = k @ q  # (T + 1,)
    scores = dots / math.sqrt(dh)  # (T + 1,)
    weights = torch.softmax(scores, dim=0)  # (T + 1,) sums to 1
    head = weights @ v  # (d_head,) head_h's output for this word
    # 3. concat puts it in columns h·d_head…(h+1)·d_head; 4. W^O reads exactly those columns with its slice
    output = w.w_o @ head  # (d,) this head's part of the fused output (before the residual)
    winner = int(weights.argmax())
    keys = [SINK, *tokens]
    T1, d = x.shape
    return {
        "tokens": tokens,
        "keys": keys,
        "word": tokens[position],
        "position": position,
        "head": HEADS[h],
        "head_index": h,
        "d_model": d,
        "d_head": dh,
        "sqrt_d_head": math.sqrt(dh),
        "q": rounded(q, DECIMALS),
        "k": rounded(k, DECIMALS),
        "v": rounded(v, DECIMALS),
        "dots": rounded(dots, DECIMALS),
        "scores": rounded(scores, DECIMALS),
        "weights": rounded(weights, DECIMALS),
        "weights_sum": float(weights.sum()),
        "sink_weight": round(float(weights[0]), DECIMALS),
        "winner": winner,
        "winner_key": keys[winner],
        "weighted_v": rounded(head, DECIMALS),
        "w_o_slice": rounded(w.w_o, DECIMALS),
        "w_o_columns": [h * dh, (h + 1) * dh],
        "output": rounded(output, DECIMALS),
        "output_norm": round(float(output.norm()), DECIMALS),
        "shapes": {
            "x": [T1, d],
            "W_Q": [dh, d],
            "W_K": [dh, d],
            "W_V": [dh, d],
            "q": [dh],
            "K": [T1, dh],
            "V": [T1, dh],
            "scores": [T1],
            "weights": [T1],
            "weighted_v": [dh],
            "W_O_slice": [d, dh],
            "output": [d],
        },
    }


def answers(m: dict, share_edges: tuple[float, ...]) -> tuple[list[int], list[int]]:
    """3-1's accepted answers for one round (`m`, a head_math result): every key within 5 points of the winner's
    share, and every share bucket within 5 points of the winner's measured share."""
    weights = dict(enumerate(m["weights"]))
    return accepted_best(weights, SHARE_MARGIN), accepted_buckets(max(m["weights"]), share_edges)


# --- what 3-1 says about its rounds, as data (dragon/findings.py): each sentence with what makes it true ---

SAME_ROW = 1e-5  # the formula's softmax row and the game's map agree to this (max abs difference)


def measured(rounds: list[dict], row_diffs: list[float]) -> dict:
    """The values 3-1's sentences are about, read off the level's rounds (head_math results) and how far each
    round's softmax row is from the engine's own map."""
    def gap(m: dict) -> float:
        top = sorted(m["scores"], reverse=True)
        return top[0] - top[1]

    by_gap = sorted(rounds, key=gap)
    sink = [m for m in rounds if m["winner_key"] == SINK]
    return {
        "winner_is_top_score": all(m["scores"][m["winner"]] == max(m["scores"]) for m in rounds),
        "shares_by_gap": [max(m["weights"]) for m in by_gap],
        "sink_rounds": len(sink),
        "sink_output": max((m["output_norm"] for m in sink), default=0.0),
        "largest_output": max(m["output_norm"] for m in rounds),
        "row_diff": max(row_diffs),
        "sink_value": max(abs(v) for m in rounds for v in m["v"][0]),  # the sink's value row, every round
    }


FINDINGS: tuple[Finding, ...] = (
    Finding("same_map", lambda m: m["row_diff"] < SAME_ROW, "the formula's softmax row is the game's map row",
            always=True),
    Finding("f_sink", lambda m: m["sink_value"] == 0, "the sink's value is 0", always=True),
    Finding("why:3-1:order", lambda m: m["winner_is_top_score"], "the why: the key with the largest score wins",
            always=True),
    Finding("why:3-1:gap", lambda m: m["shares_by_gap"] == sorted(m["shares_by_gap"]),
            "the why: the wider the gap to the runner-up, the bigger the winner's share (over the rounds)",
            always=True),
    Finding("why:3-1:sink", lambda m: m["sink_rounds"] > 0 and m["sink_output"] < 0.05 * m["largest_output"],
            "the why: a head with nothing to say parks on the sink, and its output is almost nothing", always=True),
)


# --- the answer key: each scored question, its accepted answers, the measured value, the deciding margin ---

SHARE_EDGES = (0.4, 0.6, 0.9)  # a softmax share guess: < 0.4, 0.4–0.6, 0.6–0.9, ≥ 0.9 (bucket 0…3)


def questions(level: Any, lang: str) -> list[dict]:
    """3-1's questions (`level`: a formula level): each round's winning key and its share bucket, on the real row."""
    reading, out = default_dragon().read(level.text[lang], lang), []
    for i, r in enumerate(level.rounds[lang]):
        m = head_math(default_dragon().attention, reading, reading.tokens.index(r.word), HEADS.index(r.head))
        winners, shares = answers(m, SHARE_EDGES)
        win = max(m["weights"])
        out.append(question(f"round{i + 1}.winner", [m["keys"][k] for k in winners], m["keys"][m["winner"]],
                            lead(dict(enumerate(m["weights"])), winners), "share"))
        out.append(question(f"round{i + 1}.share", shares, win, edge_margin(win, SHARE_EDGES)
                            if len(shares) == 1 else SHARE_MARGIN, "share bucket"))
    return out

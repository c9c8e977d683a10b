"""The facts table as data (assets/lessons/facts.yaml): real models' heads, computed totals, and a quiz checker."""

import functools
import math
from pathlib import Path

import yaml

from dragon.checks import brief
from dragon.text.lexicon import ASSETS

FACTS_FILE = ASSETS / "lessons" / "facts.yaml"
MODEL_FIELDS = ("layers", "heads", "kv_heads", "d_model", "d_head", "total_heads", "mha_params", "attention_params")
BLEU_TOLERANCE = 0.05  # a BLEU answer is right within this (the table gives one decimal)


class FactsError(ValueError):
    """The facts file is malformed; the message names the file and the field."""


def mha_params(d: int) -> int:
    """One multi-head attention block with biases: W_Q, W_K, W_V, W^O (d × d) + 4 biases, whatever h (d_head = d/h)."""
    return 4 * d * d + 4 * d


def attention_params(d: int, heads: int, kv_heads: int, bias: bool) -> int:
    """One attention block's parameters, grouped-query attention included (kv_heads < heads shares K and V)."""
    dh = d // heads
    q_out, kv_out = heads * dh, kv_heads * dh
    weights = d * q_out + 2 * d * kv_out + q_out * d  # W_Q, W_K, W_V, W^O
    return weights + (q_out + 2 * kv_out + d if bias else 0)


def _int(entry: dict, key: str, where: str) -> int:
    v = entry.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise FactsError(f"{where}: {key} must be a positive integer, not {v!r}")
    return v


def _model(entry: dict, where: str) -> dict:
    layers, heads, d = (_int(entry, k, where) for k in ("layers", "heads", "d_model"))
    kv = _int(entry, "kv_heads", where) if "kv_heads" in entry else heads
    if d % heads or heads % kv:
        raise FactsError(f"{where}: d_model {d} must divide by heads {heads}, and heads by kv_heads {kv}")
    if not isinstance(entry.get("bias"), bool) or not entry.get("id") or not entry.get("name"):
        raise FactsError(f"{where}: id, name and bias (true/false) are required")
    per_layer = attention_params(d, heads, kv, entry["bias"])
    return {
        "id": entry["id"],
        "name": entry["name"],
        "layers": layers,
        "heads": heads,
        "kv_heads": kv,
        "d_model": d,
        "d_head": d // heads,
        "total_heads": layers * heads,  # query heads: each computes its own softmax
        "bias": entry["bias"],
        "mha_params": mha_params(d) if kv == heads and entry["bias"] else None,
        "attention_params": per_layer,
        "attention_params_all_layers": layers * per_layer,
        "source": entry.get("source", ""),
        "lesson_says": entry.get("lesson_says"),
    }


def _row(entry: dict, d: int, where: str) -> dict:
    h = _int(entry, "h", where)
    bleu = entry.get("bleu")
    if isinstance(bleu, bool) or not isinstance(bleu, int | float) or d % h:
        raise FactsError(f"{where}: needs h dividing d_model {d} and a numeric bleu, not {entry}")
    return {"h": h, "d_k": d // h, "bleu": float(bleu)}


@functools.cache
def load_facts(path: Path = FACTS_FILE) -> dict:
    """The validated facts with every derived number computed: {models, vaswani, quiz}."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise FactsError(f"{path.name}: {e}") from e
    if not isinstance(raw, dict):
        raise FactsError(f"{path.name}: expected a mapping with models, vaswani_2017_table3a and quiz")
    models = [_model(m, f"{path.name} models[{i}]") for i, m in enumerate(raw.get("models") or [])]
    table = raw.get("vaswani_2017_table3a") or {}
    d = _int(table, "d_model", f"{path.name} vaswani_2017_table3a")
    rows = [_row(r, d, f"{path.name} vaswani_2017_table3a rows[{i}]") for i, r in enumerate(table.get("rows") or [])]
    facts = {
        "models": models,
        "vaswani": {"source": table.get("source", ""), "d_model": d, "rows": rows},
        "quiz": raw.get("quiz") or [],
    }
    ids = [m["id"] for m in models]
    for q in facts["quiz"]:
        ask = q.get("ask") or {}
        if ask.get("field") not in (*MODEL_FIELDS, "bleu") or ("model" in ask and ask["model"] not in ids):
            raise FactsError(f"{path.name} quiz {q.get('id')!r}: ask {ask} names no known model and field")
        expected(facts, q)  # every question has a computable answer
    return facts


def model(facts: dict, model_id: str) -> dict:
    for m in facts["models"]:
        if m["id"] == model_id:
            return m
    raise ValueError(f"unknown model {brief(model_id)}; known: {', '.join(m['id'] for m in facts['models'])}")


def expected(facts: dict, question: dict) -> float:
    """A question's answer, computed from the table."""
    ask = question["ask"]
    if ask["field"] == "bleu":
        for row in facts["vaswani"]["rows"]:
            if row["h"] == ask["h"]:
                return row["bleu"]
        raise FactsError(f"quiz {question.get('id')!r}: Table 3 (A) has no row h = {ask['h']}")
    if ask["field"] == "mha_params" and "model" not in ask:
        return mha_params(ask["d_model"])
    value = model(facts, ask["model"])[ask["field"]]
    if value is None:
        raise FactsError(f"quiz {question.get('id')!r}: {ask['model']} has no {ask['field']}")
    return value


def as_number(answer: object) -> float:
    """A player's answer as a number: 9216, 9216.0, "9 216", "9,216" and "９２１６" all read as 9216."""
    if isinstance(answer, bool):
        raise ValueError(f"answer must be a number, not {brief(answer)}")
    if isinstance(answer, int | float):
        value = float(answer)
    elif isinstance(answer, str):
        text = "".join(ch for ch in answer if ch not in " ,_'\u00a0\u202f，")
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"answer must be a number, not {brief(answer)}") from None
    else:
        raise ValueError(f"answer must be a number, not {brief(answer)}")
    if not math.isfinite(value):
        raise ValueError(f"answer must be a finite number, not {brief(answer)}")
    return value


def check_answer(question_id: str, answer: object, facts: dict | None = None) -> dict:
    """Is the answer right? With the right one, the model's row, and what the lesson said where it erred."""
    facts = facts or load_facts()
    question = next((q for q in facts["quiz"] if q["id"] == question_id), None)
    if question is None:
        raise ValueError(f"unknown question {brief(question_id)}; known: {', '.join(q['id'] for q in facts['quiz'])}")
    given, right = as_number(answer), expected(facts, question)
    ask = question["ask"]
    ok = abs(given - right) <= BLEU_TOLERANCE if ask["field"] == "bleu" else given == right
    row = model(facts, ask["model"]) if "model" in ask else None
    lesson = (row or {}).get("lesson_says") or {}
    return {
        "id": question_id,
        "correct": ok,
        "given": given,
        "answer": right,
        "question": question["question"],
        "model": row,
        "lesson_says": lesson.get(ask["field"]),
    }

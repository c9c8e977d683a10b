"""4-4 Pruning: switch heads of 4-3's trained model off (gates at 0) and measure the real accuracy; the most heads
that can go at ≥ 90 % of full accuracy, searched over every subset; the two heads whose maps are most alike."""

import functools
import itertools
from collections.abc import Callable, Sequence

import torch
from torch.nn import functional as F

from ..analyze import rounded
from .growing import GatedReader, Growth, evaluate, shared
from .heads_experiment import sample
from .papers import papers

KEEP = 0.9  # the goal: at least this share of the full model's accuracy
MAX_HEADS = 8  # the search tries all 2^h subsets
EVAL_SIZE = 512  # held-out sequences every accuracy is measured on (not those 4-3's curve used)
DECIMALS = 4


def trained(seed: int = 0) -> tuple[GatedReader, dict]:
    """4-3's model for this seed: the very run 4-3 shows, trained once per server on the serving device."""
    model, result = shared(Growth().ex.steps, seed)
    if model.mha.n_heads > MAX_HEADS:
        raise ValueError(f"the subset search is for at most {MAX_HEADS} heads, not {model.mha.n_heads}")
    return model, result


@functools.lru_cache(maxsize=4)
def held_out(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    return sample(Growth().ex, EVAL_SIZE, torch.Generator().manual_seed(seed + 3))  # (n, T), (n, T, relations)


def check_active(active: object, h: int) -> tuple[bool, ...]:
    """h switches as bools (0/1 and true/false both read), or a ValueError that says what is wrong."""
    if not isinstance(active, list | tuple) or len(active) != h:
        raise ValueError(f"active must be a list of {h} switches (1 = on, 0 = off), one per head")
    out = []
    for a in active:
        if a not in (0, 1):  # True and False are 1 and 0
            raise ValueError(f"each switch must be 1 (on) or 0 (off), not {a!r}")
        out.append(bool(a))
    return tuple(out)


@functools.lru_cache(maxsize=4)
def gate_logits(seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The held-out logits as a function of the gates: the block has no LayerNorm, so the read-out is linear in
    them, logits(g) = base + Σ_h g_h · per_head[h]. Every on/off pattern then costs one small sum, not a forward
    pass. Returns base (n, T, R, V), per_head (h, n, T, R, V) and the answers (n, T, R)."""
    model = trained(seed)[0]
    if model.mha.norm is not None:
        raise ValueError("gate_logits needs a block without LayerNorm (its output must be linear in the gates)")
    ids, answers = held_out(seed)
    h = model.mha.n_heads
    with torch.no_grad():
        x = model.tok(ids) + model.pos  # (n, T, d)
        parts = [model.mha(x, torch.eye(h)[i], residual=False).fused - model.mha.out_proj.bias for i in range(h)]
        shape = (*ids.shape, len(model.ex.relations), model.ex.vocab)
        base = model.read(x + model.mha.out_proj.bias).view(shape)  # all heads off: input + W^O's bias
        per_head = torch.stack([(p @ model.read.weight.T).view(shape) for p in parts])  # (h, n, T, R, V)
    return base, per_head, answers


def accuracies(patterns: Sequence[Sequence[bool]], seed: int = 0) -> torch.Tensor:
    """(p, R) held-out accuracy per relation of each on/off pattern (p, h), 32 patterns at a time."""
    base, per_head, answers = gate_logits(seed)
    gates = torch.tensor([[float(a) for a in p] for p in patterns])  # (p, h)
    out = []
    for chunk in gates.split(32):
        logits = base + torch.einsum("ph,hntrv->pntrv", chunk, per_head)  # (p, n, T, R, V)
        out.append((logits.argmax(-1) == answers).float().mean(dim=(1, 2)))  # (p, R)
    return torch.cat(out)


def accuracy(active: tuple[bool, ...], seed: int = 0) -> float:
    return float(accuracies([active], seed).mean())


def best_subsets(score: Callable[[list[tuple[bool, ...]]], list[float]], h: int, keep: float = KEEP) -> dict:
    """Over all 2^h on/off patterns (scored in one call): the most heads off with score ≥ keep × score(all on),
    every pattern that achieves it, and the best score reachable at each number of heads off."""
    patterns = list(itertools.product((True, False), repeat=h))  # all on comes first
    scores = dict(zip(patterns, score(patterns), strict=True))
    full = scores[(True,) * h]
    best_at = [max(s for a, s in scores.items() if a.count(False) == k) for k in range(h + 1)]  # best with k off
    most = max(k for k in range(h + 1) if best_at[k] >= keep * full)  # k = 0 always qualifies
    winners = [a for a, s in scores.items() if a.count(False) == most and s >= keep * full]
    return {"full": full, "most_off": most, "patterns": winners, "best_by_off": best_at}


def mean_maps(model: GatedReader, seed: int) -> torch.Tensor:
    """(h, T, T) each head's attention averaged over the held-out sequences."""
    return evaluate(model, *held_out(seed))["maps"]


def redundancy(maps: torch.Tensor) -> dict:
    """Cosine similarity of every two heads' flattened mean maps; the most alike pair."""
    flat = F.normalize(maps.flatten(1), dim=1)  # (h, T·T) unit rows
    sim = flat @ flat.T  # (h, h)
    upper = torch.triu(torch.ones_like(sim, dtype=torch.bool), diagonal=1)
    i = int(torch.where(upper, sim, -2.0).flatten().argmax())
    a, b = divmod(i, sim.shape[0])
    return {"pair": [a, b], "cosine": round(float(sim[a, b]), DECIMALS), "similarity": rounded(sim, DECIMALS)}


def prune(active: Sequence[int | bool], seed: int = 0) -> dict:
    """Accuracy of 4-3's trained model with these heads on (1) and off (0), against all heads on."""
    model, grown = trained(seed)
    on = check_active(active, model.mha.n_heads)
    full = accuracy((True,) * len(on), seed)
    acc = accuracy(on, seed)
    return {
        "active": [int(a) for a in on],
        "off": on.count(False),
        "accuracy": round(acc, DECIMALS),
        "full_accuracy": round(full, DECIMALS),
        "kept": round(acc / full, DECIMALS) if full else 0.0,
        "goal": KEEP,
        "reached": acc >= KEEP * full,
        "accuracy_by_relation": rounded(accuracies([on], seed)[0], DECIMALS),
        "relations": grown["relations"],
        "offsets": grown["final"]["offsets"],  # each head's favourite offset after training
        "chance": grown["chance"],
        "seed": seed,
    }


@functools.lru_cache(maxsize=4)
def best_pruning(seed: int = 0) -> dict:
    """The answer, computed: the most heads off at ≥ 90 % of full accuracy (all 2^h subsets tried), which heads,
    and the most alike pair of heads (the redundancy that lets one go)."""
    model, grown = trained(seed)
    h = model.mha.n_heads
    best = best_subsets(lambda patterns: accuracies(patterns, seed).mean(dim=1).tolist(), h)
    return {
        "heads": h,
        "subsets_tried": 2**h,
        "full_accuracy": round(best["full"], DECIMALS),
        "goal": KEEP,
        "most_off": best["most_off"],
        "patterns": [[int(x) for x in p] for p in best["patterns"]],
        "accuracy": [round(accuracy(p, seed), DECIMALS) for p in best["patterns"]],
        "best_accuracy_by_off": [round(a, DECIMALS) for a in best["best_by_off"]],
        "redundancy": redundancy(mean_maps(model, seed)),
        "offsets": grown["final"]["offsets"],
        "relations": grown["relations"],
        "papers": list(papers("pruning")),  # Voita et al. 2019, Michel et al. 2019
        "seed": seed,
    }

"""4-4 Pruning: switch heads of 4-3's trained model off (gates at 0) and measure the real accuracy; the most heads
that can go at ≥ 90 % of full accuracy, searched over every subset; the two heads whose maps are most alike, what
each head costs alone, and which heads carry a relation alone; what the page says of them, as findings."""

import functools
import itertools
from collections.abc import Callable, Sequence

import torch
from torch.nn import functional as F

from dragon.analyze import rounded
from dragon.checks import brief
from dragon.findings import Finding, Measured
from dragon.lessons.growing import SPLIT, GatedReader, Growth, evaluate, memo_key, offset_profile, shared
from dragon.lessons.heads_experiment import sample
from dragon.lessons.papers import papers
from dragon.margins import question
from dragon.runtime.shared import once

KEEP = 0.9  # the goal: at least this share of the full model's accuracy
MAX_HEADS = 8  # the search tries all 2^h subsets
EVAL_SIZE = 512  # held-out sequences every accuracy is measured on (not those 4-3's curve used)
SMALL_COST = 5.0  # a head "goes cheaply" when switching it off alone costs under 5 points of accuracy
NEAR_CHANCE = 3  # a relation "falls to near chance" below 3 × chance (3 / 16 of its answers right)
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
        if type(a) not in (int, float, bool) or a not in (0, 1):  # True and False are 1 and 0
            raise ValueError(f"each switch must be 1 (on) or 0 (off), not {brief(a)}")
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
    and the most alike pair of heads (the redundancy that lets one go). Fixed by the seed: made once per server (and
    once per results folder, dragon/runtime/shared.py), the model it prunes first."""
    trained(seed)
    return once(("best-pruning", memo_key(Growth().ex.steps, seed)), lambda: search(seed))


def search(seed: int) -> dict:
    model, grown = trained(seed)
    h = model.mha.n_heads
    best = best_subsets(lambda patterns: accuracies(patterns, seed).mean(dim=1).tolist(), h)
    maps = mean_maps(model, seed)
    one_off = accuracies([tuple(j != i for j in range(h)) for i in range(h)], seed)  # (h, R): head i alone off
    return {
        "heads": h,
        "subsets_tried": 2**h,
        "full_accuracy": round(best["full"], DECIMALS),
        "goal": KEEP,
        "most_off": best["most_off"],
        "patterns": [[int(x) for x in p] for p in best["patterns"]],
        "accuracy": [round(accuracy(p, seed), DECIMALS) for p in best["patterns"]],
        "best_accuracy_by_off": [round(a, DECIMALS) for a in best["best_by_off"]],
        "redundancy": redundancy(maps),
        "one_off": rounded(one_off, DECIMALS),  # (h, R) accuracy per relation with only that head off
        "profile": rounded(offset_profile(maps), DECIMALS),  # (h, T) each head's share on each offset back
        "offsets": grown["final"]["offsets"],
        "relations": grown["relations"],
        "papers": list(papers("pruning")),  # Voita et al. 2019, Michel et al. 2019
        "seed": seed,
    }


def positions(profile: list[float]) -> list[tuple[int, float]]:
    """A head's main offsets: its favourite, and any other holding at least SPLIT of its attention, largest first."""
    order = sorted(range(len(profile)), key=lambda d: -profile[d])
    return [(d, profile[d]) for i, d in enumerate(order) if i == 0 or profile[d] >= SPLIT]


def measured(best: dict) -> dict:
    """What 4-4's sentences are about: what each head costs switched off alone (points of accuracy), the most alike
    pair, the heads that carry a relation alone, and whether every head the best pruning switches off shares its
    favourite offset with a head that stays on."""
    full, h, fav = best["full_accuracy"], best["heads"], best["offsets"]
    acc = [sum(r) / len(r) for r in best["one_off"]]
    chance = 1 / Growth().ex.vocab
    lone = [(i, best["relations"][r], v) for i, row in enumerate(best["one_off"]) for r, v in enumerate(row)
            if v < NEAR_CHANCE * chance]
    twins = [[(i, next((j for j in range(h) if p[j] and fav[j] == fav[i]), None)) for i in range(h) if not p[i]]
             for p in best["patterns"]]  # per pattern: (head off, a head left on with its favourite offset, or None)
    return {
        "heads": h, "goal": best["goal"], "full": full, "most_off": best["most_off"], "patterns": best["patterns"],
        "pattern_accuracy": best["accuracy"], "best_by_off": best["best_accuracy_by_off"],
        "cost": [100 * (full - a) for a in acc], "pair": best["redundancy"]["pair"],
        "cosine": best["redundancy"]["cosine"], "similarity": best["redundancy"]["similarity"], "favourite": fav,
        "positions": [positions(row) for row in best["profile"]], "lone": lone, "chance": chance,
        "near_chance": NEAR_CHANCE * chance, "twins": twins, "small": SMALL_COST,
        "shared_favourite": len(set(fav)) < h,
    }


def _cheap(m: Measured) -> list[int]:
    return [i for i in m["pair"] if m["cost"][i] < m["small"]]


def _twins_ok(m: Measured) -> bool:
    return all(j is not None for p in m["twins"] for _, j in p)


def _is_most_alike(m: Measured) -> bool:
    a, b = m["pair"]
    sim = m["similarity"]
    return a < b and sim[a][b] == max(sim[i][j] for i in range(m["heads"]) for j in range(i + 1, m["heads"]))


def _best_is_best(m: Measured) -> bool:
    most, goal = m["most_off"], m["goal"] * m["full"]
    beyond = most + 1 >= len(m["best_by_off"]) or m["best_by_off"][most + 1] < goal
    return beyond and all(p.count(0) == most for p in m["patterns"]) and min(m["pattern_accuracy"]) >= goal


FINDINGS: tuple[Finding, ...] = (
    Finding("4-4.story", lambda m: m["heads"] == 8 and m["goal"] == 0.9, "8 heads; the goal is 90 %", always=True),
    Finding("p_best", _best_is_best, "the listed patterns switch off most_off heads at ≥ 90 %, and no pattern with "
            "one more head off reaches 90 %", always=True),
    Finding("p_head", lambda m: all(p[0][0] == f and all(v >= SPLIT for _, v in p[1:])
                                    for p, f in zip(m["positions"], m["favourite"], strict=True)),
            "each head's label names its favourite offset first, then any other holding ≥ SPLIT", always=True),
    Finding("p_redundant", _is_most_alike, "the pair named has the largest cosine of any two heads' maps",
            always=True),
    Finding("p_pair_one", lambda m: len(_cheap(m)) == 1, "exactly one of the pair costs < SMALL_COST alone",
            group="pair"),
    Finding("p_pair_both", lambda m: len(_cheap(m)) == 2, "both of the pair cost < SMALL_COST alone", group="pair"),
    Finding("p_pair_none", lambda m: not _cheap(m), "neither of the pair costs < SMALL_COST alone", group="pair"),
    Finding("p_alone", lambda m: bool(m["lone"]), "some head alone off drops a relation under 3 × chance",
            group="alone"),
    Finding("p_alone_none", lambda m: not m["lone"], "no head alone off drops a relation under 3 × chance",
            group="alone"),
    Finding("p_twins", _twins_ok, "every head the best pruning switches off shares its favourite offset with a head "
            "left on", group="twins"),
    Finding("p_twins_not", lambda m: not _twins_ok(m), "some head the best pruning switches off has no head left on "
            "with its favourite offset", group="twins"),
    Finding("4-4.why", lambda m: m["shared_favourite"] and _twins_ok(m) and max(m["pattern_accuracy"]) < m["full"]
            and bool(m["lone"]) and not any(p[i] == 0 for p in m["patterns"] for i, _, _ in m["lone"]),
            "two heads share a favourite offset; the best pruning switches off only heads whose favourite a head left "
            "on shares, and still loses accuracy; some head carries a relation alone, and none of those is switched "
            "off", always=True),
)

TRY_FINDINGS: tuple[Finding, ...] = (
    Finding("p_reached", lambda m: m["accuracy"] >= m["goal"] * m["full_accuracy"], "the pattern keeps ≥ 90 % of the "
            "full accuracy", group="goal"),
    Finding("p_missed", lambda m: m["accuracy"] < m["goal"] * m["full_accuracy"], "the pattern keeps < 90 % of the "
            "full accuracy", group="goal"),
)


# --- the answer key: each scored question, its accepted answers, the measured value, the deciding margin ---


def questions(best: dict) -> list[dict]:
    """4-4's question on the best pruning: the most heads off at the goal (the player measures their own switches on
    one fixed model and held-out set: exact, the same for everyone)."""
    goal, by_off, most = best["goal"] * best["full_accuracy"], best["best_accuracy_by_off"], best["most_off"]
    over = by_off[most] - goal
    under = goal - by_off[most + 1] if most + 1 < len(by_off) else float("inf")
    return [question("most_off", [most], {"best_accuracy": by_off[most], "goal": round(goal, 4),
                                          "above_goal": round(over, 4), "next_below_goal": round(under, 4)},
                     None, "exact accuracy")]

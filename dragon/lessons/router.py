"""4-6 Heads on demand (动态头选择): 4-3's task read by eight heads whose outputs a learned router gates word by word
(MoH-style: each word keeps its top-k heads, the rest are skipped), trained live for k = 1, 2, 4, 8 on three seeds;
accuracy against the heads' compute, which words call which heads, and the smallest k that keeps 95 % of the
all-heads accuracy, as findings."""

import itertools
import statistics
import time
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from dragon.findings import Finding
from dragon.lessons import growing
from dragon.lessons.growing import Progress
from dragon.lessons.heads_experiment import Experiment, Reader, fit, sample, threads
from dragon.margins import SHARE_MARGIN, accepted_buckets, bucket, edge_margin, question
from dragon.runtime.device import best_device

READ_K = 4  # the reading: how much of the all-heads accuracy k = 4 keeps, in buckets
READ_EDGES = (0.5, 0.8, 0.95)  # below half, half to 80 %, 80 to 95 %, at least 95 %
KEEP = 0.95  # "keeps the accuracy": at least 95 % of the all-heads (k = 8) accuracy, in the mean over the seeds
DECIMALS = 4


@dataclass(frozen=True)
class Routing:
    """The runs: one routed eight-head model per k and seed, 4-3's task, Adam with a one-cycle rate (10 % warm-up).
    250 steps of 32 take k = 8 to full accuracy: about 17 s for the 12 runs on one CPU thread."""

    ks: tuple[int, ...] = (1, 2, 4, 8)
    seeds: int = 3  # seeds first_seed, first_seed + 1, …
    steps: int = 250
    batch: int = 32
    lr: float = 0.01
    eval_size: int = 512

    def experiment(self, seed: int) -> Experiment:
        return Experiment(heads=(8,), steps=self.steps, batch=self.batch, lr=self.lr, seed=seed,
                          eval_size=self.eval_size, curve_points=10)


class RoutedReader(Reader):
    """heads_experiment's model whose eight heads each word gates through a router: a linear score per head from the
    word's input, its top k kept (softmax over the kept scores, times k, so k = 8 weighs the heads about as the plain
    model does), every other head's output multiplied by 0 (a sparse kernel would not compute it at all)."""

    def __init__(self, ex: Experiment, k: int):
        super().__init__(ex, ex.heads[0])
        if not 1 <= k <= ex.heads[0]:
            raise ValueError(f"k must be between 1 and {ex.heads[0]}, not {k}")
        self.k = k
        self.router = nn.Linear(ex.d_model, ex.heads[0])

    def forward(self, ids: torch.Tensor, keep_gates: bool = False):
        B, T = ids.shape
        x = self.tok(ids) + self.pos  # (B, T, d)
        mha = self.mha
        h, dh, d = mha.n_heads, mha.d_head, mha.d_model
        # 1. every head's attention, as MultiHeadAttention computes it
        q, k, v = (t.view(B, T, h, dh).transpose(1, 2) for t in mha.in_proj(x).split(d, dim=-1))  # (B, h, T, dh)
        heads = F.scaled_dot_product_attention(q, k, v)  # (B, h, T, dh)
        # 2. the router: each word scores the heads and keeps its top k
        scores = self.router(x)  # (B, T, h)
        top = scores.topk(self.k, dim=-1)
        gates = torch.zeros_like(scores).scatter(-1, top.indices, F.softmax(top.values, dim=-1) * self.k)  # (B, T, h)
        # 3. the kept heads, gated word by word, concatenated and mixed by W^O, with the residual
        heads = heads * gates.transpose(1, 2).unsqueeze(-1)
        out = x + mha.out_proj(heads.transpose(1, 2).reshape(B, T, d))
        logits = self.read(out).view(B, T, len(self.ex.relations), self.ex.vocab)
        return (logits, gates) if keep_gates else logits


def check_first_seed(seed: object, routing: Routing = Routing()) -> int:
    return growing.check_first_seed(seed, routing.seeds)


def train(k: int, seed: int, routing: Routing, device: torch.device) -> dict:
    """One routed model: its final held-out accuracy and, on the first held-out sequence, which heads each word
    called (the gates)."""
    ex = routing.experiment(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)  # the same initial weights for every k (the router's come after the model's)
        model = RoutedReader(ex, k)
    fit(model.to(device), ex, device)  # the same data stream for every k
    ids, answers = (t.to(device) for t in sample(ex, ex.eval_size, torch.Generator().manual_seed(seed + 2)))
    with torch.no_grad():
        logits, gates = model(ids, keep_gates=True)
    right = (logits.argmax(-1) == answers).float()
    return {"accuracy": float(right.mean()), "tokens": ids[0].tolist(),
            "gates": [[round(float(v), DECIMALS) for v in row] for row in gates[0].cpu()],
            "heads_per_word": float((gates > 0).float().sum(-1).mean())}


def run(seed: int = 0, routing: Routing = Routing(), device: torch.device | None = None,
        progress: Progress | None = None) -> dict:
    """Train a routed model for every k on every seed (seed … seed + routing.seeds − 1); accuracy per k and seed, the
    mean, the share of the all-heads accuracy, the compute per k, seed 0's gates for k = 2; plain JSON types out."""
    seed = check_first_seed(seed, routing)
    device = device or best_device()
    seeds = [seed + i for i in range(routing.seeds)]
    total = len(routing.ks) * len(seeds)
    started = time.perf_counter()
    runs = []
    with threads(device, Experiment().cpu_threads) as n_threads:
        for k in routing.ks:
            for s in seeds:
                if progress is not None:  # the wait box says "run 5 of 12"
                    progress(len(runs) / total, f"run {len(runs) + 1} of {total}")
                runs.append({"k": k, "seed": s} | train(k, s, routing, device))
    h = routing.experiment(seeds[0]).heads[0]  # 8
    mean = {k: statistics.fmean(r["accuracy"] for r in runs if r["k"] == k) for k in routing.ks}
    full = mean[max(routing.ks)]
    shown_k = 2 if 2 in routing.ks else routing.ks[0]
    example = next(r for r in runs if r["k"] == shown_k and r["seed"] == seeds[0])
    return {
        "ks": list(routing.ks), "seeds": seeds, "heads": h,
        "accuracy": {str(k): [round(r["accuracy"], DECIMALS) for r in runs if r["k"] == k] for k in routing.ks},
        "mean_accuracy": {str(k): round(v, DECIMALS) for k, v in mean.items()},
        "kept_share": {str(k): round(v / full, DECIMALS) if full > 0 else 0.0 for k, v in mean.items()},
        # the heads' compute: the share of (word, head) pairs the router keeps, k of 8 (measured: every word keeps k)
        "compute_share": {str(k): round(statistics.fmean(r["heads_per_word"] for r in runs if r["k"] == k) / h,
                                        DECIMALS) for k in routing.ks},
        "relations": list(Experiment().relations),
        "example": {"k": shown_k, "seed": seeds[0], "tokens": example["tokens"], "gates": example["gates"]},
        "task": {"steps": routing.steps, "batch": routing.batch, "lr": routing.lr, "d_model": Experiment().d_model},
        "device": str(device), "threads": n_threads, "seconds": round(time.perf_counter() - started, 3),
        "seed": seeds[0], "computed_at": round(time.time()),  # when this server trained it (a shared run is replayed)
    }


# --- what the page may say of the runs, as data (dragon/findings.py); the answer key --------------------------------


def smallest_keeping(result: dict, margin: float = 0.0) -> int:
    """The smallest k whose mean accuracy keeps KEEP of the all-heads accuracy (within `margin` of the edge)."""
    return min(k for k in result["ks"] if result["kept_share"][str(k)] >= KEEP - margin)


def measured(result: dict) -> dict:
    ks = result["ks"]
    shares = [result["kept_share"][str(k)] for k in ks]
    return {"smallest": smallest_keeping(result), "relations": len(result["relations"]),
            "rises": all(b > a for a, b in itertools.pairwise(shares)),
            "lowest_share": shares[0], "most_at_4": result["kept_share"].get("4", 0.0) >= 0.5,
            "compute": [result["compute_share"][str(k)] for k in ks], "ks": ks}


FINDINGS: tuple[Finding, ...] = (
    Finding("ro_rises", lambda m: m["rises"], "accuracy rises with every step up in k", always=True),
    Finding("ro_needs_all", lambda m: m["smallest"] >= m["relations"], "only k at least the number of relations "
            "each word must recall keeps 95 % of the all-heads accuracy", group="need"),
    Finding("ro_fewer", lambda m: m["smallest"] < m["relations"], "a k below the number of relations each word must "
            "recall keeps 95 % of the all-heads accuracy", group="need"),
    Finding("4-6.why", lambda m: m["smallest"] == max(m["ks"]) and m["rises"] and m["most_at_4"],
            "four heads a word keep most of the accuracy (at least half), only all eight keep 95 %, and accuracy rises "
            "with k", always=True),
    Finding("ro_compute", lambda m: all(abs(c - k / 8) < 1e-6 for c, k in zip(m["compute"], m["ks"], strict=True)),
            "every word keeps exactly k of the 8 heads: the heads' compute is k / 8 of all heads'", always=True),
)


def questions(result: dict) -> list[dict]:
    """The smallest k that keeps 95 % of the all-heads accuracy (mean over the seeds; a k whose share lies within the
    share margin of 95 % is accepted beside the measured answer), and the reading: how much k = READ_K keeps, by
    bucket (a neighbour bucket within the share margin accepted too)."""
    strict, lenient = smallest_keeping(result), smallest_keeping(result, SHARE_MARGIN)
    accepted = [k for k in result["ks"] if lenient <= k <= strict]
    below = [k for k in result["ks"] if k != max(result["ks"])]  # the all-heads k keeps 1.0 by definition
    margin = min(abs(result["kept_share"][str(k)] - KEEP) for k in below)
    read = result["kept_share"][str(READ_K)]
    return [question("smallest_k", [str(k) for k in accepted], result["kept_share"], margin, "share"),
            question("read", accepted_buckets(read, READ_EDGES), read, edge_margin(read, READ_EDGES), "share bucket")]


def read_bucket(share: float) -> int:
    return bucket(share, READ_EDGES)

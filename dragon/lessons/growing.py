"""4-3 Growing up: an eight-head attention trained live from random weights on six relations at once; snapshots of
every head's map, the loss curve, and each head's specialisation (its share of attention on one relative offset);
what the page says of a run, as findings."""

import itertools
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import torch

from dragon.analyze import rounded
from dragon.checks import whole
from dragon.findings import Finding, Measured
from dragon.lessons.heads_experiment import Experiment, Reader, loss_of, sample, threads
from dragon.margins import question
from dragon.runtime.device import best_device
from dragon.runtime.gpu import on_gpu
from dragon.runtime.shared import once

Progress = Callable[..., object]  # (fraction done in [0, 1], what is running[, a live-curve point {series, x, y}])

# The lesson's four stages, by the heads' mean specialisation s (chance: 1 / length = 0.0625):
RANDOM_BELOW = 0.125  # random: s < 2 × chance, every head looks everywhere alike
FAINT_BELOW = 0.35  # faint: s < 0.35, favourite offsets show but most attention is still spread
SETTLE = 0.02  # settled: s ≥ 0.35 and within 0.02 of where the run ends (it has stopped changing); else clear
STAGES = ("random", "faint", "clear", "settled")
MIN_STEPS, MAX_STEPS = 30, 3000  # at least heads_experiment's 30 curve points
SPLIT = 0.25  # a head "splits" when its second favourite offset holds at least a quarter of its attention
MOSTLY = 0.5  # a head "favours one position" when its favourite holds at least half of its attention
DIP = 0.01  # the mean specialisation "grows" when no evaluation point falls more than this below the one before
DECIMALS = 4


@dataclass(frozen=True)
class Growth:
    # 8 heads (d_head 8) on six relations; a gentler learning rate than 3-4's lets the heads grow up over ~300 steps
    # instead of ~60, so that the stages can be seen
    ex: Experiment = field(default_factory=lambda: Experiment(heads=(8,), steps=600, lr=0.003))
    evals: int = 60  # evaluation points over the run: loss, accuracy, specialisation, maps
    eval_size: int = 256  # held-out sequences each evaluation reads
    snapshots: int = 8  # maps kept: evenly spaced in specialisation, plus the first of each stage

    @property
    def heads(self) -> int:
        return self.ex.heads[0]


class GatedReader(Reader):
    """heads_experiment's model (token + learned position embedding → one MHA block → a read-out per relation),
    with gates to switch heads off (4-4) and the attention maps kept when asked."""

    def forward(
        self, ids: torch.Tensor, gates: torch.Tensor | None = None, need_weights: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        B, T = ids.shape
        x = self.tok(ids) + self.pos  # (B, T, d)
        res = self.mha(x, gates, need_weights=need_weights)  # out (B, T, d), weights (B, h, T, T)
        return self.read(res.out).view(B, T, len(self.ex.relations), self.ex.vocab), res.weights


def offset_profile(maps: torch.Tensor) -> torch.Tensor:
    """maps (h, T, T) mean attention → (h, T): the share of each head's attention on each offset δ, the key
    δ places back on the ring (δ = 0 is the token itself)."""
    T = maps.shape[-1]
    i = torch.arange(T, device=maps.device)
    offsets = (i[:, None] - i[None, :]) % T  # (T, T): offset of key j from query i
    onehot = torch.nn.functional.one_hot(offsets, T).to(maps.dtype)  # (T, T, T)
    return torch.einsum("hij,ijd->hd", maps, onehot) / T  # (h, T), rows sum to 1


def stage(s: float, final: float) -> str:
    if s < RANDOM_BELOW:
        return "random"
    if s < FAINT_BELOW:
        return "faint"
    return "settled" if s >= final - SETTLE else "clear"


def evaluate(model: GatedReader, ids: torch.Tensor, answers: torch.Tensor) -> dict:
    """Loss, accuracy and the heads' mean maps on held-out sequences (no gradient)."""
    with torch.no_grad():
        logits, weights = model(ids, need_weights=True)
        maps = weights.mean(dim=0)  # (h, T, T) averaged over the sequences
        profile = offset_profile(maps)  # (h, T)
        best, offset = profile.max(dim=1)  # (h,), (h,)
        return {
            "loss": float(loss_of(logits, answers)),
            "accuracy": float((logits.argmax(-1) == answers).float().mean()),
            "by_head": best.cpu(),
            "offsets": offset.cpu(),
            "maps": maps.cpu(),
        }


def check_steps(steps: object) -> int:
    return whole(steps, "steps", MIN_STEPS, MAX_STEPS)


PUBLIC_SEEDS = 2**31  # a seed a page's box or a public endpoint takes: 0 … 2³¹ − 1
SEEDS = 2**53  # every seed the lessons train: a class exam draws its own from PUBLIC_SEEDS … SEEDS − 1


def check_seed(seed: object, most: int = SEEDS - 1) -> int:
    return whole(seed, "seed", 0, most)


def check_first_seed(seed: object, count: int) -> int:
    """The first of `count` seeds a lesson trains (seed … seed + count − 1): each one a seed the lessons take."""
    return check_seed(seed, SEEDS - count)


def check_public_seed(seed: object) -> int:
    """A seed from outside the server (a public endpoint): 0 … 2³¹ − 1."""
    return check_seed(seed, PUBLIC_SEEDS - 1)


def train(
    steps: int, seed: int, growth: Growth = Growth(), device: torch.device | None = None,
    progress: Progress | None = None,
) -> tuple[GatedReader, dict]:
    """Train from random weights, evaluating `growth.evals` times; the model (on the CPU) and plain-JSON results."""
    steps, seed = check_steps(steps), check_seed(seed)
    device = device or best_device()
    ex = Experiment(**{**asdict(growth.ex), "steps": steps, "seed": seed})
    with threads(device, ex.cpu_threads) as n_threads:
        model, result = _train(ex, growth, device, progress)
    return model, result | {"threads": n_threads}


def _train(ex: Experiment, growth: Growth, device: torch.device, progress: Progress | None) -> tuple:
    started = time.perf_counter()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(ex.seed)
        model = GatedReader(ex, growth.heads)
    model = model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=ex.lr)
    schedule = torch.optim.lr_scheduler.OneCycleLR(opt, ex.lr, total_steps=ex.steps, pct_start=0.1)
    g = torch.Generator().manual_seed(ex.seed + 1)
    held_out = tuple(t.to(device) for t in sample(ex, growth.eval_size, torch.Generator().manual_seed(ex.seed + 2)))
    marks = sorted({round(k * ex.steps / growth.evals) for k in range(growth.evals + 1)})  # steps to evaluate at
    points, losses = [], []
    for step in range(ex.steps + 1):
        if step in marks:
            train_loss = float(torch.stack(losses).mean()) if losses else None
            points.append({"step": step, "train_loss": train_loss, **evaluate(model, *held_out)})
            losses = []
            if progress is not None:  # a point of the held-out loss curve: the live curve grows
                progress(step / ex.steps, f"step {step} of {ex.steps}",
                         {"series": "loss", "x": step, "y": round(points[-1]["loss"], 4)})
        if step == ex.steps:
            break
        ids, answers = (t.to(device) for t in sample(ex, ex.batch, g))
        logits, _ = model(ids)
        loss = loss_of(logits, answers)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        schedule.step()
        losses.append(loss.detach())
    return model.cpu().eval(), results(ex, growth, points, device, time.perf_counter() - started)


def pick_snapshots(spec: list[float], stages: list[str], n: int) -> list[int]:
    """Indices of the evaluation points to keep: the first, the last, the first of each stage, and the first to
    reach each of n evenly spaced levels of specialisation between the first and the last (at most n + 4)."""
    keep = {0, len(spec) - 1}
    keep |= {stages.index(s) for s in STAGES if s in stages}
    lo, hi = spec[0], spec[-1]
    for k in range(1, n - 1):
        level = lo + k / (n - 1) * (hi - lo)
        keep.add(next((i for i, s in enumerate(spec) if s >= level), len(spec) - 1))
    return sorted(keep)


def results(ex: Experiment, growth: Growth, points: list[dict], device: torch.device, seconds: float) -> dict:
    spec = [float(p["by_head"].mean()) for p in points]
    labels = [stage(s, spec[-1]) for s in spec]
    chosen = pick_snapshots(spec, labels, growth.snapshots)
    first = {s: labels.index(s) for s in STAGES if s in labels}
    last = points[-1]
    return {
        "task": {k: v for k, v in asdict(ex).items() if k not in ("heads", "cpu_threads", "curve_points")},
        "heads": growth.heads,
        "d_model": ex.d_model,
        "d_head": ex.d_model // growth.heads,
        "relations": list(ex.relations),
        "chance": round(1 / ex.length, DECIMALS),
        "steps": [p["step"] for p in points],
        "loss": [round(p["loss"], DECIMALS) for p in points],  # held-out loss at each step
        "train_loss": [None if p["train_loss"] is None else round(p["train_loss"], DECIMALS) for p in points],
        "accuracy": [round(p["accuracy"], DECIMALS) for p in points],
        "specialisation": [round(s, DECIMALS) for s in spec],  # the heads' mean share on their favourite offset
        "specialisation_by_head": rounded(torch.stack([p["by_head"] for p in points]), DECIMALS),  # (points, h)
        "offsets_by_head": torch.stack([p["offsets"] for p in points]).tolist(),  # (points, h) favourite offsets
        "stage": labels,
        "stages": [{"stage": s, "step": points[i]["step"], "point": i} for s, i in first.items()],
        "thresholds": {"random_below": RANDOM_BELOW, "faint_below": FAINT_BELOW, "settle_within": SETTLE},
        "snapshots": [
            {
                "step": points[i]["step"],
                "point": i,
                "stage": labels[i],
                "loss": round(points[i]["loss"], DECIMALS),
                "accuracy": round(points[i]["accuracy"], DECIMALS),
                "specialisation": round(spec[i], DECIMALS),
                "by_head": rounded(points[i]["by_head"], DECIMALS),  # (h,)
                "offsets": points[i]["offsets"].tolist(),  # (h,) each head's favourite offset
                "maps": rounded(points[i]["maps"], 3),  # (h, T, T) mean attention over held-out sequences
            }
            for i in chosen
        ],
        "final": {
            "loss": round(last["loss"], DECIMALS),
            "accuracy": round(last["accuracy"], DECIMALS),
            "offsets": last["offsets"].tolist(),
            "by_head": rounded(last["by_head"], DECIMALS),
            "profile": rounded(offset_profile(last["maps"]), DECIMALS),  # (h, T) each head's share on each offset
        },
        "device": str(device),
        "seconds": round(seconds, 3),
        "computed_at": round(time.time()),  # when this server trained it (a shared run is replayed from this record)
    }


def shared(steps: int, seed: int, progress: Progress | None = None) -> tuple[GatedReader, dict]:
    """The run for (steps, seed) on the serving device, trained once per server and shared: every player of 4-3 sees
    the same run, and 4-4 prunes that very model. Players who ask while it trains wait for it, not for a run of
    their own; only the first one asks for a GPU (on a ZeroGPU Space)."""
    steps, seed = check_steps(steps), check_seed(seed)
    run = on_gpu(duration=60)(train)
    return once(memo_key(steps, seed), lambda: run(steps, seed, progress=progress))


def memo_key(steps: int, seed: int) -> tuple:
    """What the shared run for (steps, seed) on the serving device is kept under (dragon/runtime/shared.py)."""
    return ("grow", steps, seed, str(best_device()))


def grow(steps: int = Growth().ex.steps, seed: int = 0, progress: Progress | None = None) -> dict:
    """The run trained on the best device (once per server for these steps and seed) as plain JSON."""
    return shared(steps, seed, progress)[1]


def stage_bounds(run: dict, stage_name: str) -> tuple[float, float]:
    """The specialisation interval of a stage in this run (settled: from the settle line to the end)."""
    th, final = run["thresholds"], run["specialisation"][-1]
    settle = final - th["settle_within"]
    return {"random": (float("-inf"), th["random_below"]), "faint": (th["random_below"], th["faint_below"]),
            "clear": (th["faint_below"], settle), "settled": (settle, float("inf"))}[stage_name]


def typical(run: dict, snap: dict) -> float:
    """How far a snapshot's specialisation lies inside its stage's interval (its distance to the nearer edge)."""
    lo, hi = stage_bounds(run, snap["stage"])
    return min(snap["specialisation"] - lo, hi - snap["specialisation"])


def stage_snapshots(run: dict) -> list[dict]:
    """One snapshot per stage the run reached, the most typical of each (the farthest inside its stage's interval,
    so that no card sits on an edge); settled: the run's last snapshot."""
    out = []
    for st in run["stages"]:
        if st["stage"] == "settled":
            out.append(run["snapshots"][-1])
            continue
        candidates = [s for s in run["snapshots"] if s["stage"] == st["stage"]]
        out.append(max(candidates, key=lambda s: typical(run, s)))
    return out


def card_margin(run: dict, cards: list[dict], i: int) -> float:
    """What decides card i's stage: its distance to its stage's edges and, for the last card (settled, which is
    defined by the end of the run), its gap to the other cards' specialisation."""
    s = cards[i]["specialisation"]
    gap = min((abs(s - c["specialisation"]) for j, c in enumerate(cards) if j != i), default=float("inf"))
    return gap if cards[i]["stage"] == "settled" else min(typical(run, cards[i]), gap)


def switches(run: dict, from_share: float = FAINT_BELOW) -> dict[int, list[int]]:
    """head → the favourite offsets it went through (each change kept) from the first evaluation point at which its
    favourite held at least `from_share` of its attention to the end, for every head whose favourite changed then."""
    out = {}
    for h in range(run["heads"]):
        path: list[int] = []
        for share, offsets in zip(run["specialisation_by_head"], run["offsets_by_head"], strict=True):
            if (path or share[h] >= from_share) and (not path or path[-1] != offsets[h]):
                path.append(offsets[h])
        if len(path) > 1:
            out[h] = path
    return out


def measured(run: dict) -> dict:
    """What 4-3's sentences are about: the cards, the loss and specialisation curves, each head's two favourite
    offsets at the end, and which heads changed their favourite after it held FAINT_BELOW of their attention."""
    cards = stage_snapshots(run)
    profile = torch.tensor(run["final"]["profile"])  # (h, T)
    share, offset = profile.topk(2, dim=1)  # (h, 2) each
    spec = run["specialisation"]
    return {
        "heads": run["heads"], "relations": len(run["relations"]), "cards": len(cards),
        "card_steps": [c["step"] for c in cards], "card_maps": [len(c["maps"]) for c in cards],
        "first_stage": run["stage"][0], "loss": (run["loss"][0], run["loss"][-1]), "spec": spec,
        "largest_dip": max((a - b for a, b in itertools.pairwise(spec)), default=0.0),
        "top": [(int(o[0]), float(v[0])) for o, v in zip(offset, share, strict=True)],
        "second": [(int(o[1]), float(v[1])) for o, v in zip(offset, share, strict=True)],
        "switches": switches(run), "from_share": FAINT_BELOW, "split": SPLIT, "eval_size": Growth().eval_size,
    }


def _splits(m: Measured) -> list[int]:
    return [h for h, (_, v) in enumerate(m["second"]) if v >= m["split"]]


FINDINGS: tuple[Finding, ...] = (
    Finding("4-3.story", lambda m: m["heads"] == 8 and m["relations"] == 6 and m["first_stage"] == "random",
            "8 heads, six relations, and the run starts random", always=True),
    Finding("g_question", lambda m: m["cards"] == len(set(m["card_steps"])) >= 2
            and all(n == m["heads"] for n in m["card_maps"]),
            "the n cards come from n different steps, and each holds one map per head", always=True),
    Finding("g_kept", lambda m: not m["switches"], "no head changed its favourite offset after that offset held "
            "FAINT_BELOW of its attention", group="offsets"),
    Finding("g_switched", lambda m: bool(m["switches"]), "some head changed its favourite offset after its favourite "
            "held FAINT_BELOW of its attention", group="offsets"),
    Finding("g_split", lambda m: bool(_splits(m)), "some head's second favourite offset holds ≥ SPLIT at the end"),
    Finding("4-3.why", lambda m: m["loss"][1] < m["loss"][0] / 10 and m["spec"][-1] >= 5 * m["spec"][0]
            and m["largest_dip"] <= DIP and sum(v >= MOSTLY for _, v in m["top"]) > m["heads"] / 2,
            "the loss fell tenfold, the mean specialisation grew fivefold with no dip over DIP, and most heads give "
            "their favourite offset at least half of their attention", always=True),
)


# --- the answer key: each scored question, its accepted answers, the measured value, the deciding margin ---


def questions(run: dict) -> list[dict]:
    """4-3's questions on the server's run: each snapshot card's stage, by its measured specialisation."""
    cards = stage_snapshots(run)
    return [question(f"card:{snap['stage']}", [snap["stage"]], snap["specialisation"], card_margin(run, cards, i),
                     "share") for i, snap in enumerate(cards)]

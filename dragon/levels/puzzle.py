"""Is a level a good puzzle? DESIGN.md's conditions, computed on the real dragon."""

from dataclasses import dataclass

import torch

from dragon.engine import Reading
from dragon.scoring import ascent_path, score

# DESIGN.md "Scoring": what every shipped slider level must satisfy
MAX_ALL_EQUAL = 65.0
MAX_RANDOM_MEDIAN = 55.0
MIN_NEAR_MEDIAN = 85.0
ASCENT_GOAL, ASCENT_STEPS = 95.0, 50


@dataclass(frozen=True)
class PuzzleReport:
    target: float  # score of the target itself (100)
    all_equal: float  # all gates equal
    random_median: float  # median of 200 random gate vectors
    near_median: float  # median of 200 perturbations of the target by up to ±0.1 per gate
    ascent_steps: int  # gradient steps from all-0.5 to ≥ 95 (ASCENT_STEPS + 1 if never)

    @property
    def problems(self) -> list[str]:
        out = []
        if self.target < 99.99:
            out.append(f"target scores {self.target:.2f}, not 100")
        if self.all_equal > MAX_ALL_EQUAL:
            out.append(f"all-equal gates score {self.all_equal:.1f} > {MAX_ALL_EQUAL}")
        if self.random_median > MAX_RANDOM_MEDIAN:
            out.append(f"random gates' median {self.random_median:.1f} > {MAX_RANDOM_MEDIAN}")
        if self.near_median < MIN_NEAR_MEDIAN:
            out.append(f"near-target median {self.near_median:.1f} < {MIN_NEAR_MEDIAN}")
        if self.ascent_steps > ASCENT_STEPS:
            out.append(f"gradient ascent from 0.5 does not reach {ASCENT_GOAL} in {ASCENT_STEPS} steps")
        return out


def check(reading: Reading, target: list[float], samples: int = 200, seed: int = 0) -> PuzzleReport:
    g = torch.Generator().manual_seed(seed)
    t = torch.tensor(target)
    random = [score(reading, torch.rand(8, generator=g), t) for _ in range(samples)]
    near = [score(reading, (t + (torch.rand(8, generator=g) * 0.2 - 0.1)).clamp(0, 1), t) for _ in range(samples)]
    path = ascent_path(reading, [0.5] * 8, target, steps=ASCENT_STEPS, goal=ASCENT_GOAL)
    reached = next((i for i, (_, s) in enumerate(path) if s >= ASCENT_GOAL), ASCENT_STEPS + 1)
    return PuzzleReport(
        target=score(reading, t, t),
        all_equal=score(reading, [0.5] * 8, t),
        random_median=float(torch.tensor(random).median()),
        near_median=float(torch.tensor(near).median()),
        ascent_steps=reached,
    )

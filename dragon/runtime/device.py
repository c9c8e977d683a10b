"""Device choice: CUDA, else Apple MPS, else CPU, chosen once; DRAGON_DEVICE overrides."""

import functools
import os

import torch


@functools.cache
def best_device() -> torch.device:
    """The fastest device present (for the race and training levels); DRAGON_DEVICE overrides."""
    forced = os.environ.get("DRAGON_DEVICE", "").strip()
    if forced:
        return torch.device(forced)
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


@functools.cache
def interactive_device() -> torch.device:
    """Where the slider path runs: texts have at most 64 tokens, so a GPU's kernel-launch overhead
    costs more than it saves and the CPU wins; DRAGON_DEVICE still overrides."""
    forced = os.environ.get("DRAGON_DEVICE", "").strip()
    return torch.device(forced) if forced else torch.device("cpu")


SERVER_THREADS = torch.get_num_threads()  # torch's threads as the server starts (a training lowers them while it runs)

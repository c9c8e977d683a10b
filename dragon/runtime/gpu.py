"""`on_gpu`: spaces.GPU where the `spaces` package is installed (a ZeroGPU Space), else the function unchanged."""

from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)


def on_gpu(fn: F | None = None, *, duration: int = 60) -> F | Callable[[F], F]:
    """Decorate the functions that want a GPU (the race, the training): on a ZeroGPU Space each call then waits
    for a GPU to be attached, for at most `duration` seconds; anywhere else they run as they are."""

    def wrap(f: F) -> F:
        try:
            import spaces  # only on Hugging Face Spaces
        except ImportError:
            return f
        return spaces.GPU(duration=duration)(f)

    return wrap if fn is None else wrap(fn)

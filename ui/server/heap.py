"""The server's memory: what it loaded at start kept out of the garbage collector's full passes, few malloc arenas,
and free pages given back to the system every 30 s, so its resident size follows what it holds, not what it held."""

import ctypes
import ctypes.util
import gc
import time

M_ARENA_MAX = -8  # mallopt's parameter (malloc.h)
ARENAS = 2  # glibc makes up to 8 per core, one per thread that allocates at once: each keeps its own free pages
TRIM_EVERY_S = 30


def _libc():
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return lib if hasattr(lib, "mallopt") and hasattr(lib, "malloc_trim") else None  # glibc only (not musl, macOS)


def freeze_startup() -> int:
    """Move every object alive now (the levels, the lexicons and jieba's dictionary: millions of objects that live as
    long as the server) out of the collector's view: a full pass then walks only what players made, not all of them
    again (a pause every request waiting behind it would feel). How many objects were frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def few_arenas() -> bool:
    """At most ARENAS malloc arenas from now on (before the server's threads start); False where there is no glibc."""
    lib = _libc()
    return bool(lib is not None and lib.mallopt(M_ARENA_MAX, ARENAS))


def trim() -> bool:
    """Give the free pages at the top and inside every arena back to the system; False where there is no glibc."""
    lib = _libc()
    return bool(lib is not None and lib.malloc_trim(0))


def trim_now_and_then(demo) -> None:
    """Trim every TRIM_EVERY_S seconds, on the sweep Gradio runs once a second on the server's loop."""
    holder = demo.state_holder
    sweep = holder.delete_all_expired_state
    last = [time.monotonic()]

    def sweep_and_trim() -> None:
        sweep()
        if time.monotonic() - last[0] >= TRIM_EVERY_S:
            last[0] = time.monotonic()
            trim()

    holder.delete_all_expired_state = sweep_and_trim

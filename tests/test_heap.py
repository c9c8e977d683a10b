"""ui/server/heap.py: freed memory goes back to the system, so the server's resident size follows what it holds."""

import sys

import pytest

from ui.server import heap


def rss_mb() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@pytest.mark.skipif(not sys.platform.startswith("linux") or heap._libc() is None, reason="glibc only")
def test_trim_gives_freed_pages_back() -> None:
    kept = []
    blocks = [bytearray(8192) for _ in range(40_000)]  # ≈320 MB in blocks glibc takes from its heap, not mmap
    for i, block in enumerate(blocks):
        block[::4096] = b"x" * len(block[::4096])  # touched: resident
        if i % 64 == 0:
            kept.append(block)  # one kept every 64 pins the heap's top: freed pages below stay resident untrimmed
    del blocks, block
    before = rss_mb()
    assert heap.trim()
    after = rss_mb()
    assert after < before - 150, (before, after)
    assert len(kept) == 625


def test_what_start_up_loaded_is_kept_out_of_full_collections(app_server) -> None:
    import gc

    assert gc.get_freeze_count() > 100_000  # the app's launch froze its start-up objects (levels, lexicons, jieba)

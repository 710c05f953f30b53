"""The flow's freed memory handed back to the system (flow/heap.py)."""

import os
import sys

import pytest

from jaxmap.flow.heap import _malloc_trim, release_freed


def _resident_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux") or _malloc_trim() is None,
                    reason="malloc_trim is glibc's")
def test_freed_blocks_between_live_ones_leave_the_process():
    blocks = [bytes(2000) for _ in range(40_000)]  # 80 MB of the C heap, not mmapped
    kept = blocks[::100]  # live blocks up to the heap's top: free() alone returns nothing
    del blocks
    before = _resident_mb()
    release_freed()
    assert before - _resident_mb() > 40
    assert len(kept) == 400

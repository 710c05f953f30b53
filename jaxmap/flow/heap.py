"""Memory the value flow let go of, handed back to the system where the C library can.

glibc's allocator keeps the blocks a process frees for its next allocations: after the
raw flow facts are read into tables, or a pass's memo is cleared, tens of MB stay
resident that the next stage does not reuse in full, and the build's peak counts them.
`malloc_trim` returns the free pages; elsewhere (macOS, musl) nothing is done."""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache


def release_freed() -> None:
    """Return the pages of freed blocks to the system, where glibc can."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@lru_cache(maxsize=1)
def _malloc_trim():
    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name), "malloc_trim") if name else None
    except (OSError, AttributeError):
        return None

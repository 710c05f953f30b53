"""Processes as /proc shows them (Linux): what a server started, and whether it is gone."""

from __future__ import annotations

import os
import time


def descendants(pid: int) -> set[int]:
    """Every live process under `pid`, and every process in a group one of them leads."""
    parents, groups = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat(int(entry))
            if fields:
                parents[int(entry)], groups[int(entry)] = int(fields[1]), int(fields[2])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found | {p for p, group in groups.items() if group in found}


def stat(pid: int) -> list[str] | None:
    """State, parent and process group of `pid`; None when it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] in "ZX" else fields[:3]


def left(pids: set[int], within: float = 2.0) -> set[int]:
    """Those of `pids` still alive after `within` seconds (sooner once none is)."""
    deadline = time.monotonic() + within
    while (alive := {p for p in pids if stat(p)}) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive

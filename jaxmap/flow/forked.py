"""The call graph's modules read in forked helper processes: each helper inherits the
value flow as it stands when it forks (copy-on-write) and answers the modules it is
given from there, memoising what it computes for itself. The flow's answers do not
depend on the questions asked before (engine.py), so a module's rows are the same in
any process.

Before the helpers fork, this process reads the largest modules, a tenth of the
calls: what they compute (core's, lax's, numpy's values) is what most other modules
read, and a helper forked without it computed it again for itself. On the installed
jax, the loop's CPU on 2 helpers went from 10.0 to 7.8 s, on 8 from 20.7 to 9.7 s."""

from __future__ import annotations

import functools
import os
import signal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Callable

    Progress = Callable[[int, int, Callable[[], list[str]]], None]

_PARALLEL_MIN_MODULES = 48  # fewer read faster in this process than forks start
_READ_FIRST = 0.1  # the share of the work (`sizes`) this process does before forking
# Helpers at most, whatever the cores: each one's memo grows apart from the others'
# (jax's loop on 8 helpers did 2.7 times one process's work), and so does its memory.
_MOST_HELPERS = 16
_WORK: dict = {}  # what helpers call, set before they fork
_SLOT = [0]  # in a helper: its place in the slots that say which module each reads


def each(count: int, work: Callable[[int], object], jobs: int, progress: Progress | None,
         path: Callable[[int], str], sizes: list[int] | None = None,
         least: int | None = None, fresh: bool = False) -> list:
    """`work(place)` for each place in range(count), in order; with `jobs` above one,
    on as many processes (where processes fork; _MOST_HELPERS at most; with `least`
    places at least, else _PARALLEL_MIN_MODULES), largest (`sizes`) first; with
    `fresh`, each place in a helper forked for it alone, which no other place's work
    has changed. `progress` is told of each place done and can ask which files are in
    work (`path`)."""
    results: list = [None] * count
    if least is None:
        least = _PARALLEL_MIN_MODULES
    if jobs <= 1 or count < least or os.name != "posix":
        for place in range(count):
            if progress is not None:
                progress(place, count, functools.partial(_named, path, place))
            results[place] = work(place)
        return results
    import multiprocessing

    jobs = min(jobs, _MOST_HELPERS)
    context = multiprocessing.get_context("fork")
    slots = context.Array("i", [-1] * jobs, lock=False)
    _WORK.update(work=work, slots=slots)
    order = sorted(range(count), key=lambda place: -(sizes[place] if sizes else 0))
    first, read = 0, 0
    while sizes and first < len(order) and read < _READ_FIRST * sum(sizes):
        place = order[first]
        if progress is not None:
            progress(first, count, functools.partial(_named, path, place))
        results[place] = work(place)
        read += sizes[place]
        first += 1
    taken = context.Value("i", 0)
    if progress is not None:  # told before the first module a helper reads ends
        progress(first, count, list)
    try:
        with context.Pool(jobs, initializer=_start, initargs=(taken,),
                          maxtasksperchild=1 if fresh else None) as pool:
            for done, (place, result) in enumerate(
                    pool.imap_unordered(_work, order[first:], chunksize=1), first + 1):
                results[place] = result
                if progress is not None:
                    progress(done, count, lambda: [path(p) for p in list(slots) if p >= 0])
    finally:
        _WORK.clear()
    return results


def _named(path: Callable[[int], str], place: int) -> list[str]:
    return [path(place)]


def _start(taken) -> None:
    """A helper takes the next slot, and ignores Ctrl-C: this process alone handles it,
    and ends the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with taken.get_lock():
        _SLOT[0] = taken.value % len(_WORK["slots"])
        taken.value += 1


def _work(place: int) -> tuple[int, object]:
    """In a helper: one place's work, the place kept in the helper's slot meanwhile."""
    slots, slot = _WORK["slots"], _SLOT[0]
    slots[slot] = place
    try:
        return place, _WORK["work"](place)
    finally:
        slots[slot] = -1

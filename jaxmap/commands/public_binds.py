"""Which primitives each public function binds when traced, for REPO-MAP-BINDS.md.

`bound_by_public` is the one place the map decides what a public function binds: the
primitives it binds itself or through the functions it calls or hands on, nearest
first, at most MAX_DEPTH calls down, at trace time as `binds` answers by default: not
in or through an interpreter (knowledge/interpreters.py), which runs only when a
jaxpr is evaluated or lowered.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import NamedTuple

from jaxmap.knowledge.interpreters import is_interpreter

MAX_DEPTH = 6  # calls down from the public function; farther binds are mostly plumbing
COMMON_SHARE = 4  # a primitive reached by over 1/COMMON_SHARE of them is common,
COMMON_LEAST = 20  # if by at least this many


class PublicBinds(NamedTuple):
    """A public function (its shortest public path, where it is defined), the
    primitives it binds nearest first (name, calls down), and how many common ones
    (conversions, broadcasts, sharding casts most functions reach) it also binds
    farther down: the nearest binds are listed, common or not."""

    path: str
    file: str
    line: int
    primitives: tuple[tuple[str, int], ...]
    common: int


def bound_by_public(index, graph) -> dict[int, dict[int, int]]:
    """Public function id -> {primitive id: calls down to its bind}."""
    interpreters = {did for did, (qualname, *_rest) in graph.places.items()
                    if is_interpreter(qualname)}
    binds: dict[int, set[int]] = defaultdict(set)
    for did, pid, _line, _via in index.bound_by(list(graph.places)):
        if did not in interpreters:
            binds[did].add(pid)
    down = {caller: callees - interpreters for caller, callees in graph.down.items()
            if caller not in interpreters}
    found = {}
    for did in graph.public:
        if not graph.is_function(did) or did in interpreters:
            continue
        reached = {pid: 0 for pid in binds.get(did, ())}
        for callee, step in graph.levels(did, down, MAX_DEPTH):
            for pid in binds.get(callee, ()):
                reached.setdefault(pid, step)
        if reached:
            found[did] = reached
    return found


def public_binds(index, graph) -> tuple[tuple[PublicBinds, ...], tuple[str, ...]]:
    """One row per public function that binds a primitive, by public path; and the
    common primitives, counted in each row rather than listed."""
    found = bound_by_public(index, graph)
    names = {pid: name or variable for pid, name, variable
             in index.primitive_labels({p for reached in found.values() for p in reached})}
    reach = Counter(pid for reached in found.values() for pid in reached)
    common = {pid for pid, n in reach.items()
              if n * COMMON_SHARE > len(found) and n >= COMMON_LEAST}
    rows = []
    for did, reached in found.items():
        _qualname, _kind, file, line = graph.places[did]
        nearest = min(reached.values())
        own = sorted(((names[p], step) for p, step in reached.items()
                      if p not in common or step == nearest),
                     key=lambda item: (item[1], item[0]))
        rows.append(PublicBinds(graph.public[did], file, line, tuple(own),
                                len(reached) - len(own)))
    return tuple(sorted(rows)), tuple(sorted(names[p] for p in common))

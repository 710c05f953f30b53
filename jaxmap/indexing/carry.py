"""Carrying the call graph across an update that resolves the first phase again.

An edit that adds a function nothing names (moves.added_functions) changes the first
phase (a definition more, so every id after it moves) but not the call graph: its
rows are read from the old index, their definition and primitive ids renumbered to the
new first phase's, and written as they are, stale (the facts they were read from kept
in table `stale`), for the next graph question to check and move (indexer._moved)."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from jaxmap.store.records import Resolution
from jaxmap.store.write import SecondPhase


def carried_graph(old: SecondPhase, resolution: Resolution) -> Resolution | None:
    """`resolution` (a first phase) with the `old` index's second phase, its ids
    renumbered; None where some id of it stands for nothing in `resolution`."""
    definition = _renumbering(old.definitions, ((d.file, d.qualname, d.kind)
                                                for d in resolution.definitions))
    primitive = _renumbering(old.primitives, ((p.name, p.module, p.variable)
                                              for p in resolution.primitives))
    if definition is None or primitive is None:
        return None
    rows = old.rows
    return resolution._replace(
        calls=[(definition[caller], definition.get(callee), *rest)
               for caller, callee, *rest in rows["calls"]],
        binds=[(module, function, primitive[pid], line, definition.get(caller), via)
               for module, function, pid, line, caller, via in rows["binds"]],
        tests=[(primitive[pid], *rest) for pid, *rest in rows["tests"]],
        rule_calls=tuple((primitive[pid], kind, platform, definition[rule], definition[callee])
                         for pid, kind, platform, rule, callee in rows["rule_calls"]),
        messages=rows["messages"])


def _renumbering(old: list[tuple], new: Iterable[tuple]) -> dict | None:
    """Old id -> new id of rows (id, *key) whose keys, each counted with the ones before
    it, the new rows' keys hold (a key twice, as two same-named variables, is told
    apart by its order); None when one does not."""
    places: dict[tuple, int] = {}
    seen: Counter[tuple] = Counter()
    for i, key in enumerate(new):
        places[key, seen[key]] = i
        seen[key] += 1
    found: dict[int, int] = {}
    seen.clear()
    for number, *rest in old:
        key = tuple(rest)
        place = places.get((key, seen[key]))
        if place is None:
            return None
        found[number] = place
        seen[key] += 1
    return found

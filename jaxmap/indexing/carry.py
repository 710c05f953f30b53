"""Carrying the call graph across an update that resolves the first phase again.

An edit that adds a function nothing names (moves.added_functions) changes the first
phase (a definition more, so every id after it moves) but not the call graph: the old
index's rows stay, their definition and primitive ids renumbered to the new first
phase's (store/write_carry.py writes it in place), stale (the facts they were read
from kept in table `stale`) for a first-phase question, for the next graph question to
check and move (indexer._moved); a graph question moves their lines at once."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from jaxmap.store.records import Resolution


def renumbering(old: tuple[list[tuple], list[tuple]],
                resolution: Resolution) -> tuple[dict[int, int], dict[int, int]] | None:
    """Old id -> new id of each definition and of each primitive of the `old` index
    (store.identities), in `resolution` (a first phase); None where one of them stands
    for nothing there."""
    definitions, primitives = old
    definition = _renumbering(definitions, ((d.file, d.qualname, d.kind)
                                            for d in resolution.definitions))
    primitive = _renumbering(primitives, ((p.name, p.module, p.variable)
                                          for p in resolution.primitives))
    if definition is None or primitive is None:
        return None
    return definition, primitive


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

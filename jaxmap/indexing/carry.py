"""Carrying the call graph across an update that resolves the first phase again.

An edit that adds a function nothing names (moves.added_functions) changes the first
phase (a definition more, so every id after it moves) but not the call graph: the old
index's rows stay, their definition and primitive ids renumbered to the new first
phase's (store/write_carry.py writes it in place), stale (the facts they were read
from kept in table `stale`) for a first-phase question, for the next graph question to
check and move (indexer._moved); a graph question moves their lines at once.

Nor, mostly, the first phase: no text names such a function, so resolving reads
nothing of it, and what resolving the tree again would find differs from the old
index's only by the function's own definition row, with no public path, where the
function is private, or no public module exports its module (`exported`). Then the
first phase is not resolved again: its rows move, and the definition is put in among
them (`added_definitions`, store/write_carry.py's add_in_place)."""

from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable

from jaxmap.indexing.facts import STAR, Definition, Import
from jaxmap.indexing.resolve.edges import public_module
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


def added_definitions(parsed: dict[str, dict], added: dict[str, frozenset]) -> list[tuple]:
    """(file, how many of its old definitions come before it, row) of the definition of
    each function `added` (path -> names) to the file's `parsed` facts; row: the
    definitions table's columns but the id, as resolving writes them (edges.py)."""
    found = []
    for path, names in sorted(added.items()):
        module, before = parsed[path]["module"], 0
        for d in map(Definition._make, parsed[path]["defs"]):
            if d.kind == "function" and d.qualname in names:
                found.append((path, before, (d.name, f"{module}.{d.qualname}", d.kind,
                                             module, path, d.line, d.end_line, d.doc,
                                             None)))
            else:
                before += 1
    return found


def exported(added: dict[str, tuple[str, frozenset]],
             imports: Callable[[], Iterable[tuple[str, list]]]) -> bool:
    """Whether a public module might export a function `added` (path -> (module,
    names)): one not private, in a public module or in one that a public module
    star-imports, at any remove (edges._exported, which reads `__all__` too, is
    followed no further). `imports()`: (module, its facts' imports) of every file,
    read only where some function added is not private."""
    modules = {module for module, names in added.values()
               if any(not name.startswith("_") for name in names)}
    if not modules:
        return False
    importers: dict[str, set[str]] = {}  # module -> modules that star-import it
    for module, found in imports():
        for target in (i.target for i in map(Import._make, found) if i.alias == STAR):
            importers.setdefault(target, set()).add(module)
    while modules:
        if any(public_module(module) for module in modules):
            return True
        reached = set().union(*(importers.pop(module, ()) for module in modules))
        modules = reached
    return False

"""The call graph held in memory for the map's per-function tables (a public function's
primitives, the public functions that reach a raise site): thousands of walks that one
SQL query per step would make slow.

A walk follows calls and functions handed on (`jit(f)`), never a call of what a
parameter received (`through`): as `binds` and `calls` walk the index.
"""

from __future__ import annotations

from collections import defaultdict

from jaxmap.models import HANDED, RESOLVED
from jaxmap.store.rows import shown_path


class WholeGraph:
    """Edges down (caller -> callees) and up, definitions' kinds, and the public path
    each public definition is shown by (rows.py's shown_path)."""

    def __init__(self, index) -> None:
        self.down: dict[int, set[int]] = defaultdict(set)
        self.up: dict[int, set[int]] = defaultdict(set)
        for caller, callee, status in index.call_edges():
            if status in (RESOLVED, HANDED):
                self.down[caller].add(callee)
                self.up[callee].add(caller)
        self.places = {did: (qualname, kind, file, line)
                       for did, qualname, kind, file, line, _end in index.spans()}
        paths: dict[int, list[str]] = defaultdict(list)
        for did, path in index.public_path_rows():  # shortest first
            paths[did].append(path)
        self.public = {did: shown_path(self.places[did][0] if did in self.places else "",
                                       public) for did, public in paths.items()}
        self.ids = {qualname: did for did, (qualname, *_rest) in
                    sorted(self.places.items(), reverse=True)}  # the first of a name

    def is_function(self, did: int) -> bool:
        return self.places.get(did, ("", ""))[1] == "function"

    def levels(self, start: int, edges: dict[int, set[int]], depth: int):
        """(definition, steps from `start`) of the functions `edges` lead to from
        `start`, breadth first, each once, at most `depth` steps away."""
        seen, frontier = {start}, [start]
        for step in range(1, depth + 1):
            found = sorted(n for d in frontier for n in edges.get(d, ())
                           if n not in seen and self.is_function(n))
            frontier = list(dict.fromkeys(found))
            seen.update(frontier)
            yield from ((n, step) for n in frontier)
            if not frontier:
                return

"""Which definitions a change reaches, to tell a review's reach findings apart
(reach.py): a chain stepping through one is the change's; one stepping through none
is most often where the call graph's solve cut a cycle elsewhere (#33).

A definition is reached when the diff edits its own lines (those no definition
nested in it holds; all of one added or removed); when it is defined in a changed file
and calls other functions than it did (an import or a module-level name changed under
it); or when it calls a reached definition and calls other functions than it did
itself, so through such callers at any depth: what a changed function returns is what
its caller calls now (`chosen()(x)`, where `chosen` returns another function). The
walk up stops at a caller that calls the same functions on both sides, so it stays
within what the change moved (every caller of the definitions `57df568546` edits is
11,570 definitions, 2 s more). Not reached, then: a caller of a function that only
hands on what a changed one returns, calling nothing new (`mid()(x)`, where `mid`
returns `chosen()`). One in another file calling through a module-level name the
change rebinds (`CHOSEN = sin`) is reached: its call is also a call of the variable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

if TYPE_CHECKING:
    from jaxmap.store.read import Index


class Graph:
    """One side's call rows, read by qualified name (ids differ between the sides)."""

    def __init__(self, index: Index, qualnames: dict[int, str], files: dict[int, str]):
        self.index = index
        self.qualnames = qualnames
        self.files = files
        self._ids: dict[str, list[int]] = {}
        for did, name in qualnames.items():
            self._ids.setdefault(name, []).append(did)

    def ids(self, names: Iterable[str]) -> list[int]:
        return [did for name in names for did in self._ids.get(name, ())]

    def calls(self, names: Iterable[str]) -> dict[str, set[str]]:
        """Qualified name -> what the definitions of that name call (or hand on)."""
        found: dict[str, set[str]] = {}
        for caller, callee in self.index.followed_callees(self.ids(names)):
            if callee in self.qualnames:
                found.setdefault(self.qualnames[caller], set()).add(self.qualnames[callee])
        return found

    def callers(self, names: Iterable[str]) -> set[str]:
        """The functions that call (or hand on) a definition named one of `names`."""
        return {self.qualnames[caller] for caller, _callee, _line, function
                in self.index.callers(self.ids(names), through=False)
                if function and caller in self.qualnames}


def reached(old: Graph, new: Graph, files: list[str],
            edits: Mapping[str, tuple[Sequence[int], Sequence[int]]]) -> frozenset[str]:
    """The qualified names of the definitions a change of `files` reaches; `edits`:
    file -> the lines it removed (BASE's numbers) and added (HEAD's)."""
    names = edited(old.index, {file: lines[0] for file, lines in edits.items()})
    names |= edited(new.index, {file: lines[1] for file, lines in edits.items()})
    where = set(files)
    defined = {name for graph in (old, new) for did, name in graph.qualnames.items()
               if graph.files[did] in where}
    names |= _recalled(old, new, defined)
    frontier, seen = set(names), set(names)
    while frontier:
        callers = (old.callers(frontier) | new.callers(frontier)) - seen
        seen |= callers
        frontier = _recalled(old, new, callers)
        names |= frontier
    return frozenset(names)


def _recalled(old: Graph, new: Graph, names: set[str]) -> set[str]:
    """Those of `names` that call other functions at HEAD than at BASE."""
    before, after = old.calls(names), new.calls(names)
    return {name for name in names if before.get(name) != after.get(name)}


def edited(index: Index, edits: Mapping[str, Sequence[int]]) -> set[str]:
    """The qualified names of the definitions of `index` whose own lines are among
    `edits` (file -> lines): for each line, the innermost definition holding it."""
    return {name for name, _file, _line in edited_places(index, edits)}


def edited_places(index: Index, edits: Mapping[str, Sequence[int]]
                  ) -> set[tuple[str, str, int]]:
    """(qualified name, file, first line) of each definition `edited` names."""
    spans: dict[str, list[tuple[str, int, int]]] = {}
    for name, file, line, end in index.spans_in([f for f, lines in edits.items() if lines]):
        spans.setdefault(file, []).append((name, line, end))
    return {(name, file, line) for file, found in spans.items()
            for name, line in _innermost(found, edits[file])}


def _innermost(spans: list[tuple[str, int, int]], lines: Sequence[int]
               ) -> set[tuple[str, int]]:
    """Of `spans` (name, first line, last line; each nested in another or apart), the
    innermost holding each of `lines`: its name and first line."""
    spans = sorted(spans, key=lambda span: (span[1], -span[2]))
    found: set[tuple[str, int]] = set()
    held: list[tuple[str, int, int]] = []  # the spans open at the line, outermost first
    taken = 0
    for line in sorted(set(lines)):
        while taken < len(spans) and spans[taken][1] <= line:
            while held and held[-1][2] < spans[taken][1]:
                held.pop()
            held.append(spans[taken])
            taken += 1
        while held and held[-1][2] < line:
            held.pop()
        if held:
            name, first, _last = held[-1]
            found.add((name, first))
    return found

"""Row types of the whole-index reads (index.py's definition_rows, primitive_rows,
binds) and of call-graph nodes, for the repo map and the call-graph queries."""

from __future__ import annotations

from typing import NamedTuple


def shown_path(qualname: str, public) -> str:
    """How users write a definition, from its public paths: the shortest that keeps its
    own name, else the shortest, else its qualified name (equal lengths: the first in
    sorted order)."""
    own = qualname.rpartition(".")[2]
    ordered = sorted(public, key=lambda path: (len(path), path))
    return next((path for path in ordered if path.rpartition(".")[2] == own),
                ordered[0] if ordered else qualname)


class DefinitionRow(NamedTuple):
    """A definition as stored, with the module that defines it."""

    qualname: str
    kind: str
    module: str
    file: str
    line: int
    summary: str | None


class PrimitiveRow(NamedTuple):
    """A primitive as stored; `id` is what rules and binds refer to."""

    id: int
    name: str | None
    module: str
    file: str
    line: int


class Bind(NamedTuple):
    """A function (by module and name) that binds a primitive."""

    module: str
    function: str
    primitive_id: int
    line: int


class Node(NamedTuple):
    """A definition in the call graph: its id, where it is, and its public paths
    (shortest first)."""

    id: int
    qualname: str
    kind: str
    file: str
    line: int
    public: tuple[str, ...]

    @property
    def label(self) -> str:
        """How users write it: its shortest public path that keeps its own name (not
        `pkg.assist` of `from .util import helper as assist`: `pkg.util.helper`, the
        others being aliases), else its shortest public path, else its qualified name."""
        return shown_path(self.qualname, self.public)

    @property
    def renamed(self) -> tuple[str, ...]:
        """Its public paths under another name than its own (`pkg.assist`)."""
        own = self.qualname.rpartition(".")[2]
        return tuple(path for path in self.public if path.rpartition(".")[2] != own)

"""Row types of the whole-index reads (index.py's definition_rows, primitive_rows,
binds) and of call-graph nodes, for the repo map and the call-graph queries."""

from __future__ import annotations

from typing import NamedTuple


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
        """How users write it: its shortest public path, else its qualified name."""
        return self.public[0] if self.public else self.qualname

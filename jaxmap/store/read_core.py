"""The core of the read API, which its parts build on (read.py puts them together as
`Index`): the open connection, the index's meta, and `_in`, which runs a query over a
list of values however long; with the SQL text more than one part reads. Each part is a
mixin of `IndexCore`; what one asks of another is declared here, for the type checker
only.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from jaxmap.store.write import DROPPED, GRAPH, STALE

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

# A primitive by name string (`name` or its `_p`-less `stem`), variable (`name`, or
# `stem_p`: `scatter_add` is `scatter_add_p`, whose string is `scatter-add`) or alias:
# a hijax class by the name `new-primitive` was given (`my_op` is `class MyOp`): the one
# rule for every command that takes a primitive's name.
NAMED_PRIMITIVE = ("name IN (?, ?) OR variable IN (?, ?) OR ',' || aliases || ',' LIKE ? "
                   "ESCAPE '!' OR (style = 'hijax' AND lower(replace(name, '_', '')) = ?) "
                   "ORDER BY file, line")
# The functions of each rule after its first (each operand's JVP of `ad.defjvp` but the
# first, defbilinear's right transpose), a row each with the rule's own columns, read
# from its `functions` JSON: `each_rule_function` reads them beside the first.
_MORE_FUNCTIONS = (
    "(SELECT r.primitive_id, r.seq, r.kind, r.file, r.line, r.via, r.platform, "
    "json_extract(f.value, '$[0]') "
    "AS function_name, json_extract(f.value, '$[1]') AS function_file, "
    "json_extract(f.value, '$[2]') AS function_line FROM rules r, json_each(r.functions) f "
    "WHERE r.functions IS NOT NULL)")
_LIST = "(?*)"  # where `_in` puts a list of values
_MAX_PARAMETERS = 900  # below SQLite's oldest limit on bound parameters (999)


def each_rule_function(select: str) -> str:
    """`select`, which reads the rules as `{rules} r` by their first function's columns,
    over every function of each rule: the first, then the rest (`_MORE_FUNCTIONS`)."""
    return f"{select.format(rules='rules')} UNION ALL {select.format(rules=_MORE_FUNCTIONS)}"


class IndexCore:
    """An open index: its connection and meta, and how a query runs over a list."""

    def __init__(self, conn: sqlite3.Connection, path: str):
        self._conn = conn
        self.path = path
        self.meta = dict(conn.execute("SELECT key, value FROM meta"))
        self.root = self.meta["root"]

    def close(self) -> None:
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _in(self, query: str, values: Iterable) -> list[tuple]:
        """The rows of `query` for a list of values, which goes in place of each `(?*)`
        (`WHERE id IN (?*)`); a long list is asked for in slices, in order. With two
        lists (`module IN (?*) OR target IN (?*)`), a row two slices both match is
        kept once (the queries that have two give distinct rows)."""
        values = list(values)
        rows: list[tuple] = []
        lists = query.count(_LIST)
        for chunk in _chunks(values, _MAX_PARAMETERS // lists):
            rows += self._conn.execute(
                query.replace(_LIST, f"({','.join('?' * len(chunk))})"), chunk * lists)
        return list(dict.fromkeys(rows)) if lists > 1 else rows

    @property
    def graph_built(self) -> bool:
        """Whether the index holds a current call graph (a snapshot never does): read
        each time, as another process may move rows and leave it stale meanwhile."""
        return self._graph_state() == "1"

    @property
    def graph_stale(self) -> bool:
        """Whether the call graph is not current since an edit: stale, or dropped."""
        return self._graph_state() in (STALE, DROPPED)

    def _graph_state(self) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (GRAPH,)).fetchone()
        return row[0] if row else None

    @property
    def jax_version(self) -> str | None:
        return self.meta.get("jax_version") or None

    if TYPE_CHECKING:  # what one part asks of another, by the module that defines it
        # read.py
        def _named_rows(self, query: str) -> list[tuple]: ...


def _chunks(values: list, size: int) -> Iterator[list]:
    for start in range(0, len(values), size):
        yield values[start:start + size]


def named_primitive(name: str, stem: str) -> tuple:
    """The parameters of NAMED_PRIMITIVE."""
    return (name, stem, name, f"{stem}_p", f"%,{like(name)},%",
            stem.replace("_", "").lower())


def like(text: str) -> str:
    return text.replace("!", "!!").replace("%", "!%").replace("_", "!_")

"""The read API: every query any command runs against an index, with named columns.

The one module that reads the index with SQL (store.py writes it). Reads SQLite
only: no parsing, no graph, no jax import. An index opened from a snapshot answers
the same queries (its `root` is then a label).
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from jaxmap import store
from jaxmap.errors import StoreError
from jaxmap.models import Definition, DefKind, FunctionRef, Primitive, Rule, RuleKind, SourceLoc

if TYPE_CHECKING:
    from jaxmap.rows import Bind, DefinitionRow, PrimitiveRow, RuleRow

_PRIMITIVE = "id, name, variable, module, file, line, end_line, style"
_RULE = ("primitive_id, kind, file, line, end_line, via, platform, function_name, "
         "function_file, function_line, platforms, functions, condition")
_DEFINITION = "id, name, qualname, kind, file, line, end_line, summary"


class Index:
    """A read-only view of one root's index (or of a snapshot)."""

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

    @property
    def jax_version(self) -> str | None:
        return self.meta.get("jax_version") or None

    def locate(self, name: str, kind: str | None = None, platform: str | None = None):
        """locate.locate on this index (a locate.Found)."""
        from jaxmap import locate

        return locate.locate(self, name, kind, platform)

    # -- primitives ------------------------------------------------------------------

    def primitives(self) -> list[Primitive]:
        """Every primitive with its rules."""
        rules: dict[int, list[Rule]] = {}
        for row in self._conn.execute(f"SELECT {_RULE} FROM rules ORDER BY primitive_id, seq"):
            rules.setdefault(row[0], []).append(_rule(row))
        return [_primitive(row, rules.get(row[0], ())) for row in
                self._conn.execute(f"SELECT {_PRIMITIVE} FROM primitives ORDER BY id")]

    def primitives_named(self, name: str, stem: str) -> list[Primitive]:
        """Primitives whose name string is `name` or `stem`, or whose variable is
        `name`, with their rules and the tests that exercise them."""
        rows = self._conn.execute(
            f"SELECT {_PRIMITIVE} FROM primitives WHERE name IN (?, ?) OR variable = ? "
            "ORDER BY file, line", (name, stem, name)).fetchall()
        return [_primitive(row, self._rules(row[0]))._replace(tests=self._tests(row[0]))
                for row in rows]

    def _rules(self, pid: int) -> list[Rule]:
        return [_rule(row) for row in self._conn.execute(
            f"SELECT {_RULE} FROM rules WHERE primitive_id = ? ORDER BY seq", (pid,))]

    def _tests(self, pid: int) -> tuple[FunctionRef, ...]:
        """Test functions that use the primitive or call a function that binds it."""
        return tuple(FunctionRef(name, SourceLoc(file, line)) for name, file, line in
                     self._conn.execute("SELECT name, file, line FROM tests WHERE "
                                        "primitive_id = ? ORDER BY file, line", (pid,)))

    # -- definitions -----------------------------------------------------------------

    def definitions_named(self, query: str) -> list[Definition]:
        """Definitions named `query`; for a dotted query, those whose qualified name or
        a public path is `query` or ends with `.query`."""
        if "." not in query:
            rows = self._conn.execute(
                f"SELECT {_DEFINITION} FROM definitions WHERE name = ? ORDER BY file, line",
                (query,))
        else:
            rows = self._conn.execute(
                f"SELECT {_DEFINITION} FROM definitions WHERE qualname = ? "
                "OR qualname LIKE ? ESCAPE '!' OR id IN (SELECT definition_id FROM "
                "public_paths WHERE path = ? OR path LIKE ? ESCAPE '!') ORDER BY file, line",
                (query, "%." + _like(query), query, "%." + _like(query)))
        return self._definitions(rows.fetchall())

    def public_definitions(self) -> list[Definition]:
        """Definitions exported under a public path, in path order."""
        rows = self._conn.execute(
            f"SELECT {_DEFINITION} FROM definitions WHERE id IN (SELECT definition_id FROM "
            "public_paths) ORDER BY file, line, qualname").fetchall()
        return self._definitions(rows)

    def _definitions(self, rows) -> list[Definition]:
        """Definitions of rows, with their public paths fetched in one query."""
        ids = [row[0] for row in rows]
        public: dict[int, list[str]] = {}
        for start in range(0, len(ids), 900):  # SQLite's limit on bound parameters
            chunk = ids[start:start + 900]
            for did, path in self._conn.execute(
                    f"SELECT definition_id, path FROM public_paths WHERE definition_id IN "
                    f"({','.join('?' * len(chunk))}) ORDER BY path", chunk):
                public.setdefault(did, []).append(path)
        return [Definition(name, qualname, DefKind(kind), SourceLoc(file, line, end_line),
                           tuple(public.get(did, ())), summary)
                for did, name, qualname, kind, file, line, end_line, summary in rows]

    def names(self) -> set[str]:
        """Every primitive name, primitive variable and definition name."""
        return {name for (name,) in self._conn.execute(
            "SELECT name FROM primitives UNION SELECT variable FROM primitives "
            "UNION SELECT name FROM definitions") if name}

    def definition_ending(self, name: str) -> tuple[str, str, int] | None:
        """(qualname, file, line) of the definition whose qualified name ends with
        `.name` (case-insensitively): under jax._src first, then the shortest; of several
        definitions of one name (`@overload` stubs, then the function), the last."""
        row = self._conn.execute(
            "SELECT qualname, file, line FROM definitions WHERE qualname LIKE ? ESCAPE '!' "
            "ORDER BY (qualname LIKE 'jax.!_src.%' ESCAPE '!') DESC, length(qualname), "
            "qualname, file, line DESC LIMIT 1", ("%." + _like(name),)).fetchone()
        return tuple(row) if row else None

    def place(self, qualname: str) -> tuple[str, int] | None:
        """(file, line) of the first definition of `qualname`."""
        row = self._conn.execute("SELECT file, line FROM definitions WHERE qualname = ? "
                                 "ORDER BY id LIMIT 1", (qualname,)).fetchone()
        return tuple(row) if row else None

    # -- everything, for the graph and the map ---------------------------------------

    def definition_rows(self) -> list[DefinitionRow]:
        from jaxmap.rows import DefinitionRow

        return [DefinitionRow(*row) for row in self._conn.execute(
            "SELECT qualname, kind, module, file, line, summary FROM definitions ORDER BY id")]

    def primitive_rows(self) -> list[PrimitiveRow]:
        from jaxmap.rows import PrimitiveRow

        return [PrimitiveRow(*row) for row in self._conn.execute(
            "SELECT id, name, module, file, line FROM primitives ORDER BY id")]

    def rule_rows(self) -> list[RuleRow]:
        from jaxmap.rows import RuleRow

        return [RuleRow(*row) for row in self._conn.execute(
            "SELECT primitive_id, kind, file, line, function_file, function_line FROM rules "
            "ORDER BY rowid")]

    def imports(self) -> list[tuple[str, str]]:
        """(module, imported module) of every import inside the tree."""
        return self._conn.execute("SELECT module, target FROM imports ORDER BY rowid").fetchall()

    def binds(self) -> list[Bind]:
        from jaxmap.rows import Bind

        return [Bind(*row) for row in self._conn.execute(
            "SELECT module, function, primitive_id, line FROM binds ORDER BY rowid")]

    def file_count(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]

    def diagnostics(self) -> list[str]:
        """What the resolver could not place (a rule registered on a value it could not
        trace to a primitive), with locations."""
        return [message for (message,) in
                self._conn.execute("SELECT message FROM diagnostics ORDER BY rowid")]


def open_index(root=None, *, progress=None) -> Index:
    """Open the index of `root` for queries, building or refreshing it first if needed."""
    from jaxmap import indexer

    path, _ = indexer.ensure_index(root, progress=progress)
    return open_file(path)


def open_file(path: str) -> Index:
    """Open the index at `path` as it is (StoreError if it is not a readable index)."""
    conn = store.connect_readonly(path)
    try:
        if conn is None:
            raise sqlite3.DatabaseError("not a jaxmap index")
        return Index(conn, path)
    except (sqlite3.DatabaseError, KeyError) as error:
        if conn is not None:
            conn.close()
        raise StoreError(f"the index at {path} is unreadable ({error}); "
                         f"run `jaxmap index --rebuild`") from error


def _primitive(row, rules) -> Primitive:
    _pid, name, variable, module, file, line, end_line, style = row
    return Primitive(name or "", variable or "", module, SourceLoc(file, line, end_line),
                     style, tuple(rules))


def _rule(row) -> Rule:
    _pid, kind, file, line, end_line, via, platform, f_name, f_file, f_line, platforms, \
        more, condition = row
    function = FunctionRef(f_name, SourceLoc(f_file, f_line)) if f_name else None
    functions = (function,) if function else ()
    if more:
        import json

        functions += tuple(FunctionRef(n, SourceLoc(f, li)) for n, f, li in json.loads(more))
    return Rule(RuleKind(kind), SourceLoc(file, line, end_line), via, platform, function,
                tuple(platforms.split(",")) if platforms else (), functions, condition)


def _like(text: str) -> str:
    return text.replace("!", "!!").replace("%", "!%").replace("_", "!_")

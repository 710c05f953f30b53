"""Questions answered from the index: name -> primitives and definitions; all primitives.

Reads SQLite only: no parsing, no graph, no jax import.
"""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from jaxmap import store
from jaxmap.errors import JaxmapError, NotFound, StoreError
from jaxmap.models import (DefKind, Definition, FunctionRef, Primitive, Rule, RuleKind,
                           SourceLoc)

RULE_KINDS = tuple(k.value for k in RuleKind)
RESULT_KINDS = ("primitive",) + tuple(k.value for k in DefKind)


class Found(NamedTuple):
    """What `locate` found for one query."""

    query: str
    primitives: tuple[Primitive, ...]
    definitions: tuple[Definition, ...]


class Index:
    """A read-only view of one root's index (or of a snapshot: then `root` is a label)."""

    def __init__(self, conn: sqlite3.Connection, path: str):
        self.conn = conn
        self.path = path
        self.meta = dict(conn.execute("SELECT key, value FROM meta"))
        self.root = self.meta["root"]

    def close(self) -> None:
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def jax_version(self) -> str | None:
        return self.meta.get("jax_version") or None

    # -- locate --------------------------------------------------------------------

    def locate(self, name: str, kind: str | None = None) -> Found:
        """Primitives and definitions that `name` may mean, optionally only one `kind`
        (a rule kind: primitives with such rules, only those shown; or a result kind);
        NotFound with suggestions when there are none."""
        query = name.strip()
        if not query:
            raise NotFound("give a name to locate, e.g. `jaxmap locate psum`")
        if kind is not None and kind not in RULE_KINDS + RESULT_KINDS:
            raise JaxmapError(f"unknown kind {kind!r}; one of {', '.join(RULE_KINDS + RESULT_KINDS)}")
        rule_kind = kind if kind in RULE_KINDS else None
        want = {"primitive"} if rule_kind else {kind} if kind else set(RESULT_KINDS)
        prims = self._primitives_named(query) if "primitive" in want else []
        if rule_kind:
            prims = [p for p in (_only_kind(p, rule_kind) for p in prims) if p.rules]
        defs = [d for d in self._definitions_named(query) if d.kind.value in want]
        if not prims and not defs:
            raise NotFound(f"nothing named {query!r} in the index of {self.root}",
                           self.suggest(query))
        return Found(query, tuple(prims), tuple(defs))

    def _primitives_named(self, query: str) -> list[Primitive]:
        leaf = query.rpartition(".")[2]
        stem = leaf[:-2] if leaf.endswith("_p") else leaf
        rows = self.conn.execute(
            "SELECT * FROM primitives WHERE name IN (?, ?) OR variable = ? ORDER BY file, line",
            (leaf, stem, leaf)).fetchall()
        return [self._primitive(row)._replace(tests=self._tests(row[0])) for row in rows]

    def _tests(self, pid: int) -> tuple[FunctionRef, ...]:
        """Test functions that use the primitive or call a function that binds it."""
        return tuple(FunctionRef(name, SourceLoc(file, line)) for name, file, line in
                     self.conn.execute("SELECT name, file, line FROM tests WHERE "
                                       "primitive_id = ? ORDER BY file, line", (pid,)))

    def _definitions_named(self, query: str) -> list[Definition]:
        if "." not in query:
            rows = self.conn.execute(
                "SELECT * FROM definitions WHERE name = ? ORDER BY file, line", (query,))
        else:
            rows = self.conn.execute(
                "SELECT * FROM definitions WHERE qualname = ? OR qualname LIKE ? ESCAPE '!' "
                "OR id IN (SELECT definition_id FROM public_paths WHERE path = ? "
                "OR path LIKE ? ESCAPE '!') ORDER BY file, line",
                (query, "%." + _like(query), query, "%." + _like(query)))
        return self._definitions(rows.fetchall())

    def suggest(self, query: str, limit: int = 5) -> tuple[str, ...]:
        """Names close to `query`, for 'did you mean'."""
        import difflib

        leaf = query.rpartition(".")[2]
        names = {row[0] for row in self.conn.execute(
            "SELECT name FROM primitives UNION SELECT variable FROM primitives "
            "UNION SELECT name FROM definitions") if row[0]}
        return tuple(difflib.get_close_matches(leaf, sorted(names), n=limit, cutoff=0.75))

    def public_definitions(self) -> list[Definition]:
        """Definitions exported under a public path, in path order."""
        rows = self.conn.execute(
            "SELECT * FROM definitions WHERE id IN (SELECT definition_id FROM public_paths) "
            "ORDER BY file, line, qualname").fetchall()
        return self._definitions(rows)

    def diagnostics(self) -> list[str]:
        """What the resolver could not place (a rule registered on a value it could not
        trace to a primitive), with locations."""
        return [row[0] for row in self.conn.execute("SELECT message FROM diagnostics ORDER BY rowid")]

    # -- primitives ------------------------------------------------------------------

    def primitives(self, missing: str | None = None) -> list[Primitive]:
        """Every primitive with its rules; with `missing`, only those lacking that kind."""
        rules = self._rules_by_primitive()
        result = []
        for row in self.conn.execute("SELECT * FROM primitives ORDER BY id"):
            prim = self._primitive(row, rules.get(row[0], ()))
            if missing is None or all(r.kind.value != missing for r in prim.rules):
                result.append(prim)
        return result

    def _rules_by_primitive(self) -> dict[int, list[Rule]]:
        grouped: dict[int, list[Rule]] = {}
        for row in self.conn.execute("SELECT * FROM rules ORDER BY primitive_id, seq"):
            grouped.setdefault(row[0], []).append(_rule(row))
        return grouped

    def _primitive(self, row, rules=None) -> Primitive:
        pid, name, variable, module, file, line, end_line, style = row
        if rules is None:
            rules = [_rule(r) for r in self.conn.execute(
                "SELECT * FROM rules WHERE primitive_id = ? ORDER BY seq", (pid,))]
        return Primitive(name or "", variable or "", module, SourceLoc(file, line, end_line),
                         style, tuple(rules))

    def _definitions(self, rows) -> list[Definition]:
        """Definitions of rows, with their public paths fetched in one query."""
        ids = [row[0] for row in rows]
        public: dict[int, list[str]] = {}
        for start in range(0, len(ids), 900):  # SQLite's limit on bound parameters
            chunk = ids[start:start + 900]
            for did, path in self.conn.execute(
                    f"SELECT definition_id, path FROM public_paths WHERE definition_id IN "
                    f"({','.join('?' * len(chunk))}) ORDER BY path", chunk):
                public.setdefault(did, []).append(path)
        return [Definition(name, qualname, DefKind(kind), SourceLoc(file, line, end_line),
                           tuple(public.get(did, ())), summary)
                for did, name, qualname, kind, _module, file, line, end_line, summary in rows]


def open_index(root=None, *, progress=None) -> Index:
    """Open the index of `root` for queries, building or refreshing it first if needed."""
    from jaxmap import indexer

    path, _ = indexer.ensure_index(root, progress=progress)
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


def _rule(row) -> Rule:
    _, _, kind, file, line, end_line, via, platform, f_name, f_file, f_line = row
    function = FunctionRef(f_name, SourceLoc(f_file, f_line)) if f_name else None
    return Rule(RuleKind(kind), SourceLoc(file, line, end_line), via, platform, function)


def _only_kind(prim: Primitive, kind: str) -> Primitive:
    return prim._replace(rules=tuple(r for r in prim.rules if r.kind.value == kind))


def _like(text: str) -> str:
    return text.replace("!", "!!").replace("%", "!%").replace("_", "!_")

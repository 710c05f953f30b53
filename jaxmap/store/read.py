"""The read API: every query any command runs against an index, with named columns.

The one module that reads the index with SQL (store.py writes it). Reads SQLite
only: no parsing, no graph, no jax import. An index opened from a snapshot answers
the same queries (its `root` is then a label).
"""

from __future__ import annotations

import sqlite3
from functools import partial
from typing import TYPE_CHECKING

from jaxmap.errors import StoreError
from jaxmap.models import (
    Definition,
    DefKind,
    FunctionRef,
    Primitive,
    Rule,
    RuleKind,
    SourceLoc,
)
from jaxmap.store import write as store

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from jaxmap.store.rows import Bind, DefinitionRow, Node, PrimitiveRow

_PRIMITIVE = "id, name, variable, module, file, line, end_line, style, aliases"
_RULE = ("primitive_id, kind, file, line, end_line, via, platform, function_name, "
         "function_file, function_line, platforms, functions, condition, written")
# A primitive by name string (`name` or its `_p`-less `stem`), variable or alias: the
# one rule for every command that takes a primitive's name.
_NAMED_PRIMITIVE = ("name IN (?, ?) OR variable = ? OR ',' || aliases || ',' LIKE ? "
                    "ESCAPE '!' ORDER BY file, line")
_RULE_OF_R = ", ".join(f"r.{column.strip()}" for column in _RULE.split(","))
_DEFINITION = "id, name, qualname, kind, file, line, end_line, summary"
_LIST = "(?*)"  # where `Index._in` puts a list of values
_MAX_PARAMETERS = 900  # below SQLite's oldest limit on bound parameters (999)


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
        """Whether the index holds the call graph (a snapshot never does)."""
        return self.meta.get("graph") == "1"

    @property
    def jax_version(self) -> str | None:
        return self.meta.get("jax_version") or None

    # -- primitives ------------------------------------------------------------------

    def primitives(self) -> list[Primitive]:
        """Every primitive with its rules."""
        rules: dict[int, list[Rule]] = {}
        for row in self._conn.execute(f"SELECT {_RULE} FROM rules ORDER BY primitive_id, seq"):
            rules.setdefault(row[0], []).append(_rule(row))
        return [_primitive(row, rules.get(row[0], ())) for row in
                self._conn.execute(f"SELECT {_PRIMITIVE} FROM primitives ORDER BY id")]

    def primitive_count(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM primitives").fetchone()[0]

    def primitives_named(self, name: str, stem: str) -> list[Primitive]:
        """Primitives whose name string is `name` or `stem`, or whose variable (or an
        alias) is `name`, with their rules and the tests that exercise them."""
        rows = self._conn.execute(
            f"SELECT {_PRIMITIVE} FROM primitives WHERE {_NAMED_PRIMITIVE}",
            _named_primitive(name, stem)).fetchall()
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
        return self._definitions(self._named_rows(query))

    def _named_rows(self, query: str) -> list[tuple]:
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
        return rows.fetchall()

    def public_definitions(self) -> list[Definition]:
        """Definitions exported under a public path, in path order."""
        rows = self._conn.execute(
            f"SELECT {_DEFINITION} FROM definitions WHERE id IN (SELECT definition_id FROM "
            "public_paths) ORDER BY file, line, qualname").fetchall()
        return self._definitions(rows)

    def _definitions(self, rows) -> list[Definition]:
        """Definitions of rows, with their public paths fetched in one query."""
        public = self._public_of([row[0] for row in rows], "path")
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

    def span(self, qualname: str) -> tuple[str, int, int] | None:
        """(file, line, end line) of the first definition of `qualname`."""
        row = self._conn.execute("SELECT file, line, end_line FROM definitions WHERE "
                                 "qualname = ? ORDER BY id LIMIT 1", (qualname,)).fetchone()
        return tuple(row) if row else None

    # -- the call graph --------------------------------------------------------------

    def definition_ids(self, query: str) -> list[int]:
        """Ids of the definitions `definitions_named(query)` finds, in the same order."""
        return [row[0] for row in self._named_rows(query)]

    def definition_id(self, d: Definition) -> int:
        """The id of a definition this index returned."""
        return self._conn.execute(
            "SELECT id FROM definitions WHERE qualname = ? AND file = ? AND line = ?",
            (d.qualname, d.loc.file, d.loc.line)).fetchone()[0]

    def nodes(self, ids) -> dict[int, Node]:
        """id -> the definition as a call-graph node, with its public paths."""
        from jaxmap.store.rows import Node

        ids = list(ids)
        public = self._public_of(ids)
        return {did: Node(did, qualname, kind, file, line, tuple(public.get(did, ())))
                for did, qualname, kind, file, line in self._in(
                    "SELECT id, qualname, kind, file, line FROM definitions WHERE id IN (?*)",
                    ids)}

    def binders(self, pids) -> list[tuple[int, int, int, str | None]]:
        """(definition id, primitive id, line, helper or None) of each function binding
        one of the primitives `pids`."""
        return self._in(
            "SELECT definition_id, primitive_id, line, via FROM binds WHERE primitive_id IN "
            "(?*) AND definition_id IS NOT NULL ORDER BY definition_id, via IS NOT NULL, line",
            pids)

    def bound_by(self, ids) -> list[tuple[int, int, int, str | None]]:
        """(definition id, primitive id, line, helper or None) of what `ids` bind."""
        return self._in(
            "SELECT definition_id, primitive_id, line, via FROM binds WHERE definition_id "
            "IN (?*) ORDER BY definition_id, line", ids)

    def callers(self, ids, through: bool = True) -> list[tuple[int, int, int, bool]]:
        """(caller, callee, line, whether the caller is a function) of each edge to one of
        `ids` that reaches it: calls, and functions handed on (`jit(f)`); with `through`,
        calls of what a parameter received too (not a caller's own choice of callee: a
        reachability walk leaves them out). A caller that is a variable is an alias of the
        function it names (`swish = silu`), as a function is; any other is a module's top
        level or a class body."""
        statuses = "'resolved', 'handed', 'through'" if through else "'resolved', 'handed'"
        return self._in(
            "SELECT caller, callee, calls.line, kind IN ('function', 'variable') FROM calls "
            "JOIN definitions "
            f"ON definitions.id = caller WHERE callee IN (?*) AND status IN ({statuses}) "
            "ORDER BY calls.rowid", ids)

    def guarded_callers(self, ids) -> list[tuple[int, int, int, bool, str | None, str | None]]:
        """`callers(ids, through=False)`, each with its call guard: the caller's
        parameters its `if` requires None for the call, and, where the callee has such
        a guard, the callee's parameters the call passes surely not None (each
        comma-separated, or None)."""
        return self._in(
            "SELECT caller, callee, calls.line, kind IN ('function', 'variable'), guard, "
            "fills FROM calls JOIN definitions ON definitions.id = caller "
            "WHERE callee IN (?*) AND status IN ('resolved', 'handed') ORDER BY calls.rowid",
            ids)

    def uniform_status(self, pairs: set[tuple[int, int]]) -> dict[tuple[int, int], str]:
        """(caller, callee) -> the status every call row of that pair has, for the pairs
        among `pairs` whose rows agree (`through`: of what a value holds; `handed`: a
        function handed on, not called there)."""
        statuses: dict[tuple[int, int], set[str]] = {}
        for caller, callee, status in self._in(
                "SELECT caller, callee, status FROM calls WHERE callee IN (?*)",
                {callee for _caller, callee in pairs}):
            if (caller, callee) in pairs:
                statuses.setdefault((caller, callee), set()).add(status)
        return {pair: found.pop() for pair, found in statuses.items() if len(found) == 1}

    def callees(self, ids) -> list[tuple[int, int | None, str, str, int]]:
        """(caller, callee or None, text, status, line) of each call made by `ids`."""
        return self._in("SELECT caller, callee, text, status, line FROM calls WHERE caller "
                        "IN (?*) ORDER BY rowid", ids)

    def unresolved_calls_named(self, leaf: str) -> list[tuple[int, str, int]]:
        """(caller, text, line) of unresolved calls whose text ends with `leaf`: callers
        that may exist but could not be told."""
        return self._conn.execute(
            "SELECT caller, text, line FROM calls WHERE status = 'unresolved' AND "
            "(text = ? OR text LIKE ? ESCAPE '!') ORDER BY rowid",
            (leaf, "%." + _like(leaf))).fetchall()

    def unresolved_calls(self) -> list[tuple[int, str]]:
        """(caller, text) of every unresolved call."""
        return self._conn.execute(
            "SELECT caller, text FROM calls WHERE status = 'unresolved'").fetchall()

    def call_counts(self) -> dict[str, int]:
        """How many call edges of each status (resolved, external, unresolved)."""
        return dict(self._conn.execute("SELECT status, COUNT(*) FROM calls GROUP BY status"))

    def primitive_ids(self, name: str, stem: str) -> list[tuple[int, str, str]]:
        """(id, name, variable) of primitives `primitives_named` would find."""
        return self._conn.execute(
            f"SELECT id, name, variable FROM primitives WHERE {_NAMED_PRIMITIVE}",
            _named_primitive(name, stem)).fetchall()

    def messages(self) -> list[tuple[str, int, str, str, tuple[str, ...], bool]]:
        """(file, line, function, exception, literal pieces, whether the function
        returns the exception rather than raising it) of every message."""
        import json

        return [(file, line, function, exception, tuple(json.loads(pieces)), bool(returned))
                for file, line, function, exception, pieces, returned in self._conn.execute(
                    "SELECT file, line, function, exception, pieces, returned FROM messages "
                    "ORDER BY rowid")]

    # -- neighbourhoods (graph NAME), over every edge kind ---------------------------

    def module_members(self, modules) -> list[tuple[str, str, int]]:
        """(module, 'definition' or 'primitive', id) of the functions, classes and
        primitives each of `modules` defines."""
        return self._in(
            "SELECT module, 'definition', id FROM definitions WHERE module IN (?*) "
            "AND kind IN ('function', 'class') UNION ALL SELECT module, 'primitive', id "
            "FROM primitives WHERE module IN (?*)", modules)

    def imports_touching(self, modules) -> list[tuple[str, str]]:
        """(module, imported module) where either side is one of `modules`."""
        return self._in("SELECT module, target FROM imports WHERE module IN (?*) OR target IN "
                        "(?*) ORDER BY rowid", modules)

    def module_definitions(self, modules) -> dict[int, str]:
        """definition id -> module, of each of `modules` (a module is a definition too)."""
        return dict(self._in("SELECT id, qualname FROM definitions WHERE kind = 'module' "
                             "AND qualname IN (?*)", modules))

    def definition_modules(self, ids) -> dict[int, str]:
        """definition id -> the module that defines it."""
        return dict(self._in("SELECT id, module FROM definitions WHERE id IN (?*)", ids))

    def primitive_places(self, pids) -> dict[int, tuple[str, str, str, int]]:
        """primitive id -> (name, module, file, line)."""
        return {row[0]: row[1:] for row in self._in(
            "SELECT id, coalesce(name, variable), module, file, line FROM primitives "
            "WHERE id IN (?*)", pids)}

    def rules_with_functions(self, pids) -> list[tuple[int, int, str, str, int, int | None]]:
        """(primitive id, seq, kind, file, line, id of the rule's function or None)."""
        return self._in(
            "SELECT r.primitive_id, r.seq, r.kind, r.file, r.line, (SELECT d.id FROM "
            "definitions d WHERE d.file = r.function_file AND d.line = r.function_line "
            "AND d.kind = 'function' LIMIT 1) FROM rules r WHERE r.primitive_id IN (?*) "
            "ORDER BY r.primitive_id, r.seq", pids)

    def rules_implemented_by(self, ids) -> list[tuple[int, int, int]]:
        """(primitive id, seq, definition id) of the rules the functions `ids` implement."""
        return self._in(
            "SELECT r.primitive_id, r.seq, d.id FROM definitions d JOIN rules r ON "
            "r.function_file = d.file AND r.function_line = d.line WHERE d.id IN (?*)", ids)

    def registrations(self, ids) -> list[tuple[int, str, str, str, int]]:
        """(definition id, rule kind, primitive, file, line of the registration) of each
        rule whose function is one of `ids`: what makes a rule function run."""
        return self._in(
            "SELECT d.id, r.kind, coalesce(p.name, p.variable), r.file, r.line FROM "
            "definitions d JOIN rules r ON r.function_file = d.file AND r.function_line = "
            "d.line JOIN primitives p ON p.id = r.primitive_id WHERE d.id IN (?*) "
            "ORDER BY d.id, r.file, r.line", ids)

    def rule_binders(self, ids, kinds: tuple[str, ...]) -> list[tuple]:
        """`_rules_run_at_binds` for the functions run that are one of `ids` (up from a
        rule to what binds its primitive)."""
        return self._rules_run_at_binds(True, ids, kinds)

    def rules_bound_by(self, ids, kinds: tuple[str, ...]) -> list[tuple]:
        """`_rules_run_at_binds` for the binds made by one of `ids` (down from a
        function to the rules its binds run)."""
        return self._rules_run_at_binds(False, ids, kinds)

    def _rules_run_at_binds(self, by_function: bool, ids, kinds: tuple[str, ...]
                            ) -> list[tuple[int, int, int, bool, str, str, str | None,
                                            str | None]]:
        """(binder, function run, line of the bind, whether the binder is a function,
        primitive, rule kind, platform, the rule function that calls it or None) for
        each bind of a primitive that has a rule of one of `kinds` whose function is a
        definition of the tree (binding the primitive runs it, and the functions its
        partial hands it that it calls: `rule_calls`), where the function run (if
        `by_function`) or the binder is one of `ids`."""
        listed = ", ".join(f"'{kind}'" for kind in kinds if kind.isidentifier())

        def run(joined: str, function: str, via: str) -> list[tuple]:
            column = function if by_function else "b.definition_id"
            return self._in(
                f"SELECT DISTINCT b.definition_id, {function}, b.line, bd.kind IN "
                "('function', 'variable'), coalesce(p.variable, p.name), r.kind, r.platform, "
                f"{via} FROM binds b JOIN primitives p ON p.id = b.primitive_id JOIN "
                f"definitions bd ON bd.id = b.definition_id {joined} WHERE {column} IN (?*) "
                f"AND r.kind IN ({listed})", ids)

        rows = run("JOIN rules r ON r.primitive_id = b.primitive_id JOIN definitions d ON "
                   "d.file = r.function_file AND d.line = r.function_line", "d.id", "NULL") \
            + run("JOIN rule_calls r ON r.primitive_id = b.primitive_id JOIN definitions rd "
                  "ON rd.id = r.rule", "r.callee", "rd.qualname")
        return sorted(set(rows), key=partial(_run_order, by_function))

    def definitions_at(self, files) -> dict[tuple[str, int], tuple[int, int]]:
        """(file, line) -> (id, end line) of the functions defined in `files`."""
        return {(file, line): (did, end) for did, file, line, end in self._in(
            "SELECT id, file, line, end_line FROM definitions WHERE kind = 'function' AND "
            "file IN (?*)", files)}

    def primitive_labels(self, pids) -> list[tuple[int, str, str]]:
        """(id, name, variable) of the primitives `pids`."""
        return self._in("SELECT id, name, variable FROM primitives WHERE id IN (?*)", pids)

    def _public_of(self, ids: list[int], order: str = "length(path), path"
                   ) -> dict[int, list[str]]:
        """id -> its public paths (shortest first, unless `order` says otherwise)."""
        public: dict[int, list[str]] = {}
        for did, path in self._in("SELECT definition_id, path FROM public_paths WHERE "
                                  f"definition_id IN (?*) ORDER BY {order}", ids):
            public.setdefault(did, []).append(path)
        return public

    # -- an editor's questions (commands/editor.py, commands/rule_gaps.py) ------------

    def calls_at(self, file: str, line: int) -> list[tuple[str, int]]:
        """(text as written, callee id) of each resolved call at `line` of `file`."""
        return self._conn.execute(
            "SELECT c.text, c.callee FROM definitions d JOIN calls c ON c.caller = d.id "
            "WHERE d.file = ? AND c.line = ? AND c.status = 'resolved' ORDER BY c.rowid",
            (file, line)).fetchall()

    def definitions_with_ids(self, ids) -> list[Definition]:
        """The definitions `ids`, in file and line order."""
        rows = self._in(f"SELECT {_DEFINITION} FROM definitions WHERE id IN (?*)", ids)
        return self._definitions(sorted(rows, key=lambda row: (row[4], row[5])))

    def primitives_in_file(self, file: str) -> list[Primitive]:
        """The primitives defined in `file`, with their rules, in line order."""
        rows = self._conn.execute(f"SELECT {_PRIMITIVE} FROM primitives WHERE file = ? "
                                  "ORDER BY line, id", (file,)).fetchall()
        return [_primitive(row, self._rules(row[0])) for row in rows]

    def rules_with_function_in(self, file: str, line: int | None = None
                               ) -> list[tuple[int, str, str, str, str, int]]:
        """(function line, function name, kind, primitive, registration file,
        registration line) of the rules whose function is in `file` (at `line`, if given)."""
        at = "" if line is None else " AND r.function_line = ?"
        return self._conn.execute(
            "SELECT r.function_line, r.function_name, r.kind, "
            "coalesce(nullif(p.name, ''), p.variable), r.file, r.line "
            "FROM rules r JOIN primitives p ON p.id = r.primitive_id "
            f"WHERE r.function_file = ?{at} ORDER BY r.function_line, p.id, r.seq",
            (file,) if line is None else (file, line)).fetchall()

    def rules_registered_in(self, file: str) -> list[tuple[str, Rule]]:
        """(primitive, rule) of each rule whose registration statement is in `file`."""
        return [(label, _rule(row)) for label, *row in self._conn.execute(
            f"SELECT coalesce(nullif(p.name, ''), p.variable), {_RULE_OF_R} FROM rules r "
            "JOIN primitives p ON p.id = r.primitive_id WHERE r.file = ? "
            "ORDER BY r.line, r.seq", (file,))]

    def primitives_matching(self, text: str, limit: int) -> list[tuple[str, str, str, str, int]]:
        """(name, variable, module, file, line) of primitives whose name or variable
        contains `text` (case-insensitively), shortest first."""
        pattern = f"%{_like(text)}%"
        return self._conn.execute(
            "SELECT name, variable, module, file, line FROM primitives WHERE name LIKE ? "
            "ESCAPE '!' OR variable LIKE ? ESCAPE '!' ORDER BY length(coalesce(name, "
            "variable)), name, variable LIMIT ?", (pattern, pattern, limit)).fetchall()

    def public_paths_matching(self, text: str, limit: int) -> list[tuple[str, str, str, int]]:
        """(public path, kind, file, line) of the public paths whose last part contains
        `text` (case-insensitively), shortest first."""
        return self._conn.execute(
            "SELECT p.path, d.kind, d.file, d.line FROM public_paths p JOIN definitions d "
            "ON d.id = p.definition_id WHERE d.name LIKE ? ESCAPE '!' "
            "ORDER BY length(p.path), p.path LIMIT ?", (f"%{_like(text)}%", limit)).fetchall()

    # -- everything, for the graph and the map ---------------------------------------

    def definition_rows(self) -> list[DefinitionRow]:
        from jaxmap.store.rows import DefinitionRow

        return [DefinitionRow(*row) for row in self._conn.execute(
            "SELECT qualname, kind, module, file, line, summary FROM definitions ORDER BY id")]

    def spans(self) -> list[tuple[int, str, str, str, int, int | None]]:
        """(id, qualname, kind, file, line, end line) of every definition."""
        return self._conn.execute(
            "SELECT id, qualname, kind, file, line, end_line FROM definitions").fetchall()

    def call_pairs(self) -> set[tuple[int, int]]:
        """(caller, callee) of every call edge with a callee, whatever its status."""
        return set(self._conn.execute(
            "SELECT caller, callee FROM calls WHERE callee IS NOT NULL").fetchall())

    def primitive_rows(self) -> list[PrimitiveRow]:
        from jaxmap.store.rows import PrimitiveRow

        return [PrimitiveRow(*row) for row in self._conn.execute(
            "SELECT id, name, module, file, line FROM primitives ORDER BY id")]

    def imports(self) -> list[tuple[str, str]]:
        """(module, imported module) of every import inside the tree."""
        return self._conn.execute("SELECT module, target FROM imports ORDER BY rowid").fetchall()

    def binds(self) -> list[Bind]:
        from jaxmap.store.rows import Bind

        return [Bind(*row) for row in self._conn.execute(
            "SELECT module, function, primitive_id, line FROM binds ORDER BY rowid")]

    def call_edges(self) -> list[tuple[int, int, str]]:
        """(caller, callee, status) of every call edge with a callee, for a walk over
        the whole graph in memory (the map's per-function tables)."""
        return self._conn.execute("SELECT DISTINCT caller, callee, status FROM calls "
                                  "WHERE callee IS NOT NULL").fetchall()

    def public_path_rows(self) -> list[tuple[int, str]]:
        """(definition id, public path) of every public path, shortest first."""
        return self._conn.execute("SELECT definition_id, path FROM public_paths "
                                  "ORDER BY length(path), path").fetchall()

    def class_bases(self) -> list[tuple[str, str, str, int, tuple[str, ...], dict]]:
        """(module, file, class qualname in its module, line, its bases as dotted names,
        the module's top-level import aliases -> targets) of every class, from the
        stored facts (a base written otherwise than as a dotted name is left out)."""
        import marshal

        rows = []
        for file, module, blob in self._conn.execute(
                "SELECT path, module, facts FROM files JOIN facts USING (path) ORDER BY path"):
            try:
                raw = marshal.loads(blob)
            except (ValueError, EOFError, TypeError) as error:
                raise StoreError(f"the index entry for {file} is unreadable ({error}); "
                                 "run `jaxmap index --rebuild`") from error
            aliases = {alias: target for scope, alias, target, *_ in raw["imports"]
                       if scope == ""}
            for name, (bases, line, *_rest) in raw["classes"].items():
                rows.append((module, file, name, line,
                             tuple(d for d in map(_dotted, bases) if d), aliases))
        return rows

    def file_count(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]

    def diagnostics(self) -> list[str]:
        """What the resolver could not place (a rule registered on a value it could not
        trace to a primitive), with locations."""
        return [message for (message,) in
                self._conn.execute("SELECT message FROM diagnostics ORDER BY rowid")]


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
    _pid, name, variable, module, file, line, end_line, style, aliases = row
    return Primitive(name or "", variable or "", module, SourceLoc(file, line, end_line),
                     style, tuple(rules), aliases=tuple(aliases.split(",")) if aliases else ())


def _rule(row) -> Rule:
    _pid, kind, file, line, end_line, via, platform, f_name, f_file, f_line, platforms, \
        more, condition, written = row
    function = FunctionRef(f_name, SourceLoc(f_file, f_line)) if f_name else None
    functions: tuple[FunctionRef, ...] = (function,) if function else ()
    if more:
        import json

        functions += tuple(FunctionRef(n, SourceLoc(f, li)) for n, f, li in json.loads(more))
    if written:
        import json

        name, w_file, w_line = json.loads(written)
        written = FunctionRef(name, SourceLoc(w_file, w_line))
    return Rule(RuleKind(kind), SourceLoc(file, line, end_line), via, platform, function,
                tuple(platforms.split(",")) if platforms else (), functions, condition,
                written or None)


def _dotted(expression) -> str | None:
    """`core.Trace` of a base written `core.Trace` or `core.Trace[T]`; None otherwise."""
    while expression and expression[0] == "sub":  # facts.SUBSCRIPT: a generic's base
        expression = expression[1]
    return expression[1] if expression and expression[0] == "n" else None  # facts.NAME


def _chunks(values: list, size: int) -> Iterator[list]:
    for start in range(0, len(values), size):
        yield values[start:start + size]


def _named_primitive(name: str, stem: str) -> tuple:
    """The parameters of _NAMED_PRIMITIVE."""
    return name, stem, name, f"%,{_like(name)},%"


def _like(text: str) -> str:
    return text.replace("!", "!!").replace("%", "!%").replace("_", "!_")


def _run_order(by_function: bool, row: tuple) -> tuple:
    """The order of `_rules_run_at_binds`'s rows, total so that no answer depends on the
    order a set gave them: by the id asked about, binder, line, function run, then the
    rule kind (`impl` before `lowering`: where one function is both rules of a
    primitive, a chain says the impl rule, the one a bind outside jit runs), platform
    and rule function calling it."""
    binder, function, line, _is_function, _prim, kind, platform, caller = row
    return (function if by_function else binder, binder, line, function, kind,
            platform or "", caller or "")

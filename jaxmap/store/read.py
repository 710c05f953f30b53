"""The read API: every query any command runs against an index, with named columns.

With its parts, read_core.py (the connection and `_in`) and read_graph.py (the call
graph's queries), the one place that reads the index with SQL (write.py writes it).
Reads SQLite only: no parsing, no graph, no jax import. An index opened from a
snapshot answers the same queries (its `root` is then a label).
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from jaxmap.errors import StoreError
from jaxmap.models import (
    UNPARSED,
    Definition,
    DefKind,
    FunctionRef,
    Primitive,
    Rule,
    RuleKind,
    SourceLoc,
    SwitchedOff,
)
from jaxmap.store import write as store
from jaxmap.store.read_core import NAMED_PRIMITIVE, each_rule_function, like, named_primitive
from jaxmap.store.read_graph import GraphReads

if TYPE_CHECKING:
    from jaxmap.store.rows import Bind, DefinitionRow, PrimitiveRow

_PRIMITIVE = "id, name, variable, module, file, line, end_line, style, aliases"
_RULE = ("primitive_id, kind, file, line, end_line, via, platform, function_name, "
         "function_file, function_line, platforms, functions, condition, written, keywords, "
         "overridden_by")
_RULE_OF_R = ", ".join(f"r.{column.strip()}" for column in _RULE.split(","))
_SWITCHED_OFF = ("primitive_id, kind, file, line, end_line, via, platform, platforms, "
                 "condition, guard_file, guard_line")
_DEFINITION = "id, name, qualname, kind, file, line, end_line, summary, alias_of"


class Index(GraphReads):
    """A read-only view of one root's index (or of a snapshot)."""

    # -- primitives ------------------------------------------------------------------

    def primitives(self) -> list[Primitive]:
        """Every primitive with its rules."""
        rules: dict[int, list[Rule]] = {}
        for row in self._conn.execute(f"SELECT {_RULE} FROM rules ORDER BY primitive_id, seq"):
            rules.setdefault(row[0], []).append(_rule(row))
        offs: dict[int, list[SwitchedOff]] = {}
        for row in self._conn.execute(
                f"SELECT {_SWITCHED_OFF} FROM switched_off ORDER BY primitive_id, rowid"):
            offs.setdefault(row[0], []).append(_switched_off(row))
        return [_primitive(row, rules.get(row[0], ()))._replace(
                    switched_off=tuple(offs.get(row[0], ()))) for row in
                self._conn.execute(f"SELECT {_PRIMITIVE} FROM primitives ORDER BY id")]

    def primitive_count(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM primitives").fetchone()[0]

    def primitives_named(self, name: str, stem: str) -> list[Primitive]:
        """Primitives whose name string is `name` or `stem`, or whose variable is `name`
        or `stem_p` (or an alias `name`), with their rules and the tests that exercise
        them."""
        rows = self._conn.execute(
            f"SELECT {_PRIMITIVE} FROM primitives WHERE {NAMED_PRIMITIVE}",
            named_primitive(name, stem)).fetchall()
        return [_primitive(row, self._rules(row[0]))._replace(
                    tests=self._tests(row[0]), switched_off=self._switched_off(row[0]))
                for row in rows]

    def bound_by_namesakes(self) -> set[tuple[str, str]]:
        """(module, name) of the primitives a public function of their own name binds
        (`jax.lax.sin` binds sin_p): the ones users know by name."""
        return set(self._conn.execute(
            "SELECT p.module, p.name FROM binds b JOIN primitives p ON p.id = b.primitive_id "
            "AND p.name = b.function JOIN definitions d ON d.name = b.function "
            "WHERE d.qualname = b.module || '.' || b.function AND EXISTS (SELECT 1 FROM "
            "public_paths pp WHERE pp.definition_id = d.id)"))

    def public_paths_of(self, qualname: str) -> list[str]:
        """The public paths the definition `qualname` is exported under, shortest first."""
        return [path for (path,) in self._conn.execute(
            "SELECT p.path FROM public_paths p JOIN definitions d ON d.id = p.definition_id "
            "WHERE d.qualname = ? ORDER BY length(p.path), p.path", (qualname,))]

    def _rules(self, pid: int) -> list[Rule]:
        return [_rule(row) for row in self._conn.execute(
            f"SELECT {_RULE} FROM rules WHERE primitive_id = ? ORDER BY seq", (pid,))]

    def _switched_off(self, pid: int) -> tuple[SwitchedOff, ...]:
        """The rules the call that made the primitive switches off (not rules)."""
        return tuple(_switched_off(row) for row in self._conn.execute(
            f"SELECT {_SWITCHED_OFF} FROM switched_off WHERE primitive_id = ? ORDER BY rowid",
            (pid,)))

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
                (query, "%." + like(query), query, "%." + like(query)))
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
                           tuple(public.get(did, ())), summary, alias_of)
                for did, name, qualname, kind, file, line, end_line, summary, alias_of in rows]

    def names(self) -> set[str]:
        """Every primitive name, primitive variable and definition name."""
        return {name for (name,) in self._conn.execute(
            "SELECT name FROM primitives UNION SELECT variable FROM primitives "
            "UNION SELECT name FROM definitions") if name}

    def primitive_names(self) -> set[str]:
        """Every primitive name and primitive variable."""
        return {name for (name,) in self._conn.execute(
            "SELECT name FROM primitives UNION SELECT variable FROM primitives") if name}

    def definition_ending(self, name: str) -> tuple[str, str, int] | None:
        """(qualname, file, line) of the definition whose qualified name ends with
        `.name` (case-insensitively): under jax._src first, then the shortest; of several
        definitions of one name (`@overload` stubs, then the function), the last."""
        row = self._conn.execute(
            "SELECT qualname, file, line FROM definitions WHERE qualname LIKE ? ESCAPE '!' "
            "ORDER BY (qualname LIKE 'jax.!_src.%' ESCAPE '!') DESC, length(qualname), "
            "qualname, file, line DESC LIMIT 1", ("%." + like(name),)).fetchone()
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
        """The primitives defined in `file`, with their rules (and those switched off
        where they are made), in line order."""
        rows = self._conn.execute(f"SELECT {_PRIMITIVE} FROM primitives WHERE file = ? "
                                  "ORDER BY line, id", (file,)).fetchall()
        return [_primitive(row, self._rules(row[0]))._replace(
                    switched_off=self._switched_off(row[0])) for row in rows]

    def rules_with_function_in(self, file: str, line: int | None = None
                               ) -> list[tuple[int, str, str, str, str, int]]:
        """(function line, function name, kind, primitive, registration file,
        registration line) of the rules whose function is in `file` (at `line`, if given)."""
        at = "" if line is None else " AND r.function_line = ?"
        rows = self._conn.execute(each_rule_function(
            "SELECT r.function_line, r.function_name, r.kind, "
            "coalesce(nullif(p.name, ''), p.variable), r.file, r.line, p.id, r.seq "
            "FROM {rules} r JOIN primitives p ON p.id = r.primitive_id "
            f"WHERE r.function_file = ?{at}"), ((file,) if line is None else (file, line)) * 2)
        return [row[:6] for row in sorted(rows, key=lambda row: (row[0], row[6], row[7]))]

    def rules_registered_in(self, file: str) -> list[tuple[str, Rule]]:
        """(primitive, rule) of each rule whose registration statement is in `file`."""
        return [(label, _rule(row)) for label, *row in self._conn.execute(
            f"SELECT coalesce(nullif(p.name, ''), p.variable), {_RULE_OF_R} FROM rules r "
            "JOIN primitives p ON p.id = r.primitive_id WHERE r.file = ? "
            "ORDER BY r.line, r.seq", (file,))]

    def primitives_matching(self, text: str, limit: int) -> list[tuple[str, str, str, str, int]]:
        """(name, variable, module, file, line) of primitives whose name or variable
        contains `text` (case-insensitively), shortest first."""
        pattern = f"%{like(text)}%"
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
            "ORDER BY length(p.path), p.path LIMIT ?", (f"%{like(text)}%", limit)).fetchall()

    def private_definitions_matching(self, text: str,
                                     limit: int) -> list[tuple[str, str, str, str, int]]:
        """(name, qualname, kind, file, line) of the functions and classes without a
        public path whose name contains `text` (case-insensitively): the name itself
        first, then those it begins, then the rest, shortest first."""
        return self._conn.execute(
            "SELECT d.name, d.qualname, d.kind, d.file, d.line FROM definitions d "
            "WHERE d.kind IN ('function', 'class') AND d.name LIKE ? ESCAPE '!' "
            "AND NOT EXISTS (SELECT 1 FROM public_paths p WHERE p.definition_id = d.id) "
            "ORDER BY lower(d.name) = lower(?) DESC, d.name LIKE ? ESCAPE '!' DESC, "
            "length(d.name), d.qualname LIMIT ?",
            (f"%{like(text)}%", text, f"{like(text)}%", limit)).fetchall()

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

    def decorator_pairs(self) -> set[tuple[int, int]]:
        """(decorated def, what calling its name runs) of each edge a def has at one of
        its decorators' lines (flow/calls.py's `_decorated_calls`)."""
        return set(self._conn.execute(
            "SELECT c.caller, c.callee FROM calls c JOIN definitions d ON d.id = c.caller "
            "WHERE c.callee IS NOT NULL AND c.line < d.line AND c.text = d.name").fetchall())

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

    def class_bases(self, files=None) -> list[tuple[str, str, str, int, tuple[str, ...], dict]]:
        """(module, file, class qualname in its module, line, its bases as dotted names,
        the module's top-level import aliases -> targets) of every class (of `files`,
        if given), from the stored facts (a base written otherwise than as a dotted name
        is left out)."""
        import marshal

        rows = []
        query = "SELECT path, module, facts FROM files JOIN facts USING (path)"
        for file, module, blob in sorted(
                self._conn.execute(query) if files is None
                else self._in(f"{query} WHERE path IN (?*)", files)):
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

    def classes_at(self, names) -> dict[str, tuple[str, str]]:
        """name -> (qualname, file) of the class each of `names` is: the class of that
        qualified name, else the one with that public path."""
        found: dict[str, tuple[str, str]] = {}
        for name, qualname, file, by_path in sorted(self._in(
                "SELECT d.qualname, d.qualname, d.file, 0 FROM definitions d WHERE "
                "d.kind = 'class' AND d.qualname IN (?*) UNION SELECT p.path, d.qualname, "
                "d.file, 1 FROM public_paths p JOIN definitions d ON d.id = p.definition_id "
                "WHERE d.kind = 'class' AND p.path IN (?*)", names),
                key=lambda row: (row[3], row[0], row[1], row[2])):
            found.setdefault(name, (qualname, file))
        return found

    def functions_at(self, qualnames) -> dict[int, str]:
        """id -> qualname of the functions whose qualified name is one of `qualnames`."""
        return dict(self._in("SELECT id, qualname FROM definitions WHERE kind = 'function' "
                             "AND qualname IN (?*) ORDER BY id", qualnames))

    def stored_facts(self, files) -> dict[str, dict]:
        """path -> the stored facts (extract's dict) of each of `files` the index holds."""
        return {path: store.facts_of(path, blob) for path, blob in
                self._in("SELECT path, facts FROM facts WHERE path IN (?*)", files)}

    def file_count(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]

    def diagnostics(self) -> list[str]:
        """What the resolver could not place (a rule registered on a value it could not
        trace to a primitive), with locations."""
        return [message for (message,) in
                self._conn.execute("SELECT message FROM diagnostics ORDER BY rowid")]

    def unparsed(self, files=None) -> list[str]:
        """The diagnostics of those of `files` (default: any) that Python's parser refuses."""
        patterns = [f"{like(file)}:%: {UNPARSED} %" for file in sorted(set(files))] \
            if files is not None else [f"%: {UNPARSED} %"]
        return [message for pattern in patterns for (message,) in self._conn.execute(
            "SELECT message FROM diagnostics WHERE message LIKE ? ESCAPE '!' ORDER BY message",
            (pattern,))]


def open_file(path: str) -> Index:
    """Open the index at `path` as it is (StoreError if it is not a readable index)."""
    conn = store.connect_readonly(path)
    try:
        if conn is None:
            raise sqlite3.DatabaseError("not a jaxmap index")
        _second_phase_while_current(conn)
        return Index(conn, path)
    except (sqlite3.DatabaseError, KeyError) as error:
        if conn is not None:
            conn.close()
        raise StoreError(f"the index at {path} is unreadable ({error}); "
                         f"run `jaxmap index --rebuild`") from error


def _second_phase_while_current(conn: sqlite3.Connection) -> None:
    """A call graph that is not current (meta graph stale: a first-phase question
    moved rows after an edit, in place, perhaps in another process while this one reads)
    reads as none: each of its tables is shadowed, for this connection, by a view that
    is empty while meta says so, so that no question shows rows read from older code."""
    current = f"(SELECT value FROM main.meta WHERE key = '{store.GRAPH}') != '{store.STALE}'"
    for table in store.SECOND_PHASE:
        conn.execute(f"CREATE TEMP VIEW {table} AS SELECT * FROM main.{table} WHERE {current}")


def _primitive(row, rules) -> Primitive:
    _pid, name, variable, module, file, line, end_line, style, aliases = row
    return Primitive(name or "", variable or "", module, SourceLoc(file, line, end_line),
                     style, tuple(rules), aliases=tuple(aliases.split(",")) if aliases else ())


def _rule(row) -> Rule:
    _pid, kind, file, line, end_line, via, platform, f_name, f_file, f_line, platforms, \
        more, condition, written, keywords, overridden_by = row
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
                written or None, keywords, overridden_by)


def _switched_off(row) -> SwitchedOff:
    _pid, kind, file, line, end_line, via, platform, platforms, condition, g_file, g_line = row
    return SwitchedOff(RuleKind(kind), SourceLoc(file, line, end_line), via, condition,
                       SourceLoc(g_file, g_line), platform,
                       tuple(platforms.split(",")) if platforms else ())


def _dotted(expression) -> str | None:
    """`core.Trace` of a base written `core.Trace` or `core.Trace[T]`; None otherwise."""
    while expression and expression[0] == "sub":  # facts.SUBSCRIPT: a generic's base
        expression = expression[1]
    return expression[1] if expression and expression[0] == "n" else None  # facts.NAME

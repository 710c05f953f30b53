"""The read API's part for the call graph (a mixin of read_core.py's `IndexCore`, in
read.py's `Index`): calls, binds and the rules binds run, between definitions; what
is around a module (graph NAME); the public paths of definitions.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from jaxmap.models import Definition
from jaxmap.store.read_core import (
    NAMED_PRIMITIVE,
    IndexCore,
    each_rule_function,
    like,
    named_primitive,
)

if TYPE_CHECKING:
    from jaxmap.store.rows import Node

# Whether a caller of the call graph is walked on as a function: a function, or a
# variable holding a lambda or a partial, not one that only names a function (its
# alias: a call of it is an edge to the function too).
_FUNCTION_LIKE = "(kind = 'function' OR kind = 'variable' AND alias_of IS NULL)"


class GraphReads(IndexCore):
    """The queries of call-graph walks and of neighbourhoods."""

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

    def alias_variables(self, ids) -> dict[int, int]:
        """Variable -> the one of `ids` it only names (`swish = silu`, edges.py)."""
        return dict(self._in("SELECT v.id, d.id FROM definitions d JOIN definitions v ON "
                             "v.alias_of = d.qualname WHERE d.id IN (?*)", ids))

    def callers(self, ids, through: bool = True) -> list[tuple[int, int, int, bool]]:
        """(caller, callee, line, whether the caller is a function) of each edge to one of
        `ids` that reaches it: calls, and functions handed on (`jit(f)`); with `through`,
        calls of what a parameter received too (not a caller's own choice of callee: a
        reachability walk leaves them out). A caller that is a variable holding a lambda
        or a partial is a function; one that only names a function (`swish = silu`) is
        that function, which its calls reach already, and is not, nor is any other: a
        module's top level or a class body."""
        statuses = "'resolved', 'handed', 'through'" if through else "'resolved', 'handed'"
        return self._in(
            f"SELECT caller, callee, calls.line, {_FUNCTION_LIKE} FROM calls "
            "JOIN definitions "
            f"ON definitions.id = caller WHERE callee IN (?*) AND status IN ({statuses}) "
            "ORDER BY calls.rowid", ids)

    def guarded_callers(self, ids) -> list[tuple[int, int, int, bool, str | None, str | None,
                                                 str | None]]:
        """`callers(ids, through=False)`, each with its call guard: the caller's
        parameters its `if` requires None for the call, and, where the callee has such
        a guard, the callee's parameters the call passes surely not None (each
        comma-separated, or None; for each different call, `|`-separated), and the
        line of the first call of each (`|`-separated)."""
        return self._in(
            f"SELECT caller, callee, calls.line, {_FUNCTION_LIKE}, guard, "
            "fills, fill_lines FROM calls JOIN definitions ON definitions.id = caller "
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

    def test_files(self) -> set[str]:
        """The files of the tests linked to a primitive (table `tests`)."""
        return {file for (file,) in self._conn.execute("SELECT DISTINCT file FROM tests")}

    def caller_files(self, qualname: str) -> set[str]:
        """The files of the definitions that call one named `qualname`."""
        return {file for (file,) in self._conn.execute(
            "SELECT DISTINCT caller.file FROM calls JOIN definitions callee ON callee.id = "
            "calls.callee JOIN definitions caller ON caller.id = calls.caller "
            "WHERE callee.qualname = ?", (qualname,))}

    def callees(self, ids) -> list[tuple[int, int | None, str, str, int]]:
        """(caller, callee or None, text, status, line) of each call made by `ids`."""
        return self._in("SELECT caller, callee, text, status, line FROM calls WHERE caller "
                        "IN (?*) ORDER BY rowid", ids)

    def followed_callees(self, ids) -> list[tuple[int, int]]:
        """(caller, callee) of each function one of `ids` calls or hands on (the calls
        a reachability walk follows), once each."""
        return self._in("SELECT DISTINCT caller, callee FROM calls WHERE caller IN (?*) "
                        "AND status IN ('resolved', 'handed')", ids)

    def walked_calls(self) -> list[tuple[int, int, str | None, str | None]]:
        """(caller, callee, guard, fills) of every call or handed function a walk
        follows, once each: what a review compares between two indexes."""
        return self._conn.execute(
            "SELECT DISTINCT caller, callee, guard, fills FROM calls "
            "WHERE status IN ('resolved', 'handed')").fetchall()

    def all_binds(self) -> list[tuple[int, str, str, str | None]]:
        """(definition id, the primitive's module and name or variable, helper or
        None) of every binds row of a definition, once each."""
        return self._conn.execute(
            "SELECT DISTINCT definition_id, primitives.module, coalesce(name, variable), via "
            "FROM binds "
            "JOIN primitives ON primitives.id = primitive_id "
            "WHERE definition_id IS NOT NULL").fetchall()

    def call_texts(self, ids) -> list[tuple[int, int, str]]:
        """(caller, callee, text as written) of each call or hand-on of one of `ids`."""
        return self._in("SELECT caller, callee, text FROM calls WHERE callee IN (?*) AND "
                        "status IN ('resolved', 'handed', 'through') ORDER BY rowid", ids)

    def unresolved_calls_named(self, leaf: str) -> list[tuple[int, str, int]]:
        """(caller, text, line) of unresolved calls whose text ends with `leaf`: callers
        that may exist but could not be told."""
        return self._conn.execute(
            "SELECT caller, text, line FROM calls WHERE status = 'unresolved' AND "
            "(text = ? OR text LIKE ? ESCAPE '!') ORDER BY rowid",
            (leaf, "%." + like(leaf))).fetchall()

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
            f"SELECT id, name, variable FROM primitives WHERE {NAMED_PRIMITIVE}",
            named_primitive(name, stem)).fetchall()

    def primitive_refs(self, name: str, stem: str) -> list[tuple[str, str, str, str, int]]:
        """(name, variable, module, file, line) of primitives `primitives_named` finds."""
        return self._conn.execute(
            f"SELECT name, variable, module, file, line FROM primitives WHERE {NAMED_PRIMITIVE}",
            named_primitive(name, stem)).fetchall()

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
        """(primitive id, seq, kind, file, line, id of a function of the rule or None):
        a row for each of its functions (`ad.defjvp`: one per operand)."""
        return sorted(self._in(each_rule_function(
            "SELECT r.primitive_id, r.seq, r.kind, r.file, r.line, (SELECT d.id FROM "
            "definitions d WHERE d.file = r.function_file AND d.line = r.function_line "
            "AND d.kind = 'function' LIMIT 1) FROM {rules} r WHERE r.primitive_id IN (?*)"),
            pids), key=lambda row: (row[0], row[1]))

    def rules_implemented_by(self, ids) -> list[tuple[int, int, int]]:
        """(primitive id, seq, definition id) of the rules the functions `ids` implement."""
        return self._in(each_rule_function(
            "SELECT r.primitive_id, r.seq, d.id FROM definitions d JOIN {rules} r ON "
            "r.function_file = d.file AND r.function_line = d.line WHERE d.id IN (?*)"), ids)

    def registrations(self, ids) -> list[tuple[int, str, str, str, int, str, str | None]]:
        """(definition id, rule kind, primitive, file, line of the registration, how it
        was registered, the platform it names or None) of each rule that one of `ids` is
        a function of (its first, a later one: defbilinear's right transpose), or was
        written as (a module-level partial of its function): what makes a rule function
        run. Each once, in no set order."""
        rows = set(self._in(each_rule_function(
            "SELECT d.id, r.kind, coalesce(p.name, p.variable), r.file, r.line, r.via, "
            "r.platform FROM "
            "definitions d JOIN {rules} r ON r.function_file = d.file AND r.function_line = "
            "d.line JOIN primitives p ON p.id = r.primitive_id WHERE d.id IN (?*)"), ids))
        rows.update(self._in(
            "SELECT d.id, r.kind, coalesce(p.name, p.variable), r.file, r.line, r.via, "
            "r.platform FROM "
            "definitions d JOIN rules r ON json_extract(r.written, '$[1]') = d.file AND "
            "json_extract(r.written, '$[2]') = d.line JOIN primitives p ON "
            "p.id = r.primitive_id WHERE d.id IN (?*)", ids))
        return list(rows)

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

    def spans_in(self, files) -> list[tuple[str, str, int, int]]:
        """(qualname, file, line, end line) of the functions, classes and variables
        defined in `files`."""
        return self._in("SELECT qualname, file, line, end_line FROM definitions WHERE "
                        "kind != 'module' AND file IN (?*)", files)

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


def _run_order(by_function: bool, row: tuple) -> tuple:
    """The order of `_rules_run_at_binds`'s rows, total so that no answer depends on the
    order a set gave them: by the id asked about, binder, line, function run, then the
    rule kind (`impl` before `lowering`: where one function is both rules of a
    primitive, a chain says the impl rule, the one a bind outside jit runs), platform
    and rule function calling it."""
    binder, function, line, _is_function, _prim, kind, platform, caller = row
    return (function if by_function else binder, binder, line, function, kind,
            platform or "", caller or "")

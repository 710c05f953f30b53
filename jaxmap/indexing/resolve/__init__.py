"""Cross-file resolution: the facts of a whole tree -> primitives, their rules,
definitions and import edges.

Three collaborators: the `Interpreter` (runs modules, summarises helpers), `Names`
(modules, imports, lookup) and `Findings` (primitives, rules, diagnostics). The
interpreter makes the other two, and its own parts: `Classes`, for classes that make
primitives, `Objects`, for the attributes of objects and classes, and `Registrations`,
for how a registration becomes a rule; its own code is split by job into mixins of
evaluator.py's `Evaluator` (statements.py, calling.py, summaries.py). Names and the
interpreter call each other (a lookup may run the module that defines the name), a
reference cycle that `Interpreter.close()` breaks when the resolution is done, so
everything is freed by reference counting alone (indexing runs with the cyclic
collector paused). `edges` turns what they found into the remaining rows; the call
graph is flow/'s, handed in as a builder.
"""

from __future__ import annotations

import marshal
import sys
from contextlib import closing
from typing import Any, Callable

from jaxmap.indexing.facts import DICT, STR, UNKNOWN, FileFacts, forget_shared_calls
from jaxmap.indexing.resolve import edges
from jaxmap.indexing.resolve.findings import Findings
from jaxmap.indexing.resolve.interpreter import Interpreter
from jaxmap.indexing.resolve.names import Names
from jaxmap.indexing.resolve.precedence import mark_overridden
from jaxmap.knowledge import registrars as R
from jaxmap.store.records import DefinitionRecord, Resolution

# The call graph's builder (flow.graph.call_graph): names, findings, definitions, each
# module's flow facts -> (call rows, binds rows, tests rows, rule calls).
GraphBuilder = Callable[[Names, Findings, list[DefinitionRecord], dict], tuple]


def resolve(files: dict[str, Any], graph: GraphBuilder | None = None) -> Resolution:
    """Resolve the facts of every file of a tree (path -> stored facts, see extract.py,
    or their marshalled form); with `graph` (flow.graph.call_graph), the call graph too:
    calls, binds, tests and rule calls (without, the index's first phase). `files` is
    emptied once read: the raw facts are not kept beside their records."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))  # import chains nest module runs
    try:
        # Each file's raw facts unmarshalled, and freed, as its records are made: the
        # memory they leave is what the next file's records take. Without the call
        # graph, what only it reads is not made into records (a fifth of the time
        # after an edit).
        unread = {} if graph else _GRAPH_ONLY
        wrapped, flows = {}, _Flows()
        for path in list(files):
            stored = files.pop(path)
            raw = marshal.loads(stored) if isinstance(stored, bytes) else stored
            wrapped[path] = FileFacts.wrap({**raw, **unread})
            if graph:
                flows.add(raw["module"], stored if isinstance(stored, bytes)
                          else raw.get("flow") or {})
        forget_shared_calls()
        return _resolve(wrapped, graph, flows)
    finally:
        sys.setrecursionlimit(limit)


class _Flows(dict):
    """Each module's flow facts (module -> owner -> facts), for the flow's tables to
    read through `items()`: those of a file whose facts came marshalled are
    unmarshalled again only then, a module at a time, and let go once read (what the
    tables keep of them is a fraction of them; all held unmarshalled from the start,
    the build's memory before the call graph was a quarter more on jax)."""

    def __init__(self) -> None:
        super().__init__()
        self._stored: dict[str, bytes | dict] = {}

    def add(self, module: str, stored: bytes | dict) -> None:
        """A module's flow facts, or its file's marshalled facts; a module added
        twice keeps its first place and its last facts (as a dict's item)."""
        self._stored[module] = stored

    def items(self):  # (an iterator)
        for module, stored in self._stored.items():
            yield module, (marshal.loads(stored).get("flow") or {}
                           if isinstance(stored, bytes) else stored)

    def clear(self) -> None:
        self._stored.clear()

    def copy(self) -> _Flows:
        """Another reading of the same facts (what a solve that gives up reads again)."""
        found = _Flows()
        found._stored = dict(self._stored)
        return found

    def reorder(self, modules: list[str]) -> None:
        """Put the modules in the order `modules` lists them (bench_order.py)."""
        self._stored = {module: self._stored[module] for module in modules
                        if module in self._stored}


# What of a file's facts the call graph alone reads, left empty for the first phase.
_GRAPH_ONLY: dict[str, object] = {"callees": {}, "messages": ()}


def _resolve(files: dict[str, FileFacts], graph: GraphBuilder | None,
             flows: dict[str, dict]) -> Resolution:
    with closing(Interpreter(files)) as interpreter:
        names, findings = interpreter.names, interpreter.findings
        findings.diagnostics.extend(facts.error for _, facts in names.modules.values()
                                    if facts.error)
        for module in names.modules:
            interpreter.module_env(module)
        for module in names.modules:
            interpreter.classes.hijax_classes(module)
        interpreter.classes.trace_rules()
        aliases = _platform_aliases(interpreter)
        findings.expand_platforms(aliases)
        mark_overridden(findings.primitives, {path: facts.straight
                                              for path, facts in names.modules.values()})
        definitions = edges.definitions(names, findings)
        messages = edges.messages(names) if graph is not None else []
        if graph is not None:
            files.clear()  # (the caller's: the records are the names' alone now)
            interpreter.let_go_of_statements()
        call_rows, binds, tests, rule_calls = graph(names, findings, definitions, flows) \
            if graph is not None else ([], [], [], ())
        return Resolution(findings.primitives, definitions, edges.import_edges(names), binds,
                          tests, findings.diagnostics, _jax_version(names, interpreter),
                          aliases, call_rows, messages, rule_calls)


# Where JAX keeps its platform aliases (`{"cuda": "gpu", "rocm": "gpu", ...}`).
_ALIAS_TABLE = ("jax._src.xla_bridge", "_platform_aliases")


def _platform_aliases(interpreter: Interpreter) -> dict[str, list[str]]:
    """alias -> platforms, read from the tree's own table; for a tree without that
    module (a library outside jax), the GPU backends every release expands `gpu` to."""
    module, name = _ALIAS_TABLE
    if module not in interpreter.names.modules:
        return {alias: list(platforms) for alias, platforms in R.DEFAULT_PLATFORM_ALIASES.items()}
    table = interpreter.module_env(module).get(name, UNKNOWN)
    aliases: dict[str, list[str]] = {}
    for platform, alias in table[1] if table[0] == DICT else ():
        if platform[0] == STR and alias[0] == STR:
            aliases.setdefault(alias[1], []).append(platform[1])
    return aliases


def _jax_version(names: Names, interpreter: Interpreter) -> str | None:
    if "jax.version" not in names.modules:
        return None
    value = interpreter.module_env("jax.version").get("_version")
    return value[1] if value and value[0] == STR else None

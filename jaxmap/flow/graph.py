"""The call graph of a tree, the index's second phase: the value flow over every
module's flow facts, then the rows read from it (calls, binds, tests, rule calls)."""

from __future__ import annotations

import sys
import threading

from jaxmap.flow import calls
from jaxmap.flow.flow import Flow
from jaxmap.flow.heap import release_freed
from jaxmap.flow.hicalls import HiCalls
from jaxmap.flow.update import GiveUp
from jaxmap.indexing.facts import PRIM
from jaxmap.indexing.resolve.findings import Findings
from jaxmap.indexing.resolve.names import Names
from jaxmap.store.records import DefinitionRecord

# The value flow follows every chain of keys to its end, depth first (engine.py): a
# stack for chains far deeper than any the installed jax has (about 300 keys).
_STACK_BYTES = 512 << 20
_RECURSION_LIMIT = 1_000_000


def call_graph(names: Names, findings: Findings, definitions: list[DefinitionRecord],
               flows: dict[str, dict], progress=None, jobs: int = 1
               ) -> tuple[list, list, list, tuple]:
    """The call rows, binds rows, tests rows and rule calls of a resolved tree;
    `progress(done, total, working)` is told of the call sites read, then (counted from
    nought again) of the modules whose calls are read, on `jobs` processes."""
    return _on_deep_stack(_call_graph, names, findings, definitions, flows, progress, jobs)


def _on_deep_stack(function, *args):
    """`function(*args)` in a thread with a stack and a recursion limit for deep chains."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = function(*args)
        except BaseException as error:  # raised again in the caller's thread
            outcome["error"] = error

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _RECURSION_LIMIT))
    size = threading.stack_size(_STACK_BYTES)
    try:
        # (a daemon: Ctrl-C ends the process without waiting for the solve)
        thread = threading.Thread(target=run, name="jaxmap-value-flow", daemon=True)
        thread.start()
    finally:
        threading.stack_size(size)
    thread.join()
    sys.setrecursionlimit(limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


class _Kept:
    """The last solve of a process that solves again and again (a server's build
    process: indexing/builder.py), recorded, for the next to start from (update.py)."""

    on = False
    flow: Flow | None = None
    updated = False  # whether the last solve was an update (else a full solve)


_KEPT = _Kept()


def keep_solves() -> None:
    """From now on, this process records each solve of the value flow and solves the
    next from it: only what an edit reaches is computed again (update.py). It costs
    the recording (on jax about a fifth more time and 200 MB more memory, held between
    solves)."""
    _KEPT.on = True


def solve_kept() -> bool:
    """Whether this process keeps a solve for the next to start from."""
    return _KEPT.flow is not None


def _call_graph(names: Names, findings: Findings, definitions: list[DefinitionRecord],
                flows: dict[str, dict], progress, jobs: int) -> tuple[list, list, list, tuple]:
    ids = _ids(definitions)
    if _KEPT.on:
        call_rows, hijax = _solved_again(names, findings, ids, flows, progress, jobs)
    else:
        flow = Flow(names, flows)
        release_freed()  # the raw facts, read into the flow's tables
        hijax = HiCalls(findings.primitives)
        call_rows = calls.call_edges(names, ids, flow, progress, hijax, jobs)  # closes it
        del flow
    del flows
    binds = calls.bind_edges(names, ids, call_rows, findings.primitives) + hijax.rows(ids)
    bodies = {i for i, row in enumerate(definitions) if row.kind != "function"}
    test_rows = tests(names, ids, calls.Reach(call_rows, binds, bodies))
    rule_calls = tuple(calls.rule_calls(names, definitions, findings.primitives))
    return call_rows, binds, test_rows, rule_calls


def _solved_again(names: Names, findings: Findings, ids: dict[str, int],
                  flows: dict[str, dict], progress, jobs: int) -> tuple[list, HiCalls]:
    """The call rows, solved again from the solve kept (update.py), or in full where
    none is kept or the update gives up; the new solve kept, recorded."""
    previous, _KEPT.flow = _KEPT.flow, None
    if previous is not None:
        spare = flows.copy()  # (Flow empties `flows`; the facts it holds are not copied)
        try:
            return _updated(previous, names, findings, ids, flows, progress, jobs)
        except GiveUp:
            flows = spare
        finally:
            del previous
    _KEPT.updated = False
    flow = Flow(names, flows)
    flow.record()
    hijax = HiCalls(findings.primitives)
    call_rows = calls.call_edges(names, ids, flow, progress, hijax, jobs)
    _KEPT.flow = flow
    return call_rows, hijax


def _updated(previous: Flow, names: Names, findings: Findings, ids: dict[str, int],
             flows: dict[str, dict], progress, jobs: int) -> tuple[list, HiCalls]:
    flow = Flow(names, flows)
    try:
        flow.again(previous)
        hijax = HiCalls(findings.primitives)
        call_rows = calls.call_edges(names, ids, flow, progress, hijax, jobs)
    finally:  # (each save's flow and plan left to the collector: 140 MB a save on jax)
        flow.release()
    _KEPT.updated, _KEPT.flow = True, flow
    return call_rows, hijax


def _ids(definitions: list[DefinitionRecord]) -> dict[str, int]:
    """Qualified name -> definition id. A variable that rebinds a function or class's
    name (`Flatten = Flatten()`) leaves the name to the function or class: the code
    whose calls and binds the call graph records."""
    ids: dict[str, int] = {}
    for i, row in enumerate(definitions):
        if row.kind != "variable" or row.qualname not in ids:
            ids[row.qualname] = i
    return ids


def tests(names: Names, ids: dict[str, int], reach: calls.Reach) -> list[tuple[int, str, str, int]]:
    """Tests that exercise a primitive: (primitive index, test qualname, file, line) for
    each `test*` function that names the primitive or reaches it through its calls, in
    any module (a helper of its own, a nested def, a lambda, `partial(...)`). A list,
    not a set: each test's rows differ in their primitive, and tests in their name or
    file (a set of jax's 316k rows took 16 MB more at the build's peak)."""
    rows: list[tuple] = []
    for module, (path, facts) in names.modules.items():
        for qualname, test in facts.tests.items():
            found = set(reach(ids[f"{module}.{qualname}"])) \
                if f"{module}.{qualname}" in ids else set()
            for name in test.names:
                if name.endswith("_p"):
                    value = names.lookup(name, module, qualname)
                    if value[0] == PRIM:
                        found.add(value[1])
            rows += [(pid, qualname, path, test.line) for pid in found]
    rows.sort()
    return rows

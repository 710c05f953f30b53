"""The call graph scored against PyCG's micro-benchmark, per category and overall.

    python benchmarks/bench_pycg.py SNIPPETS [--misses]

SNIPPETS is PyCG's `micro-benchmark/snippets` folder (fetch github:vitsalis/PyCG; keep
it outside this repository). Each snippet folder (category/name) is indexed as its own
root, in-process and without writing an index, and its resolved call edges are compared
with the snippet's hand-written `callgraph.json`.

How edges are counted, on both sides the same way:
- Nodes are folded into what jaxmap records as a definition: a module, a module-level
  function, a method of a module-level class. A nested function, a lambda
  (`main.<lambda1>`) or a nested class's method becomes the innermost of those around
  it (read from the snippet's source with `ast`); a class body's code is its module's.
- Only edges between two nodes of the snippet's own modules count: builtins
  (`<builtin>.print`) and modules outside the snippet are left out.
- A call to a class is, in PyCG, a call to the `__init__` it runs; jaxmap edges whose
  callee is a class (not a function) are left out, so jaxmap must name `__init__`.
  So are the edges of an alias (`b = f`: the variable's edge to what it names).
- Edges that folding turns into a self-loop are left out (a function calling its own
  nested function); so are recursive calls, on both sides.
- jaxmap's edges are its calls with a callee: `resolved`, and `through` (a call of what
  a parameter received); a function only handed on (`handed`: `jit(f)`), `external`
  and `unresolved` calls are not edges. A decorated def's edge to what its decorators
  made of it (at the decorator's line: calling the def's name runs that) is drawn, as
  PyCG draws it, from each caller of the def instead.
Precision and recall are pooled over the edges of a category (and of all snippets). A
snippet fails when its folder is refused as a root (as `--root` would), indexing
raises, or a file of it is reported not indexed.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from pathlib import Path

from jaxmap import roots
from jaxmap.flow.graph import call_graph
from jaxmap.indexing import discover, worker
from jaxmap.indexing.resolve import resolve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("snippets", type=Path, help="PyCG's micro-benchmark/snippets folder")
    parser.add_argument("--misses", action="store_true",
                        help="list each snippet's missed and extra edges")
    args = parser.parse_args()
    folders = sorted(p.parent for p in args.snippets.glob("*/*/callgraph.json"))
    if not folders:
        sys.exit(f"error: no */*/callgraph.json under {args.snippets}")
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # hit, found, truth, failed
    for folder in folders:
        category = folder.parent.name
        truth = _truth(folder)
        try:
            found = _jaxmap_edges(folder)
        except _NotIndexed as error:
            print(f"FAILED {category}/{folder.name}: {error}")
            totals[category][3] += 1
            found = set()
        hit = found & truth
        for key in (category, "all"):
            counts = totals[key]
            counts[0] += len(hit)
            counts[1] += len(found)
            counts[2] += len(truth)
        if args.misses and found != truth:
            print(f"{category}/{folder.name}: missed {sorted(truth - found)} "
                  f"extra {sorted(found - truth)}")
    totals["all"][3] = sum(c[3] for k, c in totals.items() if k != "all")
    print(f"{'category':<14} {'precision':>9} {'recall':>7} {'edges':>6} {'found':>6} failed")
    for category in sorted(totals, key=lambda k: (k == "all", k)):
        hit, found, truth, failed = totals[category]
        print(f"{category:<14} {_pct(hit, found):>9} {_pct(hit, truth):>7} {truth:>6} "
              f"{found:>6} {failed:>6}")
    print(f"targets: precision >= 95%, recall >= 90%, no snippet failed; "
          f"snippets: {len(folders)}")


class _NotIndexed(Exception):
    pass


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _definitions(folder: Path) -> tuple[set[str], set[str]]:
    """(what jaxmap records as a definition, the modules), from the snippet's source."""
    kept, modules = set(), set()
    for path in folder.rglob("*.py"):
        module, _ = discover.module_name(path.relative_to(folder).as_posix())
        modules.add(module)
        kept.add(module)
        try:
            tree = ast.parse(path.read_text())
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                kept.add(f"{module}.{node.name}")
            elif isinstance(node, ast.ClassDef):
                kept.update(f"{module}.{node.name}.{item.name}" for item in node.body
                            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return kept, modules


def _fold(node: str, kept: set[str]) -> str | None:
    while node and node not in kept:
        node = node.rpartition(".")[0]
    return node or None


def _folded(edges, folder: Path) -> set[tuple[str, str]]:
    kept, modules = _definitions(folder)
    result = set()
    for caller, callee in edges:
        if callee.startswith("<") or callee.partition(".")[0] not in {
                m.partition(".")[0] for m in modules}:
            continue
        pair = (_fold(caller, kept), _fold(callee, kept))
        if None not in pair and pair[0] != pair[1]:
            result.add(pair)
    return result


def _truth(folder: Path) -> set[tuple[str, str]]:
    graph = json.loads((folder / "callgraph.json").read_text())
    return _folded(((caller, callee) for caller, callees in graph.items()
                    for callee in callees), folder)


def _jaxmap_edges(folder: Path) -> set[tuple[str, str]]:
    """The snippet's resolved call edges between functions, as qualified names."""
    try:
        tree = discover.list_files(roots.resolve_root(str(folder)))
        extracted = worker.extract_files(str(folder), tree.files, jobs=1, flow=True)
        facts = {source.path: item[1] for source, item in zip(tree.files, extracted)}
        errors = [f["error"] for f in facts.values() if f.get("error")]
        if errors:
            raise _NotIndexed("; ".join(errors))
        resolution = resolve(facts, graph=call_graph)
    except _NotIndexed:
        raise
    except Exception as error:  # a crash is what this benchmark reports, not stops at
        raise _NotIndexed(f"{type(error).__name__}: {error}") from error
    rows = resolution.definitions
    edges, made = set(), defaultdict(set)
    for row in resolution.calls:
        if row.status not in ("resolved", "through") or row.callee is None:
            continue
        callee, caller = rows[row.callee], rows[row.caller]
        if callee.kind == "class" or caller.kind == "variable":
            continue  # a class is called through its __init__; an alias's edge runs nothing
        if row.line < caller.line and row.text == caller.qualname.rpartition(".")[2]:
            made[caller.qualname].add(callee.qualname)  # at a decorator: what it made
            continue
        edges.add((caller.qualname, callee.qualname))
    # A call of a decorated def's name runs what its decorators made of it: PyCG draws
    # that edge from the caller, jaxmap from the def (at the decorator's line).
    edges |= {(caller, wrapper) for caller, callee in edges for wrapper in made[callee]}
    return _folded(edges, folder)


if __name__ == "__main__":
    main()

"""How much the call graph's rows depend on the order its questions are asked (#33).

    python benchmarks/bench_order.py [--root PATH] [--seeds N]

The value flow is a memoised evaluator that computes the keys of each cycle together
(jaxmap/flow/__init__.py), so that no order of questions should change a row; calls.py
asks in one order: every call site, then module by module in the tree's order. This
builds the index of the tree (default: the installed jax) cold, once in that order and
once per seed with the modules asked in a shuffled order (the call sites and the
modules' loop both follow it; nothing else is changed), each in a fresh cache folder,
and prints, per table, the rows (named by qualified names, so definition ids do not
matter) found in only one of the two. An order-independent solve prints zeros. Nothing here asserts.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
import time

_QUERIES = {
    "calls": "SELECT a.qualname, a.module, b.qualname, b.module, c.text, c.status, c.line"
             " FROM calls c JOIN definitions a ON a.id = c.caller"
             " LEFT JOIN definitions b ON b.id = c.callee",
    "binds": "SELECT d.qualname, d.module, p.name, b.line, b.via FROM binds b"
             " JOIN definitions d ON d.id = b.definition_id"
             " JOIN primitives p ON p.id = b.primitive_id",
    "tests": "SELECT p.name, t.name, t.file, t.line FROM tests t"
             " JOIN primitives p ON p.id = t.primitive_id",
}


def _build(root: str | None, cache: str, seed: int | None) -> tuple[str, float]:
    """Index `root` cold into `cache`, the modules asked in the order `seed` shuffles
    them to (None: the tree's); the index file and the seconds it took."""
    from jaxmap.flow import graph
    from jaxmap.indexing import indexer

    os.environ["JAXMAP_CACHE_DIR"] = cache
    real = graph.call_graph

    def shuffled(names, findings, definitions, flows, **kwargs):
        if seed is not None:  # the modules' loop, and the call sites read first
            order = list(names.modules)
            random.Random(seed).shuffle(order)
            entries = {module: names.modules[module] for module in order}
            names.modules.clear()
            names.modules.update(entries)
            flows.reorder(order)  # (resolve's flows, held marshalled: not a plain dict)
        return real(names, findings, definitions, flows, **kwargs)

    graph.call_graph = shuffled
    try:
        started = time.perf_counter()
        report = indexer.build_index(root, rebuild=True)
        return report.path, time.perf_counter() - started
    finally:
        graph.call_graph = real


def _rows(path: str) -> dict[str, set[tuple]]:
    with sqlite3.connect(path) as conn:
        return {table: set(conn.execute(query)) for table, query in _QUERIES.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", help="the tree to index (default: the installed jax)")
    parser.add_argument("--seeds", type=int, default=2, help="shuffled orders to try")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="jaxmap-order-") as work:
        path, seconds = _build(args.root, os.path.join(work, "tree-order"), None)
        base = _rows(path)
        print(f"the tree's order: {seconds:.1f} s; "
              + ", ".join(f"{len(rows)} {table} rows" for table, rows in base.items()))
        print(f"{'order':<10} {'table':<6} {'only tree order':>16} {'only shuffled':>14}")
        for seed in range(args.seeds):
            path, seconds = _build(args.root, os.path.join(work, f"seed-{seed}"), seed)
            for table, rows in _rows(path).items():
                print(f"seed {seed:<5} {table:<6} {len(base[table] - rows):>16} "
                      f"{len(rows - base[table]):>14}")
            print(f"seed {seed:<5} built in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

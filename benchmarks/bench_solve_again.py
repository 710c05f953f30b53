"""Edits that change calls: the call graph solved again from a kept solve
(flow/update.py), against solving it in full, side by side.

    python benchmarks/bench_solve_again.py [--work DIR]

Copies the installed jax into DIR, indexes it cold with the solve kept
(flow/graph.py `keep_solves`, as a server's build process does), then makes the edits
below one after another. After each, it brings the index up to date (the edited file
parsed again, the call graph solved again from the kept solve) and, in the same
process, builds a cold index of the edited tree in a cache of its own, solved in full
and not kept. Prints the call graph's seconds of each (the rest is the same parse or
write), their ratio, whether the update solved again or gave up and solved in full,
and whether every table of the two indexes is equal (it should be; the edit to
`concrete_or_error` adds keys to a cycle of 4,750; the last, a new cycle of two that a
user found, is solved again to other cycles than a cold solve's: README, "Solving
again after an edit"). Nothing here asserts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

PARALLEL, LAX, CORE = "jax/_src/lax/parallel.py", "jax/_src/lax/lax.py", "jax/_src/core.py"
ODE = "jax/experimental/ode.py"  # a leaf module: no other module of jax imports it
# (what, file, texts before and after): each made on the tree as the one before left it,
# with the first pair whose text before this release has.
EDITS = [
    ("a call in _psum_transpose_rule binds another primitive", PARALLEL, [
        ("  return (psum_p.bind(cts, axes=tuple(named_axes),",
         "  return (pmax_p.bind(cts, axes=tuple(named_axes),"),
        ("  nonzero_in_cts = psum_p.bind(*nonzero_out_cts, axes=tuple(named_axes),",
         "  nonzero_in_cts = pmax_p.bind(*nonzero_out_cts, axes=tuple(named_axes),")]),
    ("a call of jnp.asarray added in odeint (a leaf module)", ODE, [
        ("  converted, consts = custom_derivatives.closure_convert(func, y0, t[0], *args)\n",
         "  jnp.asarray(t).reshape(-1)\n"
         "  converted, consts = custom_derivatives.closure_convert(func, y0, t[0], *args)\n")]),
    ("a call of jax.vmap added in ode.py (a leaf module)", ODE, [
        ("  return jax.vmap(unravel)(out)\n", "  out = jax.vmap(jnp.abs)(out)\n"
         "  return jax.vmap(unravel)(out)\n")]),
    ("a helper of lax returns another value", LAX, [
        ("sharding=x_aval.sharding.update(spec=P()))\n  return out\n",
         "sharding=x_aval.sharding.update(spec=P()))\n  return x_aval\n"),
        ("  out = core.pvary(out, tuple(x_aval.vma))\n  return out\n",
         "  out = core.pvary(out, tuple(x_aval.vma))\n  return x_aval\n")]),
    ("a module-level partial of lax wraps another function", LAX, [
        ("_zeros: Callable = partial(full_like, fill_value=0)",
         "_zeros: Callable = partial(full, fill_value=0)")]),
    ("a call added on a line of its own in core.py", CORE, [
        ("def to_concrete_value(x):\n  if isinstance(x, Tracer):",
         "def to_concrete_value(x):\n  typeof(x)\n  if isinstance(x, Tracer):")]),
    ("concrete_or_error returns another call (a cycle gains keys)", CORE, [
        ("  else:\n    return force(val)\n\ndef concrete_dim_or_error",
         "  else:\n    return force(get_aval(val))\n\ndef concrete_dim_or_error")]),
    ("the first edit taken back", PARALLEL, [
        ("  return (pmax_p.bind(cts, axes=tuple(named_axes),",
         "  return (psum_p.bind(cts, axes=tuple(named_axes),"),
        ("  nonzero_in_cts = pmax_p.bind(*nonzero_out_cts, axes=tuple(named_axes),",
         "  nonzero_in_cts = psum_p.bind(*nonzero_out_cts, axes=tuple(named_axes),")]),
    ("shaped_abstractify's fast path calls typeof", CORE, [
        ("def shaped_abstractify(x):\n  typ = type(x)\n"
         "  if (aval_fn := pytype_aval_mappings.get(typ)):  # fast path\n    return aval_fn(x)\n",
         "def shaped_abstractify(x):\n  typ = type(x)\n"
         "  if typ in pytype_aval_mappings:  # fast path\n    return typeof(x)\n")]),
    ("typeof calls shaped_abstractify back (a new cycle of two)", CORE, [
        ("pytree.'\n    )\n  raise TypeError(f\"Argument '{x}' of type '{typ}' is not a valid JAX",
         "pytree.'\n    )\n  if hasattr(x, 'dtype'):\n    return shaped_abstractify(x)\n"
         "  raise TypeError(f\"Argument '{x}' of type '{typ}' is not a valid JAX")]),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", help="a scratch folder (default: a temporary one)")
    args = parser.parse_args()
    import jax

    from jaxmap.flow import graph

    work = Path(args.work or tempfile.mkdtemp(prefix="bench-solve-again-"))
    tree = work / "tree"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(Path(jax.__file__).parent, tree / "jax")
    solves = _timed_solves(graph)
    graph.keep_solves()
    seconds = _build(tree, work / "kept", rebuild=True)
    print(f"cold index, the solve recorded and kept: {seconds:.1f} s "
          f"(call graph {solves.pop():.1f} s)")
    print(f"{'edit':58} {'again s':>8} {'full s':>7} {'ratio':>6}  solved  tables")
    for what, file, pairs in EDITS:
        path = tree / file
        text = path.read_text()
        made = [text.replace(before, after, 1) for before, after in pairs if before in text]
        if not made:
            print(f"{what:58} skipped: this jax's {file} has not its text")
            continue
        path.write_text(made[0])
        _build(tree, work / "kept")
        again, updated = solves.pop(), graph._KEPT.updated
        kept, graph._KEPT = graph._KEPT, graph._Kept()  # the cold one neither kept nor from one
        _build(tree, work / "cold", rebuild=True)
        full = solves.pop()
        graph._KEPT = kept
        same = _tables(work / "kept") == _tables(work / "cold")
        print(f"{what:58} {again:8.1f} {full:7.1f} {again / full:6.2f}  "
              f"{'again' if updated else 'FULL':6}  {'equal' if same else 'DIFFER'}")
    shutil.rmtree(work, ignore_errors=True)


def _timed_solves(graph) -> list[float]:
    """The seconds of each call graph solved from now on, in order."""
    solves: list[float] = []
    solve = graph._call_graph

    def timed(*args):
        start = time.perf_counter()
        try:
            return solve(*args)
        finally:
            solves.append(time.perf_counter() - start)
    graph._call_graph = timed
    return solves


def _build(tree: Path, cache: Path, rebuild: bool = False) -> float:
    from jaxmap.indexing import indexer

    os.environ["JAXMAP_CACHE_DIR"] = str(cache)
    start = time.perf_counter()
    indexer.build_index(tree, rebuild=rebuild, jobs=None)
    return time.perf_counter() - start


def _tables(cache: Path) -> dict[str, list]:
    """Every table of the one index in `cache`, but for when files were seen."""
    (path,) = cache.glob("*.sqlite")
    with sqlite3.connect(path) as conn:
        names = [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        found = {name: conn.execute(f"SELECT * FROM {name}").fetchall() for name in names}
    found["meta"] = [row for row in found["meta"] if row[0] not in ("code", "root")]
    found["files"] = [row[:2] + row[4:] for row in found["files"]]
    return found


if __name__ == "__main__":
    main()

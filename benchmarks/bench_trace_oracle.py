"""`binds` against what tracing binds: a trace-time oracle of public functions.

    python benchmarks/bench_trace_oracle.py [--traces FILE] [--show N]

For every public function of jax.numpy, jax.lax, jax.nn and jax.random, tries a few
small argument lists in turn (a float vector, a square matrix, an int vector, two of
them, a PRNG key and a shape, ...); the primitives of the jaxpr of every list under
which `jax.make_jaxpr` traces it, sub-jaxprs included (a jit's, a cond's branches, a
custom_jvp's function), are what the function binds at trace time (more lists take
more of its branches). Functions
no list traces are left out, and counted. Then it opens this jaxmap's index of the
same jax and asks `binds PRIM` for every primitive of the index (its default answer:
the public functions that bind PRIM when traced), and prints:

- recall: of the (function, primitive) pairs the traces show, whose primitive the
  index knows, the share that `binds` lists by default;
- precision: of the pairs `binds` lists by default for the traced functions, the
  share the traces show. A branch the chosen inputs did not take (a dtype, an
  option left at its default, an error path) counts against it: `--show N` prints
  N pairs of each kind, and the steps most unseen pairs go through, to check by hand;
  it is printed again counting as right the pairs through a step of UNTAKEN, the
  steps checked by hand to be branches these inputs do not take.

A function and a `binds` answer meet at the definition a public name means (its
file and line). `--traces FILE` keeps the traces (JSON) and reads them back on the
next run. Nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections import Counter

MODULES = ("jax.numpy", "jax.lax", "jax.nn", "jax.random")
# Steps checked by hand in jax 0.10.2's source: each is a branch these small inputs do
# not take, so a listed pair whose chain goes through one is a path the code has, not
# a false edge. Precision is printed both ways.
UNTAKEN = (
    ("jax._src.numpy.error._set_error_if_nan", "jax._src.error_check.set_error_if",
     "returns first unless jax_error_checking_behavior_nan is set"),
    ("jax._src.numpy.error._set_error_if_divide_by_zero", "jax._src.error_check.set_error_if",
     "returns first unless jax_error_checking_behavior_divide is set"),
    ("jax._src.numpy.indexing._gather", "jax._src.numpy.error._check_precondition_oob_gather",
     "its body returns first unless jax_error_checking_behavior_oob is set"),
    ("jax.numpy.where", "jax.numpy.nonzero", "only the one-argument form: where(c)"),
    ("jax._src.numpy.reductions._reduction", "jax.lax.reduce",
     "lax.reduce binds only the reducer of the op it is handed (reduce_sum for add)"),
    ("jax._src.numpy.reductions._reduce_sum", "jax.lax.psum",
     "handed as parallel_reduce=, which _reduction calls only for named axes"),
    ("jax._src.numpy.reductions._reduce_max", "jax.lax.pmax", "the same, for max"),
    ("jax._src.numpy.reductions._reduce_min", "jax.lax.pmin", "the same, for min"),
    ("jax._src.numpy.indexing.rewriting_take", "jax._src.numpy.indexing._gather",
     "only for an index that is neither a static nor a dynamic slice"),
    ("jax._src.lax.lax._convert_element_type", "to_edtype_p.bind",
     "only to an extended dtype (a PRNG key's)"),
    ("jax._src.lax.lax._convert_element_type", "from_edtype_p.bind",
     "only from an extended dtype"),
    ("jax._src.lax.lax._convert_element_type", "jax.lax.stage",
     "only for a Python or NumPy scalar operand"),
    ("jax._src.core.auto_insert_reshard", "jax._src.core.pvary",
     "only for values varying over manual axes (inside shard_map)"),
    ("jax._src.core.auto_insert_reshard", "jax._src.core.reduced_vary_cast",
     "only for values varying over manual axes (inside shard_map)"),
    ("jax._src.core.insert_reduced_reshard", "jax.reshard",
     "only under a mesh whose axes are all explicit, for reduced axes"),
    ("jax.lax.full", "jax.make_array_from_callback", "only with a concrete sharding"),
)


def _arguments(module: str) -> list[tuple]:
    """The argument lists tried, in order."""
    import jax
    import jax.numpy as jnp

    x = jnp.array([0.5, 1.5, 2.5], jnp.float32)
    m = jnp.array([[2.0, 1.0], [1.0, 3.0]], jnp.float32)
    i = jnp.array([1, 2, 3], jnp.int32)
    b = jnp.array([True, False, True])
    if module == "jax.random":
        key = jax.random.key(0)
        return [(key,), (key, (3,)), (key, x), (key, 3), (key, x, x), (key, 3, (3,)),
                (key, x, (3,)), (key, m)]
    return [(x,), (m,), (i,), (x, x), (m, m), (i, i), (x, 1), (x, 0), (i, 1), (b,), (b, b),
            (x, x, x), (b, x, x), (m, 1), (x, (3,)), ((3,),), (3,), (x, [0]), (x, i)]


def _primitives(jaxpr, found: set[str]) -> None:
    """The names of the primitives of `jaxpr` and of every jaxpr its equations carry."""
    for eqn in jaxpr.eqns:
        found.add(eqn.primitive.name)
        for value in eqn.params.values():
            for item in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(item, "jaxpr", item)
                if hasattr(inner, "eqns"):
                    _primitives(inner, found)


def _trace(function, arguments: tuple) -> set[str]:
    """The primitives binding `function(*arguments)` binds, its arrays traced."""
    import jax

    arrays = [k for k, a in enumerate(arguments) if isinstance(a, jax.Array)]

    def call(*traced):
        given = list(arguments)
        for k, value in zip(arrays, traced):
            given[k] = value
        return function(*given)

    closed = jax.make_jaxpr(call)(*[arguments[k] for k in arrays])
    found: set[str] = set()
    _primitives(closed.jaxpr, found)
    return found


def trace_all() -> tuple[dict[str, list[str]], list[str]]:
    """public name -> the primitives its calls bind, over every argument list that
    traces; and the names no argument list traced."""
    import importlib
    import inspect
    import warnings

    traced: dict[str, list[str]] = {}
    failed: list[str] = []
    warnings.simplefilter("ignore")
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        tries = _arguments(module_name)
        for name in sorted(getattr(module, "__all__", None) or dir(module)):
            function = getattr(module, name, None)
            if name.startswith("_") or not callable(function) or isinstance(function, type) \
                    or type(function).__module__ in ("typing", "types") \
                    and not inspect.isfunction(function):  # a class, an alias of a type
                continue
            found: set[str] = set()
            traces = 0
            for arguments in tries:
                try:
                    found |= _trace(function, arguments)
                    traces += 1
                except Exception:  # noqa: BLE001 - any failure: try the next list
                    continue
            if traces:
                traced[f"{module_name}.{name}"] = sorted(found)
            else:
                failed.append(f"{module_name}.{name}")
    return traced, failed


def _places(index, names) -> dict[str, tuple[str, int]]:
    """public name -> (file, line) of the definition it means, where the index has one."""
    from jaxmap.commands.lookup import definition_ids

    places = {}
    for name in names:
        ids = definition_ids(index, name)
        nodes = index.nodes(ids[:1])
        if nodes:
            node = next(iter(nodes.values()))
            places[name] = (node.file, node.line)
    return places


def _listed(index, everything: bool = False) -> dict[str, dict[tuple[str, int], tuple]]:
    """primitive name -> (file, line) of each public function `binds` lists for it ->
    its chain."""
    from jaxmap.commands.callgraph import binds

    listed: dict[str, dict[tuple[str, int], tuple]] = {}
    for prim in index.primitives():
        answer = binds(index, prim.variable or prim.name, everything=everything)
        listed.setdefault(prim.name or prim.variable, {}).update(
            ((r.file, r.line), r.chain) for r in answer.found if r.public)
    return listed


def _hubs(listed, pairs, most: int) -> list[tuple[int, tuple[str, str]]]:
    """The steps that the most chains of `pairs` go through: where a branch the inputs
    did not take (or a false edge) adds the most listed pairs that no trace shows."""
    steps: Counter = Counter()
    for place, prim in pairs:
        chain = listed[prim][place]
        steps.update(set(zip(chain, chain[1:])))
    return [(count, step) for step, count in steps.most_common(most)]


def score(traced: dict[str, list[str]], places, listed, show: int) -> dict[str, float]:
    """Recall and precision of `listed` against `traced`, printed, with examples and
    the steps most listed pairs no trace shows go through."""
    known = set(listed)
    seen = {(places[n], p) for n, prims in traced.items() if n in places
            for p in prims if p in known}
    unknown = Counter(p for n, prims in traced.items() for p in prims if p not in known)
    mine = {place for name, place in places.items() if name in traced}
    claimed = {(place, p) for p, where in listed.items() for place in where.keys() & mine}
    hit = seen & claimed
    recall, precision = len(hit) / max(len(seen), 1), len(hit) / max(len(claimed), 1)
    steps = {(a, b) for a, b, _why in UNTAKEN}
    untaken = {(place, p) for place, p in claimed - seen
               if steps & set(zip(listed[p][place], listed[p][place][1:]))}
    names = {place: name for name, place in places.items()}
    print(f"pairs seen at trace time: {len(seen)} (primitives the index lacks, left out: "
          f"{dict(unknown.most_common(8))})")
    print(f"recall     {recall:6.1%}  ({len(hit)} of {len(seen)} seen pairs listed)")
    print(f"precision  {precision:6.1%}  ({len(hit)} of {len(claimed)} listed pairs seen)")
    print(f"precision, counting as right the {len(untaken)} pairs whose chain goes through a "
          f"step of UNTAKEN (checked by hand): "
          f"{(len(hit) + len(untaken)) / max(len(claimed), 1):.1%}")
    shuffle = random.Random(0).sample
    for title, pairs in (("seen, not listed", seen - claimed),
                         ("listed, not seen", claimed - seen)):
        chosen = shuffle(sorted(pairs), min(show, len(pairs)))
        if chosen:
            print(f"{title} (a sample):")
            print("\n".join(f"  {names[place]}  {p}" for place, p in chosen))
    if show:
        print("steps most listed pairs no trace shows go through, but no step of UNTAKEN "
              "(the next to check by hand):")
        print("\n".join(f"  {count:5}  {a} -> {b}"
                        for count, (a, b) in _hubs(listed, claimed - seen - untaken, show)))
    return {"recall": recall, "precision": precision,
            "checked": (len(hit) + len(untaken)) / max(len(claimed), 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", help="keep the traces in FILE (JSON), read them back")
    parser.add_argument("--show", type=int, default=10, help="pairs of each kind to print")
    args = parser.parse_args(argv)
    if args.traces and os.path.exists(args.traces):
        with open(args.traces, encoding="utf-8") as handle:
            traced, failed = json.load(handle)
    else:
        traced, failed = trace_all()
        if args.traces:
            with open(args.traces, "w", encoding="utf-8") as handle:
                json.dump([traced, failed], handle)
    print(f"{len(traced)} public functions traced, {len(failed)} no argument list traced")
    from jaxmap.session import open_index

    with open_index(graph=True) as index:
        places = _places(index, traced)
        print(f"{len(places)} of them found in the index")
        default = score(traced, places, _listed(index), args.show)
        print("with --all, for comparison:")
        everything = score(traced, places, _listed(index, everything=True), 0)
    print(f"closing: recall {default['recall']:.1%} / precision {default['precision']:.1%}, "
          f"{default['checked']:.1%} with the branches checked by hand (--all: "
          f"{everything['recall']:.1%} / {everything['precision']:.1%}); targets "
          ">= 99% / >= 90%")
    return 0


if __name__ == "__main__":
    sys.exit(main())

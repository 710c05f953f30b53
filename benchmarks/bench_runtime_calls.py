"""The call graph against what runs: a workload of ordinary public-API use, profiled.

    python benchmarks/bench_runtime_calls.py [--misses N]

Runs the workload below (jnp, lax, nn, random, linalg, fft, grad/vmap/jit, scan/cond,
shard_map, export), written as a user would, on the installed jax under
`sys.setprofile`, indexes the same jax with this jaxmap, and prints two figures:

1. Call edges between two jax definitions that ran, and the share the graph has. A
   frame is mapped to the innermost definition of the index whose lines hold its
   code's first line (a nested function or lambda is its enclosing definition's, as
   the index records it). An edge counts when Python code of one definition calls a
   function of another explicitly: the caller's instruction at the call is a CALL.
   Left out, and counted: calls made from C (the callee's Python caller is inside a
   builtin or C++ call: `map`, jit's dispatch), implicit calls (the caller's
   instruction is not a call: an operator's or indexing's dunder, a property, a
   generator resumed; or the callee is a dunder other than __init__ and __call__,
   which a C callable ran: a hash, a comparison; or a property's getter, read by a C++
   constructor the caller called), calls the garbage collector makes (gc.callbacks),
   calls into a closure of another definition (a decorator's wrapper, a returned
   function: the index folds them into the definition that made them), and calls
   within one definition. An edge is in the graph when the calls
   table has it with any status but unresolved/external (resolved, through, handed),
   or has the caller call a decorated def whose edge at its decorator's line goes to
   the callee (calling `@binary_ufunc def add` runs `ufunc.__call__`).
2. (public function, primitive) pairs seen at a bind, and the share `binds PRIM
   --all --public` lists. At each `Primitive.bind`, the stack is read up to the user's code:
   the outermost jax frame there is the function the user called; if it maps to a
   function with a public path, it makes a pair with the primitive. (A primitive bound
   while tracing a user's function pairs with what that function called, not with
   jit or grad; a function called from C, as jit's dispatch calls back, is no pair.)
Targets (issue #25): >= 85% of edges, >= 98% of pairs. Nothing here asserts.
"""

from __future__ import annotations

import argparse
import bisect
import dis
import gc
import os
import sys
from collections import Counter, defaultdict

_CALLS = {dis.opmap[name] for name in ("CALL", "CALL_FUNCTION_EX") if name in dis.opmap}
_EXPLICIT = frozenset({"__init__", "__call__"})  # dunders a call runs by name
_HOOK = None  # the code of the bind hook, once installed


def workload() -> None:
    """Ordinary use of the public API."""
    import jax
    import jax.numpy as jnp
    from jax import export, lax
    from jax.sharding import Mesh, PartitionSpec as P

    key = jax.random.key(0)
    k1, k2 = jax.random.split(key)
    x = jax.random.normal(k1, (8, 8))
    w = jax.random.uniform(k2, (8,))
    y = jnp.dot(x, w) + jnp.sum(x ** 2, axis=0)
    y = jnp.where(y > 0, jnp.sqrt(jnp.abs(y)), jnp.exp(y))
    z = jnp.concatenate([y, jnp.zeros(3)])[::2].reshape(-1, 1)
    z = z.at[0].add(1.0).sum() + jnp.bincount(jnp.arange(5), length=5).sum()
    jnp.unique(jnp.array([3, 1, 3]), size=2)
    jnp.histogram(x, bins=4)
    jnp.linalg.inv(x @ x.T + jnp.eye(8))
    jnp.linalg.svd(x)
    jnp.fft.fft(w)
    jax.nn.relu(x), jax.nn.softmax(x), jax.nn.swish(x), jax.nn.logsumexp(x)
    lax.cumsum(w), lax.reduce_max(x, (0,)), lax.conv_general_dilated(
        x[None, None], jnp.ones((1, 1, 3, 3)), (1, 1), "SAME")

    def loss(params, inputs):
        hidden = jnp.tanh(inputs @ params["w"] + params["b"])
        return jnp.mean(hidden ** 2)

    params = {"w": x, "b": w}
    grads = jax.jit(jax.grad(loss))(params, x)
    jax.vmap(lambda row: jnp.vdot(row, w))(x)
    jax.tree.map(lambda leaf: leaf * 2, grads)
    jax.value_and_grad(loss)(params, x)

    def step(carry, item):
        return carry + item, carry * item

    lax.scan(step, 0.0, w)
    lax.cond(w[0] > 0, lambda v: v + 1, lambda v: v - 1, w)
    lax.fori_loop(0, 3, lambda i, v: v * 2, w)
    lax.while_loop(lambda v: v[0] < 10, lambda v: v + 1, w)
    mesh = Mesh(jax.devices()[:1], ("i",))
    jax.shard_map(lambda v: v * 2, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(w)
    exported = export.export(jax.jit(loss))(params, x)
    exported.call(params, x)
    exported.serialize()
    jax.block_until_ready(z)


class Recorder:
    """What ran: explicit call edges between code objects, the left-out ones by why,
    and the jax frames at each bind."""

    def __init__(self, package: str):
        self.package = package + os.sep
        self.edges: Counter = Counter()  # (caller code, callee code)
        self.left_out: Counter = Counter()
        self.binds: list[tuple[str, list]] = []  # (primitive name, jax codes on the stack)
        self._in_c: dict[int, int] = defaultdict(int)  # frame id -> open C calls
        self._collector = {getattr(c, "__code__", None) for c in gc.callbacks}

    def __call__(self, frame, event, arg):
        if event == "c_call":
            self._in_c[id(frame)] += 1
        elif event in ("c_return", "c_exception"):
            self._in_c[id(frame)] = max(0, self._in_c[id(frame)] - 1)
        elif event == "call":
            self._call(frame)

    def _call(self, frame) -> None:
        caller = frame.f_back
        if caller is None or not self._ours(frame.f_code) or not self._ours(caller.f_code):
            return
        if self._in_c.get(id(caller)):
            self.left_out["through C"] += 1
            return
        if frame.f_code in self._collector:
            self.left_out["run by the garbage collector (gc.callbacks)"] += 1
            return
        opcode = caller.f_code.co_code[caller.f_lasti] if caller.f_lasti >= 0 else None
        name = frame.f_code.co_name
        dunder = name.startswith("__") and name.endswith("__") and name not in _EXPLICIT
        # A dunder a CALL runs is a C callable's doing; a property read inside a call of
        # C (`NamedSharding(mesh, spec)` reading `mesh._internal_device_list`) is too.
        if opcode not in _CALLS or dunder or _is_property(frame):
            self.left_out["implicit (dunder, property, generator)"] += 1
            return
        self.edges[(caller.f_code, frame.f_code)] += 1

    def _ours(self, code) -> bool:
        return code.co_filename.startswith(self.package)

    def bind(self, primitive, frame) -> None:
        """The jax function the user's code called, of the stack at a bind."""
        outermost = None
        while frame is not None and (self._ours(frame.f_code) or frame.f_code is _HOOK):
            if frame.f_code is not _HOOK:  # this script's own hook is seen through
                outermost = frame.f_code
            frame = frame.f_back
        if outermost is not None:
            self.binds.append((primitive.name, [outermost]))


def _is_property(frame) -> bool:
    """Whether a frame runs a property's getter of its `self`'s class."""
    code = frame.f_code
    if code not in _PROPERTY_MEMO:
        owner = frame.f_locals.get("self") if code.co_argcount == 1 else None
        found = next((vars(klass)[code.co_name] for klass in type(owner).__mro__
                      if code.co_name in vars(klass)), None) if owner is not None else None
        getter = getattr(found, "fget", None) or getattr(found, "func", None)
        _PROPERTY_MEMO[code] = getattr(getter, "__code__", None) is code
    return _PROPERTY_MEMO[code]


_PROPERTY_MEMO: dict = {}


def run_workload(recorder: Recorder) -> None:
    from jax._src import core

    original = core.Primitive.bind

    def bind(self, *args, **params):
        recorder.bind(self, sys._getframe(1))
        return original(self, *args, **params)

    global _HOOK
    _HOOK = bind.__code__
    core.Primitive.bind = bind
    sys.setprofile(recorder)
    try:
        workload()
    finally:
        sys.setprofile(None)
        core.Primitive.bind = original


class Spans:
    """Code objects -> definition ids of the index, by file and line."""

    def __init__(self, index, root: str):
        self.root = root + os.sep
        self.by_file: dict[str, list] = defaultdict(list)
        self.kind: dict[int, str] = {}
        for did, _qualname, kind, file, line, end in index.spans():
            self.by_file[file].append((line, end or line, did))
            self.kind[did] = kind
        for spans in self.by_file.values():
            spans.sort()
        self._memo: dict = {}

    def of(self, code) -> int | None:
        """The innermost definition whose lines hold the code's first line."""
        if code in self._memo:
            return self._memo[code]
        file = code.co_filename[len(self.root):] if code.co_filename.startswith(self.root) \
            else None
        spans = self.by_file.get(file, ())
        found = next((did for line, end, did in spans if self.kind[did] == "module"), None)
        # The innermost definition holding any of its first lines: a decorator's line
        # comes before the `def` the index records, and lies in the enclosing class.
        lines = sorted({line for _s, _e, line in code.co_lines() if line is not None})
        best = None
        for first in lines[:4] or [code.co_firstlineno]:
            at = bisect.bisect_right(spans, (first, float("inf"), float("inf")))
            for line, end, did in spans[:at]:
                if line <= first <= end and self.kind[did] != "module" \
                        and (best is None or line >= best[0]):
                    best = (line, did)
        if best is not None:
            found = best[1]
        self._memo[code] = found
        return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", type=int, default=0, help="print N missed edges/pairs")
    args = parser.parse_args()
    import jax

    from jaxmap import roots
    from jaxmap.commands import callgraph
    from jaxmap.session import open_index

    root = roots.resolve_root(None)
    recorder = Recorder(os.path.dirname(jax.__file__))
    run_workload(recorder)
    with open_index(root, graph=True) as index:
        spans = Spans(index, root)
        pairs_in_graph = _run_through_decorators(index.call_pairs(), index.decorator_pairs())
        edges(recorder, spans, pairs_in_graph, index, args.misses)
        binds(recorder, spans, index, callgraph, args.misses)


def _run_through_decorators(pairs: set, decorated: set) -> set:
    """`pairs` and, for each call of a decorated def, a call of what its decorators made
    of it: the index draws that edge from the def (at its decorator's line), Python
    runs it from the caller."""
    made: dict[int, set[int]] = {}
    for function, wrapper in decorated:
        made.setdefault(function, set()).add(wrapper)
    return pairs | {(caller, wrapper) for caller, callee in pairs
                    for wrapper in made.get(callee, ())}


def edges(recorder, spans, in_graph, index, misses: int) -> None:
    found, missed, same, closures = set(), Counter(), 0, 0
    for (caller_code, callee_code), _n in recorder.edges.items():
        caller, callee = spans.of(caller_code), spans.of(callee_code)
        if caller is None or callee is None:
            continue
        if caller == callee:
            same += 1
            continue
        if "<locals>" in callee_code.co_qualname:
            closures += 1
            continue
        pair = (caller, callee)
        if pair in in_graph:
            found.add(pair)
        else:
            missed[pair] += 1
    total = len(found) + len(missed)
    print(f"call edges between two jax definitions that ran: {total}")
    print(f"  in the graph: {len(found)} ({100 * len(found) / max(total, 1):.1f}%), "
          "target >= 85%")
    left = dict(recorder.left_out)
    left["into a closure of another definition (wrapper, returned function)"] = closures
    left["within one definition"] = same
    for why, n in left.items():
        print(f"  left out, {why}: {n} calls")
    if misses:
        nodes = index.nodes({d for pair in missed for d in pair})
        for caller, callee in list(missed)[:misses]:
            print(f"    missed {nodes[caller].label} -> {nodes[callee].label}")


def binds(recorder, spans, index, callgraph, misses: int) -> None:
    seen: dict[str, set[int]] = defaultdict(set)
    for primitive, codes in recorder.binds:
        for code in codes:
            did = spans.of(code)
            if did is not None:
                seen[primitive].add(did)
    nodes = index.nodes({d for ids in seen.values() for d in ids})
    pairs = {(prim, did) for prim, ids in seen.items() for did in ids
             if did in nodes and nodes[did].public and nodes[did].kind == "function"}
    listed, missed = 0, []
    by_prim: dict[str, set[str]] = {}
    for prim, did in sorted(pairs):
        if prim not in by_prim:
            try:
                answer = callgraph.binds(index, prim, public=True, everything=True)
                by_prim[prim] = {r.label for r in answer.found}
            except Exception:  # a primitive the index does not know
                by_prim[prim] = set()
        if nodes[did].label in by_prim[prim]:
            listed += 1
        else:
            missed.append((nodes[did].label, prim))
    print(f"(public function, primitive) pairs seen at a bind: {len(pairs)}")
    print(f"  listed by binds PRIM --all --public: {listed} "
          f"({100 * listed / max(len(pairs), 1):.1f}%), target >= 98%")
    for label, prim in missed[:misses]:
        print(f"    missed {label} binds {prim}")


if __name__ == "__main__":
    main()

"""Use generated primitives the way users call them; run with the python of a jax
release's virtual environment (it imports jax, not jaxmap).

    XLA_FLAGS=--xla_force_host_platform_device_count=4 \\
        python shard_map_probe.py DIR SPECS_JSON

SPECS_JSON: [[variant, module name, arity, {param: value}], ...], each module
`DIR/<name>.py` as `jaxmap new-primitive` writes it out of tree, with its math
in jnp as `_<name>_reference`. For each: jit, vmap and jvp of the primitive
against the reference; `jax.grad` inside `shard_map` with its default
arguments over the 4 CPU devices, eager and under jit, and vmap of jit inside
it; an export round trip where `jax.export` imports. The same grad inside
`shard_map` of `jnp.sin` is the control: it tells a release's own failure from
the primitive's. Prints {variant: {check: 'pass' | 'FAIL: ...' | 'n/a: ...'}} as
JSON, with the control under "control".
"""

import functools
import importlib
import json
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

try:
    from jax import shard_map
except ImportError:
    from jax.experimental.shard_map import shard_map

DEVICES = 4
SHAPE = (2 * DEVICES, 3)


def _close(actual, expected):
    jax.tree.map(lambda a, e: np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5),
                 actual, expected)


def _total(tree):
    return sum(jnp.sum(leaf) for leaf in jax.tree.leaves(tree))


def _operands(arity, shape=SHAPE, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(0.1, 1.0, shape).astype(np.float32) for _ in range(arity))


def _mesh():
    return Mesh(np.array(jax.devices()[:DEVICES]), ("i",))


def _sharded_grad(fun, reference, xs, jit):
    argnums = tuple(range(len(xs)))
    specs = (P("i"),) * len(xs)
    sharded = shard_map(jax.grad(lambda *a: _total(fun(*a)), argnums), mesh=_mesh(),
                        in_specs=specs, out_specs=specs)
    _close((jax.jit(sharded) if jit else sharded)(*xs),
           jax.grad(lambda *a: _total(reference(*a)), argnums)(*xs))


def _checks(fun, reference, arity):
    """{check: callable raising on failure} for one primitive."""
    xs = _operands(arity)
    batch = _operands(arity, shape=(4,) + SHAPE, seed=1)
    tangents = _operands(arity, seed=2)
    specs = (P("i"),) * arity
    return {
        "jit": lambda: _close(jax.jit(fun)(*xs), reference(*xs)),
        "vmap": lambda: _close(jax.vmap(fun)(*batch), jax.vmap(reference)(*batch)),
        "jvp": lambda: _close(jax.jvp(fun, xs, tangents), jax.jvp(reference, xs, tangents)),
        "grad in shard_map": lambda: _sharded_grad(fun, reference, xs, jit=False),
        "jit of grad in shard_map": lambda: _sharded_grad(fun, reference, xs, jit=True),
        "vmap of jit in shard_map": lambda: _close(jax.jit(shard_map(
            jax.vmap(jax.jit(fun)), mesh=_mesh(), in_specs=specs, out_specs=P("i")))(*xs),
            reference(*xs)),
        "export round trip": lambda: _export_round_trip(fun, xs),
    }


def _export_round_trip(fun, xs):
    try:
        export = importlib.import_module("jax.export")
    except ImportError as error:
        return f"n/a: jax.export does not import ({error})"
    specs = [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in xs]
    restored = export.deserialize(export.export(jax.jit(fun))(*specs).serialize())
    _close(restored.call(*xs), fun(*xs))
    return None


def _run(check):
    try:
        note = check()
    except Exception as error:  # noqa: BLE001 - each failure is reported, not raised
        message = str(error).strip().splitlines() or [""]
        return f"FAIL: {type(error).__name__}: {message[0][:300]}"
    return note or "pass"


def main(directory, specs):
    sys.path.insert(0, directory)
    report = {"control": {"grad of jnp.sin in shard_map": _run(
        lambda: _sharded_grad(jnp.sin, jnp.sin, _operands(1), jit=True))}}
    for variant, name, arity, params in specs:
        module = importlib.import_module(name)
        fun = functools.partial(getattr(module, name), **params)
        ref = functools.partial(getattr(module, f"_{name}_reference"), **params)
        report[variant] = {check: _run(run) for check, run in _checks(fun, ref, arity).items()}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], json.loads(sys.argv[2]))

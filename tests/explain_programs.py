"""Failing programs for `explain`, as users write them: JAX programs, and plain Python
and NumPy failures. Run as a script (one process, jax imported once), it prints as JSON,
for each, the traceback as users see it (default filtering) and, for each exception of
its chain, the class and the innermost JAX frame of the unfiltered traceback (where it
was raised, when that is in JAX)."""

# ruff: noqa: B018, PLC3002, PLE0643  (each program fails on purpose)

import json
import re
import sys
import traceback

import jax
import jax.numpy as jnp
import numpy as np

PROGRAMS = {}


def program(fn):
    PROGRAMS[fn.__name__] = fn
    return fn


# -- tracers where values are needed ----------------------------------------------------
@program
def int_of_tracer():
    jax.jit(lambda x: int(x))(1.0)


@program
def bool_of_tracer():
    jax.jit(lambda x: x if x > 0 else -x)(1.0)


@program
def float_of_tracer():
    jax.jit(lambda x: float(x))(1.0)


@program
def arange_of_tracer():
    jax.jit(lambda n: jnp.arange(n))(3)


@program
def zeros_of_tracer_shape():
    jax.jit(lambda n: jnp.zeros((n,)))(3)


@program
def numpy_of_tracer():
    jax.jit(lambda x: np.asarray(x))(jnp.ones(3))


@program
def index_with_tracer_slice():
    jax.jit(lambda x, n: x[:n])(jnp.ones(3), 2)


@program
def leaked_tracer():
    leaked = []

    def f(x):
        leaked.append(x)
        return x

    jax.jit(f)(1.0)
    jax.jit(lambda y: y + leaked[0])(1.0)


# -- autodiff -----------------------------------------------------------------------------
@program
def grad_of_non_scalar():
    jax.grad(lambda x: x * 2)(jnp.ones(3))


@program
def grad_of_int_input():
    jax.grad(lambda x: x * 2)(3)


@program
def transpose_of_non_linear():
    jax.linear_transpose(jnp.cos, 1.0)(1.0)


@program
def custom_vjp_bwd_wrong_arity():
    @jax.custom_vjp
    def f(x):
        return x

    f.defvjp(lambda x: (x, None), lambda res, g: (g, g))
    jax.grad(f)(1.0)


@program
def custom_jvp_wrong_tangent_shape():
    @jax.custom_jvp
    def f(x):
        return x

    f.defjvp(lambda primals, tangents: (primals[0], jnp.ones(2)))
    jax.jvp(f, (1.0,), (1.0,))


@program
def custom_jvp_without_rule():
    @jax.custom_jvp
    def f(x):
        return x

    jax.jvp(f, (1.0,), (1.0,))


@program
def grad_has_aux_not_pair():
    jax.grad(lambda x: x, has_aux=True)(1.0)


# -- vmap ----------------------------------------------------------------------------------
@program
def vmap_sizes_differ():
    jax.vmap(lambda a, b: a + b)(jnp.ones(3), jnp.ones(4))


@program
def vmap_in_axes_out_of_range():
    jax.vmap(lambda a: a, in_axes=2)(jnp.ones(3))


@program
def vmap_in_axes_structure():
    jax.vmap(lambda a, b: a, in_axes=(0, 0, 0))(jnp.ones(3), jnp.ones(3))


@program
def vmap_of_scalar():
    jax.vmap(lambda a: a)(1.0)


# -- control flow ---------------------------------------------------------------------------
@program
def scan_carry_type_changes():
    jax.lax.scan(lambda c, x: (c.astype(jnp.int32), x), 1.0, jnp.ones(3))


@program
def scan_carry_shape_changes():
    jax.lax.scan(lambda c, x: (jnp.stack([c, c]), x), 1.0, jnp.ones(3))


@program
def cond_branches_differ():
    jax.lax.cond(True, lambda: jnp.ones(2), lambda: jnp.ones(3))


@program
def while_body_type_changes():
    jax.lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, jnp.int32(0))


@program
def fori_loop_python_bound_in_jit():
    jax.jit(lambda n: jax.lax.fori_loop(0, n, lambda i, c: c + i, 0.0) + jnp.zeros(n))(3)


@program
def switch_branches_differ():
    jax.lax.switch(0, [lambda: jnp.ones(2), lambda: 1.0])


# -- arrays -----------------------------------------------------------------------------------
@program
def in_place_update():
    x = jnp.ones(3)
    x[0] = 2.0


@program
def reshape_wrong_size():
    jnp.ones(3).reshape(4)


@program
def dot_shapes():
    jax.lax.dot_general(jnp.ones((2, 3)), jnp.ones((4, 5)), (((1,), (0,)), ((), ())))


@program
def matmul_mismatch():
    jnp.ones((2, 3)) @ jnp.ones((4, 5))


@program
def concatenate_ranks():
    jnp.concatenate([jnp.ones(2), jnp.ones((2, 2))])


@program
def add_shapes():
    jax.lax.add(jnp.ones(2), jnp.ones(3))


@program
def broadcast_shapes_fail():
    jnp.ones(2) + jnp.ones(3)


@program
def lax_dtype_mismatch():
    jax.lax.add(jnp.ones(2, jnp.float32), jnp.ones(2, jnp.int32))


@program
def dynamic_slice_sizes():
    jax.lax.dynamic_slice(jnp.ones(3), (0,), (1, 2))


# -- random keys ---------------------------------------------------------------------------------
@program
def random_key_not_a_key():
    jax.random.normal(jnp.ones(3), (2,))


@program
def random_split_of_float():
    jax.random.split(1.5)


# -- pytrees ------------------------------------------------------------------------------------------
@program
def tree_map_structures_differ():
    jax.tree.map(lambda a, b: a + b, (1, 2), [1, 2])


@program
def tree_map_lengths_differ():
    jax.tree.map(lambda a, b: a + b, [1, 2], [1, 2, 3])


@program
def vmap_in_axes_prefix():
    jax.vmap(lambda a: a[0], in_axes=({"x": 0},))([jnp.ones(3)])


@program
def tree_unflatten_count():
    jax.tree.unflatten(jax.tree.structure((1, 2)), [1])


# -- a primitive without rules --------------------------------------------------------------------
def _frob():
    from jax.extend.core import Primitive

    prim = Primitive("frob_without_rules")
    prim.def_impl(lambda x: x)
    prim.def_abstract_eval(lambda x: x)
    return prim


@program
def primitive_without_jvp():
    prim = _frob()
    jax.grad(lambda x: prim.bind(x))(1.0)


@program
def primitive_without_batching():
    prim = _frob()
    jax.vmap(lambda x: prim.bind(x))(jnp.ones(3))


@program
def primitive_without_lowering():
    prim = _frob()
    jax.jit(lambda x: prim.bind(x))(1.0)


@program
def primitive_without_transpose():
    prim = _frob()
    jax.linear_transpose(lambda x: prim.bind(x), 1.0)(1.0)


@program
def primitive_without_abstract_eval():
    from jax.extend.core import Primitive

    prim = Primitive("frob_no_abstract_eval")
    prim.def_impl(lambda x: x)
    jax.jit(lambda x: prim.bind(x))(1.0)


# -- sharding, shard_map --------------------------------------------------------------------------
@program
def shard_map_spec_rank():
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:1]), ("i",))
    jax.shard_map(lambda x: x, mesh=mesh, in_specs=P("i", "i"), out_specs=P("i"))(jnp.ones(4))


@program
def shard_map_unknown_axis():
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:1]), ("i",))
    jax.shard_map(lambda x: x, mesh=mesh, in_specs=P("j"), out_specs=P("j"))(jnp.ones(4))


@program
def named_sharding_unknown_axis():
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:1]), ("i",))
    jax.device_put(jnp.ones(4), NamedSharding(mesh, P("j")))


@program
def psum_unbound_axis():
    jax.jit(lambda x: jax.lax.psum(x, "i"))(1.0)


# -- debug, checkify, callbacks -----------------------------------------------------------------
@program
def debug_print_bad_format():
    jax.jit(lambda x: jax.debug.print("{y}", x=x))(1.0)


@program
def checkify_check_outside():
    from jax.experimental import checkify

    jax.jit(lambda x: checkify.check(x > 0, "x must be positive"))(1.0)


@program
def checkify_error_thrown():
    from jax.experimental import checkify

    def f(x):
        checkify.check(x > 0, "x must be positive, got {x}", x=x)
        return x

    err, _ = checkify.checkify(f)(-1.0)
    err.throw()


@program
def pure_callback_wrong_shape():
    def host(x):
        return np.ones(4, np.float32)

    jax.jit(lambda x: jax.pure_callback(host, jax.ShapeDtypeStruct((3,), jnp.float32), x))(
        jnp.ones(3))


@program
def custom_batching_rule_missing():
    from jax import custom_batching

    @custom_batching.custom_vmap
    def f(x):
        return x

    jax.vmap(f)(jnp.ones(3))


@program
def checkpoint_static_argnums():
    jax.checkpoint(lambda x, n: x * n, static_argnums=(5,))(1.0, 2)


@program
def donate_argnums_out_of_range():
    jax.jit(lambda x: x, donate_argnums=(3,))(1.0)


@program
def donate_and_static_overlap():
    jax.jit(lambda x: x, donate_argnums=(0,), static_argnums=(0,))(1.0)


@program
def jit_static_unhashable():
    jax.jit(lambda x, y: x, static_argnums=(1,))(1.0, [1])


@program
def export_shape_poly_bad_spec():
    from jax import export

    export.symbolic_shape("a +")


@program
def export_shape_poly_mismatch():
    from jax import export

    a, = export.symbolic_shape("a")
    exp = export.export(jax.jit(lambda x: x.reshape(2, -1)))(
        jax.ShapeDtypeStruct((a,), jnp.float32))
    exp.call(jnp.ones(3))


@program
def pallas_interpret_block_shape():
    from jax.experimental import pallas as pl

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((4,), jnp.float32),
                   in_specs=[pl.BlockSpec((2, 2), lambda i: (i, 0))],
                   grid=(2,), interpret=True)(jnp.ones(4))


@program
def pallas_interpret_out_shape():
    from jax.experimental import pallas as pl

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    pl.pallas_call(kernel, out_shape=(4,), interpret=True)(jnp.ones(4))


@program
def debug_callback_not_callable():
    jax.jit(lambda x: jax.debug.callback(3, x))(1.0)


@program
def remat_prevent_cse_not_bool():
    jax.remat(lambda x: x, prevent_cse=3)(1.0)


@program
def donate_argnames_unknown():
    jax.jit(lambda x: x, donate_argnames=("y",))(1.0)


@program
def pure_callback_bad_vmap_method():
    jax.pure_callback(lambda x: x, jax.ShapeDtypeStruct((3,), jnp.float32), jnp.ones(3),
                      vmap_method="bad")


@program
def custom_vmap_rule_returns_too_much():
    from jax import custom_batching

    @custom_batching.custom_vmap
    def f(x):
        return x

    f.def_vmap(lambda axis_size, in_batched, x: (x, False, 1))
    jax.vmap(f)(jnp.ones(3))


@program
def export_call_rank_mismatch():
    from jax import export

    exp = export.export(jax.jit(lambda x: x))(
        jax.ShapeDtypeStruct(export.symbolic_shape("a"), jnp.float32))
    exp.call(jnp.ones((2, 3)))


@program
def lax_map_negative_batch_size():
    jax.lax.map(lambda x: x, jnp.ones(3), batch_size=-1)


@program
def random_key_of_array():
    jax.random.key(jnp.ones(3))


# -- a JAX error wrapped by the user's own --------------------------------------------------
@program
def reraised_from_jax_error():
    try:
        jax.jit(lambda x: int(x))(1.0)
    except TypeError as error:
        raise RuntimeError("could not convert the model's step count") from error


@program
def handled_badly():
    try:
        jnp.ones(3).reshape(4)
    except TypeError:
        {}["fallback"]


# -- not from JAX: plain Python and NumPy failures --------------------------------------------
NOT_JAX = {}


def not_jax(fn):
    NOT_JAX[fn.__name__] = fn
    return fn


@not_jax
def add_int_and_str():
    return 1 + "a"


@not_jax
def numpy_reshape():
    np.ones(3).reshape(4)


@not_jax
def missing_key():
    {"a": 1}["b"]


@not_jax
def list_index():
    [1, 2][5]


@not_jax
def int_of_word():
    int("three")


@not_jax
def numpy_broadcast():
    np.ones(2) + np.ones(3)


@not_jax
def attribute_of_none():
    None.shape


@not_jax
def too_many_arguments():
    (lambda x: x)(1, 2)


@not_jax
def numpy_dot_shapes():
    np.dot(np.ones((2, 3)), np.ones((4, 5)))


@not_jax
def negative_dimension():
    np.zeros(-1)


@not_jax
def json_of_garbage():
    json.loads("{")


@not_jax
def math_domain():
    import math

    math.sqrt(-1)


def _run(fn):
    try:
        fn()
    except Exception as error:  # noqa: BLE001 - each program fails on purpose
        return error
    return None


_JAX_FILE = re.compile(r"(?:^|/)(jax/.*)$")


def _chain(error):
    """Each exception of the chain, the root cause first: its class, and the file (from
    `jax/` on) and line of its traceback's innermost frame if that frame is in JAX."""
    chain = []
    while error is not None:
        frames = traceback.extract_tb(error.__traceback__)
        inner = _JAX_FILE.search(frames[-1].filename) if frames else None
        chain.insert(0, [type(error).__name__, inner and inner.group(1),
                         frames[-1].lineno if inner else None])
        error = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
    return chain


def main():
    out = {}
    for name, fn in NOT_JAX.items():
        error = _run(fn)
        out[name] = {"chain": _chain(error), "jax": False,
                     "traceback": "".join(traceback.format_exception(error))}
    for name, fn in PROGRAMS.items():
        jax.config.update("jax_traceback_filtering", "off")
        error = _run(fn)
        chain = _chain(error)
        jax.config.update("jax_traceback_filtering", "auto")
        filtered = _run(fn)
        out[name] = {"chain": chain, "jax": True,
                     "traceback": "".join(traceback.format_exception(filtered))
                     if filtered is not None else None}
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()

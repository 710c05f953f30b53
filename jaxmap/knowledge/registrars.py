"""JAX knowledge as tables: who registers which rule kinds, where primitives come from.

A reference card, not logic. Names are written `module.attr` with the module's leaf
name; `expand` turns them into the fully qualified names JAX defines them under
(private `jax._src...` and the public re-export paths), which is what the resolver
compares against. Helpers that JAX builds on top of these (standard_primitive,
standard_unop, naryop, linalg_primitive, ...) need no entry: the resolver
summarises their bodies.
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxmap.models import RuleKind as K

# Where each module leaf used below lives, privately and publicly.
MODULES: dict[str, tuple[str, ...]] = {
    "ad": ("jax._src.interpreters.ad", "jax.interpreters.ad"),
    "batching": ("jax._src.interpreters.batching", "jax.interpreters.batching"),
    "partial_eval": ("jax._src.interpreters.partial_eval", "jax.interpreters.partial_eval"),
    "mlir": ("jax._src.interpreters.mlir", "jax.interpreters.mlir"),
    "loops": ("jax._src.lax.control_flow.loops",),
    "conditionals": ("jax._src.lax.control_flow.conditionals",),
    "dispatch": ("jax._src.dispatch",),
    "core": ("jax._src.core", "jax.core", "jax.extend.core"),
    "remat": ("jax._src.interpreters.remat",),
    "discharge": ("jax._src.state.discharge",),
    "checkify": ("jax._src.checkify",),
    "shard_map": ("jax._src.shard_map",),
    "jet": ("jax.experimental.jet",),
    "sparse": ("jax.experimental.sparse.transform",),
    "key_reuse": ("jax.experimental.key_reuse._core",),
    "roofline": ("jax.experimental.roofline.roofline",),
    "pallas_cost": ("jax._src.pallas.cost_estimate",),
    "pallas_hlo": ("jax._src.pallas.hlo_interpreter",),
    "pallas_interpret": ("jax._src.pallas.mosaic.interpret.interpret_pallas_call",),
    "fusible_dtype": ("jax._src.pallas.fuser.fusible_dtype",),
    "jaxpr_fusion": ("jax._src.pallas.fuser.jaxpr_fusion",),
    "block_spec": ("jax._src.pallas.fuser.block_spec",),
    "mosaic_gpu": ("jax._src.pallas.mosaic_gpu.lowering",),
    "hijax": ("jax._src.hijax", "jax.experimental.hijax"),
    "functools": ("functools",),
    "util": ("jax._src.util", "jaxlib.utils"),  # jax 0.12 takes safe_zip from jaxlib
    "tree_util": ("jax._src.tree_util",),
}


@dataclass(frozen=True, slots=True)
class Registrar:
    """A function that registers rules: which kinds, and where its arguments are."""

    kinds: tuple[K, ...]
    rule_arg: int | None = 1  # positional index of the rule callable; None: built in
    rule_count: int | None = 1  # how many rule functions follow, from rule_arg on;
    # None: every argument from rule_arg on (one rule per operand, `None` for none)
    platform_arg: int | None = None  # positional index of the platform, if any
    # Where the tree defines it, its body is read instead, for the rule function it
    # registers (`simple_impl(p)`: `p.def_impl(partial(apply_primitive, p))`).
    read_in_tree: bool = False


# Calls `registrar(primitive, ...)`; the primitive is always the first argument.
CALLS: dict[str, Registrar] = {
    "ad.defjvp": Registrar((K.JVP,), rule_count=None),  # one per operand
    "ad.defjvp2": Registrar((K.JVP,), rule_count=None),  # one per operand
    "ad.defjvp_zero": Registrar((K.JVP,), rule_arg=None),
    "ad.deflinear": Registrar((K.JVP, K.TRANSPOSE)),
    "ad.deflinear2": Registrar((K.JVP, K.TRANSPOSE)),
    "ad.defbilinear": Registrar((K.JVP, K.TRANSPOSE), rule_count=2),  # left, right transposes
    "batching.defvectorized": Registrar((K.BATCHING,), rule_arg=None),
    "batching.defbroadcasting": Registrar((K.BATCHING,), rule_arg=None),
    "batching.defreducer": Registrar((K.BATCHING,), rule_arg=None),
    "mlir.register_lowering": Registrar((K.LOWERING,), platform_arg=2),
    "dispatch.simple_impl": Registrar((K.IMPL,), rule_arg=None, read_in_tree=True),
}

# Methods of a Primitive: `p.def_impl(f)` or `@p.def_impl`.
METHODS: dict[str, K] = {
    "def_impl": K.IMPL,
    "def_abstract_eval": K.ABSTRACT_EVAL,
    "def_effectful_abstract_eval": K.ABSTRACT_EVAL,
    "def_effectful_abstract_eval2": K.ABSTRACT_EVAL,
}

# Dicts keyed by primitive: `registry[p] = rule`, `registry.update({p: rule})`.
REGISTRIES: dict[str, K] = {
    "ad.primitive_jvps": K.JVP,
    "ad.primitive_transposes": K.TRANSPOSE,
    "ad.fancy_transposes": K.TRANSPOSE,
    "ad.primitive_linearizations": K.LINEARIZATION,
    "batching.primitive_batchers": K.BATCHING,
    "batching.fancy_primitive_batchers": K.BATCHING,
    "batching.axis_primitive_batchers": K.BATCHING,
    "partial_eval.custom_partial_eval_rules": K.PARTIAL_EVAL,
    "partial_eval.partial_eval_jaxpr_custom_rules": K.PARTIAL_EVAL,
    "partial_eval.dce_rules": K.DCE,
    "partial_eval.forwarding_rules": K.FORWARDING,
    "partial_eval.const_fold_rules": K.CONST_FOLD,
    "partial_eval.custom_staging_rules": K.STAGING,
    "mlir._lowerings": K.LOWERING,
    "mlir._platform_specific_lowerings": K.LOWERING,
    "ad.reducing_transposes": K.TRANSPOSE,
    "partial_eval.call_partial_eval_rules": K.PARTIAL_EVAL,
    "core.custom_typechecks": K.TYPECHECK,
    "core.pp_eqn_rules": K.PRETTY_PRINT,
    "discharge._discharge_rules": K.DISCHARGE,
    "discharge._partial_discharge_rules": K.DISCHARGE,
    "remat.rules": K.REMAT,
    "partial_eval.call_param_updaters": K.PARAM_UPDATE,
    "ad.call_param_updaters": K.PARAM_UPDATE,
    "ad.call_linearize_param_updaters": K.PARAM_UPDATE,
    "ad.call_transpose_param_updaters": K.PARAM_UPDATE,
    "jet.call_param_updaters": K.PARAM_UPDATE,
    "checkify.error_checks": K.CHECKIFY,
    "shard_map.eager_rules": K.SHARD_MAP_EAGER,
    "jet.jet_rules": K.JET,
    "sparse.sparse_rules_bcoo": K.SPARSE,
    "sparse.sparse_rules_bcsr": K.SPARSE,
    "key_reuse.key_reuse_signatures": K.KEY_REUSE,
    "roofline._rooflines": K.ROOFLINE,
    "pallas_cost._cost_rules": K.PALLAS_COST,
    "pallas_hlo._eval_jaxpr_hop_rules": K.PALLAS_INTERPRET,
    "pallas_interpret._interpret_impls": K.PALLAS_INTERPRET,
    "fusible_dtype._physicalize_rules": K.PALLAS_PHYSICALIZE,
    "jaxpr_fusion._fusible": K.PALLAS_FUSIBLE,
    "block_spec.pull_block_spec_rules": K.PALLAS_BLOCK_SPEC_PULL,
    "block_spec.push_block_spec_rules": K.PALLAS_BLOCK_SPEC_PUSH,
    "block_spec.usage_rules": K.PALLAS_BLOCK_SPEC_USAGE,
    "block_spec.eval_rules": K.PALLAS_BLOCK_SPEC_EVAL,
    "mosaic_gpu._resource_estimators": K.PALLAS_RESOURCES,
}

# Platforms of XLA lowerings (`register_lowering(..., platform=...)`), as opposed to the
# Pallas backends below.
XLA_PLATFORMS = frozenset({"cpu", "cuda", "rocm", "gpu", "tpu", "oneapi", "metal", "iree"})
GPU_PLATFORMS = frozenset({"gpu", "cuda", "rocm"})  # `gpu`: JAX's name for both GPU backends
# What `platform="gpu"` registers for in a tree without JAX's own alias table (a library
# outside jax): the GPU backends of every release, as `mlir.register_lowering` expands it.
DEFAULT_PLATFORM_ALIASES: dict[str, list[str]] = {"gpu": sorted(GPU_PLATFORMS - {"gpu"})}


def lowers_for_xla(platform: str | None) -> bool:
    """Whether a lowering registered for `platform` is XLA's: the default one (None), or
    one of an XLA platform, not a Pallas backend's."""
    return platform is None or platform in XLA_PLATFORMS


# Pallas backends keep their own lowering tables; the backend is the platform.
PALLAS_LOWERING_TABLES: dict[str, str] = {
    "jax._src.pallas.mosaic.lowering.lowering_rules": "mosaic_tpu",
    "jax._src.pallas.mosaic_gpu.lowering.mosaic_lowering_rules": "mosaic_gpu",
    "jax._src.pallas.triton.lowering.triton_lowering_rules": "triton",
}

# Classes whose instances are primitives (subclasses are found by the resolver).
PRIMITIVE_CLASSES = ("core.Primitive",)
# JAX's own subclasses, for trees without jax in them (a library's `core.CallPrimitive(...)`);
# where jax is in the tree they are followed as its classes.
PRIMITIVE_SUBCLASSES = ("core.CallPrimitive", "core.MapPrimitive", "core.ClosedCallPrimitive")

# Methods of a Primitive subclass that override the rules of its instances.
PRIMITIVE_METHODS: dict[str, K] = {"impl": K.IMPL, "abstract_eval": K.ABSTRACT_EVAL}

# Subclasses of these are primitives themselves (one per class, named after it), with
# their rules as methods: `class SearchSorted(VJPHiPrimitive)`.
# `HiPrim` is the name from jax 0.12 on (`VJPHiPrimitive` before).
HIJAX_CLASS_BASES = ("hijax.VJPHiPrimitive", "hijax.HiPrim")
# Instances of subclasses of these are primitives whose rules are the class's methods:
# `box_get_p = BoxGet('box_get')` with `class BoxGet(HiPrimitive)`.
HI_PRIMITIVE_BASES = ("hijax.HiPrimitive",)
HIJAX_METHODS: dict[str, K] = {
    "expand": K.IMPL,
    "to_lojax": K.IMPL,
    "physicalize": K.IMPL,  # jax 0.12's name for lowering to low-level jax
    "abstract_eval": K.ABSTRACT_EVAL,
    "jvp": K.JVP,
    "vjp_fwd": K.TRANSPOSE,
    "vjp_bwd": K.TRANSPOSE,
    "vjp_bwd_retval": K.TRANSPOSE,
    "transpose": K.TRANSPOSE,
    "lin": K.LINEARIZATION,
    "linearized": K.LINEARIZATION,
    "batch": K.BATCHING,
    "batch_dim_rule": K.BATCHING,
    "dce": K.DCE,
    "staging": K.STAGING,
}

PARTIAL = "functools.partial"
# Calls that keep a function handed to them for later, never calling it there (a rule
# runs when a transformation dispatches on its primitive), by their last name: the
# registrars above (`mlir.register_lowering`, `p.def_impl`), and any name with JAX's
# registrar prefix (`register_discharge_rule(p)(rule)`, `register_pytree_node`).
KEEPER_PREFIX = "register"
KEEPERS = frozenset({*(short.rpartition(".")[2] for short in CALLS), *METHODS})
# Functions that trace a function handed to them: (the positional argument it is handed
# as, what the traced function's positional parameters without a default hold, in order,
# the last for the rest): "array", one Array (a tracer) each, as `mlir.lower_fun(f)`
# traces a lowering rule; "pytree", a pytree of them (a loop's carry, a branch's operands).
ARRAY_PARAMETER, PYTREE_PARAMETER = "array", "pytree"
TRACERS: dict[str, tuple[tuple[int, tuple[str, ...]], ...]] = {
    "mlir.lower_fun": ((0, (ARRAY_PARAMETER,)),),
    "loops.while_loop": ((0, (PYTREE_PARAMETER,)), (1, (PYTREE_PARAMETER,))),
    "loops.fori_loop": ((2, (ARRAY_PARAMETER, PYTREE_PARAMETER)),),
    "loops.scan": ((0, (PYTREE_PARAMETER,)),),
    "conditionals.cond": ((1, (PYTREE_PARAMETER,)), (2, (PYTREE_PARAMETER,))),
}
# Pytree functions: `tree_flatten(x)` gives x's structure (beside its leaves), from which
# `tree_unflatten(structure, leaves)` makes an object of x's class again.
FLATTEN, UNFLATTEN = "flatten", "unflatten"
PYTREES: dict[str, str] = {"tree_util.tree_flatten": FLATTEN,
                           "tree_util.tree_unflatten": UNFLATTEN}
# Functions that zip like the builtin (JAX modules rebind `zip` to its checked version).
ZIPS = ("util.safe_zip",)

# The conventional import aliases users and agents write: `jnp.einsum` is
# `jax.numpy.einsum`; an alias JAX's own code uses names its private module too
# (`pe.DynamicJaxprTrace`). Tried in order. README lists them.
USER_ALIASES: dict[str, tuple[str, ...]] = {
    "jnp": ("jax.numpy",),
    "lax": ("jax.lax", "jax._src.lax.lax"),
    "jsp": ("jax.scipy",),
    "jex": ("jax.extend",),
    "jr": ("jax.random",),
    "jrandom": ("jax.random",),
    "jtu": ("jax._src.test_util",),
    "jsparse": ("jax.experimental.sparse",),
    "pl": ("jax.experimental.pallas",),
    "pltpu": ("jax.experimental.pallas.tpu",),
    "plgpu": ("jax.experimental.pallas.mosaic_gpu",),
    "plsc": ("jax.experimental.pallas.tpu_sc",),
    "mgpu": ("jax.experimental.mosaic.gpu",),
    **{leaf: modules for leaf, modules in MODULES.items()
       if leaf in ("core", "mlir", "ad", "batching", "dispatch")},
    "pe": MODULES["partial_eval"],
}

# Where REPO-MAP.md's "where to add things" prefers its examples from: the plain
# primitives of jax.lax, rather than higher-order ones such as jit.
EXAMPLE_MODULES = ("jax._src.lax.lax", "jax._src.lax.")
# How a unary elementwise primitive is batched (`neg`, `sin`): the simplest primitives,
# the examples `explain` offers a primitive outside the index first.
ELEMENTWISE_BATCHING = ("batching.defvectorized",)

# The stages of JAX's pipeline, for REPO-MAP.md: a heading, then the definitions (by
# qualified-name suffix) that show where the stage lives. Names a version lacks are
# skipped.
PIPELINE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Public API (jit, grad, vmap)", ("api.jit", "api.grad", "api.vmap")),
    ("Tracing", ("core.Trace", "core.Tracer", "core.EvalTrace")),
    ("Jaxprs", ("core.Jaxpr", "core.ClosedJaxpr", "core.JaxprEqn",
                "partial_eval.trace_to_jaxpr_dynamic")),
    ("Primitives", ("core.Primitive", "core.Primitive.bind")),
    ("Dispatch (eager execution)", ("dispatch.apply_primitive",)),
    ("Autodiff: JVP, linearize, transpose", ("ad.JVPTrace", "ad.linearize", "ad.backward_pass")),
    ("Batching (vmap)", ("batching.BatchTrace",)),
    ("Partial evaluation and DCE", ("partial_eval.JaxprTrace", "partial_eval.DynamicJaxprTrace",
                                    "partial_eval.dce_jaxpr")),
    ("MLIR lowering", ("mlir.register_lowering", "mlir.lower_jaxpr_to_module",
                       "mlir.jaxpr_subcomp")),
    ("Sharding and pxla", ("pxla.lower_sharding_computation", "sharding_impls.NamedSharding",
                           "mesh.Mesh")),
    ("Compilation", ("compiler.compile_or_get_cached",)),
)


def expand(short: str) -> tuple[str, ...]:
    """`ad.deflinear2` -> every fully qualified name it is defined or exported under."""
    leaf, _, attr = short.partition(".")
    return tuple(f"{module}.{attr}" for module in MODULES[leaf])


def _by_full_name(table: dict) -> dict:
    return {full: entry for short, entry in table.items() for full in expand(short)}


CALLS_BY_NAME: dict[str, Registrar] = _by_full_name(CALLS)
REGISTRIES_BY_NAME: dict[str, K] = _by_full_name(REGISTRIES)
PRIMITIVE_CLASS_NAMES = frozenset(n for s in PRIMITIVE_CLASSES for n in expand(s))
PRIMITIVE_SUBCLASS_NAMES = frozenset(n for s in PRIMITIVE_SUBCLASSES for n in expand(s))
ZIP_NAMES = frozenset(n for s in ZIPS for n in expand(s))
TRACERS_BY_NAME: dict[str, tuple[tuple[int, tuple[str, ...]], ...]] = _by_full_name(TRACERS)
PYTREES_BY_NAME: dict[str, str] = _by_full_name(PYTREES)
HIJAX_CLASS_BASE_NAMES = frozenset(n for s in HIJAX_CLASS_BASES for n in expand(s))
HI_PRIMITIVE_BASE_NAMES = frozenset(n for s in HI_PRIMITIVE_BASES for n in expand(s))

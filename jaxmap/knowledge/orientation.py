"""JAX knowledge REPO-MAP.md orients a newcomer with, as tables: subsystems (with the
test files a checkout keeps for each), the core modules in reading order, how a
`jax.jit(f)(x)` call flows and how an export becomes bytes, the public names people
look for, the escalation ladder, contributor paths, what JAX says when a rule is
missing, the Pallas backends, the families of primitives that lack a rule by design,
the core classes, the alternate paths of features, and how the messages page splits.

Names are qualified-name suffixes (`api.jit` finds `jax._src.api.jit`; the core
classes and alternate paths give whole names), looked up in the index: a name a
release lacks is left out, never guessed. Sentences here are
jaxmap's own descriptions; every location in the map comes from the index.
"""

from __future__ import annotations

from typing import NamedTuple


class Subsystem(NamedTuple):
    name: str
    does: str
    modules: tuple[str, ...]  # module prefixes, most important first
    entries: tuple[str, ...]  # qualified-name suffixes of its entry points
    tests: tuple[str, ...] = ()  # where a JAX checkout tests it (root-relative files)


SUBSYSTEMS: tuple[Subsystem, ...] = (
    Subsystem("Core and tracing",
              "Primitives, tracers and trace contexts, avals, jaxprs and their evaluation; "
              "every other subsystem builds on it.",
              ("jax._src.core", "jax._src.linear_util", "jax._src.api_util",
               "jax._src.source_info_util", "jax._src.effects"),
              ("core.Primitive", "core.Trace", "core.Tracer", "core.ShapedArray",
               "core.eval_jaxpr", "linear_util.wrap_init"),
              ("tests/core_test.py", "tests/api_util_test.py", "tests/jaxpr_util_test.py",
               "tests/jaxpr_effects_test.py")),
    Subsystem("Public API and jit",
              "The user-facing transformations; jit stages a function into a jaxpr held "
              "by its own primitive and compiles it.",
              ("jax._src.api", "jax._src.pjit", "jax._src.stages", "jax._src.dispatch"),
              ("api.jit", "api.grad", "api.vmap", "api.make_jaxpr", "pjit.make_jit"),
              ("tests/api_test.py", "tests/jax_jit_test.py", "tests/pjit_test.py",
               "tests/aot_test.py")),
    Subsystem("Autodiff",
              "Forward mode through JVP rules, linearization, and transposition for "
              "reverse mode; grad and vjp are built from them.",
              ("jax._src.interpreters.ad", "jax._src.ad_util"),
              ("ad.JVPTrace", "ad.linearize", "ad.backward_pass"),
              ("tests/lax_autodiff_test.py", "tests/api_test.py")),
    Subsystem("Batching",
              "vmap: a batch trace carries a batched dimension through each primitive's "
              "batching rule.",
              ("jax._src.interpreters.batching",),
              ("batching.BatchTrace",),
              ("tests/batching_test.py", "tests/lax_vmap_test.py", "tests/lax_vmap_op_test.py")),
    Subsystem("Partial evaluation",
              "Staging Python into jaxprs, splitting known from unknown values for "
              "autodiff, dead-code elimination.",
              ("jax._src.interpreters.partial_eval",),
              ("partial_eval.DynamicJaxprTrace", "partial_eval.trace_to_jaxpr_dynamic",
               "partial_eval.dce_jaxpr"),
              ("tests/api_test.py", "tests/core_test.py")),
    Subsystem("Lowering and compilation",
              "Jaxprs to StableHLO through one lowering rule per primitive and platform, "
              "then XLA compiles and runs the module.",
              ("jax._src.interpreters.mlir", "jax._src.interpreters.pxla", "jax._src.compiler"),
              ("mlir.register_lowering", "mlir.lower_jaxpr_to_module",
               "pxla.lower_sharding_computation", "compiler.compile_or_get_cached"),
              ("tests/jax_to_ir_test.py", "tests/compilation_cache_test.py",
               "tests/xla_bridge_test.py")),
    Subsystem("lax",
              "The primitives themselves (elementwise, dot_general, reductions, control "
              "flow, collectives, linear algebra) and their rules.",
              ("jax._src.lax",),
              ("lax.dot_general", "loops.scan", "conditionals.cond", "parallel.psum"),
              ("tests/lax_test.py", "tests/lax_autodiff_test.py", "tests/lax_vmap_test.py",
               "tests/lax_control_flow_test.py", "tests/linalg_test.py")),
    Subsystem("numpy and scipy",
              "jax.numpy and jax.scipy, written in terms of lax.",
              ("jax._src.numpy", "jax._src.scipy"),
              ("lax_numpy.reshape", "einsum.einsum"),
              ("tests/lax_numpy_test.py", "tests/lax_scipy_test.py")),
    Subsystem("Sharding and shard_map",
              "Meshes, shardings and partition specs; shard_map writes per-device code.",
              ("jax._src.sharding_impls", "jax._src.named_sharding", "jax._src.mesh",
               "jax._src.shard_map", "jax._src.sharding", "jax._src.partition_spec"),
              ("mesh.Mesh", "named_sharding.NamedSharding", "shard_map.shard_map"),
              ("tests/shard_map_test.py", "tests/pjit_test.py", "tests/array_test.py")),
    Subsystem("Custom derivatives and remat",
              "custom_jvp and custom_vjp attach user rules through their own call "
              "primitives; checkpoint trades memory for recomputation.",
              ("jax._src.custom_derivatives", "jax._src.ad_checkpoint",
               "jax._src.custom_transpose", "jax._src.custom_batching"),
              ("custom_derivatives.custom_jvp", "custom_derivatives.custom_vjp",
               "ad_checkpoint.checkpoint"),
              ("tests/custom_api_test.py", "tests/api_test.py")),
    Subsystem("Export",
              "Serialising a lowered function (StableHLO plus its calling convention) to "
              "run later or elsewhere.",
              ("jax._src.export",),
              ("_export.export", "_export.Exported", "_export.Exported.serialize",
               "_export.deserialize"),
              ("tests/export_test.py", "tests/export_serialization_back_compat_test.py",
               "tests/shape_poly_test.py")),
    Subsystem("Pallas",
              "A kernel language: pallas_call lowers a kernel body to Mosaic (TPU), "
              "Mosaic GPU or Triton.",
              ("jax._src.pallas", "jax._src.tpu_custom_call"),
              ("pallas_call.pallas_call", "pallas.core.BlockSpec"),
              ("tests/pallas/pallas_test.py", "tests/pallas/ops_test.py",
               "tests/pallas/tpu_ops_test.py", "tests/pallas/mosaic_gpu_test.py")),
    Subsystem("FFI",
              "Calling C++ or CUDA functions registered with XLA as custom calls.",
              ("jax._src.ffi", "jax._src.callback"),
              ("ffi.ffi_call", "ffi.register_ffi_target"),
              ("tests/ffi_test.py", "tests/python_callback_test.py")),
    Subsystem("State",
              "Mutable references (Refs) in traced code, and discharging them into pure "
              "jaxprs.",
              ("jax._src.state",),
              ("discharge.discharge_state", "types.AbstractRef"),
              ("tests/state_test.py", "tests/mutable_array_test.py")),
)

class CalledFrom(NamedTuple):
    """Of `names`, the first a function of the module file `file` calls (which one
    changed between releases, and an older one can still be defined)."""

    names: tuple[str, ...]
    file: str


# How `jax.jit(f)(x)` runs, stage by stage: (what happens, the definitions where).
JIT_FLOW: tuple[tuple[str, tuple[str | CalledFrom, ...]], ...] = (
    ("`jax.jit(f)` wraps f; nothing is traced yet", ("api.jit", "pjit.make_jit")),
    ("The first call misses the C++ cache and infers parameters",
     ("pjit._cpp_pjit", "pjit._infer_params")),
    ("f is traced to a jaxpr: each jax operation binds a primitive",
     (CalledFrom(("partial_eval.trace_to_jaxpr", "partial_eval.trace_to_jaxpr_dynamic"),
                 "pjit.py"),  # 0.9 on: trace_to_jaxpr
      "partial_eval.DynamicJaxprTrace", "core.Primitive.bind")),
    ("The jaxpr is lowered to StableHLO, one lowering rule per equation",
     ("pjit._pjit_lower", "pxla.lower_sharding_computation", "mlir.lower_jaxpr_to_module")),
    ("XLA compiles the module (with a persistent cache)", ("compiler.compile_or_get_cached",)),
    ("The executable runs; later calls take the C++ fast path",
     ("pxla.ExecuteReplicated",)),
)

# The core modules in the order a newcomer reads them: (module, what to read it for).
READING_ORDER: tuple[tuple[str, str], ...] = (
    ("jax._src.core", ("the vocabulary: Primitive and bind, Trace and Tracer, avals, Jaxpr, "
                       "eval_jaxpr")),
    ("jax._src.linear_util", "WrappedFun and wrap_init: functions transformed lazily"),
    ("jax._src.api_util", "flattening arguments and debug info before tracing"),
    ("jax._src.source_info_util", "the source locations each equation carries"),
    ("jax._src.effects", "the effects a jaxpr may have (ordered, unordered)"),
    ("jax._src.interpreters.partial_eval", ("staging Python into a jaxpr "
                                            "(DynamicJaxprTrace), known/unknown splits, DCE")),
    ("jax._src.interpreters.ad", "JVP, linearize and transpose: how grad works"),
    ("jax._src.interpreters.batching", "BatchTrace: how vmap works"),
    ("jax._src.api", "jit, grad, vmap: the public transformations built on the above"),
    ("jax._src.pjit", "jit's primitive, parameter inference and the path to lowering"),
    ("jax._src.dispatch", "eager execution of a single primitive"),
    ("jax._src.interpreters.mlir", "lowering rules: jaxpr to StableHLO"),
    ("jax._src.interpreters.pxla", "sharded lowering, compiled executables"),
    ("jax._src.lax.lax", "the primitives themselves: how one is built and registered"),
)

# The base classes the rest of JAX extends, by core module in reading order:
# (class, what it stands for). REPO-MAP.md finds where each is and what extends it.
CORE_CLASSES: tuple[tuple[str, str], ...] = (
    ("jax._src.core.Primitive", "an operation JAX knows; `bind` applies it under the "
                                "current trace"),
    ("jax._src.core.Trace", "an interpreter: how primitives are processed under one "
                            "transformation"),
    ("jax._src.core.Tracer", "a value being traced: carries an aval and its trace"),
    ("jax._src.core.AbstractValue", "an aval: what is known of a value (shape, dtype, ...)"),
    ("jax._src.core.ShapedArray", "the aval of an array: shape, dtype, weak type, sharding"),
    ("jax._src.core.Jaxpr", "a staged program: variables and equations"),
    ("jax._src.core.ClosedJaxpr", "a jaxpr with its constants"),
    ("jax._src.core.JaxprEqn", "one equation: a primitive applied to variables"),
    ("jax._src.linear_util.WrappedFun", "a function with transformations applied lazily"),
    ("jax._src.effects.Effect", "a side effect a jaxpr may have"),
    ("jax._src.interpreters.partial_eval.DynamicJaxprTrace", "the trace that stages Python "
                                                             "into a jaxpr (jit, make_jaxpr)"),
    ("jax._src.mesh.Mesh", "devices laid out on named axes"),
    ("jax._src.mesh.AbstractMesh", "a mesh's axis names and sizes, without devices"),
    ("jax._src.sharding.Sharding", "how an array is laid out across devices"),
    ("jax._src.named_sharding.NamedSharding", "a sharding by mesh and PartitionSpec"),
    ("jax._src.partition_spec.PartitionSpec", "which mesh axes shard each array dimension"),
    ("jax._src.layout.Layout", "how an array is laid out in one device's memory"),
    ("jax._src.interpreters.mlir.LoweringRuleContext", "what a lowering rule receives"),
)

# Where a feature leaves its usual path: (the mode, the function that runs it, the
# function that dispatches to it). REPO-MAP.md gives both places and the call's line.
ALTERNATE_PATHS: tuple[tuple[str, str, str], ...] = (
    ("Pallas `interpret=True`: the kernel runs as plain JAX on any backend",
     "jax._src.pallas.hlo_interpreter.pallas_call_hlo_interpret",
     "jax._src.pallas.pallas_call._pallas_call_lowering"),
    ("Pallas TPU interpret mode (`interpret=pltpu.InterpretParams()`)",
     "jax._src.pallas.mosaic.interpret.interpret_pallas_call.interpret_pallas_call",
     "jax._src.pallas.pallas_call._pallas_call_lowering"),
    ("Pallas Mosaic GPU interpret mode",
     "jax._src.pallas.mosaic_gpu.interpret.interpret_pallas_call.interpret_pallas_call",
     "jax._src.pallas.pallas_call._pallas_call_lowering"),
    ("jit's primitive bound outside any trace: compile and run",
     "jax._src.pjit._pjit_call_impl", "jax._src.core.EvalTrace.process_primitive"),
    ("jit lowering a sharded computation", "jax._src.interpreters.pxla."
     "lower_sharding_computation", "jax._src.pjit._pjit_lower"),
    ("checkify: the jaxpr rewritten with error checks", "jax._src.checkify.checkify_jaxpr",
     "jax._src.checkify.checkify"),
    ("io_callback under jit: the host call its lowering makes",
     "jax._src.callback.io_callback_impl", "jax._src.callback.io_callback_lowering"),
)

# How an exported function becomes bytes and back: (what happens, definitions where).
EXPORT_FLOW: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("`jax.export.export(f)(*args)` traces and lowers f to StableHLO, giving an `Exported`",
     ("_export.export", "_export.Exported")),
    ("`Exported.serialize` loads the serializer lazily (flatbuffers is optional)",
     ("_export.Exported.serialize",)),
    ("The module that writes the bytes: a flatbuffers Builder filled from the `Exported`",
     ("serialization.serialize", "serialization._serialize_exported")),
    ("The flatbuffer schema's generated accessors", ("serialization_generated.PyTreeDefKind",)),
    ("Bytes back to an `Exported`", ("_export.deserialize", "serialization.deserialize")),
)

# The public names a newcomer looks for (shown at their real definition, not an
# `@overload` stub).
ENTRY_POINTS: tuple[str, ...] = (
    "api.jit", "api.grad", "api.value_and_grad", "api.vmap", "api.make_jaxpr",
    "shard_map.shard_map", "custom_derivatives.custom_jvp", "custom_derivatives.custom_vjp",
    "ad_checkpoint.checkpoint", "_export.export", "_export.Exported.serialize",
    "_export.deserialize", "pallas_call.pallas_call", "ffi.ffi_call", "loops.scan",
    "conditionals.cond", "loops.while_loop",
)

# When JAX's own transformations are not enough, in order of escalation.
LADDER: tuple[tuple[str, str], ...] = (
    ("custom_vjp / custom_jvp: your own derivative", "custom_derivatives.custom_vjp"),
    ("export: ship a lowered function", "_export.export"),
    ("custom_partitioning: your own sharding rule", "custom_partitioning.custom_partitioning"),
    ("Pallas: write the kernel", "pallas_call.pallas_call"),
    ("FFI: call C++/CUDA", "ffi.ffi_call"),
)

# What JAX raises when a primitive lacks a rule of a kind (kinds JAX has no error
# for fall back to a default rule).
MISSING_RULE_ERRORS: dict[str, str] = {
    "impl": "Evaluation rule for '{name}' not implemented",
    "abstract_eval": "Abstract evaluation for '{name}' not implemented",
    "jvp": "Differentiation rule for '{name}' not implemented",
    "transpose": "Transpose rule (for reverse-mode differentiation) for '{name}' not "
                 "implemented",
    "batching": "Batching rule for '{name}' not implemented",
    "lowering": "MLIR translation rule for primitive '{name}' not found for platform "
                "{platform}",
    "lowering[mosaic_tpu]": "Unimplemented primitive in Pallas TPU lowering for "
                            "{kernel_type}: {name}",
    "lowering[mosaic_gpu]": "Unimplemented primitive in Pallas Mosaic GPU lowering: {name}",
    "lowering[triton]": "Unimplemented primitive in Pallas Triton lowering: {name}",
}

# Pallas backends, each with its own lowering table (registrars.PALLAS_LOWERING_TABLES).
PALLAS_BACKENDS: dict[str, str] = {
    "mosaic_tpu": "Pallas on TPU (Mosaic TPU)",
    "mosaic_gpu": "Pallas on GPU (Mosaic GPU)",
    "triton": "Pallas on GPU (Triton)",
}

# Where contributors start reading (paths in a JAX checkout).
DOCS_FIRST: tuple[tuple[str, str], ...] = (
    ("docs/autodidax.md", "JAX rebuilt from scratch in one notebook: traces, jaxprs, jit"),
    ("docs/jax-primitives.md", "what a primitive is and which rules it needs"),
    ("docs/jaxpr.md", "reading jaxprs"),
    ("docs/developer.md", "building jaxlib, running tests"),
    ("docs/contributing.md", "how changes are proposed and reviewed"),
)

# Primitives that lack some rules by design, each family named once.
GAP_FAMILIES: tuple[tuple[str, str], ...] = (
    ("kernel language", "Pallas and Mosaic primitives, used only inside kernels"),
    ("async halves", "the `_start`/`_done` halves of asynchronous collectives"),
    ("internal calls", ("call primitives (`call*`, `*_call*`, jit) whose rules come from "
                       "the function they call")),
)
# The pages of REPO-MAP-MESSAGES: (page, what it holds, the modules whose messages it
# lists); the first takes every module the others do not name.
MESSAGE_PAGES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("", "transformations, tracing, sharding, export and the rest", ()),
    ("NUMERICS", "jax.numpy, jax.lax, jax.scipy, jax.random and jax.nn",
     ("jax._src.numpy", "jax._src.lax", "jax._src.scipy", "jax._src.random", "jax._src.nn",
      "jax._src.ops", "jax._src.image", "jax._src.fft")),
    ("KERNELS", "Pallas and Mosaic kernels",
     ("jax._src.pallas", "jax.experimental.pallas", "jax.experimental.mosaic",
      "jax._src.tpu_custom_call")),
)
CONFIG_MODULE = "jax._src.config"  # where every `jax.config` option is defined
KERNEL_MODULES = ("jax._src.pallas", "jax._src.tpu_custom_call", "jax.experimental.mosaic")
CALL_PRIMITIVES = frozenset({"jit", "pjit", "remat", "checkpoint"})

# Primitives defined here are examples or tests, not part of JAX.
OUTSIDE_JAX = ("tests/", "docs/", "examples/", "benchmarks/")


def is_test_module(module: str) -> bool:
    """A module of tests: in a `tests` (or `test`) package, or named `test_*`/`*_test`."""
    *packages, leaf = module.split(".")
    return bool({"tests", "test"} & set(packages)) or leaf.startswith("test_") \
        or leaf.endswith("_test")

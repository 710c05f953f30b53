"""What runs only when a jaxpr is evaluated, lowered, compiled or interpreted, never
while a user's call is traced; and the public modules a user imports, in the order
`binds` lists them.

An interpreter here is a function that runs other primitives' rules or binds the
primitives of a jaxpr it is handed: a step through one (`binds` follows it only with
`--all`) says "interprets". Each row is a module or a function, by dotted name; a
definition is one when its qualname is the row or lies under it.
"""

from __future__ import annotations

import re

INTERPRETERS: tuple[tuple[str, str], ...] = (
    ("jax._src.core.eval_jaxpr", "evaluates a jaxpr, binding each equation's primitive"),
    ("jax._src.core.jaxpr_as_fun", "a jaxpr as a function that evaluates it"),
    ("jax._src.interpreters.mlir.jaxpr_subcomp", "lowers a jaxpr, running lowering rules"),
    ("jax._src.interpreters.mlir.lower_jaxpr_to_module", "lowers a jaxpr to a module"),
    ("jax._src.interpreters.mlir.lower_jaxpr_to_fun", "lowers a jaxpr to a function"),
    ("jax._src.interpreters.pxla.lower_sharding_computation", "lowers a jit's jaxpr"),
    ("jax._src.pjit._pjit_call_impl_python", "compiles and runs a jit call, not traced"),
    ("jax._src.state.discharge", "evaluates a jaxpr, discharging its state effects"),
    ("jax._src.pallas.hlo_interpreter", "Pallas's interpret mode over HLO"),
    ("jax._src.pallas.mosaic.interpret", "Mosaic TPU interpret mode"),
    ("jax._src.pallas.mosaic_gpu.interpret", "Mosaic GPU interpret mode"),
    ("jax._src.pallas.mosaic.lowering", "the Mosaic TPU kernel lowering"),
    ("jax._src.pallas.mosaic.sc_lowering", "the SparseCore kernel lowering"),
    ("jax._src.pallas.mosaic.random", "the Pallas TPU PRNG lowering"),
    ("jax._src.pallas.mosaic_gpu.lowering", "the Mosaic GPU kernel lowering"),
    ("jax._src.pallas.triton.lowering", "the Triton kernel lowering"),
)

# The modules a user imports, in the order `binds` lists their functions; a module
# under one goes with the nearest (`jax.nn.initializers` with `jax.nn`).
USER_MODULES: tuple[str, ...] = (
    "jax.numpy", "jax.lax", "jax.nn", "jax.random", "jax.numpy.linalg", "jax.numpy.fft",
    "jax.scipy.special", "jax.scipy.linalg", "jax.scipy.stats", "jax.scipy.signal",
    "jax.scipy", "jax.image", "jax.lax.linalg", "jax.ops", "jax.tree", "jax",
)
_LAST = ("jax.experimental", "jax.example_libraries", "jax.extend")  # after the rest


# The table as one pattern: a review asks of every definition on both sides (60k).
_INTERPRETER = re.compile(
    f"(?:{'|'.join(re.escape(name) for name, _why in INTERPRETERS)})(?:\\.|$)")


def is_interpreter(qualname: str) -> bool:
    """Whether the definition `qualname` is (or lies inside) an interpreter of the table."""
    return _INTERPRETER.match(qualname) is not None


def module_order(label: str) -> tuple[int, str, str]:
    """The sort key of a public name (`jax.numpy.cumsum`) by the module a user imports
    it from: the nearest of USER_MODULES that holds it, in their order
    (`jax.nn.initializers` with `jax.nn`), then `jax.experimental` and the like; then
    the module and the name."""
    module, _, name = label.rpartition(".")
    if listed_last(label):
        return len(USER_MODULES), module, name
    holders = [user for user in USER_MODULES if _within(module, user)]
    rank = USER_MODULES.index(max(holders, key=len)) if holders else len(USER_MODULES)
    return rank, module, name


def listed_last(label: str) -> bool:
    """Whether the public name `label` lies in a module listed after the rest:
    `jax.experimental`, `jax.example_libraries`, `jax.extend`."""
    module = label.rpartition(".")[0]
    return any(_within(module, last) for last in _LAST)


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")

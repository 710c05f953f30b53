"""The escalation ladder as data: each rung of advanced JAX work, cheapest first.

A rung says when it pays off, when it does not, what to ask before climbing to it,
which `jaxmap new` kinds start it and which public names hold its machinery (looked
up in the index by `jaxmap ladder`). Generated modules open with their rung's text.
"""

from __future__ import annotations

from typing import NamedTuple

from jaxmap.knowledge.backends import BACKENDS


class Rung(NamedTuple):
    """One step of the ladder."""

    number: int
    title: str
    use_when: tuple[str, ...]
    avoid_when: tuple[str, ...]
    ask: tuple[str, ...]
    kinds: tuple[str, ...] = ()
    machinery: tuple[str, ...] = ()


_RUNGS: tuple[Rung, ...] = (
    Rung(1, "plain JAX",
         ("jax.numpy, jax.lax and jax.jit express the computation",),
         ("never: every climb starts here",),
         ("does a vectorised rewrite or a better algorithm remove the problem?",),
         machinery=("jax.jit",)),
    Rung(2, "another transform or control-flow primitive",
         (("a Python loop, recursion or repeated trace is the cost (scan, fori_loop, "
           "while_loop, cond, vmap)"),),
         ("the loop is short and unrolling is what XLA wants",),
         ("is the trip count static, and does reverse mode need the loop carried?",),
         machinery=("jax.lax.scan", "jax.vmap")),
    Rung(3, "checkpointing, donation or explicit sharding",
         ("memory, buffer copies or device layout limit the program",),
         (("the program fits and the profile shows compute, not memory or "
           "communication"),),
         ("which buffers are live at the peak, and which axis should be sharded?",),
         machinery=("jax.checkpoint", "jax.sharding.NamedSharding")),
    Rung(4, "custom_jvp or custom_vjp",
         (("automatic differentiation gives the wrong answer for the abstraction "
           "(nan or inf where the maths is finite)"),
          "the stable formula for the derivative differs from the forward one",
          "differentiating the forward pass naively is too expensive"),
         ("only the forward pass is unstable: rewrite it and keep autodiff",),
         (("is the derivative really different, or does the primal just need a "
           "stable formula?"),
          "can the derivative rule be checked on its own (check_grads)?",
          "does the rule still batch and compile like the rest?"),
         machinery=("jax.custom_jvp", "jax.custom_vjp")),
    Rung(5, "jax.export and ahead-of-time lowering",
         (("tracing and running must happen apart (another process, machine or "
           "release)"),
          "a staged computation must be saved, shipped or inspected",
          "one artifact must serve many batch sizes (shape polymorphism)"),
         ("the caller can simply import the Python function and jit it",),
         (("which transformations must the artifact still support (grad order, "
           "vmap, jvp)?"),
          "which platforms must it run on?"),
         machinery=("jax.export.export", "jax.export.deserialize")),
    Rung(6, "custom_partitioning",
         ("a function needs its own rule for how it splits across devices",
          ("the partitioner's choice, even with sharding constraints, costs "
           "communication the maths does not need")),
         (("the sharding semantics are not yet understood: this rung hides mistakes "
           "well"),),
         ("which axes can each shard compute alone, and which need all of them?",
          "does the release use Shardy (a sharding rule) or GSPMD (callbacks)?"),
         machinery=("jax.experimental.custom_partitioning.custom_partitioning",)),
    Rung(7, "Pallas",
         ("a profile shows a real kernel-level hotspot",
          "XLA's fusion and the rungs below have been tried and fall short"),
         ("the code is merely slow, with no profile naming a kernel",
          "the algorithm is still changing",
          "backend-specific code (block sizes, memory spaces) cannot be maintained"),
         (("which backend and block sizes, and how is the kernel tested against a "
           "reference?"),),
         machinery=("jax.experimental.pallas.pallas_call",
                    "jax.experimental.pallas.BlockSpec")),
    Rung(8, "the foreign function interface (FFI)",
         ("a kernel or library already exists outside JAX",
          "Pallas and the other extension points cannot express it"),
         (("the gain does not pay for a compiled artefact per platform and its "
           "upkeep"),),
         ("how is the library built and shipped with the Python code?",
          "how does it batch and differentiate?"),
         machinery=("jax.ffi.ffi_call", "jax.ffi.register_ffi_target")),
    Rung(9, "JAX internals: a new primitive",
         (("JAX itself is being changed, or the public API cannot express the "
           "operation"),
          "the problem is a real bug or design gap in JAX"),
         ("a rung below solves it from user code",),
         (("which rules does it need: abstract eval, lowering, JVP, transpose, "
           "batching?"),),
         machinery=("jax.extend.core.Primitive",)),
)

class Style(NamedTuple):
    """A module template and the `versions` features the target release must have
    (`primitive`'s are `new-primitive`'s own: no template here)."""

    template: str = ""
    needs: tuple[str, ...] = ()


class Kind(NamedTuple):
    """One `jaxmap new` kind: the rung it starts, its styles (classic first), its test
    template, extra files as (path pattern with {name}, template), and the backends
    (knowledge.backends) its code and tests can run on."""

    rung: int
    example: str  # the name its example is generated under (the skill's starter, tests)
    styles: dict[str, Style]
    test: str = ""
    extras: tuple[tuple[str, str], ...] = ()
    backends: tuple[str, ...] = BACKENDS


# The one list of `jaxmap new` kinds; each rung's `kinds` is read from it.
KINDS: dict[str, Kind] = {
    "custom-jvp": Kind(4, "softplus", {"classic": Style("new_custom_jvp.py.j2")},
                       "new_custom_jvp_test.py.j2"),
    "custom-vjp": Kind(4, "norm", {"classic": Style("new_custom_vjp.py.j2"),
                           "hijax": Style("new_custom_vjp_hijax.py.j2", ("hijax_base",))},
                       "new_custom_vjp_test.py.j2"),
    "export": Kind(5, "my_model", {"classic": Style("new_export.py.j2")},
                   "new_export_test.py.j2"),
    "custom-partitioning": Kind(6, "center",
                                {"classic": Style("new_custom_partitioning.py.j2")},
                                "new_custom_partitioning_test.py.j2"),
    "pallas": Kind(7, "tiles", {"classic": Style("new_pallas.py.j2", ("pallas_gpu",))},
                   "new_pallas_test.py.j2"),
    "ffi": Kind(8, "softsign", {"classic": Style("new_ffi.py.j2", ("ffi_module",))},
                "new_ffi_test.py.j2", (("{name}.cc", "new_ffi.cc.j2"),),
                # Its handler is C++ for the host and CUDA; a TPU runs no custom calls.
                backends=("cpu", "gpu")),
    # `jaxmap new-primitive` with its defaults.
    "primitive": Kind(9, "my_op", {"classic": Style(), "hijax": Style()}),
}
RUNGS: tuple[Rung, ...] = tuple(
    rung._replace(kinds=tuple(name for name, kind in KINDS.items() if kind.rung == rung.number))
    for rung in _RUNGS)

CHECKLIST: tuple[str, ...] = (
    "every cheaper rung was tried, and rejected for a stated reason",
    "the extra power is needed, not merely interesting",
    "backend and portability costs are written down",
    ("there is a test plan: a reference to compare against and the transforms "
     "to check"),
    "the speed or correctness gain is measured, or at least specific",
)


def examples(prefix: str = "", every_style: bool = False
             ) -> tuple[tuple[str, str, str | None], ...]:
    """(kind, name, style) of each kind's example, `primitive` last: the one matrix the
    tests, the release check, the benchmark and the skill's starters share. With
    `every_style`, a kind's other templated styles too (`jm_norm_hijax`)."""
    rows: list[tuple[str, str, str | None]] = []
    for kind_name, kind in KINDS.items():
        rows.append((kind_name, prefix + kind.example, None))
        rows += [(kind_name, f"{prefix}{kind.example}_{style}", style)
                 for style, chosen in kind.styles.items()
                 if every_style and style != "classic" and chosen.template]
    return tuple(rows)


def rung_of(kind: str) -> Rung:
    """The rung a `jaxmap new` kind starts."""
    return RUNGS[KINDS[kind].rung - 1]

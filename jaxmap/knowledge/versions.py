"""What generated code needs from each jax release: one table, keyed by version.

`STEPS` maps a feature to its history, a tuple of `(first release, value)` steps
in release order: a release gets the value of the last step at or before it, and
a value of None means the release lacks the feature. `Release.get(feature)`
reads it, `Release.require(feature, what)` refuses (UnsupportedRelease, one line
naming the first release that has it) where it is None. Templates receive
`Release.needs()`, every feature's value, and never compare versions themselves.

`target()` finds the release to generate for: the installed jax (its
distribution metadata; jax is not imported), or a checkout's `jax/version.py`,
read statically.

To extend: add your features to STEPS under a comment naming the generator that
reads them, each with a step at OLDEST so every supported release has a value;
add a step to a feature only when a release changes it, citing what changed.
Never edit another generator's rows; add a feature of your own instead.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass

from jaxmap.errors import SpecError, TargetError

Version = tuple[int, ...]

OLDEST: Version = (0, 4, 30)

STEPS: dict[str, tuple[tuple[Version, object], ...]] = {
    # -- new-primitive (jaxmap/scaffold) ---------------------------------------------
    # The batching table a rule is registered in, and so the rule's signature:
    # (args, dims, **params) before 0.4.36, (axis_data, args, dims, **params) after.
    "batching_registry": ((OLDEST, "primitive_batchers"),
                          ((0, 4, 36), "fancy_primitive_batchers")),
    # Where shard_map lives.
    "shard_map_module": ((OLDEST, "jax.experimental.shard_map"), ((0, 6, 1), "jax")),
    # What a primitive needs so that shard_map's default replication check
    # (check_rep=True) accepts it, jax.grad inside included: (module, registrars),
    # the functions jax/experimental/shard_map.py calls on each of lax's own
    # primitives (its `_check_rules` and `_rewrite_rules` tables). None from 0.6.0:
    # the check reads the varying manual axes an abstract eval keeps instead.
    "shard_map_replication": ((OLDEST, ("jax.experimental.shard_map",
                                        ("register_standard_check",
                                         "register_standard_rewrite"))),
                              ((0, 6, 0), None)),
    # What a user must pass to shard_map for jax.grad inside it, whatever the
    # primitive registers (None: nothing). In 0.6.0 grad seeds its cotangent without
    # the varying manual axes of the result, so the grad of any varying result
    # fails the check ("unexpected JAX type ... for argument to vjp function"),
    # jnp.sin's too; measured on 0.6.0, fixed in 0.6.1.
    "shard_map_grad_argument": ((OLDEST, None), ((0, 6, 0), "check_rep=False"),
                                ((0, 6, 1), None)),
    # jax.experimental.hijax's base class. 0.8.x has VJPHiPrimitive, but with
    # `vjp_fwd(self, *args)` (no `nzs_in`) and no `transpose`: not supported.
    "hijax_base": ((OLDEST, None), ((0, 9, 0), "VJPHiPrimitive"), ((0, 11, 2), "HiPrim")),
    # How a hijax `transpose` tells an operand being transposed (an accumulator)
    # from a value: hijax calls `transpose` from 0.9.2; its accumulator class is
    # public (jax.experimental.hijax.GradAccum) from 0.11.0.
    "hijax_accum_check": ((OLDEST, None), ((0, 9, 2), "hasattr({}, 'accum')"),
                          ((0, 11, 0), "isinstance({}, GradAccum)")),
    # A regex for an equation of a hijax primitive (class name `{}`) in a jaxpr.
    "hijax_jaxpr_eqn": ((OLDEST, None), ((0, 9, 0), r"call_hi_primitive\[\s*_prim={}\["),
                        ((0, 12, 0), r"= {}[\[ ]")),
    # The arguments of mlir.aval_to_ir_type in a lowering rule.
    "aval_to_ir_type_args": ((OLDEST, "aval"), ((0, 10, 1), "ctx.module_context, aval")),
    # How an in-tree test module asks jax._src.test_util for CPU devices.
    "test_cpu_devices": ((OLDEST, "set_host_platform_device_count"),
                         ((0, 5, 0), "request_cpu_devices")),
    # A package jax.export imports at module level without declaring it.
    "export_undeclared_import": ((OLDEST, "absl"), ((0, 6, 2), None)),
    # -- new KIND (the escalation ladder) --------------------------------------------
    # Read by jaxmap/scaffold/kinds.py. custom_partitioning's partitioner: Shardy,
    # which takes a `sharding_rule`, is the default from 0.7.0; GSPMD before it asks
    # for the propagation callbacks instead.
    "partitioning_rule": ((OLDEST, "callbacks"), ((0, 7, 0), "sharding_rule")),
    # custom_partitioning reads the mesh from a `with mesh:` context (an empty Mesh
    # without one, and XLA aborts); measured on 0.4.30, no longer needed on 0.4.38.
    "partitioning_mesh_context": ((OLDEST, True), ((0, 4, 38), None)),
    # Pallas: `BlockSpec(block_shape, index_map)` from 0.4.31 (index_map came first
    # before), and the GPU backend kernels compile with: Triton until 0.11.0
    # deprecates it, Mosaic GPU from then.
    "pallas_gpu": ((OLDEST, None), ((0, 4, 31), "triton"), ((0, 11, 0), "mosaic_gpu")),
    # The FFI module with `ffi_call` returning a callable: `jax.extend.ffi` moved to
    # `jax.ffi` in 0.5.0 (and was removed in 0.7.0).
    "ffi_module": ((OLDEST, None), ((0, 5, 0), "jax.ffi")),
}


class UnsupportedRelease(SpecError):
    """The target jax release lacks what the requested output needs."""


@dataclass(frozen=True, slots=True)
class Release:
    """A jax release to generate for: `version` as ints, `text` as written."""

    version: Version
    text: str

    def get(self, feature: str) -> object:
        """The feature's value for this release (None: the release lacks it)."""
        value = None
        for first, step in STEPS[feature]:
            if first > self.version:
                break
            value = step
        return value

    def needs(self) -> dict[str, object]:
        """Every feature's value for this release: what templates read."""
        return {feature: self.get(feature) for feature in STEPS}

    def require(self, feature: str, what: str) -> object:
        """The feature's value; UnsupportedRelease, naming the release that has
        it, if this one lacks it."""
        value = self.get(feature)
        if value is None:
            raise UnsupportedRelease(f"{what} {_where(feature, self.version)}; the "
                                     f"target is jax {self.text}")
        return value


def first_release(feature: str, after: Version = OLDEST) -> str | None:
    """The first release at or after `after` (as text) that has `feature`."""
    for first, value in STEPS[feature]:
        if value is not None and first >= after:
            return _text(first)
    return None


def _where(feature: str, version: Version) -> str:
    """'needs jax X or newer', or, for a feature a later release dropped,
    'needs a jax older than X'."""
    first = first_release(feature, after=version)
    if first is not None:
        return f"needs jax {first} or newer"
    steps = STEPS[feature]
    if any(value is not None for _, value in steps):
        dropped = [first for first, value in steps if value is None and first <= version]
        return f"needs a jax older than {_text(dropped[-1])}"
    return "is not available in any supported jax release"


def _text(version: Version) -> str:
    return ".".join(map(str, version))


def parse(text: str) -> Version:
    """'0.12.0.1' -> (0, 12, 0, 1); '0.11.1.dev20260101' -> (0, 11, 1)."""
    match = re.match(r"\d+(?:\.\d+)*", text.strip())
    if not match:
        raise TargetError(f"cannot read a jax version from {text!r}")
    return tuple(int(part) for part in match.group().split("."))


def release(text: str) -> Release:
    """The Release for a version string; refuses releases older than OLDEST."""
    version = parse(text)
    if version < OLDEST:
        raise UnsupportedRelease(f"jax {text} is older than the oldest supported "
                                 f"release, {_text(OLDEST)}; upgrade jax")
    return Release(version, text.strip())


def installed() -> Release:
    """The installed jax's release, from its distribution metadata; for a jax importable
    without any (a source tree on PYTHONPATH), from its `jax/version.py`."""
    from importlib import metadata, util

    try:
        return release(metadata.version("jax"))
    except metadata.PackageNotFoundError:
        spec = util.find_spec("jax")
        if spec is not None and spec.submodule_search_locations:
            return of_checkout(os.path.dirname(next(iter(spec.submodule_search_locations))))
        raise TargetError("jax is not installed; install it, or generate in tree "
                          "with --in-tree --root CHECKOUT") from None


def of_checkout(root: str) -> Release:
    """The release a JAX checkout at `root` builds, from `jax/version.py`'s
    `_version = "..."`, read without importing it."""
    path = os.path.join(root, "jax", "version.py")
    if not os.path.isfile(path):
        raise TargetError(f"{os.path.abspath(root)} is not a JAX checkout (it has no "
                          f"jax/version.py); give one with --in-tree --root CHECKOUT")
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, UnicodeDecodeError) as error:
        raise TargetError(f"cannot read the jax version from {path}: {error}") from None
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and getattr(node.targets[0], "id", None) == "_version"
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            return release(node.value.value)
    raise TargetError(f"{path} assigns no `_version = \"...\"`; is {root} a JAX checkout?")


def target(checkout: str | None = None) -> Release:
    """The release to generate for: the checkout's if given, else the installed one."""
    return of_checkout(checkout) if checkout is not None else installed()

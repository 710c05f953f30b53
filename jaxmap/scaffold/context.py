"""Spec -> the variables the templates fill in (names, signatures, placeholder math)."""

from __future__ import annotations

from jaxmap.scaffold import placeholder
from jaxmap.scaffold.spec import PrimitiveSpec

# Values the generated tests pass for each parameter type.
TEST_VALUES = {"float": "1.5", "int": "3", "bool": "True", "str": "'default'"}


def context(spec: PrimitiveSpec, *, in_tree: bool = False) -> dict:
    """Everything a template needs for `spec`; `in_tree` picks JAX's internal idioms."""
    xs = list(spec.operands)
    names = [p for p, _ in spec.params]
    ns = "lax" if in_tree else "jnp"
    hijax = spec.style == "hijax"
    prefix = "self." if hijax else ""
    partials = placeholder.partials(spec, ns, prefix)
    grads = ["g0", "g1"] if spec.multiple_results else ["g"]
    return {
        "spec": spec,
        "name": spec.name,
        "var": f"{spec.name}_p",
        "cls": spec.class_name,
        "operands": xs,
        "sig": ", ".join(xs),
        "kw_sig": ", *, " + ", ".join(names) if names else "",
        "kwargs": "".join(f", {p}={p}" for p in names),
        "params": list(spec.params),
        "test_params": ", ".join(f"{p}={TEST_VALUES[t]}" for p, t in spec.params),
        "platforms": repr(tuple(spec.platforms)),
        "in_tree": in_tree,
        "ns": ns,
        "shaped_array": "core.ShapedArray" if in_tree else "jax.core.ShapedArray",
        "reference_role": _reference_role(spec, in_tree),
        "outputs": placeholder.outputs(spec, ns, prefix),
        "reference": placeholder.outputs(spec, "np"),
        "tangents": [f"t{x}" for x in xs],
        "tangent_out": [placeholder.linear_combination(row, [f"t{x}" for x in xs])
                        for row in partials],
        "grads": grads,
        "cotangents": [placeholder.linear_combination([row[i] for row in partials], grads)
                       for i in range(len(xs))],
        "transposed": [placeholder.applied(placeholder.coefficient(spec, i, prefix), "ct")
                       for i in range(len(xs))] if spec.linear else [],
        "hlo": placeholder.hlo_statements(spec) if spec.lowering == "hlo" else [],
        "results": ["out0", "out1"] if spec.multiple_results else ["out"],
        "jaxpr_pattern": (rf"call_hi_primitive\[_prim={spec.class_name}\[" if hijax
                          else rf"= {spec.name}[\[ ]"),
    }


def _reference_role(spec: PrimitiveSpec, in_tree: bool) -> str | None:
    """What `_<name>_reference` is used for; None where nothing uses it."""
    roles = []
    if not in_tree:
        roles.append("the eager impl")
    if spec.lowering == "lower_fun":
        roles.append("the lowering (via mlir.lower_fun)")
    return " and ".join(roles) or None

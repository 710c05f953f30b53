"""Spec + target release -> the variables the templates fill in.

What differs between jax releases comes from `jaxmap.versions` (the template sees
it as `jax`); names, signatures and placeholder math come from the spec.
"""

from __future__ import annotations

import datetime
import re

from jaxmap.knowledge.versions import Release
from jaxmap.scaffold import placeholder
from jaxmap.scaffold.spec import PrimitiveSpec

# Values the generated tests pass for each parameter type.
TEST_VALUES = {"float": "1.5", "int": "3", "bool": "True", "str": "'default'"}


def feature_text(value: object) -> str:
    """A release feature's value read where it is always text (a module, a class, a
    pattern): versions.STEPS holds values of any type."""
    assert isinstance(value, str), value
    return value


def context(spec: PrimitiveSpec, release: Release, *, in_tree: bool = False,
            ns: str | None = None, lax_helper: str | None = None) -> dict:
    """Everything a template needs for `spec` on `release`; `in_tree` picks JAX's
    internal idioms, `ns` the qualifier of lax's math functions (default `lax.`
    in tree, `jnp.` out of tree), `lax_helper` the lax.py factory (standard_unop,
    standard_naryop) that builds the primitive, where the target module has it."""
    xs = list(spec.operands)
    names = [p for p, _ in spec.params]
    ns = ns if ns is not None else "lax." if in_tree else "jnp."
    hijax = spec.style == "hijax"
    prefix = "self." if hijax else ""
    partials = placeholder.partials(spec, ns, prefix)
    grads = ["g0", "g1"] if spec.multiple_results else ["g"]
    needs = release.needs()
    return {
        "spec": spec,
        "jax": needs,
        "release": release.text,
        "year": datetime.date.today().year,
        "name": spec.name,
        "var": f"{spec.name}_p",
        "cls": spec.class_name,
        "test_class": spec.class_name + "Test",
        "operands": xs,
        "sig": ", ".join(xs),
        "kw_sig": ", *, " + ", ".join(names) if names else "",
        "kwargs": "".join(f", {p}={p}" for p in names),
        "params": list(spec.params),
        "test_params": ", ".join(f"'{p}': {TEST_VALUES[t]}" for p, t in spec.params),
        "params_dict": ", ".join(f"'{p}': {p}" for p in names),
        "platforms": list(spec.platforms),
        "platforms_repr": repr(tuple(spec.platforms)),
        "in_tree": in_tree,
        "lax_helper": lax_helper,
        "ns": ns.rstrip(".") or "lax",
        "reference_role": _reference_role(spec, in_tree),
        "outputs": placeholder.outputs(spec, ns, prefix),
        "reference": placeholder.outputs(spec, "np."),
        "tangents": [f"t{x}" for x in xs],
        "tangent_out": [placeholder.linear_combination(row, [f"t{x}" for x in xs])
                        for row in partials],
        "jvp_rules": [(x, placeholder.applied(p, "g")) for x, p in zip(xs, partials[0])],
        "jvp_rule_names": [f"_{spec.name}_jvp_{x}" for x in xs],
        "vectorized": spec.arity == 1 and not spec.multiple_results,
        "cotangents": [placeholder.linear_combination([row[i] for row in partials], grads)
                       for i in range(len(xs))],
        "transposed": [placeholder.applied(placeholder.coefficient(spec, i, prefix), "ct")
                       for i in range(len(xs))] if spec.linear else [],
        "hlo": placeholder.hlo_statements(spec) if spec.lowering == "hlo" else [],
        "results": ["out0", "out1"] if spec.multiple_results else ["out"],
        "shard_map": ("jax.shard_map" if needs["shard_map_module"] == "jax"
                      else "shard_map"),
        "shard_map_args": ["grad", "mesh=mesh", "in_specs=specs", "out_specs=specs"]
        + ([needs["shard_map_grad_argument"]] if needs["shard_map_grad_argument"] else []),
        "replication_registrars": _replication_registrars(needs, in_tree),
        "jaxpr_pattern": (feature_text(needs["hijax_jaxpr_eqn"]).format(re.escape(spec.class_name))
                          if hijax else rf"= {spec.name}[\[ ]"),
        "export": "_export()" if needs["export_undeclared_import"] else "export",
    }


def _replication_registrars(needs: dict, in_tree: bool) -> list[str]:
    """The calls (`shard_map.register_...`) that give the primitive the replication
    rules shard_map checks; none in tree, where JAX's shard_map.py registers them."""
    replication = needs["shard_map_replication"]
    if in_tree or replication is None:
        return []
    module, registrars = replication
    return [f"{module.rsplit('.', 1)[1]}.{name}" for name in registrars]


def _reference_role(spec: PrimitiveSpec, in_tree: bool) -> str | None:
    """What `_<name>_reference` is used for; None where nothing uses it."""
    roles = []
    if not in_tree:
        roles.append("the eager impl")
    if spec.lowering == "lower_fun":
        roles.append("the lowering (via mlir.lower_fun)")
    return " and ".join(roles) or None

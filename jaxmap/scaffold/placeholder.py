"""The placeholder math a generated primitive starts with, as Python source text.

Elementwise over operands of one shape; numeric parameters scale the result.
  non-linear: out = F * (sin(x0) + x0 * x1 * ...), second result F * (cos(x0) + x0 + x1 + ...)
  linear:     out = F * (2 * x0 + 3 * x1 + ...), so the transpose is exact
where F is the product of the int/float parameters. `ns` qualifies sin/cos: 'np.'
(the NumPy reference), 'jnp.' (out of tree), 'lax.' (in tree) or '' (inside
jax/_src/lax/lax.py, which defines them).
"""

from __future__ import annotations

from jaxmap.scaffold.spec import PrimitiveSpec


def factor(spec: PrimitiveSpec, prefix: str = "") -> str:
    """The product of the numeric parameters (each as `prefix + name`), or ''."""
    return " * ".join(prefix + name for name, kind in spec.params
                      if kind in ("int", "float"))


def outputs(spec: PrimitiveSpec, ns: str, prefix: str = "") -> list[str]:
    """One expression per result."""
    xs, f = spec.operands, factor(spec, prefix)
    if spec.linear:
        return [_scaled(f, _sum(f"{i + 2} * {x}" for i, x in enumerate(xs)))]
    first = _scaled(f, _sum([f"{ns}sin({xs[0]})", _mul(*xs)]))
    if not spec.multiple_results:
        return [first]
    return [first, _scaled(f, _sum([f"{ns}cos({xs[0]})", *xs]))]


def partials(spec: PrimitiveSpec, ns: str, prefix: str = "") -> list[list[str]]:
    """partials[k][i]: the derivative of result k with respect to operand i."""
    xs, f = spec.operands, factor(spec, prefix)
    if spec.linear:
        return [[coefficient(spec, i, prefix) for i in range(len(xs))]]
    first = [_scaled(f, _sum(([f"{ns}cos({x})"] if i == 0 else [])
                             + [_mul(*(y for y in xs if y != x))]))
             for i, x in enumerate(xs)]
    if not spec.multiple_results:
        return [first]
    second = [_scaled(f, f"1 - {ns}sin({xs[0]})" if i == 0 else "1")
              for i in range(len(xs))]
    return [first, second]


def coefficient(spec: PrimitiveSpec, i: int, prefix: str = "") -> str:
    """Linear primitives: the constant operand `i` is multiplied by."""
    return _mul(str(i + 2), factor(spec, prefix))


def applied(partial: str, operand: str) -> str:
    """`partial * operand`, parenthesised where needed; `operand` alone for 1."""
    if partial == "1":
        return operand
    if " + " in partial or " - " in partial:
        partial = f"({partial})"
    return f"{partial} * {operand}"


def linear_combination(partials_row: list[str], operands: list[str]) -> str:
    """sum_i partials_row[i] * operands[i]."""
    return _sum(applied(p, o) for p, o in zip(partials_row, operands))


def hlo_statements(spec: PrimitiveSpec) -> list[str]:
    """StableHLO builder statements that leave the results in `out` (or `out0`, `out1`)."""
    xs, f = spec.operands, factor(spec)
    if spec.linear:
        lines = [f"out = hlo.multiply({xs[0]}, _splat(ctx, {coefficient(spec, 0)}))"]
        for i, x in enumerate(xs[1:], 1):
            lines += [f"term = hlo.multiply({x}, _splat(ctx, {coefficient(spec, i)}))",
                      "out = hlo.add(out, term)"]
        return lines
    names = ["out0", "out1"] if spec.multiple_results else ["out"]
    lines = [f"prod = {xs[0]}"] + [f"prod = hlo.multiply(prod, {x})" for x in xs[1:]]
    lines.append(f"{names[0]} = hlo.add(hlo.sine({xs[0]}), prod)")
    if spec.multiple_results:
        lines.append(f"out1 = hlo.cosine({xs[0]})")
        lines += [f"out1 = hlo.add(out1, {x})" for x in xs]
    if f:
        lines += [f"{n} = hlo.multiply({n}, _splat(ctx, {f}))" for n in names]
    return lines


def _sum(terms) -> str:
    return " + ".join(t for t in terms if t != "0")


def _mul(*factors: str) -> str:
    kept = [f for f in factors if f and f != "1"]
    return " * ".join(kept) if kept else "1"


def _scaled(f: str, expr: str) -> str:
    if not f:
        return expr
    if expr == "1":
        return f
    return f"{f} * ({expr})" if (" + " in expr or " - " in expr) else f"{f} * {expr}"

"""Working examples of a rule a message says is missing: the primitives nearest the one
the message names that have a rule of that kind (for the platform named).

Nearest, in order: one of the same module, then of the same module family (the
package the module is in), then of JAX's plain primitives (knowledge/registrars.py
EXAMPLE_MODULES); within those, the one whose other rules are registered the same
way (by the same registrars) as the named primitive's, then one registered as a
linear primitive (`ad.deflinear`) only where the named one is, then one whose rule is
registered directly with a public registrar (what the user can copy; not through a
helper such as `standard_unop`, not with a private `ad.defjvp_zero`), then one a
public function of the same name binds (`jax.lax.sin`: well known), then one batched
as a unary elementwise one is (the simplest), then the shortest rule (its statement
and its functions, in lines), the fewest rule kinds, the name. Alphabetical order
alone shows `abs`, `acos`, `acosh`, whatever the message is about.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from jaxmap.knowledge import registrars as R
from jaxmap.models import RuleKind

if TYPE_CHECKING:
    from jaxmap.models import Primitive, Rule
    from jaxmap.store.read import Index

SHOWN = 3


class Sibling(NamedTuple):
    name: str
    file: str  # where its rule of the missing kind is registered
    line: int
    function: str | None


def siblings(index: Index, prim: Primitive | None, kind: RuleKind,
             platforms: tuple[str, ...], style: str, public: frozenset[str]
             ) -> tuple[Sibling, ...]:
    """The SHOWN nearest primitives with a rule of `kind` for `prim` (None: outside the
    index); `public`: the registrars of `kind` the jax exports (`ad.defjvp`)."""
    ways = _ways(prim, kind) if prim is not None else frozenset()
    known = index.bound_by_namesakes()
    candidates = []
    for other in index.primitives():
        tier = _tier(prim, other, style)
        if tier is None:
            continue
        rules = [r for r in other.rules if r.kind == kind and _serves(r, platforms)]
        if rules:
            rule = min(rules, key=lambda r: not _copyable(r, public))
            candidates.append((tier, other, rule))
    ends = index.definitions_at({f.loc.file for _t, _o, r in candidates for f in r.functions})

    def nearness(candidate) -> tuple:
        tier, other, rule = candidate
        return (tier, -_similarity(ways, _ways(other, kind)),
                _linear(rule) != (prim is not None and any(map(_linear, prim.rules))),
                not _copyable(rule, public),
                (other.module, other.name) not in known, not _elementwise(other),
                _lines(rule, ends), len({r.kind for r in other.rules}), other.name)

    ranked = sorted(candidates, key=nearness)
    return tuple(Sibling(o.name, r.loc.file, r.loc.line, r.function.name if r.function
                         else None) for _t, o, r in ranked[:SHOWN])


def _tier(prim: Primitive | None, other: Primitive, style: str) -> int | None:
    """0: the same module; 1: the same package; 2, 3: JAX's plain primitives (the
    first example module, then the rest); None: not an example for `prim`."""
    if style == "hijax":
        return 0 if other.style == "hijax" and (prim is None or other.name != prim.name) \
            else None
    if prim is not None and other.name == prim.name:
        return None
    if prim is not None and other.module == prim.module:
        return 0
    if prim is not None and _package(other.module) == _package(prim.module):
        return 1
    first, *rest = R.EXAMPLE_MODULES
    if other.module == first:
        return 2
    return 3 if any(other.module.startswith(m) for m in rest) else None


def _package(module: str) -> str:
    return module.rpartition(".")[0]


def _serves(rule: Rule, platforms: tuple[str, ...]) -> bool:
    """Whether the rule serves one of `platforms` (any rule, if none is named)."""
    served = rule.platforms or ((rule.platform,) if rule.platform else ())
    return not platforms or not served or bool(set(platforms) & set(served))


def _ways(prim: Primitive, kind: RuleKind) -> frozenset[tuple[str, str]]:
    """(kind, how registered) of its rules of kinds other than `kind`."""
    return frozenset((r.kind.value, r.via) for r in prim.rules if r.kind != kind)


def _similarity(mine: frozenset, theirs: frozenset) -> float:
    return len(mine & theirs) / len(mine | theirs) if mine else 0.0


def _copyable(rule: Rule, public: frozenset[str]) -> bool:
    """Registered at its statement (not inside a helper) with a public registrar."""
    return " > " not in rule.via and any(
        rule.via == name or rule.via.startswith(name + "[") for name in public)


def _linear(rule: Rule) -> bool:
    """Registered as a linear primitive's (`ad.deflinear`: its JVP and transpose from
    one rule): a model only for a primitive that is linear too."""
    return rule.via.rpartition(" > ")[2].rpartition(".")[2] in ("deflinear", "deflinear2")


def _lines(rule: Rule, ends: dict) -> int:
    """The lines of its registration statement and of its rule functions."""
    total = (rule.loc.end_line or rule.loc.line) - rule.loc.line + 1
    for function in rule.functions:
        found = ends.get((function.loc.file, function.loc.line))
        total += found[1] - function.loc.line + 1 if found and found[1] else 1
    return total


def _elementwise(prim: Primitive) -> bool:
    """Batched as a unary elementwise primitive is."""
    return any(r.kind == RuleKind.BATCHING and r.via.rpartition(" > ")[2] in
               R.ELEMENTWISE_BATCHING for r in prim.rules)

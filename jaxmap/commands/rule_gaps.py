"""What an editor flags, at information level, in one file: a primitive that lacks a
rule kind most of its siblings (the primitives its module defines) have; one whose
lowerings skip a platform its siblings lower on; and a lowering registered for a
platform JAX does not know. A rule the call that makes the primitive switches off
(`supports_batching=False`) is no gap: it is missing by design.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, NamedTuple

from jaxmap.knowledge.traces import rule_kinds
from jaxmap.models import Primitive, RuleKind

if TYPE_CHECKING:
    from jaxmap.store.read import Index

MISSING_RULE, MISSING_PLATFORM, UNKNOWN_PLATFORM = "missing-rule", "missing-platform", \
    "unknown-platform"
_MIN_SIBLINGS = 3  # siblings that must have a kind before its absence is worth a word
_SHARE = 2 / 3  # and the share of all siblings they must be


class Gap(NamedTuple):
    """One finding, at a 1-based line: what is missing (a rule kind, a platform) or
    unknown (a platform), for which primitive, and how many of how many siblings have it."""

    line: int
    code: str
    primitive: str
    what: str
    having: int = 0
    siblings: int = 0


def gaps(index: Index, file: str) -> list[Gap]:
    """Every finding in `file`, in line order."""
    prims = index.primitives_in_file(file)
    read = _Read(prims)  # each primitive's kinds and platforms, read once: lax.py has 150
    found = [gap for prim in prims
             for gap in _missing(prim, [p for p in prims if p is not prim], read)]
    found += _unknown_platforms(index, file)
    return sorted(found, key=lambda g: (g.line, g.code, g.what))


def missing(prim: Primitive, siblings: list[Primitive]) -> list[Gap]:
    """The rule kinds and platforms most of `siblings` of its style have and `prim`
    lacks: a hijax primitive's rules are its class's methods, not registrations, so it
    is held to other hijax primitives only, and they to it not at all."""
    return _missing(prim, siblings, _Read([prim, *siblings]))


class _Read:
    """The kinds and platforms of each of some primitives, by identity."""

    def __init__(self, prims: list[Primitive]):
        self.kinds = {id(p): _kinds(p) for p in prims}
        self.platforms = {id(p): _platforms(p) for p in prims}


def _missing(prim: Primitive, siblings: list[Primitive], read: _Read) -> list[Gap]:
    siblings = [s for s in siblings if s.style == prim.style]
    if len(siblings) < _MIN_SIBLINGS:
        return []
    label = prim.name or prim.variable
    kinds = read.kinds[id(prim)]
    off = {o.kind.value for o in prim.switched_off  # by design, where it is made
           if o.kind != RuleKind.LOWERING or not o.platform}
    having = Counter(kind for s in siblings for kind in read.kinds[id(s)])
    found = [Gap(prim.loc.line, MISSING_RULE, label, kind.value, having[kind.value],
                 len(siblings)) for kind in RuleKind
             if kind.value not in kinds | off and _common(having[kind.value], len(siblings))]
    if RuleKind.LOWERING.value in kinds and not _has_default_lowering(prim):
        lowering = Counter(p for s in siblings for p in read.platforms[id(s)])
        for platform in sorted(set(lowering) - read.platforms[id(prim)] - _off_platforms(prim)):
            if _common(lowering[platform], len(siblings)):
                found.append(Gap(prim.loc.line, MISSING_PLATFORM, label, platform,
                                 lowering[platform], len(siblings)))
    return found


def _off_platforms(prim: Primitive) -> set[str]:
    """The platforms whose lowering the call that makes `prim` switches off."""
    return {p for o in prim.switched_off if o.kind == RuleKind.LOWERING and o.platform
            for p in (o.platforms or (o.platform,))}


def _kinds(prim: Primitive) -> set[str]:
    """The kinds it has, a Trace method's class's included (knowledge/traces.py)."""
    return {kind for r in prim.rules for kind in rule_kinds(r)}


def _common(having: int, siblings: int) -> bool:
    return having >= _MIN_SIBLINGS and having >= _SHARE * siblings


def _has_default_lowering(prim: Primitive) -> bool:
    return any(r.kind == RuleKind.LOWERING and r.platform is None for r in prim.rules)


def _platforms(prim: Primitive) -> set[str]:
    """The platforms its platform-specific lowerings serve (`gpu` read as cuda, rocm)."""
    return {p for r in prim.rules if r.kind == RuleKind.LOWERING and r.platform
            for p in (r.platforms or (r.platform,))}


def _unknown_platforms(index: Index, file: str) -> list[Gap]:
    from jaxmap.knowledge.registrars import PALLAS_LOWERING_TABLES, XLA_PLATFORMS

    known = XLA_PLATFORMS | set(PALLAS_LOWERING_TABLES.values())
    return [Gap(rule.loc.line, UNKNOWN_PLATFORM, prim, rule.platform)
            for prim, rule in index.rules_registered_in(file)
            if rule.kind == RuleKind.LOWERING and rule.platform
            and rule.platform.lower() not in known]

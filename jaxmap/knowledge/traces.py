"""The rule kind a Trace class's method stands for, for a call-like primitive it handles
(`JVPTrace.process_custom_jvp_call` is custom_jvp_call's JVP; so is `_shard_map_jvp`,
assigned as `ad.JVPTrace.process_shard_map`): the one meaning of "has a rule of kind
K" that every filter and count goes by (`primitives --has/--missing`, `coverage`'s
columns, `locate --kind`, the sibling gaps, the map's gaps). Apart from registrars.py,
whose imports the `locate` path does not pay for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jaxmap.models import RuleKind as K

if TYPE_CHECKING:
    from collections.abc import Iterable

    from jaxmap.models import Rule

TRACE_CLASS_KINDS: dict[str, K] = {
    "EvalTrace": K.IMPL, "JVPTrace": K.JVP, "LinearizeTrace": K.LINEARIZATION,
    "BatchTrace": K.BATCHING, "SPMDBatchTrace": K.BATCHING, "JaxprTrace": K.PARTIAL_EVAL,
    "DynamicJaxprTrace": K.STAGING, "JetTrace": K.JET}


def trace_kind(kind: str, via: str | None) -> K | None:
    """The kind a rule of `kind` registered `via` stands for besides its own: for a
    trace rule, its Trace class's, by the class its `via` names: the method's
    (`JVPTrace.process_call`) or the assignment's (`ad.JVPTrace.process_shard_map =`);
    None for any other rule."""
    owner = trace_class(kind, via)
    return TRACE_CLASS_KINDS.get(owner) if owner else None


def trace_class(kind: str, via: str | None) -> str | None:
    """The Trace class whose method a trace rule is, by its `via`: `JVPTrace` of
    `JVPTrace.process_call` and of `ad.JVPTrace.process_shard_map =`; None for any
    other rule."""
    if kind != K.TRACE or not via:
        return None
    parts = via.removesuffix(" =").split(".")
    return parts[-2] if len(parts) > 1 else None


def rule_kinds(rule: Rule) -> tuple[str, ...]:
    """The kinds `rule` counts as: its own, and for a Trace method the kind its class
    stands for (`JVPTrace.process_shard_map` is a trace rule and a jvp rule)."""
    if (stands := trace_kind(rule.kind, rule.via)) is not None:
        return rule.kind.value, stands.value
    return (rule.kind.value,)


def by_trace(rules: Iterable[Rule]) -> dict[str, int]:
    """Of each kind some of `rules` count as through their Trace class, how many do
    (`{"jvp": 1}` for closed_call's `JVPTrace.process_call`)."""
    counts: dict[str, int] = {}
    for rule in rules:
        if (stands := trace_kind(rule.kind, rule.via)) is not None:
            counts[stands.value] = counts.get(stands.value, 0) + 1
    return counts


def trace_only(rules: Iterable[Rule]) -> set[str]:
    """The kinds `rules` have through Trace methods alone, none registered as such
    (closed_call's jvp, not its impl, which `def_impl` registers too)."""
    rules = list(rules)
    return set(by_trace(rules)) - {rule.kind.value for rule in rules}

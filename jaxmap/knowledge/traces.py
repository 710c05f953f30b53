"""The rule kind a Trace class's method stands for, for a call-like primitive it handles
(`JVPTrace.process_custom_jvp_call` is custom_jvp_call's JVP; so is `_shard_map_jvp`,
assigned as `ad.JVPTrace.process_shard_map`): `primitives --missing jvp` does not list
a primitive that has one. Apart from registrars.py, whose imports the `locate` path
does not pay for."""

from __future__ import annotations

from jaxmap.models import RuleKind as K

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

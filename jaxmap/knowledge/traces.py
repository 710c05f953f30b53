"""The rule kind a Trace class's method stands for, for a call-like primitive it handles
(`JVPTrace.process_custom_jvp_call` is custom_jvp_call's JVP): `primitives --missing
jvp` does not list a primitive that has one. Apart from registrars.py, whose imports
the `locate` path does not pay for."""

from __future__ import annotations

from jaxmap.models import RuleKind as K

TRACE_CLASS_KINDS: dict[str, K] = {
    "EvalTrace": K.IMPL, "JVPTrace": K.JVP, "LinearizeTrace": K.LINEARIZATION,
    "BatchTrace": K.BATCHING, "JaxprTrace": K.PARTIAL_EVAL, "JetTrace": K.JET}

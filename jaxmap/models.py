"""The index's records as the read side answers with them (kinds, locations,
primitives, rules, definitions); what the build side writes is store/records.py's.

Immutable NamedTuples rather than dataclasses: they are on the `jaxmap locate` start-up
path, where creating a dataclass costs several times more.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

# A helper's parameter that receives a rule ends so; its name is the rule's kind.
RECEIVED_RULE_SUFFIX = "_rule"
RECEIVED = "RECEIVED"  # the enum name shared by every received-rule kind


class RuleKind(str, enum.Enum):
    """What a registered rule does for its primitive."""

    IMPL = "impl"
    ABSTRACT_EVAL = "abstract_eval"
    JVP = "jvp"
    TRANSPOSE = "transpose"
    LINEARIZATION = "linearization"
    BATCHING = "batching"
    LOWERING = "lowering"
    PARTIAL_EVAL = "partial_eval"
    DCE = "dce"
    FORWARDING = "forwarding"
    CONST_FOLD = "const_fold"
    STAGING = "staging"
    TYPECHECK = "typecheck"
    PRETTY_PRINT = "pretty_print"
    DISCHARGE = "discharge"
    REMAT = "remat"
    PARAM_UPDATE = "param_update"
    CHECKIFY = "checkify"
    SHARD_MAP_EAGER = "shard_map_eager"
    JET = "jet"
    SPARSE = "sparse"
    KEY_REUSE = "key_reuse"
    ROOFLINE = "roofline"
    PALLAS_COST = "pallas_cost"
    PALLAS_INTERPRET = "pallas_interpret"
    PALLAS_PHYSICALIZE = "pallas_physicalize"
    PALLAS_FUSIBLE = "pallas_fusible"
    PALLAS_BLOCK_SPEC_PULL = "pallas_block_spec_pull"
    PALLAS_BLOCK_SPEC_PUSH = "pallas_block_spec_push"
    PALLAS_BLOCK_SPEC_USAGE = "pallas_block_spec_usage"
    PALLAS_BLOCK_SPEC_EVAL = "pallas_block_spec_eval"
    PALLAS_RESOURCES = "pallas_resources"
    TRACE = "trace"  # a Trace method that handles a call-like primitive

    def __str__(self) -> str:
        return self.value

    @property
    def received(self) -> bool:
        """A rule a helper receives (see `_missing_`), not one of the kinds above."""
        return self.name == RECEIVED

    @classmethod
    def _missing_(cls, value):
        """A rule a helper receives for a parameter named `..._rule`
        (`standard_primitive(shape_rule, dtype_rule, ..., sharding_rule=...)`) is a
        kind of its own, named as the tree's own signature names it: made on first use."""
        if not isinstance(value, str) or not value.endswith(RECEIVED_RULE_SUFFIX) \
                or not value.isidentifier():
            return None
        member = str.__new__(cls, value)
        member._name_, member._value_ = RECEIVED, value
        return cls._value2member_map_.setdefault(value, member)


class DefKind(str, enum.Enum):
    """What a named definition is."""

    FUNCTION = "function"
    CLASS = "class"
    VARIABLE = "variable"
    MODULE = "module"

    def __str__(self) -> str:
        return self.value


class SourceLoc(NamedTuple):
    """A place in the indexed tree: root-relative POSIX path, 1-based lines."""

    file: str
    line: int
    end_line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class FunctionRef(NamedTuple):
    """A named function that implements a rule."""

    name: str
    loc: SourceLoc


class Rule(NamedTuple):
    """One rule registered for a primitive, at one registration statement."""

    kind: RuleKind
    loc: SourceLoc
    via: str
    platform: str | None = None  # as registered (`gpu`)
    function: FunctionRef | None = None
    platforms: tuple[str, ...] = ()  # what `platform` stands for (cuda, rocm); () if none
    functions: tuple[FunctionRef, ...] = ()  # every rule function, `function` first
    condition: str | None = None  # an `if` around the registration nothing decides
    # The module-level name the rule was registered through, where it holds a partial
    # of `function` (`_dot_general_batch_rule = partial(_dot_batch_rule, ...)`).
    written: FunctionRef | None = None
    # The keyword arguments of the `partial` the rule is made of, short
    # (`use_rolled_loops=False`): what tells apart two rules of one function.
    keywords: str | None = None
    # The line of a later registration of this rule in its file that certainly replaces
    # it (only the last one run takes effect); None where none is known to.
    overridden_by: int | None = None


class SwitchedOff(NamedTuple):
    """A rule switched off where the primitive is made: a helper that makes primitives
    registers it only under an `if` on its parameters, which the call that made this
    one decides the other way (`linalg_primitive(..., supports_batching=False)`). Not
    a rule: nothing is registered."""

    kind: RuleKind
    loc: SourceLoc  # the call that switches it off
    via: str
    condition: str  # how the `if` goes: "`supports_batching` is False"
    guard: SourceLoc  # the helper's `if`
    platform: str | None = None  # as the helper would register it (`gpu`)
    platforms: tuple[str, ...] = ()  # what `platform` stands for


class Primitive(NamedTuple):
    """A primitive: its name string, the variable (or class) that holds it, its rules,
    and (from `locate`) the test functions that exercise it."""

    name: str
    variable: str
    module: str
    loc: SourceLoc
    style: str = "classic"
    rules: tuple[Rule, ...] = ()
    tests: tuple[FunctionRef, ...] = ()
    aliases: tuple[str, ...] = ()  # other module-level names it is assigned to
    switched_off: tuple[SwitchedOff, ...] = ()  # rules its making call switches off


class Definition(NamedTuple):
    """A function, class, variable or module defined in the indexed tree."""

    name: str
    qualname: str
    kind: DefKind
    loc: SourceLoc
    public_paths: tuple[str, ...] = ()
    summary: str | None = None
    alias_of: str | None = None  # a variable that only names a function: that function


# The status of a stored call row. THROUGH: a call whose callee only a parameter holds,
# handed in by some call site, or one of many a dispatch may call; the graph lists it,
# reachability (binds, tests, what a function reaches) does not follow it, which would
# follow every function any caller hands a higher-order function. HANDED: a function
# handed on (`jit(f)`, `partial(f, x)`), an edge reachability follows, but no call.
RESOLVED, THROUGH, HANDED = "resolved", "through", "handed"
EXTERNAL, UNRESOLVED = "external", "unresolved"
CALL_STATUSES = (RESOLVED, THROUGH, HANDED, EXTERNAL, UNRESOLVED)
# In a call row's guard, a parameter required to equal a word: `mode==edge`; or one of
# several, `mode==mean/median`; or none of them, `mode==!mean/median` (flow/guardtext.py
# reads it; the trace-time walk tests it).
GUARD_EQUALS, GUARD_OR, GUARD_NOT = "==", "/", "!"
# A diagnostic's words for a file Python's parser refuses (`path:line: does not parse
# (...)`): its facts are read as far as tree-sitter parses it, and `locate` says so.
UNPARSED = "does not parse"

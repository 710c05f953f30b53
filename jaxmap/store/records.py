"""What the build side hands the store to write: a Resolution of typed records. The
resolver fills the records in as it finds things (a primitive's variable, its rules,
their platforms); a snapshot's documents are read back into them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


class Place(NamedTuple):
    """A named function, or a module-level name, at its definition."""

    name: str
    file: str
    line: int


@dataclass(slots=True)
class RuleRecord:
    """One rule at one registration statement."""

    kind: str
    file: str
    line: int
    end_line: int | None
    via: str
    platform: str | None
    functions: list[Place]  # most rules have one; defbilinear's transpose has two
    condition: str | None = None  # an `if` around it that nothing decides
    written: Place | None = None  # the name it was registered through, a partial's
    platforms: list[str] = field(default_factory=list)  # what `platform` stands for
    keywords: str | None = None  # the keyword arguments of the partial it is made of
    # The line of the registration in its file that certainly runs after it and
    # replaces it (resolve/precedence.py); None where none does, or none is known to.
    overridden_by: int | None = None
    # (parameter, function) a partial hands its function, which may call it there
    # (`partial(cumred_reduce_window_impl, _reduce_window_sum)`); read by the call
    # graph, not stored with the rule.
    handed: list[tuple[str, Place]] = field(default_factory=list)

    @property
    def function(self) -> Place | None:
        return self.functions[0] if self.functions else None


@dataclass(slots=True)
class SwitchedOffRecord:
    """A registration a call's argument switches off: the rule a helper that makes
    primitives registers only under an `if` on its parameters, which this call's
    arguments decide the other way (`linalg_primitive(..., supports_batching=False)`).
    Not a rule: nothing is registered."""

    kind: str
    file: str  # the call
    line: int
    end_line: int | None
    via: str
    platform: str | None
    condition: str  # how the `if` goes: "`supports_batching` is False"
    guard_file: str  # the `if`, in the helper
    guard_line: int
    platforms: list[str] = field(default_factory=list)  # what `platform` stands for


@dataclass(slots=True)
class PrimitiveRecord:
    name: str | None
    variable: str | None
    module: str
    file: str
    line: int
    end_line: int | None
    style: str = "classic"
    rules: list[RuleRecord] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)  # other module-level names for it
    switched_off: list[SwitchedOffRecord] = field(default_factory=list)


@dataclass(slots=True)
class DefinitionRecord:
    name: str
    qualname: str
    kind: str
    module: str
    file: str
    line: int
    end_line: int | None
    summary: str | None
    public: list[str]  # the public paths it is exported under
    # a module's variable that only names a function or class (`swish = silu`): its
    # qualified name, under which the variable's public paths are exported (edges.py)
    alias_of: str | None = None


class Resolution(NamedTuple):
    """What the store writes: the resolver's output, or a snapshot's documents read
    back (which have no imports, binds, calls, tests or diagnostics)."""

    primitives: list[PrimitiveRecord]
    definitions: list[DefinitionRecord]
    imports: list[tuple[str, str]]  # (module, imported module in the tree)
    binds: list[tuple]  # (module, function, primitive index, line, caller id, via helper)
    tests: list[tuple[int, str, str, int]]  # (primitive index, test, file, line)
    diagnostics: list[str]
    jax_version: str | None
    platform_aliases: dict[str, list[str]]  # `gpu` -> the platforms it registers for
    # (caller id, callee id | None, text, status, line, guard, fills, fill_lines)
    calls: list[tuple]
    messages: list[tuple]  # (file, line, function, exception, pieces as JSON, returned)
    # (primitive index, rule kind, platform, rule function id, id of a function its
    # partial hands it that it calls): binding the primitive runs that one too.
    rule_calls: tuple = ()

"""Where evaluation happens, and what a function under summary does."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from jaxmap.indexing.facts import UNKNOWN


class Guard(NamedTuple):
    """An `if` on parameters around a registration under summary: its condition (a
    value, decided where the summary is applied), whether the registration is in its
    body (True) or its `else:`, the condition as written, and where the `if` is."""

    condition: tuple
    taken: bool
    text: str
    module: str
    line: int


@dataclass
class Summary:
    """What calling a function does: registrations on its parameters or on the
    primitive it creates, and what it returns."""

    # (target, kind, via, platform, rule, guards, conditions); guards: Guards on
    # parameters, decided where the summary is applied; conditions: the text of other
    # `if`s around the registration, which nothing decides.
    regs: list[tuple] = field(default_factory=list)
    # (target, kind, via, platform, guard): registrations the arguments of a call it
    # makes switch off (the Guard that goes the other way).
    offs: list[tuple] = field(default_factory=list)
    returns: tuple = UNKNOWN
    created: list[tuple] = field(default_factory=list)  # name of each NEW, by its k
    # A loop over a parameter, or a name assigned under an `if` on one: what it registers
    # is known only per call, so each call runs the body again with its arguments (a
    # specialised summary).
    per_call: bool = False


@dataclass
class Context:
    """Where evaluation happens: a module's top level, or a function under summary."""

    module: str
    scope: str
    locals: dict
    site: tuple = (0, 0)
    summary: Summary | None = None
    guards: list = field(default_factory=list)  # open `if`s on parameters, as Guards
    conditions: list = field(default_factory=list)  # other open `if`s, as text
    # In the body of a nested function being called: registrations keep the caller's
    # site, and what it returns is collected here.
    returned: list | None = None
    via: str = ""  # how the call that runs it reads (`@register_lowering > `)
    site_module: str = ""  # the module `site` is in, where that is not `module`
    loops: int = 0  # how many loops being unrolled hold the statement

    @property
    def site_in(self) -> str:
        """The module of the statement that registrations here are reported at."""
        return self.site_module or self.module

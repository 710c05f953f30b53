"""What resolution finds: primitives with their rules, and diagnostics."""

from __future__ import annotations

from jaxmap.indexing.resolve.names import Names
from jaxmap.store.records import Place, PrimitiveRecord, RuleRecord, SwitchedOffRecord


class Findings:
    """Primitives (with their rules) in the order they are found, and the diagnostics
    of things that could not be resolved."""

    def __init__(self, names: Names):
        self.names = names
        self.primitives: list[PrimitiveRecord] = []
        self.diagnostics: list[str] = []
        self._said: set[str] = set()
        self._rules: set[tuple] = set()

    def new_primitive(self, name: str | None, variable: str | None, module: str,
                      site: tuple[int, int], style: str = "classic") -> int:
        """Record a primitive constructed at `site` of `module`; its index."""
        line, end_line = site
        self.primitives.append(PrimitiveRecord(name, variable, module, self.names.path(module),
                                               line, end_line, style))
        return len(self.primitives) - 1

    def add_rule(self, pid: int, kind, module: str, site: tuple[int, int], via: str,
                 platform: str | None, functions: list[Place], condition: str | None = None,
                 written: Place | None = None,
                 handed: list[tuple[str, Place]] | None = None,
                 keywords: str | None = None) -> None:
        """A rule of primitive `pid`, registered at `site` of `module`, implemented by
        `functions` (most rules have one; defbilinear's transpose has two), under
        `condition` when an `if` the resolver cannot decide surrounds it; `written`: the
        module-level name it was registered through, where that name holds a partial;
        `handed`: (parameter, function) a partial hands the function; `keywords`: the
        keyword arguments of the partial it is made of, as text."""
        line, end_line = site
        key = (pid, str(kind), module, line, via, platform, tuple(
            (f.file, f.line) for f in functions), condition)
        if key in self._rules:  # one statement registering it twice (two Pallas kernel types)
            return
        self._rules.add(key)
        self.primitives[pid].rules.append(RuleRecord(
            str(kind), self.names.path(module), line, end_line, via, platform, functions,
            condition, written, handed=handed or [], keywords=keywords))

    def switched_off(self, pid: int, kind, module: str, site: tuple[int, int], via: str,
                     platform: str | None, condition: str, guard: tuple[str, int]) -> None:
        """A rule of primitive `pid` that the call at `site` of `module` switches off:
        `condition` says how the `if` at `guard` (module, line) goes; once each."""
        line, end_line = site
        guard_module, guard_line = guard
        record = SwitchedOffRecord(str(kind), self.names.path(module), line, end_line, via,
                                   platform, condition, self.names.path(guard_module),
                                   guard_line)
        offs = self.primitives[pid].switched_off
        if record not in offs:
            offs.append(record)

    def expand_platforms(self, aliases: dict[str, list[str]]) -> None:
        """Give each rule, and each registration switched off, `platforms`: the
        platforms its `platform` stands for (`gpu`: cuda and rocm, as the tree's own
        alias table says); none for a default rule."""
        for primitive in self.primitives:
            for rule in primitive.rules:
                platform = rule.platform
                rule.platforms = list(aliases.get(platform, [platform])) if platform else []
            for off in primitive.switched_off:
                off.platforms = list(aliases.get(off.platform, [off.platform])) \
                    if off.platform else []

    def kinds_of(self, pid: int) -> set[str]:
        return {rule.kind for rule in self.primitives[pid].rules}

    def name(self, pid: int, name: str) -> None:
        """A primitive's name, learnt after it was made (`super().__init__("tag")`)."""
        self.primitives[pid].name = name

    def name_variable(self, pid: int, variable: str) -> None:
        """A module-level name a primitive is assigned to: the first is its variable,
        the others its aliases (`call_p = closed_call_p = eval_jaxpr_p`)."""
        primitive = self.primitives[pid]
        if primitive.variable is None:
            primitive.variable = variable
        elif variable != primitive.variable and variable not in primitive.aliases:
            primitive.aliases.append(variable)

    def diagnose(self, module: str, line: int, message: str) -> None:
        """Say what could not be resolved, once per place and message."""
        diagnostic = f"{self.names.path(module)}:{line}: {message}"
        if diagnostic not in self._said:
            self._said.add(diagnostic)
            self.diagnostics.append(diagnostic)

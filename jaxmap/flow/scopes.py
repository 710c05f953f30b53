"""What a name holds where it is read, the value flow's part for names (flow.py): in
a function, its assignments, nested defs and parameters (what call sites hand them,
callsites.py, and their defaults and annotations); else what the module's top level
assigns, what its names resolve to (imports, definitions), and what the module an
import names makes the name there (through `from m import *` too); `self` and `cls`
of a method, the instances and classes of its class's family. `shadows` tells a local
from the module's name of the same spelling.
"""

from __future__ import annotations

from jaxmap.flow.containers import LITERALS
from jaxmap.flow.engine import Engine
from jaxmap.flow.flowfacts import DEF_MARK, array_tags
from jaxmap.flow.flowvalues import (
    APPLIED_CLOSURE,
    BOUND,
    BOX,
    FN,
    INSTANCE,
    KLASS,
    from_names,
    ordered,
)
from jaxmap.flow.parsing import parameters, parse_text
from jaxmap.indexing.facts import CLASS, FUNC, MODULE, SYM

_NAMED = frozenset({FUNC, CLASS, MODULE, SYM})  # values of the names that are plain tuples


def _folded(value: tuple) -> bool:
    """Whether a value is a nested def, a lambda or a closure a call made, which the
    index folds into the definition around it: an edge to that definition stands for
    a part of its body, not all of it."""
    return value[0] == APPLIED_CLOSURE \
        or value[0] in (FN, BOUND) and value[2] != value[1].rpartition(".")[2]


class Scopes(Engine):
    """What names hold, in each owner of each module."""

    def shadows(self, module: str, owner: str, name: str) -> bool:
        """Whether `owner` has a parameter, a variable or a nested def `name` (not `self`
        or `cls`): it hides the module's name (`def f(key): isinstance(key, Array)` is
        not about a function `key`; `def f(...)` inside `multinomial` is not the module's
        `f`)."""
        return name in self._locals.get((module, owner), ()) \
            and name not in ("self", "cls", owner.rpartition(".")[2])

    def _name(self, module: str, owner: str, name: str) -> frozenset:
        """A name in `owner`: its local values if it assigns or receives it, `self`/
        `cls` of a method, else what the module's top level and imports make it."""
        key = ("name", module, owner, name)
        found = self._memo.get(key)
        if found is None or self._plan is not None:
            found = self._cached(key, lambda: self._held(module, owner, name))
        elif self._recording is not None:
            self._recording.read((self._through, key))
        return found

    def _held(self, module: str, owner: str, name: str) -> set:
        if name.startswith(DEF_MARK):  # a decoration's argument: the def alone
            return self._def_itself(module, owner, name[len(DEF_MARK):])
        if name in ("self", "cls") and owner:
            cls = self._class_of(module, owner)
            if cls is not None and owner != cls:
                kind = INSTANCE if name == "self" else KLASS
                return {(kind, c) for c in self.classes.family(f"{module}.{cls}")}
        if owner and name in self._locals.get((module, owner), ()):
            found = self._local(module, owner, name)
        else:
            found = self._global(module, owner, name)
        self._hold(found, name)
        return found

    def _def_itself(self, module: str, owner: str, name: str) -> set:
        if owner:
            return {(FN, self._qual(module, owner), name)
                    for def_name, _line in self._defs.get((module, owner), ()) if def_name == name}
        return {(FN, f"{module}.{name}", name)} if name in self.names.facts(module).funcs \
            else set()

    def _hold(self, values, name: str) -> None:
        """Note `name` as a holder of the boxes among `values`: what is stored through
        that name (`name[k] = v`, `name.append(v)`) may be stored into them. Noted while
        the call sites are read (every store's target among them), not after: what a
        module's questions find then does not depend on those asked before it. Those
        noted in a pass of the sites count once it ends (callsites.py)."""
        if self._sites is not None and not self._building_sites:
            return
        holders = self._late_holders if self._building_sites else self._holders
        for value in ordered(values):
            if value[0] == BOX:
                holders[value[1]].add(name)
                if self._recording is not None:
                    self._recording.hold(value[1], name)

    def _assigned_value(self, module: str, owner: str, name: str, text: str) -> frozenset:
        """What an assignment to `name` gives it; a container written there is its own,
        apart from any other written alike (`_jvps = {}` and `_transposes = {}`)."""
        expr = parse_text(text) if text[:1] in "[({" else None
        if type(expr) in LITERALS:
            return frozenset({(BOX, self._box(module, owner, expr, name))})
        return self._value(module, owner, text)

    def _local(self, module: str, owner: str, name: str) -> set:
        found: set[tuple] = set()
        for kind, value, *_line in self._assigned.get((module, owner, name), ()):
            values = self._assigned_value(module, owner, name, value)
            found |= self._elements(values) if kind == "elements" else values
        for def_name, _line in self._defs.get((module, owner), ()):
            if def_name == name:
                found.add((FN, self._qual(module, owner), name))
        for def_name, i, params in self._params.get((module, owner, name), ()):
            if self._through:
                found |= self._argument(module, owner, def_name, i, name)
            elif self._handed_once(module, owner, def_name, i, name):
                found |= {v for v in self._argument(module, owner, def_name, i, name)
                          if not _folded(v)}
            for param, default, annotation in parameters(params):
                if param != name:
                    continue
                if default:
                    found |= self._value(module, owner, default)
                tags = array_tags(annotation) if annotation and "Array" in annotation else ()
                if tags:
                    found |= {(tag,) for tag in tags}
                elif annotation:  # `x: Class` holds an instance of it
                    found |= {(INSTANCE, v[1]) for v in self._value(module, owner, annotation)
                              if v[0] == KLASS}
        return found

    def _global(self, module: str, owner: str, name: str) -> set:
        found: set[tuple] = set()
        assigned = self._assigned.get((module, "", name), ())
        for kind, value, *_line in assigned:
            values = self._assigned_value(module, "", name, value)
            found |= self._elements(values) if kind == "elements" else values
        if assigned and name in self.names.facts(module).funcs:
            # Decorated or rebound (`jit = api_boundary(jit)`): the function, too, even
            # where a cut chain left what the assignments give unknown.
            found.add((FN, f"{module}.{name}", name))
        if not found:
            for star in self.names.stars.get(module, ()):  # `from m import *`
                if star in self.names.modules:
                    found |= self._cached(("global", star, name),
                                          lambda: self._global(star, "", name))
        # At the top level, names are the module's own before its imports.
        local = None if owner else self.names.env_of(module)
        value = self.names.lookup(name, module, owner, local)
        if value[0] in _NAMED:  # a definition or a module, read in many places: made once
            recording = self._recording
            if recording is not None:
                recording.read(("side", "of names", value))
                if self._plan is not None:
                    self._plan.verify_read(("side", "of names", value))
            held = self._of_names.get(value)
            if held is None:
                if recording is not None:
                    recording.enter()
                held = frozenset(from_names(self.names, value))
                held = self._of_names[value] = self._sets.setdefault(held, held)
                if recording is not None:
                    recording.leave(("side", "of names", value))
            found |= held
        else:
            found |= from_names(self.names, value)
        imported = self._import_target(module, owner, name)
        if imported is not None and (value[0] not in _NAMED
                                     or ".".join(imported) in self.decorated):
            # What the module it comes from makes it there, where the names' reading
            # holds no value of the flow's (`@api_boundary def jit`: `api_boundary(jit)`)
            # or only the function a decorator wraps (`@binary_ufunc def maximum`).
            source, attr = imported
            found |= self._cached(("global", source, attr),
                                  lambda: self._global(source, "", attr))
        return found

    def _import_target(self, module: str, owner: str, name: str) -> tuple | None:
        """(module, name) of the module-level name of the tree that an import of
        `name` in `owner` (or around it) binds, if any; of a dotted name, what its
        first name's import binds, then the rest (`scatter.Index`)."""
        head, dot, rest = name.partition(".")
        target = self.names.import_target(head, module, owner)
        if target is not None and dot:
            target = f"{target}.{rest}"
        source = self.names.module_of(target) if target is not None else None
        if target is None or source is None:
            return None
        attr = target[len(source) + 1:]
        return (source, attr) if attr and "." not in attr else None

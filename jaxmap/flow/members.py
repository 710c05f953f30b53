"""Attributes and classes, the value flow's part for them (flow.py): what `x.attr`
holds where x is a module (its global), a class or an instance (the first method of
that name up the MRO, what the class's code or code elsewhere assigns to it, a
dataclass's field as its constructions hand it), an Array (arrays.py) or `super()`;
what an attribute of a value the flow does not know holds, where the classes
annotating it agree; the bases of a class (for hierarchy.py), the `__init__` a
construction runs, and the methods a receiver's classes define.
"""

from __future__ import annotations

import re
from collections import Counter

from jaxmap.flow.engine import FIELDS, Engine, in_tests
from jaxmap.flow.flowfacts import ARRAY
from jaxmap.flow.flowvalues import BOUND, FN, INSTANCE, KLASS, MOD, SUPER, ordered
from jaxmap.flow.parsing import parse_text
from jaxmap.flow.recording import apart
from jaxmap.indexing.facts import NAME

_EMPTY: frozenset = frozenset()
_CONSTRUCTED = re.compile(r"(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)\(")  # `x = core.Cls(...`


class Members(Engine):
    """What attributes of modules, classes and instances hold."""

    def class_methods(self, module: str, owner: str, text: str) -> frozenset:
        """The methods the classes of what a dotted callee's receiver holds define under
        its last name, up their MROs; none where the class's code assigns that
        attribute (`def_impl` sets `self.impl`: each instance's own, not the method)."""
        receiver, _, name = text.rpartition(".")
        found = set()
        for value in ordered(self.callees(module, owner, receiver, through=False)):
            if value[0] == INSTANCE and not any(
                    (klass, name) in self._attrs for klass in self.classes.mro(value[1])):
                for klass in self.classes.mro(value[1]):
                    klass_module, qualname = self._split(klass)
                    if f"{qualname}.{name}" in self.names.facts(klass_module).funcs:
                        found.add((BOUND, f"{klass}.{name}", name))
                        break
        return frozenset(found)

    def _attribute(self, value: tuple, attr: str) -> frozenset:
        tag = value[0]
        if tag == MOD:
            return self._cached(("global", value[1], attr),
                                lambda: self._global(value[1], "", attr)) \
                if value[1] in self.names.modules else _EMPTY
        if tag in (KLASS, INSTANCE):
            key = ("member", tag, value[1], attr)
            return self._cached(key, lambda: self._member(tag, value[1], attr))
        if tag == ARRAY:
            if not self.array_tables():  # (while they are read: an entry is not kept)
                return _EMPTY
            return self._cached(("array member", attr), lambda: self._array_member(attr))
        if tag == SUPER:  # `super().attr`: from the class after it in the MRO
            for klass in self.classes.mro(value[1])[1:]:
                found = self._member(INSTANCE, klass, attr)
                if found:
                    return frozenset(found)
        return _EMPTY

    def attribute(self, value: tuple, attr: str) -> frozenset:
        """What `attr` of a value may hold (`x.__call__` of an instance: its method)."""
        return self._attribute(value, attr)

    def _member(self, tag: str, cls: str, attr: str) -> set:
        """`attr` of a class or of its instance: the first method of that name up its
        MRO, and what any class of the MRO (or code elsewhere) assigns to it."""
        found = set()
        for klass in self.classes.mro(cls):
            module, qualname = self._split(klass)
            if f"{qualname}.{attr}" in self.names.facts(module).funcs:
                found.add((BOUND if tag == INSTANCE else FN, f"{klass}.{attr}", attr))
                break
        for klass in self.classes.mro(cls):
            for module, owner, value in self._attrs.get((klass, attr), ()):
                found |= self._value(module, owner, value)
        if tag == INSTANCE and (self._sites is not None or not self._building_sites):
            found |= self._field(cls, attr)  # as a parameter: what constructions hand it
        self._hold(found, attr)
        foreign = self._foreign.get(attr, ())
        classes = {(KLASS, klass) for klass in self.classes.mro(cls)} if foreign else ()
        for module, owner, head, value in foreign:
            head_expr = parse_text(head)
            heads = self._eval(module, owner, head_expr) if head_expr is not None else _EMPTY
            if (tag, cls) in heads and (tag == KLASS or self._through or self._made_once(cls)):
                found |= self._value(module, owner, value)
            elif tag == INSTANCE and not heads.isdisjoint(classes):
                # `EvalTrace.process_shard_map = _shard_map_impl`: a method of its
                # instances, bound to them.
                found |= {(BOUND, *v[1:]) if v[0] == FN else v
                          for v in self._value(module, owner, value)}
        return found

    def _made_once(self, cls: str) -> bool:
        """Whether the tree makes one instance of a class of that name at most, as its
        text says (calls of the name from one definition or top level, and no two
        module-level names assigned one): what is set on that one instance
        (`_profile_state.log_dir = ...`) is set on every value of it the flow knows; on
        one of many (`remat_p.bind = _remat_bind`, of JAX's hundreds of primitives) it
        is that one's alone, which the flow does not follow: any instance may be that
        one, so a call through one is `through` (`eqn.primitive.is_high()`). Of a class
        outside test modules, the text outside them alone tells."""
        tests = in_tests(self._split(cls)[0])
        if self._recording is not None:  # (compared whole on an update)
            self._recording.read(("side", "made", tests, cls.rpartition(".")[2]))
        made = self._made.get(tests)
        if made is None:
            with apart(self._recording, "made"):
                made = self._made[tests] = self._counted(tests)
        return made.get(cls.rpartition(".")[2], 0) <= 1

    def _counted(self, tests: bool) -> dict[str, int]:
        """Class name -> how many instances the text makes, at least (`_made_once`)."""
        callers = Counter(
            name.rpartition(".")[2] for m, (_p, facts) in self.names.modules.items()
            if tests or not in_tests(m)
            for callees in facts.callees.values() for name, _l, called, *_ in callees if called)
        assigned = Counter(
            call.group(1) for (m, owner, _n), facts in self._assigned.items()
            if not owner and (tests or not in_tests(m))
            for kind, text, *_line in facts
            if kind == "value" and (call := _CONSTRUCTED.match(text)))
        return {name: max(n, assigned[name]) for name, n in callers.items()}

    def _annotated(self, module: str, attr: str) -> frozenset:
        """`x.attr` of a value the flow does not know, read in `module`: an instance of
        the class of the tree that the field annotations of `attr` name, where the
        classes of the tree annotating a field so named agree on one (`_impl: PRNGImpl`;
        an annotation naming no class of the tree, `_impl: str`, says nothing of them);
        else nothing. Outside test modules, their classes' annotations are left out."""
        tests = in_tests(module)
        return self._in_mode(False, self._cached, ("annotated", attr, tests),
                             lambda: self._annotated_classes(attr, tests))

    def _annotated_classes(self, attr: str, tests: bool) -> frozenset:
        classes: set[tuple] = set()
        for annotated, annotation in self._field_types.get(attr, ()):
            if in_tests(annotated) and not tests:
                continue
            expr = parse_text(annotation.strip("'\""))
            named = self._eval(annotated, "", expr) if expr else _EMPTY
            classes |= {(INSTANCE, v[1]) for v in named if v[0] == KLASS}
        return frozenset(classes) if len(classes) == 1 else _EMPTY

    def _field(self, cls: str, attr: str) -> set:
        """A field of an instance of a class without an `__init__` of the tree (a
        dataclass, a NamedTuple): what its constructions hand it, by keyword or in the
        order the class and its bases annotate their fields."""
        fields = [field for klass in reversed(self.classes.mro(cls))
                  for field in self._fields.get(klass, ())]
        if attr not in fields:
            return set()
        index, found = fields.index(attr), set[tuple]()
        for m, o, positional, keywords, first in self.handing(*self._split(cls), FIELDS):
            named = [text for keyword, text in keywords if keyword == attr]
            if named:
                found |= self._value(m, o, named[0])
            elif 0 <= index - first < len(positional):
                found |= self._value(m, o, positional[index - first])
        return found

    def _bases(self, cls: str) -> list[str]:
        module, qualname = self._split(cls)
        spec = self.names.facts(module).classes.get(qualname)
        if spec is None:
            return []
        bases = []
        for base in spec.bases:
            if base[0] == NAME:
                bases += [v[1] for v in self._name(module, "", base[1]) if v[0] == KLASS]
        return bases

    def constructor(self, cls: str) -> str | None:
        """The `__init__` of the tree that calling a class runs, up its MRO."""
        for klass in self.classes.mro(cls):
            module, qualname = self._split(klass)
            if f"{qualname}.__init__" in self.names.facts(module).funcs:
                return f"{klass}.__init__"
        return None

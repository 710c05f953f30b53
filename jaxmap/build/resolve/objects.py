"""Objects of the tree's classes and the classes themselves as values: the attributes an
object is given (`self.primitive = core.Primitive(name)`), those a class body or a helper
gives a class (`name = "my_op"`, `cls.outer_primitive = p`), and members found through
the bases (a method, `super().__init__`)."""

from __future__ import annotations

import bisect

from jaxmap.build.facts import CLASS, FUNC, INSTANCE, METHOD, STR, SUPER
from jaxmap.build.resolve.classes import is_jax_base
from jaxmap.build.resolve.names import Names
from jaxmap.build.resolve.values import MAX_HOPS


class Objects:
    """Attributes by object and by class, and lookups along a class's bases (`classes`
    evaluates the base expressions)."""

    def __init__(self, names: Names, classes):
        self.names = names
        self.classes = classes
        self.attributes: list[dict] = []  # object k -> its attributes
        self.class_attributes: dict[tuple[str, str], dict] = {}
        self._spans: dict[str, tuple[list, list]] = {}  # module -> class body spans

    def new(self, cls: tuple) -> tuple:
        """A new object of `cls`, with no attributes yet."""
        self.attributes.append({})
        return (INSTANCE, cls, len(self.attributes) - 1)

    def set(self, target: tuple, attr: str, value: tuple) -> None:
        """`target.attr = value`, for an object or a class of the tree (else nothing)."""
        if target[0] == INSTANCE:
            self.attributes[target[2]][attr] = value
        elif target[0] == CLASS:
            self.class_attributes.setdefault((target[1], target[2]), {})[attr] = value

    def member(self, value: tuple, attr: str) -> tuple | None:
        """`value.attr` where it is known: an object's attribute, else its class's (a
        method bound to it); a class's attribute or method; a function's `__name__`;
        `super().name` (bound to the method's `self`). None where it is not known."""
        tag = value[0]
        if tag == INSTANCE:
            found = self.attributes[value[2]].get(attr)
            if found is not None:
                return found
            found = self.member(value[1], attr)
            return (METHOD, value, attr) if found is not None and found[0] == FUNC else found
        if tag == SUPER:
            return (METHOD, value, attr)
        if tag in (CLASS, FUNC) and attr == "__name__":
            return (STR, value[2].rpartition(".")[2])
        if tag == CLASS:
            for cls in self.mro(value):
                found = self.class_attributes.get((cls[1], cls[2]), {}).get(attr)
                if found is not None:
                    return found
                if f"{cls[2]}.{attr}" in self.names.facts(cls[1]).funcs:
                    return (FUNC, cls[1], f"{cls[2]}.{attr}")
        return None

    def method(self, cls: tuple, name: str, after: bool = False) -> tuple | None:
        """The function `name` of `cls` or its bases (only its bases when `after`: what
        `super()` reaches), or None."""
        for owner in self.mro(cls)[1 if after else 0:]:
            if f"{owner[2]}.{name}" in self.names.facts(owner[1]).funcs:
                return (FUNC, owner[1], f"{owner[2]}.{name}")
        return None

    def mro(self, cls: tuple) -> list[tuple]:
        """`cls` and its bases in the tree, nearest first, each once (depth first: the
        linearisation of the simple hierarchies registrations use)."""
        order, pending = [], [cls]
        while pending and len(order) < MAX_HOPS:
            current = pending.pop(0)
            if current in order or current[1] not in self.names.modules \
                    or is_jax_base(current):
                continue
            order.append(current)
            pending[:0] = [base for base in self.classes.bases(current) if base[0] == CLASS]
        return order

    def class_at(self, module: str, line: int) -> tuple | None:
        """The innermost class of `module` whose body holds `line`, or None."""
        spans = self._spans.get(module)
        if spans is None:
            classes = sorted((spec.line, -spec.end_line, qualname) for qualname, spec in
                             self.names.facts(module).classes.items())
            spans = self._spans[module] = ([c[0] for c in classes], classes)
        starts, classes = spans
        for start, negative_end, qualname in reversed(classes[:bisect.bisect(starts, line)]):
            if start < line <= -negative_end:
                return (CLASS, module, qualname)
        return None

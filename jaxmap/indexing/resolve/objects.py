"""Objects of the tree's classes and the classes themselves as values: the attributes an
object is given (`self.primitive = core.Primitive(name)`), those a class body or a helper
gives a class (`name = "my_op"`, `cls.outer_primitive = p`), and members found through
the bases (a method, `super().__init__`)."""

from __future__ import annotations

import bisect

from jaxmap.indexing.facts import CLASS, FUNC, INSTANCE, METHOD, PRIM, STR, SUPER, UNKNOWN
from jaxmap.indexing.resolve.classes import is_jax_base
from jaxmap.indexing.resolve.names import Names
from jaxmap.indexing.resolve.values import KNOWN_KINDS, MAX_HOPS, canonical
from jaxmap.knowledge import registrars as R


class Objects:
    """Attributes by object and by class, and lookups along a class's bases (`classes`
    evaluates the base expressions)."""

    def __init__(self, names: Names, classes):
        self.names = names
        self.classes = classes
        self.attributes: list[dict] = []  # object k -> its attributes
        self.class_attributes: dict[tuple[str, str], dict] = {}
        self.attribute_names: dict[str, set[str]] = {}  # module -> its classes' attributes
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
            self.attribute_names.setdefault(target[1], set()).add(attr)

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

    def method_of(self, target: tuple, name: str) -> tuple | None:
        """The tree's function that `target.name` calls, where it is one: a method of an
        object's class, of the class `super()` starts after, or of a primitive's class."""
        if target[0] == INSTANCE:
            return self.method(target[1], name)
        if target[0] == SUPER:
            return self.method(target[1], name, after=True)
        cls = self.classes.instance_class.get(target[1]) if target[0] == PRIM else None
        return self.method(cls, name) if cls is not None else None

    def isinstance(self, value: tuple, cls: tuple) -> bool | None:
        """`isinstance(value, cls)` where both are known: JAX's Primitive, or a class of
        the tree (an object's or a primitive's class, and its bases)."""
        if value[0] not in KNOWN_KINDS:
            return None
        if canonical(cls) in R.PRIMITIVE_CLASS_NAMES:
            return value[0] == PRIM
        if cls[0] != CLASS:
            return None
        own = value[1] if value[0] == INSTANCE else \
            self.classes.instance_class.get(value[1]) if value[0] == PRIM else None
        return own is not None and cls in self.mro(own)

    def super_in(self, module: str, scope: str, local: dict) -> tuple:
        """`super()` in method `scope`: its class, and the method's first parameter."""
        owner = scope.rpartition(".")[0]
        spec = self.names.facts(module).funcs.get(scope)
        if owner not in self.names.facts(module).classes or not spec or not spec.params:
            return UNKNOWN
        return (SUPER, (CLASS, module, owner), local.get(spec.params[0], UNKNOWN))

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
        order: list[tuple] = []
        pending = [cls]
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

"""Primitive subclasses and hijax classes: which classes make primitives, their
members, and the rules those members are.

A mixin of the resolver (it needs `modules`, `primitives`, `class_kinds`,
`instance_class`, `base_values`, `evaluate_at_module`, `_construct`, `_apply`,
`_new_primitive`); kept apart so resolve.py stays the interpreter.
"""

from __future__ import annotations

from jaxmap import registrars as R
from jaxmap.values import MAX_HOPS, UNKNOWN, canonical, rule_row


class PrimitiveClasses:
    """How classes make primitives: instances of Primitive subclasses (with the
    rules their __init__ and methods give), and VJPHiPrimitive subclasses."""

    def _instantiate(self, cls: tuple, args: tuple, kwargs: dict, ctx, via: str) -> tuple:
        """`SomePrimitiveSubclass('name')`: a new primitive, the rules its __init__
        registers on `self`, and for HiPrimitive subclasses the rule methods."""
        created = self._construct(args[0] if args else kwargs.get("name", UNKNOWN), ctx)
        if created[0] == "prim":
            self.instance_class[created[1]] = cls
        init = self._initializer(cls)
        if init is not None:
            self._apply(init, (created, *args), kwargs, ctx, via, None)
        if created[0] == "prim":
            table = R.HIJAX_METHODS if self._class_kind(cls) == "hiprimitive" \
                else R.PRIMITIVE_METHODS
            self._method_rules(created[1], cls, table)
        return created

    def _method_rules(self, pid: int, cls: tuple, table: dict) -> None:
        """Rules a Primitive subclass defines as methods, unless already registered."""
        have = {rule["kind"] for rule in self.primitives[pid]["rules"]}
        for name, (module, qualname, line, end_line) in self._members(cls).items():
            kind = table.get(name)
            if kind is None or str(kind) in have:
                continue
            self.primitives[pid]["rules"].append(self._member_rule(kind, name, module,
                                                                   qualname, line, end_line))

    def _member_rule(self, kind, name: str, module: str, qualname: str, line: int,
                     end_line: int) -> dict:
        """A rule that is a class member: registered where it is defined."""
        path = self.modules[module][0]
        return rule_row(kind, path, line, end_line, qualname, None,
                        {"name": name, "file": path, "line": line})

    def _members(self, cls: tuple, depth: int = 0) -> dict[str, tuple]:
        """Methods and attributes of a class and its in-tree bases, nearest first,
        stopping at JAX's own Primitive and hijax base classes:
        name -> (module, qualname, line, end_line)."""
        name = f"{cls[1]}.{cls[2]}"
        if name in R.HIJAX_CLASS_BASE_NAMES or name in R.HI_PRIMITIVE_BASE_NAMES \
                or name in R.PRIMITIVE_CLASS_NAMES or depth > MAX_HOPS:
            return {}
        spec = self.modules[cls[1]][1]["classes"].get(cls[2])
        if spec is None:
            return {}
        members = {}
        for value in reversed(self._bases(cls)):
            if value[0] == "class":
                members.update(self._members(value, depth + 1))
        for member, (line, end_line) in spec[3].items():
            members[member] = (cls[1], f"{cls[2]}.{member}", line, end_line)
        return members

    def _class_kind(self, cls: tuple, depth: int = 0) -> str | None:
        """'vjp_hi' for VJPHiPrimitive subclasses (the class is the primitive),
        'hiprimitive' for HiPrimitive subclasses, 'primitive' for other Primitive
        subclasses (instances are primitives), else None."""
        key = (cls[1], cls[2])
        if key in self.class_kinds:
            return self.class_kinds[key]
        self.class_kinds[key] = None
        kind = None
        for value in self._bases(cls):
            name = canonical(value)
            if name in R.HIJAX_CLASS_BASE_NAMES:
                kind = "vjp_hi"
            elif name in R.HI_PRIMITIVE_BASE_NAMES:
                kind = kind or "hiprimitive"
            elif name in R.PRIMITIVE_CLASS_NAMES:
                kind = kind or "primitive"
            elif value[0] == "class" and depth < MAX_HOPS:
                kind = kind or self._class_kind(value, depth + 1)
        self.class_kinds[key] = kind
        return kind

    def _initializer(self, cls: tuple, depth: int = 0) -> tuple | None:
        """The `__init__` a class runs: its own, or the nearest base's in the tree."""
        if f"{cls[2]}.__init__" in self.modules[cls[1]][1]["funcs"]:
            return ("func", cls[1], f"{cls[2]}.__init__")
        for value in self._bases(cls) if depth < MAX_HOPS else ():
            if value[0] == "class":
                found = self._initializer(value, depth + 1)
                if found is not None:
                    return found
        return None

    def _hijax_classes(self, module: str) -> None:
        """Each VJPHiPrimitive subclass of `module` as a primitive of its own."""
        for qualname, (_, line, end_line, _members) in self.modules[module][1]["classes"].items():
            cls = ("class", module, qualname)
            if "." in qualname or self._class_kind(cls) != "vjp_hi":
                continue
            pid = self._new_primitive(qualname, qualname, module, (line, end_line), "hijax")[1]
            members = sorted(self._members(cls).items(), key=lambda m: (m[1][0], m[1][2]))
            for member, (where, member_qualname, m_line, m_end) in members:
                kind = R.HIJAX_METHODS.get(member)
                if kind is not None:
                    self.primitives[pid]["rules"].append(self._member_rule(
                        kind, member, where, member_qualname, m_line, m_end))

    def _bases(self, cls: tuple) -> tuple:
        """The values of a class's base-class expressions, evaluated once."""
        key = (cls[1], cls[2])
        if key not in self.base_values:
            spec = self.modules[cls[1]][1]["classes"].get(cls[2])
            self.base_values[key] = tuple(
                self.evaluate_at_module(cls[1], base) for base in spec[0]) if spec else ()
        return self.base_values[key]

"""Classes that make primitives: Primitive subclasses (their instances are primitives,
with the rules their __init__ and methods give), HiPrimitive subclasses (rules are the
class's methods), and VJPHiPrimitive subclasses (each class is a primitive)."""

from __future__ import annotations

from collections.abc import Callable

from jaxmap.indexing.facts import CLASS, FUNC, NEW, PRIM, STR
from jaxmap.indexing.resolve.findings import Findings
from jaxmap.indexing.resolve.names import Names
from jaxmap.indexing.resolve.values import MAX_HOPS, canonical
from jaxmap.knowledge import registrars as R
from jaxmap.models import RuleKind
from jaxmap.store.records import Place

PRIMITIVE, HI_PRIMITIVE, VJP_HI = "primitive", "hiprimitive", "vjp_hi"
# The methods of a Primitive subclass that binding it runs (`process`: jax 0.4's call
# and map primitives, reached from `bind`).
_BINDERS = ("bind_with_trace", "bind", "process")


def is_jax_base(cls: tuple) -> bool:
    """JAX's own Primitive and hijax base classes: their methods are JAX's machinery
    (`def_impl` registers), never a rule of a subclass."""
    name = f"{cls[1]}.{cls[2]}"
    return name in R.HIJAX_CLASS_BASE_NAMES or name in R.HI_PRIMITIVE_BASE_NAMES \
        or name in R.PRIMITIVE_CLASS_NAMES


class Classes:
    """Class kinds, members and bases, and the rules of the primitives classes make.
    A class's base expressions are evaluated, when first asked for, by `evaluate(module,
    expression)`: the interpreter's, which makes this object (and drives instantiation:
    `made`, `initializer`, `method_rules`)."""

    def __init__(self, names: Names, findings: Findings,
                 evaluate: Callable[[str, tuple], tuple]):
        self.names = names
        self.findings = findings
        self.evaluate = evaluate
        self.kinds: dict[tuple[str, str], str | None] = {}
        self.instance_class: dict[int, tuple] = {}  # primitive index -> its class
        self.base_values: dict[tuple[str, str], tuple] = {}  # class -> its bases' values
        # Trace method -> class -> (module, site, via, functions, condition) of a
        # module-level `SomeTrace.process_x = f`; primitive -> functions its bind runs.
        self.assigned: dict[str, dict[tuple[str, str], tuple]] = {}
        self.custom_binders: dict[int, list[tuple]] = {}

    def makes_primitives(self, cls: tuple) -> bool:
        """Whether instances of `cls` are primitives."""
        return self.kind(cls) in (PRIMITIVE, HI_PRIMITIVE)

    def made(self, pid: int, cls: tuple) -> None:
        """Primitive `pid` is an instance of `cls` (its methods are the primitive's)."""
        self.instance_class[pid] = cls

    def instance_member(self, pid: int, name: str) -> Place | None:
        """Where member `name` of primitive `pid`'s class is defined, as a rule function."""
        cls = self.instance_class.get(pid)
        member = self.members(cls).get(name) if cls is not None else None
        if member is None:
            return None
        module, _, line, _ = member
        return Place(name, self.names.path(module), line)

    def method_rules(self, pid: int, cls: tuple) -> None:
        """Rules a Primitive subclass defines as methods (for HiPrimitive subclasses, the
        hijax ones), unless already registered."""
        table = R.HIJAX_METHODS if self.kind(cls) == HI_PRIMITIVE else R.PRIMITIVE_METHODS
        have = self.findings.kinds_of(pid)
        for name, (module, qualname, line, end_line) in self.members(cls).items():
            kind = table.get(name)
            if kind is not None and str(kind) not in have:
                self._member_rule(pid, kind, name, module, qualname, line, end_line)

    def _member_rule(self, pid: int, kind, name: str, module: str, qualname: str, line: int,
                     end_line: int) -> None:
        """A rule that is a class member: registered where it is defined."""
        self.findings.add_rule(pid, kind, module, (line, end_line), qualname, None,
                               [Place(name, self.names.path(module), line)])

    def members(self, cls: tuple, depth: int = 0) -> dict[str, tuple]:
        """Methods and attributes of a class and its in-tree bases, nearest first,
        stopping at JAX's own Primitive and hijax base classes:
        name -> (module, qualname, line, end_line)."""
        if is_jax_base(cls) or depth > MAX_HOPS:
            return {}
        spec = self.names.facts(cls[1]).classes.get(cls[2])
        if spec is None:
            return {}
        members = {}
        for value in reversed(self.bases(cls)):
            if value[0] == CLASS:
                members.update(self.members(value, depth + 1))
        for member, (line, end_line) in spec.members.items():
            members[member] = (cls[1], f"{cls[2]}.{member}", line, end_line)
        return members

    def kind(self, cls: tuple, depth: int = 0) -> str | None:
        """VJP_HI for VJPHiPrimitive subclasses (the class is the primitive),
        HI_PRIMITIVE for HiPrimitive subclasses, PRIMITIVE for other Primitive
        subclasses (instances are primitives), else None."""
        key = (cls[1], cls[2])
        if key in self.kinds:
            return self.kinds[key]
        self.kinds[key] = None
        kind = None
        for value in self.bases(cls):
            name = canonical(value)
            if name in R.HIJAX_CLASS_BASE_NAMES:
                kind = VJP_HI
            elif name in R.HI_PRIMITIVE_BASE_NAMES:
                kind = kind or HI_PRIMITIVE
            elif name in R.PRIMITIVE_CLASS_NAMES or name in R.PRIMITIVE_SUBCLASS_NAMES \
                    and value[0] != CLASS:
                kind = kind or PRIMITIVE
            elif value[0] == CLASS and depth < MAX_HOPS:
                kind = kind or self.kind(value, depth + 1)
        self.kinds[key] = kind
        return kind

    def name_primitive(self, target: tuple, name: tuple, ctx) -> None:
        """`super().__init__(name)` reaching JAX's Primitive: the name of the primitive
        `target` (made with its class's first argument), where it is a string."""
        if name[0] != STR:
            return
        if target[0] == PRIM:
            self.findings.name(target[1], name[1])
        elif target[0] == NEW and ctx.summary is not None:
            ctx.summary.created[target[2]] = name

    def initializer(self, cls: tuple, depth: int = 0) -> tuple | None:
        """The `__init__` a class runs: its own, or the nearest base's in the tree."""
        if f"{cls[2]}.__init__" in self.names.facts(cls[1]).funcs:
            return (FUNC, cls[1], f"{cls[2]}.__init__")
        for value in self.bases(cls) if depth < MAX_HOPS else ():
            if value[0] == CLASS:
                found = self.initializer(value, depth + 1)
                if found is not None:
                    return found
        return None

    def hijax_classes(self, module: str) -> None:
        """Each VJPHiPrimitive subclass of `module` as a primitive of its own."""
        for qualname, spec in self.names.facts(module).classes.items():
            cls = (CLASS, module, qualname)
            if "." in qualname or self.kind(cls) != VJP_HI:
                continue
            pid = self.findings.new_primitive(qualname, qualname, module,
                                              (spec.line, spec.end_line), "hijax")
            members = sorted(self.members(cls).items(), key=lambda m: (m[1][0], m[1][2]))
            for member, (where, member_qualname, m_line, m_end) in members:
                kind = R.HIJAX_METHODS.get(member)
                if kind is not None:
                    self._member_rule(pid, kind, member, where, member_qualname, m_line, m_end)

    def assigned_handler(self, method: str, cls: tuple, module: str, site: tuple[int, int],
                         via: str, functions: list[Place], condition: str | None) -> None:
        """`ad.JVPTrace.process_shard_map = _shard_map_jvp` at a module's top level: the
        Trace class `cls` handles `method` with the function assigned (replacing any
        method of that name its body defines)."""
        self.assigned.setdefault(method, {})[(cls[1], cls[2])] = (
            module, site, via, functions, condition)

    def custom_binder(self, pid: int, function: tuple) -> None:
        """`p.def_custom_bind(f)` / `p.def_bind_with_trace(f)`: binding `pid` runs `f`."""
        self.custom_binders.setdefault(pid, []).append(function)

    def trace_rules(self) -> None:
        """For a primitive whose bind calls a Trace method (`trace.process_shard_map(...)`
        in its class's `bind_with_trace`, `bind` or `process`, or in the function its
        `def_custom_bind` was given), each class that defines that method, or is
        assigned it at a module's top level, handles it: a TRACE rule per class."""
        handlers: dict[str, dict[tuple, tuple]] = {}  # method -> class -> rule's args
        for module, (_, facts) in self.names.modules.items():
            for qualname, spec in facts.classes.items():
                for member, (line, end_line) in spec.members.items():
                    if member.startswith("process_"):
                        place = Place(member, self.names.path(module), line)
                        handlers.setdefault(member, {})[(module, qualname)] = (
                            module, (line, end_line), f"{qualname}.{member}", [place], None)
        for method, assigned in self.assigned.items():
            handlers.setdefault(method, {}).update(assigned)
        for pid in sorted({*self.instance_class, *self.custom_binders}):
            for method in self._trace_calls(pid):
                for module, site, via, functions, condition in handlers.get(method, {}).values():
                    self.findings.add_rule(pid, RuleKind.TRACE, module, site, via, None,
                                           functions, condition)

    def _trace_calls(self, pid: int) -> list[str]:
        """The Trace methods binding primitive `pid` calls, in name order."""
        cls = self.instance_class.get(pid)
        members = self.members(cls) if cls is not None else {}
        binders = [(module, qualname) for name in _BINDERS if name in members
                   for module, qualname, _, _ in (members[name],)]
        binders += [(f[1], f[2]) for f in self.custom_binders.get(pid, ())]
        return sorted({method for module, qualname in binders
                       for method in self.names.facts(module).trace_calls.get(qualname, ())})

    def bases(self, cls: tuple) -> tuple:
        """The values of a class's base-class expressions, evaluated once."""
        key = (cls[1], cls[2])
        if key not in self.base_values:
            spec = self.names.facts(cls[1]).classes.get(cls[2])
            self.base_values[key] = tuple(
                self.evaluate(cls[1], base)
                for base in spec.bases) if spec else ()
        return self.base_values[key]

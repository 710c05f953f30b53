"""What a method overrides: the methods of its name that the bases of its class
define, at any remove. A call of one of them through a value of the base class
(`trace.process_primitive(...)` in `Primitive.bind_with_trace`) may run the override
(dynamic dispatch), so `callers` of an override lists their callers too. A call
that names the class (`super().m()`, `Base.m(self)`, `Base()`) runs the base's own.

The index holds no class hierarchy: a class's bases are read from its file's facts
and resolved through the module's own imports, as core_classes does, one file per
class on the way up."""

from __future__ import annotations

from jaxmap.commands.core_classes import base_target

MAX_BASES = 64  # classes read on the way up from one method's class (a bound on odd trees)


def overridden(index, targets: dict[int, str]) -> dict[int, int]:
    """Base method id -> the id of the one of `targets` (a method) that overrides it,
    for the methods of its name its class's bases define (nearest base first); a
    method that is itself one of `targets` is left out."""
    found: dict[int, int] = {}
    read: dict[str, list[tuple]] = {}  # file -> its classes' rows, read once per answer
    for did, node in sorted(index.nodes(targets).items()):
        if node.kind != "function":
            continue
        owner, _, name = node.qualname.rpartition(".")
        ancestors = _ancestors(index, owner, node.file, read)
        methods = index.functions_at([f"{cls}.{name}" for cls in ancestors])
        rank = {f"{cls}.{name}": i for i, cls in enumerate(ancestors)}
        for base in sorted(methods, key=lambda i: (rank[methods[i]], i)):
            if base not in targets:
                found.setdefault(base, did)
    return found


def _ancestors(index, cls: str, file: str, read: dict[str, list[tuple]]) -> list[str]:
    """The qualified names of the bases of class `cls` (defined in `file`) that the
    tree defines, and of theirs, breadth first; none where `cls` is not a class.
    `read`: the store's class rows of each file read so far."""
    order: list[str] = []
    level = {cls: file} if cls in index.classes_at([cls]) else {}  # a function's module: none
    while level and len(order) < MAX_BASES:
        files = set(level.values())
        for row in index.class_bases(files - read.keys()):
            read.setdefault(row[1], []).append(row)
        rows = [row for where in files for row in read.get(where, ())]
        written = [base_target(module, base, aliases)
                   for module, _file, name, _line, bases, aliases in rows
                   if f"{module}.{name}" in level for base in bases]
        places = index.classes_at(set(written))
        level = {}
        for target in written:
            qualname, where = places.get(target, (None, None))
            if qualname is not None and qualname != cls and qualname not in order:
                order.append(qualname)
                level[qualname] = where
    return order[:MAX_BASES]


def dispatching(index, bases: dict[int, int]) -> set[tuple[int, int]]:
    """(caller, base method) of the calls of `bases` that may run an override: those
    written as a method of a value (`trace.process_primitive`), not of `super()` nor
    of a class named as the base's (nor a call of the class itself)."""
    nodes = index.nodes(bases)
    found = set()
    for caller, callee, text in index.call_texts(bases):
        owner, _, name = nodes[callee].qualname.rpartition(".") if callee in nodes \
            else ("", "", "")
        receiver, _, called = text.rpartition(".")
        if called == name and receiver and not receiver.startswith("super(") \
                and receiver.rpartition(".")[2] != owner.rpartition(".")[2]:
            found.add((caller, callee))
    return found

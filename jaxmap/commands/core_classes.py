"""The base classes the rest of JAX extends (orientation.CORE_CLASSES), each at its
definition with the classes that extend it directly, for REPO-MAP.md.

A base written in a class statement is resolved through the module's own imports
(`core.Trace` with `from jax._src import core`, `Trace` with `from jax._src.core
import Trace`, or a class of the same module).
"""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

from jaxmap.knowledge.orientation import CORE_CLASSES

SHOWN = 6  # subclasses named per class, the core modules' first


class CoreClass(NamedTuple):
    qualname: str
    file: str
    line: int
    stands_for: str
    subclasses: tuple[tuple[str, str, int], ...]  # (qualname, file, line), SHOWN at most
    subclass_count: int


def core_classes(index) -> tuple[CoreClass, ...]:
    extended = _subclasses(index.class_bases())
    rows = []
    for qualname, stands_for in CORE_CLASSES:
        place = index.place(qualname)
        if place is None:
            continue
        file, line = place
        found = sorted(extended.get(qualname, ()), key=_nearest_first)
        rows.append(CoreClass(qualname, file, line, stands_for, tuple(found[:SHOWN]),
                              len(found)))
    return tuple(rows)


def _subclasses(classes) -> dict[str, set[tuple[str, str, int]]]:
    """Base class qualname -> (qualname, file, line) of the classes that name it as a
    base."""
    extended: dict[str, set[tuple[str, str, int]]] = defaultdict(set)
    for module, file, name, line, bases, aliases in classes:
        for base in bases:
            extended[base_target(module, base, aliases)].add((f"{module}.{name}", file, line))
    return extended


def base_target(module: str, base: str, aliases: dict[str, str]) -> str:
    """The dotted name a base written `base` in `module` stands for, through the
    module's top-level import `aliases` (else a class of the module itself)."""
    head, _, rest = base.partition(".")
    if head in aliases:
        return aliases[head] + (f".{rest}" if rest else "")
    return f"{module}.{base}"


def _nearest_first(subclass: tuple[str, str, int]) -> tuple:
    """JAX's own internals (`jax._src`) before experimental and kernel modules, then
    the shorter names."""
    qualname, file, line = subclass
    return (not qualname.startswith("jax._src."), "pallas" in qualname, len(qualname),
            qualname, file, line)

"""Calls of an instance of a hijax primitive's class, each a bind of that primitive.

A hijax primitive is a class (`class Einshape(VJPHiPrimitive)`, indexing/resolve/
classes.py), and binding it is calling an instance: `Einshape(aval, ...)(x)`, or
`prim(x)` where `prim = Hj()`; JAX's `__call__` of the base class binds
`call_hi_primitive` with the instance as a parameter. So a call whose callee holds
such an instance itself binds that class's primitive, at the call's line. An instance
the callee only gets through a parameter (a helper calling what it is handed) binds
nothing there, as a classic helper's `prim.bind` of a parameter names no primitive;
nor does a callee that may be an instance of more than MAX_CERTAIN of these classes
(a dispatch, as calls.py's edges of such a call are).
"""

from __future__ import annotations

from collections.abc import Iterable

from jaxmap.flow.calls import MAX_CERTAIN, BindRow
from jaxmap.flow.flow import INSTANCE
from jaxmap.store.records import PrimitiveRecord

_HIJAX = "hijax"  # the style of a primitive that is a class


class HiCalls:
    """The binds of calls of hijax primitives' instances, noted while calls.py reads the
    flow's values of each call site (which it can read only once)."""

    def __init__(self, primitives: list[PrimitiveRecord]):
        self._classes = {f"{prim.module}.{prim.variable}": pid
                         for pid, prim in enumerate(primitives) if prim.style == _HIJAX}
        self._found: list[tuple[str, str, int, int]] = []  # (module, owner, primitive, line)

    def note(self, module: str, owner: str, line: int, held: Iterable[tuple]) -> None:
        """A call in `owner` of `module` at `line` whose callee holds the values `held`
        itself (not through a parameter)."""
        if not self._classes:
            return
        bound = {self._classes[value[1]] for value in held
                 if value[0] == INSTANCE and value[1] in self._classes}
        if len(bound) <= MAX_CERTAIN:
            self._found += [(module, owner, pid, line) for pid in sorted(bound)]

    def noted(self) -> int:
        """How many calls are noted so far."""
        return len(self._found)

    def since(self, noted: int) -> list[tuple[str, str, int, int]]:
        """The calls noted after the first `noted`, taken out (to be added back in the
        tree's order, whichever process noted them)."""
        taken = self._found[noted:]
        del self._found[noted:]
        return taken

    def add(self, found: list[tuple[str, str, int, int]]) -> None:
        """Calls another reading noted (`since`)."""
        self._found += found

    def rows(self, ids: dict[str, int]) -> list[BindRow]:
        """The binds rows of the calls noted (a module's top level, as a classic bind
        there, is no definition's)."""
        return [BindRow(module, owner, pid, line,
                        ids.get(f"{module}.{owner}") if owner else None, None)
                for module, owner, pid, line in self._found]

"""The tree's classes in order: each class's MRO and its subclasses, given its bases;
a library class's subclasses are those outside test modules (what library code holds
does not depend on tests: engine.in_tests)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

from jaxmap.flow.engine import in_tests
from jaxmap.flow.recording import Recording, apart

if TYPE_CHECKING:
    from jaxmap.flow.update import Plan
from jaxmap.indexing.resolve.names import Names


class Hierarchy:
    """The MRO (C3, bounded) and the subclasses of the classes of a tree."""

    def __init__(self, names: Names, bases: Callable[[str], list[str]]):
        self._names = names
        self._bases = bases  # a class -> its bases of the tree
        self._subclasses: dict[str, set[str]] | None = None
        self._of_tests: set[str] = set()  # the classes of test modules
        self._mros: dict[str, list[str]] = {}
        self.recording: Recording | None = None  # what each MRO and family reads
        self.plan: Plan | None = None  # an update's (update.py), which verifies an MRO kept

    def mro(self, cls: str) -> list[str]:
        """The class and its bases of the tree, in C3-like order (depth first, left to
        right, each once; bounded)."""
        recording = self.recording
        if recording is not None:
            recording.read(("side", "mro", cls))
            if self.plan is not None:
                self.plan.verify_read(("side", "mro", cls))
        found = self._mros.get(cls)
        if found is None:
            if recording is not None:
                recording.enter()
            try:
                self._mros[cls] = [cls]  # a class that is its own base: itself only
                found = self._mros[cls] = self._linear(cls)
            finally:
                if recording is not None:
                    recording.leave(("side", "mro", cls))
        return found

    def _linear(self, cls: str) -> list[str]:
        """C3 linearisation of the class and its bases of the tree; depth first, left
        to right, where the bases cannot be merged."""
        merged = _c3([[cls], *(self.mro(base) for base in self._bases(cls)),
                      self._bases(cls)])
        if merged is not None:
            return merged
        order: list[str] = []
        todo = [cls]
        while todo and len(order) < 64:
            klass = todo.pop(0)
            if klass not in order:
                order.append(klass)
                todo[:0] = self._bases(klass)
        return order

    def family(self, cls: str) -> list[str]:
        """The class and its subclasses of the tree (what `self` may be in its methods);
        of a class outside test modules, none of theirs: a test's `class MyTrace(Trace)`
        is not what `self` holds in `Trace`'s methods, which library values read."""
        if self._subclasses is None:
            with apart(self.recording, "subclasses"):
                self._subclasses = defaultdict(set)
                for module, (_, facts) in self._names.modules.items():
                    for qualname in facts.classes:
                        if in_tests(module):
                            self._of_tests.add(f"{module}.{qualname}")
                        for base in self._bases(f"{module}.{qualname}"):
                            self._subclasses[base].add(f"{module}.{qualname}")
        leave_out = () if cls in self._of_tests else self._of_tests
        family: list[str] = []
        todo = [cls]
        while todo and len(family) < 256:
            klass = todo.pop()
            if klass not in family:
                if self.recording is not None:  # (the table compared whole: update.py)
                    self.recording.read(("side", "subclasses", klass))
                family.append(klass)
                todo.extend(sorted(self._subclasses.get(klass, set()).difference(leave_out)))
        return family


def _c3(sequences: list[list[str]]) -> list[str] | None:
    """The C3 merge of linearisations (None where they cannot be merged)."""
    sequences = [list(s) for s in sequences if s]
    order = []
    while sequences:
        for sequence in sequences:
            head = sequence[0]
            if not any(head in other[1:] for other in sequences):
                break
        else:
            return None
        order.append(head)
        sequences = [[c for c in s if c != head] for s in sequences]
        sequences = [s for s in sequences if s]
    return order

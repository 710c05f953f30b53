"""The call graph's value flow: what a name, an attribute (of a module, a class or an
instance), a parameter, a return value or a container element may hold, read from
the owners' flow facts (flowtext.py), and so what a call site may call.

Values are the small tuples of flowvalues.py.

It is context-insensitive (a parameter holds what any call site hands it), but for
what a call returns where the function passes a parameter on (boundcalls.py) and the
fields of an instance a module-level name holds (sitefields.py), and demand-driven:
a key's values are computed when a question needs them and memoised, the keys of a
cycle together, each reading the others as nothing (engine.py), so no input recurses
without end, and the order questions come in changes almost nothing (__init__.py).
Expressions are parsed with `ast` only when asked for.

`Flow` puts together the parts, each a mixin of engine.py's `Engine` (the memo and
the evaluation of expressions) in a module of its own: scopes.py (names), members.py
(attributes and classes), containers.py (lists, tuples, sets, dicts), callresults.py
(what calls return), callsites.py (parameters and the call sites that hand them
values), arrays.py (JAX Arrays) and implicitcalls.py (calls no dotted callee names).
"""

from __future__ import annotations

from typing import Any

from jaxmap.flow.arrays import Arrays
from jaxmap.flow.boundcalls import BoundCalls
from jaxmap.flow.callresults import CallResults
from jaxmap.flow.callsites import CallSites
from jaxmap.flow.containers import Containers
from jaxmap.flow.engine import in_tests
from jaxmap.flow.flowfacts import TABLES
from jaxmap.flow.flowvalues import (
    APPLIED_CLOSURE,
    BOUND,
    FN,
    INSTANCE,
    KLASS,
    OUTSIDE,
    PARTIAL_OF,
    ordered_key,
)
from jaxmap.flow.hierarchy import Hierarchy
from jaxmap.flow.implicitcalls import ImplicitCalls
from jaxmap.flow.members import Members
from jaxmap.flow.parsing import (
    argument_texts,
    parameter_names,
    parameters,
    parse_text,
    split_arguments,
)
from jaxmap.flow.recording import FINAL, RecordedNames, Recording, apart, record_tables
from jaxmap.flow.scopes import Scopes
from jaxmap.flow.sitefields import SiteFields
from jaxmap.flow.update import GiveUp, Plan, changed_inputs
from jaxmap.indexing.resolve.names import Names

# The values calls.py reads of the flow's answers, with `Flow`.
__all__ = ["APPLIED_CLOSURE", "BOUND", "FN", "INSTANCE", "KLASS", "OUTSIDE", "PARTIAL_OF",
           "Flow"]


class Flow(ImplicitCalls, CallSites, CallResults, Arrays, Members, Containers, Scopes):
    """Values of keys, and the callables of call sites, over a whole tree."""

    def __init__(self, names: Names, flows: dict[str, dict[str, tuple]]):
        super().__init__(names, flows)
        self.classes = Hierarchy(names, self._bases)
        self._bound = BoundCalls(self)
        self._site_fields = SiteFields(self)

    def record(self) -> Recording:
        """From now on, record what each key, side entry and root reads (recording.py)."""
        recording = self._recording = Recording()
        record_tables(recording, self, TABLES)
        self.names = RecordedNames(recording, self.names)  # type: ignore[assignment]
        self.classes._names = self.names
        self.classes.recording = recording
        return recording

    def again(self, old: Flow) -> None:
        """Solve again from `old`'s recorded solve what this tree's edits reach
        (update.py), recording this one too; GiveUp where it cannot."""
        if old._recording is None:
            raise GiveUp("no recorded solve")
        changed = changed_inputs(old, self)
        changed |= self._tables_changed(old._recording.tables)
        self._plan = Plan(self, old._recording, changed)
        # The literal containers the clean keys wrote; one a key writes again replaces
        # the recorded one (containers.py `_box`): its text may have changed.
        self._literals.update(old._literals)
        self._recorded_literals = set(old._literals)
        sides = old._recording.sides
        self._alias_tags.update(sides["alias"])
        self._of_names.update(sides["of names"])
        self._bound._reads.update(sides["bound"])
        self.classes._mros.update(sides["mro"])
        self.classes.plan = self._plan
        self._plan.keep_sides({"alias": self._alias_tags, "of names": self._of_names,
                               "bound": self._bound._reads, "mro": self.classes._mros})
        self.record().continues(old._recording)

    def _tables_changed(self, before: dict[str, Any]) -> set[int]:
        """The entries of the whole tree's tables its facts alone make (how many of
        each class the text makes, the names of the tree, the subclasses) that differ
        from `before`'s, as inputs (recording.py); made now, before any is read."""
        made = {tests: self._counted(tests) for tests in (False, True)}
        self._made.update(made)
        self.classes.family("")
        now_subclasses = self.classes._subclasses or {}
        changed = set()
        for tests, counted in made.items():
            old = before["made"].get(tests, {})
            changed |= {hash(("side", "made", tests, name)) for name in old.keys() | counted.keys()
                        if (old.get(name, 0) <= 1) != (counted.get(name, 0) <= 1)}
        leaves, top = before["leaves"]
        now = self.named_leaves() | {name for (_m, owner, name) in self._assigned if not owner}
        changed |= {hash(("side", "leaves", name)) for name in (leaves | top) ^ now}
        subclasses, of_tests = before["subclasses"]
        for klass in subclasses.keys() | now_subclasses.keys():
            if subclasses.get(klass, set()) != now_subclasses.get(klass, set()):
                changed.add(hash(("side", "subclasses", klass)))
        if of_tests != self.classes._of_tests:
            raise GiveUp("the test classes differ")
        return changed

    def whole_tables(self) -> dict[str, Any]:
        """The tables of the whole tree the solve read (update.py compares them)."""
        with apart(self._recording, "whole tables"):
            for tests in (False, True):
                if tests not in self._made:
                    self._made[tests] = self._counted(tests)
            if not self._leaves_read:
                self._read_leaves()
            self.classes.family("")
        return {"tables": self.array_tables(), "traced": dict(self.traced()),
                "iteration": self.array_iteration(), "made": dict(self._made),
                "leaves": (self.named_leaves(), set(self._top_names)),
                "subclasses": ({klass: set(found) for klass, found
                                in (self.classes._subclasses or {}).items()},
                               set(self.classes._of_tests))}

    def release(self) -> None:
        """Let go of the parts that hold the flow (reference cycles the collector would
        keep for long in a process that solves again and again), and of an update's
        plan, which holds the flow and the solve it started from."""
        self._plan = None
        for part in ("classes", "_bound", "_site_fields"):
            vars(self).pop(part, None)

    def close(self) -> None:
        """Forget what was computed, and the parsed texts kept for reuse; where it was
        recorded, what an update reads first (recording.py)."""
        if self._plan is not None:
            self._plan.same_tables(self.whole_tables())
        if self._recording is not None:
            self._recording.tables = self.whole_tables()
            self._recording.memos[FINAL] = (dict(self._through_memo), dict(self._direct_memo))
            self._recording.sides = {"alias": dict(self._alias_tags),
                                     "of names": dict(self._of_names),
                                     "bound": dict(self._bound._reads),
                                     "mro": dict(self.classes._mros)}
        self._through_memo.clear()
        self._direct_memo.clear()
        self._sets.clear()
        self._of_names.clear()
        self.release()
        parse_text.cache_clear()
        split_arguments.cache_clear()
        ordered_key.cache_clear()
        parameters.cache_clear()
        parameter_names.cache_clear()
        argument_texts.cache_clear()
        in_tests.cache_clear()

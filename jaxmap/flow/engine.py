"""The value flow's core, which the parts of flow.py build on: the memo of each mode
(parameters holding what call sites hand them, or not), `_eval`, which hands each kind
of expression node to the part that reads it (a name to scopes.py, an attribute to
members.py, a call to callresults.py, a literal or a subscript to containers.py), and
`_cached`, the one way a part computes a key. Keys are visited as Tarjan's algorithm
visits a graph's nodes: the keys a key reads while it is computed are its edges, and
keys that read each other (a strongly connected component: a cycle) are computed once
each, every read of another key of the component answering nothing, and memoised
together when the component closes. So what a key holds is the same whichever key is
asked first: it depends on the components, not on where a question entered them. In
the mode with call sites, a key holds at least what it holds without them. Each part
is a mixin of `Engine`; what one asks of another is declared here, for the type
checker only.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from functools import lru_cache
from typing import TYPE_CHECKING

from jaxmap.flow.flowfacts import FlowFacts
from jaxmap.flow.flowvalues import APPLIED_CLOSURE, BOUND, BOX, FN, INSTANCE, ordered
from jaxmap.flow.parsing import parse_text
from jaxmap.flow.recording import Recording
from jaxmap.indexing.resolve.names import Names
from jaxmap.knowledge.orientation import is_test_module

if TYPE_CHECKING:
    from jaxmap.flow.boundcalls import BoundCalls
    from jaxmap.flow.hierarchy import Hierarchy
    from jaxmap.flow.sitefields import SiteFields
    from jaxmap.flow.update import Plan

_EMPTY: frozenset = frozenset()
# What several parts read.
CALLABLE = frozenset({FN, BOUND, APPLIED_CLOSURE})
FIELDS = "<fields>"  # the sites key of a class's constructions that set its fields
A_NAME = re.compile(r"[A-Za-z_][\w.]*\Z")  # a class named in an annotation (`core.Jaxpr`)
# Whether a module is a test's: what library code holds does not read what a test module
# does (its calls, subclasses, constructions, annotations), test code reads both.
in_tests = lru_cache(maxsize=None)(is_test_module)


class Engine(FlowFacts):
    """The memo, the modes and the evaluation of expressions that the parts share."""

    classes: Hierarchy  # set by flow.py, which has every part
    _bound: BoundCalls
    _site_fields: SiteFields

    def __init__(self, names: Names, flows: dict[str, dict[str, tuple]]):
        super().__init__(names, flows)
        # The memos and tables of every part, here: several parts read each.
        self._through_memo: dict[tuple, frozenset] = {}
        self._direct_memo: dict[tuple, frozenset] = {}
        self._memo = self._through_memo  # the memo of the mode evaluating now
        self._through = True  # whether parameters hold what call sites hand them
        # Tarjan's state: (mode, key) -> index, of each key whose component is open;
        # those keys in the order visited; the low index of each key being computed
        # (below them, one no key reaches); what the keys of open components hold.
        self._open: dict[tuple, int] = {}
        self._component: list[tuple] = []
        self._low: list[float] = [float("inf")]
        self._pending: dict[tuple, frozenset] = {}
        self._visited = 0
        self._holders: dict[tuple, set] = defaultdict(set)  # box -> names that hold it
        # box -> names found holding it in a pass of the call sites, theirs once the
        # pass ends: a site's values do not depend on which sites were read before it
        self._late_holders: dict[tuple, set] = defaultdict(set)
        self._literals: dict[tuple, tuple] = {}  # box -> (module, owner, node) writing it
        self._recorded_literals: set[tuple] = set()  # those an update took from before
        self._sites: dict | None = None  # (owner, def name) -> its call sites: see sites()
        self._traced: dict | None = None  # see traced()
        self._iteration_functions: frozenset | None = None  # see array_iteration()
        self._tables: dict | None = None  # see array_tables()
        self._reading_tables = False
        self._building_sites = False  # fields are read from sites once they are known
        self._leaves: set[str] = set()
        self._leaves_read = False
        self._top_names: set[str] = set()  # names module top levels assign
        self._alias_tags: dict[tuple, frozenset] = {}  # (module, annotation) -> its tags
        # tests counted -> a class's name -> how many the tree makes
        self._made: dict[bool, dict[str, int]] = {}
        self._sets: dict[frozenset, frozenset] = {}  # each value set, kept once
        self._of_names: dict[tuple, frozenset] = {}  # a value of the names', as the flow's
        self._recording: Recording | None = None  # what each key reads, when recorded
        self._plan: Plan | None = None  # what a recorded solve lets this one keep

    def callees(self, module: str, owner: str, text: str, through: bool = True) -> frozenset:
        """The values a call's callee text may hold, in `owner` of `module`; without
        `through`, leaving out what parameters receive from call sites (a higher-order
        function calls whatever any caller hands it: a context-insensitive answer)."""
        expr = parse_text(text)
        if expr is None:
            return _EMPTY
        if through == self._through:
            return self._eval(module, owner, expr)
        return self._in_mode(through, self._eval, module, owner, expr)

    def _in_mode(self, through: bool, function, *args):
        """`function(*args)` with parameters holding what call sites hand them, or not."""
        saved = self._memo, self._through
        self._memo, self._through = (self._through_memo if through else self._direct_memo,
                                     through)
        try:
            return function(*args)
        finally:
            self._memo, self._through = saved

    def _eval(self, module: str, owner: str, node) -> frozenset:
        kind = type(node)
        if kind is ast.Name:
            return self._name(module, owner, node.id)
        if kind is ast.Attribute:
            found: set[tuple] = set()
            receivers = self._eval(module, owner, node.value)
            made = self._site_fields.fields(module, owner, node) \
                if any(v[0] == INSTANCE for v in receivers) else {}
            for value in ordered(receivers):
                # an instance a module-level name holds: its own field (sitefields.py)
                found |= made[value[1]] if value[0] == INSTANCE and value[1] in made \
                    else self._attribute(value, node.attr)
            if not receivers:  # an attribute every class annotating it types alike
                found |= self._annotated(module, node.attr)
            return frozenset(found)
        if kind is ast.Call:
            return self._call(module, owner, node)
        if kind is ast.Subscript:
            return self._elements(self._eval(module, owner, node.value), node.slice)
        if kind in (ast.List, ast.Tuple, ast.Set, ast.Dict):
            return frozenset({(BOX, self._box(module, owner, node))})
        if kind is ast.Lambda:
            return frozenset({(FN, self._qual(module, owner), "<lambda>")})
        if kind is ast.IfExp:
            return self._eval(module, owner, node.body) | self._eval(module, owner, node.orelse)
        if kind is ast.BoolOp:
            found = set()
            for value in node.values:
                found |= self._eval(module, owner, value)
            return frozenset(found)
        if kind is ast.Starred:
            return self._eval(module, owner, node.value)
        if kind in (ast.Await, ast.NamedExpr):
            return self._eval(module, owner, node.value)
        return _EMPTY

    def _value(self, module: str, owner: str, text: str) -> frozenset:
        if text.startswith("<iter> "):
            expr = parse_text(text[7:])
            return self._elements(self._eval(module, owner, expr)) if expr else _EMPTY
        expr = parse_text(text)
        return self._eval(module, owner, expr) if expr is not None else _EMPTY

    def _cached(self, key: tuple, compute) -> frozenset:
        recording = self._recording
        if recording is not None:
            recording.read((self._through, key))
        found = self._memo.get(key)
        if found is not None:
            if self._plan is not None:  # an update's: verified first (update.py)
                self._plan.verify_read((self._through, key))
                found = self._memo.get(key)
                if found is None:
                    return self._cached(key, compute)
            return found
        mode_key = (self._through, key)
        index = self._open.get(mode_key)
        if index is not None:  # a key of the asking key's component: read as nothing
            if self._plan is not None:
                self._plan.read_open(index)
            if index < self._low[-1]:
                self._low[-1] = index
            return _EMPTY
        if self._through:  # with call sites, at least what it holds without them
            direct = self._in_mode(False, self._cached, key, compute)
            computed = compute
            compute = lambda: computed() | direct  # noqa: E731
        index = self._visited
        self._visited += 1
        self._open[mode_key] = index
        self._component.append(mode_key)
        self._low.append(index)
        if recording is not None:
            recording.enter()
            if self._through:
                recording.read((False, key))
        try:
            found = frozenset(compute())
        finally:
            low = self._low.pop()
            if recording is not None:
                recording.leave(mode_key)
        # Most keys hold a set another key holds too (a name, the parameter it is
        # handed to, what a call returns): each is kept once.
        found = self._sets.setdefault(found, found)
        if low < index:  # its component is open: its value waits for it to close
            self._pending[mode_key] = found
            if low < self._low[-1]:
                self._low[-1] = low
            return _EMPTY
        at = len(self._component) - 1
        while self._component[at] is not mode_key:
            at -= 1
        if recording is not None and len(self._component) - at > 1:
            recording.component(self._component[at:])
        for member in self._component[at + 1:]:
            del self._open[member]
            memo = self._through_memo if member[0] else self._direct_memo
            memo[member[1]] = self._pending.pop(member)
        del self._component[at:]
        del self._open[mode_key]
        self._memo[key] = found
        return found

    def _split(self, qualified: str) -> tuple[str, str]:
        module = self.names.module_of(qualified) or ""
        return module, qualified[len(module) + 1:]

    if TYPE_CHECKING:  # what one part asks of another, by the module that defines it
        # scopes.py
        def _name(self, module: str, owner: str, name: str) -> frozenset: ...
        def _global(self, module: str, owner: str, name: str) -> set: ...
        def shadows(self, module: str, owner: str, name: str) -> bool: ...
        def _import_target(self, module: str, owner: str, name: str) -> tuple | None: ...
        def _hold(self, values, name: str) -> None: ...
        # members.py
        def _attribute(self, value: tuple, attr: str) -> frozenset: ...
        def _annotated(self, module: str, attr: str) -> frozenset: ...
        def constructor(self, cls: str) -> str | None: ...
        # callresults.py
        def _call(self, module: str, owner: str, node: ast.Call) -> frozenset: ...
        def _is_partial(self, module: str, owner: str, callee) -> bool: ...
        def names_outside(self, module: str, owner: str, callee) -> bool: ...
        def results(self, value: tuple) -> frozenset: ...
        # containers.py
        def _box(self, module, owner, node, named: str | None = None) -> tuple: ...
        def _elements(self, values: frozenset, index=None) -> frozenset: ...
        def _stored(self, box: tuple) -> frozenset: ...
        def _written(self, box: tuple) -> frozenset: ...
        # arrays.py
        def _plainly_array(self, module: str, owner: str, name: str) -> bool: ...
        def plainly_array_expression(self, module: str, owner: str, node) -> bool: ...
        def held_array(self, module: str, owner: str, name: str, value) -> bool: ...
        def array_of(self, value: tuple) -> frozenset: ...
        def iterated_array(self, module: str, owner: str, text: str,
                           value: str | None = None) -> bool: ...
        def array_iteration(self) -> frozenset: ...
        def _array_member(self, attr: str) -> set: ...
        def _table_entry(self, table: str, key: str) -> frozenset: ...
        def array_tables(self) -> dict[str, dict[str, frozenset]]: ...
        # callsites.py
        def _argument(self, module: str, owner: str, def_name: str, index: int,
                      param: str, tests: bool = False) -> set: ...
        def handing(self, module: str, owner: str, def_name: str,
                    tests: bool = False) -> list: ...
        def _handed_once(self, module: str, owner: str, def_name: str, index: int,
                         param: str) -> bool: ...
        def sites(self, progress=None) -> dict: ...

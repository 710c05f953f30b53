"""What one call returns, read with the called function's parameters bound to what
that call hands them (flow.py asks): `maybe_auto_axes(_normal, ...)` returns a
partial of `_normal`, not of every function any caller hands `maybe_auto_axes`.

Only functions whose returns may give back what a parameter holds are read so (the
parameter, a partial of it, a closure defined there, or a call handing it to such a
function, directly or through a local); nested calls are followed a few levels deep
(`_MAX_NESTING`), then answered as the flow answers them, without their context.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, NamedTuple

from jaxmap.flow.flowvalues import (
    APPLIED_CLOSURE,
    BOUND,
    FN,
    PARTIAL_OF,
    ordered,
)
from jaxmap.flow.parsing import dotted_text, names_in, parameter_names, parameters, parse_text
from jaxmap.indexing.facts import FUNC

if TYPE_CHECKING:
    from jaxmap.flow.flow import Flow

_MAX_NESTING = 3
_EMPTY: frozenset = frozenset()
# What a closure's maker may be handed that calling the closure calls.
_HANDED = frozenset({FN, BOUND, PARTIAL_OF})


class Reads(NamedTuple):
    """How a function's returns pass its parameters on: where its text is (module,
    owner), its signature's text, and the names that carry a parameter's value."""

    module: str
    owner: str
    params: str
    carriers: frozenset[str]


class BoundCalls:
    """What calls return, each with its own arguments."""

    def __init__(self, flow: Flow):
        self.flow = flow
        self._reads: dict[tuple, Reads | None] = {}
        self._busy: set[tuple] = set()  # locals being read in this read: a cycle reads none
        self._solve: _Solve | None = None  # the functions' reads being solved now

    def results(self, value: tuple, node: ast.Call, argument: Callable[[ast.AST], frozenset]
                ) -> frozenset:
        """What calling `value` at `node` returns; `argument` evaluates an argument's
        node where the call is written. A closure the called function made calls what
        the call handed it (`_defer("+", ufuncs.add)`), as a partial would: it is an
        applied closure, read with what its maker's parameters were handed.
        A read starts with no local busy: the flow asks it for a key of its memo
        (callresults.py), maybe while reading another call of the same function, and
        what a key holds must not depend on which read was under way when it was asked."""
        busy, self._busy = self._busy, set()
        try:
            return self._results(value, node, argument, 0)
        finally:
            self._busy = busy

    def _results(self, value: tuple, node: ast.Call,
                 argument: Callable[[ast.AST], frozenset], nesting: int) -> frozenset:
        flow = self.flow
        reads = self.reads(value) if nesting < _MAX_NESTING else None
        if value[0] in (FN, BOUND) and self._closure(value):
            # A closure no call is known to have made with its functions (a cycle cut
            # its maker's arguments): what it returns of its own, not what every
            # function its maker wraps returns (`api_boundary`'s wrapper: seventeen),
            # and what it gives back of its own parameters (`wraps(f)`'s wrapper).
            found = flow.own_results(value)
            if reads is not None:
                found |= self._returns_bound(reads, value, node, argument,
                                             self._maker_own(value, reads), nesting)
        elif reads is None:
            found = flow.results(value)  # what it returns does not depend on this call
        else:
            handed = dict(value[3]) if value[0] == APPLIED_CLOSURE else {}
            found = self._returns_bound(reads, value, node, argument, handed, nesting) \
                | flow.annotated_results(value)
        if value[0] not in (FN, BOUND) or not any(_made_by(r, value) for r in found):
            return found
        signature = flow._signatures.get((value[1], value[2]))
        if signature is None:
            return found
        module, owner, params = signature
        maker = _LazyBindings(flow, Reads(module, owner, params, frozenset()), value, node,
                              argument)
        given = tuple((param, held) for param in sorted(maker.given())
                      if (held := frozenset(v for v in maker[param] if v[0] in _HANDED)))
        if not given:
            return found
        return frozenset((APPLIED_CLOSURE, r[1], r[2], given) if _made_by(r, value) else r
                         for r in found)

    def _returns_bound(self, reads: Reads, value: tuple, node: ast.Call,
                       argument: Callable[[ast.AST], frozenset], handed: dict, nesting: int
                       ) -> frozenset:
        """What a function's returns give, its parameters bound to what the call at
        `node` hands them (`handed`: its maker's, for a closure)."""
        bindings = _LazyBindings(self.flow, reads, value, node, argument, handed)
        found: frozenset = frozenset()
        for _module, _owner, text, guard in self.flow._returns.get((value[1], value[2]), ()):
            if guard is None or not bindings.hands(guard):  # (`if f is None: return`)
                found |= self._text(reads, text, bindings, nesting)
        return found

    def _maker_own(self, value: tuple, reads: Reads) -> dict:
        """The parameters of a closure's maker, each holding only its own default and
        annotation (what `own_results` reads), where the closure's do not hide them."""
        flow = self.flow
        signature = flow._signatures.get((value[1], value[1].rpartition(".")[2]))
        if signature is None:
            return {}
        module, owner, params = signature
        own = {param for param, _index in parameter_names(reads.params)}
        return {param: flow._in_mode(False, flow._name, module, owner, param)
                for param, _index in parameter_names(params) if param not in own}

    def _closure(self, value: tuple) -> bool:
        """Whether a function value is defined inside another function."""
        own = value[1].rpartition(".")[2]
        return own != value[2] and value[1] not in self.flow.names.modules \
            and (value[1], own) in self.flow._signatures

    def reads(self, value: tuple) -> Reads | None:
        """How the returns of a function value pass its parameters on; None if they
        do not."""
        if value[0] == APPLIED_CLOSURE:
            handed = tuple(param for param, _held in value[3])
            closure = (value[1], value[2], handed)
            return self._entry(closure, lambda: self._read_closure(value[1], value[2], handed))
        if value[0] not in (FN, BOUND):
            return None
        key = (value[1], value[2])
        self._noted(key)
        if key in self._reads:
            return self._reads[key]
        if self._solve is not None:  # asked while a function's reading is solved
            return self._solve.ask(key)
        self._solve = _Solve(key)
        try:
            while (reading := self._solve.next()) is not None:
                self._solve.found(reading, self._framed(reading, self._read))
            self._reads.update(self._solve.reads)
        finally:
            self._solve = None
        return self._reads[key]

    def _entry(self, key: tuple, read) -> Reads | None:
        """The entry of `key`, read once."""
        self._noted(key)
        if key not in self._reads:
            self._reads[key] = self._framed(key, lambda _key: read())
        return self._reads[key]

    def _noted(self, key: tuple) -> None:
        """Where the flow's reads are recorded (recording.py), each entry is a side
        table's, read by the frame under way, verified first on an update."""
        recording = self.flow._recording
        if recording is not None:
            recording.read(("side", "bound", key))
            if self.flow._plan is not None:
                self.flow._plan.verify_read(("side", "bound", key))

    def _framed(self, key: tuple, read: Callable[[tuple], Reads | None]) -> Reads | None:
        """`read(key)`, a frame of its own where the flow's reads are recorded (read
        again in a solve, what it read the last time)."""
        recording = self.flow._recording
        if recording is None:
            return read(key)
        recording.enter()
        try:
            return read(key)
        finally:
            recording.leave(("side", "bound", key))

    def _read_closure(self, qual: str, name: str, handed: tuple[str, ...]) -> Reads | None:
        """A closure's returns read with what its maker's parameters `handed` hold:
        wherever they name them (`return fun(*args, **kwargs)`)."""
        flow = self.flow
        signature = flow._signatures.get((qual, name))
        if signature is None or not flow._returns.get((qual, name)):
            return None
        module, owner, params = signature
        carriers = {*handed, *(param for param, _index in parameter_names(params))}
        return Reads(module, owner, params, frozenset(carriers))

    def _read(self, key: tuple) -> Reads | None:
        flow = self.flow
        signature, returns = flow._signatures.get(key), flow._returns.get(key, ())
        if signature is None or not returns:
            return None
        module, owner, params = signature
        carriers = {name for name, _index in parameter_names(params)}
        if not carriers:
            return None
        nested = {name for name, _line in flow._defs.get((module, owner), ())} - {key[1]}
        assigned = [(name, text) for name in flow._locals.get((module, owner), ())
                    for _kind, text, *_line in flow._assigned.get((module, owner, name), ())]
        grown = True
        while grown:  # a local assigned what passes a parameter on passes it on too
            grown = False
            for name, text in assigned:
                if name not in carriers and self._passes(module, owner, text, carriers, nested):
                    carriers.add(name)
                    grown = True
        if not any(self._passes(module, owner, text, carriers, nested)
                   for _m, _o, text, _guard in returns):
            return None
        return Reads(module, owner, params, frozenset(carriers))

    def _passes(self, module: str, owner: str, text: str, carriers: set, nested: set) -> bool:
        """Whether a value's text may give back what a parameter holds, as written: the
        parameter, a partial of it, a closure defined here, or a call handing it to a
        function of the tree that passes it on (`auto_axes(f_, ...)`)."""
        expr = parse_text(text.removeprefix("<iter> "))
        return expr is not None and self._passing(module, owner, expr, carriers, nested)

    def _passing(self, module: str, owner: str, node, carriers: set, nested: set) -> bool:
        kind = type(node)
        if kind is ast.Name:
            return node.id in carriers or node.id in nested
        if kind is ast.Lambda:
            return True
        if kind is ast.IfExp:
            return any(self._passing(module, owner, n, carriers, nested)
                       for n in (node.body, node.orelse))
        if kind is ast.BoolOp:
            return any(self._passing(module, owner, n, carriers, nested) for n in node.values)
        if kind is not ast.Call:
            return False
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if not any(isinstance(a, ast.Name) and a.id in carriers
                   or isinstance(a, ast.Starred) and isinstance(a.value, ast.Name)
                   and a.value.id in carriers for a in arguments):
            return False
        if self.flow.names_outside(module, owner, node.func):
            return True  # what code outside the tree makes may hold it (callresults.py)
        if isinstance(node.func, ast.Call) and self._passing(module, owner, node.func,
                                                             carriers, nested):
            return True  # `wraps(f)(g)`: what a call passing it on made may give g back
        callee = dotted_text(node.func)
        if callee is None:
            return False
        if callee.rpartition(".")[2] == "partial":
            return True
        target = self.flow.names.lookup(callee, module, owner)
        if target[0] != FUNC:
            return False
        return self.reads((FN, f"{target[1]}.{target[2]}", target[2].rpartition(".")[2])) \
            is not None

    def _text(self, reads: Reads, text: str, bindings: _LazyBindings, nesting: int
              ) -> frozenset:
        """A value's text (`<iter> xs`: an item of xs), its parameters bound."""
        iterated = text.startswith("<iter> ")
        expr = parse_text(text[7:] if iterated else text)
        if expr is None:
            return _EMPTY
        values = self._evaluate(reads, expr, bindings, nesting)
        return self.flow._elements(values) if iterated else values

    def _evaluate(self, reads: Reads, node, bindings: _LazyBindings, nesting: int) -> frozenset:
        """A node of the function's text, its parameters bound."""
        flow, module, owner = self.flow, reads.module, reads.owner
        kind = type(node)
        if kind is ast.Name:
            return self._name(reads, node.id, bindings, nesting)
        if names_in(node).isdisjoint(reads.carriers):
            return flow._eval(module, owner, node)
        if kind is ast.Call:
            return self._call(reads, node, bindings, nesting)
        if kind is ast.Attribute:
            found: set[tuple] = set()
            for value in ordered(self._evaluate(reads, node.value, bindings, nesting)):
                found |= flow._attribute(value, node.attr)
            return frozenset(found)
        if kind is ast.Subscript:
            return flow._elements(self._evaluate(reads, node.value, bindings, nesting),
                                  node.slice)
        if kind is ast.IfExp:
            return self._evaluate(reads, node.body, bindings, nesting) \
                | self._evaluate(reads, node.orelse, bindings, nesting)
        if kind is ast.BoolOp:
            return frozenset().union(*(self._evaluate(reads, v, bindings, nesting)
                                       for v in node.values))
        if kind in (ast.Starred, ast.Await, ast.NamedExpr):
            return self._evaluate(reads, node.value, bindings, nesting)
        return flow._eval(module, owner, node)

    def _name(self, reads: Reads, name: str, bindings: _LazyBindings, nesting: int
              ) -> frozenset:
        flow, module, owner = self.flow, reads.module, reads.owner
        if name in bindings:
            return bindings[name]
        key = (module, owner, name)
        if name not in reads.carriers or key in self._busy:
            return flow._name(module, owner, name)
        found: set[tuple] = set()
        self._busy.add(key)
        try:
            for kind, text, *_line in flow._assigned.get(key, ()):
                values = self._text(reads, text, bindings, nesting)
                found |= flow._elements(values) if kind == "elements" else values
        finally:
            self._busy.discard(key)
        return frozenset(found)

    def _call(self, reads: Reads, node: ast.Call, bindings: _LazyBindings, nesting: int
              ) -> frozenset:
        flow = self.flow

        def argument(arg) -> frozenset:
            return self._evaluate(reads, arg, bindings, nesting)

        partials = flow.partial_of(reads.module, reads.owner, node, argument)
        if partials is not None:
            return partials
        found: set[tuple] = set()
        callees = argument(node.func)
        for value in ordered(callees):
            found |= self._results(value, node, argument, nesting + 1)
        found |= flow.made_outside(reads.module, reads.owner, node, callees, argument)
        return frozenset(found)


class _Solve:
    """How the returns of a function, and of each function its reading asks of, pass
    their parameters on: one least fixed point. Each function is read once, those it
    asks of that are being solved taken as passing nothing on until their reading says
    otherwise, and read again whenever one it asked of passes more on, until none
    does: what each passes on does not depend on which was asked first (a recursion
    cut at whichever was first had made the others pass nothing on)."""

    def __init__(self, key: tuple):
        self.reads: dict[tuple, Reads | None] = {key: None}
        self._askers: dict[tuple, set[tuple]] = {key: set()}
        self._unread: dict[tuple, None] = {key: None}  # (in the order they came)
        self._reading = key

    def ask(self, key: tuple) -> Reads | None:
        """What a function passes on so far, asked by the one being read."""
        if key not in self.reads:
            self.reads[key], self._askers[key] = None, set()
            self._unread[key] = None
        self._askers[key].add(self._reading)
        return self.reads[key]

    def next(self) -> tuple | None:
        """The next function to read, or None once none is left."""
        if not self._unread:
            return None
        self._reading = next(iter(self._unread))
        del self._unread[self._reading]
        return self._reading

    def found(self, key: tuple, reads: Reads | None) -> None:
        """What reading a function found: those that asked of it are read again if it
        is more than it was."""
        if reads != self.reads[key]:
            self.reads[key] = reads
            self._unread.update(dict.fromkeys(self._askers[key]))


class _LazyBindings:
    """A call's parameters -> what it hands them, each evaluated when first read; a
    parameter it does not hand holds its default (or, without one, what the flow says,
    or nothing where the call forwards `*args`/`**kwargs`).
    `handed`: parameters of an applied closure's maker -> what they were handed."""

    def __init__(self, flow: Flow, reads: Reads, value: tuple, node: ast.Call,
                 argument: Callable[[ast.AST], frozenset], handed: dict | None = None):
        self._flow, self._argument, self._reads = flow, argument, reads
        self._given: dict[str, ast.AST] = {}
        self._values: dict[str, frozenset] = dict(handed or {})
        first = 1 if value[0] == BOUND else 0
        starred = next((i for i, a in enumerate(node.args) if isinstance(a, ast.Starred)),
                       len(node.args))
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        names = parameter_names(reads.params)
        for param, index in names:
            if param in keywords:
                self._given[param] = keywords[param]
            elif index >= first and index - first < starred:
                self._given[param] = node.args[index - first]
        self._names = {param for param, _index in names} | self._values.keys()
        # `f(*args, **kwargs)`: what it forwards is not followed; a parameter it may
        # fill holds nothing here, not what every call hands it.
        self._forwards = starred < len(node.args) or any(k.arg is None for k in node.keywords)

    def given(self) -> list[str]:
        """The parameters the call hands an argument."""
        return list(self._given)

    def hands(self, name: str) -> bool:
        """Whether the call hands parameter `name` something other than None."""
        given = self._given.get(name)
        return given is not None and not (isinstance(given, ast.Constant)
                                          and given.value is None)

    def __contains__(self, name: str) -> bool:
        return name in self._names

    def __getitem__(self, name: str) -> frozenset:
        if name not in self._values:
            given = self._given.get(name)
            self._values[name] = self._argument(given) if given is not None \
                else self._default(name)
        return self._values[name]

    def _default(self, name: str) -> frozenset:
        flow, reads = self._flow, self._reads
        for param, default, _annotation in parameters(reads.params):
            if param == name and default:
                return flow._value(reads.module, reads.owner, default)
        if self._forwards and name not in ("self", "cls"):
            return _EMPTY
        return flow._name(reads.module, reads.owner, name)


def _made_by(result: tuple, value: tuple) -> bool:
    """Whether a returned value is a closure the called function `value` defines."""
    return result[0] == FN and result[1] == value[1] and result[2] != value[2]

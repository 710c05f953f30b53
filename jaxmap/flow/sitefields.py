"""Fields of an instance a module-level name holds, read at the call that made it (flow.py
asks): `negative = ufunc(_negative)` and `add = ufunc(_add)`, then `negative.func` is
`_negative` alone, not every function any construction hands `ufunc`.

The made instance's field is what its class's `__init__` assigns it, the constructor's
parameters bound to what that call hands them (boundcalls.py binds them), or what a
`property(lambda self: ...)` of the class gives, read the same way. A name assigned what
a factory returns (`@unary_ufunc def negative`: `unary_ufunc(negative)`, whose return is
`ufunc(func_jit, ...)`) is read through the factory's return, its parameters bound in
turn, a few levels deep. Only fields no other code sets are read so: one a method or code
elsewhere assigns (`x.func = g`) may differ from what the construction gave it.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable

from jaxmap.flow.boundcalls import Reads, _LazyBindings
from jaxmap.flow.flowvalues import APPLIED_CLOSURE, BOUND, FN, KLASS, MOD, ordered
from jaxmap.flow.parsing import dotted_text, parameter_names, parse_text

if TYPE_CHECKING:
    from jaxmap.flow.flow import Flow

_MAX_NESTING = 3
_EMPTY: frozenset = frozenset()
Evaluate = Callable[[ast.AST], frozenset]


class SiteFields:
    """Fields of module-level instances, each read at its own construction."""

    def __init__(self, flow: Flow):
        self.flow = flow

    def fields(self, module: str, owner: str, node: ast.Attribute) -> dict[str, frozenset]:
        """class -> what `node` (`name.attr`, `mod.name.attr`) holds where the instance of
        that class is one a module-level name holds; empty where the name is no such
        instance's, or its construction tells nothing of `attr`."""
        site = self._module_name(module, owner, node.value)
        if site is None:
            return {}
        # Parameters hold only what this construction hands them, not every caller's.
        flow = self.flow
        return dict(flow._in_mode(False, flow._cached, ("site fields", *site, node.attr),
                                  lambda: self._read(*site, node.attr).items()))

    def _module_name(self, module: str, owner: str, node) -> tuple[str, str] | None:
        """(module, name) of the module-level name of the tree that `node` reads, followed
        through imports (`jnp.negative`: where jax.numpy imports it from)."""
        flow = self.flow
        site: tuple[str, str] | None
        if isinstance(node, ast.Name):
            if owner and node.id in flow._locals.get((module, owner), ()):
                return None
            site = flow._import_target(module, owner, node.id) or (module, node.id)
        elif isinstance(node, ast.Attribute) and dotted_text(node) is not None:
            heads = flow._eval(module, owner, node.value)
            if len(heads) != 1 or next(iter(heads))[0] != MOD:
                return None
            site = (next(iter(heads))[1], node.attr)
        else:
            return None
        for _ in range(_MAX_NESTING):
            if site is None or (site[0], "", site[1]) in flow._assigned:
                return site
            site = flow._import_target(site[0], "", site[1])
        return None

    def _read(self, module: str, name: str, attr: str) -> dict[str, frozenset]:
        """class -> `attr` of what each construction assigned to `module.name` makes."""
        assigned = self.flow._assigned.get((module, "", name), ())
        calls = [parse_text(text) for kind, text, *_line in assigned if kind == "value"]
        if not calls or len(calls) != len(assigned) \
                or not all(isinstance(c, ast.Call) for c in calls):
            return {}
        found: dict[str, frozenset] = {}
        for call in calls:
            made = self._made(call, lambda n: self.flow._eval(module, "", n), attr, (), 0)
            for cls, values in made.items():
                found[cls] = found.get(cls, _EMPTY) | values
        return {cls: values for cls, values in found.items() if values}

    def _made(self, call: ast.Call, evaluate: Evaluate, attr: str, path: tuple,
              nesting: int) -> dict[str, frozenset]:
        """class -> `attr` (then subscripted by `path`'s keys) of what `call` makes:
        a construction's, or a factory's whose return makes it."""
        flow = self.flow
        found: dict[str, frozenset] = {}
        for value in ordered(evaluate(call.func)):
            if value[0] == KLASS:
                field = self._constructed(value[1], call, evaluate, attr, path, nesting)
                if field:
                    found[value[1]] = found.get(value[1], _EMPTY) | field
            elif value[0] in (FN, APPLIED_CLOSURE) and nesting < _MAX_NESTING:
                bound = self._bound(value, call, evaluate)
                if bound is None:
                    continue
                for _m, _o, text, _guard in flow._returns.get((value[1], value[2]), ()):
                    returned = parse_text(text)
                    if isinstance(returned, ast.Call):
                        for cls, field in self._made(returned, bound, attr, path,
                                                     nesting + 1).items():
                            found[cls] = found.get(cls, _EMPTY) | field
        return found

    def _bound(self, value: tuple, call: ast.Call, evaluate: Evaluate) -> Evaluate | None:
        """How nodes of a function's text evaluate, its parameters (and the locals read
        from them) bound to what `call` hands them."""
        flow = self.flow
        signature = flow._signatures.get((value[1], value[2]))
        if signature is None:
            return None
        module, owner, params = signature
        carriers = {param for param, _index in parameter_names(params)}
        carriers.update(flow._locals.get((module, owner), ()))
        reads = Reads(module, owner, params, frozenset(carriers))
        handed = dict(value[3]) if value[0] == APPLIED_CLOSURE else None  # its maker's
        bindings = _LazyBindings(flow, reads, value, call, evaluate, handed)
        # Its calls read as the flow reads one written there, at the first level of
        # bound reads (`jit(func)`'s returns, bound): a level down, the reads deeper in
        # would stop sooner and give what every caller hands those functions.
        return lambda node: flow._bound._evaluate(reads, node, bindings, -1)

    def _constructed(self, cls: str, call: ast.Call, evaluate: Evaluate, attr: str,
                     path: tuple, nesting: int) -> frozenset:
        """`attr` of the instance of `cls` that `call` makes, where only its `__init__`
        or a property of its class sets it."""
        flow = self.flow
        init = flow.constructor(cls)
        mro = flow.classes.mro(cls)
        if nesting > _MAX_NESTING or init is None or flow._foreign.get(attr) or any(
                f"{flow._split(klass)[1]}.{attr}" in flow.names.facts(flow._split(klass)[0]).funcs
                for klass in mro):
            return _EMPTY
        writers = [w for klass in mro for w in flow._attrs.get((klass, attr), ())]
        in_init = flow._split(init)
        if not writers or any((m, o) != in_init and _property_getter(text) is None
                              for m, o, text in writers):
            return _EMPTY
        found: set[tuple] = set()
        for module, owner, text in writers:
            if (module, owner) != in_init:
                found |= self._through_getter(cls, call, evaluate, _property_getter(text),
                                              path, nesting)
                continue
            bound = self._bound((BOUND, init, "__init__"), call, evaluate)
            node = parse_text(text)
            if bound is not None and node is not None:
                found |= _subscripted(node, path, bound, flow._elements)
        return frozenset(found)

    def _through_getter(self, cls: str, call: ast.Call, evaluate: Evaluate, getter,
                        path: tuple, nesting: int) -> frozenset:
        """What a property's getter body (`self.__props['func']`) gives of the instance
        `call` makes: a field of `self`, subscripted by constant keys."""
        keys: list = []
        node = getter
        while isinstance(node, ast.Subscript):
            keys.append(node.slice)
            node = node.value
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id == "self"):
            return _EMPTY
        return self._constructed(cls, call, evaluate, node.attr, (*reversed(keys), *path),
                                 nesting + 1)


def _property_getter(text: str):
    """The body of the lambda a class attribute's `property(lambda self: ...)` reads."""
    node = parse_text(text)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "property" and node.args \
            and isinstance(node.args[0], ast.Lambda):
        return node.args[0].body
    return None


def _subscripted(node, path: tuple, evaluate: Evaluate, elements) -> frozenset:
    """`node` subscripted by `path`'s key nodes: a dict written there, by its entry of
    that key; else what evaluating it gives, subscripted."""
    for i, key in enumerate(path):
        entry = _entry(node, key)
        if entry is None:
            values = evaluate(node)
            for rest in path[i:]:
                values = elements(values, rest)
            return values
        node = entry
    return evaluate(node)


def _entry(node, key):
    """The value node of a dict literal's entry under the constant `key`, if any."""
    if not (isinstance(node, ast.Dict) and isinstance(key, ast.Constant)):
        return None
    for k, v in zip(node.keys, node.values):
        if isinstance(k, ast.Constant) and k.value == key.value:
            return v
    return None

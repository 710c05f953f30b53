"""What calls return, the value flow's part for them (flow.py): the value of a call
expression (`super()`, `functools.partial(f, ...)`, `typing.cast`, a container's
`get`/`pop`/`items`, a pytree's flatten and unflatten, else what each value the callee
holds returns, read with this call's own arguments where its returns pass them on:
boundcalls.py), and what calling a value returns: what its returns give, and what its
return annotation says (an Array, or an instance of a class of the tree that is no
Protocol).
"""

from __future__ import annotations

import ast
from typing import Callable

from jaxmap.flow.engine import A_NAME, CALLABLE, Engine
from jaxmap.flow.flowfacts import DEF_MARK, alternatives
from jaxmap.flow.flowvalues import (
    APPLIED_CLOSURE,
    BOUND,
    BOX,
    FN,
    INSTANCE,
    KLASS,
    OUTSIDE,
    PARTIAL_OF,
    SUPER,
    TREEDEF,
    ordered,
)
from jaxmap.flow.parsing import dotted_text, unparsed
from jaxmap.indexing.facts import NAME, SYM
from jaxmap.knowledge import registrars as R

_EMPTY: frozenset = frozenset()
_PARTIAL_OF_WHAT = CALLABLE | {KLASS, PARTIAL_OF}  # what `partial(f, ...)` may wrap
_HANDED_OUT = CALLABLE | {PARTIAL_OF}  # what an object made outside the tree may call back
_PARTIAL = (SYM, R.PARTIAL)  # functools.partial, as the names read it
_CAST = (SYM, "typing.cast")
# A container's methods that give back its elements (`d.get(k, default)`, `d.items()`).
_ELEMENT_READS = frozenset({"get", "pop", "setdefault", "values", "items"})


class CallResults(Engine):
    """What call expressions give, and what calling a value returns."""

    def _call(self, module: str, owner: str, node: ast.Call) -> frozenset:
        found = set()
        callee = node.func
        if isinstance(callee, ast.Name) and callee.id == "super" and owner:
            cls = self._class_of(module, owner)
            if cls is not None:
                return frozenset({(SUPER, f"{module}.{cls}")})
        partials = self.partial_of(module, owner, node,
                                   lambda arg: self._eval(module, owner, arg))
        if partials is not None:
            return partials
        if len(node.args) == 2 and getattr(callee, "attr", getattr(callee, "id", None)) == \
                "cast" and self._names_symbol(module, owner, callee) == _CAST:
            return self._eval(module, owner, node.args[1])  # `cast(T, x)` is x
        if isinstance(callee, ast.Attribute) and callee.attr in _ELEMENT_READS:
            found |= self._element_read(module, owner, node, callee)
        callees = self._eval(module, owner, callee)
        for value in ordered(callees):
            found |= self._results_of_call(module, owner, node, value)
        found |= self.made_outside(module, owner, node, callees,
                                   lambda arg: self._unless_parameter(module, owner, arg))
        return frozenset(found)

    def made_outside(self, module: str, owner: str, node: ast.Call, callees: frozenset,
                     argument: Callable[[ast.AST], frozenset]) -> frozenset:
        """What a call of code outside the tree gives, `callees` what its callee holds:
        an object that may call back each callable the call hands it (`wraps(f)(g)`, a
        native `jit` handed `fun` and its `cache_miss`), since code the tree cannot read
        may keep what it is given and call it. Its callee is such code where it holds an
        object such a call made, or, holding no value of the flow's, is written as a name
        imported from outside the tree or a call of one (`functools.lru_cache(n)`)."""
        if not any(v[0] == OUTSIDE for v in callees) and \
                (callees or not self.names_outside(module, owner, node.func)):
            return _EMPTY
        found = set()
        for arg in (*node.args, *(k.value for k in node.keywords)):
            if _decorated_def(arg):
                continue  # `@functools.wraps(f) def g`: g holds its def already (scopes.py)
            for value in argument(arg):
                if value[0] == OUTSIDE:
                    found.add(value)
                elif value[0] in _HANDED_OUT:
                    found.add((OUTSIDE, value))
        return frozenset(found)

    def _unless_parameter(self, module: str, owner: str, arg) -> frozenset:
        """An argument's values, none for a parameter where it holds what every caller
        hands it: no callback of this call's (bound reading, boundcalls.py, hands it its
        own)."""
        if self._through and isinstance(arg, ast.Name) and (module, owner, arg.id) in self._params:
            return _EMPTY
        return self._eval(module, owner, arg)

    def names_outside(self, module: str, owner: str, callee) -> bool:
        """Whether a callee expression names code outside the tree, as written: a name
        an import binds there (not a builtin, a local or a name of the tree), or a call
        of one."""
        while isinstance(callee, ast.Call):
            callee = callee.func
        text = dotted_text(callee)
        if text is None:
            return False
        head = text.partition(".")[0]
        if owner and self.shadows(module, owner, head) \
                or self.names.import_target(head, module, owner) is None:
            return False
        found = self.names.lookup(text, module, owner)
        return found[0] == SYM and self.names.module_of(found[1]) is None

    def _element_read(self, module: str, owner: str, node: ast.Call, callee) -> set:
        """`d.get(k, default)`, `d.pop(k)`, `d.setdefault(k, v)`, `d.values()`,
        `d.items()` of a container the flow knows: its elements (of the constant key
        `k` where one is given), and the default. An item of `items()` is taken as its
        value: what a loop unpacks from it is what the container holds."""
        boxes = frozenset(v for v in self._eval(module, owner, callee.value) if v[0] == BOX)
        if not boxes:
            return set()
        keyed = callee.attr in ("get", "pop", "setdefault") and node.args
        found = set(self._elements(boxes, node.args[0] if keyed else None))
        if keyed and len(node.args) > 1:
            found |= self._eval(module, owner, node.args[1])
        return found

    def partial_of(self, module: str, owner: str, node: ast.Call,
                   argument: Callable[[ast.AST], frozenset]) -> frozenset | None:
        """What a `functools.partial(f, ...)` call makes, `argument` evaluating f's node
        (where the call is written, or with a call's parameters bound: boundcalls.py);
        None if `node` is no such call."""
        callee = node.func
        if not node.args or getattr(callee, "attr", getattr(callee, "id", None)) != "partial" \
                or not self._is_partial(module, owner, callee):
            return None
        return frozenset((PARTIAL_OF, value, len(node.args) - 1)
                         for value in ordered(argument(node.args[0]))
                         if value[0] in _PARTIAL_OF_WHAT)

    def _is_partial(self, module: str, owner: str, callee) -> bool:
        """Whether a callee expression names `functools.partial`."""
        return self._names_symbol(module, owner, callee) == _PARTIAL

    def _names_symbol(self, module: str, owner: str, callee) -> tuple | None:
        """What the names make of a dotted callee expression."""
        text = dotted_text(callee)
        return None if text is None else self.names.lookup(text, module, owner)

    def _results_of_call(self, module: str, owner: str, node: ast.Call, value: tuple
                         ) -> frozenset:
        """What one call of a value returns, read with what this call hands it where
        the function's returns pass its parameters on (`def export(fn): ...; return
        fn`), not what every call does (or each decorated name would hold every
        function): see boundcalls.py."""
        def argument(arg) -> frozenset:
            return self._eval(module, owner, arg)

        if value[0] == PARTIAL_OF and value[2] == 0:  # `partial(jit, inline=True)(f)`
            return self._results_of_call(module, owner, node, value[1])
        if value[0] == FN and value[1] in R.PYTREES_BY_NAME:
            return self._pytree(module, owner, node, R.PYTREES_BY_NAME[value[1]])
        if self._bound.reads(value) is None:  # the same for every call: no memo of its own
            return self._bound.results(value, node, argument)
        return self._cached(("results of call", module, owner, value, unparsed(node)),
                            lambda: self._bound.results(value, node, argument))

    def _pytree(self, module: str, owner: str, node: ast.Call, role: str) -> frozenset:
        """`tree_flatten(x)`: the structure of each instance x holds (what unpacking the
        pair gives, its leaves taken as it); `tree_unflatten(structure, leaves)`: the
        instances those structures were taken from."""
        held = self._eval(module, owner, node.args[0]) if node.args else _EMPTY
        if role == R.FLATTEN:
            return frozenset((TREEDEF, v) for v in held if v[0] == INSTANCE)
        return frozenset(v[1] for v in held if v[0] == TREEDEF)

    def results(self, value: tuple) -> frozenset:
        """What calling a value returns: what its returns give, and what its return
        annotation says (`annotated_results`)."""
        tag = value[0]
        if tag == PARTIAL_OF:
            return self.results(value[1])
        if tag == KLASS:
            return frozenset({(INSTANCE, value[1])})
        if tag in (FN, BOUND, APPLIED_CLOSURE):
            return self._cached(("returned", value[1], value[2]),
                                lambda: self._returned(value[1], value[2])) \
                | self.annotated_results(value)
        return _EMPTY

    def own_results(self, value: tuple) -> frozenset:
        """What calling a value returns, its parameters (and its maker's) holding only
        their defaults and annotations, not what call sites hand them."""
        return self._in_mode(False, self.results, value) if self._through \
            else self.results(value)

    def annotated_results(self, value: tuple) -> frozenset:
        """What a function's return annotation says it returns: an Array (`array_of`),
        or an instance of a class of the tree (`-> Foo`, `-> Foo | None`)."""
        found = self.array_of(value)
        if value[0] in (FN, BOUND) and (value[1], value[2]) in self._return_annotations:
            found |= self._cached(("annotated", value[1], value[2]),
                                  lambda: self._instances_annotated(value[1], value[2]))
        return found

    def _instances_annotated(self, qual: str, name: str) -> set:
        found: set[tuple] = set()
        for module, owner, annotation in self._return_annotations.get((qual, name), ()):
            for alternative in alternatives(annotation):
                if A_NAME.match(alternative):
                    found |= {(INSTANCE, v[1]) for v in self._value(module, owner, alternative)
                              if v[0] == KLASS and not self._protocol(v[1])}
        return found

    def _protocol(self, cls: str) -> bool:
        """Whether a class is a typing Protocol (its MRO names `Protocol` as a base): what
        is annotated so is any object with its methods, not an instance of it."""
        for klass in self.classes.mro(cls):
            module, qualname = self._split(klass)
            spec = self.names.facts(module).classes.get(qualname)
            if spec is not None and any(base[0] == NAME and base[1].rpartition(".")[2]
                                        == "Protocol" for base in spec.bases):
                return True
        return False

    def _returned(self, qual: str, name: str) -> set:
        """What a function returns."""
        found: set[tuple] = set()
        for module, owner, value, _guard in self._returns.get((qual, name), ()):
            found |= self._value(module, owner, value)
        return found


def _decorated_def(arg) -> bool:
    """Whether a call's argument is a decorated def, as a decoration hands it on: the
    def itself, or what the decorators below it made of it."""
    while isinstance(arg, ast.Call) and len(arg.args) == 1:
        arg = arg.args[0]
    return isinstance(arg, ast.Name) and arg.id.startswith(DEF_MARK)

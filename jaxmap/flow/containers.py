"""Lists, tuples, sets and dicts, the value flow's part for containers (flow.py): a
literal is a box whose (key, value) pairs the memo keeps under its place, with what
stores put into it through the names that hold it (`d[k] = v`, `d.append(v)`);
subscripting or iterating a value gives its elements, a generator's yields, or an
instance's `__getitem__` or `__iter__` and `__next__` results. `of_a_container` tells,
from the text, a call of a method of a builtin container.
"""

from __future__ import annotations

import ast

from jaxmap.flow.engine import Engine
from jaxmap.flow.flowfacts import ADD_STORE, ARRAY, ARRAYS
from jaxmap.flow.flowvalues import BOUND, BOX, FN, INSTANCE, KLASS, TREEDEF, ordered
from jaxmap.flow.parsing import argument_texts, constant_key, parse_text

_EMPTY: frozenset = frozenset()
LITERALS = (ast.List, ast.Tuple, ast.Set, ast.Dict)
_CONTAINER_TYPES = frozenset({"list", "dict", "set", "tuple"})
_AN_ARRAY = (ARRAY,)  # an element of a sequence of Arrays


def _is_container(node) -> bool:
    """Whether an expression makes a list, tuple, set or dict (a literal, a
    comprehension, or `list(...)`, `dict(...)`, `set(...)`, `tuple(...)`)."""
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id in _CONTAINER_TYPES
    return isinstance(node, (*LITERALS, ast.ListComp, ast.SetComp, ast.DictComp))


def _gives_containers(kind: str, text: str) -> bool:
    """Whether an assignment (`kind` "value", or "elements" where it unpacks) gives a
    name a container: `xs = []`, `args, kwargs = [], {}`."""
    node = parse_text(text)
    if kind != "elements":
        return _is_container(node)
    return isinstance(node, ast.Tuple) and bool(node.elts) \
        and all(_is_container(e) for e in node.elts)


class Containers(Engine):
    """The elements of containers, and what stores put into them."""

    def of_a_container(self, module: str, owner: str, text: str) -> bool:
        """Whether a callee text is a method of a name (or an attribute of `self`)
        that every assignment gives a literal list, tuple, set or dict, and nothing
        else binds (`xs = []; xs.append(x)`): a builtin's method, outside the tree. Read
        from the assignments as written, not from the values the flow found, which
        may be fewer than the name holds."""
        receiver, _, _method = text.rpartition(".")
        head, _, attr = receiver.partition(".")
        if attr and head == "self" and "." not in attr:
            cls = self._class_of(module, owner)
            written = [("value", v) for _m, _o, v
                       in self._attrs.get((f"{module}.{cls}", attr), ())]
        elif receiver.isidentifier() and not self._params.get((module, owner, receiver)):
            scope = owner if receiver in self._locals.get((module, owner), ()) else ""
            written = [(kind, v) for kind, v, *_line
                       in self._assigned.get((module, scope, receiver), ())]
        else:
            return False
        return bool(written) and all(_gives_containers(kind, v) for kind, v in written)

    def _box(self, module, owner, node, named: str | None = None) -> tuple:
        """A literal container: its (key, value) pairs are kept under its place; a
        list's keys are its indices, a dict's its constant keys (None: not known)."""
        # Where it is written, as far as the parsed text tells (each statement is parsed
        # alone), and the name it is assigned to, if any: literals of one owner that
        # coincide otherwise (two `{}` assigned to two names) are merged.
        items = node.values if isinstance(node, ast.Dict) else node.elts
        first = items[0] if items else None
        key = (BOX, module, owner, type(node).__name__, node.col_offset, node.end_col_offset,
               len(items), first.id if isinstance(first, ast.Name) else None, named)
        if key in self._recorded_literals:  # (an update's: written again, as it is now)
            self._recorded_literals.discard(key)
            self._literals[key] = (module, owner, node)
        else:
            self._literals.setdefault(key, (module, owner, node))
        return key

    def _written(self, box: tuple) -> frozenset:
        """The (key, value) pairs a literal container is written with."""
        if self._recording is not None:  # the literal's text, in its module's facts
            self._recording.read(("literal", box[1]))
        return self._cached(box, lambda: self._pairs(*self._literals[box]))

    def _pairs(self, module: str, owner: str, node) -> set:
        if isinstance(node, ast.Dict):
            pairs = [(constant_key(k), v) for k, v in zip(node.keys, node.values)]
        else:
            pairs = [(None if isinstance(item, ast.Starred) or isinstance(node, ast.Set)
                      else i, item) for i, item in enumerate(node.elts)]
        found = set()
        for k, item in pairs:
            found |= {(k, v) for v in self._eval(module, owner, item)}
        return found

    def _elements(self, values: frozenset, index=None) -> frozenset:
        """What subscripting (`index`: the key's node) or iterating `values` yields: a
        container's elements of that constant key (all of them for any other key), a
        generator's yields, an iterator's `__next__` results."""
        wanted = constant_key(index) if index is not None else None
        found = set()
        for value in ordered(values):
            if value[0] == BOX:
                for k, item in ordered(self._written(value[1]) | self._stored(value[1])):
                    if wanted is None or k is None or k == wanted:
                        found.add(item)
            elif value[0] in (FN, BOUND, KLASS):
                found.add(value)  # a generator's yields, taken as its items
            elif value[0] == ARRAYS:
                found.add(_AN_ARRAY)
            elif value[0] == TREEDEF:  # `leaves, structure = tree_flatten(x)`
                found.add(value)
            elif value[0] == INSTANCE and index is not None:  # `helper[i]`: __getitem__
                found |= self._member_results(value[1], "__getitem__")
            elif value[0] == INSTANCE and index is None:
                for iterator in ordered(self._member_results(value[1], "__iter__")):
                    if iterator[0] == INSTANCE:
                        found |= self._member_results(iterator[1], "__next__")
        return frozenset(found)

    def _member_results(self, cls: str, method: str) -> frozenset:
        found: set[tuple] = set()
        for value in ordered(self._attribute((INSTANCE, cls), method)):
            found |= self.results(value)
        return frozenset(found)

    def _stored(self, box: tuple) -> frozenset:
        """The (key, value) pairs `d[k] = v`, `d.append(v)`, `d.update(...)` put into a box."""
        key = ("stored", box)
        return self._cached(key, lambda: self._stores_into(box))

    def _stores_into(self, box: tuple) -> set:
        found = set()
        if self._recording is not None:  # (compared whole on an update)
            self._recording.read(("side", "holders", box))
        stores = [store for name in sorted(self._holders.get(box, ()))
                  for store in self._stores_by.get(name, ())]
        for module, owner, base, value in stores:
            base_expr = parse_text(base)
            if base_expr is None or (BOX, box) not in self._eval(module, owner, base_expr):
                continue
            if value[0] == ADD_STORE:  # arguments of d.append(v), d.update({...})
                _, method, args = value
                positional, keywords = argument_texts(args)
                for arg in (*positional, *(text for _keyword, text in keywords)):
                    values = self._value(module, owner, arg.removeprefix("*"))
                    if method == "update":
                        found |= {pair for v in values if v[0] == BOX
                                  for pair in self._written(v[1])}
                    else:
                        found |= {(None, v) for v in values}
            else:  # d[k] = v
                _, subscript, text = value
                found |= {(constant_key(subscript), v) for v in self._value(module, owner, text)}
        return found

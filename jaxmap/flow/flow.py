"""The call graph's value flow: what a name, an attribute (of a module, a class or an
instance), a parameter, a return value or a container element may hold, read from
the owners' flow facts (flowtext.py), and so what a call site may call.

Values are the small tuples of flowvalues.py.

It is context-insensitive (a parameter holds what any call site hands it), but for
what a call returns where the function passes a parameter on (boundcalls.py), and
demand-driven: a key's values are computed when a question needs them and memoised;
a key asked for again while it is being computed (a cycle) answers what it has so
far, and the chain of keys being computed is bounded (`_MAX_DEPTH`), so no input can
recurse without end. Expressions are parsed with `ast` only when asked for.
"""

from __future__ import annotations

import ast
import re
from collections import Counter, defaultdict
from typing import Callable

from jaxmap.flow.boundcalls import BoundCalls
from jaxmap.flow.flowfacts import (
    ADD_STORE,
    ARRAY,
    ARRAYS,
    FlowFacts,
    alternatives,
    array_tags,
)
from jaxmap.flow.flowvalues import (
    APPLIED_CLOSURE,
    BOUND,
    BOX,
    FN,
    INSTANCE,
    KLASS,
    MOD,
    PARTIAL_OF,
    SUPER,
    TREEDEF,
    from_names,
    ordered,
    ordered_key,
)
from jaxmap.flow.hierarchy import Hierarchy
from jaxmap.flow.parsing import (
    argument_texts,
    constant_key,
    dotted_text,
    head_name,
    parameter_names,
    parameters,
    parse_text,
    split_arguments,
)
from jaxmap.indexing.facts import CLASS, FUNC, MODULE, NAME, SYM
from jaxmap.indexing.resolve.names import Names
from jaxmap.knowledge import registrars as R

_MAX_DEPTH = 16
# Which kind of site an implicit call is.
_CALL_SITE, _RAISE_SITE, _LOOP_SITE = "call site", "raise site", "loop site"
_OPERATOR_SITE = "operator site"
_CALLABLE = frozenset({FN, BOUND, APPLIED_CLOSURE})
_PARTIAL_OF_WHAT = _CALLABLE | {KLASS, PARTIAL_OF}  # what `partial(f, ...)` may wrap
_PARTIAL = (SYM, R.PARTIAL)  # functools.partial, as the names read it
_CAST = (SYM, "typing.cast")
_NAMED = frozenset({FUNC, CLASS, MODULE, SYM})  # values of the names that are plain tuples
_FIELDS = "<fields>"  # the sites key of a class's constructions that set its fields
# A container's methods that give back its elements (`d.get(k, default)`, `d.items()`).
_ELEMENT_READS = frozenset({"get", "pop", "setdefault", "values", "items"})
_LITERALS = (ast.List, ast.Tuple, ast.Set, ast.Dict)
_CONTAINER_TYPES = frozenset({"list", "dict", "set", "tuple"})
# An Array: what a function annotated `-> Array` returns (jax.numpy's and jax.lax's
# are), a parameter annotated `Array` or `ArrayLike`, and a positional parameter of a
# function a JAX tracer calls (R.TRACERS); its methods and properties are read from the
# tables of `_ARRAY_MODULE` in the tree.
_AN_ARRAY = (ARRAY,)
_CONSTRUCTED = re.compile(r"(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)\(")  # `x = core.Cls(...`
_A_NAME = re.compile(r"[A-Za-z_][\w.]*\Z")  # a class named in an annotation (`core.Jaxpr`)
_ARRAY_MODULE = "jax._src.numpy.array_methods"
_ARRAY_PROPERTIES = "_array_properties"
_ARRAY_OPERATORS = "_array_operators"
_ARRAY_TABLES = ("_array_methods", "_impl_only_array_methods", _ARRAY_PROPERTIES)
_EMPTY: frozenset = frozenset()


def _folded(value: tuple) -> bool:
    """Whether a value is a nested def, a lambda or a closure a call made, which the
    index folds into the definition around it: an edge to that definition stands for
    a part of its body, not all of it."""
    return value[0] == APPLIED_CLOSURE \
        or value[0] in (FN, BOUND) and value[2] != value[1].rpartition(".")[2]


def _is_container(node) -> bool:
    """Whether an expression makes a list, tuple, set or dict (a literal, a
    comprehension, or `list(...)`, `dict(...)`, `set(...)`, `tuple(...)`)."""
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id in _CONTAINER_TYPES
    return isinstance(node, (*_LITERALS, ast.ListComp, ast.SetComp, ast.DictComp))


def _gives_containers(kind: str, text: str) -> bool:
    """Whether an assignment (`kind` "value", or "elements" where it unpacks) gives a
    name a container: `xs = []`, `args, kwargs = [], {}`."""
    node = parse_text(text)
    if kind != "elements":
        return _is_container(node)
    return isinstance(node, ast.Tuple) and bool(node.elts) \
        and all(_is_container(e) for e in node.elts)


class Flow(FlowFacts):
    """Values of keys, and the callables of call sites, over a whole tree."""

    def __init__(self, names: Names, flows: dict[str, dict[str, tuple]]):
        super().__init__(names, flows)
        self._through_memo: dict[tuple, frozenset] = {}
        self._direct_memo: dict[tuple, frozenset] = {}
        self._memo = self._through_memo  # the memo of the mode evaluating now
        self._through = True  # whether parameters hold what call sites hand them
        self._busy: set[tuple] = set()
        self._stack = 0
        self._holders: dict[tuple, set] = defaultdict(set)  # box -> names that hold it
        self._sites: dict | None = None  # (owner, def name) -> its call sites: see sites()
        self._traced: dict | None = None  # see traced()
        self._building_sites = False  # fields are read from sites once they are known
        self._leaves: set[str] = set()
        self._leaves_read = False
        self._top_names: set[str] = set()  # names module top levels assign
        self._by_annotation: dict[str, frozenset] = {}  # attribute -> the instance it types
        self._alias_tags: dict[tuple, frozenset] = {}  # (module, annotation) -> its tags
        self._made: dict[str, int] | None = None  # a class's name -> how many it makes
        self._sets: dict[frozenset, frozenset] = {}  # each value set, kept once
        self._of_names: dict[tuple, frozenset] = {}  # a value of the names', as the flow's
        self.classes = Hierarchy(names, self._bases)
        self._bound = BoundCalls(self)

    # -- call sites --------------------------------------------------------------------
    def close(self) -> None:
        """Forget what was computed, and the parsed texts kept for reuse."""
        self._through_memo.clear()
        self._direct_memo.clear()
        self._sets.clear()
        self._of_names.clear()
        del self.classes, self._bound  # each holds the flow: reference cycles, broken here
        parse_text.cache_clear()
        split_arguments.cache_clear()
        ordered_key.cache_clear()
        parameters.cache_clear()

    @staticmethod
    def is_operator(text: str) -> bool:
        """Whether an implicit call's text is an operator's (`x pow`), not code."""
        return " " in text and text.partition(" ")[2].isidentifier()

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

    def class_methods(self, module: str, owner: str, text: str) -> frozenset:
        """The methods the classes of what a dotted callee's receiver holds define under
        its last name, up their MROs; none where the class's code assigns that
        attribute (`def_impl` sets `self.impl`: each instance's own, not the method)."""
        receiver, _, name = text.rpartition(".")
        found = set()
        for value in ordered(self.callees(module, owner, receiver, through=False)):
            if value[0] == INSTANCE and not any(
                    (klass, name) in self._attrs for klass in self.classes.mro(value[1])):
                for klass in self.classes.mro(value[1]):
                    klass_module, qualname = self._split(klass)
                    if f"{qualname}.{name}" in self.names.facts(klass_module).funcs:
                        found.add((BOUND, f"{klass}.{name}", name))
                        break
        return frozenset(found)

    def may_name(self, text: str) -> bool:
        """Whether a callee text's last attribute is a name some definition, attribute
        or module-level variable of the tree has (if none does, no value of the tree
        answers to it: `x.append`)."""
        if not self._leaves_read:
            self._leaves_read = True
            self._top_names = {name for (_m, owner, name) in self._assigned if not owner}
            self._leaves |= {key[1] for key in self._attrs} | set(self._foreign)
            self._leaves.update(field for fields in self._fields.values() for field in fields)
            for _module, (_path, facts) in self.names.modules.items():
                self._leaves.update(q.rpartition(".")[2] for q in facts.funcs)
                self._leaves.update(q.rpartition(".")[2] for q in facts.classes)
            if _ARRAY_MODULE in self.names.modules:  # an Array's methods, by their keys
                for table in _ARRAY_TABLES:
                    for value in ordered(self._name(_ARRAY_MODULE, "", table)):
                        if value[0] == BOX:
                            self._leaves.update(k for k, _ in self._memo.get(value[1], ())
                                                if isinstance(k, str))
        last = text.rpartition(".")[2]
        return "." not in text or last in self._leaves or last in self._top_names

    def shadows(self, module: str, owner: str, name: str) -> bool:
        """Whether `owner` has a parameter, a variable or a nested def `name` (not `self`
        or `cls`): it hides the module's name (`def f(key): isinstance(key, Array)` is
        not about a function `key`; `def f(...)` inside `multinomial` is not the module's
        `f`)."""
        return name in self._locals.get((module, owner), ()) \
            and name not in ("self", "cls", owner.rpartition(".")[2])

    def _may_be_function(self, node) -> bool:
        """Whether an argument may name a function: a lambda, a call, or a name that a
        definition, an attribute or a module-level variable of the tree has."""
        if isinstance(node, ast.Name):
            self.may_name("")  # the names of the tree, computed once
            return node.id in self._leaves or node.id in self._top_names
        if isinstance(node, ast.Attribute):
            self.may_name("")
            return node.attr in self._leaves or node.attr in self._top_names
        return isinstance(node, (ast.Lambda, ast.Call))

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

    def implicit_calls(self, module: str) -> list[tuple[str, str, int, frozenset, frozenset]]:
        """(owner, text, line, values called, those only through parameters) of a
        module's calls that are not of a dotted name (`d["a"](`, `f()(`, `super().m(`),
        of the classes it raises by name, of the `__iter__`/`__next__` its loops run on
        instances, and of the functions it hands to callables outside the tree
        (`map(f, xs)`, `jax.tree.map(f, t)`: called there on its behalf)."""
        found = []
        for site in self._implicit_sites(module):
            values = self._in_mode(True, self._implicit, *site)
            if values:  # what parameters add is told apart only where there is anything
                direct = self._in_mode(False, self._implicit, *site)
                for key, held in values.items():
                    kept = direct.get(key, _EMPTY)
                    found.append((*key, kept, held - kept))
        return found

    def _implicit_sites(self, module: str) -> list[tuple]:
        sites = [(_CALL_SITE, *call) for call in self._by_module.get(module, ())]
        sites += [(_RAISE_SITE, m, owner, raised, "", line)
                  for m, owner, raised, line in self._raises if m == module]
        sites += [(_LOOP_SITE, module, owner, text, "", line)
                  for owner, text, line in self._loops.get(module, ())]
        if _ARRAY_MODULE in self.names.modules:
            sites += [(_OPERATOR_SITE, module, owner, name, operator, line)
                      for owner, name, operator, line in self._operators.get(module, ())]
        return sites

    def _in_mode(self, through: bool, function, *args):
        """`function(*args)` with parameters holding what call sites hand them, or not."""
        saved = self._memo, self._through
        self._memo, self._through = (self._through_memo if through else self._direct_memo,
                                     through)
        try:
            return function(*args)
        finally:
            self._memo, self._through = saved

    def _implicit(self, kind: str, module: str, owner: str, text: str, args: str,
                  line: int) -> dict[tuple, frozenset]:
        """(owner, text, line) -> values called, of one implicit call site."""
        if kind == _RAISE_SITE:
            return {(owner, text, line): self.callees(module, owner, text, self._through)}
        if kind == _OPERATOR_SITE:  # `x ** 2` on an Array: the function its table names
            if not self._plainly_array(module, owner, text):
                return {}
            return {(owner, f"{text} {args}", line): frozenset(
                (BOUND, *v[1:]) if v[0] == FN else v
                for v in self._table_entry(_ARRAY_OPERATORS, args) if v[0] in _CALLABLE)}
        complex_callee = "(" in text or "[" in text
        handed = {} if kind == _LOOP_SITE else self._handed(module, owner, args)
        if kind == _CALL_SITE and not complex_callee and not handed:
            return {}  # a dotted callee hands on no function: the names resolve the call
        expr = parse_text(text)
        if expr is None:
            return {}
        values = self._eval(module, owner, expr)
        if kind == _LOOP_SITE:
            called: set[tuple] = set()
            for value in ordered(values):
                if value[0] == INSTANCE:
                    called |= self._iteration(value)
            return {(owner, text, line): frozenset(called)} if called else {}
        found = {(owner, text, line): values} if complex_callee else {}
        if not any(v[0] in _CALLABLE or v[0] in (KLASS, PARTIAL_OF)
                   for v in values):  # handed outside
            found.update(((owner, arg, line), held) for arg, held in handed.items())
        return found

    def _handed(self, module: str, owner: str, args: str) -> dict[str, frozenset]:
        """argument text -> the functions it is, of the arguments of a call that are
        functions (a local value is followed where it is called, not here)."""
        assigned = self._locals.get((module, owner), ())
        defs = {d[0] for d in self._defs.get((module, owner), ())}
        found = {}
        positional, keywords = argument_texts(args)
        for text in (*positional, *(value for _keyword, value in keywords)):
            arg = None if text.startswith("*") else parse_text(text)  # (`*xs`: not one)
            if arg is None:
                continue
            head = head_name(arg)
            if head in assigned and head not in defs and not isinstance(arg, ast.Lambda):
                continue
            if not self._may_be_function(arg):
                continue
            held = frozenset(v for v in self._eval(module, owner, arg)
                             if v[0] in _CALLABLE or v[0] == PARTIAL_OF)
            if held:
                found[text if isinstance(arg, (ast.Name, ast.Attribute)) else ast.unparse(arg)] \
                    = held
        return found

    def _plainly_array(self, module: str, owner: str, name: str) -> bool:
        """Whether a name is an Array by what its owner writes: a parameter annotated
        `Array`/`ArrayLike` or one a JAX tracer fills (`traced`), or a local assigned
        what a function annotated to return an Array returns (or unpacked from what one
        returning Arrays returns); `x.attr`, where x holds an instance of a class that
        annotates the field an Array. Operators are everywhere: a deeper look at each
        would cost the most."""
        if "." in name:
            head, _, attr = name.partition(".")
            return any(ARRAY in self._annotation_tags(*annotated)
                       for annotated in self._field_types.get(attr, ())) \
                and any(v[0] == INSTANCE and ARRAY in self._field_tags(v[1], attr)
                        for v in self._name(module, owner, head))
        if self._traced_as(module, owner, name) == R.ARRAY_PARAMETER:
            return True
        for def_name, _i, params in self._params.get((module, owner, name), ()):
            for param, _default, annotation in parameters(params):
                if param == name and annotation and ARRAY in array_tags(annotation):
                    return True
        for kind, text, *_line in self._assigned.get((module, owner, name), ()):
            if kind == "elements" and text.isidentifier() \
                    and self._traced_as(module, owner, text) == R.PYTREE_PARAMETER:
                return True  # `i, carry = state`: items of a traced pytree
            expr = parse_text(text) if "(" in text else None
            wanted = (ARRAYS if kind == "elements" else ARRAY,)
            if isinstance(expr, ast.Call) and any(
                    wanted in self.array_of(v)
                    for v in ordered(self._eval(module, owner, expr.func))):
                return True
        return False

    def _field_tags(self, cls: str, attr: str) -> frozenset:
        """ARRAY and/or ARRAYS, as the annotation of field `attr` of a class (or the
        first class up its MRO that annotates it) says."""
        for klass in self.classes.mro(cls):
            annotated = self._field_annotations.get((klass, attr))
            if annotated is not None:
                return self._annotation_tags(*annotated)
        return _EMPTY

    def _annotation_tags(self, module: str, annotation: str, depth: int = 0) -> frozenset:
        """`array_tags` of an annotation written in `module`, its alternatives that name
        a type alias of the tree read as the alias's value (`index: Index`, where
        `Index = StaticIndex | None | Array | np.ndarray`)."""
        key = (module, annotation)
        found = self._alias_tags.get(key)
        if found is None:
            self._alias_tags[key] = _EMPTY  # while it is computed: a cycle finds nothing
            tags = set(array_tags(annotation))
            for alternative in alternatives(annotation) if depth < 4 else ():
                alias = self._alias(module, alternative) \
                    if _A_NAME.match(alternative) else None
                if alias is None:
                    continue
                for kind, text, *_line in self._assigned.get(alias, ()):
                    if kind == "value":
                        tags |= self._annotation_tags(alias[0], text, depth + 1)
            found = self._alias_tags[key] = frozenset(tags)
        return found

    def _alias(self, module: str, text: str) -> tuple | None:
        """(module, "", name) of the module-level name of the tree that a (dotted) name
        written at the top level of `module` stands for, if any."""
        imported = self._import_target(module, "", text)
        if imported is not None:
            return (imported[0], "", imported[1])
        return (module, "", text) if "." not in text \
            and self.names.import_target(text, module) is None else None

    def _traced_as(self, module: str, owner: str, name: str) -> str | None:
        """What a JAX tracer puts in parameter `name` of a function of `owner` it traces
        (`traced`): an Array or a pytree of them, if it has no default."""
        for def_name, i, params in self._params.get((module, owner, name), ()):
            for bound, kinds in self.traced().get((self._qual(module, owner), def_name), ()):
                if i >= bound and not any(p == name and default for p, default, _a
                                          in parameters(params)):
                    return kinds[min(i - bound, len(kinds) - 1)]
        return None

    def traced(self) -> dict[tuple, list]:
        """(owner, def name) -> [(how many leading positional parameters a partial
        binds, what the tracer puts in the others: R.TRACERS)] of each function handed
        to a JAX tracer (`mlir.lower_fun(f)`, a loop's body). Read once the call sites
        are all known (before, nothing)."""
        if self._traced is None:
            if self._building_sites:
                return {}
            self._traced = defaultdict(list)
            for full, arguments in R.TRACERS_BY_NAME.items():
                module = self.names.module_of(full)
                name = full[len(module) + 1:] if module else ""
                signature = self._signatures.get((full, name))
                if signature is None:
                    continue
                for index, kinds in arguments:
                    param = next((p for p, i in parameter_names(signature[2]) if i == index),
                                 "")
                    for value in ordered(self._in_mode(True, self._argument, module, name,
                                                       name, index, param)):
                        bound = 0
                        while value[0] == PARTIAL_OF:
                            value, bound = value[1], bound + value[2]
                        if value[0] == FN:
                            self._traced[(value[1], value[2])].append((bound, kinds))
        return self._traced

    def _iteration(self, value: tuple) -> frozenset:
        """The `__iter__` a loop over an instance calls, and the `__next__` of what it returns."""
        iterators = self._attribute(value, "__iter__")
        nexts = {n for i in ordered(iterators) for r in ordered(self.results(i))
                 if r[0] == INSTANCE
                 for n in self._attribute(r, "__next__")}
        return frozenset(iterators) | frozenset(nexts)

    # -- evaluation --------------------------------------------------------------------
    def _eval(self, module: str, owner: str, node) -> frozenset:
        kind = type(node)
        if kind is ast.Name:
            return self._name(module, owner, node.id)
        if kind is ast.Attribute:
            found: set[tuple] = set()
            receivers = self._eval(module, owner, node.value)
            for value in ordered(receivers):
                found |= self._attribute(value, node.attr)
            if not receivers:  # an attribute every class annotating it types alike
                found |= self._annotated(node.attr)
            return frozenset(found)
        if kind is ast.Call:
            return self._call(module, owner, node)
        if kind is ast.Subscript:
            return self._elements(self._eval(module, owner, node.value), node.slice)
        if kind in (ast.List, ast.Tuple, ast.Set, ast.Dict):
            place = (module, owner, node.lineno, node.col_offset, id(node))
            return frozenset({(BOX, self._box(module, owner, node, place))})
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

    def _box(self, module, owner, node, place, named: str | None = None) -> tuple:
        """A literal container: its (key, value) pairs are kept under its place; a
        list's keys are its indices, a dict's its constant keys (None: not known)."""
        # Where it is written, as far as the parsed text tells (each statement is parsed
        # alone), and the name it is assigned to, if any: literals of one owner that
        # coincide otherwise (two `{}` assigned to two names) are merged.
        items = node.values if isinstance(node, ast.Dict) else node.elts
        first = items[0] if items else None
        key = (BOX, module, owner, type(node).__name__, node.col_offset, node.end_col_offset,
               len(items), first.id if isinstance(first, ast.Name) else None, named)
        if key not in self._memo:
            self._memo[key] = _EMPTY
            if isinstance(node, ast.Dict):
                pairs = [(constant_key(k), v) for k, v in zip(node.keys, node.values)]
            else:
                pairs = [(None if isinstance(item, ast.Starred) or isinstance(node, ast.Set)
                          else i, item) for i, item in enumerate(node.elts)]
            found = set()
            for k, item in pairs:
                found |= {(k, v) for v in self._eval(module, owner, item)}
            self._memo[key] = frozenset(found)
        return key

    def _elements(self, values: frozenset, index=None) -> frozenset:
        """What subscripting (`index`: the key's node) or iterating `values` yields: a
        container's elements of that constant key (all of them for any other key), a
        generator's yields, an iterator's `__next__` results."""
        wanted = constant_key(index) if index is not None else None
        found = set()
        for value in ordered(values):
            if value[0] == BOX:
                for k, item in ordered(self._memo.get(value[1], _EMPTY) | self._stored(value[1])):
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
                                  for pair in self._memo.get(v[1], _EMPTY)}
                    else:
                        found |= {(None, v) for v in values}
            else:  # d[k] = v
                _, subscript, text = value
                found |= {(constant_key(subscript), v) for v in self._value(module, owner, text)}
        return found

    def _value(self, module: str, owner: str, text: str) -> frozenset:
        if text.startswith("<iter> "):
            expr = parse_text(text[7:])
            return self._elements(self._eval(module, owner, expr)) if expr else _EMPTY
        expr = parse_text(text)
        return self._eval(module, owner, expr) if expr is not None else _EMPTY

    def _cached(self, key: tuple, compute) -> frozenset:
        found = self._memo.get(key)
        if found is not None:
            return found
        if key in self._busy or self._stack >= _MAX_DEPTH:
            return _EMPTY  # a cycle, or too deep: what is known so far (nothing)
        self._busy.add(key)
        self._stack += 1
        try:
            found = frozenset(compute())
        finally:
            self._stack -= 1
            self._busy.discard(key)
        # Most keys hold a set another key holds too (a name, the parameter it is
        # handed to, what a call returns): each is kept once.
        found = self._memo[key] = self._sets.setdefault(found, found)
        return found

    def _name(self, module: str, owner: str, name: str) -> frozenset:
        """A name in `owner`: its local values if it assigns or receives it, `self`/
        `cls` of a method, else what the module's top level and imports make it."""
        key = ("name", module, owner, name)
        found = self._memo.get(key)
        if found is None:
            found = self._cached(key, lambda: self._held(module, owner, name))
        return found

    def _held(self, module: str, owner: str, name: str) -> set:
        if name in ("self", "cls") and owner:
            cls = self._class_of(module, owner)
            if cls is not None and owner != cls:
                kind = INSTANCE if name == "self" else KLASS
                return {(kind, c) for c in self.classes.family(f"{module}.{cls}")}
        if owner and name in self._locals.get((module, owner), ()):
            found = self._local(module, owner, name)
        else:
            found = self._global(module, owner, name)
        self._hold(found, name)
        return found

    def _hold(self, values, name: str) -> None:
        """Note `name` as a holder of the boxes among `values`: what is stored through
        that name (`name[k] = v`, `name.append(v)`) may be stored into them."""
        for value in ordered(values):
            if value[0] == BOX:
                self._holders[value[1]].add(name)

    def _assigned_value(self, module: str, owner: str, name: str, text: str) -> frozenset:
        """What an assignment to `name` gives it; a container written there is its own,
        apart from any other written alike (`_jvps = {}` and `_transposes = {}`)."""
        expr = parse_text(text) if text[:1] in "[({" else None
        if type(expr) in _LITERALS:
            return frozenset({(BOX, self._box(module, owner, expr, None, name))})
        return self._value(module, owner, text)

    def _local(self, module: str, owner: str, name: str) -> set:
        found: set[tuple] = set()
        for kind, value, *_line in self._assigned.get((module, owner, name), ()):
            values = self._assigned_value(module, owner, name, value)
            found |= self._elements(values) if kind == "elements" else values
        for def_name, _line in self._defs.get((module, owner), ()):
            if def_name == name:
                found.add((FN, self._qual(module, owner), name))
        for def_name, i, params in self._params.get((module, owner, name), ()):
            if self._through:
                found |= self._argument(module, owner, def_name, i, name)
            elif self._handed_once(module, owner, def_name, i, name):
                found |= {v for v in self._argument(module, owner, def_name, i, name)
                          if not _folded(v)}
            for param, default, annotation in parameters(params):
                if param != name:
                    continue
                if default:
                    found |= self._value(module, owner, default)
                tags = array_tags(annotation) if annotation and "Array" in annotation else ()
                if tags:
                    found |= {(tag,) for tag in tags}
                elif annotation:  # `x: Class` holds an instance of it
                    found |= {(INSTANCE, v[1]) for v in self._value(module, owner, annotation)
                              if v[0] == KLASS}
        return found

    def _global(self, module: str, owner: str, name: str) -> set:
        found: set[tuple] = set()
        for kind, value, *_line in self._assigned.get((module, "", name), ()):
            values = self._assigned_value(module, "", name, value)
            found |= self._elements(values) if kind == "elements" else values
        if found and name in self.names.facts(module).funcs:  # decorated: the function, too
            found.add((FN, f"{module}.{name}", name))
        if not found:
            for star in self.names.stars.get(module, ()):  # `from m import *`
                if star in self.names.modules:
                    found |= self._cached(("global", star, name),
                                          lambda: self._global(star, "", name))
        # At the top level, names are the module's own before its imports.
        local = None if owner else self.names.env_of(module)
        value = self.names.lookup(name, module, owner, local)
        if value[0] in _NAMED:  # a definition or a module, read in many places: made once
            held = self._of_names.get(value)
            if held is None:
                held = self._of_names[value] = frozenset(from_names(self.names, value))
            found |= held
        else:
            found |= from_names(self.names, value)
        imported = self._import_target(module, owner, name)
        if imported is not None and (value[0] not in _NAMED
                                     or ".".join(imported) in self.decorated):
            # What the module it comes from makes it there, where the names' reading
            # holds no value of the flow's (`@api_boundary def jit`: `api_boundary(jit)`)
            # or only the function a decorator wraps (`@binary_ufunc def maximum`).
            source, attr = imported
            found |= self._cached(("global", source, attr),
                                  lambda: self._global(source, "", attr))
        return found

    def _import_target(self, module: str, owner: str, name: str) -> tuple | None:
        """(module, name) of the module-level name of the tree that an import of
        `name` in `owner` (or around it) binds, if any; of a dotted name, what its
        first name's import binds, then the rest (`scatter.Index`)."""
        head, dot, rest = name.partition(".")
        target = self.names.import_target(head, module, owner)
        if target is not None and dot:
            target = f"{target}.{rest}"
        source = self.names.module_of(target) if target is not None else None
        if target is None or source is None:
            return None
        attr = target[len(source) + 1:]
        return (source, attr) if attr and "." not in attr else None

    def _attribute(self, value: tuple, attr: str) -> frozenset:
        tag = value[0]
        if tag == MOD:
            return self._cached(("global", value[1], attr),
                                lambda: self._global(value[1], "", attr)) \
                if value[1] in self.names.modules else _EMPTY
        if tag in (KLASS, INSTANCE):
            return self._cached(("member", tag, value[1], attr),
                                lambda: self._member(tag, value[1], attr))
        if tag == ARRAY:
            return self._cached(("array member", attr), lambda: self._array_member(attr))
        if tag == SUPER:  # `super().attr`: from the class after it in the MRO
            for klass in self.classes.mro(value[1])[1:]:
                found = self._member(INSTANCE, klass, attr)
                if found:
                    return frozenset(found)
        return _EMPTY

    def attribute(self, value: tuple, attr: str) -> frozenset:
        """What `attr` of a value may hold (`x.__call__` of an instance: its method)."""
        return self._attribute(value, attr)

    def _member(self, tag: str, cls: str, attr: str) -> set:
        """`attr` of a class or of its instance: the first method of that name up its
        MRO, and what any class of the MRO (or code elsewhere) assigns to it."""
        found = set()
        for klass in self.classes.mro(cls):
            module, qualname = self._split(klass)
            if f"{qualname}.{attr}" in self.names.facts(module).funcs:
                found.add((BOUND if tag == INSTANCE else FN, f"{klass}.{attr}", attr))
                break
        for klass in self.classes.mro(cls):
            for module, owner, value in self._attrs.get((klass, attr), ()):
                found |= self._value(module, owner, value)
        if tag == INSTANCE and (self._sites is not None or not self._building_sites):
            found |= self._field(cls, attr)  # as a parameter: what constructions hand it
        self._hold(found, attr)
        foreign = self._foreign.get(attr, ())
        classes = {(KLASS, klass) for klass in self.classes.mro(cls)} if foreign else ()
        for module, owner, head, value in foreign:
            head_expr = parse_text(head)
            heads = self._eval(module, owner, head_expr) if head_expr is not None else _EMPTY
            if (tag, cls) in heads and (tag == KLASS or self._through or self._made_once(cls)):
                found |= self._value(module, owner, value)
            elif tag == INSTANCE and not heads.isdisjoint(classes):
                # `EvalTrace.process_shard_map = _shard_map_impl`: a method of its
                # instances, bound to them.
                found |= {(BOUND, *v[1:]) if v[0] == FN else v
                          for v in self._value(module, owner, value)}
        return found

    def _made_once(self, cls: str) -> bool:
        """Whether the tree makes one instance of a class of that name at most, as its
        text says (calls of the name from one definition or top level, and no two
        module-level names assigned one): what is set on that one instance
        (`_profile_state.log_dir = ...`) is set on every value of it the flow knows; on
        one of many (`remat_p.bind = _remat_bind`, of JAX's hundreds of primitives) it
        is that one's alone, which the flow does not follow: any instance may be that
        one, so a call through one is `through` (`eqn.primitive.is_high()`)."""
        if self._made is None:
            callers = Counter(
                name.rpartition(".")[2] for _m, (_p, facts) in self.names.modules.items()
                for callees in facts.callees.values() for name, _l, called, *_ in callees if called)
            assigned = Counter(
                made.group(1) for (_m, owner, _n), facts in self._assigned.items() if not owner
                for kind, text, *_line in facts
                if kind == "value" and (made := _CONSTRUCTED.match(text)))
            self._made = {name: max(n, assigned[name]) for name, n in callers.items()}
        return self._made.get(cls.rpartition(".")[2], 0) <= 1

    def _annotated(self, attr: str) -> frozenset:
        """`x.attr` of a value the flow does not know: an instance of the class of the
        tree that the field annotations of `attr` name, where the classes of the tree
        annotating a field so named agree on one (`_impl: PRNGImpl`; an annotation naming
        no class of the tree, `_impl: str`, says nothing of them); else nothing."""
        found = self._by_annotation.get(attr)
        if found is None:
            self._by_annotation[attr] = _EMPTY  # while it is computed: a cycle finds nothing
            classes: set[tuple] = set()
            for module, annotation in self._field_types.get(attr, ()):
                expr = parse_text(annotation.strip("'\""))
                named = self._in_mode(False, self._eval, module, "", expr) if expr else _EMPTY
                classes |= {(INSTANCE, v[1]) for v in named if v[0] == KLASS}
            found = frozenset(classes) if len(classes) == 1 else _EMPTY
            self._by_annotation[attr] = found
        return found

    def _field(self, cls: str, attr: str) -> set:
        """A field of an instance of a class without an `__init__` of the tree (a
        dataclass, a NamedTuple): what its constructions hand it, by keyword or in the
        order the class and its bases annotate their fields."""
        fields = [field for klass in reversed(self.classes.mro(cls))
                  for field in self._fields.get(klass, ())]
        if attr not in fields:
            return set()
        index, found = fields.index(attr), set[tuple]()
        for m, o, positional, keywords, first in self.sites().get((cls, _FIELDS), ()):
            named = [text for keyword, text in keywords if keyword == attr]
            if named:
                found |= self._value(m, o, named[0])
            elif 0 <= index - first < len(positional):
                found |= self._value(m, o, positional[index - first])
        return found

    def _split(self, qualified: str) -> tuple[str, str]:
        module = self.names.module_of(qualified) or ""
        return module, qualified[len(module) + 1:]

    def _bases(self, cls: str) -> list[str]:
        module, qualname = self._split(cls)
        spec = self.names.facts(module).classes.get(qualname)
        if spec is None:
            return []
        bases = []
        for base in spec.bases:
            if base[0] == NAME:
                bases += [v[1] for v in self._name(module, "", base[1]) if v[0] == KLASS]
        return bases

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
        for value in ordered(self._eval(module, owner, callee)):
            found |= self._results_of_call(module, owner, node, value)
        return frozenset(found)

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

        if value[0] == FN and value[1] in R.PYTREES_BY_NAME:
            return self._pytree(module, owner, node, R.PYTREES_BY_NAME[value[1]])
        if self._bound.reads(value) is None:  # the same for every call: no memo of its own
            return self._bound.results(value, node, argument)
        return self._cached(("results of call", module, owner, value, ast.unparse(node)),
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
                if _A_NAME.match(alternative):
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

    def array_of(self, value: tuple) -> frozenset:
        """An Array (or a sequence of them), if `value` is a function annotated to
        return one: what it returns."""
        tags = self._array_results.get((value[1], value[2])) if value[0] in (FN, BOUND) \
            else None
        return frozenset((tag,) for tag in tags) if tags else _EMPTY

    def _array_member(self, attr: str) -> set:
        """`x.attr` of an Array: the method, or what the property gives, that the tree's
        tables in `array_methods` attach under that name (they differ by release)."""
        found: set[tuple] = set()
        for table in _ARRAY_TABLES:
            for value in self._table_entry(table, attr):
                if table == _ARRAY_PROPERTIES:  # `x.at`: the property called on x
                    found |= self.results(value)
                elif value[0] == FN:
                    found.add((BOUND, value[1], value[2]))
        return found

    def _table_entry(self, table: str, key: str) -> set:
        if _ARRAY_MODULE not in self.names.modules:
            return set()
        found = set()
        for value in self._name(_ARRAY_MODULE, "", table):
            if value[0] == BOX:
                found |= {item for k, item in self._memo.get(value[1], _EMPTY)
                          | self._stored(value[1]) if k == key}
        return found

    def _returned(self, qual: str, name: str) -> set:
        """What a function returns."""
        found: set[tuple] = set()
        for module, owner, value, _guard in self._returns.get((qual, name), ()):
            found |= self._value(module, owner, value)
        return found

    # -- parameters ----------------------------------------------------------------------
    def _handed_once(self, module: str, owner: str, def_name: str, index: int,
                     param: str) -> bool:
        """Whether one call site alone hands a private function's parameter a value
        (once the sites are all known): the parameter holds what that call hands it, as
        its caller's own names would, and a call through it is no other caller's choice
        (`partial(_scatter_impl, treedef=treedef)`, however often the partial is called).
        A public function (no leading underscore, or a dunder) is also called from outside
        the tree, with anything."""
        if self._sites is None or not def_name.startswith("_") or def_name.endswith("__"):
            return False
        handing = 0
        for _m, _o, positional, keywords, first in self._sites.get(
                (self._qual(module, owner), def_name), ()):
            if 0 <= index - first < len(positional) \
                    or any(keyword == param for keyword, _text in keywords):
                handing += 1
                if handing > 1:
                    return False
        return handing == 1

    def _argument(self, module: str, owner: str, def_name: str, index: int, param: str) -> set:
        """What the call sites of a function hand its parameter `index` (named `param`)."""
        target = (self._qual(module, owner), def_name)
        found: set[tuple] = set()
        for m, o, positional, keywords, first in self.sites().get(target, ()):
            position = index - first
            named = [text for keyword, text in keywords if keyword == param]
            if named:
                found |= self._value(m, o, named[0])
            elif 0 <= position < len(positional):
                found |= self._value(m, o, positional[position])
        return found

    def sites(self) -> dict:
        """Function (owner, name) -> the calls that hand it arguments: (module, owner,
        positional argument texts, (keyword, text) pairs, the position of the parameter
        the first positional one binds: 1 for a bound method, more through a partial).
        `partial(f, a, k=b)` is a call of f that hands it `a` and `b`."""
        # Built in two passes, so that no value is computed from a part of the sites:
        # what the callees are without what parameters receive (which reads no site),
        # then, with those sites known, what parameters add (the callee `fun` of a
        # higher-order function). Values the second pass computes read the first pass's
        # sites: what a function held by a parameter is handed, it does not pass on.
        if self._sites is None:
            self._building_sites = True
            # Every container a store's target names is known before any is read: what
            # is stored into a container is looked for through the names that hold it.
            for module, owner, base, _value in self._stores:
                expr = parse_text(base)
                if expr is not None:
                    self._in_mode(False, self._eval, module, owner, expr)
            calls = [(module, owner, callee, argument_texts(args))
                     for module, owner, callee, args, _line in self._calls + self._decorations]
            sites: dict[tuple, list] = defaultdict(list)
            direct = [self._in_mode(False, self._site_callees, *call) for call in calls]
            for call, (values, site) in zip(calls, direct):
                for value in ordered(values):
                    self._add_site(sites, value, site, 0)
            self._sites = sites
            self._direct_memo.clear()  # computed without fields, which the sites give
            through = [self._in_mode(True, self._site_callees, *call) for call in calls]
            for (values, site), (before, _site) in zip(through, direct):
                for value in ordered(values - before):
                    self._add_site(sites, value, site, 0)
            self._through_memo.clear()  # computed while the sites were not all known
            self._building_sites = False
        return self._sites

    def _site_callees(self, module: str, owner: str, callee: str, args: tuple
                      ) -> tuple[frozenset, tuple]:
        """What a call hands its arguments (`argument_texts`) to, as the mode evaluates
        it, and its site: (module, owner, positional argument texts, (keyword, text)
        pairs); `partial(f, a, k=b)` hands f `a` and `b`."""
        positional, keywords = args
        expr = parse_text(callee)
        if positional and callee.rpartition(".")[2] == "partial" and expr is not None \
                and self._is_partial(module, owner, expr):
            return self._value(module, owner, positional[0]), \
                (module, owner, positional[1:], keywords)
        return self.callees(module, owner, callee, self._through), \
            (module, owner, positional, keywords)

    def _add_site(self, sites: dict, value: tuple, site: tuple, first: int) -> None:
        """A call of `value` with the arguments of `site`, the first binding parameter
        `first` of what it calls."""
        if value[0] in _CALLABLE:
            sites[(value[1], value[2])].append((*site, first + (value[0] == BOUND)))
        elif value[0] == KLASS:
            if self.constructor(value[1]) is None:  # a dataclass, a NamedTuple: its fields
                sites[(value[1], _FIELDS)].append((*site, first))
            for v in self._attribute((INSTANCE, value[1]), "__init__"):
                if v[0] == BOUND:
                    self._add_site(sites, v, site, first)
        elif value[0] == PARTIAL_OF:
            self._add_site(sites, value[1], site, first + value[2])

    def constructor(self, cls: str) -> str | None:
        """The `__init__` of the tree that calling a class runs, up its MRO."""
        for klass in self.classes.mro(cls):
            module, qualname = self._split(klass)
            if f"{qualname}.__init__" in self.names.facts(module).funcs:
                return f"{klass}.__init__"
        return None


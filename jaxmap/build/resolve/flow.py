"""The call graph's value flow: what a name, an attribute (of a module, a class or an
instance), a parameter, a return value or a container element may hold, read from
the owners' flow facts (build/flowtext.py), and so what a call site may call.

Values are small tuples: `(FN, owner, name)` a function (`owner` the qualified name of
the definition that holds its text: a nested function or lambda is its enclosing
definition's; `name` the function's own), `(BOUND, owner, name)` the same bound to an
instance, `(KLASS, qualname)` a class of the tree, `(INSTANCE, qualname)` an instance of one,
`(MOD, module)` a module, `(BOX, place)` a list, tuple, set or dict written at
`place`. Everything else (constants, what lies outside the tree) is no value: a call
through it stays unresolved.

It is context-insensitive (a parameter holds what any call site hands it) and
demand-driven: a key's values are computed when a question needs them and memoised;
a key asked for again while it is being computed (a cycle) answers what it has so
far, and the chain of keys being computed is bounded (`_MAX_DEPTH`), so no input can
recurse without end. Expressions are parsed with `ast` only when asked for.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from functools import lru_cache

from jaxmap.build import flowtext
from jaxmap.build.facts import APPLIED, CLASS, FUNC, MODULE, NAME, PARTIAL, SYM
from jaxmap.build.resolve.names import Names

_MAX_DEPTH = 16
# The flow's values (see the module's docstring).
FN, BOUND, KLASS, INSTANCE, MOD, BOX, SUPER = "fn", "bound", "klass", "instance", "mod", "box", \
    "super"
# A closure a call made, with the functions that call handed its maker:
# (APPLIED_CLOSURE, owner, name, functions).
APPLIED_CLOSURE = "applied closure"
# What a store puts into a container; which kind of site an implicit call is.
_ADD, _SET = "add", "set"
_CALL_SITE, _RAISE_SITE, _LOOP_SITE = "call site", "raise site", "loop site"
_OPERATOR_SITE = "operator site"
_CALLABLE = frozenset({FN, BOUND, APPLIED_CLOSURE})
# An Array: what jax.numpy and jax.lax functions return, and a parameter annotated
# `Array` or `ArrayLike`; its methods and properties are read from the tables of
# `_ARRAY_MODULE` in the tree.
ARRAY = "array"
_AN_ARRAY = (ARRAY,)
_ARRAY_MAKERS = ("jax._src.numpy.", "jax._src.lax.", "jax.numpy.", "jax.lax.")
_ARRAY_ANNOTATION = re.compile(r"\bArray(?:Like)?\b")
_ARRAY_MODULE = "jax._src.numpy.array_methods"
_ARRAY_PROPERTIES = "_array_properties"
_ARRAY_OPERATORS = "_array_operators"
_ARRAY_TABLES = ("_array_methods", "_impl_only_array_methods", _ARRAY_PROPERTIES)
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\Z")
_PLAIN_ARGUMENTS = re.compile(r"[\w., =*]*\Z")
_SIMPLE_CALL = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)[ \t]*\(([\w., =]*)\)\Z")
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}|'[^']*'|\"[^\"]*\"")
_PARAMETER = re.compile(r"[A-Za-z_]\w*|/")
_ADDERS = frozenset({"append", "add", "extend", "insert", "update", "setdefault",
                     "appendleft"})
_EMPTY: frozenset = frozenset()


class Flow:
    """Values of keys, and the callables of call sites, over a whole tree."""

    def __init__(self, names: Names, flows: dict[str, dict[str, tuple]]):
        self.names = names
        self.flows = flows  # module -> owner -> facts
        self._through_memo: dict[tuple, frozenset] = {}
        self._direct_memo: dict[tuple, frozenset] = {}
        self._memo = self._through_memo  # the memo of the mode evaluating now
        self._through = True  # whether parameters hold what call sites hand them
        self._busy: set[tuple] = set()
        self._stack = 0
        self._assigned: dict[tuple, list] = defaultdict(list)  # (module, owner, name) -> values
        # (module, owner, name) -> (def, position, its signature's text)
        self._params: dict[tuple, list] = defaultdict(list)
        self._defs: dict[tuple, list] = {}  # (module, owner) -> [(name, line)]
        self._locals: dict[tuple, set] = {}  # (module, owner) -> names it binds
        self._holders: dict[tuple, set] = defaultdict(set)  # box -> names that hold it
        self._stores_by: dict[str, list] = defaultdict(list)  # name stored through -> stores
        # (qualname, def name) -> [(module, owner, value text)]
        self._returns: dict[tuple, list] = defaultdict(list)
        # (class, attr) -> [(module, owner, value text)]
        self._attrs: dict[tuple, list] = defaultdict(list)
        self._foreign: dict[str, list] = defaultdict(list)  # attr -> [(module, owner, head, expr)]
        self._stores: list = []  # (module, owner, base, expr): `d[k] = v`, `d.append(v)`
        self._calls: list = []  # (module, owner, callee, args, line)
        self._decorations: list = []  # (module, owner, decorator, name, line)
        self._raises: list = []  # (module, owner, raised, line)
        self._operators: dict[str, list] = defaultdict(list)  # module -> (owner, name, op, line)
        self.decorated: set[str] = set()  # qualified names of decorated definitions
        self._sites: dict | None = None  # function value -> [(module, owner, args, bound)]
        self._subclasses: dict[str, set[str]] | None = None
        self._mros: dict[str, list[str]] = {}
        self._leaves: set[str] = set()
        self._leaves_read = False
        self._top_names: set[str] = set()  # names module top levels assign
        for module, owners in flows.items():
            for owner, facts in owners.items():
                self._index(module, owner, facts)
        self._loops: dict[str, list] = defaultdict(list)  # module -> (owner, iterable, line)
        for (module, owner, _name), assigned in self._assigned.items():
            for kind, value, *line in assigned:
                if value.startswith("<iter> "):
                    self._loops[module].append((owner, value[7:], line[0] if line else 0))
        for (module, owner, name) in [*self._assigned, *self._params]:
            self._locals.setdefault((module, owner), set()).add(name)
        for (module, owner), defs in self._defs.items():
            self._locals.setdefault((module, owner), set()).update(name for name, _ in defs)
        for store in self._stores:
            self._stores_by[store[2].rpartition(".")[2]].append(store)
        self._by_module: dict[str, list] = defaultdict(list)
        for call in self._calls:
            self._by_module[call[0]].append(call)

    # -- indexing the facts ------------------------------------------------------------
    def _index(self, module: str, owner: str, facts: tuple) -> None:
        cls = self._class_of(module, owner)
        defs: list[tuple] = []
        open_defs: list[tuple] = []  # every def so far; those whose body may still go on
        # Defs and statements in the order of their lines: a return is its def's.
        in_order = (flowtext.DEF, flowtext.ASSIGN)
        for fact in sorted(facts, key=lambda f: f[3] if f[0] in in_order else 0):
            kind = fact[0]
            if kind == flowtext.DEF:
                _, name, params, line, indent = fact
                defs.append((name, line))
                while open_defs and open_defs[-1][1] >= indent:
                    open_defs.pop()
                open_defs.append((name, indent))
                for param, i in _parameter_names(params):
                    self._params[(module, owner, param)].append((name, i, params))
            elif kind == flowtext.ASSIGN:
                _, target, value, line, indent = fact
                while open_defs and open_defs[-1][1] >= indent:
                    open_defs.pop()
                self._assignment(module, owner, cls, target, value, line, open_defs)
            elif kind == flowtext.DECORATE:  # the name holds what the decorator returns, too
                _, decorator, name, line = fact
                if not defs and owner.rpartition(".")[2] == name:
                    # The owner's own decorators are applied where it is defined.
                    scope = owner.rpartition(".")[0]
                    where = (module, scope, self._class_of(module, scope) if scope else None)
                else:
                    where = (module, owner, cls)
                self._decorations.append((*where[:2], decorator, name, line))
                if where[1] == "" or where[1] == where[2]:  # a module's or a class's def
                    self.decorated.add(f"{module}.{where[1]}.{name}" if where[1]
                                       else f"{module}.{name}")
                self._assignment(*where, name, f"({decorator})({name})", line, defs)
            elif kind == flowtext.OPERATOR:
                self._operators[module].append((owner, fact[1], fact[2], fact[3]))
            elif kind == flowtext.RAISE:
                self._raises.append((module, owner, fact[1], fact[3]))
            elif kind == flowtext.CALL:
                _, callee, args, line = fact
                self._calls.append((module, owner, callee, args, line))
                head, _, method = callee.rpartition(".")
                if method in _ADDERS and head:
                    self._stores.append((module, owner, head, (_ADD, method, args)))
        self._defs[(module, owner)] = defs

    def _assignment(self, module, owner, cls, target, value, line, defs) -> None:
        if target == "<return>":  # the innermost def around it (`defs`: those open)
            name = defs[-1][0] if defs else None
            qual = self._qual(module, owner)
            self._returns[(qual, name)].append((module, owner, value))
            return
        if "[" in target and target.endswith("]"):
            subscript = _parse(target)
            if isinstance(subscript, ast.Subscript):
                self._stores.append((module, owner, ast.unparse(subscript.value),
                                     (_SET, subscript.slice, value)))
            return
        if "," in target:
            for part in target.split(","):
                part = part.strip().lstrip("*").strip()
                if part.isidentifier():
                    self._assigned[(module, owner, part)].append(("elements", value))
            return
        head, _, attr = target.partition(".")
        if not attr:
            if cls is not None and owner == cls:  # a class body: a class attribute
                self._attrs[(f"{module}.{cls}", target)].append((module, owner, value))
            self._assigned[(module, owner, target)].append(("value", value, line))
        elif "." not in attr and head in ("self", "cls") and cls is not None:
            self._attrs[(f"{module}.{cls}", attr)].append((module, owner, value))
        elif "." not in attr:
            self._foreign[attr].append((module, owner, head, value))

    def _class_of(self, module: str, owner: str) -> str | None:
        """The class whose body or method `owner` is, if any."""
        classes = self.names.facts(module).classes
        if owner in classes:
            return owner
        head = owner.rpartition(".")[0]
        return head if head in classes else None

    def _qual(self, module: str, owner: str) -> str:
        return f"{module}.{owner}" if owner else module

    # -- call sites --------------------------------------------------------------------
    def close(self) -> None:
        """Forget what was computed, and the parsed texts kept for reuse."""
        self._through_memo.clear()
        self._direct_memo.clear()
        _parse.cache_clear()
        _split_arguments.cache_clear()
        _parameters.cache_clear()

    @staticmethod
    def is_operator(text: str) -> bool:
        """Whether an implicit call's text is an operator's (`x pow`), not code."""
        return " " in text and text.partition(" ")[2].isidentifier()

    def may_name(self, text: str) -> bool:
        """Whether a callee text's last attribute is a name some definition or attribute
        of the tree has (if none does, no value of the tree answers to it: `x.append`)."""
        if not self._leaves_read:
            self._leaves_read = True
            self._top_names = {name for (_m, owner, name) in self._assigned if not owner}
            self._leaves |= {key[1] for key in self._attrs} | set(self._foreign)
            for _module, (_path, facts) in self.names.modules.items():
                self._leaves.update(q.rpartition(".")[2] for q in facts.funcs)
                self._leaves.update(q.rpartition(".")[2] for q in facts.classes)
            if _ARRAY_MODULE in self.names.modules:  # an Array's methods, by their keys
                for table in _ARRAY_TABLES:
                    for value in self._name(_ARRAY_MODULE, "", table):
                        if value[0] == BOX:
                            self._leaves.update(k for k, _ in self._memo.get(value[1], ())
                                                if isinstance(k, str))
        return "." not in text or text.rpartition(".")[2] in self._leaves

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
        expr = _parse(text)
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
        expr = _parse(text)
        if expr is None:
            return {}
        values = self._eval(module, owner, expr)
        if kind == _LOOP_SITE:
            called: set[tuple] = set()
            for value in values:
                if value[0] == INSTANCE:
                    called |= self._iteration(value)
            return {(owner, text, line): frozenset(called)} if called else {}
        found = {(owner, text, line): values} if complex_callee else {}
        if not any(v[0] in _CALLABLE or v[0] == KLASS for v in values):  # handed outside
            found.update(((owner, arg, line), held) for arg, held in handed.items())
        return found

    def _handed(self, module: str, owner: str, args: str) -> dict[str, frozenset]:
        """argument text -> the functions it is, of the arguments of a call that are
        functions (a local value is followed where it is called, not here)."""
        assigned = self._locals.get((module, owner), ())
        defs = {d[0] for d in self._defs.get((module, owner), ())}
        found = {}
        for arg in _arguments(args):
            head = _head(arg)
            if head in assigned and head not in defs and not isinstance(arg, ast.Lambda):
                continue
            if not self._may_be_function(arg):
                continue
            held = frozenset(v for v in self._eval(module, owner, arg) if v[0] in _CALLABLE)
            if held:
                found[ast.unparse(arg)] = held
        return found

    def _plainly_array(self, module: str, owner: str, name: str) -> bool:
        """Whether a name is an Array by what its owner writes: a parameter annotated
        `Array`/`ArrayLike`, or a local assigned the result of a jax.numpy or jax.lax
        function (operators are everywhere: a deeper look at each would cost the most)."""
        for _def, _i, params in self._params.get((module, owner, name), ()):
            for param, _default, annotation in _parameters(params):
                if param == name and annotation and _ARRAY_ANNOTATION.search(annotation):
                    return True
        for _kind, text, *_line in self._assigned.get((module, owner, name), ()):
            expr = _parse(text) if "(" in text else None
            if isinstance(expr, ast.Call) and any(
                    v[0] == FN and v[1].startswith(_ARRAY_MAKERS)
                    for v in self._eval(module, owner, expr.func)):
                return True
        return False

    def _iteration(self, value: tuple) -> frozenset:
        """The `__iter__` a loop over an instance calls, and the `__next__` of what it returns."""
        iterators = self._attribute(value, "__iter__")
        nexts = {n for i in iterators for r in self.results(i) if r[0] == INSTANCE
                 for n in self._attribute(r, "__next__")}
        return frozenset(iterators) | frozenset(nexts)

    # -- evaluation --------------------------------------------------------------------
    def _eval(self, module: str, owner: str, node) -> frozenset:
        kind = type(node)
        if kind is ast.Name:
            return self._name(module, owner, node.id)
        if kind is ast.Attribute:
            found: set[tuple] = set()
            for value in self._eval(module, owner, node.value):
                found |= self._attribute(value, node.attr)
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

    def _box(self, module, owner, node, place) -> tuple:
        """A literal container: its (key, value) pairs are kept under its place; a
        list's keys are its indices, a dict's its constant keys (None: not known)."""
        # Where it is written, as far as the parsed text tells (each statement is parsed
        # alone): literals of one owner that coincide are merged, a loss of precision.
        items = node.values if isinstance(node, ast.Dict) else node.elts
        first = items[0] if items else None
        key = (BOX, module, owner, type(node).__name__, node.col_offset, node.end_col_offset,
               len(items), first.id if isinstance(first, ast.Name) else None)
        if key not in self._memo:
            self._memo[key] = _EMPTY
            if isinstance(node, ast.Dict):
                pairs = [(_constant(k), v) for k, v in zip(node.keys, node.values)]
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
        wanted = _constant(index) if index is not None else None
        found = set()
        for value in values:
            if value[0] == BOX:
                for k, item in self._memo.get(value[1], _EMPTY) | self._stored(value[1]):
                    if wanted is None or k is None or k == wanted:
                        found.add(item)
            elif value[0] in (FN, BOUND, KLASS):
                found.add(value)  # a generator's yields, taken as its items
            elif value[0] == INSTANCE and index is not None:  # `helper[i]`: __getitem__
                found |= self._member_results(value[1], "__getitem__")
            elif value[0] == INSTANCE and index is None:
                for iterator in self._member_results(value[1], "__iter__"):
                    if iterator[0] == INSTANCE:
                        found |= self._member_results(iterator[1], "__next__")
        return frozenset(found)

    def _member_results(self, cls: str, method: str) -> frozenset:
        found: set[tuple] = set()
        for value in self._attribute((INSTANCE, cls), method):
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
            base_expr = _parse(base)
            if base_expr is None or (BOX, box) not in self._eval(module, owner, base_expr):
                continue
            if value[0] == _ADD:  # arguments of d.append(v), d.update({...})
                _, method, args = value
                for arg in _arguments(args):
                    values = self._eval(module, owner, arg)
                    if method == "update":
                        found |= {pair for v in values if v[0] == BOX
                                  for pair in self._memo.get(v[1], _EMPTY)}
                    else:
                        found |= {(None, v) for v in values}
            else:  # d[k] = v
                _, subscript, text = value
                found |= {(_constant(subscript), v) for v in self._value(module, owner, text)}
        return found

    def _value(self, module: str, owner: str, text: str) -> frozenset:
        if text.startswith("<iter> "):
            expr = _parse(text[7:])
            return self._elements(self._eval(module, owner, expr)) if expr else _EMPTY
        expr = _parse(text)
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
        self._memo[key] = found
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
                return {(kind, c) for c in self._family(f"{module}.{cls}")}
        if owner and name in self._locals.get((module, owner), ()):
            found = self._local(module, owner, name)
        else:
            found = self._global(module, owner, name)
        self._hold(found, name)
        return found

    def _hold(self, values, name: str) -> None:
        """Note `name` as a holder of the boxes among `values`: what is stored through
        that name (`name[k] = v`, `name.append(v)`) may be stored into them."""
        for value in values:
            if value[0] == BOX:
                self._holders[value[1]].add(name)

    def _local(self, module: str, owner: str, name: str) -> set:
        found: set[tuple] = set()
        for kind, value, *_line in self._assigned.get((module, owner, name), ()):
            values = self._value(module, owner, value)
            found |= self._elements(values) if kind == "elements" else values
        for def_name, _line in self._defs.get((module, owner), ()):
            if def_name == name:
                found.add((FN, self._qual(module, owner), name))
        for def_name, i, params in self._params.get((module, owner, name), ()):
            if self._through:
                found |= self._argument(module, owner, def_name, i, name)
            for param, default, annotation in _parameters(params):
                if param != name:
                    continue
                if default:
                    found |= self._value(module, owner, default)
                if annotation and _ARRAY_ANNOTATION.search(annotation):
                    found.add(_AN_ARRAY)
                elif annotation:  # `x: Class` holds an instance of it
                    found |= {(INSTANCE, v[1]) for v in self._value(module, owner, annotation)
                              if v[0] == KLASS}
        return found

    def _global(self, module: str, owner: str, name: str) -> set:
        found: set[tuple] = set()
        for kind, value, *_line in self._assigned.get((module, "", name), ()):
            values = self._value(module, "", value)
            found |= self._elements(values) if kind == "elements" else values
        if not found:
            for star in self.names.stars.get(module, ()):  # `from m import *`
                if star in self.names.modules:
                    found |= self._cached(("global", star, name),
                                          lambda: self._global(star, "", name))
        # At the top level, names are the module's own before its imports.
        local = None if owner else self.names.env_of(module)
        found |= self._from_names(self.names.lookup(name, module, owner, local))
        return found

    def _from_names(self, value: tuple, depth: int = 0) -> set:
        """A value of the resolver's names (imports, module-level values) as a flow value."""
        tag = value[0]
        if tag == FUNC:
            return {(FN, f"{value[1]}.{value[2]}", value[2].rpartition(".")[2])}
        if tag == CLASS:
            return {(KLASS, f"{value[1]}.{value[2]}")}
        if tag == MODULE:
            return {(MOD, value[1])}
        if tag == PARTIAL and depth < 4:
            return self._from_names(value[1], depth + 1)
        if tag == APPLIED and depth < 4 and value[1][0] == CLASS:
            return {(INSTANCE, f"{value[1][1]}.{value[1][2]}")}
        if tag == SYM and self.names.in_tree(value[1]):
            module = self.names.module_of(value[1]) or ""
            qualname = value[1][len(module) + 1:]
            facts = self.names.facts(module)
            if qualname in facts.funcs:
                return {(FN, value[1], qualname.rpartition(".")[2])}
            if qualname in facts.classes:
                return {(KLASS, value[1])}
        return set()

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
            for klass in self.mro(value[1])[1:]:
                found = self._member(INSTANCE, klass, attr)
                if found:
                    return frozenset(found)
        return _EMPTY

    def _member(self, tag: str, cls: str, attr: str) -> set:
        """`attr` of a class or of its instance: the first method of that name up its
        MRO, and what any class of the MRO (or code elsewhere) assigns to it."""
        found = set()
        for klass in self.mro(cls):
            module, qualname = self._split(klass)
            if f"{qualname}.{attr}" in self.names.facts(module).funcs:
                found.add((BOUND if tag == INSTANCE else FN, f"{klass}.{attr}", attr))
                break
        for klass in self.mro(cls):
            for module, owner, value in self._attrs.get((klass, attr), ()):
                found |= self._value(module, owner, value)
        self._hold(found, attr)
        for module, owner, head, value in self._foreign.get(attr, ()):
            head_expr = _parse(head)
            if head_expr is not None and (tag, cls) in self._eval(module, owner, head_expr):
                found |= self._value(module, owner, value)
        return found

    def _split(self, qualified: str) -> tuple[str, str]:
        module = self.names.module_of(qualified) or ""
        return module, qualified[len(module) + 1:]

    def mro(self, cls: str) -> list[str]:
        """The class and its bases of the tree, in C3-like order (depth first, left to
        right, each once; bounded)."""
        found = self._mros.get(cls)
        if found is None:
            self._mros[cls] = [cls]  # a class that is its own base: itself only
            found = self._mros[cls] = self._linear(cls)
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

    def _family(self, cls: str) -> list[str]:
        """The class and its subclasses of the tree (what `self` may be in its methods)."""
        if self._subclasses is None:
            self._subclasses = defaultdict(set)
            for module, (_, facts) in self.names.modules.items():
                for qualname in facts.classes:
                    for base in self._bases(f"{module}.{qualname}"):
                        self._subclasses[base].add(f"{module}.{qualname}")
        family: list[str] = []
        todo = [cls]
        while todo and len(family) < 256:
            klass = todo.pop()
            if klass not in family:
                family.append(klass)
                todo.extend(sorted(self._subclasses.get(klass, ())))
        return family

    def _call(self, module: str, owner: str, node: ast.Call) -> frozenset:
        found = set()
        callee = node.func
        if isinstance(callee, ast.Name) and callee.id == "super" and owner:
            cls = self._class_of(module, owner)
            if cls is not None:
                return frozenset({(SUPER, f"{module}.{cls}")})
        handed = None
        for value in self._eval(module, owner, callee):
            for result in self.results(value):
                if result[0] == FN and value[0] in (FN, BOUND) and result[1] == value[1] \
                        and result[2] != value[2]:
                    # A closure the called function made: calling it calls what the call
                    # handed the function (`_defer("+", ufuncs.add)`), as a partial would.
                    if handed is None:
                        handed = frozenset(v for arg in node.args for v in
                                           self._eval(module, owner, arg) if v[0] in (FN, BOUND))
                    if handed:
                        result = (APPLIED_CLOSURE, result[1], result[2], handed)
                found.add(result)
        return frozenset(found)

    def results(self, value: tuple) -> frozenset:
        """What calling a value returns (a function of jax.numpy or jax.lax: an Array)."""
        tag = value[0]
        if tag == KLASS:
            return frozenset({(INSTANCE, value[1])})
        if tag in (FN, BOUND, APPLIED_CLOSURE):
            found = self._cached(("returned", value[1], value[2]),
                                 lambda: self._returned(value[1], value[2]))
            if value[1].startswith(_ARRAY_MAKERS):
                found = found | {_AN_ARRAY}
            return found
        return _EMPTY

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
        found: set[tuple] = set()
        for module, owner, value in self._returns.get((qual, name), ()):
            found |= self._value(module, owner, value)
        return found

    # -- parameters ----------------------------------------------------------------------
    def _argument(self, module: str, owner: str, def_name: str, index: int, param: str) -> set:
        """What the call sites of a function hand its parameter `index` (named `param`)."""
        target = (self._qual(module, owner), def_name)
        found: set[tuple] = set()
        for m, o, args, bound in self.sites().get(target, ()):
            positional, keywords = _split_arguments(args)
            position = index - 1 if bound else index
            if param in keywords:
                found |= self._eval(m, o, keywords[param])
            elif 0 <= position < len(positional):
                found |= self._eval(m, o, positional[position])
        return found

    def sites(self) -> dict:
        """Function (owner, name) -> the calls that hand it arguments, with whether it
        is called bound (its first parameter is the instance)."""
        if self._sites is None:
            self._sites = defaultdict(list)
            for module, owner, callee, args, _line in self._calls + self._decorations:
                for value in self.callees(module, owner, callee):
                    if value[0] in _CALLABLE:
                        self._sites[(value[1], value[2])].append(
                            (module, owner, args, value[0] == BOUND))
                    elif value[0] == KLASS:
                        init = self._member(INSTANCE, value[1], "__init__")
                        for v in init:
                            if v[0] == BOUND:
                                self._sites[(v[1], v[2])].append((module, owner, args, True))
        return self._sites

    def constructor(self, cls: str) -> str | None:
        """The `__init__` of the tree that calling a class runs, up its MRO."""
        for klass in self.mro(cls):
            module, qualname = self._split(klass)
            if f"{qualname}.__init__" in self.names.facts(module).funcs:
                return f"{klass}.__init__"
        return None


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


@lru_cache(maxsize=8192)
def _parse(text: str):
    """The expression of a text, or None if it is not one (a dotted name is built
    directly: most texts are one, and compiling each would cost the most here)."""
    text = text.strip()
    if _DOTTED.match(text):
        return _dotted(text)
    simple = _SIMPLE_CALL.match(text)
    if simple:  # `f(a, k=b)`: built from its parts, as common as a name
        positional, keywords = _split_arguments(simple.group(2))
        return ast.Call(_dotted(simple.group(1)), positional,
                        [ast.keyword(k, v) for k, v in keywords.items()])
    try:
        return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _dotted(text: str):
    head, *attributes = text.split(".")
    node = ast.Name(head)
    for attribute in attributes:
        node = ast.Attribute(node, attribute)  # type: ignore[assignment]
    return node


def _head(node) -> str | None:
    """The name a dotted expression starts with."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _constant(node):
    """The value of a constant key (a string, a number), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant):
        return None  # a negative index: counted from the end, not known here
    return None


def _words(args: str) -> set[str]:
    return {w for w in args.replace("(", ",").replace(")", ",").replace("=", ",").split(",")
            if w.strip().isidentifier()}


def _arguments(args: str) -> list:
    positional, keywords = _split_arguments(args)
    return positional + list(keywords.values())


@lru_cache(maxsize=8192)
def _split_arguments(args: str) -> tuple[list, dict]:
    if _PLAIN_ARGUMENTS.match(args):  # names and keywords only: no parse
        positional, keywords = [], {}
        for piece in args.split(","):
            key, _, value = piece.rpartition("=")
            value = value.strip().lstrip("*")
            if not _DOTTED.match(value):
                continue
            if key.strip():
                keywords[key.strip()] = _dotted(value)
            else:
                positional.append(_dotted(value))
        return positional, keywords
    try:
        call = ast.parse(f"f({args})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [], {}
    assert isinstance(call, ast.Call)
    return list(call.args), {k.arg: k.value for k in call.keywords if k.arg}


def _parameter_names(params: str) -> list[tuple[str, int]]:
    """(name, position, or -1 if keyword-only) of each parameter of a signature's text,
    read without parsing it (what is inside brackets is left out first)."""
    flat = params
    for _ in range(4):
        if not _BRACKETED.search(flat):
            break
        flat = _BRACKETED.sub("", flat)
    found, position = [], 0
    for piece in flat.split(","):
        piece = piece.strip()
        if piece.startswith("*"):
            name = piece.lstrip("*").partition(":")[0].strip()
            if piece.startswith("**") or not name:
                position = -1
                continue
            position = -1  # after *args, keyword-only
            continue
        match = _PARAMETER.match(piece)
        if match and match.group() != "/":
            found.append((match.group(), position))
            if position >= 0:
                position += 1
    return found


@lru_cache(maxsize=4096)
def _parameters(params: str) -> tuple[tuple[str, str | None, str | None], ...]:
    """(name, default text, annotation text) of each parameter of a signature's text."""
    try:
        tree = ast.parse(f"def f({params}): pass")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    args = function.args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
    return tuple((arg.arg, _text(default), _text(arg.annotation)) for arg, default in pairs)


def _text(node) -> str | None:
    return ast.unparse(node) if node is not None else None

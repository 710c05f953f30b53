"""Calls no dotted callee names, the value flow's part for them (flow.py): `d["a"](`,
`f()(`, `super().m(`, a class raised by name, the `__iter__` and `__next__` a loop runs
on an instance, the function an Array's table names for an operator applied to one,
the abstract value's `_iter` that iterating one runs (arrays.py), and the functions
handed to callables outside the tree (`map(f, xs)`: called there on the caller's
behalf); `may_name` tells whether any value of the tree answers to a callee's last
name.
"""

from __future__ import annotations

import ast

from jaxmap.flow.arrays import ARRAY_MODULE, ARRAY_OPERATORS, ARRAY_TABLES
from jaxmap.flow.engine import A_NAME, CALLABLE, Engine
from jaxmap.flow.flowtext import ABS, HELD_OPEN, ITER, OPERATOR_NAMES
from jaxmap.flow.flowvalues import BOUND, FN, INSTANCE, KLASS, PARTIAL_OF, ordered
from jaxmap.flow.parsing import argument_texts, head_name, parse_text
from jaxmap.flow.recording import apart
from jaxmap.indexing.kept import keeps

_EMPTY: frozenset = frozenset()
# Which kind of site an implicit call is.
_CALL_SITE, _RAISE_SITE, _LOOP_SITE = "call site", "raise site", "loop site"
_OPERATOR_SITE = "operator site"
HELD = HELD_OPEN.decode()


class ImplicitCalls(Engine):
    """The calls of a module that no dotted callee names."""

    @staticmethod
    def is_operator(text: str) -> bool:
        """Whether an implicit call's text is an operator's (`x pow`, `f(x, y) add`), not
        code."""
        return text.rpartition(" ")[2] in OPERATOR_NAMES

    def may_name(self, text: str) -> bool:
        """Whether a callee text's last attribute is a name some definition, attribute
        or module-level variable of the tree has (if none does, no value of the tree
        answers to it: `x.append`)."""
        return "." not in text or self._a_leaf(text.rpartition(".")[2])

    def _a_leaf(self, name: str) -> bool:
        """Whether a definition, an attribute or a module-level variable of the tree
        has that name."""
        if not self._leaves_read:
            with apart(self._recording, "leaves"):
                self._read_leaves()
        if self._recording is not None:  # (compared whole on an update)
            self._recording.read(("side", "leaves", name))
        return name in self._leaves or name in self._top_names

    def _read_leaves(self) -> None:
        self._leaves_read = True
        self._top_names = {name for (_m, owner, name) in self._assigned if not owner}
        self._leaves |= self.named_leaves()
        for table in ARRAY_TABLES:  # an Array's methods, by their keys
            self._leaves.update(self.array_tables().get(table, ()))

    def named_leaves(self) -> set[str]:
        """The last names of the tree's definitions, attributes and fields."""
        found = {key[1] for key in self._attrs} | set(self._foreign)
        found.update(field for fields in self._fields.values() for field in fields)
        for _module, (_path, facts) in self.names.modules.items():
            found.update(q.rpartition(".")[2] for q in facts.funcs)
            found.update(q.rpartition(".")[2] for q in facts.classes)
        return found

    def _may_be_function(self, node) -> bool:
        """Whether an argument may name a function: a lambda, a call, or a name that a
        definition, an attribute or a module-level variable of the tree has."""
        if isinstance(node, ast.Name):
            return self._a_leaf(node.id)
        if isinstance(node, ast.Attribute):
            return self._a_leaf(node.attr)
        return isinstance(node, (ast.Lambda, ast.Call))

    def implicit_calls(self, module: str) -> list[tuple[str, str, int, frozenset, frozenset]]:
        """(owner, text, line, values called, those only through parameters) of a
        module's calls that are not of a dotted name (`d["a"](`, `f()(`, `super().m(`),
        of the classes it raises by name, of the `__iter__`/`__next__` its loops run on
        instances, and of the functions it hands to callables outside the tree
        (`map(f, xs)`, `jax.tree.map(f, t)`: called there on its behalf). Asked once
        for each module: its sites are taken out of the tables that hold them."""
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
        """The module's sites, taken out of the tables that hold them: each module's
        are read once (by call_edges), and the call graph's peak memory is at its end."""
        sites = [(_CALL_SITE, *call) for call in self._by_module.pop(module, ())]
        sites += [(_RAISE_SITE, module, owner, raised, "", line)
                  for owner, raised, line in self._raises.pop(module, ())]
        sites += [(_LOOP_SITE, module, owner, text, "", line)
                  for owner, text, line in self._loops.pop(module, ())]
        operators = self._operators.pop(module, ())
        if ARRAY_MODULE in self.names.modules:
            sites += [(_OPERATOR_SITE, module, owner, name, operator, line)
                      for owner, name, operator, line in operators]
        return sites

    def _implicit(self, kind: str, module: str, owner: str, text: str, args: str,
                  line: int) -> dict[tuple, frozenset]:
        """(owner, text, line) -> values called, of one implicit call site."""
        if kind == _RAISE_SITE:
            return {(owner, text, line): self.callees(module, owner, text, self._through)}
        if kind == _OPERATOR_SITE:
            return self._array_operator(module, owner, text, args, line)
        complex_callee = "(" in text or "[" in text
        handed = {} if kind == _LOOP_SITE or self._keeps(text) \
            or (module, owner, args, line) in self._kept_calls \
            else self._handed(module, owner, args)
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
        if not any(v[0] in CALLABLE or v[0] in (KLASS, PARTIAL_OF)
                   for v in values):  # handed outside
            found.update(((owner, arg, line), held) for arg, held in handed.items())
        return found

    def _array_operator(self, module: str, owner: str, text: str, operator: str,
                        line: int) -> dict[tuple, frozenset]:
        """`x ** 2` on an Array: the function the release's table names for the operator
        (`iter`: what iterating one runs); nothing where the operand is no Array."""
        if operator == ABS and self._name(module, owner, ABS):
            return {}  # `abs` is a name of the tree here, not the builtin
        value = None  # `<held x> f(x)`: x holds what f(x) gives there (narrowing.py)
        if text.startswith(HELD):
            text, _, value = text[len(HELD):].partition("> ")
        if operator == ITER:  # `f(*x)`, `for v in x`, `a, b = x`
            return {(owner, f"{text} {operator}", line): self.array_iteration()} \
                if self.iterated_array(module, owner, text, value) else {}
        if value is not None:
            if not self.held_array(module, owner, text, parse_text(value)):
                return {}
        elif not (self.plainly_array_expression(module, owner, parse_text(text))
                  if not A_NAME.match(text) else self._plainly_array(module, owner, text)):
            return {}  # (an operand more than a name: `f(x) * 2`)
        return {(owner, f"{text} {operator}", line): frozenset(
            (BOUND, *v[1:]) if v[0] == FN else v
            for v in self._table_entry(ARRAY_OPERATORS, operator) if v[0] in CALLABLE)}

    @staticmethod
    def _keeps(text: str) -> bool:
        """Whether a callee is a registrar, which keeps the functions handed to it for
        later, calling none of them there (`mlir.register_lowering`,
        `register_rule(p)(f)`: kept.py)."""
        expr = parse_text(text)
        while isinstance(expr, ast.Call):  # `register_rule(p)(f)`: register_rule's
            expr = expr.func
        leaf = getattr(expr, "attr", getattr(expr, "id", None))
        return leaf is not None and keeps(leaf)

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
                             if v[0] in CALLABLE or v[0] == PARTIAL_OF)
            if held:
                found[text if isinstance(arg, (ast.Name, ast.Attribute)) else ast.unparse(arg)] \
                    = held
        return found

    def _iteration(self, value: tuple) -> frozenset:
        """The `__iter__` a loop over an instance calls, and the `__next__` of what it returns."""
        iterators = self._attribute(value, "__iter__")
        nexts = {n for i in ordered(iterators) for r in ordered(self.results(i))
                 if r[0] == INSTANCE
                 for n in self._attribute(r, "__next__")}
        return frozenset(iterators) | frozenset(nexts)

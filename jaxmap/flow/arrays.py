"""JAX Arrays, the value flow's part for them (flow.py): an Array is what a function
annotated `-> Array` returns (jax.numpy's and jax.lax's are), a parameter annotated
`Array` or `ArrayLike`, a positional parameter of a function a JAX tracer calls
(R.TRACERS: `traced`), and one of a private function that every call hands an Array;
its methods, properties and operators are read from the tables of `ARRAY_MODULE` in
the tree, which differ by release, and iterating one runs what the tree assigns to
its abstract value's `_iter`. `_plainly_array` tells from what an
owner writes whether a name an operator applies to is one.
"""

from __future__ import annotations

import ast
from collections import defaultdict

from jaxmap.flow.engine import A_NAME, Engine, in_tests
from jaxmap.flow.flowfacts import ARRAY, ARRAYS, alternatives, array_tags
from jaxmap.flow.flowtext import ABS
from jaxmap.flow.flowvalues import BOUND, BOX, FN, INSTANCE, KLASS, PARTIAL_OF, ordered
from jaxmap.flow.narrowing import no_array_where
from jaxmap.flow.parsing import dotted_text, parameter_names, parameters, parse_text
from jaxmap.flow.recording import apart
from jaxmap.knowledge import registrars as R

_EMPTY: frozenset = frozenset()
_ARRAY_SET = frozenset({(ARRAY,)})  # what `_plainly_array` keeps for an Array
ARRAY_MODULE = "jax._src.numpy.array_methods"
_ARRAY_PROPERTIES = "_array_properties"
_ALIAS_DEPTH = 4  # type aliases an annotation's tags are read through, at most
ARRAY_TABLES = ("_array_methods", "_impl_only_array_methods", _ARRAY_PROPERTIES)
ARRAY_OPERATORS = "_array_operators"  # the table that maps operators
# What a tracer's `__iter__` calls on its abstract value (`core.Tracer.__iter__`:
# `iter(self.aval._iter(self))`), which the tree assigns to the abstract value classes.
AVAL_ITERATOR = "_iter"


class Arrays(Engine):
    """Which values are Arrays, and what their members and operators are."""

    def _plainly_array(self, module: str, owner: str, name: str) -> bool:
        """Whether a name is an Array by what its owner writes: a parameter annotated
        `Array`/`ArrayLike`, one a JAX tracer fills (`traced`) or every call site
        hands one (`_handed_arrays`), or a local assigned what
        `plainly_array_expression` calls one (or unpacked from one, or from what a
        function returning Arrays returns); `x.attr`, where x holds an instance of a
        class that annotates the field an Array. Operators are everywhere: a deeper
        look at each would cost the most."""
        return bool(self._cached(("plainly array", module, owner, name),
                                 lambda: _ARRAY_SET if self._plainly(module, owner, name)
                                 else _EMPTY))

    def _plainly(self, module: str, owner: str, name: str) -> bool:
        if "." in name:
            head, _, attr = name.partition(".")
            return any(ARRAY in self._annotation_tags(*annotated)
                       for annotated in self._field_types.get(attr, ())) \
                and any(v[0] == INSTANCE and ARRAY in self._field_tags(v[1], attr)
                        for v in self._name(module, owner, head))
        if self._traced_as(module, owner, name) == R.ARRAY_PARAMETER:
            return True
        if any(ARRAY in array_tags(annotation)
               for annotation in self._annotations_of(module, owner, name)):
            return True
        if self._handed_arrays(module, owner, name):
            return True
        for kind, text, *_line in self._assigned.get((module, owner, name), ()):
            if kind == "elements" and text.isidentifier() \
                    and self._traced_as(module, owner, text) == R.PYTREE_PARAMETER:
                return True  # `i, carry = state`: items of a traced pytree
            expr = parse_text(text.removeprefix("<iter> "))
            if expr is None:
                continue
            if self.plainly_array_expression(module, owner, expr):
                return True  # unpacked or iterated, an Array's items are Arrays
            if kind == "elements" and isinstance(expr, ast.Call) and any(
                    (ARRAYS,) in self.array_of(v)
                    for v in ordered(self._eval(module, owner, expr.func))):
                return True
        return False

    def _handed_arrays(self, module: str, owner: str, name: str) -> bool:
        """Whether `name` is a parameter without annotation of a private function
        (`_handed_once`: no caller outside the tree) that every one of its call sites,
        once they are all known, hands what `plainly_array_expression` calls an Array."""
        if self._sites is None:
            return False
        for def_name, index, params in self._params.get((module, owner, name), ()):
            if not def_name.startswith("_") or def_name.endswith("__") or any(
                    p == name and annotation for p, _d, annotation in parameters(params)):
                continue
            handed = []
            for m, o, positional, keywords, first in self.handing(module, owner, def_name):
                named = [text for keyword, text in keywords if keyword == name]
                text = named[0] if named else positional[index - first] \
                    if 0 <= index - first < len(positional) else None
                if text is None or text.startswith("*"):
                    break  # a site that leaves it its default, or unpacks into it
                handed.append((m, o, parse_text(text)))
            else:
                if handed and all(self.plainly_array_expression(*site) for site in handed):
                    return True
        return False

    def plainly_array_expression(self, module: str, owner: str, node) -> bool:
        """Whether an expression is an Array by what it writes: a name or field
        `_plainly_array` calls one, a call of a function annotated to return one,
        an item of one or of what a function returning Arrays returns, and what an
        arithmetic or unary operator, or the builtin `abs`, makes of one (`-x`, `2 *
        f(x)`, `abs(x)`: an Array's operators return Arrays)."""
        kind = type(node)
        if kind is ast.Name:
            return self._plainly_array(module, owner, node.id)
        if kind is ast.Attribute:
            text = dotted_text(node)
            return text is not None and text.count(".") == 1 \
                and self._plainly_array(module, owner, text)
        if kind is ast.Call:
            if isinstance(node.func, ast.Name) and node.func.id == ABS and len(node.args) == 1 \
                    and not self._name(module, owner, ABS):  # the builtin: x's `__abs__`
                return self.plainly_array_expression(module, owner, node.args[0])
            return any(ARRAY in self._returned_tags(v, node)
                       for v in ordered(self._eval(module, owner, node.func)))
        if kind is ast.BinOp:
            return self.plainly_array_expression(module, owner, node.left) \
                or self.plainly_array_expression(module, owner, node.right)
        if kind is ast.UnaryOp:
            return not isinstance(node.op, ast.Not) \
                and self.plainly_array_expression(module, owner, node.operand)
        if kind is ast.Subscript:
            value = node.value
            return self.plainly_array_expression(module, owner, value) \
                or isinstance(value, ast.Call) and any(
                    (ARRAYS,) in self.array_of(v)
                    for v in ordered(self._eval(module, owner, value.func)))
        if kind is ast.IfExp:  # a branch, but a name its test leaves no Array in there
            return any(self.plainly_array_expression(module, owner, part) and not (
                isinstance(part, ast.Name) and no_array_where(node.test, part.id)[side])
                for side, part in enumerate((node.body, node.orelse)))
        return False

    def held_array(self, module: str, owner: str, name: str, value) -> bool:
        """Whether parameter `name`, holding the value of expression `value` where an
        operator applies to it, is an Array there: that value's, where it is plainly
        one or surely none (a literal, a call of functions whose return annotations have
        no Array); else, unknown, the parameter's own reading."""
        if value is not None and self.plainly_array_expression(module, owner, value):
            return True
        return not self._surely_no_array(module, owner, value) \
            and self._plainly_array(module, owner, name)

    def _annotations_of(self, module: str, owner: str, name: str) -> list[str]:
        """The annotations of `name` as a parameter of the defs of `owner` (one a def)."""
        return [annotation for _def, _i, params in self._params.get((module, owner, name), ())
                for param, _default, annotation in parameters(params)
                if param == name and annotation]

    def _surely_no_array(self, module: str, owner: str, value) -> bool:
        """Whether an expression is surely no Array: a literal or a display, or a call
        of functions whose return annotations all say so."""
        if isinstance(value, (ast.Constant, ast.Tuple, ast.List, ast.Dict, ast.Set,
                              ast.JoinedStr, ast.ListComp, ast.SetComp, ast.DictComp)):
            return True
        if not isinstance(value, ast.Call):
            return False
        called = ordered(self._eval(module, owner, value.func))
        return bool(called) and all(
            v[0] in (FN, BOUND) and self._annotated_no_array((v[1], v[2])) for v in called)

    def _annotated_no_array(self, key: tuple) -> bool:
        """Whether a function's return annotations (each overload's) all say no Array."""
        tags = self._array_results.get(key)
        if tags is not None:
            return ARRAY not in tags
        annotations = self._return_annotations.get(key, ())
        return bool(annotations) and not any(
            ARRAY in self._annotation_tags(module, text) for module, _owner, text in annotations)

    def iterated_array(self, module: str, owner: str, text: str,
                       value: str | None = None) -> bool:
        """Whether what an iteration's text (a name, or a call) iterates may be an
        Array: one `plainly_array_expression` calls so (a call, of a function that
        returns an Array and never a sequence of them), but not a parameter whose
        annotation allows a sequence of Arrays (`Array | Sequence[ArrayLike]`: its
        callers mostly hand lists, and reading each iteration of it as an Array's
        nearly doubled `binds squeeze_p` for 11 pairs a trace shows). Where narrowing
        says the parameter holds `value` there, that value's, unless the flow cannot
        tell (as `held_array`)."""
        if value is not None:
            expr = parse_text(value)
            if self._surely_no_array(module, owner, expr):
                return False
            return self.iterated_array(module, owner, value) \
                or self.iterated_array(module, owner, text)
        expr = parse_text(text)
        if isinstance(expr, ast.Call):  # `a, b = ensure_arraylike(f, x, y)`: a tuple
            results = [self.array_of(v) for v in ordered(self._eval(module, owner, expr.func))]
            return any((ARRAY,) in r for r in results) \
                and not any((ARRAYS,) in r for r in results)
        if expr is None:
            return False
        if isinstance(expr, ast.Name) and any(
                ARRAYS in self._annotation_tags(module, annotation)
                for annotation in self._annotations_of(module, owner, text)):
            return False  # `Array | Sequence[ArrayLike]`: iterated, mostly the sequence
        return self.plainly_array_expression(module, owner, expr)

    def array_iteration(self) -> frozenset:
        """The functions iterating an Array runs: what the tree assigns to its abstract
        value classes' AVAL_ITERATOR (`ShapedArray._iter = staticmethod(_iter)`, in
        lax.py; older releases set DShapedArray's too), outside test modules."""
        if self._recording is not None:  # (compared whole on an update)
            self._recording.read(("side", "iteration"))
        if self._iteration_functions is None:
            with apart(self._recording, "iteration"):
                self._iteration_functions = self._iterating()
        return self._iteration_functions

    def _iterating(self) -> frozenset:
        found: set[tuple] = set()
        for module, owner, head, value in self._foreign.get(AVAL_ITERATOR, ()):
            if in_tests(module):
                continue
            head_expr, expr = parse_text(head), parse_text(value)
            if head_expr is None or expr is None or not any(
                    v[0] == KLASS for v in self._eval(module, owner, head_expr)):
                continue
            if isinstance(expr, ast.Call) and dotted_text(expr.func) == "staticmethod" \
                    and len(expr.args) == 1:
                expr = expr.args[0]  # (the builtin: the function it wraps)
            found |= {v for v in self._eval(module, owner, expr) if v[0] == FN}
        return frozenset(found)

    def _field_tags(self, cls: str, attr: str) -> frozenset:
        """ARRAY and/or ARRAYS, as the annotation of field `attr` of a class (or the
        first class up its MRO that annotates it) says."""
        for klass in self.classes.mro(cls):
            annotated = self._field_annotations.get((klass, attr))
            if annotated is not None:
                return self._annotation_tags(*annotated)
        return _EMPTY

    def _annotation_tags(self, module: str, annotation: str) -> frozenset:
        """`array_tags` of an annotation written in `module`, its alternatives that name
        a type alias of the tree read as the alias's value (`index: Index`, where
        `Index = StaticIndex | None | Array | np.ndarray`), and theirs, _ALIAS_DEPTH
        aliases deep at most. Each annotation walks its aliases itself, so that what one
        of a cycle of aliases gives does not depend on which was asked first."""
        key = (module, annotation)
        recording = self._recording
        if recording is not None:
            recording.read(("side", "alias", key))
            if self._plan is not None:
                self._plan.verify_read(("side", "alias", key))
        found = self._alias_tags.get(key)
        if found is None:
            if recording is not None:
                recording.enter()
            try:
                found = self._alias_tags[key] = frozenset(self._reached_tags(key))
            finally:
                if recording is not None:
                    recording.leave(("side", "alias", key))
        return found

    def _reached_tags(self, key: tuple[str, str]) -> set:
        tags: set = set()
        seen, layer = {key}, [key]
        for depth in range(_ALIAS_DEPTH + 1):
            following = []
            for module, annotation in layer:
                tags |= array_tags(annotation)
                for alternative in alternatives(annotation) if depth < _ALIAS_DEPTH else ():
                    alias = self._alias(module, alternative) \
                        if A_NAME.match(alternative) else None
                    if alias is None:
                        continue
                    for kind, text, *_line in self._assigned.get(alias, ()):
                        if kind == "value" and (alias[0], text) not in seen:
                            seen.add((alias[0], text))
                            following.append((alias[0], text))
            layer = following
        return tags

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
            if self._recording is not None:  # (compared whole on an update)
                self._recording.read(("side", "traced", self._qual(module, owner), def_name))
            for bound, kinds in self.traced().get((self._qual(module, owner), def_name), ()):
                if i >= bound and not any(p == name and default for p, default, _a
                                          in parameters(params)):
                    return kinds[min(i - bound, len(kinds) - 1)]
        return None

    def traced(self) -> dict[tuple, list]:
        """(owner, def name) -> [(how many leading positional parameters a partial
        binds, what the tracer puts in the others: R.TRACERS)] of each function handed
        to a JAX tracer (`mlir.lower_fun(f)`, a loop's body), tests' own too. Read once
        the call sites are all known (before, nothing)."""
        if self._traced is None:
            if self._building_sites:
                return {}
            with apart(self._recording, "traced"):
                self._traced = self._tracing()
        return self._traced

    def _tracing(self) -> dict[tuple, list]:
        traced: dict[tuple, list] = defaultdict(list)
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
                                                   name, index, param, True)):
                    bound = 0
                    while value[0] == PARTIAL_OF:
                        value, bound = value[1], bound + value[2]
                    if value[0] == FN:
                        traced[(value[1], value[2])].append((bound, kinds))
        return traced

    def _returned_tags(self, value: tuple, call: ast.Call) -> frozenset:
        """ARRAY and/or ARRAYS, as the return annotations of the function `value` say
        `call` returns: of the overloads whose first parameter may take a sequence,
        where the call hands it a literal list or tuple (`lax.sort((a, b))` returns a
        tuple of Arrays); else of all its defs. A partial's call returns what its
        function does (`sliced = partial(slice_in_dim, a); sliced(0, 1) - sliced(1, 2)`)."""
        arguments = call.args
        while value[0] == PARTIAL_OF:  # (its arguments come after the partial's)
            value, arguments = value[1], []
        if value[0] not in (FN, BOUND):
            return _EMPTY
        defs = self._array_overloads.get((value[1], value[2]), ()) if value[0] == FN else ()
        if len(defs) > 1 and arguments and isinstance(arguments[0], (ast.Tuple, ast.List)):
            chosen = [tags for params, tags in defs[:-1] if _takes_a_sequence(params)]
            if chosen:
                return frozenset().union(*chosen)
        return self._array_results.get((value[1], value[2]), _EMPTY)

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
        for table in ARRAY_TABLES:
            for value in self._table_entry(table, attr):
                if table == _ARRAY_PROPERTIES:  # `x.at`: the property called on x
                    found |= self.results(value)
                elif value[0] == FN:
                    found.add((BOUND, value[1], value[2]))
        return found

    def _table_entry(self, table: str, key: str) -> frozenset:
        if self._recording is not None:  # (the tables compared whole on an update)
            self._recording.read(("side", "tables", table, key))
        return self.array_tables().get(table, {}).get(key, _EMPTY)

    def array_tables(self) -> dict[str, dict[str, frozenset]]:
        """table -> key -> values, of ARRAY_TABLES and ARRAY_OPERATORS: module-level
        dicts, the same whoever asks, so read once, whole, as if asked first (the chain
        of the question that first needs them set aside: a cut in it, or a cycle
        through a table, would keep an entry empty). While they are read, none."""
        if self._tables is None and not self._reading_tables:
            self._reading_tables = True
            try:
                with apart(self._recording, "tables"):
                    self._tables = self._in_mode(False, self._read_tables)
            finally:
                self._reading_tables = False
        return self._tables or {}

    def _read_tables(self) -> dict[str, dict[str, frozenset]]:
        tables: dict[str, dict[str, frozenset]] = {}
        if ARRAY_MODULE not in self.names.modules:
            return tables
        for table in (*ARRAY_TABLES, ARRAY_OPERATORS):
            entries = defaultdict(set)
            for value in ordered(self._name(ARRAY_MODULE, "", table)):
                if value[0] == BOX:
                    for key, item in self._written(value[1]) | self._stored(value[1]):
                        if isinstance(key, str):
                            entries[key].add(item)
            tables[table] = {key: frozenset(items) for key, items in entries.items()}
        return tables


def _takes_a_sequence(params: str) -> bool:
    """Whether a signature's first parameter is annotated as a sequence, not an Array."""
    first = parameters(params)[:1]
    annotation = (first[0][2] if first else None) or ""
    return ARRAY not in array_tags(annotation) \
        and any(word in annotation for word in ("Sequence", "tuple", "list"))

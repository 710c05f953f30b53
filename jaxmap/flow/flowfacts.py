"""The flow facts of a whole tree indexed for the flow (flow.py): assignments,
parameters, definitions, returns, attributes, stores, calls, decorations, raises,
operators, loops and the fields of classes, by module, owner and name."""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from collections.abc import Collection

from jaxmap.flow import flowtext
from jaxmap.flow.parsing import parameter_names, parse_text
from jaxmap.indexing.resolve.names import Names

# An annotation, or one alternative of a union, that says an Array (`Array`,
# `jax.Array`, `ArrayLike`) or a sequence of Arrays (`list[Array]`, `tuple[Array, ...]`).
_AN_ARRAY = r"(?:[\w.]+\.)?Array(?:Like)?"
_ARRAY_ALTERNATIVE = re.compile(rf"{_AN_ARRAY}\Z")
_ARRAYS_ALTERNATIVE = re.compile(rf"(?:[\w.]+\.)?(?:list|tuple|Sequence|Iterable)"
                                 rf"\[{_AN_ARRAY}(?:,[ \t]*(?:{_AN_ARRAY}|\.\.\.))*\]\Z")
_UNION = re.compile(r"(?:[\w.]+\.)?(?:Union|Optional)\[(.*)\]\Z")
# An Array, and a sequence of Arrays: the values' tags (flow.py reads them).
ARRAY, ARRAYS = "array", "arrays"


def array_tags(annotation: str) -> frozenset:
    """ARRAY and/or ARRAYS, as an annotation's alternatives say a value may be one
    (`Array | None`: ARRAY; `Array | tuple[Array, ...]`: both; `int`: neither); one
    object for each of these few sets (the flow keeps one for each def it tags)."""
    tags = frozenset(ARRAY if _ARRAY_ALTERNATIVE.match(a) else ARRAYS
                     for a in alternatives(annotation)
                     if _ARRAY_ALTERNATIVE.match(a) or _ARRAYS_ALTERNATIVE.match(a))
    return _TAG_SETS.setdefault(tags, tags)


_TAG_SETS: dict[frozenset, frozenset] = {}


def alternatives(annotation: str) -> list[str]:
    """The types an annotation's text says a value may be, quotes left off
    (`Foo | None`, `Optional[Foo]`, `Union[Foo, Bar]`, `"Foo"`)."""
    text = annotation.strip().strip("'\"")
    union = _UNION.match(text)
    return [part.strip("'\"") for part in _split_union(union.group(1) if union else text)]


def _split_union(text: str) -> list[str]:
    """The parts of a union's text, split at each `|` or `,` outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        elif c in "|," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


# What a store puts into a container: `d.append(v)` and the like, or `d[k] = v`.
ADD_STORE, SET_STORE = "add", "set"
# An owner's locals, up to this many, kept as a tuple: a set costs 216 bytes at least
# (12k owners on jax).
_FEW = 8
# A name no code writes, standing in a decoration's text for the def it decorates.
DEF_MARK = "_jaxmap_def_"
_ADDERS = frozenset({"append", "add", "extend", "insert", "update", "setdefault",
                     "appendleft"})


# The tables of `FlowFacts`, each read by key (or whole) by the parts of the flow.
TABLES = ("_assigned", "_params", "_defs", "_signatures", "_array_results",
          "_array_overloads", "_return_annotations", "_locals", "_stores_by", "_returns",
          "_attrs", "_foreign", "_stores", "_calls", "_kept_calls", "_decorations",
          "_decorated_defs", "_stacked", "_raises", "_fields", "_field_types",
          "_field_annotations", "_operators", "decorated", "_loops", "_by_module")


class FlowFacts:
    """A tree's flow facts, indexed by module, owner and name."""

    def __init__(self, names: Names, flows: dict[str, dict[str, tuple]]):
        """Index `flows` (module -> owner -> facts), which is emptied once read: the
        tables hold all of it, and the call graph's peak memory is the tables alone."""
        self.names = names
        self._assigned: dict[tuple, list] = defaultdict(list)  # (module, owner, name) -> values
        # (module, owner, name) -> (def, position, its signature's text)
        self._params: dict[tuple, list] = defaultdict(list)
        self._defs: dict[tuple, list] = {}  # (module, owner) -> [(name, line)]
        # (qualname, def name) -> (module, owner, its signature's text)
        self._signatures: dict[tuple, tuple] = {}
        # (qualname, def name) -> ARRAY and/or ARRAYS, as its return annotations say
        self._array_results: dict[tuple, frozenset] = {}
        # (qualname, def name) -> (signature text, ARRAY/ARRAYS tags) of each of its defs
        # with an Array in its return annotation, in order: the overloads, then the
        # implementation
        self._array_overloads: dict[tuple, list] = defaultdict(list)
        # (qualname, def name) -> [(module, owner, return annotation)], one per overload
        self._return_annotations: dict[tuple, list] = defaultdict(list)
        self._locals: dict[tuple, Collection[str]] = {}  # (module, owner) -> names it binds
        self._stores_by: dict[str, list] = defaultdict(list)  # name stored through -> stores
        # (qualname, def name) -> [(module, owner, value text, the parameter it returns
        # only when None, if any: `if f is None: return partial(deco, ...)`)]
        self._returns: dict[tuple, list] = defaultdict(list)
        # (class, attr) -> [(module, owner, value text)]
        self._attrs: dict[tuple, list] = defaultdict(list)
        self._foreign: dict[str, list] = defaultdict(list)  # attr -> [(module, owner, head, expr)]
        self._stores: list = []  # (module, owner, base, expr): `d[k] = v`, `d.append(v)`
        self._calls: list = []  # (module, owner, callee, args, line)
        self._kept_calls: set[tuple] = set()  # (module, owner, args, line) of a kept partial
        self._decorations: list = []  # (module, owner, decorator, name, line)
        # module -> (owner, name, line) of each decoration of a top-level or class def
        self._decorated_defs: dict[str, list] = defaultdict(list)
        # (module, owner, name, line) of each decorated def -> its decorators applied
        # so far, as text (`(dec1)((dec2)(<the def>))`)
        self._stacked: dict[tuple, str] = {}
        self._raises: dict[str, list] = {}  # module -> (owner, raised, line)
        self._fields: dict[str, list] = defaultdict(list)  # class -> its annotated names
        # field name -> (module, annotation) of each class body that annotates it
        self._field_types: dict[str, list] = defaultdict(list)
        # (class, field name) -> (module, annotation)
        self._field_annotations: dict[tuple, tuple] = {}
        self._operators: dict[str, list] = defaultdict(list)  # module -> (owner, name, op, line)
        self.decorated: set[str] = set()  # qualified names of decorated definitions
        for module, owners in flows.items():
            for owner, facts in owners.items():
                self._index(module, owner, facts)
        self._loops: dict[str, list] = defaultdict(list)  # module -> (owner, iterable, line)
        for (module, owner, _name), assigned in self._assigned.items():
            for kind, value, *line in assigned:
                if value.startswith("<iter> "):
                    self._loops[module].append((owner, value[7:], line[0] if line else 0))
        bound: dict[tuple, set] = defaultdict(set)
        for (module, owner, name) in [*self._assigned, *self._params]:
            bound[(module, owner)].add(name)
        for (module, owner), defs in self._defs.items():
            bound[(module, owner)].update(name for name, _ in defs)
        self._locals = {key: tuple(names) if len(names) <= _FEW else frozenset(names)
                        for key, names in bound.items()}
        for store in self._stores:
            self._stores_by[store[2].rpartition(".")[2]].append(store)
        self._by_module: dict[str, list] = defaultdict(list)
        for call in self._calls:
            self._by_module[call[0]].append(call)
        flows.clear()
        self._freeze()

    def _freeze(self) -> None:
        """The lists of every table, made tuples (smaller; and a missing key read from
        a plain dict adds no entry); and one object for each key that several tables
        hold (`(module, owner, name)` of an assignment and a parameter: 3 MB on jax)."""
        keys: dict = {}
        for name, table in vars(self).items():
            if isinstance(table, defaultdict) and table.default_factory is list:
                setattr(self, name, {keys.setdefault(key, key): tuple(found)
                                     for key, found in table.items()})
            elif type(table) is dict:
                setattr(self, name, {keys.setdefault(key, key): found
                                     for key, found in table.items()})

    def _index(self, module: str, owner: str, facts: tuple) -> None:
        cls = self._class_of(module, owner)
        defs: list[tuple] = []
        open_defs: list[tuple] = []  # every def so far; those whose body may still go on
        # Defs and statements in the order of their lines: a return is its def's.
        in_order = (flowtext.DEF, flowtext.ASSIGN)
        for fact in sorted(facts, key=lambda f: f[3] if f[0] in in_order else 0):
            kind = fact[0]
            if kind == flowtext.DEF:
                _, name, params, line, indent, returns = fact
                defs.append((name, line))
                while open_defs and open_defs[-1][1] >= indent:
                    open_defs.pop()
                open_defs.append((name, indent))
                key = (self._qual(module, owner), name)
                self._signatures[key] = (module, owner, params)
                tags = array_tags(returns) if "Array" in returns else None
                if tags:  # (each overload's, together)
                    self._array_results[key] = self._array_results.get(key, tags) | tags
                    self._array_overloads[key].append((params, tags))
                elif returns:
                    self._return_annotations[key].append((module, owner, returns))
                for param, i in parameter_names(params):
                    self._params[(module, owner, param)].append((name, i, params))
            elif kind == flowtext.ASSIGN:
                _, target, value, line, indent = fact
                while open_defs and open_defs[-1][1] >= indent:
                    open_defs.pop()
                self._assignment(module, owner, cls, target, value, line, open_defs)
                if "lambda" in value:
                    self._lambda_parameters(module, owner, value)
            elif kind == flowtext.DECORATE:  # the name holds what the decorator returns, too
                _, decorator, name, line = fact
                if not defs and owner.rpartition(".")[2] == name:
                    # The owner's own decorators are applied where it is defined.
                    scope = owner.rpartition(".")[0]
                    where = (module, scope, self._class_of(module, scope) if scope else None)
                else:
                    where = (module, owner, cls)
                # Each decorator is handed what the one below it returned, the lowest
                # the def itself (not the name, which holds what the decorators return).
                stacked = (*where[:2], name, line)
                argument = self._stacked.get(stacked, DEF_MARK + name)
                self._stacked[stacked] = applied = f"({decorator})({argument})"
                self._decorations.append((*where[:2], decorator, argument, line))
                if where[1] == "" or where[1] == where[2]:  # a module's or a class's def
                    self._decorated_defs[module].append((where[1], name, line))
                    self.decorated.add(f"{module}.{where[1]}.{name}" if where[1]
                                       else f"{module}.{name}")
                self._assignment(*where, name, applied, line, defs)
            elif kind == flowtext.OPERATOR:
                self._operators[module].append((owner, fact[1], fact[2], fact[3]))
            elif kind == flowtext.RAISE:
                self._raises.setdefault(module, []).append((owner, fact[1], fact[3]))
            elif kind == flowtext.FIELD and cls is not None and owner == cls \
                    and fact[1] not in self._fields[f"{module}.{cls}"]:
                self._fields[f"{module}.{cls}"].append(fact[1])
                self._field_types[fact[1]].append((module, fact[2]))
                self._field_annotations[(f"{module}.{cls}", fact[1])] = (module, fact[2])
            elif kind in (flowtext.CALL, flowtext.KEPT):
                _, callee, args, line = fact
                self._calls.append((module, owner, callee, args, line))
                if kind == flowtext.KEPT:
                    self._kept_calls.add((module, owner, args, line))
                head, _, method = callee.rpartition(".")
                if method in _ADDERS and head:
                    self._stores.append((module, owner, head, (ADD_STORE, method, args)))
        self._defs[(module, owner)] = defs

    def decorated_defs(self, module: str) -> list[tuple[str, str, int]]:
        """(owner, name, line of its first decorator) of each decorated def of a
        module's top level or of a class body, in the order of the text."""
        first: dict[tuple[str, str], int] = {}
        for owner, name, line in self._decorated_defs.get(module, ()):
            first[(owner, name)] = min(line, first.get((owner, name), line))
        return [(owner, name, line) for (owner, name), line in first.items()]

    def _lambda_parameters(self, module: str, owner: str, value: str) -> None:
        """The parameters of the lambdas a value's text writes, as parameters of the
        owner's `<lambda>` (its lambdas are one function, as the index folds them):
        `return lambda fun: make_jit(fun)` hands `make_jit` what the lambda is called
        with; and what they return, as the `<lambda>`'s returns (what
        `api.jit(static_argnames=...)` makes of the function it decorates)."""
        expr = parse_text(value.removeprefix("<iter> "))
        qual = self._qual(module, owner)
        for node in ast.walk(expr) if expr is not None else ():
            if isinstance(node, ast.Lambda):
                params = ", ".join(a.arg for a in (*node.args.posonlyargs, *node.args.args))
                for param, i in parameter_names(params):
                    self._params[(module, owner, param)].append(("<lambda>", i, params))
                self._signatures.setdefault((qual, "<lambda>"), (module, owner, params))
                self._returns[(qual, "<lambda>")].append(
                    (module, owner, ast.unparse(node.body), None))

    def _assignment(self, module, owner, cls, target, value, line, defs) -> None:
        if target.startswith("<return"):  # the innermost def around it (`defs`: open)
            name = defs[-1][0] if defs else None
            qual = self._qual(module, owner)
            guard = target.removeprefix("<return if ").removesuffix(" is None>") \
                if target != "<return>" else None
            self._returns[(qual, name)].append((module, owner, value, guard))
            return
        if "[" in target and target.endswith("]"):
            subscript = parse_text(target)
            if isinstance(subscript, ast.Subscript):
                self._stores.append((module, owner, ast.unparse(subscript.value),
                                     (SET_STORE, subscript.slice, value)))
            return
        if "," in target:
            elements = ("elements", value)  # one for all the names
            for part in target.split(","):
                part = part.strip().lstrip("*").strip()
                if part.isidentifier():
                    self._assigned[(module, owner, part)].append(elements)
            return
        head, _, attr = target.partition(".")
        if not attr:
            if cls is not None and owner == cls:  # a class body: a class attribute
                self._attrs[(f"{module}.{cls}", target)].append((module, owner, value))
            self._assigned[(module, owner, target)].append(("value", value, line))
        elif "." not in attr and head in ("self", "cls") and cls is not None:
            self._attrs[(f"{module}.{cls}", attr)].append((module, owner, value))
        elif head not in ("self", "cls"):  # `x.f = v`, `core.Trace.f = v`
            base, _, last = target.rpartition(".")
            self._foreign[last].append((module, owner, base, value))

    def _class_of(self, module: str, owner: str) -> str | None:
        """The class whose body or method `owner` is, if any."""
        classes = self.names.facts(module).classes
        if owner in classes:
            return owner
        head = owner.rpartition(".")[0]
        return head if head in classes else None

    def _qual(self, module: str, owner: str) -> str:
        """Interned: the tables key on it, once for each def of the owner."""
        return sys.intern(f"{module}.{owner}") if owner else module

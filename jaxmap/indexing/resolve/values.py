"""Small pure functions over the resolver's values (their shapes are in facts.py)."""

from __future__ import annotations

import re
from collections.abc import Callable

from jaxmap.indexing.facts import (
    ADD,
    AND,
    APPLIED,
    ATTRIBUTE,
    CALL,
    CHOICE,
    CLASS,
    CLOSURE,
    CONST,
    DICT,
    FUNC,
    INSTANCE,
    IS,
    ISA,
    LAMBDA,
    MADE,
    METHOD,
    MODULE,
    NAME,
    NEW,
    NOT,
    OR,
    PARAM,
    PARTIAL,
    PRIM,
    RULES,
    SPLAT,
    STR,
    SUBSCRIPT,
    SYM,
    TUPLE,
    UNKNOWN,
    Branch,
)

MAX_HOPS = 30  # bound on chains of re-exports, base classes, wrappers
_CALLABLE = frozenset({FUNC, PARTIAL, LAMBDA, APPLIED, CLASS, CLOSURE, MADE})
_ALWAYS_TRUE = frozenset({FUNC, PARTIAL, LAMBDA, CLASS, CLOSURE, MODULE, PRIM, MADE})
_NONE = (CONST, None)
_DECIDED_PER_CALL = frozenset({IS, AND, OR, ISA})
# A condition that reads as a name needs no parentheses under `not`.
_DOTTED = re.compile(r"[A-Za-z_][\w.]*")
# Values whose kind is known, so `isinstance(value, core.Primitive)` can be decided.
KNOWN_KINDS = frozenset({PRIM, FUNC, CLASS, MODULE, TUPLE, STR, CONST, DICT, LAMBDA, PARTIAL,
                         CLOSURE, INSTANCE, MADE})


def canonical(value: tuple) -> str | None:
    """The fully qualified name of a symbol, function or class value."""
    if value[0] == SYM:
        return value[1]
    if value[0] in (FUNC, CLASS):
        return f"{value[1]}.{value[2]}"
    return None


def is_callable(value: tuple) -> bool:
    return value[0] in _CALLABLE


def text(expr: tuple) -> str:
    """How an extracted expression reads in source, for `via`: `ad.primitive_jvps[...]`."""
    tag = expr[0]
    if tag == NAME:
        return expr[1]
    if tag == SUBSCRIPT:
        return text(expr[1]) + "[...]"
    if tag == CALL:
        return text(expr[1]) + "(...)"
    if tag == ATTRIBUTE:
        return f"{text(expr[1])}.{expr[2]}"
    return "..."


def condition_text(branch: Branch) -> str:
    """How an `if` condition reads, as written, negated for its `else` branch (`not
    (a >= b)`; `if not a:` reads `a` there)."""
    written = branch.text
    if branch.taken:
        return written
    if branch.condition[0] == NOT and written.startswith("not "):
        return written[4:].lstrip()
    return f"not {written}" if _DOTTED.fullmatch(written) else f"not ({written})"


def truth_of(value: tuple) -> bool | None:
    """Whether a value is truthy, where that is known (constants, strings, tuples,
    dicts; functions, classes, partials, modules and primitives always are)."""
    tag = value[0]
    if tag in (CONST, STR, TUPLE, DICT):
        return bool(value[1])
    if tag in _ALWAYS_TRUE:
        return True
    if tag == NOT:
        inner = truth_of(value[1])
        return None if inner is None else not inner
    return None


def disjunction(left: tuple, right: tuple) -> tuple:
    """`left or right`: the operand it gives, where left's truth is known."""
    truth = truth_of(left)
    if truth is not None:
        return left if truth else right
    return (OR, left, right) if depends_on_params(left) else UNKNOWN


def conjunction(left: tuple, right: tuple) -> tuple:
    """`left and right`: the operand it gives, where left's truth is known."""
    truth = truth_of(left)
    if truth is not None:
        return right if truth else left
    return (AND, left, right) if depends_on_params(left) else UNKNOWN


def identity(left: tuple, right: tuple) -> tuple:
    """`left is right`: known for None against a constant or a value of a known kind."""
    if right == _NONE:
        left, right = right, left
    if left == _NONE and (right[0] in _ALWAYS_TRUE or right[0] in (CONST, STR, TUPLE, DICT)):
        return (CONST, right == _NONE)
    return (IS, left, right) if depends_on_params(left) or depends_on_params(right) \
        else UNKNOWN


def choice(condition: tuple, then: tuple, otherwise: tuple) -> tuple:
    """`then if condition else otherwise`."""
    truth = truth_of(condition)
    if truth is not None:
        return then if truth else otherwise
    return (CHOICE, condition, then, otherwise) if depends_on_params(condition) else UNKNOWN


def negation(value: tuple) -> tuple:
    """`not value`: a constant where the truth is known."""
    truth = truth_of(value)
    return (CONST, not truth) if truth is not None else (NOT, value)


def mentions_param(value: tuple) -> bool:
    """Whether a condition depends on a parameter of the function under summary (so a
    call can decide it): the parameter itself, or `not`, `and`, `or`, `is` over it."""
    if value[0] in _DECIDED_PER_CALL:
        return depends_on_params(value)
    return value[0] == PARAM or (value[0] == NOT and mentions_param(value[1]))


def depends_on_params(value: tuple) -> bool:
    """Whether a parameter appears anywhere in a value (`zip(platforms, rules)`)."""
    return _contains(value, PARAM)


def mentions_new(value: tuple) -> bool:
    """Whether a value holds a primitive that a function under summary creates."""
    return _contains(value, NEW)


def _contains(value, tag: str) -> bool:
    """Whether a value, or any value inside it (items, arguments, keywords), has `tag`."""
    if isinstance(value, dict):
        return any(_contains(item, tag) for item in value.values())
    if not isinstance(value, tuple) or not value:
        return False
    if value[0] == CLOSURE:  # its locals may hold itself: not looked into
        return tag == CLOSURE
    if isinstance(value[0], str):  # a tagged value
        return value[0] == tag or any(_contains(item, tag) for item in value[1:])
    return any(_contains(item, tag) for item in value)  # a tuple of values or pairs


def news_in(value: tuple) -> list[tuple]:
    """The NEW values a returned value is or holds (`return fwd_p, bwd_p`)."""
    if value[0] == NEW:
        return [value]
    if value[0] == TUPLE:
        return [new for item in value[1] for new in news_in(item)]
    return []


def concatenation(left: tuple, right: tuple) -> tuple:
    """`left + right`: a string where both are; kept while a parameter is in it."""
    if left[0] == STR and right[0] == STR:
        return (STR, left[1] + right[1])
    if depends_on_params(left) or depends_on_params(right):
        return (ADD, left, right)
    return UNKNOWN


def is_literal(expr: tuple) -> bool:
    """A string, a constant, or a tuple of literals: its own value, needing no names."""
    return expr[0] in (CONST, STR) or (expr[0] == TUPLE and all(map(is_literal, expr[1])))


def bind_params(params: tuple, args: tuple, kwargs: dict,
                defaults: dict | None = None) -> dict[int, tuple]:
    """Parameter index -> argument value, for positional and keyword arguments, and
    literal defaults (`supports_batching=True`, `platforms=("cpu", "cuda")`) for
    parameters not passed. From a
    `*args` argument on, positions are not known: those parameters stay unbound."""
    positional = []
    for param in params:
        if param == "*":
            break
        positional.append(param)
    bound, unknown_from = {}, len(positional)
    for i, value in enumerate(args[:len(positional)]):
        if value[0] == SPLAT:
            unknown_from = i
            break
        bound[i] = value
    for i, param in enumerate(params):
        if param in kwargs:
            bound[i] = kwargs[param]
        elif i not in bound and not unknown_from <= i < len(positional) \
                and is_literal((defaults or {}).get(param, UNKNOWN)):
            bound[i] = (defaults or {})[param]
    return bound


def param_locals(params: tuple, bound: dict[int, tuple]) -> dict[str, tuple]:
    """Parameter name -> its value (UNKNOWN where none is bound), from bind_params."""
    return {p: bound.get(i, UNKNOWN) for i, p in enumerate(params) if p != "*"}


# Bounds on one rewrite of a value (below): how deep it nests, how many parts it has.
MAX_DEPTH = 48
MAX_PARTS = 5000


class Rewrite:
    """One rewrite of values: parameters replaced by the arguments bound to them, and
    NEW values by the primitives a call created for them. Values are graphs, not trees
    (a closure's locals may hold the closure itself, or a call that was passed it), so
    each closure's locals are rewritten once, through a table that closes cycles; and
    the rewrite is bounded: a value nested deeper than MAX_DEPTH, or any part past the
    first MAX_PARTS, becomes UNKNOWN, and `exceeded` says that happened."""

    def __init__(self, bound: dict[int, tuple] | None = None,
                 created: dict[int, tuple] | None = None, isinstance_of=None):
        self.bound = bound
        self.created = created
        self.isinstance_of = isinstance_of  # (value, class) -> bool | None, for ISA
        self.exceeded = False
        self._envs: dict[int, dict] = {}  # id of a closure's locals -> rewritten locals
        self._parts = 0

    def __call__(self, value: tuple) -> tuple:
        return self._rewrite(value, 0)

    def _rewrite(self, value: tuple, depth: int) -> tuple:
        self._parts += 1
        if depth > MAX_DEPTH or self._parts > MAX_PARTS:
            self.exceeded = True
            return UNKNOWN
        tag, inner = value[0], depth + 1
        if tag == PARAM and self.bound is not None:
            return self.bound.get(value[1], UNKNOWN)
        if tag == NEW and self.created is not None:
            return self.created.get(value[2], UNKNOWN)
        if tag == PARTIAL:
            return (PARTIAL, self._rewrite(value[1], inner), self._all(value[2], inner),
                    *value[3:])
        if tag in (APPLIED, MADE):
            return (tag, self._rewrite(value[1], inner), self._all(value[2], inner))
        if tag in (TUPLE, RULES):
            return (tag, self._all(value[1], inner))
        if tag == METHOD:  # self.jvp, with self bound at the call site
            return (METHOD, self._rewrite(value[1], inner), value[2])
        if tag == NOT:
            return negation(self._rewrite(value[1], inner))
        if tag == ISA:
            value, cls = self._all(value[1:], inner)
            decided = self.isinstance_of(value, cls) if self.isinstance_of else None
            return (ISA, value, cls) if decided is None else (CONST, decided)
        if tag in OPERATORS:
            return OPERATORS[tag](*self._all(value[1:], inner))
        if tag == CLOSURE:
            return (CLOSURE, value[1], value[2], self._locals(value[3], inner))
        return value

    def _all(self, values: tuple, depth: int) -> tuple:
        return tuple(self._rewrite(v, depth) for v in values)

    def _locals(self, env: dict, depth: int) -> dict:
        """A closure's locals, rewritten once per rewrite however often they are met."""
        done = self._envs.get(id(env))
        if done is None:
            done = self._envs[id(env)] = {}
            for name, value in env.items():
                done[name] = self._rewrite(value, depth)
        return done


def items_of(value: tuple) -> tuple | None:
    """The items of a tuple value, or the keys of a dict value; None otherwise."""
    if value[0] == TUPLE:
        return value[1]
    if value[0] == DICT:
        return tuple(k for k, _ in value[1])
    return None


# Values kept while an operand is a parameter: made again from their rewritten operands.
OPERATORS: dict[str, Callable[..., tuple]] = {
    ADD: concatenation, OR: disjunction, AND: conjunction, IS: identity, CHOICE: choice}

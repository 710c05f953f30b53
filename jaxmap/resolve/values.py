"""Small pure functions over the resolver's values (their shapes are in facts.py)."""

from __future__ import annotations

from jaxmap.facts import (
    APPLIED,
    ATTRIBUTE,
    CALL,
    CLASS,
    CONST,
    DICT,
    FUNC,
    LAMBDA,
    METHOD,
    NAME,
    NOT,
    PARAM,
    PARTIAL,
    SPLAT,
    STR,
    SUBSCRIPT,
    SYM,
    TUPLE,
    UNKNOWN,
)

MAX_HOPS = 30  # bound on chains of re-exports, base classes, wrappers
_CALLABLE = frozenset({FUNC, PARTIAL, LAMBDA, APPLIED, CLASS})


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


def truth_of(value: tuple) -> bool | None:
    """Whether a value is truthy, where that is known (constants, strings, tuples)."""
    tag = value[0]
    if tag in (CONST, STR, TUPLE):
        return bool(value[1])
    if tag == NOT:
        inner = truth_of(value[1])
        return None if inner is None else not inner
    return None


def negation(value: tuple) -> tuple:
    """`not value`: a constant where the truth is known."""
    truth = truth_of(value)
    return (CONST, not truth) if truth is not None else (NOT, value)


def mentions_param(value: tuple) -> bool:
    """Whether a value depends on a parameter of the function under summary."""
    return value[0] == PARAM or (value[0] == NOT and mentions_param(value[1]))


def bind_params(params: tuple, args: tuple, kwargs: dict,
                defaults: dict | None = None) -> dict[int, tuple]:
    """Parameter index -> argument value, for positional and keyword arguments, and
    literal defaults (`supports_batching=True`) for parameters not passed. From a
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
                and (defaults or {}).get(param, UNKNOWN)[0] in (CONST, STR):
            bound[i] = defaults[param]
    return bound


def substitute(value: tuple, bound: dict[int, tuple]) -> tuple:
    """`value` with parameters replaced by the arguments bound to them."""
    tag = value[0]
    if tag == PARAM:
        return bound.get(value[1], UNKNOWN)
    if tag == PARTIAL:
        return (PARTIAL, substitute(value[1], bound),
                tuple(substitute(a, bound) for a in value[2]), value[3])
    if tag == APPLIED:
        return (APPLIED, substitute(value[1], bound),
                tuple(substitute(a, bound) for a in value[2]))
    if tag == TUPLE:
        return (TUPLE, tuple(substitute(a, bound) for a in value[1]))
    if tag == METHOD:  # self.jvp, with self bound at the call site
        return (METHOD, substitute(value[1], bound), value[2])
    if tag == NOT:
        return negation(substitute(value[1], bound))
    return value


def items_of(value: tuple) -> tuple | None:
    """The items of a tuple value, or the keys of a dict value; None otherwise."""
    if value[0] == TUPLE:
        return value[1]
    if value[0] == DICT:
        return tuple(k for k, _ in value[1])
    return None

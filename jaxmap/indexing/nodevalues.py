"""Tree-sitter expression nodes -> the small tuples the facts store for values
(facts.py lists their shapes), and the argument lists and parameters of calls and
definitions read the same way."""

from __future__ import annotations

import re
from collections.abc import Callable

from jaxmap.indexing.facts import (
    ADD,
    AND,
    ATTRIBUTE,
    CALL,
    CHOICE,
    CONST,
    DICT,
    IS,
    LAMBDA,
    NAME,
    NOT,
    OR,
    SPLAT,
    STR,
    SUBSCRIPT,
    TUPLE,
    UNKNOWN,
)

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_STRING_PREFIX = re.compile(r"[rRbBuU]*")
_MAX_DEPTH = 5
_PARAM_TYPES = {"identifier", "typed_parameter", "default_parameter", "typed_default_parameter"}
_CONSTANTS = {"true": True, "false": False, "none": None}
_UNROLLED_MOST = 64  # the items of a literal a comprehension's `for` is unrolled over


def node_text(node) -> str:
    return node.text.decode("utf-8", "replace")


def node_lines(node) -> tuple[int, int]:
    return node.start_point[0] + 1, node.end_point[0] + 1


def dotted(node) -> str | None:
    """`a.b.c` for an identifier or attribute chain, else None."""
    if node.type == "identifier":
        return node_text(node)
    if node.type != "attribute":
        return None
    text = "".join(node_text(node).split())
    return text if _DOTTED.match(text) else None


def string_literal(node) -> str | None:
    """The value of a plain (non-f, non-concatenated) string literal."""
    if any(c.type == "interpolation" for c in node.children):
        return None
    text = node_text(node)
    prefix = _STRING_PREFIX.match(text)
    assert prefix is not None  # `_STRING_PREFIX` may be empty: it always matches
    text = text[prefix.end():]
    for quote in ('"""', "'''", '"', "'"):
        if text.startswith(quote) and text.endswith(quote) and len(text) >= 2 * len(quote):
            return text[len(quote):-len(quote)]
    return None


def value(node, depth: int = 0) -> tuple:
    """A small tuple that says what an expression is, as far as resolution needs
    (facts.py lists the shapes); UNKNOWN for anything else."""
    handler = _EXPRESSIONS.get(node.type)
    if handler is None or (depth >= _MAX_DEPTH and node.type not in _SHALLOW):
        return UNKNOWN
    return handler(node, depth)


def _name(node, depth: int) -> tuple:
    name = dotted(node)
    if name is not None:
        return (NAME, name)
    if node.type == "attribute" and depth < _MAX_DEPTH:  # table[key].update, f(x).attr
        return (ATTRIBUTE, value(node.child_by_field_name("object"), depth + 1),
                node_text(node.child_by_field_name("attribute")))
    return UNKNOWN


def _call(node, depth: int) -> tuple:
    args, kwargs = arguments(node.child_by_field_name("arguments"), depth + 1)
    return (CALL, value(node.child_by_field_name("function"), depth + 1), args, kwargs)


def _string(node, depth: int) -> tuple:
    literal = string_literal(node)
    return UNKNOWN if literal is None else (STR, literal)


def _sequence(node, depth: int) -> tuple:
    return (TUPLE, tuple(value(c, depth + 1) for c in node.named_children
                         if c.type != "comment"))


def _parenthesized(node, depth: int) -> tuple:
    inner = [c for c in node.named_children if c.type != "comment"]
    return value(inner[0], depth + 1) if len(inner) == 1 else UNKNOWN


def _dictionary(node, depth: int) -> tuple:
    return (DICT, tuple(_pair(c, depth + 1) for c in node.named_children if c.type == "pair"))


def _binary(node, depth: int) -> tuple:
    """`a + b`, the one operator resolution follows (names built from parameters)."""
    if node.child_by_field_name("operator").type != "+":
        return UNKNOWN
    return (ADD, value(node.child_by_field_name("left"), depth + 1),
            value(node.child_by_field_name("right"), depth + 1))


def _boolean(node, depth: int) -> tuple:
    """`a or b`, `a and b`."""
    tag = OR if node.child_by_field_name("operator").type == "or" else AND
    return (tag, value(node.child_by_field_name("left"), depth + 1),
            value(node.child_by_field_name("right"), depth + 1))


def _comparison(node, depth: int) -> tuple:
    """`a is b` and `a is not b`, the comparisons resolution follows (`rule is None`)."""
    operands = [c for c in node.named_children if c.type != "comment"]
    operators = [c.type for c in node.children if c not in operands]
    if len(operands) != 2 or operators not in (["is"], ["is not"]):
        return UNKNOWN
    same = (IS, value(operands[0], depth + 1), value(operands[1], depth + 1))
    return same if operators == ["is"] else (NOT, same)


def _conditional(node, depth: int) -> tuple:
    """`then if condition else otherwise`."""
    parts = [c for c in node.named_children if c.type != "comment"]
    if len(parts) != 3:
        return UNKNOWN
    then, condition, otherwise = (value(c, depth + 1) for c in parts)
    return (CHOICE, condition, then, otherwise)


def _lambda(node, depth: int) -> tuple:
    """(LAMBDA, line, params, defaults, body): a lambda's body is followed when called."""
    params = node.child_by_field_name("parameters")
    names, defaults = parameters(params) if params is not None else ((), {})
    return (LAMBDA, node.start_point[0] + 1, names, defaults,
            value(node.child_by_field_name("body"), depth + 1))


def _subscript(node, depth: int) -> tuple:
    key = node.child_by_field_name("subscript")
    return (SUBSCRIPT, value(node.child_by_field_name("value"), depth + 1),
            value(key, depth + 1) if key is not None else UNKNOWN)


def _comprehension(node, depth: int) -> tuple:
    """`{n: Primitive(n) for n in ("a", "b")}` or `[Primitive(n) for n in ...]`: one `for`
    over a literal tuple or list of strings and constants, no `if`, unrolled into the dict
    or the sequence it makes (as a loop of the top level is), each item read with the
    loop's name bound to its element; any other comprehension, UNKNOWN."""
    clauses = [c for c in node.named_children if c.type in ("for_in_clause", "if_clause")]
    if len(clauses) != 1 or clauses[0].type != "for_in_clause":
        return UNKNOWN
    target = clauses[0].child_by_field_name("left")
    source = clauses[0].child_by_field_name("right")
    body = node.child_by_field_name("body")
    if target is None or target.type != "identifier" or source is None or body is None:
        return UNKNOWN
    elements = value(source, depth + 1)
    if elements[0] != TUPLE or len(elements[1]) > _UNROLLED_MOST \
            or any(e[0] not in (STR, CONST) for e in elements[1]):
        return UNKNOWN
    name = node_text(target)
    if node.type == "dictionary_comprehension":
        if body.type != "pair":
            return UNKNOWN
        pair = _pair(body, depth + 1)
        return (DICT, tuple((_bound(pair[0], name, e), _bound(pair[1], name, e))
                            for e in elements[1]))
    item = value(body, depth + 1)
    return (TUPLE, tuple(_bound(item, name, e) for e in elements[1]))


def _bound(shape, name: str, element: tuple):
    """`shape` with the loop's name (`(NAME, name)`) read as `element` wherever it stands;
    a lambda's body is its own scope, left as it is."""
    if shape == (NAME, name):
        return element
    if isinstance(shape, dict):
        return {key: _bound(part, name, element) for key, part in shape.items()}
    if not isinstance(shape, tuple) or (shape and shape[0] == LAMBDA):
        return shape
    return tuple(_bound(part, name, element) for part in shape)


def _pair(node, depth: int) -> tuple:
    key, item = node.child_by_field_name("key"), node.child_by_field_name("value")
    return value(key, depth), value(item, depth)


# node type -> (node, depth) -> its value
_EXPRESSIONS: dict[str, Callable[..., tuple]] = {
    "identifier": _name, "attribute": _name, "call": _call, "string": _string,
    **dict.fromkeys(("tuple", "list", "expression_list", "pattern_list", "tuple_pattern",
                     "list_pattern"), _sequence),
    "parenthesized_expression": _parenthesized, "dictionary": _dictionary,
    "lambda": _lambda,
    **dict.fromkeys(("list_comprehension", "set_comprehension", "dictionary_comprehension"),
                    _comprehension),
    **{constant: (lambda node, depth, v=v: (CONST, v)) for constant, v in _CONSTANTS.items()},
    "not_operator": lambda node, depth: (NOT, value(node.child_by_field_name("argument"),
                                                    depth + 1)),
    "subscript": _subscript, "binary_operator": _binary, "boolean_operator": _boolean,
    "comparison_operator": _comparison, "conditional_expression": _conditional,
}
# Names are read at any depth: a dotted name is never deep.
_SHALLOW = frozenset({"identifier", "attribute"})


def arguments(node, depth: int = 0) -> tuple[tuple, dict]:
    """Positional and keyword argument values of a call's argument list."""
    if node is None or node.type != "argument_list":
        return ((UNKNOWN,) if node is not None else ()), {}
    args, kwargs = [], {}
    for child in node.named_children:
        kind = child.type
        if kind == "keyword_argument":
            kwargs[node_text(child.child_by_field_name("name"))] = value(
                child.child_by_field_name("value"), depth)
        elif kind == "comment":
            continue
        elif kind in ("list_splat", "dictionary_splat"):
            args.append((SPLAT,))
        else:
            args.append(value(child, depth))
    return tuple(args), kwargs


def parameters(node, with_defaults: bool = True) -> tuple[tuple[str, ...], dict[str, tuple]]:
    """Parameter names in order (`*args` as '*', keyword-only ones after it), and the
    default values of those that have one (unless `with_defaults` is false)."""
    names, defaults = [], {}
    for child in node.named_children:
        kind = child.type
        if kind in _PARAM_TYPES:
            ident = child if kind == "identifier" else (
                child.child_by_field_name("name") or child.named_children[0])
            if ident.type == "identifier":
                names.append(node_text(ident))
                default = child.child_by_field_name("value") if with_defaults else None
                if default is not None:
                    defaults[names[-1]] = value(default)
            else:  # typed *args / **kwargs
                names.append("*")
        elif kind in ("list_splat_pattern", "keyword_separator", "dictionary_splat_pattern"):
            names.append("*")
    return tuple(names), defaults

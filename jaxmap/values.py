"""The resolver's abstract values, and the small pure functions over them.

Values are tuples:
  ("prim", pid)               a primitive found in the tree
  ("new", name)               the primitive a function under summary creates
  ("param", i)                parameter i of a function under summary
  ("func", module, qualname)  ("class", module, qualname)  ("module", module)
  ("sym", qualified_name)     a name outside the tree, or a variable we do not track
  ("str", s)  ("tuple", items)  ("dict", pairs)  ("lambda", line)
  ("partial", func, args, kwargs)  ("applied", callee, args)  ("method", target, name)
  ("const", True/False/None)  ("not", value)  (a negation not known yet)
  ("?",)                      unknown
"""

from __future__ import annotations

UNKNOWN = ("?",)
MAX_HOPS = 30  # bound on chains of re-exports, base classes, wrappers


def canonical(value: tuple) -> str | None:
    """The fully qualified name of a symbol, function or class value."""
    if value[0] == "sym":
        return value[1]
    if value[0] in ("func", "class"):
        return f"{value[1]}.{value[2]}"
    return None


def is_callable(value: tuple) -> bool:
    return value[0] in ("func", "partial", "lambda", "applied", "class")


def text(expr: tuple) -> str:
    """How an extracted expression reads in source, for `via`: `ad.primitive_jvps[...]`."""
    if expr[0] == "n":
        return expr[1]
    if expr[0] == "sub":
        return text(expr[1]) + "[...]"
    if expr[0] == "c":
        return text(expr[1]) + "(...)"
    if expr[0] == "a":
        return f"{text(expr[1])}.{expr[2]}"
    return "..."


def rule_row(kind, file: str, line: int, end_line: int, via: str, platform: str | None,
             function: dict | None) -> dict:
    """A rule as the resolver reports it (the `primitives --json` rule schema)."""
    return {"kind": str(kind), "file": file, "line": line, "end_line": end_line, "via": via,
            "platform": platform, "function": function}


def truth_of(value: tuple) -> bool | None:
    """Whether a value is truthy, where that is known (constants, strings, tuples)."""
    tag = value[0]
    if tag == "const":
        return bool(value[1])
    if tag in ("str", "tuple"):
        return bool(value[1])
    if tag == "not":
        inner = truth_of(value[1])
        return None if inner is None else not inner
    return None


def mentions_param(value: tuple) -> bool:
    """Whether a value depends on a parameter of the function under summary."""
    return value[0] == "param" or (value[0] == "not" and mentions_param(value[1]))


def bind_params(params: tuple, args: tuple, kwargs: dict,
                defaults: dict | None = None) -> dict[int, tuple]:
    """Parameter index -> argument value, for positional and keyword arguments, and
    literal defaults (`supports_batching=True`) for parameters not passed."""
    bound = {}
    positional = []
    for param in params:
        if param == "*":
            break
        positional.append(param)
    for i, value in enumerate(args[:len(positional)]):
        if value != ("*",):
            bound[i] = value
    for i, param in enumerate(params):
        if param in kwargs:
            bound[i] = kwargs[param]
        elif i not in bound and param in (defaults or {}):
            default = defaults[param]
            if default[0] in ("k", "s"):
                bound[i] = ("const", default[1]) if default[0] == "k" else ("str", default[1])
    return bound


def substitute(value: tuple, bound: dict[int, tuple]) -> tuple:
    """`value` with parameters replaced by the arguments bound to them."""
    tag = value[0]
    if tag == "param":
        return bound.get(value[1], UNKNOWN)
    if tag == "partial":
        return ("partial", substitute(value[1], bound),
                tuple(substitute(a, bound) for a in value[2]), value[3])
    if tag == "applied":
        return ("applied", substitute(value[1], bound),
                tuple(substitute(a, bound) for a in value[2]))
    if tag == "tuple":
        return ("tuple", tuple(substitute(a, bound) for a in value[1]))
    if tag == "method":  # self.jvp, with self bound at the call site
        return ("method", substitute(value[1], bound), value[2])
    if tag == "not":
        inner = substitute(value[1], bound)
        truth = truth_of(inner)
        return ("const", not truth) if truth is not None else ("not", inner)
    return value

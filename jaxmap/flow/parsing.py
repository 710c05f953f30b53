"""The texts of the flow facts parsed, each once (cached): expressions, call arguments
and signatures, a dotted name or a plain call built directly rather than compiled."""

from __future__ import annotations

import ast
import re
import sys
from functools import lru_cache

_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\Z")
_PLAIN_ARGUMENTS = re.compile(r"[\w., =*]*\Z")
_SIMPLE_CALL = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)[ \t]*\(([\w., =]*)\)\Z")
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}|'[^']*'|\"[^\"]*\"")
_CONSTANTS = frozenset({"None", "True", "False"})  # names Python reads as constants
_PARAMETER = re.compile(r"[A-Za-z_]\w*|/")
_KEYWORD = re.compile(r"([A-Za-z_]\w*)[ \t]*=(?!=)")
_NESTED = re.compile(r"[()\[\]{}'\",]")
_BRACKET_OR_QUOTE = re.compile(r"[()\[\]{}'\"]")
# Parsed trees kept for reuse: on jax, 512 take no longer than 2048, and hold 6 MB
# less at the call graph's peak.
_TREES = 512


@lru_cache(maxsize=_TREES)
def parse_text(text: str):
    """The expression of a text, or None if it is not one (a dotted name is built
    directly: most texts are one, and compiling each would cost the most here)."""
    text = text.strip()
    if _DOTTED.match(text):
        return dotted_node(text)
    simple = _SIMPLE_CALL.match(text)
    if simple:  # `f(a, k=b)`: built from its parts, as common as a name
        positional, keywords = split_arguments(simple.group(2))
        return ast.Call(dotted_node(simple.group(1)), positional,
                        [ast.keyword(k, v) for k, v in keywords.items()])
    try:
        return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def dotted_node(text: str):
    head, *attributes = text.split(".")
    node = ast.Name(sys.intern(head))
    for attribute in attributes:
        node = ast.Attribute(node, sys.intern(attribute))  # type: ignore[assignment]
    return node


def unparsed(node) -> str:
    """`ast.unparse(node)`, kept on the node: a parsed text's nodes are shared (cached)
    and never changed, and the flow keys a call's memo by its text each time it is
    evaluated (a twentieth of the call graph's time on jax, unparsed anew each time)."""
    text = node.__dict__.get("_unparsed")
    if text is None:
        text = node._unparsed = ast.unparse(node)
    return text


def names_in(node) -> frozenset[str]:
    """The names (`ast.Name` ids) anywhere in `node`, kept on it as `unparsed` keeps
    its text."""
    found = node.__dict__.get("_names")
    if found is None:
        found = node._names = frozenset(
            n.id for n in ast.walk(node) if isinstance(n, ast.Name))
    return found


def dotted_text(node) -> str | None:
    """The text of a dotted name's node (`a.b.c`), or None for any other expression."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def head_name(node) -> str | None:
    """The name a dotted expression starts with."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def constant_key(node):
    """The value of a constant key (a string, a number), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant):
        return None  # a negative index: counted from the end, not known here
    return None


@lru_cache(maxsize=_TREES)
def split_arguments(args: str) -> tuple[list, dict]:
    if _PLAIN_ARGUMENTS.match(args):  # names and keywords only: no parse
        positional, keywords = [], {}
        for piece in args.split(","):
            key, _, value = piece.rpartition("=")
            value = value.strip().lstrip("*")
            if not value and not key.strip():
                continue  # `f()`, or a trailing comma
            if not _DOTTED.match(value) or value.partition(".")[0] in _CONSTANTS:
                break  # a number or a constant (`f(1, x)`, `f(None)`): parsed below
            if key.strip():
                keywords[key.strip()] = dotted_node(value)
            else:
                positional.append(dotted_node(value))
        else:
            return positional, keywords
    try:
        call = ast.parse(f"f({args})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [], {}
    assert isinstance(call, ast.Call)
    return list(call.args), {k.arg: k.value for k in call.keywords if k.arg}


@lru_cache(maxsize=4096)
def argument_texts(args: str) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The texts of a call's positional and keyword arguments (`**kwargs` left out),
    split at the commas outside brackets and strings, without parsing them. Cached:
    the flow splits a site's arguments in each of its two modes (94k calls of 32k
    texts on jax)."""
    if _BRACKET_OR_QUOTE.search(args) is None:
        pieces = args.split(",")
    else:
        pieces, depth, start, quote = [], 0, 0, ""
        for match in _NESTED.finditer(args):
            c = match.group()
            if quote:
                quote = "" if c == quote else quote
            elif c in "'\"":
                quote = c
            elif c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif depth == 0:  # a comma
                pieces.append(args[start:match.start()])
                start = match.end()
        pieces.append(args[start:])
    positional, keywords = [], []
    # Interned, as dotted_node's names: the call sites and the memo keep them (4 MB
    # less at the call graph's peak on jax).
    for piece in (sys.intern(p.strip()) for p in pieces):
        keyword = _KEYWORD.match(piece)
        if keyword:
            keywords.append((sys.intern(keyword.group(1)),
                             sys.intern(piece[keyword.end():].strip())))
        elif piece and not piece.startswith("**"):
            positional.append(piece)
    return tuple(positional), tuple(keywords)


@lru_cache(maxsize=4096)
def parameter_names(params: str) -> tuple[tuple[str, int], ...]:
    """(name, position, or -1 if keyword-only) of each parameter of a signature's text,
    read without parsing it (what is inside brackets is left out first); the names
    interned, as the flow keeps them in keys (`self` 2.8k times on jax). Cached: the
    flow asks for the same signature at each call of its function (a twentieth of the
    call graph's time on jax, read anew each time)."""
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
            found.append((sys.intern(match.group()), position))  # keys: kept once
            if position >= 0:
                position += 1
    return tuple(found)


@lru_cache(maxsize=4096)
def parameters(params: str) -> tuple[tuple[str, str | None, str | None], ...]:
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

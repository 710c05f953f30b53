"""What a parameter annotated as maybe an Array holds where an operator or an iteration
applies to it, read from its function's text with Python's parser, statement by
statement: the parameter's own value; none that is an Array (inside `if isinstance(x,
Sequence):`, or after `if isinstance(x, Array): return ...`, and after such a test
in an `and`, an `or` or a conditional expression); or the one value an assignment gave
it on every way there (`arrays = ensure_arraylike_tuple(arrays)`).
flowtext.py keeps such a use's fact as the parameter's, leaves it out, or says the
value it holds (`<held x> value`: the flow reads the value, or the parameter where it
cannot tell what the value is).

A binding the reading does not follow (unpacking, `+=`, a loop's target, `as`, `:=`,
`del`, `global`, an import), a loop or `try` that rebinds the name, two branches that
leave it holding different values, and uses inside a nested def, a lambda or a
generator: there, what the name holds is unknown, and the operator keeps the
parameter's fact (which the flow joins with every value the name is assigned).
"""

from __future__ import annotations

import ast
import re

# What a name holds at a statement, besides the text of a value assigned to it.
PARAMETER, UNKNOWN = "<parameter>", "<unknown>"
NO_ARRAY = "<no array>"  # (flowtext.py leaves such a use out)
# Types an Array is not an instance of: `isinstance(x, T)` true leaves no Array in x.
_NOT_ARRAYS = frozenset({"Sequence", "MutableSequence", "tuple", "list", "dict", "Mapping",
                         "int", "float", "complex", "bool", "str", "bytes", "slice", "range",
                         "set", "frozenset"})
# `isinstance(x, T)` false: no Array in x (not `ndarray`: `np.ndarray` is no jax Array,
# and only its module tells it from `jnp.ndarray`, which is)
_ARRAY_TYPES = frozenset({"Array"})
_LEAVES = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
           ast.GeneratorExp)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp)
# A line of a source as Python's parser counts them, its end kept (`\r\n`, `\r` or `\n`;
# not a form feed).
_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+\Z")
_TRIES = tuple(getattr(ast, kind) for kind in ("Try", "TryStar") if hasattr(ast, kind))


def operand_values(text: bytes, names: frozenset[str]) -> dict[tuple[int, int], str]:
    """(line, column) in `text` (a function's text, its first line starting at column
    0 or indented) of each use of one of `names`, its parameters, where the name holds
    no Array (NO_ARRAY) or one assigned value (its text); uses not in the answer hold
    the parameter's value or an unknown one."""
    indented = text[:1] in (b" ", b"\t")
    source = b"if 1:\n" + text if indented else text
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    top = tree.body[0] if tree.body else None
    function = top.body[0] if indented and isinstance(top, ast.If) else top
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    found: dict[tuple[int, int], str] = {}
    lines = _LINE.findall(source.decode("utf-8", "replace"))
    for name in names:
        _Reading(name, lines, found, indented).block(function.body, PARAMETER)
    return found


def _segment(lines: list[str], node: ast.expr) -> str | None:
    """The text of `node` in the source split into `lines`, as `ast.get_source_segment`
    gives it (which splits the source again, a character at a time, for each node)."""
    if node.end_lineno is None or node.end_col_offset is None:
        return None
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset:node.end_col_offset].decode()
    return "".join((lines[first].encode()[node.col_offset:].decode(), *lines[first + 1:last],
                    lines[last].encode()[:node.end_col_offset].decode()))


class _Reading:
    """The uses of one name in a function's body, walked in order with what it holds."""

    def __init__(self, name: str, lines: list[str], found: dict, shift: bool):
        self.name, self._lines, self.found, self._shift = name, lines, found, shift

    def block(self, statements: list[ast.stmt], held: str | None) -> str | None:
        """What the name holds after `statements` (None: no way out of them)."""
        for statement in statements:
            if held is None:
                return None
            held = self.statement(statement, held)
        return held

    def statement(self, node: ast.stmt, held: str) -> str | None:
        if _walrus(node, self.name):
            return UNKNOWN  # `if (x := f(x)) and x + 1:`: a use may follow it
        if isinstance(node, ast.If):
            self.uses(node.test, held)
            inside, other = _narrowed(node.test, self.name, held)
            return _join(self.block(node.body, inside), self.block(node.orelse, other))
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            self.uses(node, held)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name) \
                    and targets[0].id == self.name:
                return _segment(self._lines, node.value) or UNKNOWN
            return UNKNOWN if _binds(node, self.name) else held
        if _binds(node, self.name):
            return UNKNOWN  # its uses keep the parameter's fact
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            self.uses(node.iter if isinstance(node, (ast.For, ast.AsyncFor)) else node.test,
                      held)
            self.block(node.body, held)
            self.block(node.orelse, held)
            return held
        if isinstance(node, (ast.With, ast.AsyncWith)):  # which may swallow a raise
            for item in node.items:
                self.uses(item.context_expr, held)
            return _join(self.block(node.body, held), held)
        if isinstance(node, _TRIES):
            try_node: ast.Try = node  # (`try ... except*` has the same fields)
            for part in (try_node.body, *(h.body for h in try_node.handlers),
                         try_node.orelse, try_node.finalbody):
                self.block(part, held)
            return held
        if isinstance(node, _SCOPES) or isinstance(node, ast.Match):
            return held  # a nested def's body runs later; `match` is not read
        self.uses(node, held)
        return None if isinstance(node, _LEAVES) else held

    def uses(self, node: ast.AST, held: str) -> None:
        """Note what the name holds at each use in `node`, outside nested scopes, where
        it is not the parameter's own value nor unknown: `held`, or what an `isinstance`
        test narrows it to for the operands after it in an `and` or an `or`, and for
        the branches of a conditional expression (`y if isinstance(y, int) else ...`)."""
        stack = [(node, held)]
        while stack:
            item, holds = stack.pop()
            if isinstance(item, _SCOPES) or isinstance(item, _COMPREHENSIONS) \
                    and _binds(item, self.name):
                continue
            if isinstance(item, ast.Name) and item.id == self.name \
                    and isinstance(item.ctx, ast.Load):
                if holds not in (PARAMETER, UNKNOWN):
                    self.found[(item.lineno - 1 - self._shift, item.col_offset)] = holds
            elif isinstance(item, ast.BoolOp):
                for value in item.values:
                    stack.append((value, holds))
                    true, false = _narrowed(value, self.name, holds)
                    holds = true if isinstance(item.op, ast.And) else false
            elif isinstance(item, ast.IfExp):
                true, false = _narrowed(item.test, self.name, holds)
                stack += [(item.test, holds), (item.body, true), (item.orelse, false)]
            else:
                stack.extend((child, holds) for child in ast.iter_child_nodes(item))


def no_array_where(test: ast.expr, name: str) -> tuple[bool, bool]:
    """Whether `test` leaves no Array in `name` where it is true, and where false."""
    true, false = _narrowed(test, name, PARAMETER)
    return true == NO_ARRAY, false == NO_ARRAY


def _narrowed(test: ast.expr, name: str, held: str) -> tuple[str, str]:
    """What the name holds where `test` is true, and where it is false: an `and` is
    true where each of its operands is (so any may narrow), an `or` false where each
    is."""
    if isinstance(test, ast.BoolOp):
        both = [_narrowed(value, name, held) for value in test.values]
        side = 0 if isinstance(test.op, ast.And) else 1
        narrowed = NO_ARRAY if any(pair[side] == NO_ARRAY for pair in both) else held
        return (narrowed, held) if side == 0 else (held, narrowed)
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    call = test.operand if isinstance(test, ast.UnaryOp) and negated else test
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id == "isinstance" and len(call.args) == 2 and not call.keywords
            and isinstance(call.args[0], ast.Name) and call.args[0].id == name):
        return held, held
    types = call.args[1].elts if isinstance(call.args[1], ast.Tuple) else [call.args[1]]
    leaves = [t.attr if isinstance(t, ast.Attribute) else getattr(t, "id", "")
              for t in types]
    true, false = held, held
    if leaves and all(leaf in _NOT_ARRAYS for leaf in leaves):
        true = NO_ARRAY
    if any(leaf in _ARRAY_TYPES for leaf in leaves):
        false = NO_ARRAY
    return (false, true) if negated else (true, false)


def _walrus(node: ast.stmt, name: str) -> bool:
    """Whether a statement's own expressions (not its blocks') bind `name` by `:=`."""
    parts = [node.test] if isinstance(node, (ast.If, ast.While)) else \
        [node.iter] if isinstance(node, (ast.For, ast.AsyncFor)) else \
        [item.context_expr for item in node.items] \
        if isinstance(node, (ast.With, ast.AsyncWith)) else [node]
    return any(isinstance(inner, ast.NamedExpr) and isinstance(inner.target, ast.Name)
               and inner.target.id == name for part in parts for inner in ast.walk(part))


def _join(one: str | None, other: str | None) -> str | None:
    """What the name holds after two branches (None: a branch that does not go on)."""
    if one is None or other is None or one == other:
        return other if one is None else one
    return PARAMETER if {one, other} == {PARAMETER, NO_ARRAY} else UNKNOWN


def _binds(node: ast.AST, name: str) -> bool:
    """Whether `node` may bind `name` in the function's own scope."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Name) and item.id == name \
                and not isinstance(item.ctx, ast.Load):
            return True
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if item.name == name or any(isinstance(inner, ast.Nonlocal) and name in inner.names
                                        for inner in ast.walk(item)):
                return True
            continue  # its body is its own scope, but for `nonlocal`
        if isinstance(item, (ast.Global, ast.Nonlocal)) and name in item.names \
                or isinstance(item, ast.alias) and (item.asname or item.name) == name \
                or isinstance(item, ast.ExceptHandler) and item.name == name \
                or isinstance(item, ast.NamedExpr) and item.target.id == name \
                or isinstance(item, (ast.MatchAs, ast.MatchStar)) and item.name == name \
                or isinstance(item, ast.MatchMapping) and item.rest == name:
            return True
        if not isinstance(item, ast.Lambda):
            stack.extend(ast.iter_child_nodes(item))
    return False

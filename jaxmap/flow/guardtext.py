"""Call guards, read from an owner's text as flowtext.py reads its values: which names
an enclosing `if` requires to be None at each line (`if x is None:`, `if x is None and
y is None:`), and what each call passes (by position and by keyword). The call graph
keeps them on its edges, so that a trace-time walk can leave out a call that its
callers' arguments never let run (`where(c, x, y)` never runs `where`'s one-argument
`nonzero(c)`).

Only what reads exactly guards a line: a condition with `or`, `not` or brackets, an
`else:` block, a header over several lines or after its `:` on one line, guards
nothing; a name the text assigns anywhere (`x = ...`, `for x in`, `as x`, `x :=`, a
nested def's parameter) is no guard either, since it may not hold what the caller
passed.

A name passed counts as surely not None only where the owner binds it in one way
alone, `name = value` statements whose values are surely not None (`y = f(x)`,
`y = x + 1`), and in no other: not a parameter (its own or a nested def's or
lambda's), a loop's or comprehension's target, unpacked, `as`, `:=`, `global`,
`nonlocal`, `del`, an import, a `case` pattern, a chained or subscript target.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from jaxmap.flow.flowtext import masked

_GUARD = re.compile(
    rb"[ \t\0]*(?:el)?if[ \t]+([A-Za-z_]\w*[ \t]+is[ \t]+None"
    rb"(?:[ \t]+and[ \t]+[A-Za-z_]\w*[ \t]+is[ \t]+None)*)[ \t]*:[ \t\0]*\Z")
_GUARDED = re.compile(rb"([A-Za-z_]\w*)[ \t]+is[ \t]+None")
_TARGET = rb"[A-Za-z_*\[][\w.\[\]\t ,*\0]*?"
# Statement starts that assign names: `a, b = ...`, `x: T = ...`, `for a, b in ...`
# (also after the `:` of a one-line compound statement); anywhere, `as x` and `x :=`.
_ASSIGNS = re.compile(
    rb"[ \t\0]*(?:(?:if|elif|else|while|for|with|try|except|finally)\b[^\n]*?:[ \t]*)?"
    rb"(?:for[ \t]+(" + _TARGET + rb")[ \t]+in\b|(" + _TARGET + rb")[ \t]*(?::[^=\n]*)?=(?!=))")
_BOUND = re.compile(rb"\bas[ \t]+([A-Za-z_]\w*)|([A-Za-z_]\w*)[ \t]*:=")
_NAME = re.compile(rb"[A-Za-z_]\w*")
_DEF = re.compile(rb"[ \t\0]*(?:async[ \t]+)?def\b")
_SEPARATOR = re.compile(
    rb'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|#[^\n]*|'
    rb"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|[()\[\]{},]")
_COMMENT = re.compile(rb"#[^\n]*")
_KEYWORD = re.compile(rb"\s*([A-Za-z_]\w*)\s*=(?!=)")
# What an argument is, where not a bare name (kept as written): None, a value that may
# be None (`None if axis is None else f(axis)`, `x or None`), any other value.
NONE, MAYBE, VALUE = "None", "?", "."
SPREAD = "*"  # `*args`: what follows is unknown
_MAYBE_NONE = re.compile(rb"\b(?:if|or|and|yield)\b")
_DOTTED = re.compile(rb"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")  # an attribute: may be None


# Statements that bind every name they write (a def's header too: its parameters).
_BINDS_ALL = re.compile(
    rb"[ \t\0]*(?:(?:async[ \t]+)?def|class|global|nonlocal|del|import|from|case)\b")
_SIMPLE = re.compile(rb"[ \t\0]*([A-Za-z_]\w*)[ \t\0]*(?::[^=\n]*)?=(?!=)")
_TOP_EQUALS = re.compile(rb"(?<![=!<>+\-*/%&|^@:])=(?!=)")  # `a = b = v`: chained
_LINE_ASSIGNS = re.compile(rb"^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)
_BRACKETED = re.compile(rb"\([^()\[\]{}]*\)|\[[^()\[\]{}]*\]|\{[^()\[\]{}]*\}")
_LOOP_TARGET = re.compile(rb"\bfor\b([^\n]*?)\bin\b")  # a comprehension's too
_LAMBDA = re.compile(rb"\blambda\b([^:\n]*):")


class Guards:
    """For each line of an owner's text, the names its enclosing `if`s require to be
    None; the names the text assigns; and (asked) the names surely not None."""

    def __init__(self, source: bytes, pieces: list[tuple[int, int]]):
        self._source, self._pieces = source, pieces
        self._values: frozenset[str] | None = None
        self._assigned_somewhere: frozenset[bytes] | None = None
        self._starts: list[int] = []
        self._guards: list[frozenset[str]] = []
        self.assigned: set[str] = set()
        self._owner: int | None = None  # the indent of the owner's own def
        if any(source.find(b" is None", start, end) >= 0 for start, end in pieces):
            for start, end in pieces:
                self._read(source, start, end)

    def at(self, offset: int) -> frozenset[str]:
        """The names the line holding `offset` requires None."""
        found = bisect_right(self._starts, offset) - 1
        return self._guards[found] if found >= 0 else frozenset()

    def _read(self, source: bytes, start: int, end: int) -> None:
        code = masked(source[start:end])
        blocks: list[tuple[int, frozenset[str]]] = []  # (indent, names) of open guards
        guard: frozenset[str] = frozenset()
        depth, joined, at, nested = 0, False, 0, False
        for line in code.split(b"\n"):
            indent = len(line) - len(line.lstrip(b" \t\0"))
            if depth <= 0 and not joined and line.strip(b" \t\0"):  # a statement starts
                while blocks and blocks[-1][0] >= indent:
                    blocks.pop()
                guard = frozenset().union(*(names for _indent, names in blocks))
                header = _GUARD.match(line)
                if header:
                    blocks.append((indent, frozenset(
                        name.decode() for name in _GUARDED.findall(header.group(1)))))
                self._assigned(line)
                # a nested def's parameters are its own, not the owner's
                nested = _DEF.match(line) is not None and self._owner is not None
                if self._owner is None and _DEF.match(line):
                    self._owner = indent
                depth = 0
            elif blocks and indent <= blocks[-1][0]:  # a continuation out of its block
                guard = frozenset()
            if nested:
                self.assigned.update(name.decode() for name in _NAME.findall(line))
            self._bound(line)
            self._starts.append(start + at)
            self._guards.append(guard)
            depth += _depth(line)
            joined = line.rstrip(b" \t\0").endswith(b"\\")
            at += len(line) + 1

    def surely_value(self, name: bytes) -> bool:
        """Whether the text binds `name` only to values surely not None; most names
        passed are parameters, which no line starts by assigning: those are told apart
        by one search, and the text read statement by statement only for the rest."""
        if self._assigned_somewhere is None:
            self._assigned_somewhere = frozenset(
                found for start, end in self._pieces
                for found in _LINE_ASSIGNS.findall(self._source, start, end))
        return name in self._assigned_somewhere and name.decode() in self.values()

    def values(self) -> frozenset[str]:
        """The names a function's text binds only to values surely not None (read once
        asked). A module's or class's text has none: a function may rebind its names
        (`global`), and another module its module's."""
        if self._values is None:
            simple: dict[str, bool] = {}  # name -> every value it is bound to is one
            other: set[str] = set()
            statements = (statement for start, end in self._pieces
                          for statement in _statements(masked(self._source[start:end])))
            first = next((s for s in statements if not s.lstrip(b" \t\0").startswith(b"@")),
                         b"")
            if _DEF.match(first):
                for statement in (first, *statements):
                    _bindings(statement, simple, other)
            self._values = frozenset(name for name, surely in simple.items()
                                     if surely and name not in other)
        return self._values

    def _assigned(self, line: bytes) -> None:
        statement = _ASSIGNS.match(line)
        if statement:
            self.assigned.update(name.decode() for name in _NAME.findall(
                statement.group(1) or statement.group(2)))

    def _bound(self, line: bytes) -> None:
        if b"as" in line or b":=" in line:
            for alias, walrus in _BOUND.findall(line):
                self.assigned.add((alias or walrus).decode())


def _statements(code: bytes):
    """Each statement of masked `code`, its continued lines joined."""
    lines: list[bytes] = []
    depth, joined = 0, False
    for line in code.split(b"\n"):
        if depth <= 0 and not joined and lines:
            yield b" ".join(lines)
            lines = []
        if line.strip(b" \t\0") or lines:
            lines.append(line)
        depth = depth + _depth(line) if lines else 0
        joined = line.rstrip(b" \t\0").endswith(b"\\")
    if lines:
        yield b" ".join(lines)


def _bindings(statement: bytes, simple: dict[str, bool], other: set[str]) -> None:
    """Add what `statement` binds: to `simple`, a `name = value` statement's name and
    whether the value is surely not None; to `other`, names bound any other way."""
    def names(text: bytes) -> set[str]:
        return {name.decode() for name in _NAME.findall(text)}

    if _BINDS_ALL.match(statement) or _DEF.match(statement):
        other.update(names(statement))
        return
    for target in _LOOP_TARGET.findall(statement) + _LAMBDA.findall(statement):
        other.update(names(target))
    for alias, walrus in _BOUND.findall(statement) if b"as" in statement \
            or b":=" in statement else ():
        other.add((alias or walrus).decode())
    single = _SIMPLE.match(statement)
    if single:
        value = statement[single.end():]
        name = single.group(1).decode()
        if _TOP_EQUALS.search(_outside_brackets(value)):  # `a = b = v`, `a = lambda k=v:`
            other.update(names(statement))
        else:
            simple[name] = simple.get(name, True) and _value(value.strip(b" \t\0")) == VALUE
        return
    assigns = _ASSIGNS.match(statement)
    if assigns:
        other.update(names(assigns.group(1) or assigns.group(2)))


def _outside_brackets(text: bytes) -> bytes:
    """`text` less what its brackets hold (`f(k=v)` -> `f`)."""
    while True:
        inner = _BRACKETED.sub(b"", text)
        if inner == text:
            return text
        text = inner


def _depth(text: bytes) -> int:
    count = text.count
    return count(b"(") + count(b"[") + count(b"{") - count(b")") - count(b"]") - count(b"}")


def arguments(source: bytes, at: int, values: Guards | None = None) -> tuple[str, ...]:
    """What the call whose `(` is at `at` passes: for each positional argument, `None`,
    `?` (a value that may be None: a name, unless `values` (the owner's guards) knows
    it surely is not; a condition, `or`, `and`, `yield`, an attribute), or `.`
    (anything else: a literal, a call, an operation, a subscript);
    `*` for `*args` (what follows is unknown); then `name=` and the same for each
    keyword (`**kwargs` left out)."""
    found: list[str] = []
    depth, piece = 0, at + 1
    for match in _SEPARATOR.finditer(source, at):
        token = match.group()
        if token in (b"(", b"[", b"{"):
            depth += 1
        elif token in (b")", b"]", b"}") or token == b"," and depth == 1:
            if token != b",":
                depth -= 1
            if depth == 0 or token == b",":
                _argument(source[piece:match.start()], found, values)
                piece = match.end()
            if depth == 0:
                return tuple(found)
    return (*found, SPREAD)  # never closed (a bound, or broken text): unknown


def _argument(text: bytes, found: list[str], values: Guards | None) -> None:
    text = _COMMENT.sub(b"", text).strip() if b"#" in text else text.strip()
    if not text or text.startswith(b"**"):
        return
    if text.startswith(b"*"):
        found.append(SPREAD)
        return
    keyword = _KEYWORD.match(text)
    if keyword:
        text = text[keyword.end():].strip()
    value = _value(text)
    if value == MAYBE and values is not None and _NAME.fullmatch(text) \
            and values.surely_value(text):
        value = VALUE
    found.append(f"{keyword.group(1).decode()}={value}" if keyword else value)


def _value(text: bytes) -> str:
    if text == b"None":
        return NONE
    # A name may hold None: a parameter its callers choose, a local bound by any of
    # Python's forms (unpacked, a loop's, a lambda's, `as`), a global.
    return MAYBE if _NAME.fullmatch(text) or _MAYBE_NONE.search(text) \
        or _DOTTED.fullmatch(text) else VALUE

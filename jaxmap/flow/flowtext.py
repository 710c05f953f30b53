"""What an owner's text (a function with its nested functions and lambdas, a class
body, a module's top level) does with values, for the call graph's value flow
(resolve/flow.py): read from the text with regular expressions, as `callees` are, so
that bodies extract never parses cost no parse here either.

The stored form of each owner is a tuple of plain tuples, kept as source text (the
resolver parses only what a question needs):
- `("=", target, value, line, indent)`: an assignment (`x = f`, `self.g = h`, `d[k] = f`,
  `a, *b = f, g`); `return v` and `yield v` have the target `<return>` (`<return if x
  is None>` in the block of an `if x is None:`); `for t in v:`
  has the target `t` and the value `<iter> v`;
- `("def", name, parameters, line, indent, returns)`: a `def` in the text (the owner's
  own first), with its return annotation ("" if none); a `return` belongs to the
  innermost def above it with a smaller indent;
- `("dec", decorator, name, line)`: `@decorator` on the def `name`, innermost first;
- `("raise", name, "", line)`: `raise Name` (a class raised is constructed);
- `("field", name, annotation, line)`: an annotated name on a line of its own, `name: T`
  or `name: T = v` (in a class body, a field of a dataclass or NamedTuple, in order);
- `("op", name, operator, line)`: an operator or indexing applied to a bare name or
  to one attribute of one not imported (`idx.index < 0`), each once per owner (`x **
  2`: `pow`; `x[i]`: `getitem`; `2 * x`: `rmul`), not where the other operand is a
  string, None or a bool;
- `("call", callee, arguments, line)`: a call that hands on a name that may hold a
  function (one the file defines or imports, a parameter, a nested function, a lambda, an
  attribute of `self`/`cls` or of a name the file defines), and
  every call of something that is not a dotted name (`d["a"](`, `f()(`, `super().m(`).
Strings and comments are not read; a statement's value is taken whole, over several
lines while its brackets are open.
"""

from __future__ import annotations

import keyword
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection

# The kinds of facts.
ASSIGN, DEF, DECORATE, RAISE, CALL, OPERATOR, FIELD = \
    "=", "def", "dec", "raise", "call", "op", "field"
_TARGET = rb"[A-Za-z_*][\w.\[\]'\"\t ,*\0]*?"  # (NUL: a masked string's contents)
_STATEMENT = re.compile(
    rb"^[ \t]*(?:(return|yield(?:[ \t]+from)?)\b[ \t]*"
    rb"|for[ \t]+(" + _TARGET + rb")[ \t]+in[ \t]+"
    rb"|(" + _TARGET + rb")[ \t]*(?::[^=\n]*)?=(?!=)[ \t]*)", re.M)
# A string or a comment, whose contents are not code.
_NOT_CODE = re.compile(
    rb'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|#[^\n]*')
_NOT_NEWLINE = re.compile(rb"[^\n]")
_FIELD = re.compile(rb"^[ \t]+([A-Za-z_]\w*)[ \t]*:(?!=)[ \t]*([^\s#][^\n]*)$", re.M)
_RAISE = re.compile(rb"^[ \t]*raise[ \t]+([A-Za-z_][\w.]*)[ \t]*(?:#[^\n]*)?$", re.M)
# The decorators of a def, innermost last: `@dec`, `@dec(arg)` on lines of their own.
_DECORATED = re.compile(
    rb"^[ \t]*@([^\n]+)\n((?:[ \t]*@[^\n]+\n)*)[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
_DEF = re.compile(  # (with type parameters: `def scan[Carry, X](...)`, Python 3.12)
    rb"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*(?:\[[^\]\n]*\][ \t]*)?\(", re.M)
_NONE_GUARD = re.compile(rb"[ \t]*if[ \t]+([A-Za-z_]\w*)[ \t]+is[ \t]+None[ \t]*:[ \t]*\Z")
_RETURNS = re.compile(rb"[ \t]*->[ \t]*([^\n#]*?)[ \t]*:")  # after a def's parameters
# A call of a name, or of a subscript or call result (`d["a"](`, `f()(`, `super().m(`).
# (A bracket in the callee may hold one level of parentheses: `zeros(n, f(w)).at[g(x)]`.)
_CALL = re.compile(
    rb"(?<![\w.])(?<!def )(?<!class )([A-Za-z_][\w.]*(?:(?:\((?:[^()\n]|\([^()\n]*\))*\)"
    rb"|\[(?:[^\[\]()\n]|\([^()\n]*\))*\])+(?:\.[A-Za-z_][\w.]*)?)*)[ \t]*\(")
# A name handed on: bare (group 2 empty) or as the head of an attribute (group 2 ".").
_ARGUMENT = re.compile(rb"(?<![\w.])([A-Za-z_]\w*)(?!\w)(\.?)")
_KEYWORDS = frozenset(word.encode() for word in keyword.kwlist)
_OPEN, _CLOSE = b"([{", b")]}"
_BRACKET_OR_QUOTE = re.compile(rb"[()\[\]{}\"']")
# An operator, or indexing, applied to a bare name or one attribute of one (`x ** 2`,
# `x[i]`, `idx.index < 0`): by the name of the dunder it runs (`pow`, `getitem`), as
# JAX's tables of Array operators key them.
_OPERATOR = re.compile(
    rb"(?<![\w.'\"])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)[ \t]*"
    rb"(\*\*|//|==|!=|<=|>=|<<|>>|[-+*/%@&|^<>\[])(?![=>])")
_OPERATOR_NAMES = {b"+": "add", b"-": "sub", b"*": "mul", b"/": "truediv", b"//": "floordiv",
                   b"%": "mod", b"**": "pow", b"@": "matmul", b"&": "and", b"|": "or",
                   b"^": "xor", b"<<": "lshift", b">>": "rshift", b"==": "eq", b"!=": "ne",
                   b"<": "lt", b"<=": "le", b">": "gt", b">=": "ge", b"[": "getitem"}
# What follows an operator when its other operand is no Array: a string (`x ==
# "hann"`), None, or a bool (an index may be None: `x[None]`).
_NOT_AN_ARRAY = re.compile(rb"[ \t]*(?:[rbfu]{0,2}[\"']|(?:None|True|False)\b)")
# A number, then an operator, then a bare name (`2 * x`, `1. - x`, `0 < x`): the
# number's dunder gives up, and the name's reflected one runs (a comparison's mirror).
_REFLECTED = re.compile(
    rb"(?<![\w.)\]'\"])\d[\w.]*[ \t]*(\*\*|//|==|!=|<=|>=|<<|>>|[-+*/%@&|^<>])[ \t]*"
    rb"([A-Za-z_]\w*)(?![\w.(\[])")
_KEYWORD_BEFORE = re.compile(rb"(?<![\w.])(?:return|yield|if|elif|and|or|not|in|else|lambda)\Z")
_REFLECTED_NAMES = {b"+": "radd", b"-": "rsub", b"*": "rmul", b"/": "rtruediv",
                    b"//": "rfloordiv", b"%": "rmod", b"**": "rpow", b"@": "rmatmul",
                    b"&": "rand", b"|": "ror", b"^": "rxor", b"<<": "rlshift",
                    b">>": "rrshift", b"==": "eq", b"!=": "ne", b"<": "gt", b"<=": "ge",
                    b">": "lt", b">=": "le"}
_SIMPLE_ARGUMENTS = re.compile(rb"\([^()\n]*\)")
_MAX_LINES = 400  # a table of JAX's (Array methods, operators) runs to ~80


def read(source: bytes, pieces: list[tuple[int, int]], line: int, defined: frozenset,
         imported: frozenset) -> tuple:
    """The value-flow facts of the text of `pieces` ((start, end) byte ranges in order,
    the first at `line`); `defined` and `imported`: the names the file's top level
    defines and imports, which with nested defs, `self` and `cls` are what a kept call
    may hand on (a bare name, or an attribute of what is not imported)."""
    found: list[tuple] = []
    local: set[bytes] = set()
    received: set[bytes] = set()  # parameters, which a call may hand on in turn
    # Views, not unions: a module's owner has a piece between every two functions, and
    # copying what the module defines for each piece cost the square of its functions.
    owned = _AnyOf(defined, local, _SELF)
    names = _AnyOf(defined, local, _SELF, imported, received)
    counted, start_line = pieces[0][0] if pieces else 0, line  # the line of `counted`
    for start, end in pieces:  # in order: each piece's line counted on from the last
        text = source[start:end]
        code = masked(text)  # the text, its strings' and comments' contents blanked
        start_line += source.count(b"\n", counted, start)
        counted = start
        line_of = _Lines(text, start_line)
        for match in _DEF.finditer(code):
            params = _balanced(text, match.end() - 1)
            local.add(match.group(1))
            received.update(_parameter_names(params[1:-1]))
            returns = _RETURNS.match(text, match.end() - 1 + len(params))
            found.append((DEF, match.group(1).decode(), params[1:-1].decode(errors="replace"),
                          line_of(match.start()), _indent(match.group()),
                          returns.group(1).decode(errors="replace") if returns else ""))
        for match in _DECORATED.finditer(code):
            at = line_of(match.start())
            written = [_group(text, match, 1)] + [
                d.strip()[1:] for d in _group(text, match, 2).split(b"\n") if d.strip()]
            for decorator in reversed(written):
                found.append((DECORATE, _without_comment(decorator).strip().decode(
                    errors="replace"), match.group(3).decode(), at))
        for match in _FIELD.finditer(code):
            if match.group(1) not in _KEYWORDS:
                annotation = _without_comment(_group(text, match, 2).partition(b"=")[0])
                found.append((FIELD, match.group(1).decode(),
                              annotation.strip().decode(errors="replace"), line_of(match.start())))
        for match in _RAISE.finditer(code):
            found.append((RAISE, match.group(1).decode(), "", line_of(match.start())))
        covered = 0  # the end of the last statement: a match before it is inside it
        for match in _STATEMENT.finditer(code):
            if match.start() < covered:  # `f(a,\n  b=c)`: a keyword, not an assignment
                continue
            value, covered = _logical(text, code, match.end())
            if not value or value.startswith(b"#"):
                continue
            at = line_of(match.start())
            keyword, loop, target = (_group(text, match, i) if match.group(i) else None
                                     for i in (1, 2, 3))
            indent = _indent(match.group())
            if keyword:
                guard = _none_guard(code, match.start(), indent) if keyword == b"return" \
                    else None
                returned = f"<return if {guard.decode()} is None>" if guard else "<return>"
                found.append((ASSIGN, returned, value.decode(errors="replace"), at, indent))
            elif loop:
                found.append((ASSIGN, loop.decode().strip(), "<iter> " + value.decode(
                    errors="replace").rstrip(":").rstrip(), at, indent))
            elif target:
                found.append((ASSIGN, target.decode().strip(), value.decode(errors="replace"), at,
                              indent))
        seen = set()
        for match in _OPERATOR.finditer(code):  # each (name, operator) once per owner
            key = match.group(1, 2)
            head, dot, _attr = key[0].partition(b".")
            if key not in seen and match.group(1) not in _KEYWORDS and not (
                    key[1] != b"[" and _NOT_AN_ARRAY.match(code, match.end())) \
                    and not (dot and head in imported):  # `np.pi * x`, `ad.jvps[p]`
                seen.add(key)
                found.append((OPERATOR, match.group(1).decode(), _OPERATOR_NAMES[key[1]],
                              line_of(match.start())))
        for match in _REFLECTED.finditer(code):  # `2 * x`: x's reflected dunder runs
            name, reflected = match.group(2), _REFLECTED_NAMES[match.group(1)]
            if (name, reflected) not in seen and name not in _KEYWORDS \
                    and _starts_operand(code, match.start()):
                seen.add((name, reflected))
                found.append((OPERATOR, name.decode(), reflected, line_of(match.start())))
        found += _calls(text, code, line_of, names, owned)
    return tuple(found)


_SELF = frozenset({b"self", b"cls"})


class _AnyOf:
    """Membership in any of some sets, as they are when asked."""

    def __init__(self, *sets: Collection[bytes]):
        self._sets = sets

    def __contains__(self, item: object) -> bool:
        for found in self._sets:  # a loop, not any(): asked for every argument read
            if item in found:
                return True
        return False


def masked(text: bytes) -> bytes:
    """`text` with what is inside its strings and comments blanked (its lines and
    offsets kept): what they say is not code to read."""
    return _NOT_CODE.sub(_blank, text) if b"#" in text or b"'" in text or b'"' in text \
        else text


def _blank(match) -> bytes:
    """A string's contents or a comment as NUL bytes (lines kept): no pattern reads them
    as code, and none backtracks over them as it would over a run of spaces."""
    found = match.group()
    if found.startswith(b"#"):
        return b"\0" * len(found)
    quote = 3 if found[:3] in (b'"""', b"\'\'\'") else 1
    inside = _NOT_NEWLINE.sub(b"\0", found[quote:-quote])
    return found[:quote] + inside + found[-quote:]


def _group(text: bytes, match, group: int) -> bytes:
    """A group of a match made on the masked text, as the text writes it."""
    return text[match.start(group):match.end(group)]


def _calls(text: bytes, code: bytes, line_of, names: _AnyOf, owned: _AnyOf) -> list[tuple]:
    """The kept calls of a text (see the module's docstring), found in its masked `code`:
    those that hand on one of `names` bare, a lambda, or an attribute of one of `owned`
    (`self.f`, `obj.f`); an imported module's attribute handed on is a `handed` edge
    already."""
    found: list[tuple] = []
    for match in _CALL.finditer(code):
        callee = _group(text, match, 1)
        if callee.partition(b".")[0] in _KEYWORDS:
            continue
        simple = _SIMPLE_ARGUMENTS.match(text, match.end() - 1)
        args = simple.group() if simple else _balanced(text, match.end() - 1)
        plain = b"(" not in callee and b"[" not in callee
        if plain and b"lambda" not in args and not any(
                w in (owned if dotted else names) for w, dotted in _ARGUMENT.findall(args)):
            continue
        else:
            for inner, inner_args in _inner_calls(callee):  # `f()(g)`: f() is given g
                if inner_args:
                    found.append((CALL, inner.decode(), inner_args.decode(errors="replace"),
                                  line_of(match.start())))
        found.append((CALL, callee.decode(), args[1:-1].decode(errors="replace"),
                      line_of(match.start())))
    return found


def _parameter_names(params: bytes) -> set[bytes]:
    """The names of a signature's parameters (and, harmlessly, of names a default
    holding a comma splits off)."""
    names = set()
    for piece in params.split(b","):
        name = piece.strip().lstrip(b"*").partition(b":")[0].partition(b"=")[0].strip()
        if name.isascii() and name.decode().isidentifier():
            names.add(name)
    return names


class _Lines:
    """The line of a byte offset of a text, counted on from the last one asked (offsets
    asked in order cost one pass over the text)."""

    def __init__(self, text: bytes, first: int):
        self._text, self._first = text, first
        self._at, self._line = 0, first

    def __call__(self, offset: int) -> int:
        if offset < self._at:
            self._at, self._line = 0, self._first
        self._line += self._text.count(b"\n", self._at, offset)
        self._at = offset
        return self._line


def _none_guard(code: bytes, start: int, indent: int) -> bytes | None:
    """The name `x` where the block holding the statement at `start` (of `indent`) is
    `if x is None:`, the line above it of a smaller indent (`if f is None: return
    partial(deco, ...)`, a decorator called without its function)."""
    end = code.rfind(b"\n", 0, start)
    while end > 0:
        begin = code.rfind(b"\n", 0, end) + 1
        line = code[begin:end]
        end = begin - 1
        if line.strip() and _indent(line) < indent:
            header = _NONE_GUARD.match(line)
            return header.group(1) if header else None
    return None


def _starts_operand(code: bytes, at: int) -> bool:
    """Whether what is at `at` starts an expression (after `(`, `,`, `=`, a keyword,
    or at a line's start): the left operand of the operator after it is that alone
    (in `a * 2 + x`, `2` is not `+`'s left operand)."""
    before = code[max(0, at - 40):at].rstrip(b" \t")
    return not before or before[-1:] in b"([{,=:\n" \
        or _KEYWORD_BEFORE.search(before) is not None


def _indent(statement: bytes) -> int:
    return len(statement) - len(statement.lstrip(b" \t"))


def _inner_calls(callee: bytes) -> list[tuple[bytes, bytes]]:
    """(callee, arguments) of the calls inside a chained callee (`f(a)(b)` -> `f`, `a`)."""
    found, depth, start = [], 0, 0
    for i, c in enumerate(callee):
        if c == 40 and depth == 0:  # (
            start = i
        if c in b"([":
            depth += 1
        elif c in b")]":
            depth -= 1
            if depth == 0 and c == 41:  # )
                found.append((callee[:start], callee[start + 1:i]))
    return found


def _logical(text: bytes, code: bytes, at: int) -> tuple[bytes, int]:
    """The rest of a statement from `at`: to its line's end, or further while a bracket
    of its `code` (the masked text) is open (up to a bound); and the offset where it
    ends."""
    end = code.find(b"\n", at)
    end = len(code) if end < 0 else end
    depth = _depth(code[at:end])
    lines = 0
    while depth > 0 and end < len(code) and lines < _MAX_LINES:
        nxt = code.find(b"\n", end + 1)
        nxt = len(code) if nxt < 0 else nxt
        depth += _depth(code[end:nxt])
        end, lines = nxt, lines + 1
    return _without_comment(text[at:end]).strip(), end


def _depth(text: bytes) -> int:
    """How many more brackets `text` opens than it closes."""
    count = text.count
    return count(b"(") + count(b"[") + count(b"{") - count(b")") - count(b"]") - count(b"}")


def _without_comment(value: bytes) -> bytes:
    if b"#" not in value:
        return value
    return b"\n".join(line.split(b"#", 1)[0] if b"'" not in line and b'"' not in line
                      else line for line in value.split(b"\n"))


def _balanced(text: bytes, at: int) -> bytes:
    """The bracketed text that opens at `at`, brackets included (to the bound if it
    never closes); a quote skips to the next of its kind."""
    depth, end = 0, min(len(text), at + 4000)
    found = _BRACKET_OR_QUOTE.search(text, at, end)
    while found is not None:
        c, i = found.group(), found.start()
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth == 0:
                return text[at:i + 1]
        else:
            close = text.find(c, i + 1)
            i = close if close > 0 else i
        found = _BRACKET_OR_QUOTE.search(text, i + 1, end)
    return text[at:end]

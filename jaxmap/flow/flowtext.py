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
- `("op", operand, operator, line)`: an operator or indexing applied to a bare name or
  to one attribute of one not imported (`idx.index < 0`), each once per owner (`x **
  2`: `pow`; `x[i]`: `getitem`; `2 * x`: `rmul`; `-x`: `neg`; where a parameter holds
  the value an assignment gave it, `<held x> f(x)`: narrowing.py), not where the other
  operand is a string, None or a bool; or applied to an operand that is more than a
  name, as precedence groups it (`f(x) + 1`: `f(x)`; `a * b + c`: `a * b`; `0.5 *
  f(x)`: `f(x)`, `rmul`; the builtin `abs(f(x))`: `abs`), its text, which the flow
  parses; `iter` for a name (or one attribute of one) iterated: unpacked with a
  star among a call's arguments or a display's items (`f(*xs)`, `[*xs]`), the
  iterable of a `for` statement or comprehension (or a name or call that the builtin
  `zip` or `enumerate` it runs over is handed), or the value a target list
  unpacks (`a, *b = x`, `k1, k2 = split(k)`: a call's text, parsed by the flow);
- `("call", callee, arguments, line)`: a call that hands on a name that may hold a
  function (one the file defines or imports, a parameter, a nested function, a lambda, an
  attribute of `self`/`cls` or of a name the file defines), and
  every call of something that is not a dotted name (`d["a"](`, `f()(`, `super().m(`;
  `Op(\n  aval,\n)(x)` with the callee on one line, `Op(aval)`); `("kept", ...)`
  alike for a `partial(...)` whose value is kept for later (stored into a subscript
  or an attribute, or handed to a registrar: indexing/kept.py), which calls nothing.
Strings and comments are not read; a statement's value is taken whole, over several
lines while its brackets are open; statements joined by `;` are read each alone.
"""

from __future__ import annotations

import ast
import bisect
import keyword
import re
from typing import TYPE_CHECKING

from jaxmap.flow import narrowing
from jaxmap.flow.parsing import argument_texts, parameters, parse_text
from jaxmap.indexing.kept import kept_value

if TYPE_CHECKING:
    from collections.abc import Collection

# The kinds of facts.
ASSIGN, DEF, DECORATE, RAISE, CALL, KEPT, OPERATOR, FIELD = \
    "=", "def", "dec", "raise", "call", "kept", "op", "field"
# (NUL: a masked string's contents; `[x] = f()`, `(a, b) = f()`: unpacked as `x, = f()`)
_TARGET = rb"(?:\[[\w\t ,*]*\]|\([\w\t ,*]*\)|[A-Za-z_*][\w.\[\]'\"\t ,*\0]*?)"
# A statement starts a line or follows a `;` (`import os; y = f(x)`); each ends at the
# next `;` (in the masked text, `;` is nothing else).
_STATEMENT = re.compile(
    rb"(?:^|;)[ \t]*(?:(return|yield(?:[ \t]+from)?)\b[ \t]*"
    rb"|for[ \t]+(" + _TARGET + rb")[ \t]+in[ \t]+"
    rb"|(" + _TARGET + rb")[ \t]*(?::[^=\n]*)?=(?!=)[ \t]*)", re.M)
# A string or a comment, whose contents are not code.
_NOT_CODE = re.compile(
    rb'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|#[^\n]*')
_NOT_NEWLINE = re.compile(rb"[^\n]")
_SPACES = re.compile(rb"\s*\n\s*")  # a line break and the indent around it
_FIELD = re.compile(
    rb"(?:^[ \t]+|;[ \t]*)([A-Za-z_]\w*)[ \t]*:(?!=)[ \t]*([^\s\0;][^\n;]*)(?=$|;)", re.M)
_RAISE = re.compile(rb"(?:^|;)[ \t]*raise[ \t]+([A-Za-z_][\w.]*)[ \t]*(?=$|[;\0])", re.M)
# The decorators of a def, innermost last: `@dec`, `@dec(arg)` on lines of their own.
_DECORATED = re.compile(
    rb"^[ \t]*@([^\n]+)\n((?:[ \t]*@[^\n]+\n)*)[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
_DEF = re.compile(  # (with type parameters: `def scan[Carry, X](...)`, Python 3.12)
    rb"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*(?:\[[^\]\n]*\][ \t]*)?\(", re.M)
# The keywords that open a control statement's header, and what follows a keyword that
# is no name (`case = 1`, `match.group` are names).
_CONTROL_WORDS = rb"if|elif|else|for|while|try|except|finally|with|case"
_NOT_A_NAME = rb"\b(?![ \t]*[=.,;)\]])"
_HEADER = re.compile(  # a line that opens with a compound statement's header
    rb"[ \t]*(?:" + _CONTROL_WORDS + rb"|def|class|async|match)" + _NOT_A_NAME)
_CONTROL = re.compile(  # a control statement's header, whose body may follow on its line
    rb"^[ \t]*(?:async[ \t]+)?(?:" + _CONTROL_WORDS + rb")" + _NOT_A_NAME, re.M)
_NONE_GUARD = re.compile(rb"[ \t]*if[ \t]+([A-Za-z_]\w*)[ \t]+is[ \t]+None[ \t]*:[ \t]*\Z")
_RETURNS = re.compile(rb"[ \t]*->[ \t]*([^\n#]*?)[ \t]*:")  # after a def's parameters
# A call of a name, or of a subscript or call result (`d["a"](`, `f()(`, `super().m(`).
# (A bracket in the callee may hold one level of parentheses, `zeros(n, f(w)).at[g(x)]`,
# and a subscript one level of brackets, `a.at[-b.shape[0]:]`.) What may not precede the
# name is looked behind from its first letter: a pattern that starts with a character
# class lets the engine skip to the next letter, a third of this pattern's time. A
# dotted name is taken whole (a look-ahead group and its back-reference: no
# backtracking into it, which could match nothing more), half the time on jax's files.
_CALL = re.compile(
    rb"([A-Za-z_](?<![\w.][A-Za-z_])(?<!def [A-Za-z_])(?<!class [A-Za-z_])(?=([\w.]*))\2"
    rb"(?:(?:\((?:[^()\n]|\([^()\n]*\))*\)"
    rb"|\[(?:[^\[\]()\n]|\([^()\n]*\)|\[[^\[\]()\n]*\])*\])+"
    rb"(?:\.[A-Za-z_](?=([\w.]*))\3)?)*)"
    rb"[ \t]*\(")
# A name handed on: bare (group 2 empty) or as the head of an attribute (group 2 ".");
# what may not precede it looked behind from its first letter, as in `_CALL`.
_ARGUMENT = re.compile(rb"([A-Za-z_](?<![\w.][A-Za-z_])\w*)(?!\w)(\.?)")
_KEYWORDS = frozenset(word.encode() for word in keyword.kwlist)
_OPEN, _CLOSE = b"([{", b")]}"
_BRACKET_OR_QUOTE = re.compile(rb"[()\[\]{}\"']")
# An operator, or indexing, applied to a bare name or one attribute of one (`x ** 2`,
# `x[i]`, `idx.index < 0`): by the name of the dunder it runs (`pow`, `getitem`), as
# JAX's tables of Array operators key them. (Groups 2 and 3 take each word of the name
# whole, as in `_CALL`; group 4 is the operator.)
_OPERATOR = re.compile(
    rb"(?<![\w.'\"])([A-Za-z_](?=(\w*))\2(?:\.[A-Za-z_](?=(\w*))\3)?)[ \t]*"
    rb"(\*\*|//|==|!=|<=|>=|<<|>>|[-+*/%@&|^<>\[])(?![=>])")
_SYMBOL = 4  # `_OPERATOR`'s group of the operator
_OPERATOR_NAMES = {b"+": "add", b"-": "sub", b"*": "mul", b"/": "truediv", b"//": "floordiv",
                   b"%": "mod", b"**": "pow", b"@": "matmul", b"&": "and", b"|": "or",
                   b"^": "xor", b"<<": "lshift", b">>": "rshift", b"==": "eq", b"!=": "ne",
                   b"<": "lt", b"<=": "le", b">": "gt", b">=": "ge", b"[": "getitem"}
# What follows an operator when its other operand is no Array: a string (`x ==
# "hann"`), None, or a bool (an index may be None: `x[None]`).
_NOT_AN_ARRAY = re.compile(rb"[ \t]*(?:[rbfu]{0,2}[\"']|(?:None|True|False)\b)")
_KEYWORD_BEFORE = re.compile(rb"(?<![\w.])(?:return|yield|if|elif|and|or|not|in|else|lambda)\Z")
# A number, then an operator: the number's dunder gives up, and the other operand's
# reflected one runs (a comparison's mirror: `0 < x` is x's gt).
_REFLECTED_NAMES = {b"+": "radd", b"-": "rsub", b"*": "rmul", b"/": "rtruediv",
                    b"//": "rfloordiv", b"%": "rmod", b"**": "rpow", b"@": "rmatmul",
                    b"&": "rand", b"|": "ror", b"^": "rxor", b"<<": "rlshift",
                    b">>": "rrshift", b"==": "eq", b"!=": "ne", b"<": "gt", b"<=": "ge",
                    b">": "lt", b">=": "le"}
_SIMPLE_ARGUMENTS = re.compile(rb"\([^()\n]*\)")
# Brackets `_balanced` closes where this does, and faster: parentheses nested one deep,
# no string, no other bracket (`(f(x), g(y))`).
_NESTED_ARGUMENTS = re.compile(rb"\((?:[^()\[\]{}\"']|\([^()\[\]{}\"']*\))*\)")
_CALL_OPENS = re.compile(rb"[ \t]*\(")  # after a call: its result is called
# What may make a call's brackets close elsewhere in the masked code than in its text (a
# string, a comment), or close elsewhere than a simple argument list's `)` (a bracket).
_NOT_PLAIN = re.compile(rb"[\"'#\[\]{}]")
# An operator after a call, a subscript or a bracketed expression (`f(x) + 1`, `(a - b) *
# c`, `x[0] * y`; not `x[0][1]`: the head's own indexing is read); a number before one
# (`2 * x`, `0.5 * f(x)`, `1 - x.T`: its right operand's reflected operator); and a
# unary operator (`-f(x)`, `~mask`).
_CLOSED_OPERATOR = re.compile(
    rb"[)\]][ \t]*(\*\*|//|==|!=|<=|>=|<<|>>|[-+*/%@&|^<>]|(?<=\))\[)(?![=>])")
_REFLECTED_EXPRESSION = re.compile(
    rb"(?<![\w.)\]'\"])\d[\w.]*[ \t]*(\*\*|//|==|!=|<=|>=|<<|>>|[-+*/%@&|^<>])(?![=>])"
    rb"[ \t]*(?=[-~(\w])")
_UNARY = re.compile(rb"([-+~])[ \t]*(?=[A-Za-z_(])")
_UNARY_NAMES = {b"-": "neg", b"+": "pos", b"~": "invert"}
# What every operator above is written with: a text without any has none of them.
_MAY_OPERATE = re.compile(rb"[-+*/%@&|^<>\[~]|[=!]=")
# The builtin `abs(x)`, which runs x's `__abs__` (a name of the module may shadow it:
# the flow tells).
_ABS = re.compile(rb"(?<![\w.])abs[ \t]*\(")
ABS = "abs"
# A name iterated (`f(*xs)`, `[*xs]`; `for v in xs:`, `[f(v) for v in xs if v]`).
_NAME = rb"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)"
_STARRED = re.compile(rb"[(\[{,][ \t\n]*\*[ \t]*" + _NAME + rb"(?=[ \t\n]*[,)\]}])")
_FOR_IN = re.compile(rb"(?<![\w.])for[ \t]+[\w\t ,*()\[\]]+?[ \t]in[ \t]+" + _NAME
                     + rb"(?=[ \t]*(?:[:)\]}\n]|if[ \t]|for[ \t]))")
# A loop over the builtin `zip` or `enumerate`, which iterate each of their arguments
# (`for x, i in zip(broadcast_to(s, n), axes):`).
_FOR_IN_ZIP = re.compile(rb"(?<![\w.])for[ \t]+[\w\t ,*()\[\]]+?[ \t]in[ \t]+"
                         rb"(?:zip|enumerate)[ \t]*\(")
# What a target list unpacks, read as an iteration: a name, or a call of a dotted name.
_A_DOTTED_NAME = re.compile(rb"[\w.]+\Z")
_UNPACKED = re.compile(rb"[A-Za-z_][\w.]*(?:\([\s\S]*\))?\Z")
ITER = "iter"
# The names of every operator a fact may say (the flow tells an operator's text by it).
OPERATOR_NAMES = frozenset({*_OPERATOR_NAMES.values(), *_REFLECTED_NAMES.values(),
                            *_UNARY_NAMES.values(), ABS, ITER})
# How tightly each arithmetic operator binds (a comparison, less than all of them).
_PRECEDENCE = {b"|": 1, b"^": 2, b"&": 3, b"<<": 4, b">>": 4, b"+": 5, b"-": 5, b"*": 6,
               b"/": 6, b"//": 6, b"%": 6, b"@": 6, b"**": 8}
_UNARY_PRECEDENCE, _POWER, _SUBSCRIPT = 7, 8, 9
_EXPONENT = re.compile(rb"\d[eE][-+]\d")
_A_NAME = re.compile(rb"(?<![\w.])[A-Za-z_]")  # in an operand: it is no number alone
# What precedes a unary operator (not a binary one): an opening bracket, a separator,
# another operator, or a keyword (`return -x`, `f(-x)`, `a * -b`).
_BEFORE_UNARY = frozenset(b"([{,=:;+-*/%@&|^<>~!")
_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")
_MAX_OPERAND = 400  # bytes of an operand's text kept (a longer one is not read)
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
        if not text.strip():  # blank (between two defs): no fact, and its lines are
            continue  # counted with the next piece's
        code = masked(text)  # the text, its strings' and comments' contents blanked
        start_line += source.count(b"\n", counted, start)
        counted = start
        line_of = _Lines(text, start_line)
        signatures = []  # where each def's parameters are: `*args` there is no iteration
        for match in _DEF.finditer(code):
            # (its brackets found in the masked code: one in a comment is none)
            params = _balanced(code, match.end() - 1)
            signatures.append((match.end() - 1, match.end() - 1 + len(params)))
            local.add(match.group(1))
            received.update(_parameter_names(params[1:-1]))
            returns = _RETURNS.match(text, match.end() - 1 + len(params))
            signature = _signature(text[match.end():match.end() - 2 + len(params)])
            found.append((DEF, match.group(1).decode(), signature,
                          line_of(match.start()), _indent(match.group()),
                          returns.group(1).decode(errors="replace") if returns else ""))
        for match in _DECORATED.finditer(code) if b"@" in code else ():
            at = line_of(match.start())
            written = [_group(text, match, 1)] + [
                d.strip()[1:] for d in _group(text, match, 2).split(b"\n") if d.strip()]
            for decorator in reversed(written):
                found.append((DECORATE, _without_comment(decorator).strip().decode(
                    errors="replace"), match.group(3).decode(), at))
        for match in _FIELD.finditer(code):  # (after a `;`: on an indented line only)
            if match.group(1) not in _KEYWORDS and _statement_indent(code, match) > 0:
                annotation = _without_comment(_group(text, match, 2).partition(b"=")[0])
                found.append((FIELD, match.group(1).decode(),
                              annotation.strip().decode(errors="replace"), line_of(match.start())))
        statements = _inline_bodies(code)  # `if x: return y`: read as `if x; return y`
        for match in _RAISE.finditer(statements) if b"raise" in statements else ():
            found.append((RAISE, match.group(1).decode(), "", line_of(match.start())))
        covered = 0  # the end of the last statement: a match before it is inside it
        iterated = []  # (offset, name) of each name iterated
        starts = [a for a, _b in signatures]
        for match in _STATEMENT.finditer(statements):
            if match.start() < covered:  # `f(a,\n  b=c)`: a keyword, not an assignment
                continue
            if (i := bisect.bisect_right(starts, match.start()) - 1) >= 0 \
                    and match.start() < signatures[i][1]:
                continue  # `def f(a,\n      b=c)`: a parameter's default, not an assignment
            value, covered = _logical(text, statements, match.end())
            if not value or value.startswith(b"#"):
                continue
            at = line_of(match.start())
            keyword, loop, target = (_group(text, match, i) if match.group(i) else None
                                     for i in (1, 2, 3))
            indent = _statement_indent(statements, match)
            if keyword:
                guard = _return_guard(statements, match, indent) if keyword == b"return" \
                    else None
                returned = f"<return if {guard.decode()} is None>" if guard else "<return>"
                found.append((ASSIGN, returned, value.decode(errors="replace"), at, indent))
            elif loop:
                found.append((ASSIGN, loop.decode().strip(), "<iter> " + value.decode(
                    errors="replace").rstrip(":").rstrip(), at, indent))
            elif target:
                unpacked = _unbracketed(target.decode().strip())
                found.append((ASSIGN, unpacked, value.decode(errors="replace"), at, indent))
                if "," in unpacked and len(value) <= _MAX_OPERAND \
                        and _UNPACKED.match(value):  # `a, b = x`, `k1, k2 = split(k)`
                    iterated.append((match.end(), value))
        seen, operators = set(), []
        narrowing_read: list = []  # what `_held` says, read once first asked

        def holds(offset: int, name: bytes) -> bytes:
            """What a name used at `offset` stands for: what a parameter holds there,
            where the text tells (`_held_at`), else itself."""
            if not narrowing_read:  # (`found` has grown by no def or assignment since)
                narrowing_read.append(_held(source, start, code, found)
                                      if len(pieces) == 1 else ((), {}))
            narrowed, held = narrowing_read[0]
            return _held_at(source, start, text, held, offset, name) \
                if name in narrowed else name

        operated = _MAY_OPERATE.search(code) is not None
        for match in _OPERATOR.finditer(code) if operated else ():  # each (name, operator)
            operand = holds(match.start(1), match.group(1))
            if operand == _NO_ARRAY:
                continue
            key = (operand, match.group(_SYMBOL))
            head, dot, _attr = match.group(1).partition(b".")
            if key not in seen and match.group(1) not in _KEYWORDS and not (
                    key[1] != b"[" and _NOT_AN_ARRAY.match(code, match.end())) \
                    and not (dot and head in imported):  # `np.pi * x`, `ad.jvps[p]`
                seen.add(key)
                found.append((OPERATOR, operand.decode(errors="replace"),
                              _OPERATOR_NAMES[key[1]], line_of(match.start())))
            if key[1] in _PRECEDENCE and match.group(1) not in _KEYWORDS \
                    and _operator_before(code, _back(code, match.start(1))) is not None:
                operators.append(match)  # `a * b + c`: the product is `+`'s operand
        found += _iterations(code, iterated, signatures, seen, imported, line_of, holds)
        found += _expression_operators(text, code, line_of, seen, operators, operated)
        found += _calls(text, code, line_of, names, owned)
    return tuple(found)


_SELF = frozenset({b"self", b"cls"})
_NO_ARRAY = narrowing.NO_ARRAY.encode()
HELD_OPEN = b"<held "  # `<held x> f(x)`: parameter x, holding what f(x) gives there


def _held(source: bytes, start: int, code: bytes, found: list
          ) -> tuple[frozenset[bytes], dict[tuple[int, int], bytes]]:
    """The parameters of a function's text annotated as maybe an Array that it assigns
    or tests with `isinstance`, and what they hold at their uses, where its text tells
    (narrowing.py): (line in the text, column in its source line) -> the value's text,
    or NO_ARRAY."""
    own = next((fact for fact in found if fact[0] == DEF), None)
    if own is None:
        return frozenset(), {}
    assigned = {fact[1] for fact in found if fact[0] == ASSIGN}
    names = frozenset(
        name for name, _default, annotation in parameters(own[2])
        if annotation and "Array" in annotation
        and (name in assigned or b"isinstance(" + name.encode() in code))
    if not names:
        return frozenset(), {}
    line_start = source.rfind(b"\n", 0, start) + 1
    values = narrowing.operand_values(source[line_start:start + len(code)], names)
    return frozenset(name.encode() for name in names), {
        at: value.encode() for at, value in values.items()
        if len(value) <= _MAX_OPERAND or value == narrowing.NO_ARRAY}


def _held_at(source: bytes, start: int, text: bytes, held: dict, offset: int,
             name: bytes) -> bytes:
    """What `_held` says a parameter holds at its use at `offset` in the piece of
    `text` at `start` of `source`: NO_ARRAY, `<held x> value`, or its name, where it
    says nothing."""
    at = start + offset
    holds = held.get((text.count(b"\n", 0, offset), at - source.rfind(b"\n", 0, at) - 1))
    if holds is None or holds == _NO_ARRAY:
        return holds or name
    return b"".join((HELD_OPEN, name, b"> ", holds))


def _iterations(code: bytes, iterated: list, signatures: list, seen: set,
                imported: frozenset, line_of, held_at) -> list[tuple]:
    """The `iter` facts of a text: `iterated` ((offset, value) of what its target lists
    unpack), and the names it unpacks with a star (not in a def's parameters: `*args`)
    or loops over; each as `held_at` (offset, name) says the name holds there, once."""
    if not iterated and b"*" not in code and b"for" not in code:
        return []  # nothing unpacked, starred or looped over
    starts = [a for a, _b in signatures]  # (in order: a def's span, by bisection)
    iterated = iterated + [
        (m.start(1), m.group(1)) for m in _STARRED.finditer(code)
        if (i := bisect.bisect_right(starts, m.start()) - 1) < 0 or m.start() >= signatures[i][1]]
    iterated += [(m.start(1), m.group(1)) for m in _FOR_IN.finditer(code)]
    iterated += _zipped(code)
    found = []
    for offset, operand in sorted(iterated):
        operand = held_at(offset, operand)
        head, dot, _attr = operand.partition(b".")
        if (operand, ITER) not in seen and operand != _NO_ARRAY and head not in _KEYWORDS \
                and not (dot and head in imported and _A_DOTTED_NAME.match(operand)):
            seen.add((operand, ITER))
            found.append((OPERATOR, operand.decode(errors="replace"), ITER, line_of(offset)))
    return found


def _zipped(code: bytes) -> list[tuple[int, bytes]]:
    """(offset, text) of each argument, a name or a call, of the builtin `zip` or
    `enumerate` a loop runs over (`_FOR_IN_ZIP`): each is iterated."""
    found = []
    for match in _FOR_IN_ZIP.finditer(code):
        args = _balanced(code, match.end() - 1)
        positional, _keywords = argument_texts(args[1:-1].decode(errors="replace"))
        found += [(match.start(), arg.encode()) for arg in map(str.strip, positional)
                  if len(arg) <= _MAX_OPERAND and _UNPACKED.match(arg.encode())]
    return found


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
    inside = found[quote:-quote]  # (most strings are one line: no pattern to run)
    inside = _NOT_NEWLINE.sub(b"\0", inside) if b"\n" in inside else b"\0" * len(inside)
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
        at = match.end() - 1
        args = _arguments(text, at)
        # Brackets the code closes where the text does: no string or comment in them.
        closed = len(args) if len(args) <= _MAX_BRACKETED and _NOT_PLAIN.search(args) is None \
            else len(_balanced(code, at))
        _chained(text, code, match.start(1), at, closed, line_of, found)
        plain = b"(" not in callee and b"[" not in callee
        if plain and b"lambda" not in args and not any(
                w in (owned if dotted else names) for w, dotted in _ARGUMENT.findall(args)):
            continue
        if not plain:
            for inner, inner_args in _inner_calls(callee):  # `f()(g)`: f() is given g
                if inner_args:
                    found.append((CALL, inner.decode(), inner_args.decode(errors="replace"),
                                  line_of(match.start())))
        kind = KEPT if plain and callee.rpartition(b".")[2] == b"partial" \
            and kept_value(code, match.start(1)) else CALL
        found.append((kind, callee.decode(), args[1:-1].decode(errors="replace"),
                      line_of(match.start())))
    return found


def _arguments(text: bytes, at: int) -> bytes:
    """A call's arguments in their brackets, from its `(` at `at`: to the first `)` if no
    `(` or line break comes before it, else as `_balanced` reads them."""
    simple = _SIMPLE_ARGUMENTS.match(text, at)
    return simple.group() if simple else _balanced(text, at)


def _chained(text: bytes, code: bytes, start: int, at: int, closed: int, line_of,
             found: list[tuple]) -> None:
    """The calls of a call's result that `_CALL` leaves out, where the call before spans
    lines or nests deeper (`Op(\n  aval,\n)(x)`, `f(g(h(a)))(x)`): for the callee at
    `start` called at `at` (its brackets `closed` bytes long in the masked `code`), each
    call of what the call before gives, its callee's text on one line, added to `found`,
    all at one line: one int object, which the stored facts refer to again (marshal)."""
    line = None
    while True:
        end = at + closed
        opened = _CALL_OPENS.match(code, end)
        if opened is None:
            return
        callee = text[start:end]
        if b"\n" in callee:
            expression = parse_text(callee.decode(errors="replace"))
            if expression is None:
                return
            callee = ast.unparse(expression).encode()
        at = opened.end() - 1
        closed = len(_balanced(code, at))
        args = text[at + 1:at + closed - 1]
        line = line_of(start) if line is None else line
        found.append((CALL, callee.decode(errors="replace"), args.decode(errors="replace"),
                      line))


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


def _inline_bodies(code: bytes) -> bytes:
    """`code` with the colon that ends a control statement's header made a `;` where
    the header's body follows on its line (`if x: return y`, `for a in b: c = f(a)`),
    so that body is read as a statement of its own (a def's or a class's stays: its
    body is another owner's)."""
    found = None
    for match in _CONTROL.finditer(code):
        end = code.find(b"\n", match.end())
        end = len(code) if end < 0 else end
        depth, at = 0, match.end()
        for at in range(match.end(), end):
            byte = code[at]
            if byte in _OPEN:
                depth += 1
            elif byte in _CLOSE:
                depth -= 1
            elif byte == 58 and not depth and code[at + 1:at + 2] != b"=":  # `:`, not `:=`
                break
        else:
            continue  # the header runs on to the next line, or has no colon
        if code[at + 1:end].strip(b" \t\0\r"):
            found = found or bytearray(code)
            found[at] = 59  # `;`
    return code if found is None else bytes(found)


def _return_guard(code: bytes, match, indent: int) -> bytes | None:
    """The name `x` where the return `match` starts is under `if x is None:`: its own
    line's header where it follows one (`if x is None: return y`), else the block's
    (`_none_guard`)."""
    begin = code.rfind(b"\n", 0, match.start()) + 1
    if match.group().startswith(b";") and _HEADER.match(code, begin):
        header = _NONE_GUARD.match(code[begin:match.start()] + b":")
        return header.group(1) if header else None
    return _none_guard(code, match.start(), indent)


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
    return not before or before[-1:] in b"([{,=:;\n" \
        or _KEYWORD_BEFORE.search(before) is not None


def _indent(statement: bytes) -> int:
    return len(statement) - len(statement.lstrip(b" \t"))


def _statement_indent(code: bytes, match) -> int:
    """The indent of the statement a match of `code` starts: its line's, or for one
    after a `;`, its line's first statement's, one deeper where that is a compound
    statement's header (`if x: a = 1; return a`: the block's)."""
    if not match.group().startswith(b";"):
        return _indent(match.group())
    line = code[code.rfind(b"\n", 0, match.start()) + 1:match.start()]
    return _indent(line) + (_HEADER.match(line) is not None)


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
    of its `code` (the masked text) is open or the line ends in a backslash (up to a
    bound), or to a `;` before; and the offset where it ends."""
    end = code.find(b"\n", at)
    end = len(code) if end < 0 else end
    depth = _depth(code[at:end])
    lines = 0
    while (depth > 0 or code.endswith(b"\\", at, end)) and end < len(code) \
            and lines < _MAX_LINES:
        nxt = code.find(b"\n", end + 1)
        nxt = len(code) if nxt < 0 else nxt
        depth += _depth(code[end:nxt])
        end, lines = nxt, lines + 1
    semicolon = code.find(b";", at, end)  # `y = f(x); z = g(y)`: the first one
    end = end if semicolon < 0 else semicolon
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


def _signature(params: bytes) -> str:
    """A signature's parameters as they read without their comments and line breaks:
    a comment written among them changes no fact, so the edit only moves rows."""
    if b"#" in params or b"'" in params or b'"' in params:  # (most have no string)
        params = _NOT_CODE.sub(_kept_string, params)
    if b"\n" in params:
        params = _SPACES.sub(b" ", params)
    return params.strip().decode(errors="replace")


def _kept_string(match) -> bytes:
    """A string as it is written; a comment, dropped."""
    found = match.group()
    return b"" if found.startswith(b"#") else found


_MAX_BRACKETED = 4000  # bytes `_balanced` reads on from a bracket


def _balanced(text: bytes, at: int) -> bytes:
    """The bracketed text that opens at `at`, brackets included (to the bound if it
    never closes); a quote skips to the next of its kind."""
    nested = _NESTED_ARGUMENTS.match(text, at)  # (no need to look bracket by bracket)
    if nested and nested.end() - at <= _MAX_BRACKETED:
        return nested.group()
    depth, end = 0, min(len(text), at + _MAX_BRACKETED)
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


def _unbracketed(target: str) -> str:
    """A target unpacked in brackets as one written without them (`[x]`: `x,`)."""
    if target[:1] not in ("[", "(") or target[-1:] not in ("]", ")"):
        return target
    inside = target[1:-1].strip()
    return inside if "," in inside else f"{inside},"


def _expression_operators(text: bytes, code: bytes, line_of, seen: set,
                          operators: list, operated: bool) -> list[tuple]:
    """The operator facts whose operand is no bare name, as precedence groups it: the
    left operand of an operator after a call, a subscript or brackets (`f(x) + 1`,
    `(a - b) * c`), or after another operator (`operators`, matches of `_OPERATOR`: `a
    * b + c`, `a * b`), or after a number that another operator's right operand ends
    with (`x * 0 + c`: `x * 0`); the right operand after a number (`2 * x`, `0.5 * f(x)`,
    `1 - 2 * x`: the reflected operator); the operand of a unary operator (`-f(x)`, `~mask`).
    The flow parses each operand's text. Without `operated` (`_MAY_OPERATE` finds none),
    only `abs(x)` is looked for."""
    found = []

    def add(start: int, end: int, operator: str, at: int) -> None:
        operand = text[start:end].strip()
        key = (operand, operator)
        if 0 <= start < end and len(operand) <= _MAX_OPERAND and key not in seen \
                and _A_NAME.search(operand) is not None \
                and operand.partition(b".")[0].partition(b"(")[0] not in _KEYWORDS:
            seen.add(key)
            found.append((OPERATOR, operand.decode(errors="replace"), operator, line_of(at)))

    for match in operators:
        symbol = match.group(_SYMBOL)
        if not _NOT_AN_ARRAY.match(code, match.end()):
            start = _operand_start(code, match.end(1), _PRECEDENCE[symbol])
            if start < match.start(1):
                add(start, match.end(1), _OPERATOR_NAMES[symbol], match.start())
    for match in _CLOSED_OPERATOR.finditer(code) if operated else ():
        symbol = match.group(1)
        if symbol == b"[" or not _NOT_AN_ARRAY.match(code, match.end()):
            add(_operand_start(code, match.start() + 1,
                               _SUBSCRIPT if symbol == b"[" else _PRECEDENCE.get(symbol, 0)),
                match.start() + 1, _OPERATOR_NAMES[symbol], match.start())
    for match in _REFLECTED_EXPRESSION.finditer(code) if operated else ():
        symbol = match.group(1)
        precedence = _PRECEDENCE.get(symbol, 0)
        if _EXPONENT.search(code, max(0, match.start() - 3), match.start() + 1) \
                or symbol in (b"-", b"+") and code[match.start(1) - 1] in b"eE":
            continue  # `1e-3 * x`: the number is `1e-3`
        if _starts_operand(code, match.start()) or _after_looser(code, match.start(),
                                                                 precedence):
            add(match.end(), _operand_end(code, match.end(), precedence),
                _REFLECTED_NAMES[symbol], match.start())
        elif symbol in _PRECEDENCE:  # `(x + 1) ** 2 / 4`: the number ends the left operand
            end = _back(code, match.start(1))
            add(_operand_start(code, end, precedence), end, _OPERATOR_NAMES[symbol],
                match.start())
    for match in _UNARY.finditer(code) if operated else ():
        if _unary_at(code, match.start()):
            add(match.end(), _operand_end(code, match.end(), _UNARY_PRECEDENCE),
                _UNARY_NAMES[match.group(1)], match.start())
    for match in _ABS.finditer(code) if b"abs" in code else ():  # x's `__abs__`
        end = _closing(code, match.end() - 1)
        if end > 0 and b"," not in code[match.end():end]:
            add(match.end(), end - 1, ABS, match.start())
    return found


def _unary_at(code: bytes, at: int) -> bool:
    """Whether the `-`, `+` or `~` at `at` is a unary operator: nothing that ends an
    operand is before it (`return -x`, `f(-x)`, `a * -b`; not `a - b`)."""
    before = code[max(0, at - 40):at].rstrip(b" \t\0")
    return not before or before[-1] in _BEFORE_UNARY or before[-1:] == b"\n" \
        or _KEYWORD_BEFORE.search(before) is not None


def _after_looser(code: bytes, at: int, precedence: int) -> bool:
    """Whether what is before `at` is a binary operator that binds less tightly than
    `precedence` (`1 - 2 * x`: `2` alone is `*`'s left operand)."""
    found = _operator_before(code, _back(code, at))
    return found is not None and _PRECEDENCE[found[0]] < precedence \
        and not _unary_at(code, found[1])


def _operator_before(code: bytes, at: int) -> tuple[bytes, int] | None:
    """The arithmetic operator that ends at `at`, and where it starts (none for a
    comparison, an assignment, or a star that unpacks: `f(*xs)`)."""
    two = code[at - 2:at]
    symbol = two if two in _PRECEDENCE and code[at - 3:at - 2] not in (b"*", b"/", b"<", b">",
                                                                     b"=") else code[at - 1:at]
    if symbol not in _PRECEDENCE or (at > len(symbol) and code[at - len(symbol) - 1]
                                      in b"=!<>"):
        return None
    start = at - len(symbol)
    before = _back(code, start)
    if symbol in (b"*", b"**") and code[before - 1:before] in (b"(", b",", b"\n", b""):
        return None  # `f(*xs)`, `g(**kw)`
    return symbol, start


def _operand_start(code: bytes, end: int, precedence: int) -> int:
    """Where the left operand of an operator of `precedence` starts, its last primary
    ending at `end`: primaries joined by operators that bind more tightly (or as
    tightly, from the left), and unary operators; -1 if its last primary cannot be
    read."""
    start = _primary_start(code, end)
    while start >= 0:
        at = _back(code, start)
        found = _operator_before(code, at)
        if found is None:
            return start
        symbol, at = found
        if symbol in _UNARY_NAMES and _unary_at(code, at):
            if precedence >= _UNARY_PRECEDENCE:
                return start
            start = at
            continue
        tighter = _PRECEDENCE[symbol]
        if tighter < precedence or tighter == precedence == _POWER:
            return start
        before = _primary_start(code, _back(code, at))
        if before < 0:
            return start
        start = before
    return start


def _primary_start(code: bytes, end: int) -> int:
    """Where the primary that ends at `end` starts: a dotted name or a number, or a
    call, subscript or bracketed expression with what it is called or indexed on
    (`a.f(x)[0]`); -1 if it is none of these."""
    at = end
    while True:
        if code[at - 1:at] in (b")", b"]"):
            at = _opening(code, at - 1)
            if at < 0:
                return -1
        elif not (at > 0 and code[at - 1] in _NAME_BYTES):
            return -1
        start = at
        while start > 0 and code[start - 1] in _NAME_BYTES:
            start -= 1
        if start > 0 and code[start - 1] in b")]" and (start == at or code[start] == 46):
            at = start  # `f(x).T`, `f()(x)`: what it is called on is part of it
            continue
        return start if code[start:at] not in _KEYWORDS else at


def _operand_end(code: bytes, start: int, precedence: int) -> int:
    """Where the right operand of an operator of `precedence` that starts at `start`
    ends: unary operators, then primaries joined by operators that bind more tightly
    (a power, as tightly: it groups from the right); -1 if it cannot be read."""
    at = _primary_end(code, _on(code, start))
    while at >= 0:
        rest = code[at:at + 3].lstrip(b" \t")
        symbol = next((s for s in (rest[:2], rest[:1]) if s in _PRECEDENCE), None)
        if symbol is None or rest[len(symbol):len(symbol) + 1] in (b"=", b">") \
                or _PRECEDENCE[symbol] < precedence \
                or _PRECEDENCE[symbol] == precedence != _POWER:
            return at
        after = code.find(symbol, at) + len(symbol)
        end = _primary_end(code, _on(code, after))
        if end < 0:
            return at
        at = end
    return at


def _primary_end(code: bytes, start: int) -> int:
    """Where the primary that starts at `start` ends: a dotted name or a number, or a
    bracketed expression, with the calls, subscripts and attributes after it; -1 if it
    is none of these."""
    at = start
    if code[at:at + 1] == b"(":
        at = _closing(code, at)
    while at >= 0:
        while at < len(code) and code[at] in _NAME_BYTES:
            at += 1
        if at > start and code[at:at + 1] in (b"(", b"["):
            at = _closing(code, at)
            continue
        return at if at > start else -1
    return -1


def _back(code: bytes, at: int) -> int:
    """`at`, moved back over the spaces (and blanked comments) before it."""
    while at > 0 and code[at - 1] in b" \t\0":
        at -= 1
    return at


def _on(code: bytes, at: int) -> int:
    """`at`, moved on over spaces and unary operators (`- x`, `~x`)."""
    while at < len(code) and code[at] in b" \t-+~":
        at += 1
    return at


def _opening(code: bytes, close: int) -> int:
    """The offset of the bracket that the one at `close` closes; -1 if not found
    nearby."""
    depth = 0
    for i in range(close, max(-1, close - 4000), -1):
        c = code[i]
        if c in b")]}":
            depth += 1
        elif c in b"([{":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _closing(code: bytes, open_at: int) -> int:
    """The offset just after the bracket that closes the one at `open_at`; -1 if not
    found nearby."""
    depth = 0
    for i in range(open_at, min(len(code), open_at + 4000)):
        c = code[i]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1

"""The error and warning messages a file can raise, read from its text: the format
string of each `raise E(...)` and `warnings.warn(...)` site, or of the variable it
raises (`msg = f"..."; raise E(msg)`; of a list joined, `"\\n".join(msg)`, its first
string); of each `super().__init__("...")` (or `Base.__init__(self, "...")`), where
an exception class builds its own message; and of each `return E(...)` of an
exception class (a name ending in Error, Exception or Warning), or of each `yield
lambda ...: E(...)`, where a helper (or a generator) builds the exception its callers
raise. A message is stored as its literal pieces, a
placeholder between each two: f-string fields, `.format` fields and `%` conversions
are placeholders, adjacent literals are joined. store/message_patterns.py turns
the pieces back into a pattern that matches the message as raised.
"""

from __future__ import annotations

import ast
import bisect
import re

from jaxmap.indexing.facts import Message
from jaxmap.store.message_patterns import INIT_KIND, MIN_LITERAL, WARNING_KIND

# Searched apart: each starts with a literal, which the regex engine finds far faster
# than the first letter of any. What `.__init__(` is called on is read backwards.
_RAISE = re.compile(rb"raise[ \t]+([A-Za-z_][\w.]*)[ \t]*\(")
_WARN = re.compile(rb"warn(?:ings\.warn)?[ \t]*\(")
_RETURN = re.compile(rb"return[ \t]+([A-Za-z_][\w.]*(?:Error|Exception|Warning))[ \t]*\(")
_YIELD = re.compile(rb"yield(?:[ \t]+lambda\b[^:\n]*:)?[ \t]+"
                    rb"([A-Za-z_][\w.]*(?:Error|Exception|Warning))[ \t]*\(")
_INIT = re.compile(rb"\.__init__\([ \t]*(?:self[ \t]*,)?")
_RECEIVER = re.compile(rb"(?:super\(\)|[A-Za-z_][\w.]*)\Z")
INIT = INIT_KIND  # the kind of a site that hands a message to a base class's __init__
_PREFIX = re.compile(rb"([rRbBuUfF]{0,2})(\"\"\"|'''|\"|')")
_BODIES = {
    b'"': re.compile(rb'((?:[^"\\\n]|\\.)*)"'),
    b"'": re.compile(rb"((?:[^'\\\n]|\\.)*)'"),
    b'"""': re.compile(rb'((?:[^\\]|\\.)*?)"""', re.DOTALL),
    b"'''": re.compile(rb"((?:[^\\]|\\.)*?)'''", re.DOTALL),
}
_GAP = re.compile(rb"(?:\s|\\\n|#[^\n]*)*")
# `"".join(msg)`, `"\n".join(msg)`: a list of pieces, and a short separator
_JOIN = re.compile(rb"(?:'[^'\n]{0,4}'|\"[^\"\n]{0,4}\")\.join\(")
_NAME = re.compile(rb"[A-Za-z_]\w*")
_TOP_LEVEL = re.compile(rb"\n(?=\S)")
_RETURNS = re.compile(rb"return[ \t]+")
_CALLED = re.compile(rb"([A-Za-z_]\w*)[ \t]*\(")  # `helper(`, a function of the same file
_NAME_CHAR = re.compile(rb"[\w.]")
_FORMAT = re.compile(rb"\s*\.format\b")  # called there, or bound (`msg = "...".format`)
_PERCENT = re.compile(rb"\s*%")
_FIELD = re.compile(r"\{\{|\}\}|\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")
_CONVERSION = re.compile(r"%%|%[-#0 +]*(?:\*|\d+)?(?:\.\d+)?[sdrifgeExXoca]")
_ESCAPE = re.compile(r"\\(\n|.)")
_ESCAPES = {"n": "\n", "t": "\t", "\n": ""}
_LOOK_BACK = 3000  # bytes searched before a raise for the variable it raises
# After `name`: the rest of `name = SomeError(`.
_INSTANCE = re.compile(rb"[ \t]*=[ \t]*([A-Za-z_][\w.]*(?:Error|Exception|Warning))[ \t]*\(")
_BARE_RAISE = re.compile(rb"raise[ \t]+([A-Za-z_]\w*)[ \t]*(?:#[^\n]*)?\n")
_DEF = re.compile(rb"(?m)^([ \t]*)(?:async[ \t]+)?def[ \t]")


def scoped(source: bytes, functions: list[tuple[int, int, str]]) -> list[tuple]:
    """The stored `facts.Message` of each site in `source`, with its function
    (`functions`: the (start, end, qualname) of the module-level functions and methods,
    in source order); a message an `__init__` hands to its base class is the class's
    own (its exception), and one returned outside every function is left out."""
    starts = [span[0] for span in functions]
    found, line, at = [], 1, 0
    for offset, exception, pieces, returned in sites(source):
        i = bisect.bisect_right(starts, offset) - 1
        scope = functions[i][2] if i >= 0 and offset < functions[i][1] else ""
        if exception == INIT:
            cls, _, method = scope.rpartition(".")
            if method != "__init__" or not cls:
                continue
            exception = cls.rpartition(".")[2]
        elif returned and not scope:
            continue
        line += source.count(b"\n", at, offset)
        at = offset
        found.append(tuple(Message(scope, line, exception, pieces, returned)))
    return found


def sites(source: bytes) -> list[tuple[int, str, tuple[str, ...], bool]]:
    """(byte offset, exception, 'warning' or INIT, pieces, whether it is returned) of
    each raise, warn, return or base-class __init__ site whose message is a literal
    format string (directly, or through a variable, or an exception kept in a name),
    in source order."""
    found, after = [], 0
    for start, end, kind, returned in sorted(_site_matches(source)):
        if start < after:
            continue  # inside the last match, as one search would have read it
        after = end
        if start and _NAME_CHAR.match(source, start - 1):
            continue  # `self.warn(`, `reraise E(`: not a site
        pieces = _run(source, end)
        if pieces is None:
            pieces = _variable(source, end, start)
        if pieces and sum(map(len, pieces)) >= MIN_LITERAL:
            found.append((start, kind, pieces, returned))
    found += _named_instances(source)
    return sorted(found)


def _named_instances(source: bytes) -> list[tuple[int, str, tuple[str, ...], bool]]:
    """`raise name` of an exception built once and kept (`functionalization_error =
    ValueError("...")` at module level, raised in several functions): a site at each
    raise, with the message and class of the name's last assignment before it."""
    found = []
    for bare in _BARE_RAISE.finditer(source):
        if bare.start() and _NAME_CHAR.match(source, bare.start() - 1):
            continue
        kept = _kept(source, bare.group(1), bare.start())
        if kept is None:
            continue
        pieces = _run(source, kept.end())
        if pieces and sum(map(len, pieces)) >= MIN_LITERAL:
            found.append((bare.start(), kept.group(1).decode(), pieces, False))
    return found


def _kept(source: bytes, name: bytes, before: int) -> re.Match | None:
    """The last `name = SomeError(` before `before`, at the start of a line."""
    for needle in (name + b" =", name + b"="):
        at = source.rfind(needle, 0, before)
        while at >= 0:
            line = source.rfind(b"\n", 0, at) + 1
            kept = _INSTANCE.match(source, at + len(name))
            if kept and not source[line:at].strip():
                return kept
            at = source.rfind(needle, 0, at)
    return None


def _site_matches(source: bytes):
    """(start, end, kind, returned) of every raise, warn, exception returned and
    `X.__init__(` call in `source`."""
    for match in _RAISE.finditer(source):
        yield match.start(), match.end(), match.group(1).decode(), False
    for returned in (_RETURN, _YIELD):
        for match in returned.finditer(source):
            yield match.start(), match.end(), match.group(1).decode(), True
    for match in _WARN.finditer(source):
        yield match.start(), match.end(), WARNING_KIND, False
    for match in _INIT.finditer(source):
        line = source.rfind(b"\n", 0, match.start()) + 1
        receiver = _RECEIVER.search(source, line, match.start())
        if receiver:
            yield receiver.start(), match.end(), INIT, False


def _variable(source: bytes, at: int, site: int) -> tuple[str, ...] | None:
    """`raise E(msg)` or `raise E(msg.format(...))`: the string last assigned to `msg`
    before the site, formatted as the site formats it; for `raise E("".join(msg))`,
    the first string of the list last assigned to `msg` (`msg = [f"...", ...]`), or of
    the first `msg.append(...)` after an empty one, which the message starts with."""
    at = _past_gap(source, at)
    joined = _JOIN.match(source, at)
    name = _NAME.match(source, joined.end() if joined else at)
    if name is None:
        return None
    assign = re.compile(rb"(?<![\w.])" + re.escape(name.group()) + rb"[ \t]*=[ \t]*(?!=)")
    last, scope = None, _scope_start(source, site)
    for found in assign.finditer(source, max(0, site - _LOOK_BACK), site):
        if found.start() >= scope or source[found.start() - 1:found.start()] in (b"", b"\n"):
            last = found  # in the raising function, or at the module's top level
    pieces = _run(source, last.end()) if last else None
    if pieces is None and last and not joined:  # `msg = _spec_error(...)`
        helper = _CALLED.match(source, last.end())
        pieces = _returned_text(source, helper.group(1)) if helper else None
    if pieces is None and joined and last:  # `msg = []`, then `msg.append("...")`
        append = source.find(name.group() + b".append(", last.end(), site)
        pieces = _run(source, append + len(name.group()) + 8) if append >= 0 else None
    if pieces and _FORMAT.match(source, name.end()):
        return tuple(_resplit(list(pieces), _FIELD))
    if pieces and _PERCENT.match(source, name.end()):
        return tuple(_resplit(list(pieces), _CONVERSION))
    return pieces


def _scope_start(source: bytes, site: int) -> int:
    """Where the function a raise at `site` is in starts (its `def` line), where that
    is within `_LOOK_BACK` bytes: a name assigned before it, but at the module's top
    level, is another function's (`def check(msg): raise E(msg)` raises what its
    callers pass, not the `msg` of the function above)."""
    floor = max(0, site - _LOOK_BACK)
    line_start = source.rfind(b"\n", 0, site) + 1
    for define in reversed(list(_DEF.finditer(source, floor, line_start))):
        depth = len(define.group(1))
        body = source[source.find(b"\n", define.end()) + 1:line_start + 1].splitlines()
        if all(len(line) - len(line.lstrip(b" \t")) > depth
               for line in body if line.strip() and not line.lstrip().startswith(b"#")):
            return define.start()  # the def the site is in: every line since is deeper
    return floor


def _returned_text(source: bytes, function: bytes) -> tuple[str, ...] | None:
    """The message a function of the same file builds and returns as a string: the
    string last assigned to the name its last `return name` returns, or the literal it
    returns."""
    define = re.search(rb"(?m)^def[ \t]+" + re.escape(function) + rb"[ \t]*\(", source)
    if define is None:
        return None
    end = _TOP_LEVEL.search(source, define.end())
    body = (define.end(), end.start() if end else len(source))
    returns = list(_RETURNS.finditer(source, *body))
    if not returns:
        return None
    at = returns[-1].end()
    name = _NAME.match(source, at)
    if name is None or name.group() in (b"f", b"r"):
        return _run(source, at)
    assign = re.compile(rb"(?<![\w.])" + re.escape(name.group()) + rb"[ \t]*=[ \t]*(?!=)")
    found = None
    for found in assign.finditer(source, body[0], at):
        pass
    return _run(source, found.end()) if found else None


def _past_gap(source: bytes, at: int) -> int:
    """Where the blanks, comments and line continuations from `at` end."""
    gap = _GAP.match(source, at)
    assert gap is not None  # every part of `_GAP` is optional: it always matches
    return gap.end()


def _run(source: bytes, at: int) -> tuple[str, ...] | None:
    """The pieces of the adjacent string literals starting at `at`, with any
    `.format(`/`%` after them; None if no literal starts there."""
    pieces: list[str] = []
    at = _past_gap(source, at)
    if source[at:at + 1] in (b"(", b"["):  # `msg = ("..." "...")`, or a list's first
        at += 1
    while True:
        at = _past_gap(source, at)
        opening = _PREFIX.match(source, at)
        if opening is None:
            break
        prefix, quote = opening.group(1).lower(), opening.group(2)
        body = _BODIES[quote].match(source, opening.end())
        if body is None:
            return None
        text = body.group(1).decode("utf-8", "replace")
        if b"r" not in prefix:
            text = _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), text)
        _join(pieces, _split(text, _FIELD, _echoed) if b"f" in prefix else [text])
        at = body.end()
    if not pieces or source.startswith(b".join(", at):  # a separator, not the message
        return None
    if _FORMAT.match(source, at):
        pieces = _resplit(pieces, _FIELD)
    elif _PERCENT.match(source, at):
        pieces = _resplit(pieces, _CONVERSION)
    return tuple(pieces)


def _split(text: str, fields: re.Pattern, echoed=lambda field: "") -> list[str]:
    """Literal pieces of `text` around its fields (`{{`, `%%`: the literal brace/sign);
    `echoed(field)`: the text a field prints before its value."""
    pieces, current, at = [], "", 0
    for field in fields.finditer(text):
        current += text[at:field.start()]
        if field.group() in ("{{", "}}", "%%"):
            current += field.group()[0]
        else:
            pieces.append(current + echoed(field.group()))
            current = ""
        at = field.end()
    return pieces + [current + text[at:]]


def _echoed(field: str) -> str:
    """What an f-string's self-documenting field prints before its value: `{x=}` and
    `{x = !r}` their expression and `=` as written (`x=`, `x = `); any other field
    (`{x==y}`, `{f(a=1)}`) nothing."""
    if "=" not in field:
        return ""
    try:
        parsed = ast.parse("f" + repr(field), mode="eval").body
    except SyntaxError:
        return ""
    first = parsed.values[0] if isinstance(parsed, ast.JoinedStr) and parsed.values else None
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) \
        else ""


def _resplit(pieces: list[str], fields: re.Pattern) -> list[str]:
    """`pieces` with the fields of each split out too (`"...{}...".format(x)`)."""
    return [part for piece in pieces for part in _split(piece, fields)]


def _join(pieces: list[str], more: list[str]) -> None:
    """Adjacent literals: the first piece of `more` continues the last of `pieces`."""
    if pieces:
        pieces[-1] += more[0]
        pieces.extend(more[1:])
    else:
        pieces.extend(more)

"""Functions kept for later, read from the text around a name handed on: a rule stored
into a registry or an attribute as a partial (`table[p] = partial(rule, p)`, `p.attr =
partial(rule, p)`), or handed to a registrar, plainly or as a partial
(`mlir.register_lowering(p, partial(rule, p))`, `register_discharge_rule(p)(rule)`).
It runs when a transformation dispatches on its primitive (through the registry, as
the value flow follows it), never as part of the function that registers it, so the
call graph gives that function no edge to it. A plain name stored (`table[p] = rule`)
is no argument, so never an edge either."""

from __future__ import annotations

import re

from jaxmap.knowledge.registrars import KEEPER_PREFIX, KEEPERS

_LOOK_BACK = (200, 2000)  # bytes searched for the bracket a name is inside, then more
_OPENERS, _CLOSERS = b"([{", b")]}"
_BRACKET = re.compile(rb"[()\[\]{}]")
_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")
# An assignment's target that keeps a value: a subscript or a dotted attribute.
_STORE_TARGET = re.compile(rb"[A-Za-z_][\w.]*(?:\[[^\n]*\]|\.\w+)")
_NOT_ASSIGNMENT = b"=!<>:+-*/%&|^@~"  # what comes before a `=` that assigns nothing


def keeps(leaf: str) -> bool:
    """Whether a call of a function of this last name keeps what it is handed."""
    return leaf in KEEPERS or leaf.startswith(KEEPER_PREFIX)


def kept(source: bytes, at: int) -> bool:
    """Whether the name at `at`, handed on as an argument, is kept for later: an
    argument of a registrar's call, or of a `partial(` whose value is stored or
    handed to a registrar."""
    opener = _enclosing(source, at)
    if opener is None or source[opener] != _OPENERS[0]:
        return False
    start, leaf = _callee(source, opener)
    if leaf == "partial":
        return kept_value(source, start)
    return keeps(leaf)


def kept_value(source: bytes, start: int) -> bool:
    """Whether the value of the expression at `start` is stored into a subscript or an
    attribute, or handed to a registrar."""
    end = _skip_space(source, start)
    before = source[end - 1:end]
    if before == b"=" and source[end - 2:end - 1] not in _NOT_ASSIGNMENT:
        line = source.rfind(b"\n", 0, end) + 1
        return _STORE_TARGET.fullmatch(source[line:end - 1].strip()) is not None
    if before not in (b"(", b","):
        return False
    opener = _enclosing(source, start)
    return opener is not None and source[opener] == _OPENERS[0] \
        and keeps(_callee(source, opener)[1])


def _callee(source: bytes, opener: int) -> tuple[int, str]:
    """(where it starts, its last name) of the callee a call's `(` follows; of a call
    of a call's result (`register_discharge_rule(p)(`), of the inner call's."""
    end = _skip_space(source, opener)
    if source[end - 1:end] == b")":
        inner = _enclosing(source, end - 1)
        if inner is None:
            return end, ""
        end = _skip_space(source, inner)
    start = end
    while start > 0 and source[start - 1] in _NAME_BYTES:
        start -= 1
    return start, source[start:end].rpartition(b".")[2].decode("ascii", "replace")


def _enclosing(source: bytes, at: int) -> int | None:
    """The offset of the innermost open bracket before `at` that is not closed by then."""
    for back in _LOOK_BACK:
        depth = 0
        for match in reversed(list(_BRACKET.finditer(source, max(0, at - back), at))):
            if source[match.start()] in _CLOSERS:
                depth += 1
            elif not depth:
                return match.start()
            else:
                depth -= 1
        if at - back <= 0:
            break
    return None


def _skip_space(source: bytes, end: int) -> int:
    """Where the text before `end` ends, blanks, line breaks and `\\` left out."""
    while end > 0 and source[end - 1] in b" \t\r\n\\":
        end -= 1
    return end

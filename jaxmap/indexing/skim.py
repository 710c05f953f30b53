"""Where the bodies of module-level functions and methods lie, read from the source
text alone, so the parser can leave out the ones extraction would not read.

Only functions at column 0 and methods of classes at column 0 (and of classes nested
in those) are reported, the scopes extract.py may skip. A body is reported only when
the text settles its extent: it ends before the next code line indented no deeper
than its `def` (with the comments after it that the parser counts in), and within it
brackets and triple quotes balance and no line ends in a backslash. Anything else
(tabs or CR in indentation, a header the text cannot close or that lies inside a
triple-quoted string, a one-line body) is left to the parser, which reads it as usual.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

_TAB_INDENT = re.compile(rb"\n *[\t\f]")
_MAX_HEADER_LINES = 40


class Body(NamedTuple):
    """A function whose body may be left out; all offsets are bytes into the source."""

    name: bytes
    start: int  # the `def` (or `async`) keyword
    first: int  # start of the body's first line
    last: int  # start of the body's last line (code, or a trailing comment)
    indent: int  # where on that line a statement at the body's indentation goes
    end: int  # end of that line, trailing spaces left out


def function_bodies(source: bytes) -> list[Body]:
    """Bodies of module-level functions and of methods (of classes nested at module
    level only), in source order."""
    if b"\r" in source or _HEADER_AT_START.match(source) or (
            (b"\t" in source or b"\f" in source) and _TAB_INDENT.search(source)):
        return []
    found: list[Body] = []
    _members(source, 0, len(source), 0, _InString(source), found)
    return found


# Every search below looks for a line by the newline before it, which the regex engine
# finds far faster than a `^`; a file that opens with a header is left to the parser.
_HEADER_AT_START = re.compile(rb"(?:async +)?(?:def|class) ")


@functools.cache
def _header(indent: int) -> re.Pattern:
    return re.compile(rb"\n {%d}(?:async +)?(def|class) +([A-Za-z_]\w*)" % indent)


@functools.cache
def _closing(indent: int) -> re.Pattern:
    """The first code line indented at most `indent`: where a block at `indent` ends."""
    return re.compile(rb"\n {0,%d}[^ \n#]" % indent)


_CODE_LINE = re.compile(rb" *[^ \n#]")
_FIRST_CODE_LINE = re.compile(rb"\n *[^ \n#]")


def _members(source: bytes, start: int, end: int, indent: int, in_string: _InString,
             found: list) -> None:
    """Functions and classes written at exactly `indent` columns on the lines that
    start in [start, end)."""
    find_header, find_closing = _header(indent).search, _closing(indent).search
    position = max(start - 1, 0)
    while header := find_header(source, position, end):
        body = _header_end(source, header.end(), end)
        # A header inside a string (`SCRIPT = """\ndef main(): ...`) is text.
        if body is None or in_string(header.start() + 1):
            position = header.end()
            continue
        closing = find_closing(source, body - 1, end)
        extent = closing.start() + 1 if closing else end
        position = extent - 1
        if header.group(1) == b"class":
            member = _FIRST_CODE_LINE.search(source, body - 1, extent)
            if member:
                _members(source, body, extent, member.end() - member.start() - 2, in_string,
                         found)
        else:
            settled = _settled(source, body, extent)
            if settled:
                found.append(Body(header.group(2), header.start() + 1 + indent, body,
                                  *settled))


class _InString:
    """Whether a line starts inside a triple-quoted string, by the parity of the triple
    quotes before it; asked for lines in source order, it counts each byte once."""

    def __init__(self, source: bytes):
        self.source = source
        self.counted = 0
        self.open = [0, 0]  # parity of the two kinds of triple quote before `counted`

    def __call__(self, line: int) -> bool:
        for i, quote in enumerate((b'"""', b"'''")):
            self.open[i] ^= self.source.count(quote, self.counted, line) & 1
        self.counted = line
        return any(self.open)


def _header_end(source: bytes, position: int, end: int) -> int | None:
    """Start of the line after a `def`/`class` header that ends with its colon."""
    start = position
    for _ in range(_MAX_HEADER_LINES):
        newline = source.find(b"\n", position, end)
        if newline < 0:
            return None
        if _balanced(source, start, newline):
            line = source[position:newline]
            if b"#" in line:
                line = line[:line.index(b"#")]
            return newline + 1 if line.rstrip().endswith(b":") else None
        position = newline + 1
    return None


def _settled(source: bytes, first: int, extent: int) -> tuple[int, int, int] | None:
    """(last, indent, end) of the body in [first, extent) when the text alone says
    where it ends: its last line (code, or a comment the parser counts in, see
    `_trailing_comments`), where a statement standing for the body goes on that line
    (at the body's own indentation), and the end of that line."""
    last, end = _last_code_line(source, first, extent)
    if last is None or source.endswith(b"\\", first, end) or not _balanced(source, first, end) \
            or source.count(b'"""', first, end) % 2 or source.count(b"'''", first, end) % 2:
        return None
    statement = _FIRST_CODE_LINE.search(source, first - 1, extent)
    code = _CODE_LINE.match(source, last)
    assert statement is not None and code is not None  # `last` starts a code line in range
    indent = statement.end() - statement.start() - 2
    if code.end() - 1 - last < indent:  # a continuation line
        return None
    last, end = _trailing_comments(source, last, end, extent, indent)
    return last, last + indent, end


def _trailing_comments(source: bytes, last: int, end: int, extent: int,
                       indent: int) -> tuple[int, int]:
    """Start and end of the body's last line, counting as the parser does the comment
    lines after its last code line that are indented at least as deep as the body."""
    position = source.find(b"\n", end, extent) + 1 or extent
    while position < extent:
        line_end = source.find(b"\n", position, extent)
        line_end = extent if line_end < 0 else line_end
        text = source[position:line_end].rstrip()
        code = text.lstrip(b" ")
        if code:  # only comments follow the last code line
            if len(text) - len(code) < indent:
                break
            last, end = position, position + len(text)
        position = line_end + 1
    return last, end


def _last_code_line(source: bytes, first: int, extent: int) -> tuple[int | None, int]:
    """Start and end of the last line in [first, extent) that holds code."""
    end = extent
    while end > first:
        line = max(source.rfind(b"\n", first, end - 1) + 1, first)
        if _CODE_LINE.match(source, line, end):
            return line, len(source[line:end].rstrip()) + line
        end = line
    return None, first


def _balanced(source: bytes, start: int, end: int) -> bool:
    """As many brackets close as open in [start, end)."""
    count = source.count
    return count(b"(", start, end) + count(b"[", start, end) + count(b"{", start, end) \
        == count(b")", start, end) + count(b"]", start, end) + count(b"}", start, end)

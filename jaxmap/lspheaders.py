"""The editor's stdin as `jaxmap lsp` reads it, its header lines mended so that one
malformed message costs that message alone.

LSP frames each message as `Content-Length: N`, a blank line, then N bytes; pygls reads
a header only where a line is exactly that. After a header it cannot read
(`Content-Length: abc`) it waited for one the stream never gave again: the next
message's header came on one line with the bad message's body (`{}Content-Length: 87`),
and every later request went unanswered, `exit` too. Here such a header is dropped,
and what a bad message leaves before the next header is cut off; each is said in one
line (`said`)."""

from __future__ import annotations

import re
from typing import BinaryIO, Callable

_LENGTH = b"Content-Length:"
_READABLE = re.compile(rb"Content-Length: (\d+)\r\n\Z")


class Headers:
    """`stream` as pygls reads it (`readline`, `read`), its header lines mended."""

    def __init__(self, stream: BinaryIO, said: Callable[[str], None]):
        self.stream, self.said = stream, said

    def readline(self) -> bytes:
        while True:
            line = self.stream.readline()
            at = line.find(_LENGTH)
            if at > 0:  # the end of a message read wrong, then the next one's header
                self.said(f"skipped {at} bytes of a message it could not read")
                line = line[at:]
            if at >= 0 and not _READABLE.fullmatch(line):
                self.said(f"skipped a header it could not read: {line.strip()[:60]!r}")
                continue
            return line

    def read(self, count: int) -> bytes:
        return self.stream.read(count)

"""A source file's bytes as Python reads them, handed on as UTF-8 (what the parser
reads): decoded per its PEP 263 declaration (`# -*- coding: latin-1 -*-` on line 1
or 2) or its UTF-8 byte-order mark, else as UTF-8. Lines stay where they were, so
every location and column read from the result holds in the file."""

from __future__ import annotations

import codecs
import io
import tokenize


def as_utf8(data: bytes) -> tuple[bytes, str | None]:
    """`data` re-encoded as UTF-8 (as it is when it already was), and the problem met,
    if any: an unknown or conflicting declaration (then read as UTF-8), or bytes the
    encoding cannot decode (then replaced with U+FFFD)."""
    encoding, problem = _declared(data)
    if encoding == "utf-8" and not data.startswith(codecs.BOM_UTF8):
        try:
            data.decode("utf-8")
            return data, problem
        except UnicodeDecodeError as error:
            return data.decode("utf-8", "replace").encode(), problem or _undecodable(
                "utf-8", error)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        text, problem = data.decode(encoding, "replace"), _undecodable(encoding, error)
    return text.encode(), problem


def _declared(data: bytes) -> tuple[str, str | None]:
    """The encoding the file declares (utf-8-sig for a BOM), and why it was not used
    if it could not be."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:  # an unknown codec, a BOM with another declaration,
        fallback = "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"
        if "invalid or missing" in error.msg:  # or bytes in line 1 or 2 that are not UTF-8
            return fallback, None
        return fallback, f"{error.msg.replace(' for None', '')}; read as UTF-8"
    return ("utf-8-sig" if encoding == "utf-8-sig" else codecs.lookup(encoding).name
            .replace("_", "-")), None


def _undecodable(encoding: str, error: UnicodeDecodeError) -> str:
    return (f"byte 0x{error.object[error.start]:02x} at offset {error.start} is not "
            f"{encoding}; read with U+FFFD in its place")

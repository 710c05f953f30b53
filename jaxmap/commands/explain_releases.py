"""Tracebacks printed by another jax release than the indexed one: which release's
wording to match a message against (the paste's own when it says which, else this
tree's when it explains the message whole, else the release whose wording explains
most of it), and JAX frames whose line numbers are another release's, moved to the
line of the indexed tree that holds the source line they print."""

from __future__ import annotations

import os
from functools import lru_cache

from jaxmap.store.message_patterns import MIN_LITERAL, fixed_length

_NEAR = 400  # lines either side of a frame's line searched for its source line


class OlderReleases:
    """(version, messages) of the committed snapshots of releases older than the
    index's, newest first; read on first use, once per process."""

    def __init__(self, index):
        self._version, self._read = index.jax_version, None

    def __iter__(self):
        if self._read is None:
            from jaxmap.store import snapshot

            self._read = [(version, rows) for version, path in
                          snapshot.older_than(self._version)
                          if (rows := _messages(path))]
        return iter(self._read)


@lru_cache(maxsize=8)
def _messages(path: str) -> list:
    from jaxmap.store import snapshot

    return [row for row in snapshot.load(path).messages() if fixed_length(row[4]) >= MIN_LITERAL]


def candidates(older, release: str | None, indexed: str | None) -> list:
    """The older releases whose wording to try: the paste's release alone when it is
    one of them, else all, newest first; none when the paste ran the indexed release."""
    if release is not None and release == indexed:
        return []
    releases = list(older)
    named = [(version, rows) for version, rows in releases if version == release]
    return named or releases


def score(found) -> tuple[bool, int]:
    """How well a match explains a message: whole first, then its fixed text."""
    _sites, pieces, matched, whole = found
    if whole:
        return True, fixed_length(pieces)
    return False, len(matched.group().strip()) - sum(len(g) for g in matched.groups() if g)


def ends_in_field(found) -> bool:
    """Whether a wording matched by its start read the message's end into a placeholder
    that the wording's line follows with text of its own: the message lacks that text,
    so what the placeholder took may be another message's (one that ends in the
    wording's own text, or at a line break of it, is that wording cut or its first
    lines copied alone)."""
    _sites, pieces, matched, _whole = found
    reached = [i for i, field in enumerate(matched.groups(), 1) if field is not None]
    if not reached or matched.end(reached[-1]) != matched.end():
        return False
    return not pieces[reached[-1]].lstrip(" \t").startswith("\n")


def settled(root, frame) -> int:
    """The line of the indexed tree's file that holds the source line a JAX frame
    prints: its own line when it does, else the nearest that does; its own when the
    frame prints no source or the file is not there."""
    lines = _lines(str(root), frame.jax_file, _mtime(root, frame.jax_file)) \
        if frame.jax_file and frame.code else None
    if not lines or _same(lines, frame.line, frame.code):
        return frame.line
    for step in range(1, _NEAR):
        for line in (frame.line - step, frame.line + step):
            if _same(lines, line, frame.code):
                return line
    return frame.line


def unknown_or_same(root, frame) -> bool:
    """Whether the indexed tree lacks a JAX frame's file, or holds the source line the
    frame prints at its line (a paste's frame that is neither shows other code)."""
    lines = _lines(str(root), frame.jax_file, _mtime(root, frame.jax_file)) \
        if frame.jax_file else None
    return lines is None or _same(lines, frame.line, frame.code)


def _same(lines: tuple[str, ...], line: int, code: str) -> bool:
    return 0 < line <= len(lines) and lines[line - 1].strip() == code


def _mtime(root, file: str) -> float | None:
    try:
        return os.stat(os.path.join(str(root), file)).st_mtime
    except OSError:
        return None


@lru_cache(maxsize=64)
def _lines(root: str, file: str, _mtime: float | None) -> tuple[str, ...] | None:
    try:
        with open(os.path.join(root, file), encoding="utf-8", errors="replace") as handle:
            return tuple(handle.read().split("\n"))
    except OSError:
        return None

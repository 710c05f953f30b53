"""File changes: what they are, their unified diff, and writing them safely.

Writes are atomic per file (a temporary file in the same directory, then
os.replace); every target is checked before the first write, and a failure
part-way restores what was already written.
"""

from __future__ import annotations

import difflib
import os
from typing import NamedTuple

from jaxmap.errors import TargetError
from jaxmap.store import atomic
from jaxmap.store.atomic import check_directory


class FileChange(NamedTuple):
    """One file to write: `old` is None for a new file, else the text it replaces.

    `label` is the path shown in diffs; `overwrite` marks a generated file that
    replaces an existing one (allowed only with force), as opposed to an edit.
    """

    path: str
    label: str
    old: str | None
    new: str
    overwrite: bool = False

    @property
    def action(self) -> str:
        """`create`, `edit` or `overwrite`."""
        return "create" if self.old is None else "overwrite" if self.overwrite else "edit"


def new_file(path: str, label: str, text: str) -> FileChange:
    """A generated file; if one exists there already, a change that overwrites it."""
    check_directory(os.path.dirname(path) or ".")
    if os.path.isdir(path):
        raise TargetError(f"{path} is a directory; remove it or choose another name")
    old = read(path) if os.path.exists(path) else None
    return FileChange(path, label, old, text, overwrite=old is not None)


def read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as error:
        raise TargetError(f"cannot read {path}: {error}") from error


def unified_diff(changes: list[FileChange]) -> str:
    """A unified diff of every change (new files against /dev/null)."""
    parts: list[str] = []
    for change in changes:
        before = "/dev/null" if change.old is None else f"a/{change.label}"
        parts.extend(difflib.unified_diff(
            (change.old or "").splitlines(keepends=True),
            change.new.splitlines(keepends=True), before, f"b/{change.label}"))
    return "".join(parts)


def file_diffs(changes: list[FileChange]) -> list[str]:
    """Each change's own unified diff (as `--json` lists them)."""
    return [unified_diff([change]) for change in changes]


def check(changes: list[FileChange], force: bool = False) -> None:
    """TargetError if a change cannot be applied: a file exists that would be
    overwritten without `force`, or changed since it was read."""
    for change in changes:
        _check(change, force)


def apply(changes: list[FileChange], force: bool = False) -> list[str]:
    """Write every change, or none (after `check`): the paths written."""
    check(changes, force)
    done: list[FileChange] = []
    try:
        for change in changes:
            atomic.write(change.path, change.new)
            done.append(change)
    except OSError as error:
        _restore(done)
        raise TargetError(f"cannot write {change.path}: {error}; nothing was changed") \
            from error
    return [change.path for change in changes]


def _check(change: FileChange, force: bool) -> None:
    check_directory(os.path.dirname(change.path) or ".")
    exists = os.path.exists(change.path)
    if change.old is None and exists and not force:
        raise TargetError(f"{change.path} appeared since it was generated; "
                          f"run again, or pass --force to overwrite it")
    if change.overwrite and not force:
        raise TargetError(f"{change.path} exists; pass --force to overwrite it")
    if change.old is not None and not change.overwrite and (
            not exists or read(change.path) != change.old):
        raise TargetError(f"{change.path} changed since it was read; run again")


def _restore(done: list[FileChange]) -> None:
    for change in reversed(done):
        try:
            if change.old is None:
                os.unlink(change.path)
            else:
                atomic.write(change.path, change.old)
        except OSError:
            pass

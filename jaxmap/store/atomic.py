"""The one way jaxmap replaces a file, so that nobody sees half of it: write a
temporary file in the same directory, then `os.replace`; on failure the temporary
file is removed."""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Callable

from jaxmap.errors import TargetError


@contextmanager
def replacing(path: str):
    """Yield a temporary path to fill; on success it replaces `path` (keeping an
    existing file's permissions), on any error it is removed. Missing parent
    directories are created."""
    import tempfile

    directory = os.path.dirname(path) or "."
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".jaxmap-", suffix=".tmp", dir=directory)
    except OSError as error:
        raise TargetError(f"cannot write {path}: {error.strerror or error}") from error
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, os.stat(path).st_mode & 0o7777 if os.path.exists(path) else 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write(path: str, data: str | bytes) -> None:
    """Replace `path` with `data` atomically."""
    with replacing(path) as tmp:
        _put(tmp, data)


def _put(path: str, data: str | bytes) -> None:
    """Write `data` to `path`: text as UTF-8 with its own line ends, bytes as they are."""
    if isinstance(data, str):
        with open(path, "w", encoding="utf-8", newline="") as text:
            text.write(data)
    else:
        with open(path, "wb") as binary:
            binary.write(data)


def missing_folders(paths) -> list[str]:
    """The folders writing the files `paths` will create: each file's folder that does
    not exist yet, once, in order (the folders above it it may also create go unsaid)."""
    found: list[str] = []
    for path in paths:
        folder = os.path.dirname(path)
        if folder and not os.path.isdir(folder) and folder not in found:
            found.append(folder)
    return found


def check_directory(path: str) -> None:
    """`path` is, or can be created as, a directory jaxmap may write into."""
    probe = os.path.abspath(path)
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise TargetError(f"{probe} is a file, not a directory; give a directory")
    if not os.access(probe, os.W_OK | os.X_OK) or not _can_create_in(probe):
        raise TargetError(f"directory {probe} is not writable; choose another or "
                          f"fix its permissions")


def _can_create_in(directory: str) -> bool:
    """Whether a file can really be created there (root passes os.access even where
    nothing can be made, as in /proc)."""
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=directory):
            return True
    except OSError:
        return False


def check_tree(directory: str, force: bool, ours: Callable[[str], bool]) -> None:
    """Before any work: `directory` may be written as a whole, replaced only with force
    and only where it is empty or `ours` (a folder the command wrote before), and never
    the working directory or one holding it: --force never takes a project, a checkout
    or the shell's directory with it."""
    if os.path.isfile(directory):
        raise TargetError(f"{directory} is a file; give a directory")
    if os.path.exists(directory):
        if not force:
            raise TargetError(f"{directory} exists; pass --force to replace it")
        here, there = os.path.realpath(os.curdir), os.path.realpath(directory)
        if os.path.commonpath([here, there]) == there:
            raise TargetError(f"{directory} is the working directory or holds it, which "
                              "--force does not replace; give another folder")
        if os.listdir(directory) and not ours(directory):
            raise TargetError(f"{directory} is not a folder this command wrote, so --force "
                              "does not replace it (only such a folder, or an empty one); "
                              "give another folder")
    check_directory(os.path.dirname(os.path.abspath(directory)))


def write_tree(directory: str, files: dict[str, str | bytes], ours: Callable[[str], bool],
               force: bool = False) -> None:
    """Write `files` ({POSIX path under it: text or bytes}) as `directory`, whole or not
    at all: filled in a temporary sibling, then renamed into place; an existing
    directory is replaced only with `force` (`check_tree`), and only where it holds
    nothing but what `files` writes (and Python's caches). TargetError if it cannot be
    written."""
    check_tree(directory, force, ours)
    extra = _not_written(directory, files) if os.path.isdir(directory) else []
    if extra:
        raise TargetError(f"{directory} holds what this command does not write "
                          f"({', '.join(extra[:3])}{', ...' if len(extra) > 3 else ''}); "
                          "move it out or give another folder: nothing was written")
    directory = os.path.abspath(directory)
    try:
        _write_tree(directory, files)
    except OSError as error:
        raise TargetError(f"cannot write {directory} ({error.strerror or error})") from None


_CACHES = frozenset({"__pycache__", ".pytest_cache"})  # what running the files leaves


def _not_written(directory: str, files: dict[str, str | bytes]) -> list[str]:
    """The paths under `directory` (a folder's, not what is in it) that writing
    `files` would not put back, Python's caches aside, in order."""
    wanted = set(files) | {"/".join(path.split("/")[:i]) for path in files
                           for i in range(1, path.count("/") + 1)}
    found = []
    for top, folders, names in os.walk(directory):
        relative = os.path.relpath(top, directory).replace(os.sep, "/")
        prefix = "" if relative == "." else relative + "/"
        for folder in sorted(folders):
            if folder in _CACHES or prefix + folder not in wanted:
                folders.remove(folder)
                if folder not in _CACHES:
                    found.append(prefix + folder + "/")
        found += [prefix + name for name in sorted(names) if prefix + name not in wanted]
    return found


def _write_tree(directory: str, files: dict[str, str | bytes]) -> None:
    import shutil
    import tempfile

    parent = os.path.dirname(directory)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".jaxmap-", dir=parent)
    try:
        os.chmod(tmp, 0o755)
        for relative, data in files.items():
            path = os.path.join(tmp, *relative.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            _put(path, data)
        if os.path.exists(directory):
            aside = tempfile.mkdtemp(prefix=".jaxmap-old-", dir=parent)
            os.replace(directory, os.path.join(aside, "old"))
            try:
                os.replace(tmp, directory)
            except OSError:
                os.replace(os.path.join(aside, "old"), directory)
                raise
            shutil.rmtree(aside, ignore_errors=True)
        else:
            os.replace(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise

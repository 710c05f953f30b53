"""The one way jaxmap replaces a file, so that nobody sees half of it: write a
temporary file in the same directory, then `os.replace`; on failure the temporary
file is removed."""

from __future__ import annotations

import os
from contextlib import contextmanager

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


def check_tree(directory: str, force: bool, marker: str) -> None:
    """Before any work: `directory` may be written as a whole, replaced only with force
    and only where it is empty or holds `marker` (a folder written before): --force
    never takes a project, a checkout or the working directory with it."""
    if os.path.isfile(directory):
        raise TargetError(f"{directory} is a file; give a directory")
    if os.path.exists(directory):
        if not force:
            raise TargetError(f"{directory} exists; pass --force to replace it")
        if os.listdir(directory) and not os.path.isfile(os.path.join(directory, marker)):
            raise TargetError(f"{directory} holds files and no {marker}, so it is not a "
                              "folder this command wrote; --force replaces only such a "
                              "folder (or an empty one): give another")
    check_directory(os.path.dirname(os.path.abspath(directory)))


def write_tree(directory: str, files: dict[str, str | bytes], marker: str,
               force: bool = False) -> None:
    """Write `files` ({POSIX path under it: text or bytes}, `marker` among them) as
    `directory`, whole or not at all: filled in a temporary sibling, then renamed into
    place; an existing directory is replaced only with `force` (`check_tree`).
    TargetError if it cannot be written."""
    check_tree(directory, force, marker)
    directory = os.path.abspath(directory)
    try:
        _write_tree(directory, files)
    except OSError as error:
        raise TargetError(f"cannot write {directory} ({error.strerror or error})") from None


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

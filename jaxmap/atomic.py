"""Writing a file so that nobody sees half of it: a temporary file in the same
directory, then `os.replace`; on failure the temporary file is removed."""

from __future__ import annotations

import os

from jaxmap.errors import TargetError


def write(path: str, data: str | bytes) -> None:
    """Replace `path` with `data` atomically, keeping an existing file's permissions;
    missing parent directories are created."""
    import tempfile

    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".jaxmap-", suffix=".tmp", dir=directory)
    try:
        if isinstance(data, str):
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(data)
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        mode = os.stat(path).st_mode & 0o7777 if os.path.exists(path) else 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def check_directory(path: str) -> None:
    """`path` is, or can be created as, a directory jaxmap may write into."""
    probe = os.path.abspath(path)
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise TargetError(f"{probe} is a file, not a directory; give a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise TargetError(f"directory {probe} is not writable; choose another or "
                          f"fix its permissions")

"""List the Python files of a root (roots.py finds the root), with their module names."""

from __future__ import annotations

import os
from typing import NamedTuple

from jaxmap import roots
from jaxmap.errors import RootError

# Directories never worth indexing: caches, build outputs, virtualenvs; and every
# directory whose name starts with a dot (VCS data, tool caches).
_SKIP_DIRS = frozenset({"__pycache__", "venv", "node_modules", "build", "dist", "bazel-bin",
                        "bazel-out"})
# Files larger than this are generated data, not code worth a parse (the largest file
# of jax 0.10.2 is 0.3 MiB; of its jaxlib, a 2.5 MiB generated table); each is named.
MAX_FILE_BYTES = 16 * 1024 * 1024


class SourceFile(NamedTuple):
    """A Python file under the root: POSIX path relative to it, module name, stat."""

    path: str
    module: str
    is_package: bool
    mtime_ns: int
    size: int


class Tree(NamedTuple):
    """The Python files under a root, the directories walked with their mtimes (a file
    added or removed changes its directory's mtime), and the Python files left out,
    each with why: (path, reason)."""

    files: list[SourceFile]
    dirs: list[tuple[str, int]]
    skipped: list[tuple[str, str]]


def list_files(root: str) -> Tree:
    """Every .py file under the root (only `jax/` for an installed-packages root),
    sorted by path; symlink loops and unreadable directories are skipped, and so are
    files too large or unreadable (in `skipped`)."""
    top = [os.path.join(root, "jax")] if roots.is_installed_packages_dir(root) else [root]
    tree = Tree([], [], [])
    seen_dirs: set[tuple[int, int]] = set()
    for start in top:
        _walk(root, start, tree, seen_dirs)
    if not tree.files and tree.skipped:
        path, reason = tree.skipped[0]
        more = f" and {len(tree.skipped) - 1} more" if len(tree.skipped) > 1 else ""
        raise RootError(f"root {root} holds only Python files jaxmap skips: {path} "
                        f"({reason}){more}")
    if not tree.files:
        raise RootError(f"root {root} holds no Python files")
    tree.files.sort(key=lambda f: f.path)
    return tree


def _walk(root: str, directory: str, tree: Tree, seen_dirs: set) -> None:
    try:
        info = os.stat(directory)
        entries = list(os.scandir(directory))
    except OSError:
        return
    key = (info.st_dev, info.st_ino)
    if key in seen_dirs:  # a symlink loop, or a second link to the same tree
        return
    seen_dirs.add(key)
    tree.dirs.append((_relative(root, directory), info.st_mtime_ns))
    files = tree.files
    for entry in sorted(entries, key=lambda e: e.name):
        try:
            if entry.is_dir():
                if entry.name not in _SKIP_DIRS and not entry.name.startswith("."):
                    _walk(root, entry.path, tree, seen_dirs)
            elif entry.name.endswith(".py") and entry.is_file():
                stat = entry.stat()
                if stat.st_size <= MAX_FILE_BYTES:
                    files.append(_source_file(root, entry.path, stat))
                else:
                    tree.skipped.append((_relative(root, entry.path), too_large(stat.st_size)))
        except OSError as error:
            if entry.name.endswith(".py"):
                tree.skipped.append((_relative(root, entry.path), error.strerror or "unreadable"))


def too_large(size: int) -> str:
    return (f"{size / 2**20:.1f} MiB, over the {MAX_FILE_BYTES // 2**20} MiB "
            f"limit for a source file")


def _relative(root: str, path: str) -> str:
    """Root-relative POSIX path."""
    return os.path.relpath(path, root).replace(os.sep, "/")


def _source_file(root: str, path: str, stat: os.stat_result) -> SourceFile:
    relative = _relative(root, path)
    module, is_package = module_name(relative)
    return SourceFile(relative, module, is_package, stat.st_mtime_ns, stat.st_size)


def module_name(relative: str) -> tuple[str, bool]:
    """`jax/_src/lax/__init__.py` -> ('jax._src.lax', True)."""
    parts = relative[:-3].split("/")
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts) or "__init__", is_package

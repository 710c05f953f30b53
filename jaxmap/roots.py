"""Which tree a command is about: the root given, $JAXMAP_ROOT, or the directory that
holds the installed jax; checked once, before any work."""

from __future__ import annotations

import os

from jaxmap.errors import RootError

# Paths are plain strings here: pathlib's import alone would cost `jaxmap locate` a
# tenth of its start-up.


def default_root() -> str:
    """The directory that holds the installed `jax` package (e.g. site-packages)."""
    env = os.environ.get("JAXMAP_ROOT")
    if env:
        return env
    import importlib.util

    spec = importlib.util.find_spec("jax")
    if spec is None or not spec.submodule_search_locations:
        raise RootError("jax is not installed here; pass --root PATH (a JAX checkout or "
                        "any directory of Python code)")
    return os.path.dirname(next(iter(spec.submodule_search_locations)))


def resolve_root(root: str | os.PathLike | None) -> str:
    """The absolute, real root directory; a clear error if it is unusable."""
    path = default_root() if root is None else os.fspath(root)
    if not os.path.exists(path):
        raise RootError(f"root {path} does not exist")
    if not os.path.isdir(path):
        raise RootError(f"root {path} is not a directory")
    path = os.path.realpath(path)
    if os.path.isfile(os.path.join(path, "__init__.py")) and _imports_itself(path):
        # Its modules would lose their package's name, and every import of them fail.
        raise RootError(f"root {path} is a package (it has an __init__.py); give the "
                        f"directory that holds it: {os.path.dirname(path)}")
    return path


_MAX_FILES_READ = 200


def _imports_itself(package: str) -> bool:
    """Whether the package's own modules import it by its name (`from jax._src import`
    in `jax/`): then indexed as a root, those imports would name nothing. A folder with
    an `__init__.py` whose modules never do (a snippet with relative or sibling imports)
    is a tree of its own. The first files found are read, up to a bound."""
    import re

    name = re.escape(os.path.basename(package))
    pattern = re.compile(rf"^[ \t]*(?:from|import)[ \t]+{name}\b", re.M)
    read = 0
    for directory, _, files in os.walk(package):
        for file in files:
            if not file.endswith(".py"):
                continue
            read += 1
            try:
                with open(os.path.join(directory, file), encoding="utf-8",
                          errors="replace") as source:
                    if pattern.search(source.read()):
                        return True
            except OSError:
                continue
            if read >= _MAX_FILES_READ:
                return False
    return False


def is_installed_packages_dir(root: str) -> bool:
    """True for a site-packages style root, where only the jax package is indexed."""
    jax_dir = os.path.join(root, "jax")
    if not os.path.isfile(os.path.join(jax_dir, "__init__.py")) or \
            os.path.exists(os.path.join(jax_dir, "BUILD")):
        return False
    return os.path.basename(root) in ("site-packages", "dist-packages") or any(
        name.startswith("jax-") and name.endswith(".dist-info") for name in os.listdir(root))

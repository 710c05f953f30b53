"""A def added that nothing names: the first phase takes its definition without being
resolved again (carry.py), unless a public module may export it (through star imports)
or another file names it (a re-export); either way, every table equals a cold
index's."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from jaxmap.indexing import carry, indexer, resolve
from jaxmap.store.write import SECOND_PHASE

# (A module's docstring first: a file that opens with a def has its bodies parsed.)
TREE = {
    "jax/__init__.py": "",
    "jax/_src/__init__.py": "",
    "jax/_src/core.py": '"""Core."""\n\n\ndef existing(x):\n  return x\n',
    "jax/_src/stars.py": "from jax._src.core import *\n",  # private, star-imports core
    "jax/chained.py": "from jax._src.stars import *\n",  # public: exports core's names
    "jax/_src/leaf.py": '"""Leaf."""\n\n\ndef leaf(x):\n  return x\n',
    "jax/_src/hidden.py": "from jax._src.leaf import *\n",  # no public module above it
    "jax/_src/other.py": '"""Other."""\n\n\ndef other(y):\n  return y\n',
    "jax/reexports.py": "from jax._src.other import later as later\n",
}


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for name, text in TREE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _tables(path: str) -> dict[str, list]:
    """Every table; with a call graph not current, those of the first phase, and meta
    but its word on the call graph (a cold index of the first phase alone says "0")."""
    with sqlite3.connect(path) as conn:
        names = [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        tables = {name: conn.execute(f"SELECT * FROM {name}").fetchall() for name in names}
    if ("graph", "1") not in tables["meta"]:
        for name in (*SECOND_PHASE, "stale", "facts"):
            tables.pop(name)
        tables["meta"] = [row for row in tables["meta"] if row[0] != "graph"]
    return tables


def _asked(tree: Path, cache: Path, monkeypatch, graph: bool) -> tuple[str, int]:
    """The index after a question (of the call graph, if `graph`), and how often the
    tree was resolved for it."""
    resolved = []
    whole = resolve.resolve
    monkeypatch.setattr(resolve, "resolve", lambda *a, **k: resolved.append(1) or whole(*a, **k))
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(cache))
    path, _ = indexer.ensure_index(tree, graph=graph)
    monkeypatch.setattr(resolve, "resolve", whole)
    return path, len(resolved)


# (file, the def added, whether the tree is resolved again, a public path it gets)
EDITS = {
    "private, in a module a public one star-imports": (
        "jax/_src/core.py", "_added", False, None),
    "public, star-imported by a public module two removes up": (
        "jax/_src/core.py", "added", True, "jax.chained.added"),
    "public, star-imported by a private module alone": (
        "jax/_src/leaf.py", "added", False, None),
    "public, named by a re-export": ("jax/_src/other.py", "later", True, "jax.reexports.later"),
}


@pytest.mark.parametrize("graph", [False, True])
@pytest.mark.parametrize("name", sorted(EDITS))
def test_an_added_def_leaves_the_index_a_cold_index_would_be(name, graph, tmp_path,
                                                              monkeypatch):
    file, added, resolves, public = EDITS[name]
    tree = _tree(tmp_path)
    _asked(tree, tmp_path / "warm", monkeypatch, graph=True)
    source = tree / file
    source.write_text(source.read_text() + f"\n\ndef {added}(x):\n  return x\n")
    path, resolved = _asked(tree, tmp_path / "warm", monkeypatch, graph)
    assert bool(resolved) is resolves, name
    tables = _tables(path)
    assert graph is (("graph", "1") in tables["meta"])
    cold, _ = _asked(tree, tmp_path / "cold", monkeypatch, graph)
    assert tables == _tables(cold), name
    paths = {row[0] for row in tables["public_paths"]}
    assert (public in paths) if public else not any(p.endswith(f".{added}") for p in paths)


def test_two_defs_in_two_files_go_in_at_their_places(tmp_path, monkeypatch):
    """Defs added to two files, one above the file's others: ids move by each."""
    tree = _tree(tmp_path)
    _asked(tree, tmp_path / "warm", monkeypatch, graph=True)
    core, leaf = tree / "jax/_src/core.py", tree / "jax/_src/leaf.py"
    core.write_text(core.read_text().replace("def existing", "def _first(x):\n  return x\n\n\n"
                                             "def existing"))
    leaf.write_text(leaf.read_text() + "\n\ndef _second(x):\n  return x\n\n\n"
                    "def _third(x):\n  return x\n")
    path, resolved = _asked(tree, tmp_path / "warm", monkeypatch, graph=True)
    assert not resolved
    tables = _tables(path)
    cold, _ = _asked(tree, tmp_path / "cold", monkeypatch, graph=True)
    assert tables == _tables(cold)


def test_only_a_public_module_above_makes_a_def_exported():
    imports = [("jax._src.stars", [("", "*", "jax._src.core", 1, True)]),
               ("jax.chained", [("", "*", "jax._src.stars", 1, True)]),
               ("jax._src.hidden", [("", "*", "jax._src.leaf", 1, True)])]
    assert carry.exported({"core.py": ("jax._src.core", frozenset({"added"}))},
                          lambda: imports)
    assert not carry.exported({"leaf.py": ("jax._src.leaf", frozenset({"added"}))},
                              lambda: imports)
    assert carry.exported({"api.py": ("jax.api", frozenset({"added"}))}, lambda: imports)
    assert not carry.exported({"core.py": ("jax._src.core", frozenset({"_added"}))},
                              lambda: [])


def test_defs_added_one_after_another_each_go_in_unresolved(tmp_path, monkeypatch):
    """A def, then a plain question (the call graph waits), another def in the same
    file, then a graph question: the first phase takes each without resolving, and the
    call graph is carried over; every table a cold index's."""
    tree = _tree(tmp_path)
    _asked(tree, tmp_path / "warm", monkeypatch, graph=True)
    core = tree / "jax/_src/core.py"
    for added, graph in (("_one", False), ("_two", True)):
        core.write_text(core.read_text() + f"\n\ndef {added}(x):\n  return x\n")
        path, resolved = _asked(tree, tmp_path / "warm", monkeypatch, graph)
        assert not resolved
        tables = _tables(path)
        cold, _ = _asked(tree, tmp_path / f"cold{added}", monkeypatch, graph)
        assert tables == _tables(cold), added
    assert ("graph", "1") in tables["meta"]

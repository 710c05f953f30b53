"""The call graph's modules (and call sites) read in forked helpers: the same index as in
one process."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from inline import written_tree

from jaxmap.flow import forked, sitepasses
from jaxmap.indexing import indexer

MINIJAX = Path(__file__).parent / "fixtures" / "minijax"


def _tables(path: str) -> dict[str, list]:
    with sqlite3.connect(path) as conn:
        names = [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {name: conn.execute(f"SELECT * FROM {name}").fetchall() for name in names}


@pytest.mark.skipif(os.name != "posix", reason="helpers fork")
def test_modules_read_in_helpers_give_the_index_one_process_gives(tmp_path, monkeypatch):
    monkeypatch.setattr(forked, "_PARALLEL_MIN_MODULES", 1)
    monkeypatch.setattr(sitepasses, "_LEAST_CALLS", 1)
    monkeypatch.setattr(sitepasses, "_LEAST_JOBS", 2)  # the call sites' passes too
    tree = Path(shutil.copytree(MINIJAX, tmp_path / "minijax"))
    built = {}
    for jobs in (1, 3):
        monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / f"cache{jobs}"))
        built[jobs] = _tables(indexer.build_index(tree, jobs=jobs).path)
    for table in ("files", "meta"):  # (when each file was read; the index's own paths)
        built[1].pop(table), built[3].pop(table)
    assert built[1] == built[3]
    assert built[1]["calls"] and built[1]["binds"]


# `outer` (first in one process) asks what `use()` returns before `users`, the largest
# module (read before the helpers fork), asks the inner `wrap(f)` on its own: the outer
# call's read of `wrap` reads the inner call in the middle of reading `wrapped`.
_NESTED_WRAPS = {
    "wrappers.py": """
        def f(): pass
        def h(): pass
        def make(g):
          return g
        def wrap(fun):
          wrapped = make(fun)
          return wrapped
        def use_h():
          return wrap(h)()
        """,
    "outer.py": """
        from users import use
        def run():
          return use()()
        """,
    "users.py": """
        from wrappers import wrap, f
        def use():
          return wrap(wrap(f))
        def many(a, b, c, d, e, g):
          a(); b(); c(); d(); e(); g()
        """,
}


@pytest.mark.skipif(os.name != "posix", reason="helpers fork")
def test_a_call_read_in_a_read_of_its_function_is_the_same_in_any_process(
        tmp_path_factory, monkeypatch):
    monkeypatch.setattr(forked, "_PARALLEL_MIN_MODULES", 1)
    tree = written_tree(tmp_path_factory, _NESTED_WRAPS)
    built = {}
    for jobs in (1, 3):
        monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        built[jobs] = _tables(indexer.build_index(tree, jobs=jobs).path)
        built[jobs].pop("files"), built[jobs].pop("meta")
    assert built[1] == built[3]
    qualname = {row[0]: row[2] for row in built[1]["definitions"]}
    assert [qualname[row[1]] for row in built[1]["calls"]
            if qualname[row[0]] == "outer.run" and row[2] == "use()"] == ["wrappers.f"]


def test_each_gives_the_results_in_order_whichever_process_worked(monkeypatch):
    monkeypatch.setattr(forked, "_PARALLEL_MIN_MODULES", 1)
    told = []
    found = forked.each(10, lambda place: (place, place * place), 3,
                        lambda done, total, working: told.append(done), lambda p: f"m{p}",
                        sizes=list(range(10)))
    assert found == [(place, place * place) for place in range(10)]
    assert told[-1] == 10


@pytest.mark.skipif(os.name != "posix", reason="helpers fork")
def test_this_process_reads_the_largest_tenth_before_the_helpers_fork(monkeypatch):
    """What the largest places compute, helpers inherit instead of computing it again."""
    monkeypatch.setattr(forked, "_PARALLEL_MIN_MODULES", 1)
    sizes = [1, 30, 2, 3, 40, 4, 5, 6, 7, 2]  # a tenth of 100: the largest place alone
    found = forked.each(10, lambda place: os.getpid(), 3, None, lambda p: f"m{p}", sizes)
    assert found[4] == os.getpid()
    assert all(pid != os.getpid() for place, pid in enumerate(found) if place != 4)

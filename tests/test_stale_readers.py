"""Readers that hold a connection across the switch to, or from, a stale call graph
(a first-phase question in another process moves rows in place and leaves it stale),
and a graph question that such a question overtakes."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

from jaxmap.indexing import indexer
from jaxmap.store.write import STALE

from test_edits import MINIJAX, PARALLEL, _cold, _comment_on_top, _graph_state


def _ids(path: str, file: str) -> list[int]:
    with sqlite3.connect(path) as conn:
        return [row[0] for row in conn.execute(
            "SELECT id FROM definitions WHERE file = ? ORDER BY id", (file,))]


def test_a_reader_open_before_a_locate_sees_no_graph_rows_of_older_code(tmp_path, monkeypatch):
    """A server (`jaxmap lsp`) holds the index open with a current call graph; another
    process answers `locate` after a comment is put on top of parallel.py, moving the
    first phase's rows in place and leaving the call graph's, stale. The open reader
    must not show those rows at their old lines: it reads them through views that are
    empty while meta says the call graph is stale."""
    from jaxmap.store.read import open_file

    tree = Path(shutil.copytree(MINIJAX, tmp_path / "minijax"))
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    path = indexer.build_index(tree).path
    with open_file(path) as reader:
        assert reader.graph_built
        source = tree / PARALLEL
        source.write_text(_comment_on_top(source.read_text()))
        path, report = indexer.ensure_index(tree)  # another process's `locate`
        assert report is not None and _graph_state(path) == STALE
        seen = reader.callees(_ids(path, PARALLEL))
        graph_built = reader.graph_built
    cold = _cold(tree, tmp_path / "cold", monkeypatch, graph=True)
    with open_file(cold) as fresh:
        current = fresh.callees(_ids(cold, PARALLEL))
    assert current
    # What the reader shows must be current, or nothing with graph_built False.
    assert seen == current or (seen == [] and not graph_built), \
        [(a[4], b[4]) for a, b in zip(seen, current) if a != b][:5]


def test_a_session_whose_index_went_stale_and_back_in_one_tick_hides_the_graph(
        tmp_path, monkeypatch):
    """Session.index (the MCP server's) reopens the index only when its stamp (inode,
    mtime_ns, size) changed. A `locate` leaves the call graph stale in place, then a
    `callers` makes it current in place; where the file's mtime did not move (coarse
    timestamps: set back here), the session keeps its connection, which must then see
    the current call graph, not an empty one."""
    from jaxmap.session import Session

    tree = Path(shutil.copytree(MINIJAX, tmp_path / "minijax"))
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    path = indexer.build_index(tree).path
    source = tree / PARALLEL
    source.write_text(_comment_on_top(source.read_text()))
    real = indexer.ensure_index

    def in_one_tick(root=None, **kwargs):  # the write leaves the mtime where it was
        before = os.stat(path)
        found = real(root, **kwargs)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        return found

    with Session(str(tree)) as session:
        index = session.index()  # locate
        assert not index.graph_built
        size = os.stat(path).st_size
        monkeypatch.setattr(indexer, "ensure_index", in_one_tick)
        index = session.index(graph=True)  # callers
        assert _graph_state(path) == "1" and os.stat(path).st_size == size
        assert index.call_counts() != {}, "a current call graph read as empty"


def test_a_graph_question_opens_what_it_asked_for_though_a_locate_ran_meanwhile(
        tmp_path, monkeypatch, capsys):
    """`jaxmap callers` brings the call graph up to date, then opens the index; where
    another process's `locate` left it stale in between, it is brought up to date
    again, not answered from empty tables."""
    from jaxmap import session

    tree = Path(shutil.copytree(MINIJAX, tmp_path / "minijax"))
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    indexer.build_index(tree)
    real = indexer.ensure_index
    edits = [_comment_on_top]

    def then_a_locate(root=None, **kwargs):
        found = real(root, **kwargs)
        if edits:  # once: an editor's save, then its `jaxmap locate`
            source = tree / PARALLEL
            source.write_text(edits.pop()(source.read_text()))
            real(root)
        return found

    monkeypatch.setattr(indexer, "ensure_index", then_a_locate)
    with session.open_index(str(tree), graph=True) as index:
        assert index.graph_built and index.call_counts(), "asked for the call graph, got none"

"""The facade between the front ends and the two sides of the index: it decides when to
build (indexing/) and opens what was built for reading (store/read.py).

`open_index` serves one command; a `Session` keeps an index open across many queries
(the MCP and LSP servers'). Each `Session.index()` call checks the indexed files by
stat, as every command does, and refreshes the index if one changed; the connection
is reopened only when the index file itself was replaced.
"""

from __future__ import annotations

import os

from jaxmap.errors import StoreError
from jaxmap.store.read import Index, open_file

# How often a graph question updates the index again where a first-phase question in
# another process (an editor's `locate`) left the call graph stale between the update
# and the opening: an open index reads its rows through views of meta's state, so it
# sees them current once updated in place, and a replaced file is opened again.
_TRIES = 3


def open_index(root=None, *, progress=None, graph: bool = False) -> Index:
    """Open the index of `root` for queries, building or refreshing it first if needed;
    with `graph`, an index that holds the call graph (built now if it does not). The
    caller closes it."""
    return Session(root, progress=progress).index(graph)


def only_moved(before: Index, after: Index, files: list[str]) -> bool:
    """Whether two indexes of trees that differ only in `files` hold the same rows but
    for their lines: each file is in both, its code only moved (comments, docstrings,
    blank lines) or changed only in assignments nothing reads, as the indexer tells
    before it moves an index's rows in place rather than solving the tree again."""
    from jaxmap.indexing import moves

    old, new = before.stored_facts(files), after.stored_facts(files)
    return len(old) == len(new) == len(set(files)) and \
        all(moves.graph_moves(old[path], new[path]) is not None for path in old)


class Session:
    """One root's index, opened on first use (errors surface at that query)."""

    def __init__(self, root: str | None = None, progress=None):
        self.root = root
        self._progress = progress  # indexer.ensure_index's progress callback
        self._index: Index | None = None
        self._stamp: tuple[int, int, int] | None = None

    def index(self, graph: bool = False) -> Index:
        """The index of `root`, current with the files on disk; with `graph`, holding
        the call graph."""
        index = self._updated(graph)
        for _ in range(_TRIES - 1):
            if not graph or index.graph_built:
                break
            index = self._updated(graph)  # left stale meanwhile: see _TRIES
        return index

    def _updated(self, graph: bool) -> Index:
        """The index brought up to date, opened again if its file was replaced."""
        from jaxmap.indexing import indexer

        path, _ = indexer.ensure_index(self.root, progress=self._progress, graph=graph)
        stamp = _stamp(path)
        index = self._index
        if index is None or stamp != self._stamp:
            self.close()
            index = open_file(path)
            self._index, self._stamp = index, stamp
        return index

    # -- a long-lived server's index (jaxmap lsp): open at once, refreshed elsewhere ----

    def open_as_is(self) -> None:
        """Open the index of `root` as it is on disk, however stale, if there is a
        readable one; `refresh` then brings it up to date."""
        from jaxmap.indexing import indexer

        path = indexer.index_file(self.root)
        if os.path.isfile(path):
            try:
                self._index, self._stamp = open_file(path), _stamp(path)
            except StoreError:
                self._index = None

    def current(self) -> Index | None:
        """The open index, as it is (None before one is open): no check of the files."""
        return self._index

    def refresh(self, graph: bool = True):
        """Bring the index file up to date with the files on disk (with the call graph
        unless told not to), without opening it: safe in a worker thread while another
        thread reads `current()`. The indexer's report, or None when nothing changed."""
        from jaxmap.indexing import indexer

        return indexer.ensure_index(self.root, graph=graph)[1]

    def reopen(self) -> bool:
        """Open the index file again if it was replaced since it was opened (on the
        thread that reads it); whether it was."""
        from jaxmap.indexing import indexer

        path = indexer.index_file(self.root)
        stamp = _stamp(path)
        if self._index is not None and stamp == self._stamp:
            return False
        self.close()
        self._index, self._stamp = open_file(path), stamp
        return True

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _stamp(path: str) -> tuple[int, int, int]:
    """What changes when the index file is rewritten or replaced."""
    st = os.stat(path)
    return st.st_ino, st.st_mtime_ns, st.st_size

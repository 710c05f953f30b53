"""The facade between the front ends and the two sides of the index: it decides when to
build (build/) and opens what was built for reading (store/read.py).

`open_index` serves one command; a `Session` keeps an index open across many queries
(the MCP and LSP servers'). Each `Session.index()` call checks the indexed files by
stat, as every command does, and refreshes the index if one changed; the connection
is reopened only when the index file itself was replaced.
"""

from __future__ import annotations

import os

from jaxmap.store.read import Index, open_file


def open_index(root=None, *, progress=None) -> Index:
    """Open the index of `root` for queries, building or refreshing it first if needed."""
    from jaxmap.build import indexer

    path, _ = indexer.ensure_index(root, progress=progress)
    return open_file(path)


class Session:
    """One root's index, opened on first use (errors surface at that query)."""

    def __init__(self, root: str | None = None):
        self.root = root
        self._index: Index | None = None
        self._stamp: tuple[int, int, int] | None = None

    def index(self) -> Index:
        """The index of `root`, current with the files on disk."""
        from jaxmap.build import indexer

        path, _ = indexer.ensure_index(self.root)
        stamp = _stamp(path)
        if self._index is None or stamp != self._stamp:
            self.close()
            self._index, self._stamp = open_file(path), stamp
        return self._index

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

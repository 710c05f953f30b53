"""The index a long-lived server holds (`jaxmap lsp`, `jaxmap mcp`): answered from at
once, built and refreshed in a child process.

Why a child process: a server is threaded (its reader of stdin, its event loop), and
the indexer forks helper processes; a fork from a threaded process can inherit a lock
that another thread held and wait on it forever. The child, `python -m
jaxmap.indexing.builder`, is started fresh (exec, not fork), runs single-threaded and
lives as long as the server, so a refresh after a save pays no start-up. It leads a
process group of its own: closing the server ends it and every helper it forked at
once, and a Ctrl-C in the editor's terminal does not reach it.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Callable

from jaxmap.errors import JaxmapError, describe
from jaxmap.session import Session

if TYPE_CHECKING:
    from jaxmap.store.read import Index

Post = Callable[[Callable[[], None]], object]  # runs a callable on the server's thread


class BuildProcess:
    """The child that builds: requests go down its stdin, and each message it sends
    back is handed to `on_message` on the server's thread (through `post`)."""

    def __init__(self, root: str | None, post: Post, on_message: Callable[[dict], None]):
        self.root, self._post, self._on_message = root, post, on_message
        self._process: subprocess.Popen | None = None

    def request(self, graph: bool) -> None:
        """Ask for an update (the answer comes as messages); starts the child if it is
        not running (the first time, or after it died)."""
        if self._process is None or self._process.poll() is not None:
            self._start()
        assert self._process is not None and self._process.stdin is not None
        line = json.dumps({"graph": graph}) + "\n"
        try:
            self._process.stdin.write(line.encode())
            self._process.stdin.flush()
        except OSError:
            self._post(self._ended)

    def _ended(self) -> None:
        self._on_message({"error": _ENDED})

    def _start(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "jaxmap.indexing.builder", self.root or ""],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            start_new_session=os.name == "posix")
        threading.Thread(target=self._read, args=(self._process,), daemon=True,
                         name="jaxmap-build-reader").start()

    def _read(self, process: subprocess.Popen) -> None:
        """On the reader thread: every line the child sends, until it ends."""
        assert process.stdout is not None
        try:
            for line in process.stdout:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                self._post(functools.partial(self._on_message, message))
            if process is self._process:  # it ended, and not by close()
                self._post(self._ended)
        except (OSError, ValueError, RuntimeError):  # a pipe or the server's loop closed
            return

    def close(self) -> None:
        """End the child and every process it started, now."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            if os.name == "posix":
                os.killpg(process.pid, signal.SIGKILL)
            else:
                process.kill()
        except OSError:
            pass
        process.wait()
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass


_ENDED = "jaxmap: error: the build process ended unexpectedly; the next save starts it again"


class ServedSession:
    """One root's index as a server holds it: the index on disk opened as it is at
    start (however stale), then kept current by updates in the build process, one at a
    time (requests made meanwhile are merged into one more). `refresh_index` is the one
    place a freshly built index replaces the one answers come from.

    An update that solves the call graph of an index that had one (a refresh after a
    save) writes the first phase first: answers read it from then on (`graph_stale`
    while the graph is solved), and `on_first_phase(report)` is told.

    `on_refreshed(report, error)`, `on_first_phase(report)` and `on_progress(progress)`
    (a stages.Progress) run on the server's thread; so does every method here. `error`
    is the last update's, if it failed."""

    def __init__(self, root: str | None, post: Post, on_refreshed, on_progress=None,
                 on_first_phase=None):
        self.root = root
        self.session = Session(root)
        self.error: str | None = None
        self.on_progress = on_progress
        self._on_refreshed = on_refreshed
        self._on_first_phase = on_first_phase
        self._first_read = False  # the running update's first phase is what answers read
        self._builder = BuildProcess(root, post, self._received)
        self._running: list[Callable[[], None]] | None = None  # waiters of the running one
        self._next: tuple[bool, list] | None = None  # (graph, waiters) of a queued one

    def start(self, graph: bool = True) -> None:
        """Open the index as it is on disk, and bring it up to date in the background."""
        try:
            self.session.open_as_is()
        except JaxmapError as error:  # a root that does not exist: the update says so too
            del error
        self.refresh(graph=graph)

    def index(self) -> Index | None:
        """The index answers come from; None until the first one is built."""
        return self.session.current()

    @property
    def updating(self) -> bool:
        return self._running is not None

    @property
    def stale(self) -> bool:
        """Whether an update runs while answers come from the index before it."""
        return self.updating and not self._first_read and self.index() is not None

    @property
    def graph_stale(self) -> bool:
        """Whether answers read the running update's first phase, while its call graph
        (calls, binds, tests) is the index's before it."""
        return self.updating and self._first_read

    def refresh(self, graph: bool = True, then: Callable[[], None] | None = None) -> None:
        """Update the index in the background (the indexer finds by stat what changed
        on disk); `then` runs once an update that started after this call has ended."""
        waiters = [then] if then else []
        if self._running is not None:
            old_graph, old_waiters = self._next or (False, [])
            self._next = (graph or old_graph, old_waiters + waiters)
            return
        self._running = waiters
        self._builder.request(graph)

    def _received(self, message: dict) -> None:
        if "progress" in message:
            if self.on_progress is not None:
                from jaxmap.indexing.stages import Progress

                self.on_progress(Progress(*message["progress"]))
        elif "first" in message:
            self._first_phase(_report(message["first"]))
        elif "report" in message:
            self.refresh_index(_report(message["report"]), None)
        elif "error" in message:
            self.refresh_index(None, message["error"])

    def _first_phase(self, report) -> None:
        """The running update wrote its first phase: answers read it from now on."""
        try:
            self.session.reopen()
        except (JaxmapError, OSError):
            return  # the update's end says what failed
        self._first_read = True
        if self._on_first_phase is not None:
            self._on_first_phase(report)

    def refresh_index(self, report, error: str | None) -> None:
        """An update ended: open the index it wrote, tell the server, run its waiters,
        and start the update asked for meanwhile."""
        if error is None:
            try:
                self.session.reopen()
            except (JaxmapError, OSError) as failed:
                report, error = None, describe(failed, debug_hint=False)
        self.error = error
        self._first_read = False
        waiters, self._running = self._running or [], None
        if self._next is not None:
            (graph, queued), self._next = self._next, None
            self.refresh(graph=graph)
            self._running = queued
        self._on_refreshed(report, error)
        for waiter in waiters:
            waiter()

    def close(self) -> None:
        self._builder.close()
        self.session.close()


def _report(fields: dict | None):
    """The indexer's report from its JSON form (None: the index was current)."""
    if fields is None:
        return None
    from jaxmap.indexing.indexer import IndexReport

    values: dict = {k: tuple(map(tuple, v)) if isinstance(v, list) else v
                    for k, v in fields.items()}
    return IndexReport(**values)

"""`python -m jaxmap.indexing.builder [ROOT]`: a server's build process (the server's
side is jaxmap/served.py).

A fresh, single-threaded process, so that the indexer may fork its helpers safely.
It reads one request a line on stdin, `{"graph": bool}`, and answers each with JSON
lines on stdout: `{"progress": [stage, done, total, percent]}` while it builds
(stages.py: one percentage for the update, which only rises), then `{"report": {...}}`
(null when the index was current) or `{"error": "one line"}`.
A request for the call graph of an index that has one (a refresh after a save) is
answered in two steps where files changed: the first phase (definitions, primitives,
rules) is written and told as `{"first": {...}}` within a fraction of a second, then
the call graph is solved again (from the process's last solve, where it has one: only
what the edit reaches; flow/update.py) and the report follows. (An index built from nothing
is built in one step: its first phase alone would leave out what the graph reads.)
Once it has answered that an index with a call graph is current, it solves that call
graph again, keeping the solve, before it reads the next request (`warm`): the first
save after a server starts is then solved again too. It ends when stdin closes.
"""

from __future__ import annotations

import json
import os
import sys
import time

from jaxmap.errors import describe

_PROGRESS_EVERY_S = 0.2
_NICENESS = 10


def update(root: str | None, graph: bool, progress, early=None):
    """The one place a server's index is brought up to date, on start and after a save:
    the indexer finds by stat what changed, and a file whose code only moved costs only
    itself (moves.py). The indexer's report, or None when nothing changed. With the
    call graph asked of an index that has one, `early(report)` is told as soon as the
    first phase is written, where files changed and the old graph carried over (its
    rows renumbered, stale); the graph is solved after."""
    from jaxmap.indexing import indexer

    if graph and early is not None and indexer.graph_kept(root):
        first = indexer.ensure_index(root, progress=progress)[1]
        if first is not None:
            if indexer.graph_kept(root):
                early(first)
            indexer.ensure_index(root, progress=progress, graph=True)
            return first
    return indexer.ensure_index(root, progress=progress, graph=graph)[1]


def answer(root: str | None, request: dict, send) -> None:
    """Run one request, sending its progress, its first phase where it comes early, and
    its outcome."""
    from jaxmap.indexing.stages import Stages

    graph, last = bool(request.get("graph")), [0.0]
    stages = Stages(graph)

    def progress(done: int, total: int, _working) -> None:
        told, now = stages.read(done, total), time.monotonic()  # every count read
        if now - last[0] >= _PROGRESS_EVERY_S or done == total:
            last[0] = now
            send({"progress": list(told)})

    try:
        report = update(root, graph, progress,
                        lambda first: send({"first": first._asdict()}))
    except Exception as error:  # noqa: BLE001 - the server shows one line, never a traceback
        send({"error": describe(error, debug_hint=False)})
        return
    send({"report": None if report is None else report._asdict()})
    if graph and report is None:
        warm(root)


def warm(root: str | None) -> None:
    """With the call graph current and no solve kept (the process has just started on
    an index built before), solve it again now, answered already, so that the first
    save is solved again from it rather than in full. A failure here is the next
    build's to meet and tell."""
    from jaxmap.flow.graph import solve_kept
    from jaxmap.indexing import indexer

    if not solve_kept():
        try:
            indexer.solve_as_indexed(root)
        except Exception:  # noqa: BLE001, S110 - nothing asked for it: the next build tells
            pass


def main(argv: list[str]) -> int:
    """Serve requests until stdin closes, at a lower priority than the server: on a
    busy machine the editor's answers come first. Each solve of the call graph is kept
    for the next to start from (flow/graph.py `keep_solves`)."""
    from jaxmap.flow.graph import keep_solves

    if hasattr(os, "nice"):
        os.nice(_NICENESS)
    keep_solves()
    root = argv[0] if argv and argv[0] else None
    out = sys.stdout

    def send(message: dict) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            send({"error": "jaxmap: internal error: an unreadable build request"})
            continue
        answer(root, request, send)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (KeyboardInterrupt, BrokenPipeError):
        sys.exit(1)

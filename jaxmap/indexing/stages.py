"""A build's stages, read off the counts the indexer tells its progress callback.

The indexer counts each stage from nought, `progress(done, total, working)`: the files
parsed (the changed ones, then those read again for the call graph: one stage), then,
for the call graph only, nought of nought, then the call sites read, then the call
graph's modules. A server shows one update as one progress bar (`Stages`), which must
never go back where a count starts again.
"""

from __future__ import annotations

from typing import NamedTuple

PARSING, CALL_SITES, CALL_GRAPH = range(3)


class Progress(NamedTuple):
    """Where a build is: its stage, that stage's count, and the percentage of the
    whole build done, which never goes down."""

    stage: int
    done: int
    total: int
    percent: int


class Stages:
    """One update's counts, read as stages (each an equal share of its percentage):
    the parse alone, or with `graph` the parse, the call sites and the call graph."""

    def __init__(self, graph: bool):
        self.shares = 3 if graph else 1
        self.stage, self.percent = PARSING, 0
        self._last: tuple[int, int] | None = None  # the count before, in this stage

    def read(self, done: int, total: int) -> Progress:
        if self.stage == PARSING and done == total == 0:  # the parse is over
            self.stage, self._last = CALL_SITES, None
        else:
            if self.stage > PARSING and self._last is not None and \
                    (done < self._last[0] or total != self._last[1]):
                self.stage = min(self.stage + 1, CALL_GRAPH)
            self._last = (done, total)
        within = done / total if total else 0.0
        self.percent = max(self.percent, int((self.stage + within) * 100 / self.shares))
        return Progress(self.stage, done, total, self.percent)

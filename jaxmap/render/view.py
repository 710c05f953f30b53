"""How a front end wants an answer shown: the root it came from, its jax version, and
how paths and source lines are read (root-relative, or absolute with --absolute), and
how much of a long list a JSON answer shows."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from jaxmap.render.paging import EVERYTHING, Paging


def _as_given(path: str) -> str:
    return path


def _no_source(file: str, line: int) -> str | None:
    return None


class View(NamedTuple):
    root: str
    jax_version: str | None = None
    path: Callable[[str], str] = _as_given
    source_line: Callable[[str, int], str | None] = _no_source
    paging: Paging = EVERYTHING  # how much of a long list a JSON answer shows
    # a call-graph answer's: the diagnostics of the tree's files Python's parser refuses
    # (what follows a refusal may be missing from the answer)
    unparsed: tuple[str, ...] = ()

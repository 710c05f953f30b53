"""The only place that sets up tree-sitter: the Python grammar, a parser, compiled queries."""

from __future__ import annotations

import functools
from importlib import resources
from typing import TYPE_CHECKING

import tree_sitter
import tree_sitter_python

if TYPE_CHECKING:
    from collections.abc import Sequence

    from jaxmap import skim

# Query files, run together as one query so each tree is traversed once.
QUERY_NAMES = ("structure", "statements", "imports")


@functools.cache
def language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_python.language())


@functools.cache
def parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(language())


def query_source(name: str) -> str:
    return resources.files("jaxmap.queries").joinpath(f"{name}.scm").read_text()


@functools.cache
def _combined() -> tuple[tree_sitter.Query, tuple[tuple[str, int], ...]]:
    """All query files compiled as one; maps a combined pattern index to (file, index)."""
    sources, owners = [], []
    for name in QUERY_NAMES:
        single = tree_sitter.Query(language(), query_source(name))
        owners.extend((name, i) for i in range(single.pattern_count))
        sources.append(query_source(name))
    return tree_sitter.Query(language(), "\n".join(sources)), tuple(owners)


def matches(node: tree_sitter.Node) -> list[tuple[str, int, dict]]:
    """Every query's matches over `node`, in one traversal: (query name, pattern index,
    {capture: [nodes]})."""
    combined, owners = _combined()
    return [(*owners[index], caps)
            for index, caps in tree_sitter.QueryCursor(combined).matches(node)]


def parse(source: bytes, left_out: Sequence[skim.Body] = ()) -> tree_sitter.Tree:
    """The syntax tree of `source`, where each function body in `left_out` is read as
    the single statement `0` on its last code line: the parser skips the rest, and
    every node keeps its true position (the function ends on its true last line)."""
    if not left_out:
        return parser().parse(source)
    text = bytearray(source)
    ranges, start, row = [], 0, 0
    for body in left_out:
        text[body.indent:body.end] = b"0".ljust(body.end - body.indent)
        if body.first < body.last:  # both are line starts, so every boundary is at column 0
            end_row = row + source.count(b"\n", start, body.first)
            ranges.append(tree_sitter.Range((row, 0), (end_row, 0), start, body.first))
            row, start = end_row + source.count(b"\n", body.first, body.last), body.last
    last_line = source.rfind(b"\n") + 1
    end_point = (row + source.count(b"\n", start), len(source) - last_line)
    ranges.append(tree_sitter.Range((row, 0), end_point, start, len(source)))
    reader = parser()
    reader.included_ranges = ranges
    try:
        return reader.parse(bytes(text))
    finally:
        reader.included_ranges = []

"""The only place that sets up tree-sitter: the Python grammar, a parser, compiled queries."""

from __future__ import annotations

import functools
from importlib import resources
from typing import TYPE_CHECKING

import tree_sitter
import tree_sitter_python

if TYPE_CHECKING:
    from collections.abc import Container, Sequence

    from jaxmap import skim

# Query files, run together as one query so each tree is traversed once.
QUERY_NAMES = ("structure", "statements", "imports", "blocks")
_FUNCTION, _COMPOUND = range(2)  # pattern indexes in blocks.scm


@functools.cache
def language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_python.language())


@functools.cache
def parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(language())


def warm_up() -> None:
    """Set up the parser and compile the queries now (before forking helpers)."""
    parser()
    _combined()


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


def matches(root: tree_sitter.Node, unread: Container[int] | None = None
            ) -> list[tuple[str, int, dict]]:
    """Every fact query's matches over the statements of `root` and the bodies of the
    functions it defines: (query name, pattern index, {capture: [nodes]}). A function
    whose start byte is in `unread` is not entered; without `unread`, the whole tree
    is queried, expressions and all.

    The query engine visits every node below where it starts, and most nodes are parts
    of expressions, where no pattern starts. So each block of statements is queried to
    depth 2 only (its statements, and the definition inside a decorated one), the
    blocks query (blocks.scm) leads to the blocks inside compound statements, and only
    the body of a function that is read is queried in full."""
    combined, owners = _combined()
    if unread is None or root.has_error:  # statements may hang off error nodes
        found = tree_sitter.QueryCursor(combined).matches(root)
        return [(*owners[index], caps) for index, caps in found if owners[index][0] != "blocks"]
    statements = tree_sitter.QueryCursor(combined)
    statements.set_max_start_depth(2)
    everything = tree_sitter.QueryCursor(combined)
    found, blocks = [], [root]
    while blocks:
        for index, caps in statements.matches(blocks.pop()):
            name, pattern = owners[index]
            if name != "blocks":
                found.append((name, pattern, caps))
            elif pattern == _COMPOUND:
                _inner_blocks(caps["compound"][0], blocks)
            elif caps["function"][0].start_byte not in unread:
                found += [(*owners[i], c) for i, c in everything.matches(caps["body"][0])
                          if owners[i][0] != "blocks"]
    return found


def _inner_blocks(node: tree_sitter.Node, blocks: list) -> None:
    """The blocks of a compound statement, through its clauses (`elif`, `except`, ...)."""
    for child in node.children:
        if child.type == "block":
            blocks.append(child)
        elif child.type.endswith("_clause"):
            _inner_blocks(child, blocks)


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

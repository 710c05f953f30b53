"""The only place that sets up tree-sitter: the Python grammar, a parser, compiled queries."""

from __future__ import annotations

import functools
from importlib import resources

import tree_sitter
import tree_sitter_python

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


def matches(node: tree_sitter.Node, ranges=None) -> list[tuple[str, int, dict]]:
    """Every query's matches over `node`, in one traversal: (query name, pattern index,
    {capture: [nodes]}). With `ranges` [(start_byte, end_byte)], only matches whose
    node intersects one of them; a node spanning several ranges is reported once."""
    combined, owners = _combined()
    cursor = tree_sitter.QueryCursor(combined)
    if ranges is None:
        return [(*owners[index], caps) for index, caps in cursor.matches(node)]
    found, seen = [], set()
    for start, end in ranges:
        cursor.set_byte_range(start, end)
        for index, caps in cursor.matches(node):
            key = (index, *(nodes[0].start_byte for nodes in caps.values()))
            if key not in seen:
                seen.add(key)
                found.append((*owners[index], caps))
    return found


def parse(source: bytes) -> tree_sitter.Tree:
    return parser().parse(source)


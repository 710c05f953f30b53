"""The only place that sets up tree-sitter: the Python grammar, a parser, compiled queries."""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import TYPE_CHECKING

import tree_sitter
import tree_sitter_python

if TYPE_CHECKING:
    from collections.abc import Container, Sequence

    from jaxmap.indexing import skim

# Query files, run together as one query so each tree is traversed once.
QUERY_NAMES = ("structure", "statements", "imports", "blocks")
# Kinds of the patterns in blocks.scm: where statements are, not facts.
_BLOCK_KINDS = frozenset({"function_body", "compound"})
_KIND_CAPTURE = re.compile(r"@([A-Za-z_]\w*)(?![\w.])")
_COMMENT = re.compile(r";[^\n]*")


@functools.cache
def language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_python.language())


@functools.cache
def parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(language())


def grammar_version() -> str:
    """Versions of the packages that decide what a parse yields, from the modules
    themselves where they say (importlib.metadata alone takes 10 ms to import)."""
    binding = getattr(tree_sitter, "__version__", None)
    grammar = getattr(language(), "semantic_version", None)
    if binding is None or grammar is None:  # older releases than this reads
        from importlib.metadata import version

        binding, grammar = version("tree-sitter"), version("tree-sitter-python")
    else:
        grammar = ".".join(map(str, grammar))
    return f"tree-sitter {binding}, tree-sitter-python {grammar}"


def warm_up() -> None:
    """Set up the parser and compile the queries now (before forking helpers)."""
    parser()
    _combined()


def query_source(name: str) -> str:
    return resources.files("jaxmap.indexing.patterns").joinpath(f"{name}.scm").read_text()


@functools.cache
def _combined() -> tuple[tree_sitter.Query, tuple[str, ...]]:
    """All query files compiled as one, and the kind of each of its patterns: the name
    of its one capture without a dot (`@function`, beside `@function.name`)."""
    text = "\n".join(query_source(name) for name in QUERY_NAMES)
    query = tree_sitter.Query(language(), text)
    source = text.encode()
    kinds = []
    for index in range(query.pattern_count):
        pattern = source[query.start_byte_for_pattern(index):
                         query.end_byte_for_pattern(index)].decode()
        (kind,) = set(_KIND_CAPTURE.findall(_COMMENT.sub("", pattern)))
        kinds.append(kind)
    return query, tuple(kinds)


def matches(root: tree_sitter.Node, unread: Container[int] | None = None
            ) -> list[tuple[str, dict]]:
    """Every fact query's matches over the statements of `root` and the bodies of the
    functions it defines: (pattern kind, {capture: [nodes]}). A function whose start
    byte is in `unread` is not entered; without `unread`, the whole tree is queried,
    expressions and all.

    The query engine visits every node below where it starts, and most nodes are parts
    of expressions, where no pattern starts. So each block of statements is queried to
    depth 2 only (its statements, and the definition inside a decorated one), the
    blocks query (blocks.scm) leads to the blocks inside compound statements, and only
    the body of a function that is read is queried in full."""
    combined, kinds = _combined()
    if unread is None or root.has_error:  # statements may hang off error nodes
        found = tree_sitter.QueryCursor(combined).matches(root)
        return [(kinds[index], caps) for index, caps in found
                if kinds[index] not in _BLOCK_KINDS]
    statements = tree_sitter.QueryCursor(combined)
    statements.set_max_start_depth(2)
    everything = tree_sitter.QueryCursor(combined)
    facts: list[tuple[str, dict]] = []
    blocks = [root]
    while blocks:
        for index, caps in statements.matches(blocks.pop()):
            kind = kinds[index]
            if kind not in _BLOCK_KINDS:
                facts.append((kind, caps))
            elif kind == "compound":
                _inner_blocks(caps["compound"][0], blocks)
            elif caps["function_body"][0].start_byte not in unread:
                body = caps["function_body.body"][0]
                facts += [(kinds[i], c) for i, c in everything.matches(body)
                          if kinds[i] not in _BLOCK_KINDS]
    return facts


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

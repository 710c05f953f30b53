"""The tests linked to a primitive, ranked by how directly they reach it, each with its
shortest call chain to the `.bind`: a test that names the primitive (its source says
`psum_p`) or binds it first (depth 0), then one that calls a function that binds it
(1), then further; last, marked indirect, a test whose chain passes a function along
as a value (`_reduction(..., parallel_reduce=lax.psum)`: the source line of that link
names the function without calling it), or that the call graph does not reach."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from jaxmap.commands.callgraph import _chain, _root, _source_lines, _walk

if TYPE_CHECKING:
    from jaxmap.models import Primitive
    from jaxmap.store.read import Index


class TestLink(NamedTuple):
    name: str
    file: str
    line: int
    depth: int | None  # links from the test to the `.bind` (0: it names or binds it)
    chain: tuple[str, ...]  # the test, ..., `prim.bind`; () where none is followed
    direct: bool  # every link a call (False: a function passed as a value, or no chain)


def ranked_tests(index: Index, prim: Primitive) -> tuple[TestLink, ...]:
    """The tests of primitive `prim` (a models.Primitive of `index`), best first."""
    if not prim.tests:
        return ()
    pids = _primitive_ids(index, prim)
    bind = f"{prim.variable or prim.name}.bind"
    ends: dict[int, tuple[str, ...]] = {}
    for binder, _pid, _line, via in index.binders(pids):
        ends.setdefault(binder, (via, bind) if via else (bind,))
    parent, levels, lines = _walk(index.callers, list(ends), None, bodies=False)
    where = index.definitions_at({t.loc.file for t in prim.tests})
    unknown: tuple[int | None, int | None] = (None, None)  # no function of the index there
    ids = {t: where.get((t.loc.file, t.loc.line), unknown) for t in prim.tests}
    reached = {did for did, _end in ids.values() if did in levels}
    nodes = index.nodes(reached | set(parent.values()) | set(ends))
    source = _Source(index, prim.variable or prim.name)
    links = []
    for test in prim.tests:
        did, end = ids[test]
        link: tuple[int | None, tuple[str, ...], bool]
        if source.names_primitive(test, end):
            link = (0, (test.name, prim.variable or prim.name), True)
        elif did in reached:
            chain = _chain(did, parent, nodes) + ends[_root(did, parent)]
            link = (levels[did], (test.name, *chain[1:]),
                    source.all_calls(did, parent, lines, nodes))
        else:
            link = (None, (), False)
        links.append(TestLink(test.name, test.loc.file, test.loc.line, *link))
    links.sort(key=lambda link: (not link.direct, link.depth is None, link.depth or 0,
                                 link.file, link.line))
    return tuple(links)


_LISTED_DEPTH = 2  # a top level handing `lax.asin` (1) or `jnp.arcsin` (2)


def listing_files(index: Index, prim: Primitive) -> tuple[str, ...]:
    """The files of tests whose top level hands on or calls what binds `prim`, or what
    calls that (`_LISTED_DEPTH`), by name: a list of the operations a parameterised
    test runs (`grad_test_spec(lax.asin, ...)` at module level, the test calling its
    parameter `op`), which no test function reaches through its own calls. Deeper, a
    top level's calls reach most primitives (jnp.array, config) and tell nothing."""
    pids = _primitive_ids(index, prim)
    binders = list(dict.fromkeys(binder for binder, *_ in index.binders(pids)))
    _parent, levels, _lines = _walk(index.callers, binders, _LISTED_DEPTH, bodies=True)
    with_tests = index.test_files()
    return tuple(sorted({node.file for node in index.nodes(levels).values()
                         if node.kind == "module" and node.file in with_tests}))


def _primitive_ids(index: Index, prim: Primitive) -> list[int]:
    """The index's ids of `prim`: those of its name held in its variable."""
    return [pid for pid, name, variable in index.primitive_ids(prim.name, prim.name)
            if (name, variable) == (prim.name, prim.variable)]


class _Source:
    """What the tree's source says of a chain: whether a test names the primitive's
    variable, whether each link calls its function (files read once)."""

    def __init__(self, index, variable: str):
        self.index = index
        self.files: dict[str, list[str]] = {}
        self.variable = re.compile(rf"(?<![\w]){re.escape(variable)}\b")

    def names_primitive(self, test, end: int | None) -> bool:
        lines = self._lines(test.loc.file)[test.loc.line - 1:end or test.loc.line]
        return any(self.variable.search(line) for line in lines)

    def all_calls(self, node: int, parent: dict, lines: dict, nodes: dict) -> bool:
        """Whether each link from `node` up its parents is a call (or a decorator) of
        the next function, not the function named as a value."""
        while node in parent:
            target = nodes[parent[node]].qualname.rpartition(".")[2]
            text = self._lines(nodes[node].file)[lines[node] - 1:lines[node]]
            called = re.compile(rf"(?:@[\w.]*\b{re.escape(target)}\b|\b{re.escape(target)}"
                                rf"\s*\()")
            if text and not called.search(text[0]):
                return False
            node = parent[node]
        return True

    def _lines(self, file: str) -> list[str]:
        if file not in self.files:
            self.files[file] = _source_lines(self.index, file)
        return self.files[file]

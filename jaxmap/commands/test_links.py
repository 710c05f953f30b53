"""The tests linked to a primitive, ranked by how directly they reach it, each with its
shortest call chain to the `.bind`: a test that names the primitive (its source says
`psum_p`) or binds it first (depth 0), then one that calls a function that binds it
(1), then further; a test the call graph does not reach (linked by the build through a
value it passes along) last, marked indirect."""

from __future__ import annotations

import re
from typing import NamedTuple

from jaxmap.commands.callgraph import _chain, _root, _source_lines, _walk

_INDIRECT = 1 << 30  # the depth of a test the call graph does not reach


class TestLink(NamedTuple):
    name: str
    file: str
    line: int
    depth: int  # calls from the test to the `.bind`; 0: it names or binds the primitive
    chain: tuple[str, ...]  # the test, ..., `prim.bind`; () where none is followed
    direct: bool  # reached through calls (False: only through a value passed along)


def ranked_tests(index, prim) -> tuple[TestLink, ...]:
    """The tests of primitive `prim` (a models.Primitive of `index`), best first."""
    if not prim.tests:
        return ()
    pids = [pid for pid, name, variable in index.primitive_ids(prim.name, prim.name)
            if (name, variable) == (prim.name, prim.variable)]
    bind = f"{prim.variable or prim.name}.bind"
    ends = {}
    for did, _pid, _line, via in index.binders(pids):
        ends.setdefault(did, (via, bind) if via else (bind,))
    parent, levels, _ = _walk(index.callers, list(ends), None, bodies=False)
    where = index.definitions_at({t.loc.file for t in prim.tests})
    ids = {t: where.get((t.loc.file, t.loc.line), (None, None)) for t in prim.tests}
    reached = {did for did, _end in ids.values() if did in levels}
    nodes = index.nodes(reached | set(parent.values()) | set(ends))
    names = _Names(index, prim.variable or prim.name)
    links = []
    for test in prim.tests:
        did, end = ids[test]
        if names.in_test(test, end):
            link = (0, (test.name, prim.variable or prim.name), True)
        elif did in reached:
            chain = _chain(did, parent, nodes) + ends[_root(did, parent)]
            link = (levels[did], (test.name, *chain[1:]), True)
        else:
            link = (_INDIRECT, (), False)
        links.append(TestLink(test.name, test.loc.file, test.loc.line, *link))
    links.sort(key=lambda link: (link.depth, link.file, link.line))
    return tuple(links)


class _Names:
    """Whether a test's source names the primitive's variable (files read once)."""

    def __init__(self, index, variable: str):
        self.index, self.files = index, {}
        self.pattern = re.compile(rf"(?<![\w]){re.escape(variable)}\b")

    def in_test(self, test, end: int | None) -> bool:
        if test.loc.file not in self.files:
            self.files[test.loc.file] = _source_lines(self.index, test.loc.file)
        lines = self.files[test.loc.file][test.loc.line - 1:end or test.loc.line]
        return any(self.pattern.search(line) for line in lines)

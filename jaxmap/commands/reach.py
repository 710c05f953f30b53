"""Which public functions reach a primitive, and which primitives a change can have
moved that for: the reach half of a review (review.py).

A review asks this for up to hundreds of primitives on each side, so rather than one
`binds` walk in SQL each (0.6 s on a checkout), the call graph's reverse edges are read
once into a `Reach` and walked in memory. The edges are the ones `binds` follows
(calls and handed functions, and the impl and lowering rules a bind runs), read
through callgraph's own steps; `steps_up` is the one switch point where a narrower
default of `binds` (trace time only, say) is to be adopted.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from jaxmap.store.read import Index

_FOLLOWED = ("resolved", "handed")  # call statuses a walk down follows


class ReachChange(NamedTuple):
    """A public function that started or stopped reaching `primitive`, or whose
    shortest chain to it changed; `chain` is HEAD's (BASE's when it stopped)."""

    primitive: str
    function: str
    change: str  # started, stopped, chain
    chain: tuple[str, ...]
    old_chain: tuple[str, ...] = ()


class Chain(NamedTuple):
    """A shortest chain from a public function to a bind: `steps`, the definitions and
    the bind alone (what two sides compare: which rule of a bind leads on is not
    always told apart), and `shown`, with the words of each rule step too."""

    steps: tuple[str, ...]
    shown: tuple[str, ...]


class Reach:
    """The public functions that reach each primitive of one index, with the shortest
    chain (labels, the function first, as `binds` prints it); ties between chains of
    one length go to the smaller labels, so that both sides of a review agree."""

    def __init__(self, index: Index):
        self._index = index
        ids = [row[0] for row in index.spans()]
        nodes = index.nodes(ids)
        self._labels = {did: node.label for did, node in nodes.items()}
        self._exported = {did: {path.rpartition(".")[0] for path in node.public}
                          for did, node in nodes.items() if node.public}
        self._public = set(self._exported)
        hops: dict[tuple[int, int], str] = {}
        steps = steps_up(index, ids, hops)
        self._hops = hops
        callers: dict[int, set[int]] = defaultdict(set)
        for caller, callee, _line, is_function in steps:
            if is_function and caller in self._labels:
                callers[callee].add(caller)
        self._callers = {callee: sorted(found, key=self._labels.__getitem__)
                         for callee, found in callers.items()}

    def public(self, primitive: str) -> dict[str, Chain]:
        """Public function -> its chain to a bind of `primitive` (a name string or
        variable; none if the tree has no such primitive)."""
        from jaxmap.commands.lookup import spellings

        prims = self._index.primitive_ids(*spellings(primitive))
        ends = {pid: f"{variable or name}.bind" for pid, name, variable in prims}
        start: dict[int, str] = {}
        for did, pid, _line, via in self._index.binders(ends):
            if did in self._labels:
                start.setdefault(did, f"{via} -> {ends[pid]}" if via else ends[pid])
        return self._walk(start)

    def touched(self, files: list[str]) -> set[str]:
        """The primitives whose reach an edit of `files` may change: those defined or
        given a rule there, and those bound by what the definitions there, or the
        definitions their modules export, call at any depth (through the rules a bind
        runs)."""
        from jaxmap.commands.callgraph import RUN_AT_BIND

        index = self._index
        found = {prim.name or prim.variable for file in files
                 for prim in index.primitives_in_file(file)}
        found |= {prim for file in files for prim, _rule in index.rules_registered_in(file)}
        modules = {_module(file) for file in files}
        seen = {did for did, _end in index.definitions_at(files).values()}
        seen |= {did for did, exported in self._exported.items() if exported & modules}
        frontier, bound = list(seen), set()
        while frontier:
            bound |= {pid for _did, pid, _line, _via in index.bound_by(frontier)}
            step = {callee for _caller, callee, _text, status, _line
                    in index.callees(frontier) if callee is not None and status in _FOLLOWED}
            step |= {row[1] for row in index.rules_bound_by(frontier, RUN_AT_BIND)}
            frontier = list(step - seen)
            seen |= step
        return found | {name or variable
                        for _pid, name, variable in index.primitive_labels(bound)}

    def _walk(self, start: dict[int, str]) -> dict[str, Chain]:
        parent: dict[int, int | None] = {did: None for did in start}
        frontier = sorted(start, key=self._labels.__getitem__)
        while frontier:
            nxt = []
            for did in frontier:
                for caller in self._callers.get(did, ()):
                    if caller not in parent:
                        parent[caller] = did
                        nxt.append(caller)
            frontier = nxt
        found: dict[str, Chain] = {}
        for did in self._public.intersection(parent):
            label = self._labels[did]
            chain = self._chain(did, parent, start)
            if label not in found or chain.steps < found[label].steps:
                found[label] = chain
        return found

    def _chain(self, did: int, parent: dict, start: dict[int, str]) -> Chain:
        steps, shown = [], []
        while True:
            steps.append(self._labels[did])
            shown.append(self._labels[did])
            step = parent[did]
            if step is None:
                return Chain((*steps, start[did]), (*shown, start[did]))
            if (did, step) in self._hops:
                shown.append(self._hops[did, step])
            did = step


def steps_up(index: Index, ids: list[int], hops: dict[tuple[int, int], str]) -> list[tuple]:
    """(caller, callee, line, whether the caller is a function) of each step up from
    `ids` that `binds` takes by default: calls and handed functions, and binds of a
    primitive whose impl or lowering rule is one of `ids` (noted in `hops`)."""
    from jaxmap.commands.callgraph import RUN_AT_BIND, bind_steps

    return index.callers(ids, through=False) \
        + bind_steps(index.rule_binders(ids, RUN_AT_BIND), hops)


def compare(before: Index, after: Index, files: list[str],
            primitives: set[str]) -> list[ReachChange]:
    """How the public reach differs from BASE to HEAD, for `primitives` and for each
    one an edit of `files` may have moved (`Reach.touched`, on either side)."""
    if not files and not primitives:
        return []
    was, now = Reach(before), Reach(after)
    changes = []
    for name in sorted(primitives | was.touched(files) | now.touched(files)):
        old, new = was.public(name), now.public(name)
        for function in sorted(old.keys() | new.keys()):
            if function not in old:
                changes.append(ReachChange(name, function, "started", new[function].shown))
            elif function not in new:
                changes.append(ReachChange(name, function, "stopped", old[function].shown))
            elif old[function].steps != new[function].steps:
                changes.append(ReachChange(name, function, "chain", new[function].shown,
                                           old[function].shown))
    return changes


def _module(file: str) -> str:
    """`jax/lax/__init__.py` -> `jax.lax`."""
    return file.removesuffix(".py").removesuffix("/__init__").replace("/", ".")

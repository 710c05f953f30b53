"""Which public functions reach a primitive, and which primitives a change can have
moved that for: the reach half of a review (review.py).

A review asks this for up to hundreds of primitives on each side, so rather than one
`binds` walk in SQL each (0.6 s on a checkout), the call graph's reverse edges are read
once into a `Reach` and walked in memory. The edges are the ones `binds` follows by
default, what runs when a public function is traced: calls and handed functions, not
from an interpreter (knowledge/interpreters.py) nor through the rules a bind runs,
read through callgraph's own step (`steps_up`) and walk (`trace_walk`: one call
guard deep).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, NamedTuple

from jaxmap.knowledge.interpreters import is_interpreter

if TYPE_CHECKING:
    from jaxmap.commands.callgraph import Step
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


class Reach:
    """The public functions that reach each primitive of one index, with the shortest
    chain (labels, the function first, as `binds` prints it); ties between chains of
    one length go to the smaller labels, so that both sides of a review agree."""

    def __init__(self, index: Index):
        self._index = index
        ids = [row[0] for row in index.spans()]
        nodes = index.nodes(ids)
        self._labels = {did: node.label for did, node in nodes.items()}
        self._interpreters = {did for did, node in nodes.items()
                              if is_interpreter(node.qualname)}
        self._exported = {did: {path.rpartition(".")[0] for path in node.public}
                          for did, node in nodes.items() if node.public}
        self._public = set(self._exported)
        callers: dict[int, list] = defaultdict(list)
        for step in steps_up(index, ids):
            if step.function and step.caller in self._labels:
                callers[step.callee].append(step)
        self._callers = {callee: sorted(found, key=lambda step: self._labels[step.caller])
                         for callee, found in callers.items()}

    def public(self, primitive: str) -> dict[str, tuple[str, ...]]:
        """Public function -> its chain to a bind of `primitive` (a name string or
        variable; none if the tree has no such primitive): labels, the function first,
        then the bind."""
        from jaxmap.commands.lookup import spellings

        prims = self._index.primitive_ids(*spellings(primitive))
        ends = {pid: f"{variable or name}.bind" for pid, name, variable in prims}
        start: dict[int, str] = {}
        for did, pid, _line, via in self._index.binders(ends):
            if did in self._labels and did not in self._interpreters:
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

    def _walk(self, start: dict[int, str]) -> dict[str, tuple[str, ...]]:
        from jaxmap.commands.callgraph import trace_walk

        parent, levels, _lines = trace_walk(
            lambda ids: [step for did in ids for step in self._callers.get(did, ())],
            sorted(start, key=self._labels.__getitem__))
        found: dict[str, tuple[str, ...]] = {}
        for did in self._public.intersection(levels):
            label = self._labels[did]
            chain = self._chain(did, parent, start)
            if label not in found or chain < found[label]:
                found[label] = chain
        return found

    def _chain(self, did: int, parent: dict, start: dict[int, str]) -> tuple[str, ...]:
        steps = []
        while True:
            steps.append(self._labels[did])
            if did not in parent:
                return (*steps, start[did])
            did = parent[did]


def steps_up(index: Index, ids: list[int]) -> list[Step]:
    """Each step up from `ids` that `binds` takes by default: calls and handed
    functions, not from an interpreter, with their call guards."""
    from jaxmap.commands.callgraph import trace_time_callers

    return trace_time_callers(index, ids)


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
                changes.append(ReachChange(name, function, "started", new[function]))
            elif function not in new:
                changes.append(ReachChange(name, function, "stopped", old[function]))
            elif old[function] != new[function]:
                changes.append(ReachChange(name, function, "chain", new[function],
                                           old[function]))
    return changes


def _module(file: str) -> str:
    """`jax/lax/__init__.py` -> `jax.lax`."""
    return file.removesuffix(".py").removesuffix("/__init__").replace("/", ".")

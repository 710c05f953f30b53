"""Which public functions reach a primitive, and which primitives a change can have
moved that for: the reach half of a review (review.py).

A review asks this for up to hundreds of primitives on each side, so rather than one
`binds` walk in SQL each (0.6 s on a checkout), a `Reach` keeps the call graph's reverse
edges it has read, read a walk's level at a time where no walk read them before: the
walks of a review read about 40% of a checkout's edges, so the rest costs neither the
time to read them nor the memory to hold them. The edges are the ones `binds` follows by
default, what runs when a public function is traced: calls and handed functions, not
from an interpreter (knowledge/interpreters.py) nor through the rules a bind runs,
read through callgraph's own step (`trace_time_callers`) and walk (`trace_walk`: one call
guard deep).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, NamedTuple, Sequence

from jaxmap.commands import reach_touched
from jaxmap.knowledge.interpreters import is_interpreter

if TYPE_CHECKING:
    from jaxmap.commands.callgraph import Step
    from jaxmap.store.read import Index

    Edits = Mapping[str, tuple[Sequence[int], Sequence[int]]]

_FOLLOWED = ("resolved", "handed")  # call statuses a walk down follows


class ReachChange(NamedTuple):
    """A public function that started or stopped reaching `primitive`, or whose
    shortest chain to it changed; `chain` is HEAD's (BASE's when it stopped).
    `touched`: a step of the chain (for a changed chain, a step of a call one chain
    makes and the other does not) is a definition the change reaches
    (reach_touched.py: its own lines edited, or its calls changed by them), or is made
    public by a module the change edited. One that is not is most often what the call
    graph's order-dependent solve gives where an edit moves the place it cuts a cycle."""

    primitive: str
    function: str
    change: str  # started, stopped, chain
    chain: tuple[str, ...]
    old_chain: tuple[str, ...] = ()
    touched: bool = True


class Chain(NamedTuple):
    """A public function's shortest chain to a bind: its labels (the function first,
    then the bind) and the ids of the definitions it steps through."""

    labels: tuple[str, ...]
    ids: tuple[int, ...]


class Reach:
    """The public functions that reach each primitive of one index, with the shortest
    chain (labels, the function first, as `binds` prints it); ties between chains of
    one length go to the smaller labels, so that both sides of a review agree."""

    def __init__(self, index: Index):
        self._index = index
        nodes = index.nodes(row[0] for row in index.spans())
        self._labels = {did: node.label for did, node in nodes.items()}
        self._files = {did: node.file for did, node in nodes.items()}
        self._qualnames = {did: node.qualname for did, node in nodes.items()}
        self._kinds = {did: node.kind for did, node in nodes.items()}
        self._interpreters = {did for did, node in nodes.items()
                              if is_interpreter(node.qualname)}
        self._exported = {did: {path.rpartition(".")[0] for path in node.public}
                          for did, node in nodes.items() if node.public}
        self._public = set(self._exported)
        self._callers: dict[int, list[Step]] = {}  # callee -> its steps up, read so far

    def public(self, primitive: str) -> dict[str, tuple[str, ...]]:
        """Public function -> its chain to a bind of `primitive` (a name string or
        variable; none if the tree has no such primitive): labels, the function first,
        then the bind."""
        return {function: chain.labels for function, chain in self.chains(primitive).items()}

    def chains(self, primitive: str) -> dict[str, Chain]:
        """Public function -> its chain to a bind of `primitive`, with the ids of its
        steps."""
        from jaxmap.commands.lookup import spellings

        prims = self._index.primitive_ids(*spellings(primitive))
        ends = {pid: f"{variable or name}.bind" for pid, name, variable in prims}
        start: dict[int, str] = {}
        for did, pid, _line, via in self._index.binders(ends):
            if did in self._labels and did not in self._interpreters:
                start.setdefault(did, f"{via} -> {ends[pid]}" if via else ends[pid])
        return self._walk(start)

    def graph(self) -> reach_touched.Graph:
        """The call rows of this index by qualified name, to compare with another's."""
        return reach_touched.Graph(self._index, self._qualnames, self._files)

    def touched(self, files: list[str], changed: frozenset[str] = frozenset()) -> set[str]:
        """The primitives whose reach an edit of `files` may change: those defined or
        given a rule there, and those bound by what the definitions named in `changed`
        (those whose walked calls, binds or public paths differ between the two sides:
        `changed`) call at any depth (through the rules a bind runs). A walk up from a
        primitive's binds can only come out otherwise where it meets such a
        definition, so no other primitive is walked: a change of docstrings walks
        none, where every primitive below the edited files' definitions was walked."""
        from jaxmap.commands.callgraph import RUN_AT_BIND

        index = self._index
        found = {prim.name or prim.variable for file in files
                 for prim in index.primitives_in_file(file)}
        found |= {prim for file in files for prim, _rule in index.rules_registered_in(file)}
        seen = {did for did, name in self._qualnames.items() if name in changed}
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

    def walked_rows(self) -> set[tuple]:
        """What a walk up reads of this index, by qualified names (ids differ between
        two indexes): each followed call with its guard, each binds row, and each
        definition's label, kind and public paths."""
        names = self._qualnames
        rows: set[tuple] = {("call", names.get(caller), names.get(callee), guard, fills)
                            for caller, callee, guard, fills in self._index.walked_calls()}
        rows |= {("binds", names.get(did), module, primitive, via)
                 for did, module, primitive, via in self._index.all_binds()}
        rows |= {("node", names[did], self._labels[did], self._kinds[did],
                  tuple(sorted(self._exported.get(did, ())))) for did in names}
        return rows

    def touched_steps(self, chain: Chain, names: frozenset[str], modules: set[str]
                      ) -> tuple[bool, ...]:
        """For each label of `chain`, whether its definition is one the change reaches
        (its qualified name among `names`), or made public by one of `modules`
        (theirs); the bind, last, is not."""
        return (*(self._qualnames[did] in names
                  or bool(self._exported.get(did, set()) & modules)
                  for did in chain.ids), False)

    def _walk(self, start: dict[int, str]) -> dict[str, Chain]:
        from jaxmap.commands.callgraph import trace_walk

        parent, levels, _lines = trace_walk(self._steps_up,
                                            sorted(start, key=self._labels.__getitem__))
        found: dict[str, Chain] = {}
        for did in self._public.intersection(levels):
            label = self._labels[did]
            chain = self._chain(did, parent, start)
            if label not in found or chain.labels < found[label].labels:
                found[label] = chain
        return found

    def _steps_up(self, ids: list[int]) -> list[Step]:
        """The steps up from `ids` by callers that are functions, each callee's in the
        order of its callers' labels; those of ids no walk asked for before read now.
        (None from a test's definition up to library code that does not import it: the
        call graph has no such edge, flow/calls.py.)"""
        from jaxmap.commands.callgraph import trace_time_callers

        unread = [did for did in dict.fromkeys(ids) if did not in self._callers]
        if unread:
            found: dict[int, list[Step]] = {did: [] for did in unread}
            for step in trace_time_callers(self._index, unread, self._interpreters):
                if step.function and step.caller in self._labels:
                    found[step.callee].append(step)
            for callee, steps in found.items():
                self._callers[callee] = sorted(steps, key=lambda step: self._labels[step.caller])
        return [step for did in ids for step in self._callers[did]]

    def _chain(self, did: int, parent: dict, start: dict[int, str]) -> Chain:
        ids = []
        while True:
            ids.append(did)
            if did not in parent:
                return Chain((*(self._labels[i] for i in ids), start[did]), tuple(ids))
            did = parent[did]


def compare(before: Index, after: Index, files: list[str], primitives: set[str],
            renamed: dict[str, str] | None = None, edits: Edits | None = None
            ) -> list[ReachChange]:
    """How the public reach differs from BASE to HEAD, for `primitives` and for each
    one an edit of `files` may have moved (`Reach.touched`, on either side); a
    primitive `renamed` (HEAD's name -> BASE's) is compared with its old self, its
    binds' labels aside. `edits`: file -> the lines the change removed (BASE's
    numbers) and added (HEAD's)."""
    if not files and not primitives:
        return []
    renamed = renamed or {}
    was, now = Reach(before), Reach(after)
    touch = reach_touched.reached(was.graph(), now.graph(), files, edits or {})
    changed = frozenset(_named(was.walked_rows() ^ now.walked_rows()))
    names = sorted((primitives | was.touched(files, changed) | now.touched(files, changed))
                   - set(renamed.values()) | set(renamed))
    where = touch, {_module(file) for file in files}
    # One side walked at a time: BASE's edges are let go before HEAD's are read.
    olds = [_marked(was, renamed.get(name, name), *where) for name in names]
    del was
    changes = []
    for name, old in zip(names, olds):
        new = _marked(now, name, *where)
        # A renamed primitive's `old_p.bind` and `new_p.bind` are the same step.
        compared = slice(-1) if name in renamed else slice(None)
        for function in sorted(old.keys() | new.keys()):
            if function not in old:
                chain, steps = new[function]
                changes.append(ReachChange(name, function, "started", chain,
                                           touched=any(steps)))
            elif function not in new:
                chain, steps = old[function]
                changes.append(ReachChange(name, function, "stopped", chain,
                                           touched=any(steps)))
            elif old[function][0][compared] != new[function][0][compared]:
                changes.append(ReachChange(name, function, "chain", new[function][0],
                                           old[function][0],
                                           _moved_touched(old[function], new[function])))
    return changes


def _marked(side: Reach, primitive: str, names: frozenset[str], modules: set[str]
            ) -> dict[str, tuple[tuple[str, ...], tuple[bool, ...]]]:
    """Public function -> its chain's labels, and which of them touch the change."""
    return {function: (chain.labels, side.touched_steps(chain, names, modules))
            for function, chain in side.chains(primitive).items()}


def _named(rows: set[tuple]) -> set[str]:
    """The definitions that rows of `walked_rows` name: a call's caller and callee,
    a binds row's binder, a node."""
    return {name for row in rows for name in (row[1:3] if row[0] == "call" else row[1:2])
            if name is not None}


def _moved_touched(old: tuple, new: tuple) -> bool:
    """Whether a chain that changed did so through the change: a step of a call one
    chain makes and the other does not is one the change reaches. (Steps both chains
    share around it do not count: `odeint -> ravel_pytree -> _ravel_list -> ... ->
    core.pvary` for `odeint -> _ravel_list -> ... -> core.pvary` changed in `ode.py`'s
    calls even where the change reaches a step further down that both share.)"""
    for (labels, steps), (other, _) in ((old, new), (new, old)):
        theirs = set(zip(other, other[1:]))
        if any((steps[i] or steps[i + 1]) for i, call in enumerate(zip(labels, labels[1:]))
               if call not in theirs):
            return True
    return False


def _module(file: str) -> str:
    """`jax/lax/__init__.py` -> `jax.lax`."""
    return file.removesuffix(".py").removesuffix("/__init__").replace("/", ".")

"""`jaxmap path A B`: the shortest call chains from function A to function B (or to a
`.bind` of primitive B), with the line of each call, read from the index's call and
binds tables a level at a time (breadth first from A, through functions only: calling
a class does not run its body). Of the shortest, those whose calls may all run under
the guards they meet (as `binds` walks them); only where none may, the others."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, NamedTuple

from jaxmap.commands.chains import BINDS, CALLS, edge_words
from jaxmap.errors import ArgumentError, NotFound
from jaxmap.models import RESOLVED, THROUGH

if TYPE_CHECKING:
    from jaxmap.store.read import Index

_MOST = 5  # chains listed
_DEPTH = 12  # calls followed, at most


class Step(NamedTuple):
    """One step of a chain: `caller` reaches `callee` at file:line, as `how` says
    (chains.py's words: `calls`, `hands ...`, `binds`, ...)."""

    caller: str
    callee: str
    file: str
    line: int
    how: str = "calls"


class PathAnswer(NamedTuple):
    source: tuple[str, ...]  # what A was taken to mean
    target: tuple[str, ...]  # what B was taken to mean
    chains: tuple[tuple[Step, ...], ...]  # shortest first, each from A to B
    # to a primitive: why `binds`' default answer leaves A out (callgraph.LEFT_OUT; but
    # for "private", its first chain is not how it binds when traced), or ""
    left_out: str = ""
    runs: bool = True  # False: no shortest chain's calls may all run (guards; `_chains`)
    # where no chain joins them (the front ends refuse it: render/text.py's
    # path_refusal): A and B as asked, the steps searched, what of B was left out as A
    # itself, and whether a chain joins them through calls of what a value may hold
    asked: tuple[str, str] = ("", "")
    depth: int = _DEPTH
    not_target: tuple[str, ...] = ()
    through_only: bool = False


def path(index: Index, source: str, target: str, most: int = _MOST, depth: int = _DEPTH
         ) -> PathAnswer:
    """Up to `most` shortest call chains from `source` to `target`, within `depth`
    steps (a call, or the `.bind` that ends a chain to a primitive); to a primitive,
    the chain `binds` gives for `source` first; none where no chain joins them (the
    answer says what A and B were read as); NotFound if A or B names nothing;
    ArgumentError if A is a primitive, or B names only A."""
    from jaxmap.commands.callgraph import _targets

    starts = _targets(index, source)
    _check_source(index, source, starts)
    ends, labels, finals = _ends(index, target)
    not_target: tuple[str, ...] = ()
    if not finals:  # B's functions other than A: `path jnp.cumsum cumsum` is not A to A
        not_target = tuple(label for end, label in ends.items() if end in starts)
        ends = {end: label for end, label in ends.items() if end not in starts}
        if not ends:
            raise ArgumentError(f"{source} and {target} are the same function "
                                f"({', '.join(labels)}): path joins two different ones")
        labels = tuple(ends.values())
    hops: dict[tuple[int, int], str] = {}
    calls = depth - 1 if finals else depth  # to a primitive, its `.bind` is a step
    parents = _search(index, list(starts), set(ends), calls, hops)
    reached = [end for end in ends if end in parents or end in starts]
    first, left_out = _binds_chain(index, target, starts, calls) if finals else (None, "")
    if not reached and first is None:
        values = _search(index, list(starts), set(ends), calls, {}, through=True)
        return PathAnswer(_told_apart(index, starts), labels, (), asked=(source, target),
                          depth=depth, not_target=not_target,
                          through_only=any(end in values for end in ends))
    nodes = index.nodes(set(parents) | set(starts) | set(ends)
                        | {p for options in parents.values() for p, _line in options})
    hops |= edge_words(index, {(p, end) for end, options in parents.items()
                               for p, _line in options if (p, end) not in hops}, nodes)
    chains: list[tuple[Step, ...]] = []
    callers = _GuardedCallers(index)
    # binds' chain runs where binds walks it at trace time (its default answer's walk):
    # then the shortest chains are only those that run too
    first_runs = first is not None and left_out in ("", "private")
    for runs in (True, False) if not first_runs else (True,):  # that may run; else any
        for end in reached:
            for steps in _chains(end, parents, nodes, most - len(chains), hops, callers,
                                 {frozenset()}, runs):
                chains.append(steps + finals.get(end, ()))
            if len(chains) >= most:
                break
        if chains or not reached:
            break
    chains.sort(key=len)
    if first is not None:
        chains = [first] + [c for c in chains if _names(c) != _names(first)]
    return PathAnswer(_told_apart(index, starts), labels, tuple(chains[:most]),
                      left_out if first is not None else "", runs or first_runs)


def _told_apart(index: Index, labelled: dict[int, str]) -> tuple[str, ...]:
    """The labels of `labelled`'s definitions, each once; definitions that share one (a
    module, and what its package exports under the module's name) told apart by kind
    and qualified name."""
    seen = Counter(labelled.values())
    nodes = index.nodes([i for i, label in labelled.items() if seen[label] > 1])
    told = []
    for i, label in labelled.items():
        if seen[label] > 1:
            node = nodes[i]
            label += f" ({node.kind})" if node.qualname == label \
                else f" ({node.kind} {node.qualname})"
        told.append(label)
    return tuple(told)


def _check_source(index: Index, source: str, starts: dict[int, str]) -> None:
    """ArgumentError when every definition `source` names holds a primitive
    (`cumsum_p`): a chain starts at a function, which calls; a primitive is bound."""
    from jaxmap.commands.callgraph import _is_primitive_variable

    if all(_is_primitive_variable(index, label.rpartition(".")[2])
           for label in starts.values()):
        raise ArgumentError(f"{source} is a primitive, but path's SOURCE must be a function "
                            f"(`jaxmap binds {source}` lists the functions that reach it)")


def _binds_chain(index: Index, prim: str, starts: dict[int, str], depth: int
                 ) -> tuple[tuple[Step, ...] | None, str]:
    """The chain `binds PRIM --all` gives for the first of `starts` it lists, as steps
    (None when it lists none within `depth`): `path` shows it first, so the two agree;
    and why the default answer leaves it out, if it does."""
    from jaxmap.commands.callgraph import binder_walk, chain_of, left_out

    walk = binder_walk(index, prim.removesuffix(".bind"), depth)
    start = next((i for i in starts if i in walk.far.levels or i in walk.near.levels), None)
    if start is None:
        return None, ""
    names, hows = chain_of(walk, start)
    tree, places, node = walk.tree(start), [], start
    while True:  # where each definition of the chain makes its step
        places.append((walk.nodes[node].file, tree.lines[node]))
        if node not in tree.parent:
            break
        node = tree.parent[node]
    places += [places[-1]] * (len(names) - 1 - len(places))  # a helper binding for it
    return tuple(Step(names[i], names[i + 1], *places[i], how)
                 for i, how in enumerate(hows)), left_out(walk, start)


def _names(chain: tuple[Step, ...]) -> tuple[str, ...]:
    return tuple(step.caller for step in chain[:1]) + tuple(step.callee for step in chain)


def _ends(index: Index, target: str) -> tuple[dict[int, str], tuple[str, ...], dict[int, tuple]]:
    """The ids a chain may end at, what B was taken to mean, and for a primitive (a name
    ending in `_p`, or one no function has) the `.bind` step that ends each chain from
    a function that binds it."""
    from jaxmap.commands.callgraph import _targets
    from jaxmap.commands.lookup import spellings

    name = target.removesuffix(".bind")
    prims = index.primitive_ids(*spellings(name))
    if not (prims and name.endswith("_p")):  # `psum` is jax.lax.psum, `psum_p` the primitive
        try:
            ends = _targets(index, target)
            return ends, tuple(ends.values()), {}
        except NotFound:
            if not prims and name.endswith("_p"):  # a primitive's variable, by its spelling
                from jaxmap.commands.lookup import no_primitive

                raise no_primitive(index, name) from None
            if not prims:
                raise
    bind = {pid: f"{variable or name}.bind" for pid, name, variable in prims}
    rows = index.binders(bind)
    nodes = index.nodes({did for did, _pid, _line, _via in rows})
    finals: dict[int, tuple[Step, ...]] = {}
    for did, pid, line, via in rows:
        if did in nodes and did not in finals:
            here = (nodes[did].file, line)
            finals[did] = (Step(nodes[did].label, via, *here, CALLS),
                           Step(via, bind[pid], *here, BINDS)) if via else \
                (Step(nodes[did].label, bind[pid], *here, BINDS),)
    return {did: nodes[did].label for did in finals}, tuple(sorted(set(bind.values()))), \
        finals


def _search(index: Index, start: list[int], ends: set[int], depth: int,
            hops: dict[tuple[int, int], str], through: bool = False
            ) -> dict[int, list[tuple[int, int]]]:
    """Breadth first down the calls from `start`, as `binds` follows them up: not a call
    of what a value holds (`through`: those too), and from a function that binds a primitive to the
    impl and XLA lowering rules the bind runs (noted in `hops` with the words a chain
    shows); each reached id's callers one level nearer the start, with the line of each
    call; stops at the level where an end is reached."""
    from jaxmap.commands.callgraph import RUN_AT_BIND, bind_steps

    levels = {i: 0 for i in start}
    parents: dict[int, list[tuple[int, int]]] = {}
    frontier, level = [i for i in start if i not in ends], 0
    kinds = {i: node.kind for i, node in index.nodes(start).items()}
    while frontier and level < depth:
        level += 1
        nxt = []
        steps = [(caller, callee, status, line)
                 for caller, callee, _text, status, line in index.callees(frontier)]
        steps += [(binder, rule, RESOLVED, line) for binder, rule, line, _function
                  in bind_steps(index.rules_bound_by(frontier, RUN_AT_BIND), hops)]
        for caller, callee, status, line in steps:
            if callee is None or status == THROUGH and not through \
                    or levels.get(callee, level) < level:
                continue
            if callee not in levels:
                levels[callee] = level
                nxt.append(callee)
            options = parents.setdefault(callee, [])
            if (caller, line) not in options:  # a call the index names two ways is one
                options.append((caller, line))
        if ends & set(nxt):
            break
        kinds.update((i, node.kind) for i, node in index.nodes(nxt).items())
        frontier = [i for i in nxt if kinds.get(i) == "function"]
    return parents


class _GuardedCallers:
    """The call steps up to an id (callgraph's `Step`s, with their guards), by caller
    and line of its first call, each id's read once."""

    def __init__(self, index: Index):
        self._index = index
        self._read: dict[int, dict[tuple[int, int], list]] = {}

    def __call__(self, callee: int, caller: int, line: int) -> list:
        from jaxmap.commands.callgraph import trace_time_callers

        if callee not in self._read:
            found = self._read[callee] = {}
            for row in trace_time_callers(self._index, [callee], interpreters=set()):
                found.setdefault((row.caller, row.line), []).append(row)
        return self._read[callee].get((caller, line), [])


def _chains(end: int, parents, nodes, most: int, hops: dict[tuple[int, int], str],
            callers: _GuardedCallers, guards: set[frozenset[str]], runs: bool
            ) -> list[tuple[Step, ...]]:
    """Up to `most` chains from the start to `end`, each as its steps, in the words of
    `hops` (chains.py's). A step shows the line of a call that may leave the `guards`
    `end` is under (as `binds` walks them: none at the chain's end) as they need,
    where the caller has several: not the first call, whose arguments may never take
    the guarded call after it. Where none may, with `runs` there is no chain through
    that caller (`jnp.where(c, x, y)` never takes `where`'s `nonzero` call, which needs
    both None), and without it, as past a step that is no call, the first call."""
    from jaxmap.commands.callgraph import leaving_line

    if end not in parents:
        return [()]  # the start itself binds the primitive
    found: list[tuple[Step, ...]] = []
    for caller, line in parents[end]:
        rows = callers(end, caller, line)
        left = leaving_line(rows, guards)
        if runs and left is None and rows and guards:
            continue
        step = Step(nodes[caller].label, nodes[end].label, nodes[caller].file,
                    left[0] if left else line, hops.get((caller, end), CALLS))
        for before in _chains(caller, parents, nodes, most - len(found), hops, callers,
                              left[1] if left else set(), runs):
            found.append(before + (step,))
            if len(found) >= most:
                return found
    return found

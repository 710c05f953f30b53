"""Call-graph questions, answered from the index's call and binds tables one level of
SQL per step (no graph is built, so each answer costs about a `locate`):

- `binds PRIM`: every function that reaches the primitive, with its shortest chain
  (through the impl and lowering rules of what it binds: RUN_AT_BIND);
- `callers NAME`: who calls a function, each at its first call (of a method, also
  who calls a method of its name of a base of its class, which it overrides), the registrations
  that make a rule function run (JAX calls it, no function of the tree does), and the
  calls that could not be resolved but may be to it (their text ends with its name),
  so that none means none;
- `calls NAME`: what a function calls, the primitives it binds, and what it calls
  outside the tree or could not resolve.
"""

from __future__ import annotations

import os
from functools import partial
from typing import NamedTuple

from jaxmap.commands.chains import BINDS, CALLS, edge_words, rule_words
from jaxmap.commands.overrides import dispatching, overridden
from jaxmap.commands.reading import Reading, read_primitive
from jaxmap.errors import ArgumentError, NotFound
from jaxmap.knowledge.interpreters import is_interpreter, listed_last, module_order
from jaxmap.knowledge.traces import trace_kind
from jaxmap.models import (
    EXTERNAL,
    GUARD_EQUALS,
    GUARD_NOT,
    GUARD_OR,
    HANDED,
    RESOLVED,
    THROUGH,
    UNRESOLVED,
    DefKind,
    RuleKind,
)

FUNCTION, PRIMITIVE = "function", "primitive"  # kinds of a Reached, beside two call statuses
# Rules a bind runs, which `binds` follows: a primitive bound outside any transformation
# runs its impl rule, and bound under jit its XLA lowering rule (which may trace a
# function of the tree: `mlir.lower_fun(f)`); a Pallas backend's lowering runs only in a
# kernel. JVP, transpose and batching rules run only under grad or vmap; followed, they
# would make nearly every function reach `add` or `mul`.
RUN_AT_BIND = (RuleKind.IMPL.value, RuleKind.LOWERING.value)
# Why `binds` leaves a function out of its default answer: the first reason along its
# chain (a rule another primitive's bind runs, an interpreter, a call under `if x is
# None:` that its callers pass x to, or `if m == 'word':` or `in (...)` a word it
# does not allow), else, binding it when traced, that it is private.
LEFT_OUT = ("impl_rule", "lowering_rule", "interpreter", "guarded_call", "private")


class Reached(NamedTuple):
    """One answer: a definition (or a primitive, or a call's text) `depth` steps away,
    and the chain of names from it to the question's target (or from the target to it)."""

    label: str
    kind: str  # function, class, primitive, external, unresolved
    file: str
    line: int
    depth: int
    chain: tuple[str, ...]
    public: bool = False
    # The line of the call that links it in the chain: callers and binds, its call of
    # the next definition (or its bind); calls, the previous definition's call of it.
    call_line: int | None = None
    # The file of that call where it is not `file`: for calls, a function's caller's.
    call_file: str | None = None
    through: bool = False  # its call is of what a value holds (a dispatch, a parameter)
    handed: bool = False  # it hands the function on (`jit(f)`), it does not call it there
    # callers: the base class's method whose call (at the chain's end) reaches the target,
    # which overrides it (dynamic dispatch); "" for a caller of the target itself
    dispatch: str = ""
    # binds: the words of each step of `chain` (chains.py), one fewer than its names
    steps: tuple[str, ...] = ()
    trace_time: bool = False  # binds: its chain runs when a user's call is traced
    left_out: str = ""  # binds: why the default answer leaves it out (LEFT_OUT), or ""


class Registration(NamedTuple):
    """A rule registration that makes a function run: JAX calls it as `kind` rule of
    `primitive` (registered at file:line), for `platforms` (a lowering's, as the
    registration names them; none: the default, or a kind with no platform)."""

    function: str
    kind: str
    primitive: str
    file: str
    line: int
    platforms: tuple[str, ...] = ()


class CallAnswer(NamedTuple):
    """What a call-graph question found: `targets`, what NAME was taken to mean;
    `unresolved`, how many calls the index could not name may still belong to the
    answer (a call whose text ends with the name of a function found, for binds and
    callers; an unresolved call made on the way down, for calls)."""

    query: str
    direction: str  # binds, callers, calls
    targets: tuple[str, ...]
    found: tuple[Reached, ...]
    registrations: tuple[Registration, ...] = ()  # callers: for a rule function
    unresolved: int = 0
    others: int = 0  # binds: the functions reaching it its default answer leaves out
    others_why: tuple[tuple[str, int], ...] = ()  # binds: how many of them for each LEFT_OUT
    traced: bool = False  # binds: the default answer, what binds it when traced
    chains: bool = True  # binds: text shows each function's chain, however many there are
    read_as: Reading | None = None  # binds: the primitives `query` was read as
    # callers and calls: each target that is a module's variable (`_zeros =
    # partial(full_like, ...)`, `b = lambda x: ...`), with the definitions it names
    aliases: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # callers and calls: each target with its other names, its public paths under
    # another name (`pkg.assist` of `from .util import helper as assist`) and the
    # variables that only name it (`swish = silu`)
    also: tuple[tuple[str, tuple[str, ...]], ...] = ()


class Tree(NamedTuple):
    """One walk up from the binders: for each id, the next id toward the bind
    (`parent`), its depth, the line of its call of the next (or of its bind), and the
    words of each step (chains.py)."""

    parent: dict[int, int]
    levels: dict[int, int]
    lines: dict[int, int]
    how: dict[tuple[int, int], str]


class BinderWalk(NamedTuple):
    """Who reaches a primitive's `.bind`: `near`, along calls and functions handed on
    only, not from an interpreter (what runs when a user's call is traced); `far`, also
    through the rules other primitives' binds run; `ends`, the names after each binder
    (a helper it binds through, then `p.bind`); `rule_kinds`, the kind of rule each of
    `far`'s steps from a binder to a rule its bind runs is."""

    targets: tuple[str, ...]
    near: Tree
    far: Tree
    ends: dict[int, tuple[str, ...]]
    nodes: dict
    rule_kinds: dict[tuple[int, int], str]

    def tree(self, node: int) -> Tree:
        """The walk that gives `node` its chain: the trace-time one where it reaches."""
        return self.near if node in self.near.levels else self.far


def binds(index, name: str, depth: int | None = None, public: bool = False,
          everything: bool = False, chains: bool = False) -> CallAnswer:
    """The public functions that bind primitive `name` (`psum`, `psum_p`, `lax.psum_p`)
    when traced, each with its chain and, as its depth, the steps of that chain, the
    `.bind` one of them (at most `depth`); with `everything`, every
    function that reaches it, also through the rules other primitives' binds run and
    through interpreters, the default answer first; `public`: the public API only.
    `chains`: the text shows each chain even where more than a screen of them."""
    if public and not everything:
        raise ArgumentError("--public narrows --all's answer (the default one lists public "
                            "functions only): add --all")
    walk = binder_walk(index, name, None if depth is None else depth - 1)
    found = [_reached(walk.nodes[i], len(steps), names, steps)
             ._replace(call_line=walk.tree(i).lines[i], trace_time=i in walk.near.levels,
                       left_out=left_out(walk, i))
             for i in walk.far.levels.keys() | walk.near.levels.keys() if i in walk.nodes
             for names, steps in [chain_of(walk, i)] if depth is None or len(steps) <= depth]
    found.sort(key=lambda r: (r.depth, r.label, r.file, r.line))  # whatever the set's order
    unresolved = _unnamed_callers(index, walk.nodes.values())
    first = default_answer(found)
    rest = [r for r in found if not _in_default(r)]
    listed = first if not everything else first + sorted(
        rest, key=lambda r: (not r.public, *most_direct(r)))
    if public:
        listed = [r for r in listed if r.public]
    return CallAnswer(name, "binds", walk.targets, tuple(listed), unresolved=unresolved,
                      others=len(rest) if not everything else 0,
                      others_why=_counted(rest) if not everything else (),
                      traced=not everything, chains=chains or everything,
                      read_as=read_primitive(index, name))


def default_answer(found) -> list[Reached]:
    """The answer `binds` gives by default, from any list of its Reached: the public
    functions that bind the primitive when traced, most direct first (`most_direct`)."""
    return sorted(filter(_in_default, found), key=most_direct)


def most_direct(found: Reached) -> tuple:
    """The order `binds` lists functions in: those of `jax.experimental` and the like
    after the rest; by the steps of the chain to the `.bind` (`jax.lax.psum` before
    `jax.numpy.argwhere`, whose chain goes through `jnp.sum`); then by the module a
    user imports it from (knowledge/interpreters.py's USER_MODULES), its module and
    name, then its place: a total order, so pages of one answer (`--offset`) neither
    repeat nor skip a function."""
    return (listed_last(found.label), found.depth, *module_order(found.label), found.file,
            found.line)


def _counted(left: list[Reached]) -> tuple[tuple[str, int], ...]:
    """(reason, how many) for each reason of LEFT_OUT some of `left` are left out for."""
    counts = {why: 0 for why in LEFT_OUT}
    for r in left:
        counts[r.left_out] += 1
    return tuple((why, n) for why, n in counts.items() if n)


def _in_default(found: Reached) -> bool:
    return found.public and found.trace_time


def left_out(walk: BinderWalk, node: int) -> str:
    """Why the default answer leaves `node` out (one of LEFT_OUT), or "" if it does not."""
    if node in walk.near.levels:
        return "" if walk.nodes[node].public else "private"
    parent = walk.far.parent
    while True:
        if is_interpreter(walk.nodes[node].qualname):
            return "interpreter"
        if node not in parent:
            return "guarded_call"
        kind = walk.rule_kinds.get((node, parent[node]))
        if kind:
            return f"{kind}_rule"
        node = parent[node]


def binder_walk(index, prim: str, depth: int | None = None) -> BinderWalk:
    """Up from the binders of `prim` twice: along calls and functions handed on, not
    from an interpreter nor through a call its callers' arguments never take (what runs
    at trace time: `trace_walk`); then also from a rule run at a bind
    to what binds its primitive (RUN_AT_BIND). An id the first walk reaches keeps its
    chain from it, the shortest at trace time, which may be longer than one through a
    rule."""
    from jaxmap.commands.lookup import definitions, no_primitive, spellings

    prims = index.primitive_ids(*spellings(prim))
    if not prims:
        if definitions(index, prim, {"function"}):
            raise NotFound(f"no primitive named {prim!r} in the index of {index.root}; "
                           f"it names a function, whose primitives `jaxmap locate {prim}` "
                           "lists")
        raise no_primitive(index, prim)
    variables = {pid: f"{variable or prim_name}.bind" for pid, prim_name, variable in prims}
    ends: dict[int, tuple[str, ...]] = {}
    bind_lines: dict[int, int] = {}
    for did, pid, line, via in index.binders(variables):
        ends.setdefault(did, (via, variables[pid]) if via else (variables[pid],))
        bind_lines.setdefault(did, line)
    binders = index.nodes(ends)
    traced = [did for did in ends
              if did in binders and not is_interpreter(binders[did].qualname)]
    near = trace_walk(partial(trace_time_callers, index), traced, depth)
    rules: dict[tuple[int, int], str] = {}
    kinds: dict[tuple[int, int], str] = {}
    far = _walk(partial(_callers_and_binders, index, rules, kinds), list(ends), depth,
                bodies=False)
    nodes = index.nodes(far[1].keys() | near[1].keys() | set(far[0].values()))
    words = edge_words(index, set(near[0].items()) | set(far[0].items()), nodes)
    near_tree, far_tree = (
        Tree(parent, levels, {i: lines.get(i, bind_lines.get(i, 0)) for i in levels},
             {pair: hops.get(pair) or words.get(pair, CALLS) for pair in parent.items()})
        for (parent, levels, lines), hops in ((near, {}), (far, rules)))
    return BinderWalk(tuple(sorted(set(variables.values()))), near_tree, far_tree, ends,
                      nodes, kinds)


def chain_of(walk: BinderWalk, node: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The names from `node` to the `.bind` its walk reaches, and the words of each
    step between them."""
    tree = walk.tree(node)
    names, steps = [], []
    while True:
        names.append(walk.nodes[node].label if node in walk.nodes else str(node))
        if node not in tree.parent:
            break
        steps.append(tree.how[node, tree.parent[node]])
        node = tree.parent[node]
    end = walk.ends[node]
    steps += [CALLS] * (len(end) - 1) + [BINDS]
    return tuple(names) + end, tuple(steps)


class Step(NamedTuple):
    """A step up that `binds` takes by default: `caller` calls `callee` (or hands it on)
    at `line`; `guard`, the caller's parameters that an `if` requires None for that
    call (`if x is None:`, or `x==word`); `fills`, for each different way the caller
    calls the callee, the callee's parameters that it passes surely not None (`P`), a
    word (`P:word`) or passes on (`P=Q`), where the callee has a guarded call
    (flow/guardtext.py); `lines`, the line of the first call of each way (else
    `line`)."""

    caller: int
    callee: int
    line: int
    function: bool  # the caller is a function (not a module's top level or a class body)
    guard: frozenset[str]
    fills: tuple[frozenset[str], ...]
    lines: tuple[int, ...] = ()


def trace_time_callers(index, ids: list[int], interpreters: set[int] | None = None
                       ) -> list[Step]:
    """The callers of `ids` that call them or hand them on, but not from an
    interpreter: how a user's call reaches them while it is traced. `interpreters`:
    the ids of the tree's interpreters, where the caller holds them (else read)."""
    rows = index.guarded_callers(ids)
    if interpreters is None:
        sources = index.nodes({row[0] for row in rows})
        interpreters = {did for did, node in sources.items() if is_interpreter(node.qualname)}
    return [Step(caller, callee, line, function, _names(guard),
                 tuple(map(_names, fills.split("|"))) if fills else (frozenset(),),
                 tuple(map(int, lines.split("|"))) if lines else (line,))
            for caller, callee, line, function, guard, fills, lines in rows
            if caller not in interpreters]


def _names(text: str | None) -> frozenset[str]:
    return frozenset(text.split(",")) if text else frozenset()


_UNGUARDED: frozenset[str] = frozenset()  # a guard that needs nothing: every other one allows less
# The most guards a function is walked under; past it, it is walked unguarded (sound:
# an unguarded walk takes every step a guarded one would).
MAX_GUARDS = 8


def trace_walk(step, start: list[int], depth: int | None = None
               ) -> tuple[dict[int, int], dict[int, int], dict[int, int]]:
    """`_walk` along `step(ids) -> [Step]` (functions only), under call guards: where
    F's call toward the bind is guarded by `P is None`, a step up to a caller C of F is
    taken only if its call of F may leave every P None (it passes none of them a value
    surely not None); otherwise that call never runs F's. C is then walked under its own
    guard at that call, and, where it passes P its own parameter Q as it came, under
    `Q is None` too. Each id is walked on again when it is reached under a guard that
    no guard it was reached under already allows (at most MAX_GUARDS). An id's line is
    that of the first call of the step that first reaches it which may leave a guard
    as it needs (not the first call of the callee there, which may never)."""
    levels = {i: 0 for i in start}
    parent: dict[int, int] = {}
    lines: dict[int, int] = {}
    held: dict[int, set[frozenset[str]]] = {i: {frozenset()} for i in start}
    frontier, level = list(start), 0
    while frontier and (depth is None or level < depth):
        level += 1
        nxt: dict[int, None] = {}
        for row in step(frontier):
            if not row.function:
                continue
            guards = held.setdefault(row.caller, set())
            if _UNGUARDED in guards:  # walked on unguarded already: no guard adds a step
                continue
            found = _caller_guards(row, held[row.callee])
            for guard in found:
                if any(seen <= guard for seen in guards):
                    continue
                guards.add(guard if len(guards) < MAX_GUARDS else _UNGUARDED)
                if row.caller not in levels:
                    levels[row.caller] = levels[row.callee] + 1
                    parent[row.caller], lines[row.caller] = row.callee, min(found.values())
                nxt[row.caller] = None
        frontier = list(nxt)
    return parent, levels, lines


def _caller_guards(row: Step, guards: set[frozenset[str]]) -> dict[frozenset[str], int]:
    """The guards the caller of `row` is walked under, one for each of the callee's
    `guards` that a call there may leave as it needs (None, or one of the words of
    `P==a/b`, or none of `P==!a/b`: not where `fills` say `P` is surely not None, or
    `P:other` a word they do not allow): its own
    guard at the call, and what the guard needs of its parameters the call passes on
    for the callee's guarded ones (`fills`' `P=Q`); each with the first line of a call
    that leaves it."""
    if not any(row.fills):  # no fill to check or pass on: each guard leaves the call's own
        return {row.guard: row.line} if guards else {}
    found: dict[frozenset[str], int] = {}
    for fills, line in zip(row.fills, row.lines or (row.line,) * len(row.fills)):
        surely = {fill for fill in fills if "=" not in fill and ":" not in fill}
        words = dict(fill.split(":", 1) for fill in fills if ":" in fill)
        forwards = dict(fill.split("=") for fill in fills if "=" in fill)
        for guard in guards:
            equal = [g.split(GUARD_EQUALS, 1) for g in guard if GUARD_EQUALS in g]
            if guard & surely or any(name in words and not _allows(held, words[name])
                                     for name, held in equal):
                continue  # a parameter the guard needs None, or one of words, is not
            leaves = row.guard.union(
                *({forwards[name]} for name in guard if name in forwards),
                *({f"{forwards[name]}{GUARD_EQUALS}{held}"} for name, held in equal
                  if name in forwards))
            found[leaves] = min(line, found.get(leaves, line))
    return found


def leaving_line(rows: list[Step], guards: set[frozenset[str]]
                 ) -> tuple[int, set[frozenset[str]]] | None:
    """Of one caller's calls of one callee (`rows`), under the guards the callee is
    walked under: the first line of a call that may leave one as it needs, and the
    guards the caller is then walked under; None where no call may (or no guard is
    known: `guards` empty)."""
    found: dict[frozenset[str], int] = {}
    for row in rows:
        for guard, line in _caller_guards(row, guards).items():
            found[guard] = min(line, found.get(guard, line))
    return (min(found.values()), set(found)) if found else None


def _allows(held: str, word: str) -> bool:
    """Whether a guard's words (`a/b`, or `!a/b`: none of them) allow `word`."""
    negated = held.startswith(GUARD_NOT)
    return (word in held.removeprefix(GUARD_NOT).split(GUARD_OR)) != negated


def _callers_and_binders(index, hops: dict[tuple[int, int], str],
                         kinds: dict[tuple[int, int], str], ids: list[int]
                         ) -> list[tuple[int, int, int, bool]]:
    """The callers of `ids`, as `_walk` steps them, and, for those that are rules run at
    a bind (RUN_AT_BIND), the definitions binding their primitive; each such step is
    noted in `hops` with the words its chain shows, and in `kinds` with its rule's."""
    return index.callers(ids, through=False) \
        + bind_steps(index.rule_binders(ids, RUN_AT_BIND), hops, kinds)


def bind_steps(rows, hops: dict[tuple[int, int], str],
               kinds: dict[tuple[int, int], str] | None = None
               ) -> list[tuple[int, int, int, bool]]:
    """(binder, function run, line of the bind, whether the binder is a function) of
    the store's rows of rules run at binds (or of functions their partials hand them)
    that run outside a Pallas kernel (a Pallas backend's lowering runs only there),
    each step noted in `hops` with the words its chain shows (and in `kinds` with the
    kind of rule run)."""
    from jaxmap.knowledge.registrars import lowers_for_xla  # not on `locate`'s path

    steps = []
    for binder, rule, line, function, prim, kind, platform, caller in rows:
        if lowers_for_xla(platform):
            hops.setdefault((binder, rule), rule_words(prim, kind, caller))
            if kinds is not None:
                kinds.setdefault((binder, rule), kind)
            steps.append((binder, rule, line, function))
    return steps


def _unnamed_callers(index, nodes) -> int:
    """How many unresolved calls are written with the name of one of `nodes` (functions)
    as their last part: each may be one more caller, and reach what they reach."""
    leaves = {node.label.rpartition(".")[2] for node in nodes if node.kind == FUNCTION}
    return sum(1 for _caller, text in index.unresolved_calls()
               if text.rpartition(".")[2] in leaves)


def callers(index, name: str, depth: int = 1) -> CallAnswer:
    """Functions that call `name` (to `depth` steps), and module top levels and class
    bodies, each with the line of its call; then, of a method, those that call the
    methods it overrides (`dispatch`); then the unresolved calls whose text ends with
    its name; and the registrations of `name` as a rule."""
    targets = _targets(index, name)
    named = index.alias_variables(targets)
    step = _in_place_order(index, index.callers)
    parent, levels, lines = _walk(step, list(targets), depth)
    # a function `name` means calling another it means (`callers cumsum`: jnp.cumsum
    # hands lax.cumsum on), each at its first call
    inner: dict[tuple[int, int], int] = {}
    for source, target, line, _function in step(list(targets)):
        if source in targets and source != target and source not in named:
            inner.setdefault((source, target), line)
    nodes = index.nodes(set(levels))
    status = index.uniform_status(set(parent.items()) | set(inner))
    found = list(_walked(nodes, (parent, levels, lines), status, named).values())
    found += [_reached(nodes[source], 1, (nodes[source].label, nodes[target].label))._replace(
                  call_line=line, through=status.get((source, target)) == THROUGH,
                  handed=status.get((source, target)) == HANDED)
              for (source, target), line in inner.items()]
    found.sort(key=lambda r: (r.depth, r.label, r.file, r.line))
    found += _dispatched(index, step, overridden(index, targets), levels, depth)
    maybe = index.unresolved_calls_named(name.rpartition(".")[2])
    callers_of = index.nodes({caller for caller, _t, _l in maybe})
    found += sorted((Reached(text, UNRESOLVED, callers_of[caller].file, line, 1,
                             (callers_of[caller].label, text))
                     for caller, text, line in maybe
                     if caller in callers_of and caller not in targets),
                    key=lambda r: (r.file, r.line, r.label, r.chain))
    unresolved = sum(1 for r in found if r.kind == UNRESOLVED)
    registrations = _registrations(index, targets)
    if not found and not registrations:
        _refuse_a_primitive(index, name, targets)
    return CallAnswer(name, "callers", tuple(targets.values()), tuple(found),
                      registrations, unresolved=unresolved, aliases=_aliases(index, targets),
                      also=_also_named(index, targets, named))


def _dispatched(index, step, bases: dict[int, int], direct: dict[int, int],
                depth: int) -> list[Reached]:
    """The callers of the methods `bases` (each -> the target that overrides it) to
    `depth` steps, as the target's: each calls the base's method, on a value that may be
    of the target's class (overrides.dispatching: not `super().m()`). A caller of the
    target itself (`direct`: the direct walk's levels) is left out."""
    if not bases:
        return []
    calls = dispatching(index, bases)
    parent, levels, lines = _walk(
        lambda ids: [row for row in step(ids) if row[1] not in bases or row[:2] in calls],
        list(bases), depth)
    nodes = index.nodes(set(levels) | set(bases.values()))
    status = index.uniform_status(set(parent.items()))
    found = [reached._replace(chain=reached.chain + (nodes[bases[base]].label,),
                              dispatch=nodes[base].label)
             for i, reached in _walked(nodes, (parent, levels, lines), status, direct).items()
             for base in (_root(i, parent),)]
    return sorted(found, key=lambda r: (r.depth, r.label, r.file, r.line))


def _walked(nodes, walk: tuple[dict, dict, dict], status: dict, left_out) -> dict[int, Reached]:
    """Id -> the answer for each definition a callers `walk` (`_walk`'s parent, levels
    and lines) reached, but its start and those `left_out`: its chain to the start, the
    line of its call, whether a call of a value or a hand-on is on the way (`status`
    of each step)."""
    parent, levels, lines = walk
    through = _through_chains(parent, lambda i: status.get((i, parent[i])) == THROUGH)
    return {i: _reached(nodes[i], levels[i], _chain(i, parent, nodes),
                        line=lines[i] if nodes[i].kind != FUNCTION else None)._replace(
                            call_line=lines[i], through=i in through,
                            handed=status.get((i, parent[i])) == HANDED)
            for i in levels if i in nodes and levels[i] > 0 and i not in left_out}


def _refuse_a_primitive(index, name: str, targets: dict[int, str]) -> None:
    """NotFound, pointing at `binds`, when every definition `name` means holds a
    primitive (`psum_p`): `callers` and `calls` would answer a bare "none"."""
    if all(_is_primitive_variable(index, label.rpartition(".")[2])
           for label in targets.values()):
        raise NotFound(f"{name} is a primitive, which is bound, not called: "
                       f"`jaxmap binds {name}` lists what binds it, "
                       f"`jaxmap locate {name}` its rules")


def _in_place_order(index, step):
    """`step` (`_walk`'s), its rows sorted by where the callee, the caller and the call
    are, not by row or id, which an updated index numbers otherwise than a fresh one:
    so the chain each caller is reached by is the same from either."""
    def ordered(ids) -> list[tuple]:
        rows = step(ids)
        nodes = index.nodes({row[0] for row in rows} | {row[1] for row in rows})

        def place(did: int) -> tuple[str, int, str]:
            node = nodes.get(did)
            return (node.file, node.line, node.label) if node is not None else ("", 0, "")
        return sorted(rows, key=lambda row: (place(row[1]), place(row[0]), row[2]))
    return ordered


def _registrations(index, targets: dict[int, str]) -> tuple[Registration, ...]:
    """The registrations that make `targets` run as rules: those of each rule the index
    records one of them as a function of, or as the name it was written as (a module-
    level partial: `fancy_primitive_batchers[p] = _dot_general_batch_rule`), as `locate`
    shows the rule. A statement that names one (`sqrt_p = standard_unop(..., 'sqrt')`,
    a lambda rule that calls it) does not make it a rule. Sorted by place, then
    primitive, kind and function, so that two indexes of one tree agree. A Trace
    method's kind is the one its class stands for (`ad.JVPTrace.process_shard_map =
    _shard_map_jvp`: shard_map's jvp rule). One statement that registers the rule for
    several platforms (a loop over `["cpu", "tpu"]`) is one registration of them all."""
    platforms: dict[tuple[str, str, str, str, int], set[str]] = {}
    for did, kind, prim, file, line, via, platform in index.registrations(targets):
        named = platforms.setdefault((targets[did], _stands_for(kind, via), prim, file, line),
                                     set())
        if platform:
            named.add(platform)
    return tuple(Registration(*row, tuple(sorted(platforms[row]))) for row in
                 sorted(platforms, key=lambda r: (r[3], r[4], r[2], r[1], r[0])))


def _stands_for(kind: str, via: str) -> str:
    """A rule's kind as `callers` says it: a Trace method's is its class's kind."""
    stands = trace_kind(kind, via)
    return stands.value if stands is not None else kind


def _is_primitive_variable(index, name: str) -> bool:
    """Whether `name` holds a primitive (`cumsum_p`): its own statement names it, and
    so do its registrations, which it does not run as a rule."""
    return any(name == p.variable or name in p.aliases
               for p in index.primitives_named(name, name))


def _source_lines(index, file: str) -> list[str]:
    """The lines of a file of the indexed tree (none for a snapshot's)."""
    try:
        with open(os.path.join(str(index.root), file), encoding="utf-8",
                  errors="replace") as handle:
            return handle.read().split("\n")
    except OSError:
        return []


def calls(index, name: str, depth: int = 1) -> CallAnswer:
    """What `name` calls (to `depth` steps): functions of the tree, primitives bound,
    and calls outside the tree or unresolved (their text, at the call's line)."""
    targets = _targets(index, name)
    found = _descend(index, list(targets), depth)
    order = {FUNCTION: 0, "class": 0, PRIMITIVE: 1, EXTERNAL: 2, UNRESOLVED: 3}
    found.sort(key=lambda r: (r.depth, order.get(r.kind, 0), r.label))
    if not found:
        _refuse_a_primitive(index, name, targets)
    unresolved = sum(1 for r in found if r.kind == UNRESOLVED)
    return CallAnswer(name, "calls", tuple(targets.values()), tuple(found),
                      unresolved=unresolved, aliases=_aliases(index, targets),
                      also=_also_named(index, targets, index.alias_variables(targets)))


def _also_named(index, targets: dict[int, str], named: dict[int, int]
                ) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(label, its other names) of each of `targets` that has some: its public paths
    under another name, then the variables `named` (variable -> the target it names)
    under a name none of its public paths has (`_ref = ref`; `swish = silu` is
    `jax.nn.swish`)."""
    nodes = index.nodes(targets.keys() | named.keys())
    found = []
    for did, label in targets.items():
        public = nodes[did].public if did in nodes else ()
        names = {path.rpartition(".")[2] for path in public}
        others = dict.fromkeys(nodes[did].renamed if did in nodes else ())
        others.update(dict.fromkeys(sorted(
            nodes[v].qualname for v, target in named.items() if target == did and v in nodes
            and nodes[v].qualname.rpartition(".")[2] not in names | {label.rpartition(".")[2]})))
        if others:
            found.append((label, tuple(others)))
    return tuple(found)


def _aliases(index, targets: dict[int, str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(label, what it names) of each of `targets` that is a module's variable, whose
    callers are the calls of its name (a variable naming a function, `_zeros =
    partial(full_like, ...)`, is an edge to it: the function's callers list them too);
    what it names, the definitions of that edge (none for a lambda, whose own calls
    are its callees)."""
    variables = [did for did, node in index.nodes(targets).items() if node.kind == DefKind.VARIABLE]
    named: dict[int, list[int]] = {}
    for caller, callee, text, status, _line in index.callees(variables) if variables else ():
        if callee is not None and status == RESOLVED \
                and text == targets[caller].rpartition(".")[2]:
            named.setdefault(caller, []).append(callee)
    labels = index.nodes({callee for each in named.values() for callee in each})
    return tuple((targets[did], tuple(sorted(labels[callee].label for callee in named.get(
        did, ()) if callee in labels))) for did in sorted(variables, key=targets.__getitem__))


def reaches(index, definition: int) -> tuple[Reached, ...]:
    """The primitives a function reaches through any number of calls, each once, with
    its shortest chain (for `locate`)."""
    seen, found = set(), []
    for r in sorted(_descend(index, [definition], None, prims_only=True),
                    key=lambda r: (r.depth, len(r.chain), r.label)):
        if r.label not in seen:
            seen.add(r.label)
            found.append(r)
    return tuple(found)


def _descend(index, start: list[int], depth: int | None, prims_only: bool = False
             ) -> list[Reached]:
    """Breadth-first down the call edges from `start`: what each level calls and binds.
    With `prims_only` (what a function reaches), a call of what a parameter received
    (`through`) is not followed, as `binds` does not follow it up."""
    parent: dict[int, int] = {}
    levels = {i: 0 for i in start}
    lines: dict[int, int] = {}  # the line of the parent's call of each
    frontier, found, step = list(start), [], 0
    owners = index.nodes(start)
    reached_by: dict[int, set] = {}  # the statuses of the calls from the parent of each
    through: set[int] = set()  # those whose chain has a call of what a value holds
    while frontier and (depth is None or step < depth):
        step += 1
        nxt = []
        for caller, callee, text, status, line in index.callees(frontier):
            if callee is None and not prims_only:
                found.append(Reached(text, status, owners[caller].file, line, step,
                                     _chain(caller, parent, owners, down=True) + (text,),
                                     call_line=line))
            elif callee is not None and callee not in levels \
                    and not (prims_only and status == THROUGH):
                levels[callee], parent[callee], lines[callee] = step, caller, line
                reached_by[callee] = {status}
                nxt.append(callee)
            elif callee is not None and parent.get(callee) == caller:
                reached_by[callee].add(status)  # called, and handed on too: called
        found += _bound(index, frontier, step, parent, owners, through)
        # A chain with a step through a value may not be taken, at every depth below it.
        through.update(i for i in nxt if reached_by[i] == {THROUGH} or parent[i] in through)
        owners.update(index.nodes(nxt))
        frontier = [i for i in nxt if owners[i].kind == FUNCTION]  # not into a class body
    if not prims_only:
        found += [_reached(owners[i], levels[i], _chain(i, parent, owners, down=True))
                  ._replace(through=i in through,
                            handed=reached_by.get(i) == {HANDED}, call_line=lines.get(i),
                            call_file=owners[parent[i]].file)
                  for i in levels if levels[i] > 0 and i in owners]
    return found


def _bound(index, frontier, step: int, parent, owners, through: set[int]) -> list[Reached]:
    """The primitives the functions of `frontier` bind, one step below them (`through`:
    those a binder reached through a value's call may bind); a bind at one line once,
    by its most direct row (`prim.bind(...)` is also a call of `Primitive.bind`, which
    binds what its receiver holds: the same bind, one step longer)."""
    rows = sorted(index.bound_by(frontier), key=lambda row: row[3] is not None)
    prims = {pid: variable or prim_name for pid, prim_name, variable
             in index.primitive_labels({pid for _d, pid, _l, _v in rows})}
    found = []
    seen: set[tuple[int, int, int]] = set()
    for did, pid, line, via in rows:
        if (did, pid, line) in seen:
            continue
        seen.add((did, pid, line))
        owner = owners[did]
        chain = _chain(did, parent, owners, down=True) + ((via,) if via else ()) \
            + (f"{prims[pid]}.bind",)
        found.append(Reached(prims[pid], PRIMITIVE, owner.file, line, step, chain,
                             call_line=line, through=did in through))
    return found


def _targets(index, name: str) -> dict[int, str]:
    """id -> label of the definitions `name` means (conventional aliases read); a
    variable that only names one of the others (`ref = kernel.ref`) is that one."""
    from jaxmap.commands.lookup import definition_ids, suggest

    ids = definition_ids(index, name)
    named = index.alias_variables(ids) if ids else {}
    ids = [i for i in ids if named.get(i) not in ids]
    if ids:
        return {i: node.label for i, node in sorted(
            index.nodes(ids).items(), key=lambda item: (item[1].label, item[1].file,
                                                        item[1].line))}
    raise NotFound(f"no function named {name!r} in the index of {index.root}",
                   suggest(index, name))


def _through_chains(parent: dict[int, int], through_step) -> set[int]:
    """The ids whose chain up `parent` has a step `through_step(id)` says is a call of
    what a value holds: each may not be reached at all, however deep."""
    marked: dict[int, bool] = {}
    for start in parent:
        path, node = [], start
        while node in parent and node not in marked:
            path.append(node)
            node = parent[node]
        value = marked.get(node, False)
        for node in reversed(path):
            value = marked[node] = value or through_step(node)
    return {node for node, value in marked.items() if value}


def _walk(step, start: list[int], depth: int | None, bodies: bool = True
          ) -> tuple[dict[int, int], dict[int, int], dict[int, int]]:
    """Breadth-first from `start` along `step(ids) -> (source, target, line, whether
    source is a function)` rows, read backwards (target -> source): parent of each
    reached id, its depth, and the line of its call. A source that is a module's top
    level or a class body is kept only with `bodies`, and never walked past: calling
    a class does not run its body."""
    levels = {i: 0 for i in start}
    parent: dict[int, int] = {}
    lines: dict[int, int] = {}
    frontier, level = list(start), 0
    while frontier and (depth is None or level < depth):
        level += 1
        nxt = []
        for source, target, line, function in step(frontier):
            if source not in levels and (function or bodies):
                levels[source], parent[source], lines[source] = level, target, line
                if function:
                    nxt.append(source)
        frontier = nxt
    return parent, levels, lines


def _root(node: int, parent: dict[int, int]) -> int:
    while node in parent:
        node = parent[node]
    return node


def _chain(node: int, parent: dict[int, int], nodes: dict, down: bool = False,
           hops: dict[tuple[int, int], str] | None = None) -> tuple[str, ...]:
    """Labels from `node` along its parents, with the words of each step `hops` notes
    after the node it leaves; `down`: from the root to `node`."""
    labels = []
    while True:
        labels.append(nodes[node].label if node in nodes else str(node))
        if node not in parent:
            break
        if hops and (node, parent[node]) in hops:
            labels.append(hops[node, parent[node]])
        node = parent[node]
    return tuple(reversed(labels)) if down else tuple(labels)


def _reached(node, depth: int, chain: tuple[str, ...], steps: tuple[str, ...] = (),
             line: int | None = None) -> Reached:
    """The answer for a definition, at its own line unless `line` is given."""
    return Reached(node.label, node.kind, node.file, node.line if line is None else line,
                   depth, chain, bool(node.public), steps=steps)

"""The rules whose code a change edits though no registration moved: a review's
`rule functions edited` (review.py).

A rule is listed when the change edits the own lines (reach_touched.edited_places) of
a function registered for it, or of a helper: a function, no rule function itself,
whose callers (direct, in the call graph) are all rule functions. Editing it changes
what their rules do and nothing else, so each rule is listed with the rule function it
is served through (`_cumred_chlo_lowering` via `_cumred_gpu_lowering`). A function
that other code calls too is left to reach (reach.py), which follows it to the public
functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, NamedTuple, Sequence

from jaxmap.commands import diff, reach_touched
from jaxmap.knowledge.traces import trace_class

if TYPE_CHECKING:
    from jaxmap.models import Primitive
    from jaxmap.store.read import Index

Place = tuple[str, int]  # (file, first line) of a definition
Served = tuple[str, str, str | None, str, str]  # label, kind, platform, function, via


class EditedRule(NamedTuple):
    """A rule whose function, or a helper only rule functions call, the change edits,
    its registration kept: at HEAD."""

    primitive: str  # HEAD's label
    kind: str
    platform: str | None
    function: str  # the function edited
    file: str
    line: int
    trace: str | None = None  # a trace rule's Trace class (`JVPTrace`), as diff.py's
    via: str | None = None  # for a helper, the rule function that calls it


def edited_rules(after: Index, prims: list[Primitive], edits: Mapping[str, Sequence[int]],
                 changes: diff.IndexDiff) -> tuple[EditedRule, ...]:
    """The rules at HEAD whose function, or a helper only rule functions call, has its
    own lines among `edits` (file -> HEAD's lines), each once: not those of a primitive
    added, nor a rule the diff already lists."""
    places = reach_touched.edited_places(after, edits)
    listed = {(c.primitive, c.kind, c.platform) for c in changes.rules}
    label = diff.labeller(prims)
    served: dict[Place, list[Served]] = {}  # every rule function's place -> its rules shown
    for prim in prims:
        name = label(prim)
        for rule in prim.rules:
            shown = name not in changes.added and \
                (name, rule.kind.value, rule.platform) not in listed
            for function in rule.functions:
                rules = served.setdefault((function.loc.file, function.loc.line), [])
                if shown:
                    rules.append((name, rule.kind.value, rule.platform, function.name,
                                  rule.via))
    found = {EditedRule(name, kind, platform, function, file, line, trace_class(kind, via))
             for _qualname, file, line in places
             for name, kind, platform, function, via in served.get((file, line), ())}
    found |= _through_helpers(after, places, served)
    return tuple(sorted(found, key=lambda e: (e.primitive, e.kind, e.platform or "",
                                              e.function, e.via or "")))


def _through_helpers(after: Index, places: set[tuple[str, str, int]],
                     served: dict[Place, list[Served]]) -> set[EditedRule]:
    """The rules each edited function that is no rule function serves, where it has
    callers and every one is a rule function: each rule shown of each caller."""
    helpers = {(file, line): qualname for qualname, file, line in places
               if (file, line) not in served}
    ids = {did: place for place, (did, _end) in after.definitions_at(
        {file for file, _line in helpers}).items() if place in helpers}
    callers: dict[int, set[int]] = {}
    for caller, callee, _line, _function in after.callers(ids, through=False):
        if caller != callee:
            callers.setdefault(callee, set()).add(caller)
    nodes = after.nodes({caller for each in callers.values() for caller in each})
    found = set()
    for did, each in callers.items():
        through = [(nodes[c].file, nodes[c].line) for c in each if c in nodes]
        if len(through) < len(each) or not all(place in served for place in through):
            continue  # a caller that is no rule function: reach follows it
        file, line = ids[did]
        helper = helpers[file, line].rpartition(".")[2]
        found |= {EditedRule(name, kind, platform, helper, file, line,
                             trace_class(kind, via), function)
                  for place in through
                  for name, kind, platform, function, via in served[place]}
    return found

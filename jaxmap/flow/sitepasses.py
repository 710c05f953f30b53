"""A pass of the call sites (callsites.py) over every call, in this process or, for a
larger tree, in forked helpers (forked.py: `each`): this process reads the first calls
(`_READ_FIRST`), then each helper, forked for one contiguous share of the others, reads
it, in order, from the flow as it stands then.

A key's value does not depend on which calls were read before it (engine.py), so a
helper's values are this process's. What a pass leaves in the flow that later stages
read comes back with them (`_learned`): the holders it noted (counted once the pass
ends), the direct values it found (the second pass's non-empty ones are kept), the
literal containers it made (a kept value may hold one), and the tables a first reading
fills (MROs, subclasses, type aliases' tags, how returns pass parameters on, the
functions iterating an Array), merged in the calls' order, the first reading kept, as
one process keeps it. The rest of a helper's memo is the pass's own: one process drops
it too (the direct memo after the first pass, the through memo after the second).
A share's helper reads more than one process does there (it has not the shares before
it memoised), so it makes some literals one process never makes; where two literals of
one owner coincide (containers.py's `_box`), which is made first can differ (on jax
0.10.2 with two helpers, one tuple of constants: nothing the tables read).
"""

from __future__ import annotations

import os
from itertools import islice
from typing import TYPE_CHECKING

from jaxmap.flow import forked
from jaxmap.flow.recording import PASS_1, PASS_2

if TYPE_CHECKING:
    from jaxmap.flow.callsites import CallSites

_LEAST_CALLS = 2000  # fewer are read faster here than helpers fork
# Fewer jobs read the passes here: on 2 cores the helpers' forks cost about what they
# save with the cores free, and lose when other processes share them (jax 0.10.2's call
# sites 5.3-5.5 s forked against 5.5-6.1 s, but 16.6 against 5.6 s under load); on the
# 13-core TPU host the call sites' stage went from 14.0 to 12.6 s, the graph phase from
# 0.84x to 0.79-0.82x of one worker's.
_LEAST_JOBS = 4
# The share of the calls this process reads before the helpers fork: it computes the
# values nearly every share needs, which each helper would compute again (jax 0.10.2's
# second pass: each of 2 helpers forked at once spent 3.5-3.7 s of CPU, one process
# 3.8 s; after this process's first 5%, 2.2 s here, then 1.2-1.4 s in each of 2, and
# 0.3-0.6 s in each of 8).
_READ_FIRST = 0.05


def read_pass(flow: CallSites, through: bool, calls: list, told: Told, jobs: int) -> list[tuple]:
    """`flow._site_callees(*call)` of each call, in mode `through`, on `jobs` processes
    (`_READ_FIRST` of them in this one, before the others fork), from _LEAST_JOBS."""
    recording, plan = flow._recording, flow._plan
    if recording is not None or plan is not None:  # each call a root, in this process
        stage = PASS_2 if through else PASS_1
        each = []
        for call in told(calls):
            if plan is not None and plan.green(stage, call):
                each.append(plan.old.results[stage][call])
                continue
            if recording is not None:
                recording.start_root(call)
            each.append(flow._in_mode(through, flow._site_callees, *call))
            if recording is not None:
                recording.end_root()
        return each
    if jobs < _LEAST_JOBS or len(calls) < _LEAST_CALLS or os.name != "posix":
        return [flow._in_mode(through, flow._site_callees, *call) for call in told(calls)]
    first = int(len(calls) * _READ_FIRST)
    found: list[tuple] = [flow._in_mode(through, flow._site_callees, *call)
                          for call in told(calls[:first])]
    calls = calls[first:]
    count = min(len(calls), jobs)
    bounds = [len(calls) * place // count for place in range(count + 1)]

    def work(place: int) -> tuple[list, dict]:
        marks = _marks(flow)
        part = []
        for call in calls[bounds[place]:bounds[place + 1]]:
            values, site = flow._in_mode(through, flow._site_callees, *call)
            part.append((values, len(call[3][0]) - len(site[2])))
        return part, _learned(flow, marks, through)

    parts = forked.each(count, work, jobs, told.share(bounds),
                        lambda place: told.path(calls[bounds[place]]), least=1, fresh=True)
    told.done += len(calls)
    for place, (part, learned) in enumerate(parts):
        for call, (values, skipped) in zip(calls[bounds[place]:bounds[place + 1]], part):
            found.append((_interned(flow, values), _site(call, skipped)))
        _adopt(flow, learned)
    return found


def _site(call: tuple, skipped: int) -> tuple:
    """A call's site, as `_site_callees` gives it, its first `skipped` positional
    arguments left out (a partial's function), made here from the call's own texts
    (kept once, not a helper's copy of each)."""
    module, owner, _callee, (positional, keywords) = call
    return module, owner, positional[skipped:], keywords


def _tables(flow: CallSites) -> dict[str, dict]:
    """The tables a first reading fills, each once, which later stages read."""
    return {"literals": flow._literals, "alias tags": flow._alias_tags,
            "mros": flow.classes._mros, "reads": flow._bound._reads}


def _marks(flow: CallSites) -> dict:
    """How far each table (and the direct memo) is filled: a chunk sends what follows."""
    marks = {name: len(table) for name, table in _tables(flow).items()}
    marks["direct"] = len(flow._direct_memo)
    marks["subclasses"] = flow.classes._subclasses is not None
    marks["iteration"] = flow._iteration_functions is not None
    return marks


def _learned(flow: CallSites, marks: dict, through: bool) -> dict:
    """What a chunk left in a helper's flow that this process keeps (dicts keep the
    order entries came in, and a pass deletes none)."""
    learned: dict = {name: list(islice(table.items(), marks[name], None))
               for name, table in _tables(flow).items()}
    learned["holders"] = dict(flow._late_holders)
    flow._late_holders.clear()  # counted once the pass ends: sent, not read here
    if through:  # those the second pass finds empty are asked again, all sites known
        learned["direct"] = [(key, held) for key, held
                             in islice(flow._direct_memo.items(), marks["direct"], None) if held]
    if not marks["subclasses"] and flow.classes._subclasses is not None:
        learned["subclasses"] = (flow.classes._subclasses, flow.classes._of_tests)
    if not marks["iteration"] and flow._iteration_functions is not None:
        learned["iteration"] = flow._iteration_functions
    return learned


def _adopt(flow: CallSites, learned: dict) -> None:
    """A chunk's `_learned`, after those of the chunks before it: an entry of a table
    another chunk has already filled keeps the earlier one."""
    for name, table in _tables(flow).items():
        for key, value in learned[name]:
            table.setdefault(key, value)
    for box, names in learned["holders"].items():
        flow._late_holders[box] |= names
    for key, held in learned.get("direct", ()):
        flow._direct_memo.setdefault(key, _interned(flow, held))
    if "subclasses" in learned and flow.classes._subclasses is None:
        flow.classes._subclasses, flow.classes._of_tests = learned["subclasses"]
    if "iteration" in learned and flow._iteration_functions is None:
        flow._iteration_functions = learned["iteration"]


def _interned(flow: CallSites, values: frozenset) -> frozenset:
    """A value set, kept once (engine.py): a helper's copy is let go for one held."""
    return flow._sets.setdefault(values, values)


class Told:
    """The calls of the sites' two passes, each pass's handed out in order while
    `progress` is told every _EVERY of them, with the file of the one in work."""

    _EVERY = 200

    def __init__(self, progress, calls: list, modules: dict):
        self.progress, self.modules = progress, modules
        self.done, self.total = 0, 2 * len(calls)
        if progress is not None:
            progress(0, self.total, list)

    def __call__(self, calls: list):
        if self.progress is None:
            yield from calls
            return
        for i, call in enumerate(calls):
            if i % self._EVERY == 0:
                self.progress(self.done + i, self.total, lambda call=call: [self.path(call)])
            yield call
        self.done += len(calls)

    def path(self, call: tuple) -> str:
        """The file of a call."""
        return self.modules[call[0]][0]

    def share(self, bounds: list[int]):
        """`progress` for forked.each, told of the chunks of a pass (`bounds`) done."""
        if self.progress is None:
            return None
        return lambda chunks, _count, working: self.progress(
            self.done + bounds[chunks], self.total, working)

    def end(self) -> None:
        if self.progress is not None:
            self.progress(self.total, self.total, list)

"""Parameters and the call sites that hand them values, the value flow's part for
them (flow.py): `sites` reads every call of the tree once (`partial(f, a)` hands f
`a`; constructing a dataclass hands its fields), in two passes, so that no value is
computed from a part of them; a parameter holds what its sites hand it (`_argument`),
or, where parameters do not hold what call sites hand them, what the one site of a
private function hands it (`_handed_once`). A site in a test module hands nothing to a
function outside tests (`handing`): what library code holds never depends on tests.
"""

from __future__ import annotations

from collections import defaultdict

from jaxmap.flow.engine import CALLABLE, FIELDS, Engine, in_tests
from jaxmap.flow.flowvalues import BOUND, INSTANCE, KLASS, PARTIAL_OF, ordered
from jaxmap.flow.heap import release_freed
from jaxmap.flow.parsing import argument_texts, parse_text
from jaxmap.flow.recording import FINAL, PASS_1, PASS_2, ROUND_0
from jaxmap.flow.sitepasses import Told, read_pass


class CallSites(Engine):
    """The call sites of the tree's functions, and what they hand parameters."""

    def _handed_once(self, module: str, owner: str, def_name: str, index: int,
                     param: str) -> bool:
        """Whether one call site alone hands a private function's parameter a value
        (once the sites are all known): the parameter holds what that call hands it, as
        its caller's own names would, and a call through it is no other caller's choice
        (`partial(_scatter_impl, treedef=treedef)`, however often the partial is called).
        A public function (no leading underscore, or a dunder) is also called from outside
        the tree, with anything."""
        if self._sites is None or not def_name.startswith("_") or def_name.endswith("__"):
            return False
        handing = 0
        for _m, _o, positional, keywords, first in self.handing(module, owner, def_name):
            if 0 <= index - first < len(positional) \
                    or any(keyword == param for keyword, _text in keywords):
                handing += 1
                if handing > 1:
                    return False
        return handing == 1

    def handing(self, module: str, owner: str, def_name: str, tests: bool = False) -> list:
        """The sites of `sites()` that hand a function (of `owner` in `module`, or a
        class's fields: FIELDS) its arguments: those in test modules only where it is a
        test's own, or with `tests`. A test hands a library function its helpers and
        their returns (`lax.scan(f, ...)` in a test): were they what the library's
        parameters hold, library values would depend on tests, and a cycle through
        a test, cut (engine.py), would leave library values short of what library
        code alone gives them."""
        if self._recording is not None:  # (compared whole on an update)
            self._recording.read(("side", "sites", self._qual(module, owner), def_name))
        found = self.sites().get((self._qual(module, owner), def_name), [])
        if tests or in_tests(module):
            return found
        return [site for site in found if not in_tests(site[0])]

    def _argument(self, module: str, owner: str, def_name: str, index: int, param: str,
                  tests: bool = False) -> set:
        """What the call sites of a function hand its parameter `index` (named `param`);
        those in tests only to a test's own function, or with `tests` (`handing`)."""
        found: set[tuple] = set()
        for m, o, positional, keywords, first in self.handing(module, owner, def_name, tests):
            position = index - first
            named = [text for keyword, text in keywords if keyword == param]
            if named:
                found |= self._value(m, o, named[0])
            elif 0 <= position < len(positional):
                found |= self._value(m, o, positional[position])
        return found

    def sites(self, progress=None, jobs: int = 1) -> dict:
        """Function (owner, name) -> the calls that hand it arguments: (module, owner,
        positional argument texts, (keyword, text) pairs, the position of the parameter
        the first positional one binds: 1 for a bound method, more through a partial).
        `partial(f, a, k=b)` is a call of f that hands it `a` and `b`. `progress(done,
        total, working)` is told of the calls read, twice each, and which file's; with
        `jobs` above one, each pass is read in as many processes (sitepasses.py)."""
        # Built in two passes, so that no value is computed from a part of the sites:
        # what the callees are without what parameters receive (which reads no site),
        # then, with those sites known, what parameters add (the callee `fun` of a
        # higher-order function). Values the second pass computes read the first pass's
        # sites: what a function held by a parameter is handed, it does not pass on.
        if self._sites is None:
            self._building_sites = True
            recording, plan = self._recording, self._plan
            if plan is not None:
                plan.begin(ROUND_0, self)
            # Every container a store's target names is known before any is read: what
            # is stored into a container is looked for through the names that hold it.
            stores = []
            for module, owner, base, _value in self._stores:
                expr = parse_text(base)
                root = ("store", module, owner, base)
                if expr is None:
                    continue
                stores.append(root)
                if plan is not None and plan.green(ROUND_0, root):
                    continue
                if recording is not None:
                    recording.start_root(root)
                self._in_mode(False, self._eval, module, owner, expr)
                if recording is not None:
                    recording.end_root()
            self._round_ends(ROUND_0, stores, [(False, self._direct_memo)])
            if plan is not None:
                plan.begin(PASS_1, self)
            self.array_tables()  # read once, before any question: the same for all
            calls = [(module, owner, callee, argument_texts(args))
                     for module, owner, callee, args, _line in self._calls + self._decorations]
            self._calls = []  # read once: a module's calls are _by_module's too
            sites: dict[tuple, list] = defaultdict(list)
            told = Told(progress, calls, self.names.modules)
            direct = read_pass(self, False, calls, told, jobs)
            if recording is not None:
                recording.memos[PASS_1] = ({}, dict(self._direct_memo))
                recording.results[PASS_1] = dict(zip(calls, direct))
            self._round_ends(PASS_1, calls, [])
            for call, (values, site) in zip(calls, direct):
                for value in ordered(values):
                    self._add_site(sites, value, site, 0)
            self._sites = sites
            self._direct_memo.clear()  # computed without fields, which the sites give
            release_freed()
            if recording is not None:
                recording.sites[PASS_1] = {key: list(found) for key, found in sites.items()}
            if plan is not None:
                plan.begin(PASS_2, self)
            through = read_pass(self, True, calls, told, jobs)
            told.end()
            if recording is not None:
                recording.memos[PASS_2] = (dict(self._through_memo), dict(self._direct_memo))
                recording.results[PASS_2] = dict(zip(calls, through))
            for (values, site), (before, _site) in zip(through, direct):
                for value in ordered(values - before):
                    self._add_site(sites, value, site, 0)
            self._through_memo.clear()  # computed while the sites were not all known
            release_freed()
            # A direct value the second pass found empty is asked again when next
            # needed, every site known (a field reads them); those it found are kept.
            for key in [key for key, held in self._direct_memo.items() if not held]:
                del self._direct_memo[key]
            self._round_ends(PASS_2, calls, [(False, self._direct_memo)])
            self._building_sites = False
            if recording is not None:
                recording.sites[FINAL] = {key: list(found) for key, found in sites.items()}
                recording.stage = FINAL
            if plan is not None:
                plan.begin(FINAL, self)
        return self._sites

    def _round_ends(self, stage: int, roots: list, memos: list[tuple[bool, dict]]) -> None:
        """The holders a round of the sites noted count from now on (engine.py); in an
        update (update.py), those the frames of the recorded solve still read noted too,
        and the others leave `memos`."""
        if self._plan is not None:
            for box, names in self._plan.live(stage, roots, memos).items():
                self._late_holders[box] |= names
        for box, names in self._late_holders.items():
            self._holders[box] |= names
        self._late_holders.clear()
        if self._recording is not None:
            self._recording.holders[stage] = {box: set(names)
                                              for box, names in self._holders.items()}
            self._recording.stage = stage + 1 if stage < FINAL else FINAL

    def _site_callees(self, module: str, owner: str, callee: str, args: tuple
                      ) -> tuple[frozenset, tuple]:
        """What a call hands its arguments (`argument_texts`) to, as the mode evaluates
        it, and its site: (module, owner, positional argument texts, (keyword, text)
        pairs); `partial(f, a, k=b)` hands f `a` and `b`."""
        positional, keywords = args
        expr = parse_text(callee)
        if positional and callee.rpartition(".")[2] == "partial" and expr is not None \
                and self._is_partial(module, owner, expr):
            return self._value(module, owner, positional[0]), \
                (module, owner, positional[1:], keywords)
        return self.callees(module, owner, callee, self._through), \
            (module, owner, positional, keywords)

    def _add_site(self, sites: dict, value: tuple, site: tuple, first: int) -> None:
        """A call of `value` with the arguments of `site`, the first binding parameter
        `first` of what it calls."""
        if value[0] in CALLABLE:
            sites[(value[1], value[2])].append((*site, first + (value[0] == BOUND)))
        elif value[0] == KLASS:
            if self.constructor(value[1]) is None:  # a dataclass, a NamedTuple: its fields
                sites[(value[1], FIELDS)].append((*site, first))
            for v in self._attribute((INSTANCE, value[1]), "__init__"):
                if v[0] == BOUND:
                    self._add_site(sites, v, site, first)
        elif value[0] == PARTIAL_OF:
            self._add_site(sites, value[1], site, first + value[2])


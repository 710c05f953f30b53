"""A solve again after an edit, from a recorded one (recording.py): what an edit's
changed inputs reach, stage by stage, is computed again; every other key, side entry
and root keeps what it held.

The inputs an edit changes are found by comparing the two trees' flow-facts tables
entry by entry, the resolver's modules' facts attribute by attribute, and by asking the
resolver again every question the recorded solve asked. In each stage (callsites.py),
a frame is dirty where it read a changed input, a dirty frame, or (the stages that
share a memo) a frame dirty in the stage before; the memo of the stage starts with
every clean frame's value, and the roots that read nothing dirty keep their results:
a pass's call its values, a module its rows. What a stage changes that later stages
read is compared entry by entry too: the holders of each box once a round ends, the
sites of each function once a pass ends. The tables of the whole tree (subclasses,
array tables, traced, iteration, leaves, made) are computed again and compared whole:
where one differs, or a module is added or removed, or a definition's id moves, the
update gives up (`GiveUp`), and the caller solves in full. A key of a cycle is computed
again with every key of its recorded cycle, as the engine reaches them (`_compute_again`),
and a frame the edit puts on a cycle with a key being computed again is computed again
too, the keys open below it read as nothing (`_open`). Which keys form a cycle can
depend on the order keys are computed in (flow/__init__.py), and verifying a frame's
reads computes what changed among them ahead of the turn a cold solve would give it:
where such a computation reads a key open around it, the update gives up
(`read_open`): there it could join a cycle a cold solve does not make (the one way
it was seen to, on jax; no fixture shows it).
"""

from __future__ import annotations

import ast

from jaxmap.flow.flowfacts import TABLES
from jaxmap.flow.parsing import parse_text
from jaxmap.flow.recording import FINAL, PASS_1, PASS_2, ROUND_0, STAGES, Recording

# Tables that are the roots' lists (compared root by root), or that a module's rows
# alone read, taking them (implicitcalls.py): not inputs.
_ROOT_TABLES = ("_calls", "_by_module", "_raises", "_loops", "_operators")


# A stage -> the stage before it whose memo it continues (direct keys): what a frame of
# it read there counts as changed where its value did.
_CONTINUED = {PASS_1: ROUND_0, FINAL: PASS_2}


class GiveUp(Exception):
    """What the update cannot follow: solve in full."""


class Plan:
    """What a recorded solve (`old`) lets a new flow (`flow`) keep, stage by stage:
    every frame's value, where none of what it read changed (Salsa's red-green walk)."""

    def __init__(self, flow, old: Recording, changed: set[int]):
        self.flow, self.old = flow, old
        self.changed = changed  # hashes of the inputs that changed
        self.stage = ROUND_0
        self.suspects: list[set[int]] = [set() for _stage in STAGES]
        # frame -> whether its value changed, once verified (or computed again)
        self.status: list[dict[int, bool]] = [{} for _stage in STAGES]
        self.again: list[set[int]] = [set() for _stage in STAGES]  # frames computed again
        self._keys: dict[int, tuple] = {}  # suspect frame -> (through, key), this stage's
        self._recorded: dict[int, frozenset] = {}  # suspect frame -> its recorded value
        self._computing: set[int] = set()  # the frames being computed again
        self._depth = 0  # how many computations again are under way, one in another
        # the frames whose reads are being verified -> the depth their walk started at
        self._walking: dict[int, int] = {}
        # the engine's first index of the keys opened by what is computed ahead of its
        # turn, if anything is (`read_open`)
        self._ahead = -1
        self._changed_before: set[int] = set()  # frames changed in the stage continued
        # a side table's entry kept from the recorded solve -> (its table, its key)
        self._sides: dict[int, tuple[dict, object]] = {}

    def keep_sides(self, tables: dict[str, dict]) -> None:
        """The side tables' entries of the recorded solve (`tables`: tag -> this flow's
        table, filled with the recorded one's), each verified when read
        (`verify_read`): one computed anew in another stage than it first was could
        hold another value."""
        for tag, table in tables.items():
            for key in table:
                self._sides[hash(("side", tag, key))] = (table, key)

    def verify_read(self, who: tuple) -> None:
        """Before the engine reads a frame the recorded solve left it (a memoised key, a
        side entry): where what the frame read changed, it is computed again (a side
        entry let go, to be computed again now). A frame open as a cold solve would
        have it (`_open`) is computed again at once: the edit made a cycle through it
        and the keys being computed, which it joins, reading those as nothing. (A key
        of a cycle being computed again that the engine has memoised is read as is: it
        was computed anew, out of the cycle.)"""
        hashed = hash(who)
        if hashed in self._computing:
            return
        if self._open(hashed):
            self._compute_again(self.stage, hashed)
        else:
            self.verify(self.stage, hashed, read=True)

    def read_open(self, index: int) -> None:
        """The engine reads a key open at `index`: GiveUp where a computation made
        ahead of its turn (a frame its reader's recorded reads reach, not what the
        reader reads now) reads a key open around it. A cold solve computes that frame
        when something reads it; here it could join a cycle a cold solve does not
        make (which keys form a cycle can depend on the order)."""
        if index < self._ahead:
            raise GiveUp("a frame computed ahead read a key open around it")

    def _open(self, who: int) -> bool:
        """Whether a cold solve would have the frame open here: it is being computed
        again, or its reads are being verified below a computation again (which its
        reads reach); what reads it reads it as nothing, so is computed again too."""
        return who in self._computing or self._walking.get(who, self._depth) < self._depth

    def begin(self, stage: int, flow) -> None:
        """`flow` starts `stage` (callsites.py): what the stage before changed (its
        round's holders, its pass's sites) is known; the stage's memos hold every
        frame's value the recorded solve had."""
        old, memos = self.old, self.old.memos
        if stage == ROUND_0:
            self.start(ROUND_0, set())
            self.seed(ROUND_0, flow._direct_memo, False, memos[PASS_1][1])
        elif stage == PASS_1:
            self.start(PASS_1, holders_changed(old.holders[ROUND_0], flow._holders))
            self.seed(PASS_1, flow._direct_memo, False, memos[PASS_1][1])
        else:
            before = PASS_1 if stage == PASS_2 else PASS_2
            self.start(stage, holders_changed(old.holders[before], flow._holders)
                       | sites_changed(old.sites[before if stage == PASS_2 else FINAL],
                                       flow._sites))
            self.seed(stage, flow._through_memo, True, memos[stage][0])
            self.seed(stage, flow._direct_memo, False, memos[stage][1])
        self._tables_first(stage, flow)

    def _tables_first(self, stage: int, flow) -> None:
        """The tables of the whole tree that values make, computed first in the stage
        the recorded solve computed them in (holders noted in it are that round's)."""
        first = {"tables": flow.array_tables, "iteration": flow.array_iteration,
                 "leaves": lambda: flow.may_name("."), "traced": flow.traced}
        for table, made in first.items():
            if self.old.stages.get(table) == stage:
                made()

    def start(self, stage: int, more: set[int]) -> None:
        """Stage `stage` starts, `more` inputs known changed: its suspect frames are
        those that read a changed input, or a suspect frame, and so on."""
        self.stage = stage
        self.changed |= more
        for before in range(stage):  # (side entries outlive their stage: see `_let_go`)
            for who in self.suspects[before] - self.status[before].keys():
                if who in self._sides:
                    self._let_go(who)
        seeds = set(self.changed)
        # (round 0's memo is the first pass's; the final stage keeps the second pass's
        # direct values)
        continued = _CONTINUED.get(stage)
        self._changed_before = set()
        if continued is not None:
            self._changed_before = {who for who, changed in self.status[continued].items()
                                    if changed}
            seeds |= self._changed_before
            seeds |= self.suspects[continued] - self.status[continued].keys()
        self.suspects[stage] = self.old.closure_from(stage, seeds)

    def seed(self, stage: int, memo: dict, through: bool, recorded: dict) -> None:
        """Put in `memo` the values of the frames of `stage` in `recorded` (a recorded
        memo), where it has none, the suspects' to be verified when read."""
        frames, suspects = self.old.reads[stage], self.suspects[stage]
        for key, values in recorded.items():
            who = hash((through, key))
            if who in frames:
                memo.setdefault(key, values)  # (one a stage before computed anew, kept)
                if who in suspects:
                    self._keys[who] = (through, key)
                    self._recorded[who] = values

    def green(self, stage: int, root) -> bool:
        """Whether a root of the recorded solve read nothing that changed (a call of a
        pass, with the values it found then)."""
        reads = self.old.roots[stage].get(root)
        if reads is None or stage in (PASS_1, PASS_2) and root not in self.old.results[stage]:
            return False
        return not self._reads_changed(stage, reads)

    def _reads_changed(self, stage: int, reads) -> bool:
        """Whether one of `reads` changed (in order: each suspect verified, until one
        did); at once where none is a changed input, a suspect or a frame changed in
        the stage before."""
        if self.changed.isdisjoint(reads) and self.suspects[stage].isdisjoint(reads) \
                and self._changed_before.isdisjoint(reads):
            return False
        return any(self._read_changed(stage, read) for read in reads)

    def _read_changed(self, stage: int, read: int) -> bool:
        if read in self.changed:
            return True
        if read in self.suspects[stage]:
            return self.verify(stage, read)
        before = _CONTINUED.get(stage)
        if before is not None and read in self.status[before]:
            return self.status[before][read]
        return False

    def verify(self, stage: int, who: int, read: bool = False) -> bool:
        """Whether a frame's value changed: where something it read did, it is
        computed again (with its cycle) and compared. Where the engine reads it
        (`read`), what its reads' verification computes again is computed ahead of
        its turn (`read_open`)."""
        status = self.status[stage]
        if who in self.again[stage]:
            return status[who]
        if self._open(who):  # read as nothing: what reads it is computed again
            return True
        if who in status:  # (its reads being verified: a recorded cycle reads it as is)
            return status[who]
        if who not in self.suspects[stage]:
            return False
        status[who] = False  # (while its reads are verified: a cycle reads it as is)
        reads = self.old.reads[stage].get(who, ())
        self._walking[who] = self._depth
        ahead = self._ahead
        if read:
            self._ahead = self.flow._visited
        try:
            changed = self._reads_changed(stage, reads)
        finally:
            del self._walking[who]
            self._ahead = ahead
        if changed:
            self._compute_again(stage, who)
        return status[who]

    def _compute_again(self, stage: int, who: int) -> None:
        """A suspect frame computed again and compared with its recorded value (not
        with what the memo held: a stage before may have computed it anew). Where it
        was a key of a cycle, every key of that cycle is let go first, and computed
        again as the engine reaches it: an edit may take keys out of the cycle, or put
        new ones in, and a key of a cycle reads the others as nothing (engine.py). A
        key of the cycle the computation does not reach counts as changed (whatever
        reads it computes it anew). A frame that is no key (a side table's entry,
        computed again when next read) counts as changed."""
        flow, status, again = self.flow, self.status[stage], self.again[stage]
        found = self._keys.get(who)
        if found is None:  # a side entry (computed again when read) changed, or a key
            status[who] = True
            if who in self._sides:
                self._let_go(who)
            return
        if who in again:  # (with its cycle, while its own reads were verified)
            return
        components = self.old.components[stage]
        members = components.get(who, (found,))
        held = {}
        for member in members:
            hashed = hash(member)
            memo = flow._through_memo if member[0] else flow._direct_memo
            held[hashed] = member, memo, memo.pop(member[1], None)
            components.pop(hashed, None)  # (the engine records the cycle as it is now)
        self._computing.update(held)
        self._depth += 1
        try:
            flow._in_mode(found[0], compute_again, flow, found[1])
        finally:
            self._depth -= 1
            self._computing.difference_update(held)
        for hashed, (member, memo, before) in held.items():
            status[hashed] = memo.get(member[1]) != self._recorded.get(hashed, before)
            again.add(hashed)

    def _let_go(self, who: int) -> None:
        """A side entry kept from the recorded solve that may have changed is dropped,
        to be computed again when next read, and counts as a changed input from now on:
        side tables last the whole solve, so what later stages read of it is computed
        again too (a frame is verified only in the stage it was recorded in)."""
        table, key = self._sides.pop(who)
        table.pop(key, None)
        self.changed.add(who)

    def same_tree(self, ids: dict[str, int], named: set[str]) -> None:
        """GiveUp where the definitions' ids, or the names rows read as the tree's
        (classes, module-level variables, packages), differ from the recorded solve's."""
        if (ids, named) != self.old.tree:
            raise GiveUp("the definitions differ")

    def same_tables(self, tables: dict) -> None:
        """GiveUp where a table of the whole tree that values make (the Array tables,
        what JAX traces, what iterating an Array runs) differs from the recorded
        solve's: those its facts alone make are compared entry by entry first."""
        for name in ("tables", "traced", "iteration"):
            if tables[name] != self.old.tables.get(name):
                raise GiveUp(f"the tree's {name} differ")

    def live(self, stage: int, roots, memos: list[tuple[bool, dict]]) -> dict[tuple, set]:
        """Once `stage`'s roots (`roots`: the stores of round 0, the calls of a pass)
        are read: what a cold solve would have computed, the frames those roots reach,
        alone kept (a frame no root reads any more leaves the memos `memos`, its
        modes' (through's, direct's), and the recording); the holders the frames
        kept, and not computed again, noted (those computed again noted theirs)."""
        recorded, reads = self.old.roots[stage], self.old.reads[stage]
        current = {root: found for root, found in recorded.items()
                   if isinstance(root, tuple) and root[0] == "table"}
        current.update((root, recorded[root]) for root in roots if root in recorded)
        recorded.clear()
        recorded.update(current)
        found: set[int] = set()
        todo = [read for reads_of in current.values() for read in reads_of]
        while todo:
            who = todo.pop()
            if who not in found and who in reads:
                found.add(who)
                todo.extend(reads[who])
        for through, memo in memos:
            for key in [key for key in memo if hash((through, key)) in reads
                        and hash((through, key)) not in found]:
                del memo[key]
        for who in [who for who in reads if who not in found]:
            del reads[who]
        held_by = self.old.held[stage]
        for who in [who for who in held_by if who not in found]:
            del held_by[who]
        holders: dict[tuple, set] = {}
        again = self.again[stage]
        for who, held in held_by.items():
            if who not in again:
                for box, name in held:
                    holders.setdefault(box, set()).add(name)
        return holders


def compute_again(flow, key: tuple) -> frozenset:
    """A key's values, computed as the part that owns its kind computes them (the mode
    is the caller's)."""
    kind = key[0]
    if kind == "name":
        return flow._name(*key[1:])
    if kind == "global":
        return flow._cached(key, lambda: flow._global(key[1], "", key[2]))
    if kind == "member":
        return flow._cached(key, lambda: flow._member(*key[1:]))
    if kind == "returned":
        return flow._cached(key, lambda: flow._returned(key[1], key[2]))
    if kind == "annotated":
        return flow._cached(key, lambda: flow._instances_annotated(key[1], key[2]))
    if kind == "stored":
        return flow._stored(key[1])
    if kind == "array member":
        return flow._cached(key, lambda: flow._array_member(key[1]))
    if kind == "plainly array":
        return frozenset({flow._plainly_array(*key[1:])})
    if kind == "results of call":
        module, owner, value, text = key[1:]
        node = parse_text(text)
        return flow._cached(key, lambda: flow._bound.results(
            value, node, lambda arg: flow._eval(module, owner, arg)))
    if kind == "site fields":
        return flow._cached(key, lambda: flow._site_fields._read(*key[1:]).items())
    return flow._written(key)  # a literal container


def changed_inputs(old, new) -> set[int]:
    """The hashes of the inputs (recording.py) that differ between two flows' trees:
    `old`'s recorded, `new`'s not yet read. GiveUp where a module is added or removed."""
    changed: set[int] = set()
    for tag in TABLES:
        if tag in _ROOT_TABLES:
            continue
        _compare_table(changed, tag, getattr(old, tag), getattr(new, tag))
    old_names, new_names = old.names._names, new.names
    if set(old_names.modules) != set(new_names.modules):
        raise GiveUp("a module added or removed")
    for module, (_path, facts) in new_names.modules.items():
        if not _same(old_names.env_of(module), new_names.env_of(module)):
            changed.add(hash(("names", "env", module)))
        before = old_names.modules[module][1]
        if before is facts or before == facts:
            continue
        changed.add(hash(("names", "module", module)))
        changed.add(hash(("literal", module)))
        for attr in facts._fields:
            a, b = getattr(before, attr), getattr(facts, attr)
            if a == b:
                continue
            changed.add(hash(("names", "all", module, attr)))
            if isinstance(a, dict) and isinstance(b, dict):
                for key in a.keys() | b.keys():
                    if a.get(key, _MISSING) != b.get(key, _MISSING):
                        changed.add(hash(("names", module, attr, key)))
    for attr in ("stars", "imports", "top_names", "reexports"):
        a, b = getattr(old_names, attr), getattr(new_names, attr)
        for key in a.keys() | b.keys():
            if a.get(key, _MISSING) != b.get(key, _MISSING):
                changed.add(hash(("names", f"<{attr}>", key)))
    questions = old._recording.questions
    for question, answer in list(questions.items()):
        now = _answer(new_names, question)
        if not _same(now, answer):
            changed.add(hash(("names", *question)))
            questions[question] = now
    return changed


_MISSING = object()


def _compare_table(changed: set[int], tag: str, a, b) -> None:
    if isinstance(a, dict):  # (read as dicts: a recorded table's reads not recorded)
        get = dict.get
        differ = [key for key in dict.keys(a) | dict.keys(b)
                  if not _equal(get(a, key, _MISSING), get(b, key, _MISSING))]
    elif isinstance(a, set):
        differ = list(set.symmetric_difference(set(a), set(b)))
    else:
        differ = [] if _equal(list(a), list(b)) else [None]
    if differ:
        changed.add(hash(("all", tag)))
        changed.update(hash(("table", tag, key)) for key in differ)


def _equal(a, b) -> bool:
    """Whether two table entries are equal, a parsed node by what it holds and where
    (a store's subscript is one)."""
    if a == b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, ast.AST):
        return ast.dump(a, include_attributes=True) == ast.dump(b, include_attributes=True)
    return False


def _same(a, b) -> bool:
    """Whether two answers are equal; one too deep to compare (a value that holds
    itself) counts as changed."""
    try:
        return a == b
    except RecursionError:
        return False


def _answer(names, question: tuple):
    method, asked = question
    if len(asked) > 3 and asked[3] == "<env>":
        asked = (*asked[:3], names.env_of(asked[1]))
    return getattr(names, method)(*asked)


def holders_changed(before: dict, after: dict) -> set[int]:
    """The hashes of the boxes whose holders differ."""
    return {hash(("side", "holders", box)) for box in before.keys() | after.keys()
            if set(before.get(box, ())) != set(after.get(box, ()))}


def sites_changed(before: dict, after: dict) -> set[int]:
    """The hashes of the functions whose call sites differ."""
    return {hash(("side", "sites", *key)) for key in before.keys() | after.keys()
            if before.get(key, []) != after.get(key, [])}

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
update gives up (`Unchanged`), and the caller solves in full.
"""

from __future__ import annotations

import ast

from jaxmap.flow.flowfacts import TABLES
from jaxmap.flow.recording import FINAL, PASS_1, PASS_2, ROUND_0, STAGES, Recording

# Tables that are the roots' lists (compared root by root), or that a module's rows
# alone read, taking them (implicitcalls.py): not inputs.
_ROOT_TABLES = ("_calls", "_by_module", "_raises", "_loops", "_operators")


class GiveUp(Exception):
    """What the update cannot follow: solve in full."""


class Plan:
    """What a recorded solve (`old`) lets a new flow keep, stage by stage."""

    def __init__(self, old: Recording, changed: set[int]):
        self.old = old
        self.changed = changed  # hashes of the inputs that changed
        self.dirty: list[set[int]] = [set() for _stage in STAGES]

    def start(self, stage: int, more: set[int]) -> set[int]:
        """The dirty frames of `stage`, once `more` inputs are known changed."""
        self.changed |= more
        seeds = set(self.changed)
        if stage == PASS_1:  # (round 0's memo is the first pass's)
            seeds |= self.dirty[ROUND_0]
        if stage == FINAL:  # (the second pass's direct values it kept)
            seeds |= self.dirty[PASS_2]
        dirty = self.old.closure_from(stage, seeds)
        self.dirty[stage] = dirty
        return dirty

    def seed(self, stage: int, memo: dict, through: bool, recorded: dict,
             recording: Recording | None) -> None:
        """Put in `memo` the values of the clean frames of `stage` in `recorded` (a
        recorded memo), where it has none; and their reads in `recording`."""
        frames, dirty = self.old.reads[stage], self.dirty[stage]
        for key, values in recorded.items():
            who = hash((through, key))
            if who in frames and who not in dirty:
                memo.setdefault(key, values)
        if recording is not None:
            reads, held = recording.reads[stage], recording.held[stage]
            for who, read in frames.items():
                if who not in dirty:
                    reads.setdefault(who, read)
                    if who in self.old.held[stage]:
                        held.setdefault(who, self.old.held[stage][who])

    def green(self, stage: int, root) -> bool:
        """Whether a root of the recorded solve read nothing dirty or changed."""
        reads = self.old.roots[stage].get(root)
        if reads is None:
            return False
        dirty = self.dirty[stage]
        changed = self.changed
        return not any(read in dirty or read in changed for read in reads)

    def same_tree(self, ids: dict[str, int], named: set[str]) -> None:
        """GiveUp where the definitions' ids, or the names rows read as the tree's
        (classes, module-level variables, packages), differ from the recorded solve's."""
        if (ids, named) != self.old.tree:
            raise GiveUp("the definitions differ")

    def same_tables(self, tables: dict[str, object]) -> None:
        """GiveUp where a table of the whole tree differs from the recorded solve's."""
        for name, table in tables.items():
            if table != self.old.tables.get(name):
                raise GiveUp(f"the tree's {name} differ")

    def held(self, stage: int) -> dict[tuple, set]:
        """The holders the clean frames of `stage` noted."""
        found: dict[tuple, set] = {}
        dirty = self.dirty[stage]
        for who, held in self.old.held[stage].items():
            if who not in dirty:
                for box, name in held:
                    found.setdefault(box, set()).add(name)
        return found


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
                n = 0
                for key in a.keys() | b.keys():
                    if a.get(key, _MISSING) != b.get(key, _MISSING):
                        changed.add(hash(("names", module, attr, key)))
                        n += 1
                        if n < 3: print("DEBUG names", module, attr, key, str(a.get(key))[:150], str(b.get(key))[:150])
                print("DEBUG names", module, attr, n)
    for attr in ("stars", "imports", "top_names", "reexports"):
        a, b = getattr(old_names, attr), getattr(new_names, attr)
        for key in a.keys() | b.keys():
            if a.get(key, _MISSING) != b.get(key, _MISSING):
                changed.add(hash(("names", f"<{attr}>", key)))
    before = len(changed)
    for question, answer in old._recording.questions.items():
        if not _same(_answer(new_names, question), answer):
            changed.add(hash(("names", *question)))
            if len(changed) - before < 6:
                print("DEBUG question", question, str(answer)[:200])
    print("DEBUG", before, "from tables and modules,", len(changed) - before, "questions")
    return changed


_MISSING = object()


def _compare_table(changed: set[int], tag: str, a, b) -> None:
    if isinstance(a, dict):
        a, b = dict(a.items()), dict(b.items())  # (a recorded table: read unrecorded)
        differ = [key for key in a.keys() | b.keys()
                  if not _equal(a.get(key, _MISSING), b.get(key, _MISSING))]
    elif isinstance(a, set):
        differ = list(set.symmetric_difference(set(a), set(b)))
    else:
        differ = [] if _equal(list(a), list(b)) else [None]
    if differ:
        print("DEBUG table", tag, len(differ), differ[:2])
        changed.add(hash(("all", tag)))
        changed.update(hash(("t", tag, key)) for key in differ)


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

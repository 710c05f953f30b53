"""What each key of the value flow read while it was computed, stage by stage, so that
an edit's changed inputs name the keys, side-table entries and roots to compute again.

A solve runs in stages (callsites.py): ROUND_0 (every store's base), PASS_1 and PASS_2
(every call), FINAL (each module's rows). In each, every computed key (`(through, key)`)
and every entry of a side table (`("side", table, entry)`: an MRO, a type alias's
tags, how a function's returns pass its parameters on, ...) is a frame: what it reads
is recorded against it once it is done. A root (a call of a pass, a module's rows, a
table read once) accumulates what it reads. Reads are of three kinds, each recorded
by the hash of a tuple: another frame (a key read, memoised or open, or a side
entry), a flow-facts table's entry (`("table", table, key)`, or `("all", table)` for a
table read whole), the resolver's answer to a question (`("names", method, args)`, a
module's facts by attribute and key).

Hashes, not the tuples: 1.6M reads of 330k distinct inputs on jax would hold about
50 MB as tuples; a hash is 8 bytes in an array. Python's hash of a tuple of strings is
stable within a process (which is where the reads are used), and a collision only
names more to compute again, never fewer.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from contextlib import contextmanager, nullcontext
from typing import Any

ROUND_0, PASS_1, PASS_2, FINAL = range(4)
STAGES = (ROUND_0, PASS_1, PASS_2, FINAL)


class Recording:
    """The reads of every frame and root of a solve, by stage."""

    def __init__(self):
        self.stage = ROUND_0
        self._frames: list[set[int]] = []
        self.reads: list[dict[int, array]] = [{} for _stage in STAGES]
        self.roots: list[dict[Any, array]] = [{} for _stage in STAGES]
        self._root: object = None
        self.questions: dict[tuple, object] = {}  # (method, arguments) -> answer
        self._started: set = set()  # the roots read in this recording
        self.stages: dict[str, int] = {}  # a table of the whole tree -> its stage
        self._held: list[list] = []  # the holders each open frame noted
        # frame -> (box, name) it noted as holding, per stage (scopes.py `_hold`)
        self.held: list[dict[int, list]] = [{} for _stage in STAGES]
        # What each stage leaves (callsites.py): its memos ((through, key) -> values),
        # each call's values (passes), the holders once its round ends, the sites.
        self.memos: list[tuple[dict, dict]] = [({}, {}) for _stage in STAGES]
        self.results: list[dict] = [{} for _stage in STAGES]
        self.holders: list[dict] = [{} for _stage in STAGES]
        self.sites: list[dict] = [{} for _stage in STAGES]
        self.rows: dict[str, tuple] = {}  # module -> (its call rows, hijax calls noted)
        self.tree: tuple = ()  # (definition ids, names the rows read as the tree's)
        # frame -> the (through, key)s of its cycle, in the order visited, where more
        # than one key (engine.py: computed together, each reading the others as nothing)
        self.components: list[dict[int, tuple]] = [{} for _stage in STAGES]
        self.tables: dict[str, Any] = {}  # the whole tree's tables, at the end
        self.sides: dict[str, dict] = {}  # the side tables (MROs, ...), at the end

    def read(self, what: tuple) -> None:
        """Note a read by the frame being computed (or the root being read)."""
        if self._frames:
            self._frames[-1].add(hash(what))

    def ask(self, question: tuple, answer: object) -> None:
        """Note a question asked of the resolver, (method, arguments), and its answer:
        kept, to be asked again of an edited tree's."""
        self.questions.setdefault(question, answer)
        self.read(("names", *question))

    def enter(self) -> None:
        """A frame starts being computed."""
        self._frames.append(set())
        self._held.append([])

    def hold(self, box: tuple, name: str) -> None:
        """The frame being computed notes `name` as a holder of `box`."""
        if self._held:
            self._held[-1].append((box, name))

    def leave(self, who: tuple) -> None:
        """The frame started last is done: `who`'s reads are those it noted (a frame
        computed again in the same stage replaces what it read before, and moves to the
        end: the frames stay in the order they were last done, each after its reads but
        in a cycle, which `closure_from` passes over)."""
        key = hash(who)
        frames = self.reads[self.stage]
        frames.pop(key, None)
        frames[key] = array("q", self._frames.pop())
        held = self._held.pop()
        if held:
            self.held[self.stage][key] = held
        else:
            self.held[self.stage].pop(key, None)

    def component(self, members: list[tuple]) -> None:
        """The keys of a cycle, computed together, in the order visited."""
        found = tuple(members)
        components = self.components[self.stage]
        for member in found:
            components[hash(member)] = found

    def start_root(self, root: object) -> None:
        """A root's reads start: each read outside any frame's is the root's (those it
        had, from a recording this one continues, replaced)."""
        self._root = root
        self._frames.append(set())
        if (self.stage, root) not in self._started:
            self._started.add((self.stage, root))
            self.roots[self.stage].pop(root, None)

    def continues(self, old: Recording) -> None:
        """Start from what `old` recorded (an update's: update.py), which each frame
        and root read again replaces."""
        self.reads, self.held, self.roots = old.reads, old.held, old.roots
        self.components, self.rows = old.components, old.rows
        self.questions = old.questions  # (update.py keeps their answers current)

    def end_root(self) -> None:
        found = self._frames.pop()
        roots = self.roots[self.stage]
        if self._root in roots:  # (a root read again in the same stage: what both read)
            found.update(roots[self._root])
        roots[self._root] = array("q", found)  # (a set of 1M hashes held some 70 MB more)
        self._root = None

    @contextmanager
    def apart(self, table: str):
        """A table of the whole tree is computed (the subclasses, the array tables, ...):
        what it reads is no frame's but a root's, `("table", table)`, of the stage it is
        computed in (`stages`), which an update computes it in too, first. The update
        compares it, entry by entry, with the one before; a frame records the entries
        it reads."""
        self._frames.append(set())
        try:
            yield
        finally:
            self.roots[self.stage][("table", table)] = array("q", self._frames.pop())
            self.stages[table] = self.stage

    def closure_from(self, stage: int, seeds: set[int]) -> set[int]:
        """The frames of `stage` that read something in `seeds`, or read such a frame,
        and so on: passes over the frames in the order they were last done, until one
        marks none. A frame marked marks its cycle's other keys with it (each reads the
        others), so a pass misses only readers done before what they read changed
        again (a frame computed again moves to the end; one kept stays)."""
        marked, dirty = set(seeds), set()
        frames, components = self.reads[stage], self.components[stage]
        grew = True
        while grew:
            grew = False
            for who, reads in frames.items():
                if who not in dirty and not marked.isdisjoint(reads):
                    cycle = components.get(who)
                    found = {who} if cycle is None else {hash(member) for member in cycle}
                    dirty |= found
                    marked |= found
                    grew = True
        return dirty


def apart(recording: Recording | None, table: str):
    """`recording.apart(table)`, or nothing where nothing is recorded."""
    return recording.apart(table) if recording is not None else nullcontext()


class RecordedTable(dict):
    """A flow-facts table whose reads are recorded: by key, or whole when iterated."""

    def __init__(self, recording: Recording, tag: str, table: dict):
        super().__init__(table)
        self._recording, self._tag = recording, tag

    def __getitem__(self, key):
        self._recording.read(("table", self._tag, key))
        return super().__getitem__(key)

    def get(self, key, default=None):
        self._recording.read(("table", self._tag, key))
        return super().get(key, default)

    def __contains__(self, key):
        self._recording.read(("table", self._tag, key))
        return super().__contains__(key)

    def items(self):
        self._recording.read(("all", self._tag))
        return super().items()

    def keys(self):
        self._recording.read(("all", self._tag))
        return super().keys()

    def values(self):
        self._recording.read(("all", self._tag))
        return super().values()

    def __iter__(self):
        self._recording.read(("all", self._tag))
        return super().__iter__()


class RecordedList(list):
    """A flow-facts list (the stores, the calls), read whole."""

    def __init__(self, recording: Recording, tag: str, items: list):
        super().__init__(items)
        self._recording, self._tag = recording, tag

    def __iter__(self):
        self._recording.read(("all", self._tag))
        return super().__iter__()

    def __add__(self, other):
        self._recording.read(("all", self._tag))
        return [*self, *other]


class RecordedSet(set):
    """A flow-facts set, each membership read recorded."""

    def __init__(self, recording: Recording, tag: str, items: set):
        super().__init__(items)
        self._recording, self._tag = recording, tag

    def __contains__(self, key):
        self._recording.read(("table", self._tag, key))
        return super().__contains__(key)


def record_tables(recording: Recording, owner: object, tags: Iterable[str]) -> None:
    """Put recorded views in place of `owner`'s tables named `tags`."""
    for tag in tags:
        table = getattr(owner, tag)
        kind = RecordedTable if isinstance(table, dict) else \
            RecordedSet if isinstance(table, set) else RecordedList
        setattr(owner, tag, kind(recording, tag, table))


class RecordedView:
    """A read-only table of the resolver's (a module's facts, the modules), each read
    recorded by key, or whole."""

    def __init__(self, recording: Recording, tag: tuple, table: dict):
        self._recording, self._tag, self._table = recording, tag, table

    def __contains__(self, key) -> bool:
        self._recording.read(("names", *self._tag, key))
        return key in self._table

    def get(self, key, default=None):
        self._recording.read(("names", *self._tag, key))
        return self._table.get(key, default)

    def __getitem__(self, key):
        self._recording.read(("names", *self._tag, key))
        return self._table[key]

    def _whole(self) -> None:
        self._recording.read(("names", "all", *self._tag))

    def items(self):
        self._whole()
        return self._table.items()

    def keys(self):
        self._whole()
        return self._table.keys()

    def values(self):
        self._whole()
        return self._table.values()

    def __iter__(self):
        self._whole()
        return iter(self._table)

    def __len__(self) -> int:
        self._whole()
        return len(self._table)


class _RecordedFacts:
    """A module's facts as the flow reads them: each table by key, the rest whole."""

    def __init__(self, recording: Recording, module: str, facts):
        self._recording, self._module, self._facts = recording, module, facts

    def __getattr__(self, attr: str):
        value = getattr(self._facts, attr)
        if isinstance(value, dict):
            return RecordedView(self._recording, (self._module, attr), value)
        self._recording.read(("names", "all", self._module, attr))
        return value


class RecordedNames:
    """The resolver as the flow reads it: each answer recorded with its question, and
    each module's environment (`env_of`: its top-level names' values) by module, which
    `lookup`'s questions record too where it is handed back to them."""

    def __init__(self, recording: Recording, names):
        self._recording, self._names = recording, names
        self.modules = RecordedView(recording, ("<modules>",), names.modules)

    def facts(self, module: str):
        self._recording.read(("names", "<modules>", module))
        return _RecordedFacts(self._recording, module, self._names.facts(module))

    def env_of(self, module: str):
        self._recording.read(("names", "env", module))
        return self._names.env_of(module)

    def __getattr__(self, attr: str):
        real = getattr(self._names, attr)
        if isinstance(real, dict):  # stars, imports, top names: by key
            return RecordedView(self._recording, (f"<{attr}>",), real)
        if not callable(real):
            self._recording.read(("names", "attr", attr))
            return real
        recording = self._recording

        def recorded(*args):
            asked = args[:3] + ("<env>",) if len(args) > 3 and args[3] is not None else args
            answer = real(*args)
            recording.ask((attr, asked), answer)
            return answer
        return recorded

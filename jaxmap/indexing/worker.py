"""Extracting source files, in this process and in forked helper processes: each file
read, parsed and turned into facts, returned as (digest, facts, facts marshalled); and,
the same way, giving facts extracted without the call graph's what it reads. With
`loaded=False`, the facts are None: a caller that stores the marshalled form and reads
it back one file at a time (a whole tree's facts, unmarshalled together, are most of
what indexing holds before the call graph)."""

from __future__ import annotations

import marshal
import os
import signal
import sys
from typing import TYPE_CHECKING

from jaxmap.indexing import decode, extract  # imported once, before helpers fork
from jaxmap.models import UNPARSED

if TYPE_CHECKING:
    from typing import Callable

    Work = Callable[[tuple], tuple[str, dict]]  # a task -> (digest, facts)
    Stored = Callable[[tuple], tuple[str, dict, bytes]]  # -> (digest, facts, marshalled)
    # progress(done, total, working): `working()` names the files in work right now
    Progress = Callable[[int, int, Callable[[], list[str]]], None]

_PARALLEL_MIN_FILES = 48


def extract_files(root: str, sources: list, *, progress=None, jobs=None,
                  flow: bool = False, loaded: bool = True) -> list[tuple]:
    """(digest, facts, facts marshalled) of each source file, in order, using every
    core for many files. With `flow`, the facts hold what the call graph reads too
    (extract.extract's)."""
    from jaxmap.indexing import parse

    parse.warm_up()  # compiled once here, inherited by forked helpers
    tasks = [(str(root), s.path, s.module, s.is_package, flow) for s in sources]
    return _in_parallel(tasks, _extract_task, [(s.path, s.size) for s in sources], progress,
                        jobs, loaded)


def with_graph_facts(root: str, files: list[tuple[str, str, int]], facts: dict[str, dict],
                     *, progress=None, jobs=None, loaded: bool = True) -> list[tuple]:
    """(digest, facts, facts marshalled) of each of `files` ((path, digest, size)),
    in order: its `facts` (extracted without the call graph's) given what the call
    graph reads from its source (extract.add_graph_facts), on every core as
    extract_files does; in helpers only where they fork and so inherit `facts`."""
    def add(task: tuple) -> tuple[str, dict]:
        path, digest, _ = task
        raw = facts[path]
        extract.add_graph_facts(raw, decode.as_utf8(read_source(root, path) or b"")[0])
        return digest, raw

    forks = os.name == "posix"
    return _in_parallel(files, add, [(path, size) for path, _, size in files], progress,
                        jobs if forks else 1, loaded)


def usable_cores() -> int:
    """The cores this process may run on: those its affinity allows (`taskset`, a
    container's cpuset), not every core of the machine, where the system tells."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # (macOS, Windows: no affinity to read)
        return os.cpu_count() or 1


def _in_parallel(tasks: list, work: Work, files: list[tuple[str, int]], progress: Progress | None,
                 jobs, loaded: bool) -> list[tuple]:
    """(digest, facts, facts marshalled) of `work` on each task ((path, size) in
    `files`), in order: this process and `jobs - 1` helpers take tasks, largest first,
    from one shared counter, and the helpers send theirs back as they finish. Each
    worker keeps the position it works on in a shared slot, so that progress can name
    the files in work."""
    jobs = jobs or usable_cores()
    stored = _stored(work)
    if jobs == 1 or len(tasks) < _PARALLEL_MIN_FILES:
        order, slots = list(range(len(tasks))), [-1]
    else:
        import multiprocessing

        context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        order = sorted(range(len(tasks)), key=lambda i: -files[i][1])
        slots = context.Array("i", [-1] * jobs, lock=False)
    results = _Results(len(tasks), stored, progress,
                       lambda: [files[order[p]][0] for p in list(slots) if p >= 0], loaded)
    if progress is not None and tasks:  # told before the first file: it may be slow
        progress(0, len(tasks), results.working)

    def work_here(position: int) -> None:
        """A task in this process, its position kept in slot 0 while in work."""
        slots[0] = position
        results.work(order[position], tasks[order[position]])
        slots[0] = -1

    if len(slots) == 1:
        for place in order:
            work_here(place)
        return results.items
    counter = context.Value("i", 0)
    helpers = [_start_helper(context, [tasks[i] for i in order], stored, counter, slots, helper)
               for helper in range(1, jobs)]
    try:
        open_pipes = [receiver for _, receiver in helpers]
        while (position := _take(counter, len(order))) is not None:
            work_here(position)
            open_pipes = [r for r in open_pipes if results.receive(r, order, wait=False)]
        for receiver in open_pipes:
            results.receive(receiver, order, wait=True)
        for process, _ in helpers:
            process.join()
    finally:
        for process, _ in helpers:
            if process.is_alive():
                process.terminate()
    for slot, item in enumerate(results.items):  # what a helper took but did not send
        if item is None:
            results.work(slot, tasks[slot])
    return results.items


class _Results:
    """(digest, facts, facts marshalled) by slot (the task's place in the caller's
    list), with progress reported; without `loaded`, facts None."""

    def __init__(self, total: int, work: Stored, progress: Progress | None,
                 working: Callable[[], list[str]], loaded: bool):
        self.items: list = [None] * total
        self._work = work
        self.done = 0
        self.progress = progress
        self.working = working
        self._loaded = loaded

    def work(self, slot: int, task: tuple) -> None:
        digest, facts, blob = self._work(task)
        self._add(slot, digest, facts if self._loaded else None, blob)

    def receive(self, receiver, order: list, *, wait: bool) -> bool:
        """Take what a helper has sent (with `wait`, all it will send); False once it
        has closed its end."""
        try:
            while wait or receiver.poll():
                position, digest, blob = receiver.recv()
                self._add(order[position], digest,
                          marshal.loads(blob) if self._loaded else None, blob)
        except EOFError:
            return False
        return True

    def _add(self, slot: int, digest: str, facts: dict | None, blob: bytes) -> None:
        self.items[slot] = digest, facts, blob
        self.done += 1
        if self.progress:
            self.progress(self.done, len(self.items), self.working)


def _start_helper(context, tasks: list, work: Stored, counter, slots, helper: int) -> tuple:
    """A forked helper that ignores Ctrl-C: the main process alone handles it (and ends
    the helpers), so an interrupt prints no traceback from any of them. SIGINT stays
    blocked from the fork until the helper has set it to be ignored."""
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_help, args=(tasks, work, counter, slots, helper, sender),
                              daemon=True)
    blocked = hasattr(signal, "pthread_sigmask")
    if blocked:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        process.start()
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    sender.close()
    return process, receiver


def _help(tasks: list, work: Stored, counter, slots, helper: int, sender) -> None:
    """In a helper process: work, and leave sending to a thread, so that a result larger
    than the pipe's buffer does not stop the work until the main process reads it (it
    reads between files of its own). Marshal is much cheaper than pickle."""
    import queue
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    outbox: queue.SimpleQueue = queue.SimpleQueue()
    sending = threading.Thread(target=_send_all, args=(outbox, sender))
    sending.start()
    while (position := _take(counter, len(tasks))) is not None:
        slots[helper] = position
        digest, _, blob = work(tasks[position])
        slots[helper] = -1
        outbox.put((position, digest, blob))
    outbox.put(None)
    sending.join()


def _send_all(outbox, sender) -> None:
    with sender:
        while (item := outbox.get()) is not None:
            sender.send(item)


def _take(counter, total: int) -> int | None:
    """The next position to extract, or None when all are taken."""
    with counter.get_lock():
        position = counter.value
        counter.value = position + 1
    return position if position < total else None


def _stored(work: Work) -> Stored:
    """`work`, its facts in the form stored: a copy whose strings are interned, and that
    copy marshalled. The same name or text recurs across a tree's files; interned,
    marshal stores each as such, and the main process, loading the facts back, keeps
    one copy of each (about a fifth of the facts' memory on jax). The copy also keeps
    the marshalled bytes from depending on what else is alive: marshal shares an
    object met twice when something else refers to it, and while the copy is
    marshalled, its strings (interned) and its other leaves (held in a list) all have
    another reference, and its containers, made anew, none."""
    def stored(task: tuple) -> tuple[str, dict, bytes]:
        digest, facts = work(task)
        held: list = []
        try:
            facts = _interned(facts, held)
        except RecursionError:  # nested deeper than the walk goes: kept as it is
            pass
        return digest, facts, marshal.dumps(facts)
    return stored


def _interned(value, held: list):
    """`value` (plain dicts, lists, tuples, strings, numbers) made anew, with every
    string interned and every other leaf added to `held` (inline: 2.7M items on jax).
    Loops, not comprehensions, and a dict's items taken as a list's: a frame less per
    level and no tuple made per item (a third of this walk's time)."""
    is_dict = type(value) is dict
    made: list = []
    for item in value.values() if is_dict else value:
        kind = type(item)
        if kind is str:
            made.append(sys.intern(item))
        elif kind is tuple or kind is list or kind is dict:
            made.append(_interned(item, held))
        else:
            held.append(item)
            made.append(item)
    if is_dict:
        return {sys.intern(key) if type(key) is str else key: item
                for key, item in zip(value, made)}
    return tuple(made) if type(value) is tuple else made


def _extract_task(task: tuple) -> tuple[str, dict]:
    """(digest, facts) of one file."""
    root, relative, module, is_package, flow = task
    data = read_source(root, relative)
    text, decoding = decode.as_utf8(data or b"")
    error = None if data is not None else "unreadable"
    try:
        facts = extract.extract(text, module, is_package, flow=flow)
    except (RecursionError, ValueError, UnicodeError) as problem:
        error = f"{type(problem).__name__}: {problem}"
        facts = extract.extract(b"", module, is_package, flow=flow)
    unparsed = facts.pop("unparsed", None)
    if error:
        facts["error"] = f"{relative}: not indexed ({error})"
    elif decoding:
        facts["error"] = f"{relative}: {decoding}"
    elif unparsed:
        line, refused = unparsed
        facts["error"] = f"{relative}:{line}: {UNPARSED} ({refused}); read as far as it parses"
    return content_digest(data or b""), facts


def read_source(root: str, relative: str) -> bytes | None:
    """The file's bytes as stored (what its digest is of); decode.as_utf8 gives what
    the parser reads."""
    try:
        with open(os.path.join(root, relative), "rb") as handle:
            return handle.read()
    except OSError:
        return None


def content_digest(data: bytes) -> str:
    import hashlib

    return hashlib.blake2b(data, digest_size=16).hexdigest()

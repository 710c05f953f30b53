"""Build or refresh the index of a root: discover -> extract (in parallel) -> resolve -> store."""

from __future__ import annotations

import gc
import marshal
import os
import sqlite3
from contextlib import closing, contextmanager
from typing import TYPE_CHECKING, NamedTuple

from jaxmap import discover, store
from jaxmap.errors import StoreError

if TYPE_CHECKING:
    from typing import Callable

    Progress = Callable[[int, int], None]
_PARALLEL_MIN_FILES = 48


class IndexReport(NamedTuple):
    """What an index run did."""

    root: str
    index: str
    files: int
    parsed: int
    removed: int
    rebuilt: bool
    primitives: int
    rules: int
    diagnostics: int

    @property
    def changed(self) -> bool:
        return self.rebuilt or self.parsed > 0 or self.removed > 0


def build_index(root=None, *, rebuild: bool = False, progress: Progress | None = None,
                jobs: int | None = None) -> IndexReport:
    """Index `root` (default: the installed jax), re-parsing only files whose content
    changed since the last run; `rebuild` starts from nothing."""
    root = discover.resolve_root(root)
    tree = discover.list_files(root)
    path = store.index_path(root)
    expected = {**_version_key(), "root": str(root)}
    conn = None if rebuild else store.connect_readonly(path)
    if conn is None:
        return _write(root, path, tree, expected, {}, tree.files, 0, True, progress, jobs)
    with closing(conn):
        try:
            old = store.file_stats(conn) if store.is_current(store.read_meta(conn), expected) \
                else {}
            unchanged, touched, to_parse = _classify(root, tree.files, old)
            removed = len(set(old) - {f.path for f in tree.files})
            if old and not to_parse and not removed:
                # Same content everywhere: nothing to resolve; remember any new stats.
                if touched or store.dir_stats(conn) != dict(tree.dirs):
                    store.update_stats(path, [(s.path, s.mtime_ns, s.size) for s in touched],
                                       tree.dirs)
                return IndexReport(root, path, len(tree.files), 0, 0, False, *_counts(conn))
            kept = store.load_facts(conn, unchanged) if old else {}
        except (StoreError, sqlite3.DatabaseError):
            return _write(root, path, tree, expected, {}, tree.files, 0, True, progress, jobs)
    return _write(root, path, tree, expected, kept, to_parse, removed, not old, progress, jobs)


def ensure_index(root=None, *, progress: Progress | None = None) -> tuple[str, IndexReport | None]:
    """The index of `root`, ready for queries: built if missing or unreadable, refreshed
    if an indexed file or directory changed on disk (checked by stat, no tree walk)."""
    root = discover.resolve_root(root)
    path = store.index_path(root)
    conn = store.connect_readonly(path)
    if conn is not None:
        with closing(conn):
            expected = {**store.query_key(), "root": str(root)}
            if store.is_current(store.read_meta(conn), expected) and _unchanged(root, conn):
                return path, None
    return path, build_index(root, progress=progress)


def _unchanged(root: str, conn: sqlite3.Connection) -> bool:
    try:
        files = conn.execute("SELECT path, mtime_ns, size FROM files").fetchall()
        dirs = conn.execute("SELECT path, mtime_ns FROM dirs").fetchall()
    except sqlite3.DatabaseError:
        return False
    prefix = f"{root}{os.sep}"  # plain strings: pathlib would double the cost here
    try:
        for path, mtime, size in files:
            stat = os.stat(prefix + path)
            if stat.st_mtime_ns != mtime or stat.st_size != size:
                return False
        return all(os.stat(prefix + path).st_mtime_ns == mtime for path, mtime in dirs) \
            and bool(files)
    except OSError:
        return False


def _classify(root: str, files: list, old: dict) -> tuple[list, list, list]:
    """Paths whose stored facts still hold, sources whose stat changed but content did
    not (a touch, a checkout), and sources to parse."""
    unchanged, touched, to_parse = [], [], []
    for source in files:
        previous = old.get(source.path)
        if previous is None:
            to_parse.append(source)
        elif previous[:2] == (source.mtime_ns, source.size):
            unchanged.append(source.path)
        elif _digest(_read(root, source.path) or b"") == previous[2]:
            unchanged.append(source.path)
            touched.append(source)
        else:
            to_parse.append(source)
    return unchanged, touched, to_parse


def _write(root, path, tree, expected, kept, to_parse, removed, rebuilt, progress, jobs):
    """Parse what must be, resolve everything, and write a whole new index."""
    with _gc_paused():
        return _write_unpaused(root, path, tree, expected, kept, to_parse, removed, rebuilt,
                               progress, jobs)


@contextmanager
def _gc_paused():
    """Indexing allocates hundreds of thousands of small tuples that all stay alive until
    the end; the cyclic collector would scan them again and again for nothing."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _write_unpaused(root, path, tree, expected, kept, to_parse, removed, rebuilt, progress,
                    jobs):
    parsed = dict(zip((s.path for s in to_parse),
                      extract_files(root, to_parse, progress=progress, jobs=jobs)))
    rows, facts = [], {}
    for source in tree.files:
        digest, facts[source.path], blob = parsed.get(source.path) or kept[source.path]
        rows.append((source.path, source.module, source.mtime_ns, source.size, digest, blob))
    from jaxmap import resolve

    resolution = resolve.resolve(facts)
    meta = {**expected, "jax_version": resolution.jax_version or ""}
    store.write(path, meta, rows, tree.dirs, resolution)
    rules = sum(len(p["rules"]) for p in resolution.primitives)
    return IndexReport(root, path, len(tree.files), len(to_parse), removed, rebuilt,
                       len(resolution.primitives), rules, len(resolution.diagnostics))


def _counts(conn: sqlite3.Connection) -> tuple[int, int, int]:
    return tuple(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                 for table in ("primitives", "rules", "diagnostics"))


def _version_key() -> dict[str, str]:
    """The query key plus what is too costly for the query path: the grammar version
    and a checksum of jaxmap's own code and queries."""
    return {**store.query_key(), "grammar": _grammar_version(), "code": _code_checksum()}


def _grammar_version() -> str:
    """Versions of the packages that decide what a parse yields (read from their
    metadata: importing tree_sitter is not needed to know them)."""
    from importlib.metadata import version

    return f"tree-sitter {version('tree-sitter')}, tree-sitter-python {version('tree-sitter-python')}"


def _code_checksum() -> str:
    """Of every module of the package and every query, listed from the directory so
    that no module that shapes the index can be left out."""
    import zlib

    package = os.path.dirname(__file__)
    sources = []
    for folder, suffix in (("", ".py"), ("resolve", ".py"), ("queries", ".scm")):
        folder = os.path.join(package, folder)
        sources += sorted(os.path.join(folder, n) for n in os.listdir(folder)
                          if n.endswith(suffix))
    checksum = 0
    for source in sources:
        with open(source, "rb") as handle:
            checksum = zlib.crc32(handle.read(), checksum)
    return f"{checksum:08x}"


def extract_files(root: str, sources: list, *, progress=None, jobs=None) -> list[tuple]:
    """(digest, facts, facts marshalled) of each source file, in order, using every
    core for many files: this process and `jobs - 1` helpers take files, largest
    first, from one shared counter, and the helpers send theirs back as they finish."""
    tasks = [(str(root), s.path, s.module, s.is_package) for s in sources]
    jobs = jobs or os.cpu_count() or 1
    results = _Results(len(tasks), progress)
    if jobs == 1 or len(tasks) < _PARALLEL_MIN_FILES:
        for index, task in enumerate(tasks):
            results.extract(index, task)
        return results.items
    import multiprocessing

    from jaxmap import parse

    parse.warm_up()  # compiled once here, inherited by forked helpers
    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    order = sorted(range(len(tasks)), key=lambda i: -sources[i].size)
    counter = context.Value("i", 0)
    helpers = [_start_helper(context, [tasks[i] for i in order], counter)
               for _ in range(jobs - 1)]
    try:
        open_pipes = [receiver for _, receiver in helpers]
        while (position := _take(counter, len(order))) is not None:
            results.extract(order[position], tasks[order[position]])
            open_pipes = [r for r in open_pipes if results.receive(r, order, wait=False)]
        for receiver in open_pipes:
            results.receive(receiver, order, wait=True)
        for process, _ in helpers:
            process.join()
    finally:
        for process, _ in helpers:
            if process.is_alive():
                process.terminate()
    for index, item in enumerate(results.items):  # what a helper took but did not send
        if item is None:
            results.extract(index, tasks[index])
    return results.items


class _Results:
    """(digest, facts, facts marshalled) by task index, with progress reported."""

    def __init__(self, total: int, progress):
        self.items: list = [None] * total
        self.done = 0
        self.progress = progress

    def extract(self, index: int, task: tuple) -> None:
        digest, facts = _extract_task(task)
        self._add(index, digest, facts, marshal.dumps(facts))

    def receive(self, receiver, order: list, *, wait: bool) -> bool:
        """Take what a helper has sent (with `wait`, all it will send); False once it
        has closed its end."""
        try:
            while wait or receiver.poll():
                position, digest, blob = receiver.recv()
                self._add(order[position], digest, marshal.loads(blob), blob)
        except EOFError:
            return False
        return True

    def _add(self, index: int, digest: str, facts: dict, blob: bytes) -> None:
        self.items[index] = digest, facts, blob
        self.done += 1
        if self.progress:
            self.progress(self.done, len(self.items))


def _start_helper(context, tasks: list, counter) -> tuple:
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_help, args=(tasks, counter, sender), daemon=True)
    process.start()
    sender.close()
    return process, receiver


def _help(tasks: list, counter, sender) -> None:
    """In a helper process: extract, and leave sending to a thread, so that a result
    larger than the pipe's buffer does not stop the work until the main process reads
    it (it reads between files of its own). Marshal is much cheaper than pickle."""
    import queue
    import threading

    outbox: queue.SimpleQueue = queue.SimpleQueue()
    sending = threading.Thread(target=_send_all, args=(outbox, sender))
    sending.start()
    while (position := _take(counter, len(tasks))) is not None:
        digest, facts = _extract_task(tasks[position])
        outbox.put((position, digest, marshal.dumps(facts)))
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


def _extract_task(task: tuple) -> tuple[str, dict]:
    """(digest, facts) of one file."""
    root, relative, module, is_package = task
    from jaxmap import extract

    data = _read(root, relative)
    error = None if data is not None else "unreadable"
    try:
        facts = extract.extract(data or b"", module, is_package)
    except (RecursionError, ValueError, UnicodeError) as problem:
        error = f"{type(problem).__name__}: {problem}"
        facts = extract.extract(b"", module, is_package)
    if error:
        facts["error"] = f"{relative}: not indexed ({error})"
    return _digest(data or b""), facts


def _read(root: str, relative: str) -> bytes | None:
    try:
        with open(os.path.join(root, relative), "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _digest(data: bytes) -> str:
    import hashlib

    return hashlib.blake2b(data, digest_size=16).hexdigest()

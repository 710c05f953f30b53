"""Build or refresh the index of a root: discover -> extract (in parallel) -> resolve -> store."""

from __future__ import annotations

import marshal
import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from jaxmap import discover, store
from jaxmap.errors import StoreError

Progress = Callable[[int, int], None]
_PARALLEL_MIN_FILES = 48


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What an index run did."""

    root: Path
    index: Path
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
    files = discover.list_files(root)
    return _update(root, files, rebuild=rebuild, progress=progress, jobs=jobs)


def ensure_index(root=None, *, progress: Progress | None = None) -> tuple[Path, IndexReport | None]:
    """The index of `root`, ready for queries: built if missing or unreadable, refreshed
    if an indexed file changed on disk (checked by stat, without walking the tree)."""
    root = discover.resolve_root(root)
    path = store.index_path(root)
    conn = store.connect_readonly(path)
    if conn is not None:
        with closing(conn):
            expected = {**store.query_key(), "root": str(root)}
            if store.is_current(store.read_meta(conn), expected) and _unchanged(root, conn):
                return path, None
    report = build_index(root, progress=progress)
    return path, report


def _unchanged(root: Path, conn: sqlite3.Connection) -> bool:
    try:
        rows = conn.execute("SELECT path, mtime_ns, size FROM files").fetchall()
    except sqlite3.DatabaseError:
        return False
    for path, mtime, size in rows:
        try:
            stat = os.stat(root / path)
        except OSError:
            return False
        if stat.st_mtime_ns != mtime or stat.st_size != size:
            return False
    return bool(rows)


def _version_key() -> dict[str, str]:
    """The query key plus what is too costly for the query path: the grammar version
    and a checksum of jaxmap's own extraction and resolution code."""
    from jaxmap import parse

    return {**store.query_key(), "grammar": parse.grammar_version(), "code": _code_checksum()}


def _code_checksum() -> str:
    import zlib

    package = Path(__file__).parent
    checksum = 0
    for name in ("extract.py", "resolve.py", "registrars.py", "parse.py", "store.py"):
        checksum = zlib.crc32((package / name).read_bytes(), checksum)
    for query in sorted((package / "queries").glob("*.scm")):
        checksum = zlib.crc32(query.read_bytes(), checksum)
    return f"{checksum:08x}"


def _update(root: Path, files: list, *, rebuild: bool, progress, jobs) -> IndexReport:
    path = store.index_path(root)
    expected = _version_key()
    old_stats, old_facts_source = {}, None
    conn = None if rebuild else store.connect_readonly(path)
    if conn is not None and store.is_current(store.read_meta(conn),
                                             {**expected, "root": str(root)}):
        try:
            old_stats = store.file_stats(conn)
            old_facts_source = conn
        except sqlite3.DatabaseError:
            old_stats = {}
    try:
        return _refresh(root, path, files, old_stats, old_facts_source, expected,
                        rebuilt=not old_stats, progress=progress, jobs=jobs)
    finally:
        if conn is not None:
            conn.close()


def _refresh(root, path, files, old_stats, old_conn, expected, *, rebuilt, progress, jobs):
    unchanged, touched, to_parse = [], [], []
    for source in files:
        old = old_stats.get(source.path)
        if old and old[:2] == (source.mtime_ns, source.size):
            unchanged.append((source, old[2]))
        elif old:
            touched.append((source, old[2]))
        else:
            to_parse.append(source)
    # A changed stat with the same content (a touch, a checkout) needs no parse.
    for source, digest in touched:
        data = _read(root, source.path)
        if data is not None and _digest(data) == digest:
            unchanged.append((source, digest))
        else:
            to_parse.append(source)
    removed = len(set(old_stats) - {f.path for f in files})
    if not rebuilt and not to_parse and not removed:
        if touched:  # same content, new stat: remember it, nothing to resolve
            store.update_stats(path, [(s.path, s.mtime_ns, s.size) for s, _ in touched])
        return _report(root, path, files, 0, 0, False, _counts(path))
    kept = {}
    if unchanged:
        try:
            kept = store.load_facts(old_conn, [s.path for s, _ in unchanged])
        except (StoreError, sqlite3.DatabaseError):
            return _refresh(root, path, files, {}, None, expected, rebuilt=True,
                            progress=progress, jobs=jobs)
    parsed = extract_files(root, to_parse, progress=progress, jobs=jobs)
    rows = [(s.path, s.module, s.mtime_ns, s.size, digest, kept[s.path])
            for s, digest in unchanged]
    rows += [(s.path, s.module, s.mtime_ns, s.size, digest, facts)
             for s, (digest, facts) in zip(to_parse, parsed)]
    rows.sort(key=lambda row: row[0])
    from jaxmap import resolve

    resolution = resolve.resolve({row[0]: row[5] for row in rows})
    meta = {**expected, "root": str(root), "jax_version": resolution.jax_version or ""}
    store.write(path, meta, rows, resolution)
    rules = sum(len(p["rules"]) for p in resolution.primitives)
    return _report(root, path, files, len(to_parse), removed, rebuilt,
                   (len(resolution.primitives), rules, len(resolution.diagnostics)))


def _report(root, path, files, parsed, removed, rebuilt, counts) -> IndexReport:
    return IndexReport(root, path, len(files), parsed, removed, rebuilt, *counts)


def _counts(path: Path) -> tuple[int, int, int]:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        return tuple(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                     for table in ("primitives", "rules", "diagnostics"))


def extract_files(root: Path, sources: list, *, progress=None, jobs=None) -> list[tuple]:
    """(digest, facts) of each source file, in order, using every core for many files."""
    tasks = [(str(root), s.path, s.module, s.is_package) for s in sources]
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1 or len(tasks) < _PARALLEL_MIN_FILES:
        results = []
        for i, task in enumerate(tasks):
            results.append(_extract_task(task))
            if progress:
                progress(i + 1, len(tasks))
        return results
    import multiprocessing

    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    # Large files first, so no worker is left with one big file at the end.
    order = sorted(range(len(tasks)), key=lambda i: -sources[i].size)
    results: list = [None] * len(tasks)
    with context.Pool(jobs) as pool:
        chunks = pool.imap_unordered(_extract_indexed, [(i, tasks[i]) for i in order],
                                     chunksize=1)
        for done, (i, (digest, blob)) in enumerate(chunks, 1):
            results[i] = (digest, marshal.loads(blob))
            if progress:
                progress(done, len(tasks))
    return results


def _extract_indexed(item: tuple) -> tuple[int, tuple]:
    """In a worker: marshal is much cheaper than pickle for sending facts back."""
    index, task = item
    digest, facts = _extract_task(task)
    return index, (digest, marshal.dumps(facts))


def _extract_task(task: tuple) -> tuple[str, dict]:
    root, relative, module, is_package = task
    from jaxmap import extract

    data = _read(Path(root), relative)
    if data is None:
        data = b""
    try:
        facts = extract.extract(data, module, is_package)
    except (RecursionError, ValueError, UnicodeError):
        facts = extract.extract(b"", module, is_package)
    return _digest(data), facts


def _read(root: Path, relative: str) -> bytes | None:
    try:
        return (root / relative).read_bytes()
    except OSError:
        return None


def _digest(data: bytes) -> str:
    import hashlib

    return hashlib.blake2b(data, digest_size=16).hexdigest()

"""The write side of the index: one SQLite file per root, versioned, written
atomically, safe to lose; and the bookkeeping an incremental update reads (meta,
file and directory stats, stored facts). Queries are index.py's.

A new or updated index is always written whole through atomic.replacing, so readers
and concurrent writers only ever see a whole index; the one write in place is a single
transaction that records new file and directory stats when no content changed.
Anything unreadable (corrupt file, older schema, other jaxmap, grammar or Python
version) reads as "no index", and the caller rebuilds.
"""

from __future__ import annotations

import marshal
import os
import re
import sqlite3
import sys
import zlib
from contextlib import closing, contextmanager
from typing import TYPE_CHECKING

from jaxmap.errors import StoreError
from jaxmap.store import atomic

if TYPE_CHECKING:  # dataclasses are not on the query path
    from collections.abc import Callable, Iterator

    from jaxmap.store.records import Place, Resolution, RuleRecord

SCHEMA_VERSION = 32  # 16: call guards (calls.guard, calls.fills); 17: `P=Q` in fills;
# 18: fills per different call, `|`-separated; 19: table `stale`; 20: sets of words in
# guards (`P==a/b`); 21: the line of each different call (facts' Callee.lines,
# calls.fill_lines); 22: rules.keywords; 23: calls of a call's result
# whose first call spans lines (flow facts); 24: statements joined by `;` read each
# alone (a call after `import os;`), a call through a module's variable also an edge to
# it, and a variable holding a lambda a caller of what the lambda calls; 25: trace
# rules of a Trace method assigned at module level (`ad.JVPTrace.process_x = f`) and
# of the Trace methods a primitive's `bind`, `process` or custom bind calls; 26: a
# message's self-documenting f-string field keeps the `x=` it prints (messages.pieces);
# 27: an `if`'s condition as written (facts' Branch.text), for an undecided registration;
# 28: definitions.alias_of, a variable that only names a function (`ref = kernel.ref`),
# whose public paths are the function's; 29: a def's parameters in the flow facts
# read on the masked text, without comments and line breaks (a quote or a bracket in a
# comment among them had swallowed the body; a comment added there only moves rows),
# and a default on a signature's own line no assignment; 30: rules.overridden_by, the
# line of a later registration of the rule in its file that certainly replaces it (facts'
# `straight` lines); 31: table switched_off, the registrations a call's argument
# switches off (`linalg_primitive(..., supports_batching=False)`); 32: a rule kept for
# later (a partial stored into a subscript or an attribute, a function or partial
# handed to a registrar) is no callee of the function that registers it
# (indexing/kept.py)
# The meta key that says whether the index holds its second phase ("1": the call graph
# and messages), or only the first ("0": primitives, rules, definitions), or holds a
# second phase that is not current (STALE): its rows of the files in table `stale` were
# read from the facts kept there, not from the files as they are now; or none since
# an edit whose rows could not be moved (DROPPED: a first-phase question after it).
GRAPH = "graph"
STALE = "stale"
DROPPED = "dropped"
WITHOUT_ROWS = ("0", DROPPED)  # the states whose second phase holds no rows to move
SECOND_PHASE = ("binds", "calls", "messages", "tests", "rule_calls")  # its tables

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE files (
  path TEXT PRIMARY KEY, module TEXT, mtime_ns INTEGER, size INTEGER, digest TEXT);
-- Apart from `files`, whose stats every query reads: beside the blobs, reading them
-- would read every page of the blobs' table (7 MB for jax, 2 ms).
CREATE TABLE facts (path TEXT PRIMARY KEY, facts BLOB);
CREATE TABLE dirs (path TEXT PRIMARY KEY, mtime_ns INTEGER);
CREATE TABLE primitives (
  id INTEGER PRIMARY KEY, name TEXT, variable TEXT, module TEXT, file TEXT,
  line INTEGER, end_line INTEGER, style TEXT, aliases TEXT);
CREATE TABLE rules (
  primitive_id INTEGER, seq INTEGER, kind TEXT, file TEXT, line INTEGER, end_line INTEGER,
  via TEXT, platform TEXT, function_name TEXT, function_file TEXT, function_line INTEGER,
  platforms TEXT, functions TEXT, condition TEXT, written TEXT, keywords TEXT,
  overridden_by INTEGER);
-- A registration a call's argument switches off (records.py's SwitchedOffRecord): not
-- a rule. file, line, end_line: the call; guard_file, guard_line: the helper's `if`.
CREATE TABLE switched_off (
  primitive_id INTEGER, kind TEXT, file TEXT, line INTEGER, end_line INTEGER, via TEXT,
  platform TEXT, platforms TEXT, condition TEXT, guard_file TEXT, guard_line INTEGER);
CREATE TABLE definitions (
  id INTEGER PRIMARY KEY, name TEXT, qualname TEXT, kind TEXT, module TEXT, file TEXT,
  line INTEGER, end_line INTEGER, summary TEXT, alias_of TEXT);
CREATE TABLE public_paths (path TEXT, definition_id INTEGER);
CREATE TABLE imports (module TEXT, target TEXT);
CREATE TABLE binds (
  module TEXT, function TEXT, primitive_id INTEGER, line INTEGER, definition_id INTEGER,
  via TEXT);
CREATE TABLE messages (
  file TEXT, line INTEGER, function TEXT, exception TEXT, pieces TEXT, returned INTEGER);
-- guard: the caller's parameters an `if` requires None for the call (`P`), or one of
-- some words (`P==a/b`), or none of them (`P==!a/b`); fills: where the
-- callee has such a guard (or passes a parameter on to one), its parameters the call
-- passes surely not None, and `P=Q` where it passes P the caller's parameter Q, for each
-- different call there, `|`-separated (calls.py); fill_lines: the line of the first
-- call of each of them, `|`-separated in the same order (line: the first call's).
CREATE TABLE calls (
  caller INTEGER, callee INTEGER, text TEXT, status TEXT, line INTEGER, guard TEXT,
  fills TEXT, fill_lines TEXT);
CREATE TABLE tests (primitive_id INTEGER, name TEXT, file TEXT, line INTEGER);
-- A function a rule's partial hands its function, which calls it (records.py).
CREATE TABLE rule_calls (
  primitive_id INTEGER, kind TEXT, platform TEXT, rule INTEGER, callee INTEGER);
CREATE TABLE diagnostics (message TEXT);
-- Files edited since the call graph was read (meta graph = stale): the marshalled facts
-- it was read from, which the next graph question compares with the file's (indexer.py).
CREATE TABLE stale (path TEXT PRIMARY KEY, facts BLOB);
"""
# Built after the rows are in: cheaper than keeping them up to date on every insert.
_INDEXES = """
CREATE INDEX primitives_name ON primitives (name);
CREATE INDEX primitives_variable ON primitives (variable);
CREATE INDEX rules_primitive ON rules (primitive_id);
CREATE INDEX rules_function ON rules (function_file, function_line);
CREATE INDEX switched_off_primitive ON switched_off (primitive_id);
CREATE INDEX definitions_place ON definitions (file, line);
CREATE INDEX definitions_module ON definitions (module);
CREATE INDEX primitives_module ON primitives (module);
CREATE INDEX imports_module ON imports (module);
CREATE INDEX imports_target ON imports (target);
CREATE INDEX tests_primitive ON tests (primitive_id);
CREATE INDEX definitions_name ON definitions (name);
CREATE INDEX definitions_qualname ON definitions (qualname);
CREATE INDEX public_paths_path ON public_paths (path);
CREATE INDEX public_paths_definition ON public_paths (definition_id);
CREATE INDEX binds_primitive ON binds (primitive_id);
CREATE INDEX binds_definition ON binds (definition_id);
CREATE INDEX calls_caller ON calls (caller);
CREATE INDEX calls_callee ON calls (callee);
CREATE INDEX rule_calls_primitive ON rule_calls (primitive_id);
"""
TABLES = frozenset({"meta", "files", "facts", "dirs", "primitives", "rules", "switched_off",
                    "definitions", "public_paths", "imports", "binds", "calls", "messages", "tests",
                    "diagnostics", "rule_calls", "stale"})


def cache_dir() -> str:
    """`$JAXMAP_CACHE_DIR`, else `$XDG_CACHE_HOME/jaxmap`, else `~/.cache/jaxmap`."""
    explicit = os.environ.get("JAXMAP_CACHE_DIR")
    if explicit:
        if os.path.exists(explicit) and not os.path.isdir(explicit):
            raise StoreError(f"JAXMAP_CACHE_DIR={explicit} is not a directory; point it at "
                             f"one jaxmap may keep its indexes in")
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jaxmap")


def check_cache_writable() -> None:
    """StoreError naming JAXMAP_CACHE_DIR when the cache cannot be written, checked
    before any parsing."""
    import tempfile

    directory = cache_dir()
    try:
        os.makedirs(directory, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as error:
        raise StoreError(f"cannot keep the index in {directory} ({error.strerror or error}); "
                         f"set JAXMAP_CACHE_DIR to a writable directory") from None


def index_path(root: str | os.PathLike) -> str:
    """Where the index of `root` lives: one file per root, named after it. (The index
    records its root, so a checksum collision reads as a stale index, not wrong data.)"""
    root = os.fspath(root)
    digest = f"{zlib.crc32(root.encode()):08x}"
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(root) or "root")
    return os.path.join(cache_dir(), f"{stem}-{digest}.sqlite")


def query_key() -> dict[str, str]:
    """What must match for an index to be read. `jaxmap index` also checks the grammar
    version (costly to look up, so not on the query path) and rebuilds on a change."""
    from jaxmap import __version__

    return {"schema": str(SCHEMA_VERSION), "jaxmap": __version__,
            "python": f"{sys.version_info[0]}.{sys.version_info[1]}"}


def connect_readonly(path: str) -> sqlite3.Connection | None:
    """Open an index for queries; None if it is missing or not a jaxmap index."""
    if not os.path.isfile(path):
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        return conn
    except sqlite3.DatabaseError:
        return None


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """The index's meta table; empty if it is unreadable or a table is missing (a
    damaged index reads as no index, so it is rebuilt)."""
    try:
        tables = {row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        return dict(conn.execute("SELECT key, value FROM meta")) if tables == TABLES else {}
    except sqlite3.DatabaseError:
        return {}


def is_current(meta: dict[str, str], expected: dict[str, str]) -> bool:
    return all(meta.get(key) == value for key, value in expected.items())


def file_stats(conn: sqlite3.Connection) -> dict[str, tuple[int, int, str]]:
    """path -> (mtime_ns, size, digest) of every indexed file."""
    return {path: (mtime, size, digest) for path, mtime, size, digest
            in conn.execute("SELECT path, mtime_ns, size, digest FROM files")}


def stamps(conn: sqlite3.Connection) -> tuple[list, list]:
    """(path, mtime_ns, size) of every indexed file and (path, mtime_ns) of every
    directory walked: what a query checks before trusting the index."""
    return (conn.execute("SELECT path, mtime_ns, size FROM files").fetchall(),
            conn.execute("SELECT path, mtime_ns FROM dirs").fetchall())


def dir_stats(conn: sqlite3.Connection) -> dict[str, int]:
    """path -> mtime_ns of every directory walked."""
    return dict(conn.execute("SELECT path, mtime_ns FROM dirs"))


def load_facts(conn: sqlite3.Connection, paths, read: Callable[[dict], object] | None = None
               ) -> dict[str, tuple]:
    """Stored (digest, FileFacts, FileFacts marshalled) of the given paths; with
    `read`, what it reads of each file's facts in their place (the facts are then
    unmarshalled one file at a time, none kept)."""
    wanted = set(paths)
    facts = {}
    query = "SELECT path, digest, facts FROM files JOIN facts USING (path)"
    few = len(wanted) <= 100  # else one pass over the table beats a lookup each
    rows = conn.execute(f"{query} WHERE path IN ({', '.join('?' * len(wanted))})",
                        sorted(wanted)) if few else conn.execute(query)
    for path, digest, blob in rows:
        if path in wanted:
            raw = facts_of(path, blob)
            facts[path] = digest, raw if read is None else read(raw), blob
    return facts


def update_stats(path: str, files: list[tuple[str, int, int]],
                 dirs: list[tuple[str, int]]) -> None:
    """Record new (mtime_ns, size) of files whose content did not change, and the
    directories' mtimes; one transaction."""
    with closing(sqlite3.connect(path, timeout=30)) as conn, conn:
        conn.executemany("UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?",
                         [(mtime, size, p) for p, mtime, size in files])
        conn.execute("DELETE FROM dirs")
        conn.executemany("INSERT INTO dirs VALUES (?, ?)", dirs)


def stale_blobs(conn: sqlite3.Connection) -> dict[str, bytes]:
    """path -> marshalled facts of each file in table `stale`: the facts the call
    graph's rows of that file were read from."""
    return dict(conn.execute("SELECT path, facts FROM stale"))


def identities(conn: sqlite3.Connection) -> tuple[list[tuple], list[tuple]]:
    """What tells the index's definitions and primitives apart, by id: (id, file,
    qualified name, kind) of each definition and (id, name, module, variable) of each
    primitive, for an update that resolves the first phase again to carry the call
    graph over (indexing/carry.py)."""
    return (
        conn.execute("SELECT id, file, qualname, kind FROM definitions ORDER BY id").fetchall(),
        conn.execute("SELECT id, name, module, variable FROM primitives ORDER BY id").fetchall())


def facts_holding(conn: sqlite3.Connection, words: set[bytes], leaving_out: set[str]) -> bool:
    """Whether the stored facts of a file not in `leaving_out`, marshalled, hold any of
    `words`."""
    return any(path not in leaving_out and any(word in blob for word in words)
               for path, blob in conn.execute("SELECT path, facts FROM facts"))


def facts_of(path: str, blob: bytes) -> dict:
    """A file's facts, from their stored (marshalled) form."""
    try:
        return marshal.loads(blob)
    except (ValueError, EOFError, TypeError) as error:
        raise StoreError(f"index entry for {path} is unreadable ({error})") from error


def move_lines(path: str, files: list[tuple], first: dict[str, dict[int, int]],
               second: dict[str, dict[int, int]], stale: dict[str, bytes],
               read: tuple[dict[str, str], str | None],
               summaries: dict[str, list[tuple]] | None = None) -> bool:
    """Record files whose code only moved, or whose call graph waits (`stale`): their
    rows in `files` ((path, module, mtime_ns, size, digest, marshalled facts)), the
    lines of the first phase's rows moved by `first` (path -> old line -> new line) and
    those of the second phase's by `second`, and the definitions' `summaries` that
    changed (path -> (qualified name, kind, new line, summary): moves.summaries);
    `stale` (path -> marshalled facts the call graph was read from) replaces the table,
    and meta graph says whether the call graph is current (unless there is none). In
    one transaction, from the index as the maps were `read` from it (path -> digest of
    each file, and meta graph). False, with nothing written, when the index holds a
    line of one of them that its map lacks, or another writer changed those files or
    the call graph's state since (its maps would move lines twice): then the tree must
    be resolved again."""
    def move(conn: sqlite3.Connection) -> None:
        if changed_since(conn, *read):
            raise Unmapped
        for statement, rows in [*first_phase_moves(conn, first),
                                *second_phase_moves(conn, second)]:
            conn.executemany(statement, rows)
        conn.executemany(*summary_updates(summaries or {}))
        conn.execute("UPDATE meta SET value = ? WHERE key = ? AND value NOT IN (?, ?)",
                     (STALE if stale else "1", GRAPH, *WITHOUT_ROWS))
        record_files(conn, files, stale)

    return in_one_transaction(path, move)


def summary_updates(summaries: dict[str, list[tuple]]) -> tuple[str, list[tuple]]:
    """(statement, rows) that set the definitions' `summaries` (path -> (qualified
    name, kind, line, summary): moves.summaries), once their lines are moved."""
    return ("UPDATE definitions SET summary = ? WHERE file = ? AND qualname = ? "
            "AND kind = ? AND line = ?",
            [(summary, file, qualname, kind, line) for file, found in summaries.items()
             for qualname, kind, line, summary in found])


def in_one_transaction(path: str, write: Callable[[sqlite3.Connection], None]) -> bool:
    """Run `write` on the index at `path` in one transaction, taken before it reads
    anything (no writer between its checks and its writes); False, with nothing
    written, where it raises Unmapped."""
    with closing(sqlite3.connect(path, timeout=30, isolation_level=None)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            write(conn)
        except BaseException as error:
            conn.execute("ROLLBACK")
            if isinstance(error, Unmapped):
                return False
            raise
        conn.execute("COMMIT")
    return True


def record_files(conn: sqlite3.Connection, files: list[tuple], stale: dict[str, bytes]) -> None:
    """The rows of `files` read again ((path, module, mtime_ns, size, digest, marshalled
    facts)), and `stale` (path -> marshalled facts) as the whole of table `stale`."""
    conn.execute("DELETE FROM stale")
    conn.executemany("INSERT INTO stale VALUES (?, ?)", sorted(stale.items()))
    conn.executemany(
        "UPDATE files SET mtime_ns = ?, size = ?, digest = ? WHERE path = ?",
        [(mtime, size, digest, p) for p, _, mtime, size, digest, _ in files])
    conn.executemany("UPDATE facts SET facts = ? WHERE path = ?",
                     [(blob, p) for p, *_, blob in files])


def changed_since(conn: sqlite3.Connection, digests: dict[str, str],
                  graph: str | None) -> bool:
    """Whether the files' digests or meta graph are no longer as read."""
    files, in_files = _in_files(digests)
    now = dict(conn.execute(f"SELECT path, digest FROM files WHERE path {in_files}", files))
    state = conn.execute("SELECT value FROM meta WHERE key = ?", (GRAPH,)).fetchone()
    return now != digests or (state and state[0]) != graph


class Unmapped(Exception):
    """The maps do not apply: a line of a moved file that its map lacks, or files
    another writer changed since the maps were read from them."""


def _mover(moved: dict[str, dict[int, int]]):
    """`line(file, number)`: the line moved by `moved`, raising Unmapped where the map
    of a moved file lacks it."""
    def line(file: str | None, number: int | None) -> int | None:
        lines = moved.get(file) if file is not None else None
        if lines is None or number is None:
            return number
        if number not in lines:
            raise Unmapped
        return lines[number]
    return line


def _in_files(moved: dict) -> tuple[list[str], str]:
    files = sorted(moved)
    return files, f"IN ({', '.join('?' * len(files))})"


def first_phase_moves(conn: sqlite3.Connection, moved: dict[str, dict[int, int]]) -> list:
    """(statement, rows) that move every line of the first phase's tables that points
    into a moved file."""
    import json  # not on the query path: only writes need it

    if not moved:
        return []
    line = _mover(moved)
    files, in_files = _in_files(moved)

    def place(text: str | None) -> str | None:  # [name, file, line] as JSON
        if text is None:
            return None
        value = json.loads(text)
        places = value if value and isinstance(value[0], list) else [value]
        for item in places:
            item[2] = line(item[1], item[2])
        return json.dumps(value)

    return [
        ("UPDATE primitives SET line = ?, end_line = ? WHERE rowid = ?", [
            (line(f, a), line(f, b), rowid) for rowid, f, a, b in conn.execute(
                f"SELECT rowid, file, line, end_line FROM primitives WHERE file {in_files}",
                files)]),
        # A module's own row is at its first line, whatever moved: not a statement's.
        ("UPDATE definitions SET line = ?, end_line = ? WHERE rowid = ?", [
            (line(f, a), line(f, b), rowid) for rowid, f, a, b in conn.execute(
                "SELECT rowid, file, line, end_line FROM definitions WHERE kind != 'module'"
                f" AND file {in_files}", files)]),
        ("UPDATE rules SET line = ?, end_line = ?, function_line = ?, functions = ?, "
         "written = ?, overridden_by = ? WHERE rowid = ?", [
            (line(f, a), line(f, b), line(g, c), place(more), place(written), line(f, o),
             rowid)
            for rowid, f, a, b, g, c, more, written, o in conn.execute(
                "SELECT rowid, file, line, end_line, function_file, function_line, functions,"
                f" written, overridden_by FROM rules WHERE file {in_files} OR function_file "
                f"{in_files} OR functions IS NOT NULL OR written IS NOT NULL", files + files)]),
        ("UPDATE switched_off SET line = ?, end_line = ?, guard_line = ? WHERE rowid = ?", [
            (line(f, a), line(f, b), line(g, c), rowid)
            for rowid, f, a, b, g, c in conn.execute(
                "SELECT rowid, file, line, end_line, guard_file, guard_line FROM switched_off"
                f" WHERE file {in_files} OR guard_file {in_files}", files + files)]),
        ("UPDATE diagnostics SET message = ? WHERE rowid = ?", [
            (_moved_diagnostic(message, line), rowid)
            for rowid, message in conn.execute("SELECT rowid, message FROM diagnostics")]),
    ]


def second_phase_moves(conn: sqlite3.Connection, moved: dict[str, dict[int, int]]) -> list:
    """(statement, rows) that move every line of the call graph's and the messages'
    tables that points into a moved file."""
    if not moved:
        return []
    line = _mover(moved)
    files, in_files = _in_files(moved)
    definitions = f"SELECT id FROM definitions WHERE file {in_files}"
    return [
        ("UPDATE messages SET line = ? WHERE rowid = ?", [
            (line(f, a), rowid) for rowid, f, a in conn.execute(
                f"SELECT rowid, file, line FROM messages WHERE file {in_files}", files)]),
        ("UPDATE tests SET line = ? WHERE rowid = ?", [
            (line(f, a), rowid) for rowid, f, a in conn.execute(
                f"SELECT rowid, file, line FROM tests WHERE file {in_files}", files)]),
        ("UPDATE binds SET line = ? WHERE rowid = ?", [
            (line(f, a), rowid) for rowid, f, a in conn.execute(
                "SELECT b.rowid, d.file, b.line FROM binds b JOIN definitions d "
                f"ON d.id = b.definition_id WHERE d.id IN ({definitions})", files)]),
        ("UPDATE calls SET line = ?, fill_lines = ? WHERE rowid = ?", [
            (line(f, a), _moved_lines(lines, line, f), rowid)
            for rowid, f, a, lines in conn.execute(
                "SELECT c.rowid, d.file, c.line, c.fill_lines FROM calls c JOIN definitions d "
                f"ON d.id = c.caller WHERE c.caller IN ({definitions})", files)]),
    ]


def _moved_lines(lines: str | None, line, file: str) -> str | None:
    """`|`-separated lines of `file` (calls.fill_lines), each moved by `line`."""
    return lines and "|".join(str(line(file, int(each))) for each in lines.split("|"))


def _moved_diagnostic(message: str, line) -> str:
    """A diagnostic (`path:line: text`) with its line moved."""
    place = _DIAGNOSTIC_PLACE.match(message)
    if place is None:
        return message
    file, number = place.groups()
    return f"{file}:{line(file, int(number))}:{message[place.end():]}"


_DIAGNOSTIC_PLACE = re.compile(r"([^:\n]+):(\d+):")


def copy_for_root(source: str, target: str, root: str) -> None:
    """Copy the index `source` to `target` as the index of `root`, a tree that holds
    the same files (hard links): an update of `root` then parses only what differs."""
    with atomic.replacing(target) as tmp:
        with closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as old, \
                closing(sqlite3.connect(tmp)) as new:
            old.backup(new)
            with new:
                new.execute("UPDATE meta SET value = ? WHERE key = 'root'", (root,))


def counts(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """How many primitives, rules and diagnostics the index holds."""
    return tuple(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                 for table in ("primitives", "rules", "diagnostics"))


class Writing:
    """A whole index being written, in two steps so that the caller may let go of what
    the first took (the files' facts, marshalled) before it works out the second."""

    def __init__(self, conn: sqlite3.Connection):
        self._conn = conn
        self.done = False

    def files(self, files: list[tuple], dirs: list[tuple[str, int]]) -> None:
        """files: (path, module, mtime_ns, size, digest, marshalled facts) for every
        file; dirs: (path, mtime_ns) of every directory walked."""
        _files(self._conn, files, dirs)

    def finish(self, meta: dict[str, str], resolution: Resolution) -> None:
        """The index's meta and what resolving found: the last step."""
        _resolution(self._conn, meta, resolution)
        self.done = True


@contextmanager
def writing(path: str) -> Iterator[Writing]:
    """Write a whole index to `path` atomically: it replaces `path` only when the block
    ends without error and `finish` was called; else nothing is left of it."""
    with atomic.replacing(path) as tmp, closing(sqlite3.connect(tmp)) as conn:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.executescript(_SCHEMA)
        index = Writing(conn)
        yield index
        if not index.done:
            raise StoreError(f"the index {path} was left unfinished")
        conn.commit()


def in_memory(meta: dict[str, str], resolution: Resolution) -> sqlite3.Connection:
    """An index held in memory, with no files (a snapshot read back)."""
    conn = sqlite3.connect(":memory:")
    conn.executescript(_SCHEMA)
    _resolution(conn, meta, resolution)
    return conn


def _files(conn: sqlite3.Connection, files: list[tuple], dirs: list[tuple[str, int]]) -> None:
    conn.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?)", (row[:5] for row in files))
    conn.executemany("INSERT INTO facts VALUES (?, ?)", ((row[0], row[5]) for row in files))
    conn.executemany("INSERT INTO dirs VALUES (?, ?)", dirs)


def _resolution(conn: sqlite3.Connection, meta, resolution: Resolution) -> None:
    """Meta, what resolving found, and the indexes over it all."""
    first_phase(conn, meta, resolution)
    conn.executemany("INSERT INTO binds VALUES (?, ?, ?, ?, ?, ?)", resolution.binds)
    # Plain tuples: sqlite3 reads a tuple subclass (CallRow) item by item, 30% slower.
    conn.executemany("INSERT INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                     map(tuple, resolution.calls))
    conn.executemany("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?)", resolution.messages)
    conn.executemany("INSERT INTO tests VALUES (?, ?, ?, ?)", resolution.tests)
    conn.executemany("INSERT INTO rule_calls VALUES (?, ?, ?, ?, ?)", resolution.rule_calls)
    conn.executescript(_INDEXES)


FIRST_PHASE = ("meta", "primitives", "rules", "switched_off", "definitions", "public_paths",
               "imports", "diagnostics")  # the tables `first_phase` fills


def first_phase(conn: sqlite3.Connection, meta, resolution: Resolution) -> None:
    """Meta and the first phase of what resolving found, into empty tables."""
    conn.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
    conn.executemany("INSERT INTO primitives VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        (pid, p.name, p.variable, p.module, p.file, p.line, p.end_line, p.style,
         ",".join(p.aliases))
        for pid, p in enumerate(resolution.primitives)])
    conn.executemany(f"INSERT INTO rules VALUES ({', '.join('?' * 17)})", [
        (pid, seq, r.kind, r.file, r.line, r.end_line, r.via, r.platform,
         *(r.function or (None, None, None)), ",".join(r.platforms), _more_functions(r),
         r.condition, _written(r.written), r.keywords, r.overridden_by)
        for pid, p in enumerate(resolution.primitives) for seq, r in enumerate(p.rules)])
    conn.executemany(f"INSERT INTO switched_off VALUES ({', '.join('?' * 11)})", [
        (pid, o.kind, o.file, o.line, o.end_line, o.via, o.platform, ",".join(o.platforms),
         o.condition, o.guard_file, o.guard_line)
        for pid, p in enumerate(resolution.primitives) for o in p.switched_off])
    conn.executemany("INSERT INTO definitions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        (i, d.name, d.qualname, d.kind, d.module, d.file, d.line, d.end_line, d.summary,
         d.alias_of)
        for i, d in enumerate(resolution.definitions)])
    conn.executemany("INSERT INTO public_paths VALUES (?, ?)", [
        (public, i) for i, d in enumerate(resolution.definitions) for public in d.public])
    conn.executemany("INSERT INTO imports VALUES (?, ?)", resolution.imports)
    conn.executemany("INSERT INTO diagnostics VALUES (?)",
                     [(d,) for d in resolution.diagnostics])


def _more_functions(rule: RuleRecord) -> str | None:
    """The rule functions after the first (defbilinear's right transpose), as JSON."""
    more = rule.functions[1:]
    if not more:
        return None
    import json  # not on the query path: only writes need it

    return json.dumps([list(f) for f in more])


def _written(written: Place | None) -> str | None:
    """The name a rule was written as (a partial bound at module level), as JSON."""
    if written is None:
        return None
    import json  # not on the query path: only writes need it

    return json.dumps(list(written))

"""Carrying the call graph over in place (indexing/carry.py): an update that changes
the first phase, but keeps the call graph, writes the index it has instead of a whole
new one. The first phase's tables are filled again (`carry_in_place`), or, where the
edit only added functions to it, their rows are moved and the functions' definitions
put in among them (`add_in_place`); the call graph's rows stay, their definition and
primitive ids renumbered by SQL, their lines moved; the files read again get their
rows. One transaction, so readers see the old index or the new one."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from jaxmap.store import write

if TYPE_CHECKING:
    from jaxmap.store.records import Resolution

DEFINITION, PRIMITIVE = 0, 1  # which renumbering a column's ids take
# The call graph's columns that hold ids: table -> (column, its renumbering).
_IDS = {
    "calls": (("caller", DEFINITION), ("callee", DEFINITION)),
    "binds": (("primitive_id", PRIMITIVE), ("definition_id", DEFINITION)),
    "tests": (("primitive_id", PRIMITIVE),),
    "rule_calls": (("primitive_id", PRIMITIVE), ("rule", DEFINITION), ("callee", DEFINITION)),
}


def carry_in_place(path: str, update: tuple[list[tuple], list[tuple], list[tuple]],
                   meta: dict[str, str], resolution: Resolution,
                   renumbered: tuple[dict[int, int], dict[int, int]],
                   moved: dict[str, dict[int, int]], stale: dict[str, bytes],
                   read: tuple[dict[str, str], str | None]) -> bool:
    """Write into the index at `path` its `meta` and the first phase of `resolution`,
    in place of its own; its call graph's ids `renumbered` (old -> new id of each
    definition, and of each primitive) and the lines of its rows moved by `moved` (path
    -> old line -> new line); and the `update` of its files: rows of those read again
    ((path, module, mtime_ns, size, digest, marshalled facts)), new stats of those only
    touched ((path, mtime_ns, size)), and every directory's ((path, mtime_ns)). `stale`
    (path -> marshalled facts the call graph was read from) replaces the table. False,
    with nothing written, where a line is missing from its map, or another writer
    changed the files read again or the call graph's state since the index was `read`
    (path -> digest, meta graph): move_lines' checks."""
    def carry(conn: sqlite3.Connection) -> None:
        if write.changed_since(conn, *read):
            raise write.Unmapped
        indexes = _dropped_indexes(conn, (*write.FIRST_PHASE, *_IDS))
        for table in write.FIRST_PHASE:
            conn.execute(f"DELETE FROM {table}")
        write.first_phase(conn, meta, resolution)
        for table, columns in _IDS.items():
            _renumber(conn, table, columns, renumbered)
        for _, sql in indexes:
            conn.execute(sql)
        for statement, rows in write.second_phase_moves(conn, moved):
            conn.executemany(statement, rows)
        _record(conn, update, stale)

    return write.in_one_transaction(path, carry)


def add_in_place(path: str, update: tuple[list[tuple], list[tuple], list[tuple]],
                 graph: str, first: tuple[dict, dict, list[tuple]],
                 moved: dict[str, dict[int, int]], stale: dict[str, bytes],
                 read: tuple[dict[str, str], str | None]) -> tuple[int, int, int] | None:
    """As `carry_in_place`, where the first phase changed only by functions added
    (carry.added_definitions) and moved lines: its rows' lines moved and summaries set
    as `first` says ((path -> old line -> new line, path -> moves.summaries, the
    definitions added)), the definitions put in at their places and every id after
    them renumbered, the call graph's too; meta `graph` set. How many primitives,
    rules and diagnostics the index holds; None, with nothing written, where a line is
    missing from its map or another writer changed the index since it was `read`."""
    lines, summaries, added = first
    counts: list[int] = []

    def carry(conn: sqlite3.Connection) -> None:
        if write.changed_since(conn, *read):
            raise write.Unmapped
        for statement, rows in [*write.first_phase_moves(conn, lines),
                                *write.second_phase_moves(conn, moved)]:
            conn.executemany(statement, rows)
        conn.executemany(*write.summary_updates(summaries))
        if added:
            indexes = _dropped_indexes(conn, ("definitions", "public_paths", *_IDS))
            renumbered = _put_in(conn, added)
            for table, columns in _IDS.items():
                _renumber(conn, table, columns, (renumbered, {}))
            _renumber(conn, "public_paths", (("definition_id", DEFINITION),),
                      (renumbered, {}))
            for _, sql in indexes:
                conn.execute(sql)
        conn.execute("UPDATE meta SET value = ? WHERE key = ?", (graph, write.GRAPH))
        _record(conn, update, stale)
        counts.extend(write.counts(conn))

    if not write.in_one_transaction(path, carry):
        return None
    return counts[0], counts[1], counts[2]


def _dropped_indexes(conn: sqlite3.Connection, tables: tuple[str, ...]) -> list[tuple]:
    """(name, sql) of each index of `tables`, dropped: kept up to date row by row, as
    their rows are rewritten, they would cost the most."""
    indexes = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        f"AND tbl_name IN ({', '.join('?' * len(tables))})", tables).fetchall()
    for name, _ in indexes:
        conn.execute(f"DROP INDEX {name}")
    return indexes


def _put_in(conn: sqlite3.Connection, added: list[tuple]) -> dict[int, int]:
    """Put the `added` definitions ((file, how many of its old definitions come
    before it, its row but the id)) in at their places, the rows after them moved
    down; old id -> new id of each row moved."""
    files = sorted({file for file, _, _ in added})
    modules = dict(conn.execute(
        "SELECT file, id FROM definitions WHERE kind = 'module' AND file IN "
        f"({', '.join('?' * len(files))})", files))
    if len(modules) < len(files):
        raise write.Unmapped
    # the old id each goes before, and its order among those before the same id
    places = sorted((modules[file] + 1 + before, order, row)
                    for order, (file, before, row) in enumerate(added))
    start = places[0][0]
    after = conn.execute("SELECT * FROM definitions WHERE id >= ? ORDER BY id",
                         (start,)).fetchall()
    conn.execute("DELETE FROM definitions WHERE id >= ?", (start,))
    rows: list[tuple] = []
    renumbered: dict[int, int] = {}
    at = 0
    for old in after:
        while at < len(places) and places[at][0] <= old[0]:
            rows.append((start + len(rows), *places[at][2]))
            at += 1
        renumbered[old[0]] = start + len(rows)
        rows.append((start + len(rows), *old[1:]))
    for _, _, row in places[at:]:  # after the last row
        rows.append((start + len(rows), *row))
    conn.executemany(f"INSERT INTO definitions VALUES ({', '.join('?' * len(rows[0]))})",
                     rows)
    return renumbered


def _record(conn: sqlite3.Connection, update: tuple[list[tuple], list[tuple], list[tuple]],
            stale: dict[str, bytes]) -> None:
    """The `update` of the files (see carry_in_place), and table `stale`."""
    files, touched, dirs = update
    write.record_files(conn, files, stale)
    conn.executemany("UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?",
                     [(mtime, size, p) for p, mtime, size in touched])
    conn.execute("DELETE FROM dirs")
    conn.executemany("INSERT INTO dirs VALUES (?, ?)", dirs)


def _renumber(conn: sqlite3.Connection, table: str, columns: tuple,
              renumbered: tuple[dict[int, int], dict[int, int]]) -> None:
    """One UPDATE of the id `columns` of `table`: each id shifted as its run of ids is
    (`_shifts`), the rows below every shift left as they are."""
    assignments, lowest, values = [], [], []
    for column, kind in columns:
        shifts = _shifts(renumbered[kind])
        if not shifts:
            continue
        whens = " ".join(f"WHEN {column} BETWEEN ? AND ? THEN ?" for _ in shifts)
        assignments.append(f"{column} = {column} + CASE {whens} ELSE 0 END")
        values += [value for shift in shifts for value in shift]
        lowest.append((column, shifts[0][0]))
    if assignments:
        where = " OR ".join(f"{column} >= ?" for column, _ in lowest)
        conn.execute(f"UPDATE {table} SET {', '.join(assignments)} WHERE {where}",
                     values + [first for _, first in lowest])


def _shifts(renumbering: dict[int, int]) -> list[tuple[int, int, int]]:
    """(first, last, shift) of each run of consecutive old ids that `renumbering`
    shifts alike, but by nothing, in order."""
    runs: list[list[int]] = []
    for old in sorted(renumbering):
        shift = renumbering[old] - old
        if runs and runs[-1][1] == old - 1 and runs[-1][2] == shift:
            runs[-1][1] = old
        else:
            runs.append([old, old, shift])
    return [(first, last, shift) for first, last, shift in runs if shift]

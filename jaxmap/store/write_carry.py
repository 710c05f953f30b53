"""Carrying the call graph over in place (indexing/carry.py): an update that resolves
the first phase again, but keeps the call graph, writes the index it has instead of a
whole new one. The first phase's tables are filled again; the call graph's rows stay,
their definition and primitive ids renumbered by SQL, their lines moved; the files read
again get their rows. One transaction, so readers see the old index or the new one."""

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
    files, touched, dirs = update

    def carry(conn: sqlite3.Connection) -> None:
        if write.changed_since(conn, *read):
            raise write.Unmapped
        rewritten = (*write.FIRST_PHASE, *_IDS)
        indexes = conn.execute(  # kept up to date row by row, they would cost the most
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
            f"AND tbl_name IN ({', '.join('?' * len(rewritten))})", rewritten).fetchall()
        for name, _ in indexes:
            conn.execute(f"DROP INDEX {name}")
        for table in write.FIRST_PHASE:
            conn.execute(f"DELETE FROM {table}")
        write.first_phase(conn, meta, resolution)
        for table, columns in _IDS.items():
            _renumber(conn, table, columns, renumbered)
        for _, sql in indexes:
            conn.execute(sql)
        for statement, rows in write.second_phase_moves(conn, moved):
            conn.executemany(statement, rows)
        write.record_files(conn, files, stale)
        conn.executemany("UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?",
                         [(mtime, size, p) for p, mtime, size in touched])
        conn.execute("DELETE FROM dirs")
        conn.executemany("INSERT INTO dirs VALUES (?, ?)", dirs)

    return write.in_one_transaction(path, carry)


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

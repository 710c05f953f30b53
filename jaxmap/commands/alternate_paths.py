"""Where a feature leaves its usual path (orientation.ALTERNATE_PATHS): the function
that runs the alternate mode and the call that dispatches to it, for REPO-MAP.md."""

from __future__ import annotations

from typing import NamedTuple

from jaxmap.knowledge.orientation import ALTERNATE_PATHS


class AlternatePath(NamedTuple):
    mode: str
    entry: tuple[str, str, int]  # (qualname, file, line) of the function that runs it
    dispatcher: tuple[str, str, int]  # the function that dispatches to it
    dispatch_line: int | None  # the line of that call; None when the index has no edge


def alternate_paths(index) -> tuple[AlternatePath, ...]:
    rows = []
    for mode, entry, dispatcher in ALTERNATE_PATHS:
        entry_ids, dispatcher_ids = index.definition_ids(entry), index.definition_ids(dispatcher)
        entry_at, dispatcher_at = index.place(entry), index.place(dispatcher)
        if not entry_at or not dispatcher_at:
            continue
        lines = sorted(line for _caller, callee, _text, _status, line
                       in index.callees(dispatcher_ids) if callee in entry_ids)
        rows.append(AlternatePath(mode, (entry, *entry_at), (dispatcher, *dispatcher_at),
                                  lines[0] if lines else None))
    return tuple(rows)

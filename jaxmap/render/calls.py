"""Output of the call-graph commands (`binds`, `callers`, `calls`) and of `coverage`:
text, JSON and CSV, as pure functions of the answers."""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    PathFn = Callable[[str], str]

_HEADINGS = {"binds": "{n} {function} {reach} {targets}",
             "callers": "{n} {caller} of {targets}",
             "calls": "{n} {callee} of {targets}"}
_MARKS = {"unresolved": "? ", "external": "~ "}
_BODIES = {"module": " (top level)", "class": " (class body)"}  # callers that are not functions
_NOTES = {"callers": "(? an unresolved call whose text ends with this name: it may be to it)",
          "calls": "(~ a call outside the tree; ? a call the resolver could not name)"}


def call_answer(answer, path: PathFn) -> str:
    """A callgraph.CallAnswer: a heading, then one line per answer with its place and
    chain; unresolved calls last, marked."""
    targets = ", ".join(answer.targets)
    one = len(answer.found) == 1
    lines = [_HEADINGS[answer.direction].format(
        n=len(answer.found) or "no", targets=targets, reach="reaches" if one else "reach",
        **{word: word if one else word + "s" for word in ("function", "caller", "callee")})]
    for r in answer.found:
        mark = _MARKS.get(r.kind, "  ")
        chain = " -> ".join(r.chain)
        where = _BODIES.get(r.kind, "") if answer.direction == "callers" else ""
        lines.append(f"{mark}{r.label}{where}  {path(r.file)}:{r.line}  [{chain}]")
    if answer.direction in _NOTES and any(r.kind in _MARKS for r in answer.found):
        lines.append(_NOTES[answer.direction])
    return "\n".join(lines)


def call_document(root: str, answer, path: PathFn) -> str:
    """A callgraph.CallAnswer as JSON."""
    return json.dumps({"root": str(root), "query": answer.query,
                       "direction": answer.direction, "targets": list(answer.targets),
                       "count": len(answer.found),
                       "found": [{"name": r.label, "kind": r.kind, "file": path(r.file),
                                  "line": r.line, "depth": r.depth, "public": r.public,
                                  "chain": list(r.chain)} for r in answer.found]}, indent=1)


def coverage(matrix, fmt: str) -> str:
    """A coverage.Coverage as a table, JSON or CSV."""
    if fmt == "json":
        return json.dumps({"kinds": list(matrix.kinds), "totals": matrix.totals,
                           "primitives": len(matrix.rows),
                           "rows": [{"name": name, "module": module, "rules": counts}
                                    for name, module, counts in matrix.rows]}, indent=1)
    header = ["primitive", "module", *matrix.kinds]
    body = [[name, module, *(counts.get(k, 0) for k in matrix.kinds)]
            for name, module, counts in matrix.rows]
    footer = ["total", f"{len(matrix.rows)} primitives",
              *(matrix.totals.get(k, 0) for k in matrix.kinds)]
    if fmt == "csv":
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows([header, *body, footer])
        return out.getvalue().rstrip("\n")
    widths = [max(len(str(row[i])) for row in [header, *body, footer])
              for i in range(len(header))]
    return "\n".join("  ".join(str(cell).ljust(w) for cell, w in zip(row, widths)).rstrip()
                     for row in [header, *body, footer])

"""Output of the call-graph commands (`binds`, `callers`, `calls`) and of `coverage`:
text, JSON and CSV, as pure functions of the answers."""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Callable

    PathFn = Callable[[str], str]

_HEADINGS = {"binds": "{n} functions reach {targets}",
             "callers": "{n} callers of {targets}",
             "calls": "{n} callees of {targets}"}


def call_answer(answer, path: PathFn) -> str:
    """A callgraph.CallAnswer: a heading, then one line per answer with its place and
    chain; unresolved calls last, marked."""
    targets = ", ".join(answer.targets)
    lines = [_HEADINGS[answer.direction].format(n=len(answer.found), targets=targets)]
    if not answer.found:
        lines[0] = f"no {'callees' if answer.direction == 'calls' else 'callers'} of " \
                   f"{targets}" if answer.direction != "binds" else \
                   f"no function reaches {targets}"
    for r in answer.found:
        mark = {"unresolved": "? ", "external": "~ "}.get(r.kind, "  ")
        chain = " -> ".join(r.chain)
        lines.append(f"{mark}{r.label}  {path(r.file)}:{r.line}  [{chain}]")
    if any(r.kind == "unresolved" for r in answer.found):
        lines.append("(? a call the resolver could not name: it may or may not be this one)")
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

"""Comma-separated values: a row a primitive, for spreadsheets and `cut`."""

from __future__ import annotations

import csv
import io

from jaxmap.render.text import coverage_cells
from jaxmap.render.view import View


def coverage(matrix, view: View) -> str:
    """A coverage.Coverage: the header, then a row a primitive. The totals, which
    are no primitive's, are left to the table and the JSON."""
    header, body, _totals = coverage_cells(matrix)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *body])
    return out.getvalue().rstrip("\n")

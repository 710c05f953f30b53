"""Markers of the minijax fixture tree (tests/fixtures/minijax).

Expected lines are never hard-coded: registration statements in the fixture carry a
trailing `# mark: KEY` comment, and `mark(KEY)` finds its (file, line).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

ROOT = Path(__file__).parent / "fixtures" / "minijax"

_MARK = re.compile(r"#\s*mark:\s*(\S+)\s*$")


@functools.cache
def marks() -> dict[str, tuple[str, int]]:
    """Every marker in the fixture: KEY -> (root-relative POSIX path, 1-based line)."""
    found: dict[str, tuple[str, int]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = _MARK.search(text)
            if match:
                key = match.group(1)
                assert key not in found, f"marker {key} used twice"
                found[key] = (relative, number)
    return found


def mark(key: str) -> tuple[str, int]:
    return marks()[key]


def source_lines(relative: str) -> list[str]:
    return (ROOT / relative).read_text(encoding="utf-8").splitlines()

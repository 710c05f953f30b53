"""CONTRIBUTING.md is held to the code: each package's and top-level module's job is its
docstring's opening paragraph, word for word, and every path it names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "jaxmap"
PAGE = (REPO / "CONTRIBUTING.md").read_text()
# A backticked name that is a path: it has a folder in it or a file suffix.
_PATH = re.compile(r"`([\w./-]+(?:/|\.(?:py|md|j2|scm|toml|cc)))`")
# Every package of Python modules (indexing/patterns/ holds only queries), and every
# top-level module but the package's own and `python -m jaxmap`'s.
_DOCUMENTED = sorted([p for p in PACKAGE.rglob("__init__.py")
                      if any(m.name != "__init__.py" for m in p.parent.glob("*.py"))]
                     + [p for p in PACKAGE.glob("*.py")
                        if p.name not in ("__init__.py", "__main__.py")])


def _words(text: str) -> str:
    return " ".join(text.split())


def _summary(path: Path) -> str:
    """A module's docstring up to its first blank line."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return _words(doc.split("\n\n")[0])


@pytest.mark.parametrize("path", _DOCUMENTED, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_each_layer_is_described_by_its_own_docstring(path):
    summary = _summary(path)
    assert summary, f"{path} has no docstring"
    first_line = _words(ast.get_docstring(ast.parse(path.read_text())).splitlines()[0])
    named = path.relative_to(REPO).as_posix().removesuffix("__init__.py")
    row = next((line for line in PAGE.splitlines() if line.startswith(f"| `{named}` |")), "")
    assert row, f"CONTRIBUTING.md has no row for {named}"
    assert first_line in _words(row) and summary in _words(row), \
        f"CONTRIBUTING.md's row for {named} is not its docstring's: {summary}"


def test_every_path_it_names_exists():
    named = set(_PATH.findall(PAGE))
    assert named, "CONTRIBUTING.md names no paths"
    # Layer names (`store/`, `cli.py`) are short for jaxmap/'s; others are the repo's.
    missing = sorted(p for p in named
                     if not (REPO / p).exists() and not (PACKAGE / p).exists())
    assert missing == []


def test_the_readme_links_to_it():
    assert "(CONTRIBUTING.md)" in (REPO / "README.md").read_text()

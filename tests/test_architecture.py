"""The house rules that keep jaxmap fast and layered, checked."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxmap import parse

PACKAGE = Path(__file__).resolve().parent.parent / "jaxmap"
# Heavy or special imports, and the only modules allowed to make them.
ALLOWED = {
    "tree_sitter": {"parse.py"},
    "tree_sitter_python": {"parse.py"},
    "networkx": {"graph.py"},
    "jax": {"verify.py"},
    "click": {"cli.py"},
    "jinja2": {"templating.py"},  # jaxmap/scaffold/templating.py
}


def _imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_heavy_imports_stay_in_their_module(path):
    for module in _imported_modules(path) & set(ALLOWED):
        assert path.name in ALLOWED[module], f"{path.name} imports {module}"


@pytest.mark.parametrize("name", parse.QUERY_NAMES)
def test_every_query_compiles(name):
    import tree_sitter

    query = tree_sitter.Query(parse.language(), parse.query_source(name))
    assert query.pattern_count > 0


def test_locate_path_imports_nothing_heavy(installed_index):
    code = ("import sys, io, contextlib, click\n"
            "before = set(sys.modules)\n"
            "from jaxmap.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['locate', 'psum']) == 0\n"
            "heavy = ('tree_sitter', 'networkx', 'jax', 'multiprocessing', 'pathlib')\n"
            "print(','.join(m for m in heavy if m in set(sys.modules) - before))\n")
    env = {**os.environ, "JAXMAP_CACHE_DIR": os.path.dirname(installed_index.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout.strip()
    assert out == ""


def test_import_jaxmap_has_no_side_effects():
    out = subprocess.run([sys.executable, "-c", "import sys, jaxmap; "
                          "print(sorted(m for m in sys.modules if m.startswith('jaxmap')))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "['jaxmap']"

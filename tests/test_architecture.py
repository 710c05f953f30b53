"""The house rules that keep jaxmap fast and layered, checked."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jaxmap.indexing import parse

PACKAGE = Path(__file__).resolve().parent.parent / "jaxmap"
# Heavy or special imports, and the only modules allowed to make them.
ALLOWED = {
    "tree_sitter": {"parse.py"},
    "tree_sitter_python": {"parse.py"},
    "networkx": {"central.py"},
    "jax": {"verify.py"},
    "click": {"cli.py"},
    "jinja2": {"templating.py"},  # jaxmap/scaffold/templating.py
    "mcp": {"server.py"},  # the optional extra jaxmap[mcp]
    "anyio": {"server.py"},
    "pygls": {"lsp.py"},  # the optional extra jaxmap[lsp]
    "lsprotocol": {"lsp.py"},
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
            "heavy = ('tree_sitter', 'networkx', 'jax', 'multiprocessing', 'pathlib', 'json',"
            " 'dataclasses')\n"
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


def _package_files():
    return [(path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text()))
            for path in sorted(PACKAGE.rglob("*.py"))]


def _calls(tree: ast.AST):
    """(receiver name or None, function name, call node) of every call."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                receiver = func.value.id if isinstance(func.value, ast.Name) else None
                yield receiver, func.attr, node
            elif isinstance(func, ast.Name):
                yield None, func.id, node


_SQL = re.compile(r"\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|PRAGMA)\b")


def test_only_the_read_api_and_the_store_run_sql():
    """store/read.py (with its parts, store/read_*.py) reads the index, store/write.py
    (with its parts, store/write_*.py) writes it; nothing else holds a connection."""
    offenders = []
    for name, tree in _package_files():
        if name in ("store/read.py", "store/write.py") \
                or name.startswith(("store/read_", "store/write_")):
            continue
        offenders += [f"{name}:{node.lineno} {func}" for receiver, func, node in _calls(tree)
                      if func in ("execute", "executemany", "executescript")
                      or (receiver, func) == ("sqlite3", "connect")]
        offenders += [f"{name}:{node.lineno} SQL text" for node in ast.walk(tree)
                      if isinstance(node, ast.Constant) and isinstance(node.value, str)
                      and _SQL.match(node.value)]
    assert offenders == []


def test_only_the_cli_writes_to_the_terminal():
    offenders = [f"{name}:{node.lineno}" for name, tree in _package_files()
                 for receiver, func, node in _calls(tree)
                 if func == "print" and receiver is None
                 or (receiver, func) in (("click", "echo"), ("click", "secho"))
                 and name != "cli.py"]
    assert offenders == []


def test_the_cli_formats_nothing_itself():
    """What a command prints comes from render/; cli.py's own f-strings are the
    messages of errors it raises and of the errors main() reports."""
    tree = ast.parse((PACKAGE / "cli.py").read_text())
    allowed = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) or isinstance(node, ast.FunctionDef) and node.name == "main":
            allowed.update(id(inner) for inner in ast.walk(node))
    strays = [node.lineno for node in ast.walk(tree)
              if isinstance(node, ast.JoinedStr) and id(node) not in allowed]
    strays += [node.lineno for _, func, node in _calls(tree) if id(node) not in allowed
               and func == "join" and isinstance(node.func.value, ast.Constant)]
    assert strays == []
    assert "json" not in _imported_modules(PACKAGE / "cli.py")


def test_only_render_builds_multiline_text():
    """Output text is render/'s; scaffold/ builds the files it generates, parse.py the
    source of its queries, explain_formats.py and explain_paste.py the user's pasted
    tracebacks rewritten as Python prints them (input, never output)."""
    own_text = ("indexing/parse.py", "commands/explain_formats.py", "commands/explain_paste.py")
    offenders = [f"{name}:{node.lineno}" for name, tree in _package_files()
                 if not name.startswith(("render/", "scaffold/")) and name not in own_text
                 for _, func, node in _calls(tree)
                 if func == "join" and isinstance(node.func.value, ast.Constant)
                 and node.func.value.value == "\n"]
    assert offenders == []


def _tag_checks(path: Path) -> list[str]:
    """Places outside facts.py that spell a fact tag: a string compared with item 0
    (`x[0] == "prim"`), or a tuple display that starts with a string (`("sym", n)`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Subscript) \
                and isinstance(node.left.slice, ast.Constant) and node.left.slice.value == 0 \
                and any(isinstance(c, ast.Constant) and c.value in _TAGS
                        for c in node.comparators):
            found.append(f"{path.name}:{node.lineno}")
        if isinstance(node, ast.Tuple) and node.elts and isinstance(node.elts[0], ast.Constant) \
                and isinstance(node.elts[0].value, str) and node.elts[0].value in _TAGS:
            found.append(f"{path.name}:{node.lineno}")
    return found


def _fact_tags() -> set[str]:
    from jaxmap.indexing import facts

    tags = {value for name, value in vars(facts).items()
            if name.isupper() and isinstance(value, str)}
    return tags | set(facts.EVENTS) | set(facts.BLOCKS) | {facts.UNKNOWN[0]}


_TAGS = _fact_tags()
# extract.py and the modules it reads values and call texts with, and the resolver.
_FACT_READERS = [*(PACKAGE / "indexing" / name for name in ("extract.py", "nodevalues.py",
                                                          "calltext.py")),
                 *sorted((PACKAGE / "indexing/resolve").glob("*.py")),
                 *sorted((PACKAGE / "flow").glob("*.py"))]


@pytest.mark.parametrize("path", _FACT_READERS, ids=lambda p: p.name)
def test_only_the_schema_module_spells_fact_tags(path):
    assert _tag_checks(path) == []


# Which layers each layer may import (module level and inside functions alike). The
# top-level modules are named by their stem; a package by its folder.
_LAYERS = {
    "errors": set(), "models": set(), "roots": {"errors"},
    "knowledge": {"models", "errors"},
    "store": {"models", "knowledge", "roots", "errors", "jaxmap"},
    "indexing": {"flow", "store", "knowledge", "models", "roots", "errors"},
    "flow": {"indexing", "store", "knowledge", "models", "roots", "errors"},
    "commands": {"store", "knowledge", "models", "roots", "errors"},
    "render": {"knowledge", "models", "errors"},
    "session": {"indexing", "store", "errors"},
    "served": {"session", "indexing", "store", "errors"},
    "scaffold": {"session", "commands", "render", "store", "knowledge", "models", "roots",
                 "errors"},
    "revisions": {"session", "commands", "store", "roots", "errors"},
}


def _layer(module: str) -> str:
    """`jaxmap.flow.calls` -> `build`; `jaxmap.cli` -> `cli`; `jaxmap` -> `jaxmap`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _jaxmap_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import of a jaxmap module, at any depth; `from jaxmap
    import x` names each x."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "jaxmap":
            found += [(node.lineno, f"jaxmap.{a.name}") for a in node.names] \
                if node.module == "jaxmap" else [(node.lineno, node.module)]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names
                      if a.name.split(".")[0] == "jaxmap"]
    return found


@pytest.mark.parametrize("layer", sorted(_LAYERS))
def test_layers_import_only_what_is_below_them(layer):
    offenders = []
    for name, tree in _package_files():
        if _layer("jaxmap." + name.removesuffix(".py").replace("/", ".")) != layer:
            continue
        for line, module in _jaxmap_imports(tree):
            target = _layer(module)
            if target != layer and target not in _LAYERS[layer] | {"__version__"}:
                offenders.append(f"{name}:{line} imports {module}")
    assert offenders == []


def test_every_package_says_what_lives_there_and_what_it_may_import():
    for package in sorted(p.parent for p in PACKAGE.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
        if package.name in _LAYERS:
            assert "import" in doc, package.name
        assert doc, package.name


def test_every_package_is_installed():
    # An editable install and the tests find every folder; `pip install .` copies only
    # the packages pyproject.toml lists (jaxmap.revisions was once left out).
    import tomllib

    with open(PACKAGE.parent / "pyproject.toml", "rb") as handle:
        listed = set(tomllib.load(handle)["tool"]["setuptools"]["packages"])
    found = {".".join(init.parent.relative_to(PACKAGE.parent).parts)
             for init in PACKAGE.rglob("__init__.py")}
    assert found - listed == set()

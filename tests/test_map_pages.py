"""The map's pages beside REPO-MAP.md (public names and config options, what each
public function binds, user-facing messages) and its core classes and alternate
paths, on a small tree written here; the committed pages are kept fresh by
test_repomap.py."""

from __future__ import annotations

import json
import re
import textwrap

import pytest

from jaxmap.cli import main
from jaxmap.commands import public_names, repomap
from jaxmap.render import map_pages, markdown
from jaxmap.session import open_index

TREE = {
    "jax/__init__.py": """\
        from jax._src.api import vmap as vmap
        from jax._src.api import public_sum as public_sum
        from jax._src.api import apply as apply
        from jax._src.config import Mode as Mode
        from jax._src.config import TABLE as TABLE
        from jax import lax as lax
        """,
    "jax/lax/__init__.py": "from jax._src.lax import cumsum as cumsum\n",
    "jax/_src/__init__.py": "",
    "jax/_src/core.py": """\
        class Primitive:
          def __init__(self, name):
            self.name = name
          def bind(self, *args):
            return args

        class Trace:
          pass
        """,
    "jax/_src/interpreters/__init__.py": "",
    "jax/_src/interpreters/batching.py": """\
        from jax._src import core

        class BatchTrace(core.Trace):
          pass
        """,
    "jax/_src/config.py": """\
        import enum

        class Mode(enum.Enum):
          FAST = 1

        TABLE = {"a": 1}

        def bool_state(name, default):
          return default

        enable_x64 = bool_state(
            name='jax_enable_x64',
            default=False)

        def string_state(name, default):
          return default

        def set_enable_x64_state(state):
          pass

        set_enable_x64_state(enable_x64)
        string_state(
            name='jax_debug_log_modules',
            default='')
        """,
    "jax/_src/lax.py": """\
        from jax._src import core

        cumsum_p = core.Primitive('cumsum')
        reduce_sum_p = core.Primitive('reduce_sum')

        def cumsum(x):
          return cumsum_p.bind(x)

        def _reduce(x):
          return reduce_sum_p.bind(x)
        """,
    "jax/_src/api.py": """\
        from jax._src import lax

        def _check_axes(in_axes):
          if in_axes is None:
            raise TypeError(f"vmap in_axes must be an int, but got {in_axes}.")
          if in_axes == ():
            raise AssertionError("an internal state that users never see")

        def vmap(f, in_axes=0):
          _check_axes(in_axes)
          return f

        def public_sum(x):
          return lax._reduce(x)

        def _unreached():
          raise ValueError("a message that nothing public calls")

        def apply(f, x):
          return f(x)

        def _cumsum_by_hand(x):
          return apply(lax.cumsum, x)
        """,
}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("tree")
    for path, text in TREE.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text))
    return root


@pytest.fixture(scope="module")
def data(root, tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JAXMAP_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        with open_index(root, graph=True) as idx:
            yield repomap.gather(idx, links=False)


@pytest.fixture(scope="module")
def pages(data):
    return map_pages.pages(data)


def test_every_page_is_written(pages):
    assert set(pages) == set(map_pages.PAGES)
    assert all(text.startswith(map_pages.HEADER + "\n# ") for text in pages.values())


def test_public_names_that_are_not_functions_with_kinds(pages):
    names = pages["NAMES"]
    assert re.search(r"^jax\.Mode  enum  jax/_src/config\.py:3$", names, re.M)
    assert re.search(r"^jax\.TABLE  value  jax/_src/config\.py:6$", names, re.M)
    assert re.search(r"^jax\.lax  namespace  jax/lax/__init__\.py:1$", names, re.M)
    assert not re.search(r"^jax\.vmap  ", names, re.M)  # a function: not a name here


def test_config_options_are_read_off_their_definition(pages):
    assert re.search(r"^jax_enable_x64  enable_x64  jax/_src/config\.py:11$", pages["NAMES"],
                     re.M)


def test_binds_lists_what_a_public_function_binds_with_calls_down(pages):
    binds = pages["BINDS"]
    assert re.search(r"^jax\.lax\.cumsum  jax/_src/lax\.py:6  cumsum\(0\)$", binds, re.M)
    assert re.search(r"^jax\.public_sum  jax/_src/api\.py:13  reduce_sum\(1\)$", binds, re.M)
    assert not re.search(r"^jax\.apply  ", binds, re.M)  # it calls what it is handed


def test_messages_name_the_check_and_the_public_functions_reaching_it(pages, data):
    messages = pages["MESSAGES"]
    assert re.search(r"^TypeError  vmap in_axes must be an int, but got \{\}\.  "
                     r"jax/_src/api\.py:5  _check_axes  <- jax\.vmap$", messages, re.M)
    assert "nothing public calls" not in messages
    assert "users never see" not in messages
    assert {s.page for s in data.messages} == {""}  # no kernel or numerics module here
    assert pages["MESSAGES-KERNELS"].endswith("\n\nNothing of this kind in this tree.\n")


def test_contents_give_the_line_each_section_starts_on(pages, data):
    for text in [pages["NAMES"], pages["BINDS"], pages["MESSAGES"],
                 markdown.primitives_page(data)]:
        assert "Contents (section: the line it starts on):" in text
        lines = text.splitlines()
        for title, start in re.findall(r"^- \[(.+)\]\(#[^)]*\): line (\d+)$", text, re.M):
            assert lines[int(start) - 1] == f"## {title}"


def test_core_classes_name_what_extends_them(data):
    text = markdown.repo_map(data)
    section = text.split("## Core classes\n", 1)[1].split("\n## ", 1)[0]
    assert ("- `core.Trace` `jax/_src/core.py:7`: an interpreter: how primitives are "
            "processed under one transformation; extended by:\n"
            "  - `batching.BatchTrace` `jax/_src/interpreters/batching.py:3`") in section


def test_cli_writes_the_pages_beside_the_map(tmp_path, capsys, root):
    target = tmp_path / "MAP.md"
    assert main(["repo-map", "--root", str(root), "-o", str(target)]) == 0
    written = {p.name for p in tmp_path.iterdir()}
    assert {"MAP.md", "MAP-PRIMITIVES.md", "MAP-NAMES.md", "MAP-BINDS.md",
            "MAP-MESSAGES.md", "MAP-MESSAGES-NUMERICS.md", "MAP-MESSAGES-KERNELS.md"} \
        == written
    assert "[MAP-NAMES.md](MAP-NAMES.md)" in target.read_text()
    capsys.readouterr()
    (tmp_path / "MAP-BINDS.md").write_text("mine\n")
    assert main(["repo-map", "--root", str(root), "-o", str(target)]) == 2  # not jaxmap's
    assert "MAP-BINDS.md exists; pass --force" in capsys.readouterr().err
    assert (tmp_path / "MAP-BINDS.md").read_text() == "mine\n"


def test_locate_finds_a_config_option_by_the_name_config_update_takes(
        root, tmp_path, monkeypatch, capsys):
    from jaxmap.cli import main

    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path))
    assert main(["locate", "jax_enable_x64", "--root", str(root)]) == 0
    assert "jax._src.config.enable_x64  jax/_src/config.py:11" in capsys.readouterr().out
    assert main(["locate", "JAX_ENABLE_X64", "--root", str(root)]) == 0  # the environment's
    assert "jax._src.config.enable_x64  jax/_src/config.py:11" in capsys.readouterr().out
    assert main(["locate", "jax_no_such_option", "--root", str(root)]) == 1


def test_locate_finds_an_option_no_variable_holds_at_its_defining_call(
        root, tmp_path, monkeypatch, capsys):
    """`string_state(name='jax_debug_log_modules', ...)` as a statement: no variable
    holds its state, so the call is where it is defined."""
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path))
    for spelled in ("jax_debug_log_modules", "JAX_DEBUG_LOG_MODULES"):
        assert main(["locate", spelled, "--root", str(root)]) == 0
        out = capsys.readouterr().out
        assert "config option jax_debug_log_modules  jax/_src/config.py:22  (defined by " \
               "`string_state(`; no variable holds its state)" in out, out
    assert main(["locate", "jax_debug_log_modules", "--root", str(root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["config_options"] == [
        {"name": "jax_debug_log_modules", "file": "jax/_src/config.py", "line": 22}]
    # a kind asked for is none of an option's
    assert main(["locate", "jax_debug_log_modules", "--kind", "variable",
                 "--root", str(root)]) == 1
    # a call naming no option (`set_enable_x64_state(enable_x64)`) defines none
    with open_index(root) as idx:
        assert public_names.unheld_options(idx) == (public_names.ConfigOption(
            "jax_debug_log_modules", "", "jax/_src/config.py", 22),)

"""`path A B`: the shortest call chains between two functions, or from a function to a
primitive's `.bind`, with the line of each call."""

from __future__ import annotations

import json

import pytest

from jaxmap.commands.path import path
from jaxmap.errors import ArgumentError, NotFound
from jaxmap.render import json as render_json
from jaxmap.render import text as render_text
from jaxmap.render.view import View
from jaxmap.session import open_index

_TREE = """\
from jax._src import core
p_p = core.Primitive('p')

def bottom(x):
  return p_p.bind(x)

def left(x):
  return bottom(x)

def right(x):
  y = x
  return bottom(y)

def top(x):
  if x:
    return left(x)
  return right(x)

def longer(x):
  return top(x)

class Holder:
  value = bottom(1)

def via_class(x):
  return Holder()
"""


@pytest.fixture
def index(tmp_path):
    (tmp_path / "m.py").write_text(_TREE)
    with open_index(str(tmp_path), graph=True) as found:
        yield found


def test_every_shortest_chain_with_the_line_of_each_call(index):
    answer = path(index, "top", "bottom")
    assert [[(s.caller, s.callee, s.line) for s in steps] for steps in answer.chains] == [
        [("m.top", "m.left", 16), ("m.left", "m.bottom", 8)],
        [("m.top", "m.right", 17), ("m.right", "m.bottom", 12)]]
    text = render_text.path_chains(answer, View(index.root)).splitlines()
    assert text[0] == "2 shortest call chains from m.top to m.bottom"
    assert text[1:4] == ["  m.top", "    -calls-> m.left  m.py:16",
                         "    -calls-> m.bottom  m.py:8"]


def test_a_chain_to_a_primitive_ends_at_its_bind(index):
    answer = path(index, "longer", "p_p", most=1)
    [steps] = answer.chains
    assert [s.callee for s in steps] == ["m.top", "m.left", "m.bottom", "p_p.bind"]
    assert (steps[-1].file, steps[-1].line) == ("m.py", 5)
    document = json.loads(render_json.path_document(answer, View(index.root)))
    assert document["target"] == ["p_p.bind"] and document["count"] == 1
    assert document["chains"][0][-1] == {"caller": "m.bottom", "callee": "p_p.bind",
                                         "how": "binds", "file": "m.py", "line": 5}


def _refused(index, source: str, target: str) -> str:
    answer = path(index, source, target)
    assert answer.chains == () and render_text.path_chains(answer, View(index.root)) == ""
    return render_text.path_refusal(answer)


def test_no_chain_says_so(index):
    assert _refused(index, "bottom", "top") == "no call chain from bottom to top within 12 steps"
    assert _refused(index, "via_class", "bottom").startswith(  # a class body does not run
        "no call chain from via_class to bottom")
    with pytest.raises(NotFound, match="no function named 'no_such_function'"):
        path(index, "top", "no_such_function")
    with pytest.raises(NotFound, match="no primitive named 'no_such_p'"):  # a `_p` name
        path(index, "top", "no_such_p")


def test_the_cli_and_mcp_answer_path(tmp_path, capsys):
    from jaxmap import tools
    from jaxmap.cli import main
    from jaxmap.session import Session

    (tmp_path / "m.py").write_text(_TREE)
    assert main(["path", "longer", "p_p", "--root", str(tmp_path), "--most", "1"]) == 0
    assert "    -binds-> p_p.bind  m.py:5" in capsys.readouterr().out.splitlines()
    assert main(["path", "bottom", "top", "--root", str(tmp_path)]) == 1
    assert "no call chain from bottom to top" in capsys.readouterr().err
    with Session(str(tmp_path)) as session:
        document = json.loads(tools.call(session, "path", {"source": "top", "target": "bottom"}))
    assert document["count"] == 2 and document["chains"][0][0]["callee"] == "m.left"


def test_a_call_the_index_names_two_ways_is_one_chain(tmp_path):
    # `wrap(bottom)(x)`: bottom handed to wrap, and called through what wrap returns.
    (tmp_path / "m.py").write_text(
        "def bottom(x):\n  return x\n"
        "def wrap(f):\n  return f\n"
        "def top(x):\n  return wrap(bottom)(x)\n")
    with open_index(str(tmp_path), graph=True) as index:
        answer = path(index, "top", "bottom")
    assert [[(s.caller, s.callee, s.line) for s in steps] for steps in answer.chains] == [
        [("m.top", "m.bottom", 6)]]


def test_a_target_that_also_names_the_source_is_read_as_its_other_functions(tmp_path):
    (tmp_path / "a.py").write_text("import b\n\ndef cumsum(x):\n  return b.cumsum(x)\n")
    (tmp_path / "b.py").write_text("def cumsum(x):\n  return x\n")
    with open_index(str(tmp_path), graph=True) as index:
        answer = path(index, "a.cumsum", "cumsum")
        assert answer.target == ("b.cumsum",)
        assert [[s.callee for s in steps] for steps in answer.chains] == [["b.cumsum"]]


def test_a_target_naming_only_the_source_is_refused(index):
    with pytest.raises(ArgumentError, match=r"^top and m.top are the same function \(m.top\)"):
        path(index, "top", "m.top")


def test_a_primitive_source_is_refused_in_one_line(index, capsys):
    from jaxmap.cli import main

    assert main(["path", "p_p", "top", "--root", str(index.root)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("jaxmap: error: p_p is a primitive, but path's SOURCE must be a function "
                   "(`jaxmap binds p_p` lists the functions that reach it)")


def test_sources_that_share_a_name_are_told_apart(tmp_path):
    # `pkg.gmm` is both the module pkg/gmm.py and the function the package exports.
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from pkg.ops import gmm as gmm\n")
    (tmp_path / "pkg" / "gmm.py").write_text("def kernel(x):\n  return x\n")
    (tmp_path / "pkg" / "ops.py").write_text(
        "from pkg.gmm import kernel\n\ndef gmm(x):\n  return kernel(x)\n")
    with open_index(str(tmp_path), graph=True) as index:
        answer = path(index, "pkg.gmm", "kernel")
    assert answer.source == ("pkg.gmm (module)", "pkg.gmm (function pkg.ops.gmm)")
    assert [[s.callee for s in steps] for steps in answer.chains] == [["pkg.gmm.kernel"]]


def test_the_index_names_each_decorated_defs_edge_at_its_decorator(tmp_path):
    (tmp_path / "m.py").write_text(
        "def deco(f):\n  def inner():\n    return f()\n  return inner\n\n"
        "@deco\ndef g():\n  pass\n\ndef h():\n  return g()\n")
    with open_index(str(tmp_path), graph=True) as index:
        pairs = index.decorator_pairs()
        nodes = index.nodes({i for pair in pairs for i in pair})
    assert {(nodes[a].qualname, nodes[b].qualname) for a, b in pairs} == {("m.g", "m.deco")}


def test_no_chain_but_through_a_value_says_so(tmp_path, monkeypatch):
    # `OPS[name](x)`: a call of what the registry may hold, which path does not follow.
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "m.py").write_text(
        "def double(x):\n  return x\n"
        "def triple(x):\n  return x\n"
        "OPS = {}\n"
        "def register(name, f):\n  OPS[name] = f\n"
        "register('double', double)\nregister('triple', triple)\n"
        "def apply_op(name, x):\n  return OPS[name](x)\n"
        "def alone(x):\n  return x\n")
    with open_index(str(tmp_path), graph=True) as index:
        assert "through calls of what a value may hold" in _refused(index, "apply_op", "double")
        assert _refused(index, "apply_op", "alone").endswith("within 12 steps")


_SAME_NAME = {  # `sum` names three functions, one of them the source
    "a.py": "def sum(x):\n  return x\n\ndef user(x):\n  return sum(x)\n",
    "b.py": "def sum(x):\n  return x\n",
    "c.py": "class C:\n  def sum(self):\n    return 0\n",
}


def test_no_chain_names_what_an_ambiguous_name_was_read_as(tmp_path, capsys):
    from jaxmap.cli import main

    for name, text in _SAME_NAME.items():
        (tmp_path / name).write_text(text)
    assert main(["path", "a.sum", "sum", "--root", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == (
        "jaxmap: no call chain from a.sum to sum (read as 2 definitions: b.sum, c.C.sum) "
        "within 12 steps; sum also names a.sum, the source itself, left out\n")
    assert main(["path", "sum", "a.user", "--root", str(tmp_path)]) == 1
    assert "from sum (read as 3 definitions: a.sum, b.sum, c.C.sum) to a.user within" \
        in capsys.readouterr().err

"""What `binds` says about its own answer: what PRIM was read as (a line on stderr
where it is not exactly one primitive's name, `read_as` in JSON), and why `--all`
leaves each function out of the default answer (`left_out`)."""

from __future__ import annotations

import json

import pytest

from jaxmap.cli import main

_TREE = {
    "jax/__init__.py": "",
    "jax/_src/__init__.py": "",
    "jax/_src/core.py": "from jax.m import p_p\n"
                        "def eval_jaxpr(jaxpr):\n  return p_p.bind(jaxpr)\n",
    "jax/m.py":
        "from jax._src import core\nfrom jax._src.interpreters import mlir\n"
        "p_p = core.Primitive('p')\nq_p = core.Primitive('q')\nr_p = core.Primitive('r')\n"
        "def _q_lowering(ctx, x):\n  return p_p.bind(x)\n"
        "mlir.register_lowering(q_p, _q_lowering)\n"
        "def _r_impl(x):\n  return p_p.bind(x)\n"
        "r_p.def_impl(_r_impl)\n"
        "def p(x):\n  return p_p.bind(x)\n"
        "def lowered(x):\n  return q_p.bind(x)\n"
        "def implemented(x):\n  return r_p.bind(x)\n"
        "def interpreted(jaxpr):\n  return core.eval_jaxpr(jaxpr)\n"
        "def guarded(x, y=None):\n  if y is None:\n    return p(x)\n  return x\n"
        "def passes_y(x):\n  return guarded(x, y=1)\n"
        "def _private(x):\n  return p(x)\n",
    "jax/_src/other.py": "from jax._src import core\ngather_p = core.Primitive('gather')\n"
                         "def g(x):\n  return gather_p.bind(x)\n",
    "jax/_src/more.py": "from jax._src import core\ngather_p = core.Primitive('gather')\n",
    "jax/scattering.py": "from jax._src import core\n"
                         "scatter_add_p = core.Primitive('scatter-add')\n"
                         "def scatter(x):\n  return scatter_add_p.bind(x)\n",
}


@pytest.fixture
def root(tmp_path, monkeypatch, capsys):
    """The tree, indexed quietly; then what binds says on stderr is not silenced."""
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "cache"))
    for path, text in _TREE.items():
        (tmp_path / "tree" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tree" / path).write_text(text)
    assert main(["index", "--root", str(tmp_path / "tree")]) == 0
    capsys.readouterr()
    monkeypatch.delenv("JAXMAP_QUIET", raising=False)
    return str(tmp_path / "tree")


def _binds(capsys, root, *argv) -> tuple[dict, str]:
    assert main(["binds", *argv, "--json", "--root", root]) == 0
    out, err = capsys.readouterr()
    return json.loads(out), err


def test_a_primitives_own_name_is_answered_without_a_word(root, capsys):
    document, err = _binds(capsys, root, "q_p")
    assert err == ""
    assert document["read_as"] == {"exact": True, "functions": [], "primitives": [
        {"name": "q", "variable": "q_p", "module": "jax.m", "file": "jax/m.py",
         "line": 4}]}


@pytest.mark.parametrize("query, said", [
    ("p", "jaxmap: read 'p' as the primitive p_p (jax/m.py:3); not the function "
          "jax.m.p, whose primitives `jaxmap locate p` lists"),
    ("jax.m.p", "jaxmap: read 'jax.m.p' as the primitive p_p (jax/m.py:3); "
                     "not the function jax.m.p, whose primitives `jaxmap locate "
                     "jax.m.p` lists"),
    ("gather_p", "jaxmap: read 'gather_p' as the primitives gather_p (jax/_src/more.py:2), "
                 "gather_p (jax/_src/other.py:2), alike named: their answers together"),
])
def test_any_other_reading_is_said_in_one_line_on_stderr(root, capsys, query, said):
    document, err = _binds(capsys, root, query)
    assert err.splitlines() == [said]
    assert document["read_as"]["exact"] is False
    assert _binds(capsys, root, query, "-q")[1] == ""  # quiet: nothing but errors


def test_a_name_is_read_as_its_primitives_variable_without_the_suffix(root, capsys):
    """`scatter_add` is `scatter_add_p`, whose name string is `scatter-add`, as `add` is
    `add_p`'s."""
    document, err = _binds(capsys, root, "scatter_add")
    assert [p["variable"] for p in document["read_as"]["primitives"]] == ["scatter_add_p"]
    assert [f["name"] for f in document["found"]] == ["jax.scattering.scatter"]
    assert "as the primitive scatter_add_p" in err


def test_all_says_why_each_function_is_left_out(root, capsys):
    document, _err = _binds(capsys, root, "p_p", "--all")
    why = {f["name"]: f["left_out"] for f in document["found"]}
    assert why == {"jax.m.p": None, "jax.m.lowered": "lowering_rule",
                   "jax.m.implemented": "impl_rule", "jax.m._q_lowering": "private",
                   "jax.m._r_impl": "private", "jax.m._private": "private",
                   "jax._src.core.eval_jaxpr": "interpreter",
                   "jax.m.interpreted": "interpreter", "jax.m.guarded": None,
                   "jax.m.passes_y": "guarded_call"}
    assert main(["binds", "p_p", "--all", "--root", root]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[3].startswith("  left out of the default answer, each (why): impl_rule")
    assert lines[4].startswith("  jax.m.") and "  (" in lines[4]

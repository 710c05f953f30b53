"""One meaning of "has a rule of kind K", on a small tree written here: a Trace method
that handles a call-like primitive (`JVPTrace.process_wrap`) counts as the kind its
class stands for, in `primitives --has/--missing`, `coverage`'s columns and filters,
the MCP tools and the sibling gaps alike, and every answer still says it is one."""

from __future__ import annotations

import csv
import io
import json

import pytest
from inline import TRACE_CORE, written_tree

from jaxmap.cli import main

_CORE = TRACE_CORE
_AD = """
from jax._src.core import Trace
primitive_jvps = {}
class JVPTrace(Trace):
  def process_wrap(self, prim, fun, tracers, params):
    return fun(*tracers)
"""
# wrap's JVP is JVPTrace's method alone; three siblings register theirs, bare none.
_OPS = """
from jax._src import core
from jax._src.interpreters import ad

class WrapPrimitive(core.Primitive):
  def bind_with_trace(self, trace, args, params):
    return trace.process_wrap(self, args, params)

wrap_p = WrapPrimitive('wrap')

def _jvp(primals, tangents):
  return primals, tangents

def _impl(x):
  return x

neg_p = core.Primitive('neg')
ad.primitive_jvps[neg_p] = _jvp
sin_p = core.Primitive('sin')
ad.primitive_jvps[sin_p] = _jvp
cos_p = core.Primitive('cos')
ad.primitive_jvps[cos_p] = _jvp
bare_p = core.Primitive('bare')
bare_p.def_impl(_impl)
"""
_LONELY = """
from jax._src import core
lonely_p = core.Primitive('lonely')
lonely_p.def_impl(lambda x: x)
"""
_TREE = {"jax/__init__.py": "", "jax/_src/__init__.py": "", "jax/_src/core.py": _CORE,
         "jax/_src/interpreters/__init__.py": "", "jax/_src/interpreters/ad.py": _AD,
         "jax/_src/ops.py": _OPS, "jax/_src/lonely.py": _LONELY}
_WITH_JVP = ["cos", "neg", "sin", "wrap"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return written_tree(tmp_path_factory, _TREE, "kinds")


def _out(capsys, *argv) -> str:
    code, (out, err) = main(list(argv)), capsys.readouterr()
    assert code == 0, err
    return out


def _json(capsys, *argv) -> dict:
    return json.loads(_out(capsys, *argv))


def test_primitives_and_coverage_count_the_same_primitives(tree, capsys):
    has = _json(capsys, "primitives", "--has", "jvp", "--json", "--root", tree)
    assert sorted(p["name"] for p in has["primitives"]) == _WITH_JVP
    matrix = _json(capsys, "coverage", "--format", "json", "--root", tree)
    assert matrix["totals"]["jvp"] == has["total"] == 4
    assert matrix["totals"]["trace"] == 1
    missing = _json(capsys, "primitives", "--missing", "jvp", "--json", "--root", tree)
    uncovered = _json(capsys, "coverage", "--missing", "jvp", "--format", "json",
                      "--root", tree)
    assert sorted(p["name"] for p in missing["primitives"]) == \
        sorted(r["name"] for r in uncovered["rows"]) == ["bare", "lonely"]


def test_coverage_says_which_counts_are_trace_methods(tree, capsys):
    rows = {r["name"]: r for r in _json(capsys, "coverage", "--format", "json", "--kind",
                                        "jvp", "--root", tree)["rows"]}
    assert rows["wrap"]["rules"] == {"jvp": 1} and rows["wrap"]["by_trace"] == {"jvp": 1}
    assert rows["neg"]["rules"] == {"jvp": 1} and rows["neg"]["by_trace"] == {}
    table = _out(capsys, "coverage", "--kind", "jvp", "--root", tree).splitlines()
    assert table[0].split() == ["primitive", "module", "jvp", "by_trace"]
    assert next(line for line in table if line.startswith("wrap ")).split()[-2:] == \
        ["1", "jvp"]
    cells = list(csv.reader(io.StringIO(_out(capsys, "coverage", "--format", "csv",
                                             "--root", tree))))
    by_name = {row[0]: dict(zip(cells[0], row)) for row in cells[1:]}
    assert by_name["wrap"]["by_trace"] == "jvp" and by_name["neg"]["by_trace"] == ""


def test_the_table_leaves_by_trace_out_where_no_row_has_one(tree, capsys):
    table = _out(capsys, "coverage", "--missing", "jvp", "--root", tree).splitlines()
    assert "by_trace" not in table[0]


def test_primitives_mark_a_kind_only_a_trace_method_gives(tree, capsys):
    lines = _out(capsys, "primitives", "--root", tree).splitlines()
    wrap = next(line for line in lines if line.startswith("wrap "))
    assert "jvp(trace)" in wrap.split() and "trace" in wrap.split()
    neg = next(line for line in lines if line.startswith("neg "))
    assert "jvp" in neg.split()
    [prim] = [p for p in _json(capsys, "primitives", "--json", "--root", tree)["primitives"]
              if p["name"] == "wrap"]
    assert [(r["kind"], r["via"], r["stands_for"]) for r in prim["rules"]] == [
        ("trace", "JVPTrace.process_wrap", "jvp")]


def test_the_mcp_tools_agree(tree):
    from jaxmap import tools
    from jaxmap.session import Session

    with Session(tree) as session:
        has = json.loads(tools.call(session, "primitives", {"has": ["jvp"]}))
        matrix = json.loads(tools.call(session, "coverage", {"kinds": ["jvp"]}))
    assert has["total"] == matrix["totals"]["jvp"] == 4
    assert {r["name"]: r["by_trace"] for r in matrix["rows"]}["wrap"] == {"jvp": 1}


def test_a_sibling_gap_is_not_a_kind_a_trace_method_gives(tree):
    from jaxmap.commands import rule_gaps
    from jaxmap.session import open_index

    index = open_index(tree)
    try:
        found = rule_gaps.gaps(index, "jax/_src/ops.py")
    finally:
        index.close()
    assert [(g.primitive, g.having, g.siblings) for g in found if g.what == "jvp"] == [
        ("bare", 4, 4)]

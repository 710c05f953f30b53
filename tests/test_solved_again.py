"""A solve of the value flow kept and solved again after each edit (flow/update.py, as a
server's build process does): every table equals a cold index of the edited tree, after
edits that change what calls call, what names hold, what helpers return and register,
which defs exist, what a class derives from, what an import binds and which keys a cycle
holds, in random orders;
and the update is one (not a full solve) where the edit allows."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from jaxmap.flow import graph
from jaxmap.indexing import indexer

from test_edits import MINIJAX, PARALLEL, LAX, _tables

CUSTOM, HIJAX_USER = "jax/_src/custom_prims.py", "jax/_src/numpy_hijax.py"
# Two helpers that return what the other returns: a cycle of the value flow, whose keys
# read each other as nothing (engine.py). Written into each test's copy of minijax.
PICKING = "jax/_src/lax/picking.py"
PICKING_TEXT = """from jax._src.lax.lax import cos, neg


def pick(n):
  if n:
    return pick_again(n - 1)
  return neg


def pick_again(n):
  return pick(n)


def picked(x):
  return pick(1)(x)


def picked_again(x):
  return pick_again(0)(x)


def head(x):
  return middle(x)


def middle(x):
  return tail(x)


def tail(x):
  return x


CHOSEN = neg
"""

# name -> (file, text before, text after): each applied, or taken back if applied.
EDITS = {
    "psum binds another primitive": (
        PARALLEL, "def psum(x, axis_name):\n  return psum_p.bind(x, axes=axis_name)",
        "def psum(x, axis_name):\n  return all_gather_p.bind(x, axis_name=axis_name)"),
    "a helper stops binding": (
        PARALLEL, "  return psum_p.bind(x, axes=axis_name) / 2", "  return x / 2"),
    "pmean calls psum": (
        PARALLEL, "  return _pmean(x, axis_name)", "  return psum(x, axis_name)"),
    "neg binds add": (LAX, "  return neg_p.bind(x)", "  return add_p.bind(x, x)"),
    "mul calls add": (LAX, "  return mul_p.bind(x, y)", "  return add(x, y)"),
    "cos calls neg": (LAX, "def cos(x):\n  return x", "def cos(x):\n  return neg(x)"),
    "a transpose rule calls mul": (LAX, "  return [neg(t)]", "  return [mul(t, t)]"),
    "a comment": (LAX, "def _neg_transpose_rule(t, operand):\n",
                  "def _neg_transpose_rule(t, operand):  # an edit's comment\n"),
    "a registry store takes another rule": (
        LAX, "ad.primitive_transposes[add_p] = _add_transpose",
        "ad.primitive_transposes[add_p] = _mul_transpose_lhs"),
    "a registering helper ignores its argument": (
        PARALLEL, "  ad.deflinear2(prim, transpose_rule)",
        "  ad.deflinear2(prim, _pmax_transpose)"),
    "a def removed": (
        LAX, "def _sin_cpu_lowering(ctx, x):\n  return [x]\n", "# (_sin_cpu_lowering removed)\n"),
    "a class's base changed": (
        CUSTOM, "class CallPrimitive(core.Primitive):", "class CallPrimitive(hijax.HiPrimitive):"),
    "an import binds another class": (
        HIJAX_USER, "from jax._src.hijax import VJPHiPrimitive",
        "from jax._src.hijax import HiPrimitive as VJPHiPrimitive"),
    "a module's variable names another function": (PICKING, "CHOSEN = neg", "CHOSEN = cos"),
    "a helper leaves its cycle": (
        PICKING, "def pick_again(n):\n  return pick(n)", "def pick_again(n):\n  return cos"),
}


@pytest.fixture
def kept(monkeypatch):
    """This process keeps each solve and solves the next from it, as a server's build
    process does; as it was after the test."""
    fresh = graph._Kept()
    monkeypatch.setattr(graph, "_KEPT", fresh)
    graph.keep_solves()
    return fresh


def _toggled(source: Path, before: str, after: str) -> None:
    text = source.read_text()
    edited = text.replace(before, after, 1) if before in text else text.replace(after, before, 1)
    assert edited != text
    source.write_text(edited)


def _minijax(tmp_path: Path) -> Path:
    tree = Path(shutil.copytree(MINIJAX, tmp_path / "minijax"))
    (tree / PICKING).write_text(PICKING_TEXT)
    return tree


def _solved_again(tree: Path, kept, tmp_path: Path, monkeypatch) -> tuple[dict, dict, bool]:
    """The tables of `tree`'s index, solved from the kept solve, and of a cold index of
    it; whether the first was an update (not a full solve)."""
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    path, _report = indexer.ensure_index(tree, graph=True)
    updated, kept.updated = kept.updated, False
    cold = tmp_path / "cold"
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(cold))
    shutil.rmtree(cold, ignore_errors=True)
    graph._KEPT = graph._Kept()  # (the cold index's solve neither kept nor from one)
    expected = indexer.build_index(tree).path
    graph._KEPT = kept
    return _tables(path, facts=True), _tables(expected, facts=True), updated


@pytest.mark.parametrize("seed", range(6))
def test_a_solve_again_equals_a_cold_index(seed, kept, tmp_path, monkeypatch):
    tree = _minijax(tmp_path)
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    indexer.build_index(tree)
    assert kept.flow is not None and not kept.updated  # the first solve: in full
    chooser, updates = random.Random(seed), 0
    for step in range(8):
        name = chooser.choice(sorted(EDITS))
        file, before, after = EDITS[name]
        _toggled(tree / file, before, after)
        tables, expected, updated = _solved_again(tree, kept, tmp_path, monkeypatch)
        updates += updated
        assert tables == expected, (step, name)
    assert updates >= 4


def test_keys_leaving_a_cycle_and_joining_it_again(kept, tmp_path, monkeypatch):
    """A helper an edit takes out of its cycle is read with what it returns by its
    partner, as a cold solve reads it, no longer as nothing; put back, it joins the
    cycle again: both solved again from the kept solve, to a cold index's tables."""
    tree = _minijax(tmp_path)
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    indexer.build_index(tree)
    file, before, after = EDITS["a helper leaves its cycle"]
    callees = []
    for _step in ("leaves", "joins"):
        _toggled(tree / file, before, after)
        tables, expected, updated = _solved_again(tree, kept, tmp_path, monkeypatch)
        assert updated and tables == expected
        callees.append(_callees(tables, "picked"))
    # (`pick(1)` calls what `pick` returns: with `neg` alone while in the cycle)
    assert callees == [{"pick", "cos", "neg"}, {"pick", "neg"}]


def test_a_save_that_changes_a_function_and_closes_a_cycle_through_it(kept, tmp_path,
                                                                      monkeypatch):
    """One save changes `head` (computed again) and makes `tail` call `head` back: a
    cycle of three, closed while `head` is computed again; solved again (or, where the
    update cannot tell the cycle a cold solve makes, in full: Plan.read_open) to a cold
    index's tables."""
    tree = _minijax(tmp_path)
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    indexer.build_index(tree)
    source = tree / PICKING
    source.write_text(source.read_text()
                      .replace("  return middle(x)", "  return middle(x) or cos(x)")
                      .replace("def tail(x):\n  return x", "def tail(x):\n  return head(x)"))
    tables, expected, updated = _solved_again(tree, kept, tmp_path, monkeypatch)
    assert tables == expected, updated


def test_a_solve_of_the_index_as_it_stands_is_solved_again_from(tmp_path, monkeypatch):
    """A build process started on an index built before solves its call graph again,
    writing nothing (indexer.solve_as_indexed), and the first edit is solved again from
    that solve, to the tables of a cold index."""
    tree = _minijax(tmp_path)
    warm, cold = tmp_path / "warm", tmp_path / "cold"
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(warm))
    monkeypatch.setattr(graph, "_KEPT", graph._Kept())  # (built by a process that keeps none)
    path = indexer.build_index(tree).path
    written = Path(path).read_bytes()
    kept = graph._Kept()
    monkeypatch.setattr(graph, "_KEPT", kept)
    graph.keep_solves()
    assert indexer.solve_as_indexed(tree) and kept.flow is not None
    assert Path(path).read_bytes() == written
    _toggled(tree / LAX, *EDITS["mul calls add"][1:])
    indexer.ensure_index(tree, graph=True)
    assert kept.updated
    monkeypatch.setattr(graph, "_KEPT", graph._Kept())
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(cold))
    expected = indexer.build_index(tree).path
    assert _tables(path, facts=True) == _tables(expected, facts=True)


def test_no_index_or_a_stale_one_is_not_solved_as_indexed(tmp_path, monkeypatch):
    tree = _minijax(tmp_path)
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "cache"))
    kept = graph._Kept()
    monkeypatch.setattr(graph, "_KEPT", kept)
    graph.keep_solves()
    assert not indexer.solve_as_indexed(tree)  # no index
    indexer.build_index(tree, graph=False)
    assert not indexer.solve_as_indexed(tree)  # no call graph
    indexer.build_index(tree)
    kept.flow = None
    _toggled(tree / LAX, *EDITS["mul calls add"][1:])
    assert not indexer.solve_as_indexed(tree)  # a file changed since
    assert kept.flow is None


def test_a_build_process_solves_a_current_call_graph_once_it_has_answered(tmp_path, monkeypatch):
    """A server's build process told the index is current (`report: null`) then solves
    its call graph, to solve the first save from; for a first-phase request it does not."""
    from jaxmap.indexing import builder

    tree = _minijax(tmp_path)
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(graph, "_KEPT", graph._Kept())
    indexer.build_index(tree)
    kept = graph._Kept()
    monkeypatch.setattr(graph, "_KEPT", kept)
    graph.keep_solves()
    sent: list[dict] = []
    builder.answer(str(tree), {"graph": False}, sent.append)
    assert sent == [{"report": None}] and kept.flow is None
    builder.answer(str(tree), {"graph": True}, sent.append)
    assert sent == [{"report": None}] * 2 and kept.flow is not None

def _callees(tables: dict, function: str) -> set[str]:
    """The short names of what `function` of the picking module calls (calls table)."""
    names = {row[0]: row[2] for row in tables["definitions"]}  # id -> qualified name
    qualname = f"{PICKING[:-3].replace('/', '.')}.{function}"
    return {names[row[1]].rsplit(".", 1)[1] for row in tables["calls"]
            if names.get(row[0]) == qualname and row[1] in names}

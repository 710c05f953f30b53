"""A function kept for later is not called: a `partial` of it stored into a registry
or an attribute, or handed to a registrar, is a rule that runs when a transformation
dispatches on its primitive, never as part of the function that registers it. A
partial that is called (`partial(f, x)(y)`, `g = partial(f, x); g(y)`, `jit(partial(f,
x))`) still reaches what f binds."""

from __future__ import annotations

import json

import pytest

from jaxmap.cli import main

_TREE = {
    "pk/__init__.py": "",
    "pk/m.py": """\
from functools import partial
from jax import jit
from jax._src import core
from jax._src.interpreters import batching, mlir
from jax._src.state import discharge

base_p = core.Primitive("base")


def _rule(prim, *args):
  return base_p.bind(*args)


def stores(name):
  p = core.Primitive(name)
  batching.primitive_batchers[p] = partial(_rule, p)
  return p


def sets(name):
  p = core.Primitive(name)
  p.to_lojax = partial(_rule, p)
  return p


def registers(name):
  p = core.Primitive(name)
  mlir.register_lowering(p, partial(_rule, p), cacheable=False)
  p.def_impl(partial(_rule, p))
  discharge.register_discharge_rule(p)(
      partial(_rule, p))
  return p


def registers_plainly(name):
  p = core.Primitive(name)
  mlir.register_lowering(p, _rule)
  return p


def calls_it_now(x):
  return partial(_rule, None)(x)


def calls_it_later(x):
  g = partial(_rule, None)
  return g(x)


def jits_it(x):
  return jit(partial(_rule, None))(x)


def hands_it_on(xs):
  return list(map(partial(_rule, None), xs))


def _apply(f, x):
  return f(x)


def applies(x):
  return _apply(partial(_rule, None), x)


def run_it(f, x):
  return f(x)


def batches(x):
  inner = partial(
      _rule,
      None)
  return run_it(inner, x) + run_it(len, x)


def registers_here(name):
  p = core.Primitive(name)
  register_rule(p)(partial(_rule, p))
  return p


_rules = {}


def register_rule(p):
  def keep(f):
    _rules[p] = f
    return f
  return keep
""",
}


@pytest.fixture
def root(tmp_path, capsys):
    for path, text in _TREE.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    assert main(["index", "--root", str(tmp_path)]) == 0
    capsys.readouterr()
    return str(tmp_path)


def _json(capsys, root, *argv) -> dict:
    assert main([*argv, "--json", "--root", root]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_stored_or_registered_partial_reaches_nothing(root, capsys):
    found = {f["name"] for f in _json(capsys, root, "binds", "base_p", "--all")["found"]}
    assert found == {"pk.m._rule", "pk.m.calls_it_now", "pk.m.calls_it_later",
                     "pk.m.jits_it", "pk.m.hands_it_on", "pk.m.applies",
                     "pk.m._apply", "pk.m.batches"}


@pytest.mark.parametrize("source", ["stores", "sets", "registers", "registers_plainly",
                                    "registers_here"])
def test_no_path_runs_from_a_registering_function_to_its_rule(root, capsys, source):
    assert main(["path", source, "base_p", "--root", root]) == 1
    capsys.readouterr()


def test_callers_of_a_rule_are_those_that_run_it(root, capsys):
    found = _json(capsys, root, "callers", "_rule")["found"]
    assert {(f["name"], f["handed"]) for f in found if not f["through"]} == {
        ("pk.m.calls_it_now", False), ("pk.m.calls_it_later", False),
        ("pk.m.jits_it", False), ("pk.m.hands_it_on", False), ("pk.m.applies", False),
        ("pk.m._apply", False),  # (what its one caller hands it: `f(x)` calls _rule)
        ("pk.m.batches", False)}  # (a partial's first argument on the next line too)

"""A call of an instance of a hijax primitive's class binds that primitive:
`Op(aval)(x)` (its first call over several lines too), and `prim(x)` where `prim` holds
one, made at module level or in the function; in a tree with JAX's base class in it,
and in a user's tree importing it."""

from __future__ import annotations

import json

from inline import resolve_sources
from test_calls import binders, edges

from jaxmap.cli import main
from jaxmap.models import RESOLVED

BASE = """
    from jax._src import core
    call_hi_p = core.Primitive('call_hi')
    class VJPHiPrimitive:
      def __call__(self, *args):
        return call_hi_p.bind(*args, _prim=self)
    """
# After the imports: each tree's own, the base in the tree or outside it.
OPS = """
    class Double(VJPHiPrimitive):
      def __init__(self, aval, *, scale=2):
        self.scale = scale
      def expand(self, x):
        return x * self.scale
    class Halve(Double):
      pass
    def double(x):
      return Double(
          x,  # its type (a bracket in a comment: (
          scale=2,
      )(x)
    halve_p = Halve(None)
    def halve(x):
      return halve_p(x)
    def either(x, small):
      prim = Halve(x) if small else Double(x)
      return prim(x)
    def apply(prim, x):
      return prim(x)
    def expanded(x):
      return Double(x).expand(x)
    """


def test_calling_an_instance_binds_its_class_primitive():
    res = resolve_sources({"jax/_src/hijax.py": BASE,
                           "ops.py": "from jax._src.hijax import VJPHiPrimitive\n" + OPS})
    assert binders(res, "Double") == {("ops.double", None), ("ops.either", None)}
    assert binders(res, "Halve") == {("ops.halve", None), ("ops.either", None)}
    # A helper calling what a parameter holds binds no class of its own there, and
    # `.expand` runs the rule, no bind; the classic bind in the base is as it was.
    assert binders(res, "call_hi") == {("jax._src.hijax.VJPHiPrimitive.__call__", None)}
    # The call over several lines is an edge to the base's `__call__`, as on one line.
    assert edges(res, "ops.double")["Double(x, scale=2)"] == \
        (RESOLVED, "jax._src.hijax.VJPHiPrimitive.__call__")


def test_a_users_hijax_primitive_is_bound_where_its_instance_is_called(capsys, tmp_path):
    (tmp_path / "ops.py").write_text(
        "from jax.experimental.hijax import VJPHiPrimitive\n" + OPS.replace("\n    ", "\n"))
    assert main(["binds", "Double", "--root", str(tmp_path), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["found"]
    assert {(f["name"], f["call_line"]) for f in found} == {("ops.double", 11),
                                                            ("ops.either", 20)}
    assert main(["calls", "ops.halve", "--root", str(tmp_path)]) == 0
    assert "  Halve  ops.py:17  [ops.halve -> Halve.bind]" in capsys.readouterr().out
    assert main(["path", "ops.either", "Halve.bind", "--root", str(tmp_path)]) == 0
    assert "-binds-> Halve.bind  ops.py:20" in capsys.readouterr().out

"""Call guards: a call under `if x is None:` runs only where the callers leave x None,
so `binds` by default, `path` and the review's reach leave out the callers that pass x
a value (`where(c, x, y)` never runs `where(c)`'s `nonzero`); `callers` keeps them."""

from __future__ import annotations

import ast
import json

import pytest

from jaxmap.cli import main
from jaxmap.commands import reach
from jaxmap.commands.callgraph import MAX_GUARDS, Step, trace_walk
from jaxmap.flow.calls import filled
from jaxmap.flow import guardtext
from jaxmap.flow.guardtext import Guards, arguments
from jaxmap.indexing.calltext import read_callees
from jaxmap.indexing.facts import Callee
from jaxmap.session import open_index

_LIB = """\
from jax._src import core
p_p = core.Primitive('p')

def nonzero(c, size=None):
  return p_p.bind(c)

def where(c, x=None, y=None):
  \"\"\"Like jnp.where (a docstring: `if x is None:` here is no code).\"\"\"
  if x is None and y is None:
    return nonzero(c)
  else:
    return _where(c, x, y)

def _where(c, x, y):
  return c

def either_none(c, x=None, y=None):
  if x is None or y is None:
    return nonzero(c)

def reassigned(c, x=None):
  x = x if c else None
  if x is None:
    return nonzero(c)

def apply(f, c):
  return f(c)
"""
_USERS = """\
from lib import where, either_none, reassigned, apply, nonzero

def three(c, a):
  return where(c, a + 1, 2.0)

def by_keyword(c):
  return where(c, y=c + 1, x=0)

def half(c):
  return where(c, c * 2)

def one(c):
  return where(c)

def nones(c):
  return where(c, None, None)

def forwards(c, x=None, y=None):
  return where(c, x, y)

def some_call_leaves_them(c):
  if c:
    return where(c, 1, 2)
  return where(c)

def handed(c):
  return apply(where, c)

def calls_either(c):
  return either_none(c, 1, 2)

def calls_reassigned(c):
  return reassigned(c, 1)

def local_none(c):
  a = None
  if c:
    a = 1
  return where(c, a, a)

def attributes(c, box):
  return where(c, box.x, box.y)

def unpacked(c, pair):
  a, b = pair
  return where(c, a, b)

def in_a_lambda(c):
  f = lambda a, b: where(c, a, b)
  return f(None, None)

def locals_of_calls(c):
  a = c + 1
  b = apply(len, c)
  return where(c, a, y=b)

def looped(c, items):
  a = 1
  for a in items:
    pass
  return where(c, a, a)

def from_a_parameter(c, d=None):
  a = 1
  a = d
  return where(c, a, a)

def in_a_comprehension(c, items):
  a = 1
  return [where(c, a, a) for a in items]

def two_ways(c, a):
  where(c, a, 1.0)
  return direct(c)

def direct(c):
  return nonzero(c)
"""
_PRUNED = {"users.three", "users.by_keyword", "users.half", "users.locals_of_calls"}
_KEPT = {"users.one", "users.nones", "users.forwards", "users.some_call_leaves_them",
         "users.handed", "users.calls_either", "users.calls_reassigned", "users.local_none",
         "users.attributes", "users.unpacked", "users.in_a_lambda", "users.looped",
         "users.from_a_parameter", "users.in_a_comprehension"}


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "tree"
    root.mkdir()
    (root / "lib.py").write_text(_LIB)
    (root / "users.py").write_text(_USERS)
    return root


def _json(capsys, *argv) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_binds_leaves_out_callers_whose_arguments_never_take_the_guard(tree, capsys):
    found = {f["name"] for f in _json(capsys, "binds", "p", "--root", str(tree))["found"]}
    assert _KEPT <= found
    assert not found & _PRUNED


def test_callers_and_the_static_chains_keep_every_edge(tree, capsys):
    callers = {f["name"] for f in _json(capsys, "callers", "where", "--root", str(tree))["found"]}
    assert _PRUNED <= callers
    everything = {f["name"]: f for f in _json(capsys, "binds", "p", "--all", "--root",
                                               str(tree))["found"]}
    assert not any(everything[name]["trace_time"] for name in _PRUNED)
    chain = _json(capsys, "path", "users.three", "p_p", "--root", str(tree))["chains"][0]
    assert [step["callee"] for step in chain] == everything["users.three"]["chain"][1:]


def test_the_review_reach_prunes_alike(tree):
    with open_index(str(tree), graph=True) as index:
        public = reach.Reach(index).public("p")
    assert _KEPT <= public.keys() and not public.keys() & _PRUNED


def _line_of(text: str, code: str, after: str = "") -> int:
    return text[:text.index(code, text.index(after))].count("\n") + 1


def test_a_chain_shows_the_call_that_leaves_the_guard_not_the_first(tree, capsys):
    # some_call_leaves_them calls where(c, 1, 2) first, then where(c): only the second
    # leaves x and y None, so only it runs where's nonzero.
    line = _line_of(_USERS, "where(c)", after="def some_call_leaves_them")
    assert line > _line_of(_USERS, "where(c, 1, 2)", after="def some_call_leaves_them")
    found = {f["name"]: f for f in _json(capsys, "binds", "p", "--root", str(tree))["found"]}
    assert found["users.some_call_leaves_them"]["call_line"] == line
    chain = _json(capsys, "path", "users.some_call_leaves_them", "p_p", "--root",
                  str(tree))["chains"][0]
    assert (chain[0]["callee"], chain[0]["line"]) == ("lib.where", line)


def test_a_path_to_a_function_shows_the_call_that_leaves_the_guard(tree, capsys):
    first = _line_of(_USERS, "where(c, 1, 2)", after="def some_call_leaves_them")
    for target, line in (("lib.nonzero", first + 1), ("lib.where", first)):
        chain = _json(capsys, "path", "users.some_call_leaves_them", target, "--root",
                      str(tree))["chains"][0]
        assert (chain[0]["callee"], chain[0]["line"]) == ("lib.where", line), target


def test_a_path_leaves_out_a_chain_whose_guard_never_holds(tree, capsys):
    # two_ways reaches nonzero through where(c, a, 1.0), whose x and y are never both
    # None, and through direct: the same length, only the second runs.
    found = _json(capsys, "path", "users.two_ways", "p_p", "--root", str(tree))
    assert [[step["callee"] for step in chain] for chain in found["chains"]] == [
        ["users.direct", "lib.nonzero", "p_p.bind"]]
    assert found["runs"] is True
    # three's only chain passes where x and y: shown, and said not to run
    assert _json(capsys, "path", "users.three", "p_p", "--root", str(tree))["runs"] is False
    assert main(["path", "users.three", "p_p", "--root", str(tree)]) == 0
    assert "(no shortest chain runs as a whole" in capsys.readouterr().out


def test_a_path_shows_the_longer_chain_binds_runs_not_a_shorter_one_that_never_runs(
        tree, capsys):
    # where(c, a, 1.0) never runs nonzero: the chain through it is shorter than the
    # one through the helpers, which binds gives, and is not shown after it
    (tree / "longer.py").write_text(
        "from lib import where, nonzero\n\n"
        "def longer_runs(c, a):\n  where(c, a, 1.0)\n  return helper(c)\n\n"
        "def helper(c):\n  return inner(c)\n\n"
        "def inner(c):\n  return nonzero(c)\n")
    found = _json(capsys, "path", "longer.longer_runs", "p_p", "--root", str(tree))
    assert [[step["callee"] for step in chain] for chain in found["chains"]] == [
        ["longer.helper", "longer.inner", "lib.nonzero", "p_p.bind"]]
    assert found["runs"] is True
    assert main(["path", "longer.longer_runs", "p_p", "--root", str(tree)]) == 0
    assert "no shortest chain runs" not in capsys.readouterr().out


def test_each_different_call_keeps_its_first_line():
    source = b"def f(c):\n  g(c, 1)\n  g(c)\n  g(c, 2)\n  g(c)\n"
    (callee,) = [callee for callee in map(Callee._make, read_callees(
        source, [(0, len(source))], 1)) if callee.name == "g"]
    assert (callee.name, callee.line, len(callee.sites)) == ("g", 2, 2)
    assert callee.lines == (2, 3)  # `g(c, 1)` and `g(c, 2)` pass alike: one site


@pytest.mark.parametrize("text, guarded", [
    (b"def f(x=None):\n  if x is None:\n    g()\n", ["x"]),
    (b"def f(x=None, y=None):\n  if x is None and y is None:\n    g()\n", ["x", "y"]),
    (b"def f(x=None):\n  if x is None:\n    pass\n  else:\n    g()\n", []),
    (b"def f(x=None):\n  if x is None: g()\n", []),  # one line: not read
    (b"def f(x=None):\n  if not x is None:\n    g()\n", []),
    (b"def f(x=None, y=1):\n  if x is None or y:\n    g()\n", []),
    (b"def f(x=None):\n  if x is None:\n    h(a,\n  b)\n  g()\n", []),  # the block ended
    (b"def f(x=None, y=None):\n  if x is None:\n    if y is None:\n      g()\n", ["x", "y"]),
    (b"def f(x=None):\n  if y:\n    pass\n  elif x is None:\n    g()\n", ["x"]),
])
def test_which_names_a_line_requires_none(text, guarded):
    assert sorted(Guards(text, [(0, len(text))]).at(text.rindex(b"g()"))) == guarded


@pytest.mark.parametrize("text, assigned", [
    (b"def f(x=None):\n  x = 1\n  if x is None:\n    g()\n", {"x"}),
    (b"def f(x=None):\n  for x in y:\n    pass\n  if x is None:\n    g()\n", {"x"}),
    (b"def f(x=None):\n  with a as x:\n    pass\n  if x is None:\n    g()\n", {"x"}),
    (b"def f(x=None):\n  def inner(x=None):\n    pass\n  if x is None:\n    g()\n", {"x"}),
    (b"def f(x=None):\n  h(\n    x=x)\n  if x is None:\n    g()\n", set()),  # a keyword
    (b"def f(x=None):\n  if x is None:\n    g()\n  print(); x = 1\n", {"x"}),
    (b"def f(x=None):\n  if x is None:\n    g()\n  (x) = 1\n", {"x"}),
    (b"def f(x=None):\n  if x is None:\n    g()\n  del x\n", {"x"}),
    (b"def f(x=None):\n  if x is None:\n    g(lambda x: x)\n", {"x"}),
    (b"def f(x=None):\n  if x is None:\n    g()\n  y: int\n", set()),
    (b"def f(x=None):\n  if x is None:\n    g()\n  )\n", {"x"}),  # not Python: unread
])
def test_a_name_assigned_anywhere_is_no_guard(text, assigned):
    assert Guards(text, [(0, len(text))]).assigned >= assigned
    assert not Guards(text, [(0, len(text))]).assigned & ({"x"} - assigned)


@pytest.mark.parametrize("call, passed", [
    (b"f(a, None, 'x,(y', k=None, j=b.c)", ("?", "None", ".", "k=None", "j=?")),
    (b"f(*args, x=1, **kw)", ("*", "x=.", "**")),
    (b"f(# a comment (\n  a)", ("?",)),
    (b"f()", ()),
    (b"f(None if a is None else g(a), a or None, b[:, None])", ("?", "?", ".")),
    (b"f(self.axis, -jnp.inf, g(x).y)", ("?", ".", ".")),
])
def test_what_a_call_passes(call, passed):
    assert arguments(call, 1) == passed


@pytest.mark.parametrize("body, values", [
    (b"  a = g(x)\n  b = a + 1\n  c = [1]\n  d = 'text'\n", {"a", "b", "c", "d"}),
    (b"  a = None\n  b = x\n  c = x.y\n  d = e if x else 1\n  f = x or 1\n", set()),
    (b"  a = g(x)\n  a = None\n", set()),  # each binding must be one
    (b"  a = g(x)\n  for a in x:\n    pass\n", set()),
    (b"  a = g(x)\n  b = [a for a in x]\n", {"b"}),
    (b"  a = g(x)\n  with h() as a:\n    pass\n", set()),
    (b"  a = g(x)\n  if (a := h()):\n    pass\n", set()),
    (b"  a = g(x)\n  a, b = h()\n", set()),
    (b"  a = b = g(x)\n", set()),
    (b"  a = g(x, k=1)\n  b: int = 2\n", {"a", "b"}),
    (b"  a = g(x)\n  h = lambda a: a\n", {"h"}),
    (b"  a = g(x)\n  def inner(a=None):\n    pass\n", set()),
    (b"  a = g(x)\n  def inner():\n    nonlocal a\n    a = None\n", set()),
    (b"  a = g(x)\n  global b\n  b = 1\n  del a\n", set()),
    (b"  a = yield g(x)\n", set()),
    (b"  x = g(x)\n", set()),  # a parameter
    (b"  f = g(x)\n", {"f"}),  # the function's own name is bound outside it
    (b"  a = g(\n    k=1)\n", {"a"}),  # a keyword on a continued line binds nothing
    # what a reading line by line missed (a review's cases): Python's parser sees them
    (b"  a = g(x)\n  if x:\n    pass\n  else: a = None\n", set()),
    (b"  a = g(x)\n  try: a = None\n  finally: pass\n", set()),
    (b"  a = g(x)\n  print(x); a = None\n", set()),
    (b"  a = g(x)\n  a = \\\n    None\n", set()),
    (b"  a = g(x)\n  a = (None)\n", set()),
    (b"  a = g(x)\n  with h() as (a, b):\n    pass\n", set()),
    (b"  a = g(x)\n  (a) = None\n", set()),
    (b"  a = g(x)\n  d[0] = a = None\n", set()),
    (b"  a = g(x)\n  s = '\\\n\"\"\"'\n  a = None\n  t = '\"\"\"'\n", {"s", "t"}),
    (b"  a = g(x)\n  match x:\n    case [*a]:\n      pass\n", set()),
    # unpacking a literal of values, element by element
    (b"  a, b = g(x), 1\n", {"a", "b"}),
    (b"  a, b = g(x), None\n", {"a"}),
    (b"  [a, b] = (g(x), y)\n", {"a"}),
    (b"  a, b = g(x), *h()\n", set()),
    (b"  a, b = g(x), h(), 1\n", set()),
    (b"  a, (b, c) = g(x), (1, 2)\n", set()),
])
def test_which_names_a_function_surely_binds_to_values(body, values):
    text = b"def f(x=None):\n" + body
    assert Guards(text, [(0, len(text))]).values() == values


@pytest.mark.parametrize("params, values", [
    (b"a: int, b: jax.Array, c: Sequence[int | None], d: 'ArrayLike'", {"a", "b", "c", "d"}),
    (b"a: int | str, b: Union[int, Array], c: tuple[int, ...]", {"a", "b", "c"}),
    (b"a: int | None, b: Optional[int], c: Any, d: object", set()),
    (b"a: Union[int, None], b: 'int | None', c: Axis, d: DimSize, e", set()),
    (b"a: int, *b: int, **c: int", {"a"}),
    (b"a: int = None, b: int = 0, *, c: str = None, d: str = 'x'", {"b", "d"}),
])
def test_a_parameter_typed_to_exclude_none_is_a_value(params, values):
    text = b"def f(" + params + b"):\n  return g(a)\n"
    assert Guards(text, [(0, len(text))]).values() == values


@pytest.mark.parametrize("params, body, values", [
    (b"xs: tuple[Array, Array]", b"  a, b = xs\n", {"a", "b", "xs"}),
    (b"xs: 'Tuple[int, jax.Array]'", b"  a, b = xs\n  a, b = g(a), h(b)\n", {"a", "b", "xs"}),
    (b"xs: tuple[Array, Array]", b"  a, b, c = xs\n", {"xs"}),
    (b"xs: tuple[Array, ...]", b"  a, b = xs\n", {"xs"}),
    (b"xs: tuple[Array, int | None]", b"  a, b = xs\n", {"xs"}),
    (b"xs: tuple[Array, Array] = None", b"  a, b = xs\n", set()),
    (b"xs: tuple[Array, Array]", b"  a, b = xs\n  xs = h()\n", {"xs"}),
    (b"xs", b"  a, b = xs\n", set()),
])
def test_names_unpacked_from_a_typed_tuple_parameter_are_values(params, body, values):
    text = b"def f(" + params + b"):\n" + body + b"  return g(a)\n"
    assert Guards(text, [(0, len(text))]).values() == values


def test_a_typed_parameter_bound_again_is_no_value():
    text = b"def f(a: int):\n  a = h() or None\n  return g(a)\n"
    assert Guards(text, [(0, len(text))]).values() == frozenset()


def test_a_method_is_read_as_a_function():
    text = b"class C:\n  def f(self, x=None):\n    a = g(x)\n    return where(c, a, a)\n"
    start = text.index(b"def")
    assert Guards(text, [(start, len(text))]).values() == {"a"}


@pytest.mark.parametrize("text", [
    b"def f(x, *args, **kw):\n  return g(x)\n",
    b"def f(x, *x):\n  return g(x)\n",  # Python's parser leaves duplicates to the compiler
    b"def f(x: int, /, y: 'str', *, z: int) -> int:\n  return h(x)\n",
    b"async def f(x: 'int | None', y: tuple[int, int]):\n  await g(x)\n",
    b"if 1:\n    def f(self, x):\n        with g(x):\n            pass\n",
    b"def f(x):\n  return [1 if x else 2for x in y]\n",  # a keyword after a digit binds
    b"def f(x):\n  x >>= 1\n  return g(x)\n",
    b"def f(x) -> lambda y: y:\n  return g(x)\n",
])
@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # `2for`: Python warns, and parses it
def test_a_function_read_from_its_signature_alone_reads_as_from_its_tree(text, monkeypatch):
    quick = guardtext._bindings(text)
    monkeypatch.setattr(guardtext, "_signature_binds_only", lambda _text: False)
    walked = guardtext._bindings(text)
    assert quick[:3] == walked[:3] and ast.dump(quick.function) == ast.dump(walked.function)


@pytest.mark.parametrize("text", [
    b"class C:\n  def f(self, x):\n    return g(x)\n",
    b"# a comment\n\n'''doc'''\ndef f(x):\n  return g(x)\n",
    b"import m\ndef f(x):\n  return g(x)\n",
])
def test_a_text_whose_first_statement_is_no_def_is_read_as_no_function(text):
    assert guardtext._bindings(text) == guardtext._UNREAD
    guards = Guards(text, [(0, len(text))])
    assert guards.values() == guards.parameters() == frozenset()


def test_a_module_or_class_text_binds_no_name_surely():
    text = b"a = g(x)\nwhere(c, a, a)\n"
    assert Guards(text, [(0, len(text))]).values() == frozenset()


@pytest.mark.parametrize("site, text, fills", [
    (("?", ".", "."), "where", {"x", "y"}),
    (("?", "?", "."), "where", {"y"}),  # a name may hold None
    (("?", "None"), "where", {"x:"}),  # None: equals no word
    (("?", "*", "."), "where", set()),  # after `*args`, unknown
    (("?", "y=."), "jnp.where", {"y"}),
    (("?", ".", "."), "nz", set()),  # an alias may move arguments
])
def test_which_parameters_a_call_surely_fills(site, text, fills):
    assert filled(site, text, "where", ("c", "x", "y", "*", "size")) == fills


@pytest.mark.parametrize("site, fills", [
    (("?",), {"y", "size"}),  # left to their defaults, `y=0`, `size=3`
    (("?", "y=?"), {"size"}),
    (("?", "?", "None"), {"size", "y:"}),
    (("?", "*"), {"size"}),  # `*args` may fill x and y, not the keyword-only size
    (("?", "**"), set()),  # `**kwargs` may pass any of them
])
def test_a_parameter_left_to_a_default_that_is_a_value_is_filled(site, fills):
    assert filled(site, "where", "where", ("c", "x", "y", "*", "size"),
                  {"y": ".", "size": "."}) == fills


def test_a_method_called_with_unplaced_arguments_keeps_only_keyword_defaults():
    params, defaulted = ("self", "x", "*", "size"), {"x": ".", "size": "."}
    assert filled(("?",), "o.m", "m", params, defaulted) == {"size"}


@pytest.mark.parametrize("call, passed", [
    # what the call's own arguments use where None raises is surely not None
    (b"f(c | (a > b), b, a)", (".", ".", ".")),
    (b"f(-x, ~y, +z, x, y, z)", (".", ".", ".", ".", ".", ".")),
    (b"f(x[0], x.shape, x, y=x)", (".", "?", ".", "y=.")),  # an attribute may be None
    (b"f(g(x * 2), x)", (".", ".")),
    (b"f(a < b < c, b, c)", (".", ".", "?")),  # a chain's later parts may not run
    (b"f(a | b, a, b)", (".", "?", "?")),  # `int | None` is a type
    (b"f(a == b, a)", (".", "?")),
    (b"f(x.__class__, x)", ("?", "?")),
    (b"f(a < b < x.real, x)", (".", "?")),  # `a < b` false: the rest does not run
    (b"f(a == b < -x, x)", (".", "?")),
    (b"f('%s' % x, x, y % 2, y)", (".", "?", ".", ".")),  # a string formats None

    (b"f(a and -x, x)", ("?", "?")),
    (b"f(-x if c else 1, x)", ("?", "?")),
    (b"f(lambda: -x, x)", (".", "?")),
    (b"f([-x for _ in y], x)", (".", "?")),
    (b"f(-x, (x := g()), x)", (".", ".", "?")),  # rebound
])
def test_what_the_arguments_use_proves(call, passed):
    assert arguments(call, 1) == passed


@pytest.mark.parametrize("body, passed", [
    (b"  return where(c, x, y)\n", ("@c", "@x", "@y")),
    (b"  x = g(x)\n  return where(c, x, y)\n", ("@c", "?", "@y")),  # bound again
    (b"  h = lambda x: where(c, x, y)\n", ("@c", "?", "@y")),  # the lambda's own
    (b"  return [where(c, x, y) for x in c]\n", ("@c", "?", "@y")),
    (b"  return where(c, *args, y=kw)\n", ("@c", "*", "y=?")),
])
def test_a_parameter_passed_on_is_named(body, passed):
    text = b"def f(c, x=None, y=None, *args, **kw):\n" + body
    guards = Guards(text, [(0, len(text))])
    assert arguments(text, text.index(b"(", text.index(b"where")), guards) == passed


def test_which_parameters_a_call_passes_on():
    assert filled(("?", "@a", "."), "where", "where", ("c", "x", "y", "*", "size")) == \
        {"x=a", "y"}


_PASSING = """\
from lib import where

def fmax(x1, x2):
  return where(x1 != x1 | (x1 > x2), x2, x1)

def pass_on(c, x=None, y=None):
  return where(c, x, y)

def pass_twice(c, a=None, b=None):
  return pass_on(c, a, b)

def one_on(c, a=None):
  return where(c, a, None)

def calls_pass_on(c):
  return pass_on(c, 1, 2)

def calls_twice(c):
  return pass_twice(c, b=2, a=1)

def calls_one_on(c):
  return one_on(c, 1)

def leaves_one_on(c):
  return one_on(c)

def leaves_pass_on(c):
  return pass_on(c, y=None)

def recurses(c, x=None):
  if c:
    return recurses(c - 1, x)
  return where(c, x, x)

def calls_recurses(c):
  return recurses(c, 1)

def typed(c, a: int, b: "Array"):
  return where(c, a, b)

def typed_maybe(c, a: int | None = None):
  return where(c, a, a)

def masked(c, x, alternative=0):
  return where(c, x, alternative)

def leaves_default(c, x):
  return masked(c, x)

def spreads_keywords(c, x, **kw):
  return masked(c, x, **kw)

def each_call_fills_one(c, p, q):
  return where(c, p, 1) + where(c, 1, q)

def one_call_fills_none(c, p, q):
  return where(c, p, 1) + where(c, p, q)

def each_passes_on(c, a=None, b=None):
  return pass_on(c, a, None) + pass_on(c, None, b)

def leaves_a(c):
  return each_passes_on(c, b=2)

def fills_both(c):
  return each_passes_on(c, 1, 2)
"""


def test_a_guard_follows_the_parameters_passed_on(tree, capsys):
    (tree / "passing.py").write_text(_PASSING)
    found = {f["name"] for f in _json(capsys, "binds", "p", "--root", str(tree))["found"]}
    assert {"passing.pass_on", "passing.pass_twice", "passing.one_on",
            "passing.leaves_one_on", "passing.leaves_pass_on", "passing.recurses",
            "passing.typed_maybe", "passing.spreads_keywords",
            "passing.one_call_fills_none", "passing.each_passes_on",
            "passing.leaves_a"} <= found
    # left to a default that is a value (`alternative=0`): y is not None
    assert not found & {"passing.fmax", "passing.calls_pass_on", "passing.calls_twice",
                        "passing.calls_one_on", "passing.calls_recurses", "passing.typed",
                        "passing.leaves_default", "passing.each_call_fills_one",
                        "passing.fills_both"}


_MODES = """\
from lib import nonzero

def padded(c, mode="constant"):
  if mode == "constant":
    return c
  elif mode == "edge":
    return nonzero(c)
  return c

def pads_edge(c):
  return padded(c, "edge")

def pads_default(c):
  return padded(c)

def pads_wrap(c):
  return padded(c, mode='wrap')

def pads_unknown(c, m):
  return padded(c, m.lower())

def passes_mode(c, mode="constant"):
  return padded(c, mode)

def passes_default(c):
  return passes_mode(c)

def passes_edge(c):
  return passes_mode(c, mode="edge")

def spreads(c, **kw):
  return padded(c, **kw)
"""


def test_a_call_under_an_equality_with_a_word_runs_only_where_it_may_hold(tree, capsys):
    (tree / "modes.py").write_text(_MODES)
    found = {f["name"] for f in _json(capsys, "binds", "p", "--root", str(tree))["found"]}
    assert {"modes.padded", "modes.pads_edge", "modes.pads_unknown", "modes.passes_mode",
            "modes.passes_edge", "modes.spreads"} <= found
    assert not found & {"modes.pads_default", "modes.pads_wrap", "modes.passes_default"}


_NONE_MODES = """\
from lib import nonzero

def take(c, mode=None):
  if mode == "one_hot":
    return nonzero(c)
  return c

def takes_default(c):
  return take(c)

def takes_none(c):
  return take(c, mode=None)

def takes_hot(c):
  return take(c, "one_hot")

def not_hot(c, mode=None):
  if mode != "one_hot":
    return nonzero(c)
  return c

def not_hot_default(c):
  return not_hot(c)
"""


def test_none_equals_no_word(tree, capsys):
    """A None passed, or left to a None default, never equals a word: the call under
    `== 'one_hot'` does not run, the one under `!= 'one_hot'` does."""
    (tree / "nonemodes.py").write_text(_NONE_MODES)
    found = {f["name"] for f in _json(capsys, "binds", "p", "--root", str(tree))["found"]}
    assert {"nonemodes.take", "nonemodes.takes_hot", "nonemodes.not_hot",
            "nonemodes.not_hot_default"} <= found
    assert not found & {"nonemodes.takes_default", "nonemodes.takes_none"}


@pytest.mark.parametrize("text, guard", [
    (b"def f(m):\n  if m == 'edge':\n    g()\n", {"m==edge"}),
    (b"def f(m):\n  if m == 'a b':\n    g()\n", set()),  # not a word
    (b"def f(m):\n  if m == 'edge' or c:\n    g()\n", set()),
    (b"def f(m):\n  m = h(m)\n  if m == 'edge':\n    g()\n", set()),  # rebound
])
def test_which_words_a_line_requires(text, guard):
    guards = Guards(text, [(0, len(text))])
    at = text.index(b"g()")
    assert {g for g in guards.at(at) if g.partition("==")[0] not in guards.assigned} == guard


def test_path_says_when_its_first_chain_is_not_how_binds_has_it(tree, capsys):
    (tree / "passing.py").write_text(_PASSING)
    guarded = _json(capsys, "path", "passing.fmax", "p", "--root", str(tree))
    assert guarded["left_out"] == "guarded_call" and guarded["count"] >= 1
    assert _json(capsys, "path", "passing.pass_on", "p", "--root", str(tree))["left_out"] is None


def test_a_function_reached_under_too_many_guards_is_walked_unguarded():
    guards = [frozenset({f"p{i}"}) for i in range(MAX_GUARDS + 2)]
    rows = {1: [Step(2, 1, 1, True, guard, (frozenset(),)) for guard in guards],
            2: [Step(3, 2, 1, True, frozenset(), (frozenset().union(*guards),))]}
    parent, _levels, _lines = trace_walk(
        lambda ids: [row for i in ids for row in rows.get(i, ())], [1])
    assert parent == {2: 1, 3: 2}


_SETS = """\
from lib import nonzero

STATS = ("mean", "median")
TWICE = ("mean",)
TWICE = ("edge",)

def by_tuple(c, mode="constant"):
  if mode in ("edge", "wrap"):
    return nonzero(c)

def by_local(c, mode="constant"):
  stat_funcs = {"maximum": max, "mean": len}
  if mode == "constant":
    return c
  elif mode in stat_funcs:
    return nonzero(c)

def by_global(c, mode="constant"):
  if mode in STATS:
    return nonzero(c)

def by_negation(c, mode="constant"):
  if mode not in ("constant", "empty"):
    return nonzero(c)

def by_inequality(c, mode="constant"):
  if mode != "constant":
    return nonzero(c)

def forwards(c, mode="constant"):
  return by_local(c, mode)

def by_twice(c, mode="constant"):
  if mode in TWICE:
    return nonzero(c)

def by_changed(c, mode="constant"):
  funcs = {"mean": len}
  funcs["constant"] = len
  if mode in funcs:
    return nonzero(c)

def by_comprehension(c, mode="constant"):
  funcs = {m: len for m in ("mean",)}
  if mode in funcs:
    return nonzero(c)

def by_rebound(c, mode="constant"):
  mode = mode.lower()
  if mode in ("mean",):
    return nonzero(c)

def by_a_string(c, mode="constant"):
  if mode in ("constant-ish"):
    return nonzero(c)

def tuple_default(c):
  return by_tuple(c)

def tuple_wrap(c):
  return by_tuple(c, "wrap")

def local_default(c):
  return by_local(c)

def local_mean(c):
  return by_local(c, mode="mean")

def global_edge(c):
  return by_global(c, "edge")

def global_median(c):
  return by_global(c, "median")

def negation_default(c):
  return by_negation(c)

def negation_edge(c):
  return by_negation(c, "edge")

def inequality_default(c):
  return by_inequality(c)

def forwards_default(c):
  return forwards(c)

def forwards_mean(c):
  return forwards(c, "mean")

def twice_default(c):
  return by_twice(c)

def changed_default(c):
  return by_changed(c)

def comprehension_default(c):
  return by_comprehension(c)

def rebound_default(c):
  return by_rebound(c, "MEAN")

def string_default(c):
  return by_a_string(c)
"""


def test_a_call_under_a_set_of_words_runs_only_where_it_may_hold(tree, capsys):
    (tree / "sets.py").write_text(_SETS)
    found = {f["name"] for f in _json(capsys, "binds", "p", "--root", str(tree))["found"]}
    assert {f"sets.{name}" for name in (
        "tuple_wrap", "local_mean", "global_median", "negation_edge", "forwards",
        "forwards_mean", "by_local", "by_global")} <= found
    assert not found & {f"sets.{name}" for name in (
        "tuple_default", "local_default", "global_edge", "negation_default",
        "inequality_default", "forwards_default")}
    # what is not read surely guards nothing: a name bound twice, or changed, a
    # comprehension, a parameter rebound, a string (`in` tests a substring)
    assert {f"sets.{name}" for name in (
        "twice_default", "changed_default", "comprehension_default", "rebound_default",
        "string_default")} <= found


def _guards_of(text: bytes, start: int = 0) -> set[str]:
    guards = Guards(text, [(start, len(text))])
    return {g for g in guards.at(text.rindex(b"g()")) if g.partition("==")[0]
            not in guards.assigned}


@pytest.mark.parametrize("test, guard, unread", [
    (b"m in ('a', 'b')", "m==a/b", [b"m in ('a')", b"m in ('a', 1)", b"m in ()",
                                    b"m in ('a',) or c", b"m in ('a b',)"]),
    (b"m in {'b', 'a'}", "m==a/b", [b"m in {'a', *c}"]),
    (b"m in ['a']", "m==a", [b"m in ['a'] + c"]),
    (b"m not in ('a', 'b')", "m==!a/b", [b"not m in ('a', 'b')"]),
    (b"m != 'a'", "m==!a", [b"m != 'a' and c"]),
])
def test_which_sets_of_words_a_line_requires(test, guard, unread):
    def text(test):
        return b"def f(m):\n  if " + test + b":\n    g()\n"

    assert _guards_of(text(test)) == {guard}
    assert all(_guards_of(text(each)) == set() for each in unread)


@pytest.mark.parametrize("body, unread", [
    (b"  w = {'a': h, 'b': k}\n", [
        b"  w = {'a': h, 'b': k}\n  w['c'] = k\n",  # changed
        b"  w = {'a': h, 'b': k}\n  w.update(c)\n",
        b"  w = {'a': h, 'b': k}\n  h(w)\n",  # handed to what may change it
        b"  w = {'a': h}\n  w = {'b': k}\n",  # bound twice
        b"  w = {m: h for m in 'ab'}\n",  # a comprehension
        b"  if c:\n    w = {'a': h, 'b': k}\n",  # not the function's own statement
        b"  w = c\n"]),
    (b"  w = ('a', 'b')\n  v = w\n", [  # a tuple: no use changes it
        b"  w = ('a', 'b')\n  for w in c:\n    pass\n",
        b"  w = ('a', 'b')\n  def h(w):\n    pass\n"]),
])
def test_a_set_of_words_a_function_names(body, unread):
    def text(body):
        return b"def f(m):\n" + body + b"  if m in w:\n    g()\n"

    assert _guards_of(text(body)) == {"m==a/b"}
    assert all(_guards_of(text(each)) == set() for each in unread)
    assert _guards_of(b"def f(m, w=('a',)):\n  if m in w:\n    g()\n") == set()


@pytest.mark.parametrize("module, unread", [
    (b"W = ('a', 'b')\n", [b"W = ('a', 'b')\nW = ('c',)\n",  # bound twice
                           b"W = ('a', 'b')\ndef h():\n  global W\n  W = ()\n",
                           b"if c:\n  W = ('a', 'b')\n"]),  # not a top-level statement
    (b"W = {'a': 1, 'b': 2}\n", [b"W = {'a': 1, 'b': 2}\ndef h():\n  W['c'] = 3\n",
                                 b"W = {'a': 1, 'b': 2}\nW.update(c)\n"]),
])
def test_a_set_of_words_its_module_names(module, unread):
    def guards(module):
        text = module + b"def f(m):\n  if m in W:\n    g()\n"
        return _guards_of(text, text.index(b"def f"))

    assert guards(module) == {"m==a/b"}
    assert all(guards(each) == set() for each in unread)

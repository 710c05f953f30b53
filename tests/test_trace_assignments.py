"""Trace methods assigned at a module's top level (`ad.JVPTrace.process_thing = f`) as
rules of the primitive whose bind calls that method, on small trees written here."""

from __future__ import annotations

import pytest
from inline import TRACE_CORE, indexed_tree, primitive, resolve_sources

from jaxmap.commands import callgraph, locate, lookup

_CORE = TRACE_CORE + """\
class EvalTrace(Trace):
  pass
"""
_AD = "from jax._src.core import Trace\nclass JVPTrace(Trace):\n  pass\n"
_BATCHING = "from jax._src.core import Trace\nclass BatchTrace(Trace):\n  pass\n"
_THING = """
from jax._src import core
from jax._src.interpreters import ad
from jax._src.interpreters.batching import BatchTrace

class ThingPrimitive(core.Primitive):
  def bind_with_trace(self, trace, args, params):
    return trace.process_thing(self, args, params)

thing_p = ThingPrimitive('thing')

def _thing_impl(trace, prim, args, params):
  return args

def _thing_jvp(trace, prim, args, params):
  return args

def _thing_batch(trace, prim, args, params):
  return args

def _getattr_jvp(trace, obj, attr):
  return obj

def _register_later():
  ad.JVPTrace.process_later = _thing_jvp

core.EvalTrace.process_thing = _thing_impl
ad.JVPTrace.process_thing = _thing_jvp
BatchTrace.process_thing = _thing_batch
ad.JVPTrace.process_getattr = _getattr_jvp
"""
_TREE = {"jax/__init__.py": "", "jax/_src/__init__.py": "", "jax/_src/core.py": _CORE,
         "jax/_src/interpreters/__init__.py": "", "jax/_src/interpreters/ad.py": _AD,
         "jax/_src/interpreters/batching.py": _BATCHING, "jax/_src/thing.py": _THING}


def _line(text: str, source: str = _THING) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


def _trace_rules(resolution, name: str) -> list[tuple[str, int, str, int]]:
    """(via, line of the registration, rule function, its line) of each trace rule."""
    return [(r.via, r.line, r.functions[0].name, r.functions[0].line)
            for r in primitive(resolution, name).rules if r.kind == "trace"]


def test_assigned_trace_methods_are_rules_of_the_primitive_whose_bind_calls_them():
    assert _trace_rules(resolve_sources(_TREE), "thing") == [
        ("core.EvalTrace.process_thing =", _line("core.EvalTrace.process_thing"),
         "_thing_impl", _line("def _thing_impl")),
        ("ad.JVPTrace.process_thing =", _line("ad.JVPTrace.process_thing"),
         "_thing_jvp", _line("def _thing_jvp")),
        ("BatchTrace.process_thing =", _line("BatchTrace.process_thing ="),
         "_thing_batch", _line("def _thing_batch"))]


def test_a_method_no_bind_calls_or_one_assigned_in_a_function_is_no_rule():
    res = resolve_sources(_TREE)
    vias = [r.via for p in res.primitives for r in p.rules]
    assert not [via for via in vias if "getattr" in via or "later" in via]


def test_an_assignment_replaces_the_method_the_class_body_defines():
    res = resolve_sources({**_TREE, "jax/_src/interpreters/ad.py": _AD + (
        "  def process_thing(self, prim, args, params):\n    return args\n")})
    assert sorted(via for via, *_ in _trace_rules(res, "thing")) == [
        "BatchTrace.process_thing =", "ad.JVPTrace.process_thing =",
        "core.EvalTrace.process_thing ="]


@pytest.mark.parametrize("binder", [
    "  def bind(self, *args, **params):\n    return find_top_trace(args).process_thing(self)",
    "  def process(self, trace, fun, tracers, params):\n    return trace.process_thing(self)"])
def test_jax_04s_bind_and_process_methods_reach_the_trace_method(binder):
    thing = _THING.replace(
        "  def bind_with_trace(self, trace, args, params):\n"
        "    return trace.process_thing(self, args, params)", binder)
    assert thing != _THING
    res = resolve_sources({**_TREE, "jax/_src/thing.py": thing})
    assert len(_trace_rules(res, "thing")) == 3


def test_a_custom_bind_function_reaches_the_trace_method():
    res = resolve_sources({**_TREE, "jax/_src/thing.py": """
        from jax._src import core
        from jax._src.interpreters import batching
        index_p = core.Primitive('index')
        def _index_bind(*, axis_name):
          return current_trace().process_index(axis_name)
        index_p.def_custom_bind(_index_bind)
        def _vmap_index(self, axis_name):
          return 0
        batching.BatchTrace.process_index = _vmap_index
        """})
    assert [(via, function) for via, _, function, _ in _trace_rules(res, "index")] == [
        ("batching.BatchTrace.process_index =", "_vmap_index")]


@pytest.fixture(scope="module")
def thing_tree(tmp_path_factory):
    index = indexed_tree(tmp_path_factory, _TREE)
    yield index
    index.close()


def test_primitives_missing_counts_them_as_their_class_kind(thing_tree):
    def names(**filters) -> list[str]:
        return [p.name for p in lookup.primitives(thing_tree, **filters)]
    assert names(missing=("jvp",)) == names(missing=("batching",)) == []
    assert names(has=("jvp", "batching", "impl")) == ["thing"]
    assert names(has=("linearization",)) == []


def test_locate_kind_shows_the_assigned_function(thing_tree):
    (found,) = locate.locate(thing_tree, "thing", kind="jvp").primitives
    ((rule),) = found.rules
    assert (rule.loc.file, rule.loc.line) == ("jax/_src/thing.py",
                                              _line("ad.JVPTrace.process_thing"))
    assert (rule.function.name, rule.function.loc.line) == ("_thing_jvp",
                                                            _line("def _thing_jvp"))


def test_callers_say_the_function_runs_as_the_class_kind(thing_tree):
    answer = callgraph.callers(thing_tree, "_thing_jvp")
    assert [(r.kind, r.primitive, r.line) for r in answer.registrations] == [
        ("jvp", "thing", _line("ad.JVPTrace.process_thing"))]

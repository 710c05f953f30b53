"""The call graph on inline sources: one edge idiom, or one unresolved case, per test."""

from __future__ import annotations

import textwrap

from inline import resolve_sources

from jaxmap.flow.calls import BindRow, CallRow, Reach
from jaxmap.indexing.extract import extract
from jaxmap.models import EXTERNAL, HANDED, RESOLVED, UNRESOLVED

CORE = "from jax._src import core\n"


def edges(res, caller: str) -> dict[str, tuple[str, str | None]]:
    """text -> (status, callee qualname) of each edge out of `caller`, its last but one
    to the module variable it is called through (`impl(x)`, `impl = api_boundary(_impl)`:
    an edge to `_impl`, then one to `impl`)."""
    names = [d.qualname for d in res.definitions]
    variables = {i for i, d in enumerate(res.definitions) if d.kind == "variable"}
    caller_id = names.index(caller)
    found: dict[str, tuple[str, str | None]] = {}
    for c, callee, text, status, *_ in res.calls:
        if c == caller_id and not (text in found and callee in variables):
            found[text] = (status, names[callee] if callee is not None else None)
    return found


def binders(res, prim: str) -> set[tuple[str, str | None]]:
    """(function, helper) of each binds edge to primitive `prim`."""
    pid = next(i for i, p in enumerate(res.primitives) if p.name == prim)
    return {(f"{module}.{function}", via) for module, function, p, _l, _c, via in res.binds
            if p == pid}


def test_call_through_an_import_alias_and_a_reexport():
    res = resolve_sources({
        "pkg/__init__.py": "from pkg._impl import helper as helper\n",
        "pkg/_impl.py": "def helper(x): return x\n",
        "user.py": "import pkg as P\ndef f(x):\n  return P.helper(x)\n"})
    assert edges(res, "user.f") == {"P.helper": (RESOLVED, "pkg._impl.helper")}


def test_partial_and_a_name_handed_on_are_edges():
    res = resolve_sources({"m.py": """
        from functools import partial
        def target(x): return x
        def _private(x): return x
        def f(x):
          g = partial(target, 1)
          return jit(_private)(x)
        """})
    found = edges(res, "m.f")
    assert found["target"] == (RESOLVED, "m.target")
    assert found["_private"] == (RESOLVED, "m._private")


def test_wrapper_assigned_at_module_level_calls_what_it_wraps():
    res = resolve_sources({"m.py": """
        def api_boundary(f): return f
        def _impl(x): return x
        impl = api_boundary(_impl)
        def f(x): return impl(x)
        """})
    assert edges(res, "m.f")["impl"] == (RESOLVED, "m._impl")
    assert (RESOLVED, "m.impl") in {(status, res.definitions[callee].qualname)
                                    for _c, callee, text, status, *_ in res.calls
                                    if text == "impl" and callee is not None}


def test_method_on_self_through_a_base_class():
    res = resolve_sources({"m.py": """
        class Base:
          def helper(self): pass
        class Child(Base):
          def run(self):
            return self.helper() + self.missing()
        """})
    found = edges(res, "m.Child.run")
    assert found["self.helper"] == (RESOLVED, "m.Base.helper")
    assert found["self.missing"] == (UNRESOLVED, None)


def test_nested_def_and_lambda_belong_to_the_outer_function():
    res = resolve_sources({"m.py": """
        def a(x): return x
        def b(x): return x
        def f(x):
          def inner(y):
            return a(y)
          return (lambda z: b(z))(inner(x))
        """})
    found = edges(res, "m.f")
    assert found["a"] == (RESOLVED, "m.a") and found["b"] == (RESOLVED, "m.b")


def test_external_calls_are_known_and_locals_are_unresolved():
    res = resolve_sources({"m.py": """
        import numpy as np
        def f(x, fun):
          y = np.sum(len(x))
          return fun(y) + x.reshape(3)
        """})
    found = edges(res, "m.f")
    assert found["np.sum"] == (EXTERNAL, None) and found["len"] == (EXTERNAL, None)
    assert found["fun"] == (UNRESOLVED, None) and found["x.reshape"] == (UNRESOLVED, None)


def test_comments_docstrings_and_definitions_are_not_calls():
    res = resolve_sources({"m.py": '''
        def k(y): return y
        def f(x):
          """Call g(x) to do it."""
          # TODO(someone): h(x)
          def inner(y): return y
          return k(inner(x))
        '''})
    assert set(edges(res, "m.f")) == {"k"}  # (its own `inner`: a call within it)


def test_string_prefixes_are_not_names_and_a_callee_is_placed_at_its_first_call():
    res = resolve_sources({"m.py": """
        def g(x): return x
        def f(x):
          print(f"{x}", rb"y")
          h = g
          return g(x)
        """})
    names = [d.qualname for d in res.definitions]
    lines = {text: line for caller, _c, text, _s, line, *_ in res.calls
             if caller == names.index("m.f")}
    assert lines == {"print": 4, "g": 6}


def test_direct_binder_and_binders_through_a_helper():
    res = resolve_sources({"m.py": CORE + """
        p_p = core.Primitive('p')
        q_p = core.Primitive('q')
        def direct(x): return p_p.bind(x)
        def _bind(prim, x): return prim.bind(x)
        def via_helper(x): return _bind(q_p, x)
        def choose(x, c):
          prim = p_p if c else q_p
          return prim.bind(x)
        """})
    assert binders(res, "p") == {("m.direct", None), ("m.choose", None)}
    assert binders(res, "q") == {("m.via_helper", "_bind"), ("m.choose", None)}


def test_a_helper_binding_its_own_local_binds_none_of_its_callers_primitives():
    """`prim = c_p if flag else d_p; prim.bind(x)` binds what the helper names; its
    caller's own `prim` (a_p or b_p) is not what it binds."""
    res = resolve_sources({"m.py": CORE + """
        a_p = core.Primitive('a')
        c_p = core.Primitive('c')
        d_p = core.Primitive('d')
        def inner(x, flag):
          prim = c_p if flag else d_p
          return prim.bind(x)
        def outer(x, flag):
          if flag:
            return inner(x, flag)
          prim = a_p if flag else a_p
          return prim.bind(x)
        """})
    assert binders(res, "a") == {("m.outer", None)}
    assert binders(res, "c") == binders(res, "d") == {("m.inner", None)}


def test_a_primitives_bind_handed_on_binds_it():
    res = resolve_sources({"m.py": CORE + """
        from functools import partial
        sink_p = core.Primitive('sink')
        def tree_map(f, x): return f(x)
        def sink(x):
          tree_map(partial(sink_p.bind, keep=True), x)
        def named(x):
          return sink_p.binder, x.bind
        """})
    assert binders(res, "sink") == {("m.sink", None)}


def test_tests_reach_primitives_through_other_modules_and_own_helpers():
    res = resolve_sources({
        "lib.py": CORE + "p = core.Primitive('p')\ndef api(x): return p.bind(x)\n",
        "wrap.py": "import lib\ndef outer(x): return lib.api(x)\n",
        "tests/test_lib.py": """
            import wrap
            def _check(x): return wrap.outer(x)
            def test_it():
              _check(1)
            """})
    assert [(t[1], t[2]) for t in res.tests] == [("test_it", "tests/test_lib.py")]


def test_a_test_hands_nothing_to_a_library_function_and_its_own_helpers_all():
    res = resolve_sources({
        "lib.py": CORE + "p = core.Primitive('p')\ndef apply(fun, x): return fun(x)\n",
        "tests/test_lib.py": """
            import lib
            def _double(x): return lib.p.bind(x)
            def _run(fun): return fun(2)
            def test_it():
              lib.apply(_double, 1)
              _run(_double)
            """})
    assert edges(res, "lib.apply") == {"fun": (UNRESOLVED, None)}
    assert binders(res, "p") == {("tests.test_lib._double", None)}
    assert edges(res, "tests.test_lib._run")["fun"] == (RESOLVED, "tests.test_lib._double")
    assert edges(res, "tests.test_lib.test_it")["lib.apply"] == (RESOLVED, "lib.apply")


def test_a_test_sets_no_field_of_a_library_dataclass():
    res = resolve_sources({
        "lib.py": """
            from typing import NamedTuple
            class Impl(NamedTuple):
              fn: object
            def _twice(x): return x
            DEFAULT = Impl(_twice)
            def run(impl: Impl): return impl.fn(1)
            """,
        "tests/test_lib.py": """
            import lib
            def _other(x): return x
            def test_it():
              lib.run(lib.Impl(_other))
            """})
    assert edges(res, "lib.run") == {"impl.fn": (RESOLVED, "lib._twice")}


def _all_edges(res, caller: str) -> set[tuple[str, str | None]]:
    """(text, callee qualname) of every resolved edge out of `caller`."""
    names = [d.qualname for d in res.definitions]
    caller_id = names.index(caller)
    return {(text, names[callee]) for c, callee, text, status, *_ in res.calls
            if c == caller_id and callee is not None}


def test_a_test_subclass_of_a_library_class_is_not_self_in_its_methods():
    res = resolve_sources({
        "lib.py": CORE + """
            p = core.Primitive('p')
            q = core.Primitive('q')
            def _default(x): return x
            class Trace:
              handler = _default
              def process(self, x): return q.bind(x)
              def run(self, x): return _dispatch(self, x)
              def handle(self, x): return self.handler(x)
            def _dispatch(trace, x): return trace.process(x)
            """,
        "tests/test_lib.py": """
            import lib
            def _rule(x): return lib.p.bind(x)
            class MyTrace(lib.Trace):
              handler = _rule
              def process(self, x): return lib.p.bind(x)
            def test_it():
              MyTrace().run(1)
            def test_own():
              MyTrace().process(1)
            """})
    assert _all_edges(res, "lib._dispatch") == {("trace.process", "lib.Trace.process")}
    assert _all_edges(res, "lib.Trace.handle") == {("self.handler", "lib._default")}
    assert binders(res, "p") == {("tests.test_lib.MyTrace.process", None),
                                 ("tests.test_lib._rule", None)}
    assert [t[1] for t in res.tests if res.primitives[t[0]].name == "p"] == ["test_own"]

def test_instances_a_test_makes_leave_a_library_singleton_one():
    res = resolve_sources({
        "lib.py": CORE + """
            p = core.Primitive('p')
            class State: pass
            _state = State()
            def _log(x): return p.bind(x)
            _state.hook = _log
            def run(x): return _state.hook(x)
            """,
        "tests/test_lib.py": """
            import lib
            def test_one(): lib.State()
            def test_two(): lib.State()
            """})
    assert edges(res, "lib.run") == {"_state.hook": (RESOLVED, "lib._log")}


def test_a_test_class_annotating_a_field_leaves_the_library_classes_agreeing():
    res = resolve_sources({
        "lib.py": """
            class Impl:
              def fn(self, x): return x
            class Key:
              _impl: Impl
            def use(key): return key._impl.fn(1)
            """,
        "tests/test_lib.py": """
            class FakeImpl:
              def fn(self, x): return x
            class FakeKey:
              _impl: FakeImpl
            """})
    assert edges(res, "lib.use") == {"key._impl.fn": (RESOLVED, "lib.Impl.fn")}

def test_a_call_that_cannot_be_told_is_kept_with_its_text():
    res = resolve_sources({"m.py": "def f(obj):\n  return obj.method(1)\n"})
    assert [(text, status) for _c, _t, text, status, *_ in res.calls] == \
        [("obj.method", UNRESOLVED)]


def test_top_level_code_and_class_bodies_are_callers():
    res = resolve_sources({"m.py": """
        def make(x): return x
        def _impl(x): return x
        def wrap(f): return f
        def register(f): return f
        wrap(_impl)
        register(_impl)
        class Tracer:
          _bool = make(bool)
          def method(self): return make(1)
        """})
    # (a registrar keeps _impl for later: no edge; see test_stored_rules.py)
    assert edges(res, "m") == {"wrap": (RESOLVED, "m.wrap"), "_impl": (HANDED, "m._impl"),
                               "register": (RESOLVED, "m.register")}
    assert [row.line for row in res.calls if row.text == "_impl"] == [6]  # wrap's only
    assert edges(res, "m.Tracer") == {"make": (RESOLVED, "m.make")}
    assert edges(res, "m.Tracer.method") == {"make": (RESOLVED, "m.make")}


def test_import_statements_are_not_calls():
    res = resolve_sources({
        "lib.py": "def _helper(x): return x\ndef _other(x): return x\n",
        "m.py": """
            from lib import (_helper,
                             _other as _other)
            def f(x):
              from lib import (_other)
              from lib import _helper, \\
                  _other, _helper
              return x
            """})
    assert edges(res, "m") == {} and edges(res, "m.f") == {}


def test_a_test_does_not_reach_what_a_class_body_calls():
    res = resolve_sources({
        "lib.py": CORE + "p = core.Primitive('p')\ndef api(x): return p.bind(x)\n"
                         "class Holder:\n  value = api(1)\n",
        "tests/test_lib.py": "import lib\ndef test_it():\n  lib.Holder()\n"})
    assert edges(res, "lib.Holder") == {"api": (RESOLVED, "lib.api")}
    assert res.tests == []


def test_a_decorator_is_a_call_with_or_without_arguments():
    res = resolve_sources({"m.py": """
        def api_boundary(f): return f
        def register(f): return f
        def wraps(g): return lambda f: f
        def matmul(a, b): return a
        @api_boundary
        def f(x):
          @wraps(x)  # with arguments
          @register
          def inner(): pass
          y = x @matmul  # a product, not a decorator
          return y
        class C:
          @register  # a class body's
          def method(self): pass
        """})
    assert edges(res, "m") == {"api_boundary": (RESOLVED, "m.api_boundary")}
    assert edges(res, "m.f") == {"wraps": (RESOLVED, "m.wraps"),
                                 "register": (RESOLVED, "m.register")}
    assert edges(res, "m.C") == {"register": (RESOLVED, "m.register")}


def test_a_class_only_named_is_not_called():
    res = resolve_sources({
        "lib.py": "class Base: pass\n",
        "m.py": """
            import lib
            class Child(lib.Base):
              items: list[lib.Base]
            def f(x: lib.Base, y=lib.Base):
              return Child()
            """})
    assert edges(res, "m.Child") == {}
    assert edges(res, "m.f") == {"Child": (RESOLVED, "m.Child")}


def test_each_class_body_is_read_apart_from_its_methods_and_nested_classes():
    source = textwrap.dedent("""\
        def first(): pass
        @decorate(1)
        class Outer(base()):
          a = top_a()
          def method(self):
            return in_method()
          class Inner:
            b = inner_b()
          c = after_inner()
        if flag:
          class Twice:
            d = twice_d()
        else:
          def Twice():
            return in_function()
        tail()
        """).encode()
    callees = {owner: tuple(callee[:3] for callee in found)
               for owner, found in extract(source, "m")["callees"].items()}
    assert callees[""] == (("decorate", 2, True), ("tail", 16, True))
    assert callees["Outer"] == (("base", 3, True), ("top_a", 4, True),
                                ("after_inner", 9, True))
    assert callees["Outer.Inner"] == (("inner_b", 8, True),)
    assert callees["Twice"] == (("twice_d", 12, True), ("in_function", 15, True))


def test_a_function_rebound_to_a_variable_keeps_its_calls():
    res = resolve_sources({"m.py": """
        def helper(): return 1
        def Layer():
          return helper()
        Layer = Layer()
        """})
    assert edges(res, "m.Layer") == {"helper": (RESOLVED, "m.helper")}


def test_functions_calling_each_other_reach_the_same_primitives_whoever_is_asked_first():
    # 0 <-> 1 -> 2 <-> 3; 0 binds primitive 10, 3 binds 30 (a cycle behind a cycle)
    edges_ = [(0, 1), (1, 0), (1, 2), (2, 3), (3, 2)]
    call_rows = [CallRow(a, b, f"f{b}", RESOLVED, 1) for a, b in edges_]
    bind_rows = [BindRow("m", "f0", 10, 1, 0, None), BindRow("m", "f3", 30, 1, 3, None)]
    for first in range(4):
        reach = Reach(call_rows, bind_rows, bodies=set())
        reach(first)
        assert [reach(i) for i in range(4)] == [{10, 30}, {10, 30}, {30}, {30}]


def test_a_constant_argument_keeps_the_place_of_those_after_it():
    # `second(1, target)` returns target, not what other calls hand `second`: the 1 is
    # the first argument, not dropped (nor is `None` read as a name)
    res = resolve_sources({"lib.py": """
        def second(a, b):
          return b
        def target(x):
          return x
        def decoy(x):
          return x
        def use():
          f = second(1, target)
          return f(2)
        def use_none():
          g = second(None, target)
          return g(2)
        def other():
          h = second(decoy, decoy)
          return h(2)
        """})
    names = [d.qualname for d in res.definitions]
    for caller, text in (("lib.use", "f"), ("lib.use_none", "g")):
        callees = {names[callee] for c, callee, t, *_ in res.calls
                   if names[c] == caller and t == text and callee is not None}
        assert callees == {"lib.target"}, caller

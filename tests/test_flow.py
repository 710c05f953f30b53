"""Calls through values (resolve/flow.py), on inline sources: one rule per test. Each
table row is (caller, callee text, status, callee definition)."""

from __future__ import annotations

import textwrap

from inline import resolve_sources

from jaxmap.flow.calls import MAX_CERTAIN
from jaxmap.flow.flowvalues import FN
from jaxmap.indexing.extract import extract
from jaxmap.models import EXTERNAL, HANDED, RESOLVED, THROUGH, UNRESOLVED


def calls(res) -> set[tuple[str, str, str, str | None]]:
    names = [d.qualname for d in res.definitions]
    return {(names[c], text, status, names[callee] if callee is not None else None)
            for c, callee, text, status, *_ in res.calls}


def callees_of(res, caller: str) -> set[str | None]:
    return {callee for c, _text, _status, callee in calls(res) if c == caller}


def test_a_module_level_alias_is_the_function_it_names():
    res = resolve_sources({"m.py": """
        def silu(x): return x
        swish = silu
        def use(x):
          f = swish
          return f(x)
        """})
    assert ("m.use", "f", RESOLVED, "m.silu") in calls(res)


def test_a_comment_among_the_parameters_hides_none_of_them():
    # a quote and a bracket in comments of the signature: the parameters after them are
    # still parameters, their annotations read (`let's` had swallowed the body)
    res = resolve_sources({"m.py": """
        class Info:
          def check(self): return 1
        def trace(fun,  # (args, kwargs) pair
                  # TODO: let's name it
                  info: Info,
                  flag=False):
          return info.check()
        """})
    assert ("m.trace", "info.check", RESOLVED, "m.Info.check") in calls(res)


def test_a_method_of_an_instance_held_by_a_name():
    res = resolve_sources({"m.py": """
        class Frame:
          def newvar(self): pass
        def trace():
          frame = Frame()
          frame.newvar()
        """})
    assert ("m.trace", "frame.newvar", RESOLVED, "m.Frame.newvar") in calls(res)
    assert ("m.trace", "Frame", RESOLVED, "m.Frame") in calls(res)


def test_calling_a_class_runs_its_init_found_up_the_mro():
    res = resolve_sources({"m.py": """
        class Base:
          def __init__(self): pass
        class Child(Base): pass
        def make(): return Child()
        """})
    assert ("m.make", "Child", RESOLVED, "m.Base.__init__") in calls(res)


def test_an_attribute_an_init_sets_to_a_bound_method():
    res = resolve_sources({"m.py": """
        class A:
          def __init__(self):
            self.hook = self.target
          def target(self): pass
          def run(self):
            self.hook()
        """})
    assert ("m.A.run", "self.hook", RESOLVED, "m.A.target") in calls(res)


def test_a_subclass_sets_what_a_base_method_calls():
    res = resolve_sources({"m.py": """
        class Base:
          def run(self):
            self.child()
        class Impl(Base):
          def __init__(self):
            self.child = self.work
          def work(self): pass
        """})
    assert ("m.Base.run", "self.child", RESOLVED, "m.Impl.work") in calls(res)


def test_a_parameter_annotated_with_a_class_of_the_tree():
    res = resolve_sources({"m.py": """
        class ShapedArray:
          def update(self, **kw): pass
        def f(aval: ShapedArray):
          return aval.update(shape=())
        """})
    assert ("m.f", "aval.update", RESOLVED, "m.ShapedArray.update") in calls(res)


def test_a_parameter_default():
    res = resolve_sources({"m.py": """
        def default_rule(x): return x
        def apply(x, rule=default_rule):
          return rule(x)
        """})
    assert ("m.apply", "rule", RESOLVED, "m.default_rule") in calls(res)


def test_super_follows_the_mro():
    res = resolve_sources({"m.py": """
        class A:
          def __init__(self): pass
        class B(A):
          def __init__(self):
            super().__init__()
        class C(B, A):
          def __init__(self):
            super().__init__()
        """})
    found = calls(res)
    assert ("m.B.__init__", "super().__init__", RESOLVED, "m.A.__init__") in found
    assert ("m.C.__init__", "super().__init__", RESOLVED, "m.B.__init__") in found


def test_mro_takes_the_first_definition():
    res = resolve_sources({"m.py": """
        class A:
          def f(self): pass
        class B(A):
          def f(self): pass
        class C(B): pass
        def use():
          C().f()
        """})
    assert callees_of(res, "m.use") >= {"m.B.f"} and "m.A.f" not in callees_of(res, "m.use")


def test_dict_elements_by_constant_key():
    res = resolve_sources({"m.py": """
        def f1(): pass
        def f2(): pass
        table = {"a": f1, "b": f2}
        table["c"] = f2
        def use():
          table["a"]()
        """})
    assert callees_of(res, "m.use") == {"m.f1"}


def test_list_elements_and_appends():
    res = resolve_sources({"m.py": """
        def f1(): pass
        def f2(): pass
        hooks = [f1]
        hooks.append(f2)
        def use():
          for hook in hooks:
            hook()
        """})
    assert callees_of(res, "m.use") == {"m.f1", "m.f2"}


def test_a_returned_closure_is_its_definition():
    res = resolve_sources({"m.py": """
        def make():
          def inner(): pass
          return inner
        def use():
          g = make()
          g()
          make()()
        """})
    found = calls(res)
    assert ("m.use", "g", RESOLVED, "m.make") in found
    assert ("m.use", "make()", RESOLVED, "m.make") in found


def test_a_call_of_ones_own_nested_def_is_no_edge_and_a_recursion_is():
    res = resolve_sources({"m.py": """
        def outer(xs):
          def inner(x): return x
          f = lambda x: x
          list(map(inner, xs))
          return inner(xs), f(xs), outer(xs[1:])
        """})
    found = calls(res)
    assert ("m.outer", "outer", RESOLVED, "m.outer") in found
    assert [text for _c, text, _s, callee in found if callee == "m.outer"] == ["outer"]
    assert not any(text in ("inner", "f") for _c, text, _s, _t in found)  # nor unresolved


def test_what_is_set_on_one_of_many_instances_is_not_their_classs():
    res = resolve_sources({"m.py": """
        class Primitive:
          def __init__(self, name): self.name = name
          def bind(self, x): return x
        def _remat_bind(x): return x
        a_p = Primitive("a")
        remat_p = Primitive("remat")
        remat_p.bind = _remat_bind
        class State:
          pass
        state = State()
        def _hook(): pass
        state.hook = _hook
        def use(p: Primitive, x):
          state.hook()
          return p.bind(x)
        """})
    found = calls(res)
    assert ("m.use", "p.bind", RESOLVED, "m.Primitive.bind") in found
    assert ("m.use", "state.hook", RESOLVED, "m._hook") in found  # the one State made
    # Any Primitive may be remat_p: a call that binds walks do not follow.
    assert ("m.use", "p.bind", THROUGH, "m._remat_bind") in found


def test_a_function_passed_in_is_called_through_the_parameter():
    res = resolve_sources({"m.py": """
        def work(): pass
        def rest(): pass
        def apply(fun):
          return fun()
        def user():
          return apply(work)
        def other():
          return apply(rest)
        """})
    found = calls(res)
    assert ("m.apply", "fun", THROUGH, "m.work") in found
    assert ("m.apply", "fun", THROUGH, "m.rest") in found
    assert ("m.user", "work", HANDED, "m.work") in found  # what reachability follows


def test_what_one_call_alone_hands_a_private_parameter_is_as_certain_as_its_callers_names():
    res = resolve_sources({"m.py": """
        from functools import partial
        def work(): pass
        def rest(): pass
        def _apply(fun, then):
          fun()
          then()
        def apply(fun):
          fun()
        def user():
          run = partial(_apply, then=work)
          run(work)
          run(rest)
          apply(work)
          def inner(): pass
          return partial(_apply, inner)
        """})
    found = calls(res)
    assert ("m._apply", "then", RESOLVED, "m.work") in found  # handed by the partial alone
    assert ("m._apply", "fun", THROUGH, "m.rest") in found  # three calls hand it
    # A public function is called from outside the tree too, with anything.
    assert ("m.apply", "fun", THROUGH, "m.work") in found


def test_a_nested_def_handed_once_stays_through():
    res = resolve_sources({"m.py": """
        def _run(fun):
          return fun()
        def outer():
          def inner(): pass
          return _run(inner)
        """})
    # The edge stands for `inner`, a part of outer's body: not followed as outer.
    assert ("m._run", "fun", THROUGH, "m.outer") in calls(res)


def test_keyword_arguments_bind_by_name():
    res = resolve_sources({"m.py": """
        def g(): pass
        def h(): pass
        def apply(a, b):
          a()
          b()
        def user():
          apply(b=g, a=h)
        def other():
          apply(g, h)
        """})
    found = calls(res)
    assert {("m.apply", "a", THROUGH, "m.h"), ("m.apply", "a", THROUGH, "m.g"),
            ("m.apply", "b", THROUGH, "m.g"), ("m.apply", "b", THROUGH, "m.h")} <= found


def test_a_decorator_wrapper_is_reached_by_the_decorated_names_callers():
    res = resolve_sources({"m.py": """
        def boundary(fun):
          def wrapped(*args):
            return fun(*args)
          return wrapped
        @boundary
        def api(x): return x
        def user():
          return api(1)
        """})
    found = calls(res)
    # Through the def the name means, which calls what its decorator made of it.
    assert ("m.user", "api", RESOLVED, "m.api") in found
    assert ("m.api", "api", RESOLVED, "m.boundary") in found
    assert ("m.user", "api", RESOLVED, "m.boundary") not in found
    assert ("m.boundary", "fun", THROUGH, "m.api") in found


def test_a_decorated_function_runs_the_call_of_the_instance_its_decorator_makes():
    res = resolve_sources({"m.py": """
        def bind(fun, *args): pass
        class custom_jvp:
          def __init__(self, fun):
            self.fun = fun
          def __call__(self, *args):
            return bind(self.fun, *args)
        @custom_jvp
        def relu(x): return x
        def wrap(fun): return fun
        @wrap
        def plain(x): return x
        """})
    assert ("m.relu", "relu", RESOLVED, "m.custom_jvp.__call__") in calls(res)
    assert callees_of(res, "m.plain") == set()


def test_a_generator_yields_functions():
    res = resolve_sources({"m.py": """
        def f(): pass
        def gen():
          yield f
        def use():
          for g in gen():
            g()
        """})
    assert callees_of(res, "m.use") == {"m.gen", "m.f"}


def test_a_loop_over_an_instance_calls_iter_and_next():
    res = resolve_sources({"m.py": """
        class Counter:
          def __iter__(self):
            return self
          def __next__(self):
            raise StopIteration
        def use():
          for x in Counter():
            pass
        """})
    assert callees_of(res, "m.use") >= {"m.Counter", "m.Counter.__iter__",
                                          "m.Counter.__next__"}


def test_a_class_raised_by_name_is_constructed():
    res = resolve_sources({"m.py": """
        class Oops(Exception):
          def __init__(self): pass
        def fail():
          raise Oops
        """})
    assert ("m.fail", "Oops", RESOLVED, "m.Oops.__init__") in calls(res)


def test_a_function_handed_to_a_callable_outside_the_tree_is_called_there():
    res = resolve_sources({"m.py": """
        import jax
        def leaf(x): return x
        def user(tree):
          return jax.tree.map(leaf, tree)
        """})
    assert ("m.user", "leaf", RESOLVED, "m.leaf") in calls(res)


def test_a_relative_import():
    res = resolve_sources({
        "pkg/__init__.py": "",
        "pkg/a.py": "from .b import helper\ndef f():\n  helper()\n",
        "pkg/b.py": "def helper(): pass\n"})
    assert ("pkg.a.f", "helper", RESOLVED, "pkg.b.helper") in calls(res)


def test_a_call_through_what_cannot_be_named_stays_unresolved():
    res = resolve_sources({"m.py": """
        def use(obj):
          obj.method()
        """})
    assert calls(res) == {("m.use", "obj.method", UNRESOLVED, None)}


def test_values_that_hold_themselves_end():
    # A cycle of names, a class its own base, a function returning its own call:
    # the flow answers what it knows instead of recursing without end.
    res = resolve_sources({"m.py": """
        a = b
        b = a
        class Loop(Loop): pass
        def f():
          return f()
        def use():
          a()
          f()()
          Loop().g()
        """})
    assert ("m.use", "f", RESOLVED, "m.f") in calls(res)


def test_flow_facts_are_read_from_unparsed_bodies():
    facts = extract(b"def f(x):\n    g = lambda: x\n    return g\n", "m")
    assert ("=", "g", "lambda: x", 2, 4) in facts["flow"]["f"]
    assert ("=", "<return>", "g", 3, 4) in facts["flow"]["f"]


def test_reachability_does_not_follow_what_a_parameter_received():
    res = resolve_sources({
        "lib.py": """
            from jax._src import core
            p = core.Primitive('p')
            q = core.Primitive('q')
            def bind_p(): return p.bind()
            def bind_q(): return q.bind()
            def apply(fun):
              return fun()
            def use_p(): return apply(bind_p)
            def use_q(): return apply(bind_q)
            """,
        "tests/test_lib.py": "import lib\ndef test_p():\n  lib.use_p()\n"})
    names = [p.name for p in res.primitives]
    assert {(names[pid], test) for pid, test, _file, _line in res.tests} == {("p", "test_p")}


def test_a_call_that_may_be_to_many_functions_is_a_dispatch_not_followed():
    many = MAX_CERTAIN + 1
    rules = "".join(f"def rule{i}(): pass\nregistry['p{i}'] = rule{i}\n" for i in range(many))
    res = resolve_sources({"m.py": "registry = {}\n" + rules + """
def apply(name):
  rule = registry[name]
  return rule()
"""})
    assert {status for c, text, status, _ in calls(res) if c == "m.apply" and text == "rule"} \
        == {THROUGH}
    assert len(callees_of(res, "m.apply")) == many


def test_a_dispatch_over_hundreds_of_functions_lists_them_all():
    wrapped = "".join(f"@boundary\ndef api{i}(): pass\n" for i in range(300))
    res = resolve_sources({"m.py": "def boundary(fun):\n  def wrapped():\n    return fun()\n"
                                   "  return wrapped\n" + wrapped})
    assert {(text, status) for c, text, status, _ in calls(res) if c == "m.boundary"} == \
        {("fun", THROUGH)}
    assert len({c for c in callees_of(res, "m.boundary") if c.startswith("m.api")}) == 300


def test_a_call_that_may_be_to_too_many_functions_is_unresolved():
    wrapped = "".join(f"@boundary\ndef api{i}(): pass\n" for i in range(1001))
    res = resolve_sources({"m.py": "def boundary(fun):\n  def wrapped():\n    return fun()\n"
                                   "  return wrapped\n" + wrapped})
    assert {(text, status) for c, text, status, _ in calls(res) if c == "m.boundary"} == \
        {("fun", UNRESOLVED)}


ARRAY_METHODS = """
    from jax._src.numpy import scatter
    def _sum(self, axis=None): return self
    def _reshape(self, *shape): return self
    class _IndexUpdateHelper:
      def __init__(self, array):
        self.array = array
      def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)
    class _IndexUpdateRef:
      def __init__(self, array, index):
        self.array = array
      def add(self, values):
        return scatter.scatter_add(self.array, values)
    def _operator_pow(self, other): return self
    def _getitem(self, item): return self
    _array_operators = {"pow": _operator_pow, "getitem": _getitem}
    _array_methods = {"sum": _sum, "reshape": _reshape}
    _array_properties = {"at": _IndexUpdateHelper}
    """


def test_an_arrays_methods_are_read_from_the_trees_tables():
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": ARRAY_METHODS,
        "jax/_src/numpy/scatter.py": "def scatter_add(x, v) -> Array: return x\n",
        "jax/_src/numpy/lax_numpy.py": """
            from jax._src.typing import Array, ArrayLike
            def zeros(n) -> Array: return n
            def bincount(x: ArrayLike, length):
              out = zeros(length)
              total = x.sum() + x ** 2 + x[0]
              return out.at[x].add(1).reshape(-1)
            """})
    found = calls(res)
    caller = "jax._src.numpy.lax_numpy.bincount"
    assert (caller, "x.sum", RESOLVED, "jax._src.numpy.array_methods._sum") in found
    assert (caller, "out.at[x].add", RESOLVED,
            "jax._src.numpy.array_methods._IndexUpdateRef.add") in found
    assert (caller, "x pow", RESOLVED, "jax._src.numpy.array_methods._operator_pow") in found
    assert (caller, "x getitem", RESOLVED, "jax._src.numpy.array_methods._getitem") in found
    assert not any(text.startswith("length ") for _c, text, _s, _t in found)  # no Array
    # add returns what scatter_add is annotated to return: an Array
    assert (caller, "out.at[x].add(1).reshape", RESOLVED,
            "jax._src.numpy.array_methods._reshape") in found


def test_a_partial_of_a_function_returning_an_array_returns_one():
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": ARRAY_METHODS,
        "jax/_src/numpy/lax_numpy.py": """
            from functools import partial
            from jax._src.typing import Array
            def slice_in_dim(a, start, stop, axis=0) -> Array: return a
            def count(a, axis) -> int: return 0
            def gradient(a, axis):
              sliced = partial(slice_in_dim, a, axis=axis)
              counted = partial(count, a)
              return sliced(1, 2) ** 2 + counted(axis) ** 2
            """})
    powers = {text for c, text, status, callee in calls(res)
              if c.endswith(".gradient") and (callee or "").endswith("._operator_pow")}
    assert powers == {"sliced(1, 2) pow"}


def test_a_call_through_a_subscript_holding_a_subscript():
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": ARRAY_METHODS,
        "jax/_src/numpy/scatter.py": "def scatter_add(x, v) -> Array: return x\n",
        "jax/_src/numpy/polynomial.py": """
            from jax._src.typing import Array
            def polyadd(a: Array, b: Array):
              return a.at[-b.shape[0]:].add(b)
            """})
    assert ("jax._src.numpy.polynomial.polyadd", "a.at[-b.shape[0]:].add", RESOLVED,
            "jax._src.numpy.array_methods._IndexUpdateRef.add") in calls(res)


def test_an_overload_is_chosen_by_a_literal_sequence_argument():
    """`sort((a, b))[-1]`: the overload whose first parameter takes a sequence returns
    a tuple of Arrays, whose item is no Array call; `sort(x)[0]` subscripts an Array."""
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": ARRAY_METHODS,
        "jax/_src/numpy/lax_numpy.py": """
            from typing import overload
            from collections.abc import Sequence
            from jax._src.typing import Array
            @overload
            def sort(operand: Array, n: int = 1) -> Array: ...
            @overload
            def sort(operand: Sequence[Array], n: int = 1) -> tuple[Array, ...]: ...
            def sort(operand: Array | Sequence[Array], n: int = 1) -> Array | tuple[Array, ...]:
              return operand
            def lexsort(a: Array, b: Array):
              return sort((a, b), n=2)[-1]
            def first(x: Array):
              return sort(x)[0]
            """})
    subscripts = {c.rpartition(".")[2] for c, text, status, callee in calls(res)
                  if callee == "jax._src.numpy.array_methods._getitem"}
    assert subscripts == {"first"}


def test_an_operator_on_a_field_an_alias_annotates_as_an_array():
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": ARRAY_METHODS,
        "jax/_src/typing.py": "class Array: pass\nIndex = int | None | Array\n",
        "jax/_src/numpy/indexing.py": """
            from typing import NamedTuple
            from jax._src.typing import Index
            class ParsedIndex(NamedTuple):
              index: Index
            class Axis(NamedTuple):
              index: int
            def normalize(idx: ParsedIndex, axis: Axis):
              return idx.index ** 2, axis.index ** 2
            """})
    found = calls(res)
    caller = "jax._src.numpy.indexing.normalize"
    assert (caller, "idx.index pow", RESOLVED,
            "jax._src.numpy.array_methods._operator_pow") in found
    assert not any(text.startswith("axis.") for _c, text, _s, _t in found)


def test_tree_unflatten_makes_what_tree_flatten_was_given():
    res = resolve_sources({
        "jax/_src/tree_util.py": """
            def tree_flatten(tree): return [], None
            def tree_unflatten(treedef, leaves): return leaves
            """,
        "m.py": """
            from functools import partial
            from jax._src import tree_util
            class Indexer:
              def gather(self): pass
            def _scatter(leaves, *, treedef):
              rebuilt = tree_util.tree_unflatten(treedef, leaves)
              return rebuilt.gather()
            def update():
              leaves, treedef = tree_util.tree_flatten(Indexer())
              return partial(_scatter, treedef=treedef)(leaves)
            """})
    assert ("m._scatter", "rebuilt.gather", RESOLVED, "m.Indexer.gather") in calls(res)


def test_an_array_is_what_an_annotation_says_not_where_a_function_lives():
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": ARRAY_METHODS,
        "jax/_src/lax/lax.py": """
            from typing import overload
            from jax._src.typing import Array
            def _const(x, v): return v
            def pair(x) -> tuple[Array, Array]: return x, x
            def maybe(x) -> Array | None: return x
            @overload
            def ensure(x: int) -> Array: ...
            @overload
            def ensure(x: int, y: int) -> tuple[Array, ...]: ...
            def ensure(*xs): return xs
            def use(x):
              c = _const(x, 0)
              p = pair(x)
              a, b = pair(x)
              m = maybe(x)
              e = ensure(x)
              return c ** 2, p[0], a ** 2, m ** 2, e ** 2
            """})
    found = calls(res)
    power = "jax._src.numpy.array_methods._operator_pow"
    for name in ("a", "m", "e"):  # unpacked from a tuple of Arrays; a union; an overload
        assert ("jax._src.lax.lax.use", f"{name} pow", RESOLVED, power) in found
    # An unannotated helper of jax.lax, and the tuple itself, are no Arrays.
    assert not any(text in ("c pow", "p getitem") for _c, text, _s, _t in found)


def test_an_arrays_tables_are_read_whole_though_an_entry_reads_a_member():
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": """
            from jax._src.typing import Array
            def _zeros() -> Array: ...
            def _astype(self, dtype) -> Array: return self
            def _operator_rpow(self, other): return self
            def _make():
              return _zeros().astype(int)
            _array_methods = {"astype": _astype, "made": _make()}
            _array_operators = {"rpow": _operator_rpow}
            """,
        "jax/_src/lax/lax.py": """
            from jax._src.typing import Array
            def first(x: Array):
              return x.made()
            """,
        "jax/_src/numpy/ufuncs.py": """
            from jax._src.typing import Array
            def ldexp(x: Array):
              return 2 ** x.astype(int)
            """})
    # `x.made`, asked first, reads the table, which runs `_make`, whose `.astype` asks
    # the table again: what it finds then is not what `x.astype` holds.
    assert ("jax._src.numpy.ufuncs.ldexp", "x.astype(int) rpow", RESOLVED,
            "jax._src.numpy.array_methods._operator_rpow") in calls(res)


def test_a_parameter_rebound_or_narrowed_from_an_array_is_read_where_it_is_used():
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": ARRAY_METHODS,
        "jax/_src/numpy/lax_numpy.py": """
            from collections.abc import Sequence
            from jax._src.numpy import lax_numpy as np_util
            from jax._src.typing import Array, ArrayLike
            def as_tuple(xs) -> tuple[Array, ...]: return xs
            def as_array(x) -> Array: return x
            def concat(arrays: Array | Sequence[ArrayLike]):
              if isinstance(arrays, Array):
                return arrays[0]
              first = arrays ** 2
              arrays = as_tuple(arrays)
              return arrays ** 3
            def sort(operand: Array | Sequence[Array]):
              if isinstance(operand, Sequence):
                return operand[0]
              return operand ** 2
            def pad(x: ArrayLike, n):
              x = np_util.as_array(x)
              return x ** 2
            def branch(x: ArrayLike, c):
              if c:
                x = as_tuple(x)
              return x[0]
            def loop(x: ArrayLike, c):
              while c:
                x = as_tuple(x)
              return x[0]
            def unknown(x: ArrayLike, c):
              x = c(x)
              return x ** 2
            """})
    found = calls(res)
    getitem = "jax._src.numpy.array_methods._getitem"
    texts = {(c.rpartition(".")[2], t) for c, t, _s, callee in found
             if callee in (getitem, "jax._src.numpy.array_methods._operator_pow")}
    # An Array's item; after it returns, no Array; assigned a tuple of Arrays, none.
    assert ("concat", "arrays getitem") in texts and ("concat", "arrays pow") not in texts
    # Inside `isinstance(x, Sequence)`, no Array; past it, the Array the rest may be.
    assert ("sort", "operand pow") in texts and ("sort", "operand getitem") not in texts
    # Assigned an Array: one; assigned what the flow cannot tell, the parameter's Array.
    assert ("pad", "x pow") in texts and ("unknown", "x pow") in texts
    # Maybe rebound in a branch or a loop: the parameter's fact, as before.
    assert ("branch", "x getitem") in texts and ("loop", "x getitem") in texts


def test_a_function_a_jax_tracer_calls_holds_arrays_in_its_positional_parameters():
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": ARRAY_METHODS + """
            def _operator_xor(self, other): return self
            _array_operators["xor"] = _operator_xor
            """,
        "jax/_src/interpreters/mlir.py": """
            def lower_fun(fun, multiple_results=True):
              def f_lowered(ctx, *args, **params):
                return fun(*args, **params)
              return f_lowered
            def register_lowering(prim, rule): pass
            """,
        "jax/_src/prng.py": """
            from functools import partial
            from jax._src.interpreters import mlir
            def _hash_lowering(key1, key2, rounds=5):
              return key1 ^ key2, rounds ** 2
            def _folded(reduce, x, *, axis):
              return reduce(x), reduce ** 2, axis ** 2, x[0]
            def not_traced(key1, key2):
              return key1 ^ key2
            mlir.register_lowering(None, mlir.lower_fun(_hash_lowering))
            mlir.register_lowering(None, mlir.lower_fun(partial(_folded, max)))
            """})
    found = calls(res)
    xor, getitem = ("jax._src.numpy.array_methods._operator_xor",
                    "jax._src.numpy.array_methods._getitem")
    assert ("jax._src.prng._hash_lowering", "key1 xor", RESOLVED, xor) in found
    assert ("jax._src.prng._folded", "x getitem", RESOLVED, getitem) in found
    # A parameter with a default, a keyword-only one, one a partial binds, and the
    # parameters of a function no tracer calls hold no Array.
    for caller, text in (("_hash_lowering", "rounds pow"), ("_folded", "axis pow"),
                         ("_folded", "reduce pow"), ("not_traced", "key1 xor")):
        assert not any(c == f"jax._src.prng.{caller}" and t == text for c, t, _s, _x in found)


def test_a_public_alias_calls_the_function_it_names():
    res = resolve_sources({"m.py": """
        def silu(x): return x
        def _logsumexp(x): return x
        swish = silu
        logsumexp = _logsumexp
        """})
    assert {(c, callee) for c, _t, _s, callee in calls(res) if c in ("m.swish", "m.logsumexp")} \
        == {("m.swish", "m.silu"), ("m.logsumexp", "m._logsumexp")}


def test_a_closure_a_factory_made_calls_what_the_factory_was_handed():
    res = resolve_sources({"m.py": """
        def add(x, y): return x
        def _defer(name, op):
          def deferring(x, y):
            return op(x, y)
          return deferring
        def user(a, b):
          operator_add = _defer("+", add)
          return operator_add(a, b)
        """})
    assert callees_of(res, "m.user") == {"m._defer", "m.add"}


def test_a_table_longer_than_a_screen_is_read_whole():
    rows = "".join(f'  "k{i}": f{i},\n' for i in range(120))
    defs = "".join(f"def f{i}(): pass\n" for i in range(120))
    res = resolve_sources({"m.py": defs + "TABLE = {\n" + rows + "}\n"
                                   "def use():\n  return TABLE['k119']()\n"})
    assert callees_of(res, "m.use") == {"m.f119"}


def test_a_keyword_on_a_continuation_line_is_not_an_assignment():
    res = resolve_sources({"m.py": """
        def helper(): pass
        def make(**kw): return kw
        def use():
          made = make(
              helper=1)
          f = helper
          return f()
        """})
    assert callees_of(res, "m.use") == {"m.make", "m.helper"}


def test_a_value_continued_by_a_backslash_is_read_whole():
    res = resolve_sources({"m.py": """
        def logical(x): pass
        def arithmetic(x): pass
        def shift(x, unsigned):
          fn = logical if \\
            unsigned else arithmetic
          return fn(x)
        """})
    assert callees_of(res, "m.shift") == {"m.logical", "m.arithmetic"}


def test_a_parameter_handed_on_carries_what_its_callers_hand():
    res = resolve_sources({"m.py": """
        def shape(x): return x
        def inner(rule, x):
          return rule(x)
        def outer(rule, x):
          return inner(rule, x)
        def size(x): return x
        def use(x):
          return outer(shape, x)
        def other(x):
          return outer(size, x)
        """})
    found = calls(res)
    assert {("m.inner", "rule", THROUGH, "m.shape"), ("m.inner", "rule", THROUGH, "m.size")} \
        <= found


def test_a_partial_hands_its_arguments_to_the_function():
    res = resolve_sources({"m.py": """
        from functools import partial
        def shape(x): return x
        def evaluate(prim, shape_rule, *avals):
          return shape_rule(*avals)
        def make(prim, shape_rule):
          return partial(evaluate, prim, shape_rule)
        def use():
          rule = make("p", shape)
          return rule(1)
        """})
    found = calls(res)
    assert ("m.evaluate", "shape_rule", THROUGH, "m.shape") in found
    assert ("m.use", "rule", RESOLVED, "m.evaluate") in found


def test_a_function_that_returns_its_parameter_returns_what_each_call_hands_it():
    res = resolve_sources({"m.py": """
        def export(fn):
          return fn
        @export
        def neg(x): return x
        @export
        def sin(x): return x
        def use(x):
          f = neg
          return f(x)
        """})
    assert callees_of(res, "m.use") == {"m.neg"}


def test_a_dataclass_field_holds_what_its_constructions_hand_it():
    res = resolve_sources({"m.py": """
        import dataclasses
        @dataclasses.dataclass(frozen=True)
        class Entry:
          rule: object
          inline: bool = True
        def lower(x): return x
        def other(x): return x
        ENTRY = Entry(lower, False)
        def register(rule):
          return Entry(rule)
        register(other)
        register(lower)
        def apply(x):
          return ENTRY.rule(x)
        """})
    found = calls(res)
    # Written at the construction: resolved; handed through a parameter: through.
    assert ("m.apply", "ENTRY.rule", RESOLVED, "m.lower") in found
    assert ("m.apply", "ENTRY.rule", THROUGH, "m.other") in found


def test_an_attribute_of_an_unknown_value_is_typed_by_the_field_annotations():
    res = resolve_sources({"m.py": """
        from typing import NamedTuple
        class Impl(NamedTuple):
          bits: object
        def threefry_bits(k): return k
        THREEFRY = Impl(bits=threefry_bits)
        class Key:
          _impl: Impl
        class KeyType:
          _impl: Impl
        def lowering(ctx, aval):
          impl = aval.dtype._impl
          return impl.bits(ctx)
        """})
    assert ("m.lowering", "impl.bits", RESOLVED, "m.threefry_bits") in calls(res)


def test_a_registry_filled_by_a_function_is_read_with_get():
    res = resolve_sources({"m.py": """
        REGISTRY = {}
        def register(name, rule):
          REGISTRY[name] = rule
        def a(x): return x
        def b(x): return x
        def fallback(x): return x
        register("a", a)
        register("b", b)
        def apply(name, x):
          rule = REGISTRY.get(name, fallback)
          return rule(x)
        """})
    found = calls(res)
    assert ("m.apply", "rule", THROUGH, "m.a") in found
    assert ("m.apply", "rule", THROUGH, "m.b") in found
    assert ("m.apply", "rule", RESOLVED, "m.fallback") in found


def test_a_parameter_hides_the_modules_function_of_that_name():
    res = resolve_sources({"m.py": """
        def key(x): return x
        def check(key):
          return isinstance(key, int) and key()
        """})
    assert callees_of(res, "m.check") == {None}  # isinstance (outside), key() (unnamed)


def test_strings_and_comments_name_no_call():
    res = resolve_sources({"m.py": '''
        def bar(x): return x
        def documented(x):
          r"""Like bar (bar) but not: bar(x)."""
          # a comment (bar)
          return x
        '''})
    assert callees_of(res, "m.documented") == set()


def test_a_lambda_of_a_modules_top_level_is_no_callee():
    res = resolve_sources({"m.py": """
        HANDLERS = {"a": lambda x: x}
        def use(name, x):
          return HANDLERS[name](x)
        """})
    assert "m" not in callees_of(res, "m.use")


def test_a_top_level_lambda_handed_to_a_factory_is_no_callee():
    res = resolve_sources({"m.py": """
        def lower_fun(fun):
          def f_lowered(ctx, x):
            return fun(x)
          return f_lowered
        RULES = {"id": lower_fun(lambda x: x)}
        def apply(name, ctx, x):
          return RULES[name](ctx, x)
        """})
    assert "m" not in callees_of(res, "m.apply")
    assert "m.lower_fun" in callees_of(res, "m.apply")


def test_two_empty_registries_of_a_module_are_apart():
    rules = "".join(f"def jvp{i}(x): return x\ndefjvp('p{i}', jvp{i})\n"
                    f"def transpose{i}(x): return x\ndeftranspose('p{i}', transpose{i})\n"
                    for i in range(3))
    res = resolve_sources({"m.py": """
def early(f):
  return f()
jvps: dict[str, object] = {}
transposes: dict[str, object] = {}
def defjvp(p, rule):
  jvps[p] = rule
def deftranspose(p, rule):
  transposes[p] = rule
def get_transpose(p):
  return transposes[p]
""" + rules + """
def backward(name, ct):
  return get_transpose(name)(ct)
"""})
    assert {c for c in callees_of(res, "m.backward") if c != "m.get_transpose"} == \
        {f"m.transpose{i}" for i in range(3)}


def test_a_call_returns_what_it_hands_a_function_that_passes_it_on():
    res = resolve_sources({"m.py": """
        from functools import partial
        def _decorate(fun):
          def wrapper(*args):
            return fun(*args)
          return wrapper
        def maybe_wrap(f, wrap, **kwargs):
          f_ = partial(f, **kwargs)
          if wrap is None:
            return f_
          return _decorate(f_)
        def _normal(key, shape): pass
        def _uniform(key, shape): pass
        def normal(key, shape, wrap=None):
          return maybe_wrap(_normal, wrap, shape=shape)(key)
        def uniform(key, shape, wrap=None):
          return maybe_wrap(_uniform, wrap, shape=shape)(key)
        """})
    called = {callee for c, text, status, callee in calls(res)
              if c == "m.normal" and text.startswith("maybe_wrap(") and status == RESOLVED}
    assert "m._normal" in called and "m._uniform" not in called


def test_calling_an_instance_calls_its_class_dunder_call():
    res = resolve_sources({"m.py": """
        class ufunc:
          def __init__(self, fn): self._fn = fn
          def __call__(self, *args): return self._fn(*args)
        def _add(x, y): pass
        add = ufunc(_add)
        def use(x):
          return add(x, x)
        """})
    assert ("m.use", "add", RESOLVED, "m.ufunc.__call__") in calls(res)


def test_a_class_named_by_a_module_level_alias_runs_its_init():
    res = resolve_sources({
        "core.py": """
            class SetTraceContext:
              def __init__(self, trace): self.trace = trace
            set_current_trace = SetTraceContext
            """,
        "use.py": """
            import core
            def trace(t):
              with core.set_current_trace(t):
                pass
            """})
    assert "core.SetTraceContext.__init__" in callees_of(res, "use.trace")


def test_an_imported_decorated_function_holds_the_function():
    res = resolve_sources({
        "boundary.py": """
            from typing import cast
            def api_boundary(fun):
              def reraise(*args, **kwargs):
                return fun(*args, **kwargs)
              return cast(type(fun), reraise)
            """,
        "api.py": """
            from boundary import api_boundary
            @api_boundary
            def jit(fun):
              return fun
            """,
        "use.py": """
            from api import jit
            def _f(x): pass
            def run(x):
              g = jit(_f)
              return g(x)
            """})
    assert ("use.run", "g", RESOLVED, "use._f") in calls(res)


def test_a_field_of_nine_implementations_is_followed_not_a_dispatch():
    # jax 0.10.2 has nine PRNG implementations: `impl.random_bits(...)` may run any.
    impls = "".join(f"def bits{i}(key): pass\nimpl{i} = PRNGImpl(bits{i})\n" for i in range(9))
    res = resolve_sources({"m.py": """
        from typing import Callable, NamedTuple
        class PRNGImpl(NamedTuple):
          random_bits: Callable
        """ + impls.replace("\n", "\n        ") + """
        def random_bits_impl(impl: PRNGImpl, key):
          return impl.random_bits(key)
        """})
    found = {(status, callee) for c, text, status, callee in calls(res)
             if c == "m.random_bits_impl" and text == "impl.random_bits"}
    assert found == {(RESOLVED, f"m.bits{i}") for i in range(9)}


def test_a_lambda_returned_by_a_decorator_factory_hands_on_what_it_is_called_with():
    res = resolve_sources({"m.py": """
        def make_jit(fun):
          def cached(*args):
            return fun(*args)
          return cached
        def jit(fun=None, *, inline=False):
          if fun is None:
            return lambda fun: make_jit(fun)
          return make_jit(fun)
        @jit(inline=True)
        def absolute(x): pass
        """})
    assert ("m.make_jit", "fun", THROUGH, "m.absolute") in calls(res)


def test_a_re_exported_decorated_function_holds_what_its_decorator_made():
    res = resolve_sources({
        "ufuncs.py": """
            class ufunc:
              def __init__(self, fn): self.fn = fn
              def __call__(self, *args): return self.fn(*args)
            def binary_ufunc(func):
              return ufunc(func)
            @binary_ufunc
            def maximum(x, y): pass
            """,
        "numpy.py": "from ufuncs import maximum as maximum\n",
        "nn.py": """
            import numpy as jnp
            def relu(x):
              return jnp.maximum(x, 0)
            """})
    assert "ufuncs.maximum" in callees_of(res, "nn.relu")
    assert "ufuncs.ufunc.__call__" in callees_of(res, "ufuncs.maximum")


def test_the_classes_of_a_case_pattern_are_not_called():
    res = resolve_sources({"m.py": """
        class Tiling: pass
        class Swizzle: pass
        def batch(t):
          match t:
            case Tiling() | Swizzle(size=2) as found:
              return found
            case _:
              return Tiling()
        """})
    assert {c for c in callees_of(res, "m.batch") if c and c.startswith("m.")} == \
        {"m.Tiling"}
    lines = {line for c, callee, text, _s, line, *_ in res.calls if text == "Swizzle"}
    assert not lines


def test_a_function_set_on_a_class_from_outside_is_a_method_of_its_instances():
    res = resolve_sources({
        "core.py": """
            class Trace:
              def process(self, x): pass
            class EvalTrace(Trace): pass
            def apply(trace: Trace, x):
              return trace.process_shard_map(x)
            """,
        "shard.py": """
            import core
            def _shard_map_impl(trace, x): pass
            core.Trace.process_shard_map = _shard_map_impl
            """})
    assert ("core.apply", "trace.process_shard_map", RESOLVED, "shard._shard_map_impl") \
        in calls(res)


def test_super_of_a_class_whose_bases_lie_outside_the_tree_is_external():
    res = resolve_sources({"m.py": """
        class Base:
          def __init__(self, x): self.x = x
        class Child(Base):
          def __init__(self, x): super().__init__(x)
        class CacheError(RuntimeError):
          def __init__(self, msg): super().__init__(msg)
        """})
    assert ("m.Child.__init__", "super().__init__", RESOLVED, "m.Base.__init__") in calls(res)
    assert ("m.CacheError.__init__", "super().__init__", EXTERNAL, None) in calls(res)


def test_raised_builtins_literal_containers_methods_and_outside_results_are_external():
    res = resolve_sources({"m.py": """
        import numpy as np
        class Stack:
          def append(self, x): pass
        _rules = {}
        def pair(): return [], Stack()
        def f(x, table):
          if x:
            raise NotImplementedError
          n = np.ones(3).astype(int)
          out, kwargs = [], {}
          out.append(n)
          x.append(n)
          _rules.get(n)
          first, stack = pair()
          stack.append(n)
          return table[0](n), x.reshape(2).sum()
        """})
    found = calls(res)
    assert ("m.f", "NotImplementedError", EXTERNAL, None) in found
    assert ("m.f", "np.ones(3).astype", EXTERNAL, None) in found
    # A list's and a dict's, as written where they are assigned.
    assert ("m.f", "out.append", EXTERNAL, None) in found
    assert ("m.f", "_rules.get", EXTERNAL, None) in found
    # What a parameter, or an item of what a call returns, holds is not known.
    assert ("m.f", "table[0]", UNRESOLVED, None) in found
    assert ("m.f", "x.reshape(2).sum", UNRESOLVED, None) in found
    assert ("m.f", "x.append", UNRESOLVED, None) in found
    assert ("m.f", "stack.append", EXTERNAL, None) not in found


def test_a_generic_functions_parameters_receive_what_its_callers_hand_it():
    res = resolve_sources({"m.py": """
        def first[T](xs: list[T], f) -> T:
          return f(xs[0])
        def g(x): return x
        def h(x): return x
        def use(): return first([1], g)
        def other(): return first([2], h)
        """})
    assert ("m.first", "f", THROUGH, "m.g") in calls(res)


def test_a_return_annotation_naming_a_class_gives_an_instance_of_it_not_of_a_protocol():
    res = resolve_sources({"m.py": """
        from typing import Protocol
        class Memory:
          def read(self): pass
        class Wrapped(Protocol):
          def __call__(self, *args): ...
          def trace(self): ...
        def get_memory(key) -> "Memory | None":
          return _registry[key]
        def jit(fun) -> Wrapped:
          return _wrap(fun)
        def use(key, f):
          get_memory(key).read()
          jit(f).trace()
        """})
    found = calls(res)
    assert ("m.use", "get_memory(key).read", RESOLVED, "m.Memory.read") in found
    assert not any(callee in ("m.Wrapped.trace", "m.Wrapped.__call__")
                   for _c, _t, _s, callee in found)


def test_a_nested_def_hides_the_module_level_function_of_its_name():
    res = resolve_sources({"m.py": """
        def scan(f, init): return f(init)
        def f(key): return key
        def multinomial(n):
          def f(remainder):
            return remainder
          return scan(f, n)
        """})
    assert not any(caller == "m.multinomial" and callee == "m.f"
                   for caller, _t, _s, callee in calls(res))
    assert ("m.scan", "f", THROUGH, "m.f") not in calls(res)  # no caller hands it m.f


def test_a_decorator_called_with_its_function_skips_what_it_returns_without_one():
    res = resolve_sources({"m.py": """
        import functools
        def cache(f=None, *, size=8):
          if f is None:
            return lambda g: cache(g, size=size)
          return functools.lru_cache(size)(f)
        @cache
        def close(x): return x
        def use(x): return close(x)
        """})
    found = calls(res)
    assert ("m.use", "close", RESOLVED, "m.close") in found
    assert not any(c == "m.use" and callee == "m.cache" for c, _t, _s, callee in found)


def test_an_import_inside_a_function_names_what_its_calls_mean():
    res = resolve_sources({
        "pkg/__init__.py": "",
        "pkg/lax.py": "def _one_vjp(x): return x\n",
        "pkg/api.py": """
            def value_and_grad(fun):
              from pkg import lax as lax_internal  # (a cycle at import time)
              from . import lax
              def value_and_grad_f(*args):
                return lax_internal._one_vjp(fun(*args)), lax._one_vjp(1)
              return value_and_grad_f
            """})
    found = calls(res)
    assert ("pkg.api.value_and_grad", "lax_internal._one_vjp", RESOLVED,
            "pkg.lax._one_vjp") in found
    assert ("pkg.api.value_and_grad", "lax._one_vjp", RESOLVED, "pkg.lax._one_vjp") in found


def test_a_number_before_an_array_runs_its_reflected_operator_and_a_string_none():
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": ARRAY_METHODS + """
            def _operator_rmul(self, other): return self
            def _operator_eq(self, other): return self
            def _operator_gt(self, other): return self
            _array_operators["rmul"] = _operator_rmul
            _array_operators["eq"] = _operator_eq
            _array_operators["gt"] = _operator_gt
            """,
        "jax/_src/numpy/window.py": """
            from jax._src.typing import Array
            def scale(x: Array, window: Array | str):
              if window == "hann":
                return x * 3, 2 * x
              return 0 < x
            """})
    found = calls(res)
    methods = "jax._src.numpy.array_methods"
    assert ("jax._src.numpy.window.scale", "x rmul", RESOLVED, f"{methods}._operator_rmul") \
        in found
    assert ("jax._src.numpy.window.scale", "x gt", RESOLVED, f"{methods}._operator_gt") \
        in found  # `0 < x` runs x.__gt__
    assert not any(text.startswith("window ") for _c, text, _s, _t in found)


def test_a_loops_carry_is_a_pytree_of_arrays_its_items_arrays():
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": ARRAY_METHODS + """
            def _operator_lt(self, other): return self
            _array_operators["lt"] = _operator_lt
            """,
        "jax/_src/lax/control_flow/loops.py": """
            def while_loop(cond_fun, body_fun, init_val):
              val = init_val
              while cond_fun(val):
                val = body_fun(val)
              return val
            """,
        "jax/_src/numpy/scan.py": """
            from jax._src.lax.control_flow.loops import while_loop
            def count(n, x):
              def cond_fun(carry):
                i, _ = carry
                return i < n, carry[0]
              def body_fun(carry):
                return carry
              return while_loop(cond_fun, body_fun, (0, x))
            """})
    found = calls(res)
    assert ("jax._src.numpy.scan.count", "i lt", RESOLVED,
            "jax._src.numpy.array_methods._operator_lt") in found
    assert not any(text == "carry getitem" for _c, text, _s, _t in found)  # a tuple


def test_a_primitives_methods_are_its_classs_not_outside_and_a_shadowed_builtin_is_local():
    res = resolve_sources({
        "jax/_src/core.py": """
            class Primitive:
              def __init__(self, name): self.name = name
              def def_impl(self, impl):
                self.impl = impl
                return impl
              def impl(self, *args): raise NotImplementedError
              def bind(self, *args): return self.impl(*args)
            class MapPrimitive(Primitive):
              def get_bind_params(self, params): return [], params
            """,
        "jax/_src/m.py": """
            from jax._src import core
            foo_p = core.MapPrimitive("foo")
            @foo_p.def_impl
            def _foo_impl(x): return x
            def use(x, make):
              foo_p.get_bind_params({})
              callable = make()
              callable.specialize(x)
              return foo_p.impl(x)
            """})
    found = calls(res)
    assert ("jax._src.m", "foo_p.def_impl", RESOLVED, "jax._src.core.Primitive.def_impl") \
        in found
    assert ("jax._src.m.use", "foo_p.get_bind_params", RESOLVED,
            "jax._src.core.MapPrimitive.get_bind_params") in found
    # What def_impl set on it, not the class's default; a local named like a builtin.
    assert ("jax._src.m.use", "foo_p.impl", UNRESOLVED, None) in found
    assert ("jax._src.m.use", "callable.specialize", UNRESOLVED, None) in found


def test_an_operator_on_what_an_arrays_operator_or_call_makes_runs_the_arrays_operator():
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": ARRAY_METHODS + """
            def _operator_add(self, other): return self
            def _operator_mul(self, other): return self
            def _operator_rmul(self, other): return self
            def _operator_rsub(self, other): return self
            def _operator_neg(self): return self
            _array_operators["add"] = _operator_add
            _array_operators["mul"] = _operator_mul
            _array_operators["rmul"] = _operator_rmul
            _array_operators["rsub"] = _operator_rsub
            _array_operators["neg"] = _operator_neg
            """,
        "jax/_src/nn/functions.py": """
            from jax._src.typing import Array
            def expm1(x) -> Array: return x
            def promote(*xs) -> list[Array]: return list(xs)
            def size(x) -> int: return x
            def celu(x, alpha):
              [x_arr] = promote(x)
              floats = expm1(x) * 2
              y = floats * (alpha - 1) + alpha
              return expm1(x) + 1, 0.5 * x_arr, -expm1(x), 1 - 2 * expm1(x), size(x) + 1, y
            """})
    found = calls(res)
    methods, caller = "jax._src.numpy.array_methods", "jax._src.nn.functions.celu"
    for text, target in (("expm1(x) add", "add"), ("x_arr rmul", "rmul"),
                         ("expm1(x) neg", "neg"), ("2 * expm1(x) rsub", "rsub"),
                         ("expm1(x) mul", "mul"), ("floats mul", "mul"),
                         ("floats * (alpha - 1) add", "add")):
        assert (caller, text, RESOLVED, f"{methods}._operator_{target}") in found
    # An int is no Array; nor is a product of what the flow does not know.
    assert not any(text.startswith(("size(x) ", "(alpha - 1) ", "alpha "))
                   for _c, text, _s, _t in found)


def test_an_operator_after_a_number_that_ends_another_operators_operand():
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": ARRAY_METHODS + """
            def _operator_add(self, other): return self
            def _operator_truediv(self, other): return self
            _array_operators["add"] = _operator_add
            _array_operators["truediv"] = _operator_truediv
            """,
        "jax/_src/nn/functions.py": """
            from jax._src.typing import Array
            def sparse_plus(x: Array, n: int):
              return (x + 1.0)**2/4, x * 0 + n, n * 2 + 1
            """})
    found = calls(res)
    methods, caller = "jax._src.numpy.array_methods", "jax._src.nn.functions.sparse_plus"
    assert (caller, "(x + 1.0)**2 truediv", RESOLVED, f"{methods}._operator_truediv") in found
    assert (caller, "x * 0 add", RESOLVED, f"{methods}._operator_add") in found
    assert not any(text.startswith("n ") for _c, text, _s, _t in found)  # an int


def test_what_the_builtin_abs_makes_of_an_array_is_one():
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": ARRAY_METHODS + """
            def _operator_ge(self, other): return self
            _array_operators["ge"] = _operator_ge
            """,
        "jax/_src/random/core.py": """
            from jax._src.typing import Array
            def poisson(u: Array, n: int):
              shifted = 0.5 - abs(u)
              m = abs(n)
              return shifted >= 0.07, m >= 1
            """})
    found = calls(res)
    assert ("jax._src.random.core.poisson", "shifted ge", RESOLVED,
            "jax._src.numpy.array_methods._operator_ge") in found
    assert not any(text.startswith("m ") for _c, text, _s, _t in found)  # of an int


def test_a_private_parameter_every_call_site_hands_an_array_is_one():
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": ARRAY_METHODS + """
            def _operator_lt(self, other): return self
            _array_operators["lt"] = _operator_lt
            """,
        "jax/_src/numpy/indexing.py": """
            from jax._src.typing import Array
            def convert(x) -> Array: return x
            def _normalize(index, size):
              return index < 0
            def _mixed(index):
              return index < 0
            def take(indices, size: int):
              return _normalize(convert(indices), size), _mixed(convert(indices)), _mixed(size)
            """})
    found = calls(res)
    assert ("jax._src.numpy.indexing._normalize", "index lt", RESOLVED,
            "jax._src.numpy.array_methods._operator_lt") in found
    # One call hands `_mixed` an int.
    assert not any(c.endswith("_mixed") and text == "index lt" for c, text, _s, _t in found)


def test_the_builtin_abs_of_an_array_runs_its_abs_unless_a_name_shadows_it():
    res = resolve_sources({
        "jax/_src/numpy/array_methods.py": ARRAY_METHODS + """
            def _operator_abs(self): return self
            _array_operators["abs"] = _operator_abs
            """,
        "jax/_src/ops/special.py": """
            from jax._src.typing import Array
            def exp(x) -> Array: return x
            def logsumexp(x: Array):
              return abs(exp(x)), abs(x)
            """,
        "jax/_src/numpy/ufuncs.py": """
            from jax._src.typing import Array
            def abs(x: Array) -> Array: return x
            def absolute(x: Array): return abs(x)
            """})
    found = calls(res)
    methods = "jax._src.numpy.array_methods"
    for text in ("exp(x) abs", "x abs"):
        assert ("jax._src.ops.special.logsumexp", text, RESOLVED, f"{methods}._operator_abs") \
            in found
    assert not any(c == "jax._src.numpy.ufuncs.absolute" and text.endswith(" abs")
                   for c, text, _s, _t in found)  # jnp's own abs, not the builtin


ITERATION = {  # a tracer's `__iter__` runs its abstract value's `_iter`
    "jax/_src/numpy/array_methods.py": ARRAY_METHODS,
    "jax/_src/core.py": "class ShapedArray:\n  _iter = None\n",
    "jax/_src/lax/lax.py": """
        from jax._src.core import ShapedArray
        def _iter(tracer):
          return iter([tracer])
        ShapedArray._iter = staticmethod(_iter)
        """,
}


def test_iterating_an_array_runs_what_the_tree_assigns_its_abstract_values_iter():
    res = resolve_sources({**ITERATION, "jax/_src/numpy/lax_numpy.py": """
        from collections.abc import Sequence
        from jax._src.typing import Array, ArrayLike
        def check(*args): pass
        def split(x) -> Array: return x
        def pair(x) -> tuple[Array, Array]: return x, x
        def concat(arrays: Sequence[ArrayLike]):
          check("concat", *arrays)
        def helper(xs: Sequence[Array]):
          check(*xs)
        def rows(x: Array, n: int, *rest: ArrayLike):
          check(*rest)
          return [v for v in x if v], [m for m in n]
        def loop(x: Array):
          for row in x:
            pass
        def unpack(x: ArrayLike, key):
          a, *b = x
          k1, k2 = split(key)
          p, q = pair(key)
        def narrowed(x: ArrayLike | Sequence[ArrayLike]):
          if isinstance(x, Sequence):
            return check(*x)
          return x
        def either(x: Array | Sequence[ArrayLike]):
          return check(*x)
        def fills(x: ArrayLike, fill: ArrayLike | tuple[ArrayLike, ...], n: int):
          tup = fill if isinstance(fill, tuple) else n * (fill,)
          for v in tup:
            pass
          either = fill if n else x
          for v in either:
            pass
        """})
    iterated = {(c.rpartition(".")[2], text) for c, text, status, callee in calls(res)
                if callee == "jax._src.lax.lax._iter" and status == RESOLVED
                and text.endswith(" iter")}
    # A star in a call, a comprehension, a loop, a target list (of a name, or of a
    # call that returns an Array), a name a conditional expression may give an Array
    # (not `tup`: its test leaves no Array in `fill` where it takes `fill`).
    assert iterated == {("rows", "x iter"), ("loop", "x iter"),
                        ("unpack", "x iter"), ("unpack", "split(key) iter"),
                        ("fills", "either iter")}
    # No iteration: a sequence (of ArrayLike or of Arrays) or a parameter that may be
    # one (iterated, it is mostly the sequence: callers hand lists), `*rest`, a tuple of
    # Arrays, an int, `*args` in a signature, and a parameter narrowed to a Sequence.
    assert not any(text.endswith(" iter") and (c, text) not in iterated
                   for c, text in {(c.rpartition(".")[2], t) for c, t, _s, _x in calls(res)})


def test_the_arguments_of_zip_or_enumerate_a_loop_runs_over_are_iterated():
    res = resolve_sources({**ITERATION, "jax/_src/numpy/lax_numpy.py": """
        from jax._src.typing import Array
        def broadcast_to(x, shape) -> Array: return x
        def roll(a: Array, shift, axis, axes: tuple[int, ...]):
          for x, i in zip(broadcast_to(shift, (2,)), axes):
            pass
          return [v for j, v in enumerate(a)]
        """})
    iterated = {text for c, text, status, callee in calls(res)
                if callee == "jax._src.lax.lax._iter" and text.endswith(" iter")}
    assert iterated == {"broadcast_to(shift, (2,)) iter", "a iter"}  # not the tuple


_STAGE = """
    from extlib import _native
    from pkg import core
    def _make(fun, info):
      def cache_miss(*args):
        return core.bind_jit(args)
      made = _native.stage(fun.__name__, fun, cache_miss, info)
      return wraps(fun)(made)
    def make_jit(fun, *, inline=False):
      return _make(fun, inline)
    """


def test_calling_what_code_outside_the_tree_made_calls_what_it_was_handed():
    res = resolve_sources({
        "pkg/__init__.py": "",
        "pkg/core.py": "def bind_jit(x): return x\n",
        "pkg/stage.py": "from functools import wraps\n" + textwrap.dedent(_STAGE),
        "pkg/api.py": """
            from pkg import stage
            def jit(fun):
              return stage.make_jit(fun)
            @jit
            def relu(x): return x
            def use(x): return relu(x)
            """})
    assert callees_of(res, "pkg.api.use") == {"pkg.api.relu"}
    assert "pkg.stage._make" in callees_of(res, "pkg.api.relu")


def test_a_decorator_factory_of_the_tree_reads_the_function_it_decorates():
    res = resolve_sources({
        "pkg/__init__.py": "",
        "pkg/core.py": "def bind_jit(x): return x\n",
        "pkg/util.py": """
            def wraps(wrapped):
              def wrapper(fun):
                fun.__wrapped__ = wrapped
                return fun
              return wrapper
            """,
        "pkg/stage.py": "from pkg.util import wraps\n" + textwrap.dedent(_STAGE),
        "pkg/api.py": """
            from functools import partial
            from pkg import stage
            def jit(fun=None, *, inline=False):
              if fun is None:
                return lambda fun: stage._make(fun, inline)
              return stage._make(fun, inline)
            @jit
            def relu(x): return x
            @jit(inline=True)
            def shift(x): return x
            @partial(jit, inline=True)
            def flip(x): return x
            def use(x): return relu(x), shift(x), flip(x)
            """})
    found = calls(res)
    assert callees_of(res, "pkg.api.use") == {"pkg.api.relu", "pkg.api.shift", "pkg.api.flip"}
    # Each def reaches `_make`'s callback by resolved edges (bound reading stops 3
    # calls deep: jit -> _make -> wraps(fun)(made)).
    for name in ("relu", "shift", "flip"):
        assert "pkg.stage._make" in _resolved_reach(found, f"pkg.api.{name}")


def _resolved_reach(found, start: str) -> set[str]:
    """The functions `start` reaches by resolved edges."""
    reached, todo = set(), [start]
    while todo:
        caller = todo.pop()
        for c, _t, status, callee in found:
            if c == caller and status == RESOLVED and callee and callee not in reached:
                reached.add(callee)
                todo.append(callee)
    return reached


_NATIVE_JIT = """
    from extlib import _native
    from pkg import core
    from pkg.boundary import boundary
    def _make(fun):
      @boundary
      def cache_miss(*args):
        return core.bind_jit(args)
      return _native.stage(fun, cache_miss)
    def jit(fun=None, *, inline=False):
      if fun is None:
        return lambda fun: _make(fun)
      return _make(fun)
    """
_BOUNDARY = """
    import functools
    def boundary(fun):
      @functools.wraps(fun)
      def reraise(*args):
        return fun(*args)
      return reraise
    """


def test_a_decorated_def_calls_what_its_decorator_made_of_it():
    res = resolve_sources({
        "pkg/__init__.py": "",
        "pkg/core.py": "def bind_jit(x): return x\n",
        "pkg/boundary.py": _BOUNDARY,
        "pkg/stage.py": _NATIVE_JIT,
        "pkg/api.py": """
            from functools import partial
            from pkg.stage import jit
            @jit
            def relu(x): return x
            @jit(inline=True)
            def shift(x): return x
            @partial(jit, inline=True)
            def flip(x): return x
            class Box:
              @jit
              def get(self): return self
            """})
    found = calls(res)
    # Calling the name runs the callback the native object was handed (folded into
    # `_make`), an edge of the def the name means, resolved as any call is.
    for caller in ("relu", "shift", "flip", "Box.get"):
        assert (f"pkg.api.{caller}", caller.rpartition(".")[2], RESOLVED,
                "pkg.stage._make") in found
    assert not any(c == "pkg.api.relu" and callee == "pkg.api.relu"
                   for c, _t, _s, callee in found)  # not the def itself


def test_a_decorated_def_handed_to_code_outside_the_tree_is_called_back():
    # `cache_miss` is decorated by a decorator of the tree: handing it on to `stage`
    # is no reading of its own decoration, which is skipped.
    res = resolve_sources({
        "pkg/__init__.py": "",
        "pkg/core.py": "def bind_jit(x): return x\n",
        "pkg/boundary.py": _BOUNDARY,
        "pkg/stage.py": _NATIVE_JIT,
        "pkg/api.py": """
            from pkg import stage
            def use(x):
              return stage._make(abs)(x)
            """})
    assert ("pkg.api.use", "stage._make(abs)", RESOLVED, "pkg.stage._make") in calls(res)


def test_a_rebound_def_holds_the_def_where_its_assignment_gives_nothing_known():
    res = resolve_sources({"m.py": """
        import typing
        from pkg.registry import TABLE
        def bind_jit(x): return x
        def jit(fun):
          return bind_jit
        if not typing.TYPE_CHECKING:
          jit = TABLE.get("jit", jit)
        @jit
        def relu(x): return x
        """})
    assert ("m.relu", "relu", RESOLVED, "m.bind_jit") in calls(res)  # what jit(relu) gives


def test_each_module_level_instance_holds_the_function_its_construction_hands_it():
    res = resolve_sources({"m.py": """
        class Op:
          def __init__(self, func):
            self.func = func
        def _neg(x): return x
        def _add(x): return x
        negative = Op(_neg)
        add = Op(_add)
        def use(x):
          return negative.func(x), add.func(x)
        """})
    found = calls(res)
    assert ("m.use", "negative.func", RESOLVED, "m._neg") in found
    assert ("m.use", "negative.func", RESOLVED, "m._add") not in found
    assert ("m.use", "add.func", RESOLVED, "m._add") in found
    assert ("m.use", "add.func", RESOLVED, "m._neg") not in found


def test_a_field_code_elsewhere_sets_is_not_read_at_the_construction_alone():
    res = resolve_sources({"m.py": """
        class Op:
          def __init__(self, func):
            self.func = func
        def _neg(x): return x
        def _other(x): return x
        negative = Op(_neg)
        negative.func = _other
        def use(x):
          return negative.func(x)
        """})
    assert callees_of(res, "m.use") >= {"m._neg", "m._other"}


_UFUNC_API = """
    class ufunc:
      def __init__(self, func, /, nin, *, call=None):
        self.__static_props = {'func': func, 'nin': nin, 'call': call}
      _func = property(lambda self: self.__static_props['func'])
      nin = property(lambda self: self.__static_props['nin'])
    """
_UFUNCS = """
    from jax._src.numpy.ufunc_api import ufunc
    def jit(fun, inline=False):
      return fun
    def unary_ufunc(func):
      func_jit = jit(func, inline=True)
      return ufunc(func_jit, nin=1, call=func_jit)
    def binary_ufunc(identity):
      def decorator(func):
        return ufunc(jit(func), nin=2)
      return decorator
    @unary_ufunc
    def negative(x): return x
    @binary_ufunc(identity=0)
    def add(x, y): return x
    """


def test_an_operator_reaches_the_function_of_the_one_ufunc_the_table_names():
    # `-x` runs `_array_operators["neg"]`, the `_func` property of the instance the
    # decorator factory made for `negative`: that function, not every ufunc's.
    res = resolve_sources({
        "jax/_src/numpy/ufunc_api.py": _UFUNC_API,
        "jax/_src/numpy/ufuncs.py": _UFUNCS,
        "jax/_src/numpy/array_methods.py": """
            from jax._src.numpy import ufuncs
            _array_operators = {"neg": ufuncs.negative._func}
            _array_methods = {}
            """,
        "jax/_src/numpy/lax_numpy.py": """
            from jax._src.typing import ArrayLike
            def unwrap(p: ArrayLike):
              return -p
            """})
    found = {(text, callee) for caller, text, _status, callee in calls(res)
             if caller == "jax._src.numpy.lax_numpy.unwrap"}
    assert ("p neg", "jax._src.numpy.ufuncs.negative") in found
    assert ("p neg", "jax._src.numpy.ufuncs.add") not in found


def test_a_chain_far_deeper_than_any_bound_is_followed_to_its_end():
    # 2,000 names, each holding the one before: no chain of keys is cut at a depth.
    chain = "\n".join(f"        a{i} = a{i - 1}" for i in range(1, 2000))
    res = resolve_sources({"m.py": f"""
        def target(x): return x
        a0 = target
{chain}
        def use(x): return a1999(x)
        """})
    assert ("m.use", "a1999", RESOLVED, "m.target") in calls(res)


# Cycles of every kind the flow reads: functions calling each other, decorated defs
# whose decorators call them, a field each construction's method sets, a registry.
_CYCLES = """
        class Primitive:
          def def_impl(self, impl):
            self.impl = impl
            return impl
        def _a_impl(x): return _b_impl(x)
        def _b_impl(x): return _a_impl(x)
        a_p = Primitive()
        a_p.def_impl(_a_impl)
        b_p = Primitive()
        b_p.def_impl(_b_impl)
        def dec(f):
          def inner(*args): return f(*args)
          return inner
        @dec
        def g(x): return h(x)
        @dec
        def h(x): return g(x)
        def pick(n): return f1 if n else f2
        def f1(): return pick(0)()
        def f2(): return pick(1)()
        table = {}
        def register(k, fn):
          table[k] = fn
          return fn
        register("a", g)
        register("b", b_p.impl)
        def run(k, x): return table[k](x)
        def use(x): return a_p.impl(x) + run("a", x) + g(x) + f1()
        """
_ASKED = [("m", "use", "a_p.impl"), ("m", "run", "table[k]"), ("m", "use", "g"),
          ("m", "g", "h"), ("m", "h", "g"), ("m", "dec.inner", "f"), ("m", "f1", "pick(0)"),
          ("m", "f2", "pick(1)"), ("m", "_a_impl", "_b_impl"), ("m", "use", "f1"),
          ("m", "Primitive.def_impl", "self.impl"), ("m", "", "b_p.impl")]


def test_what_a_key_holds_does_not_depend_on_which_question_comes_first():
    import copy
    import random

    from jaxmap.flow.flow import Flow
    from jaxmap.indexing import discover
    from jaxmap.indexing.resolve import resolve

    answers = []

    def call_graph(names, findings, definitions, flows, progress=None):
        for seed in range(8):
            asked = list(_ASKED)
            random.Random(seed).shuffle(asked)
            flow = Flow(names, copy.deepcopy(flows))  # (a flow consumes what it reads)
            flow.sites()
            answers.append({q: flow.callees(*q) for q in asked})
            flow.close()
        return [], [], [], ()

    files = {"m.py": extract(textwrap.dedent(_CYCLES).encode(), *discover.module_name("m.py"))}
    resolve(files, graph=call_graph)
    assert all(answer == answers[0] for answer in answers[1:])
    assert any(answers[0].values())  # (what they agree on is not nothing)


# A wrapper that gives back what it is handed through a local, called on a call of
# itself: reading the outer call reads that local, and, in the middle of it, the inner
# call, a key of its own, which reads the same local of the same function.
_NESTED_WRAPS = """
        def f(): pass
        def h(): pass
        def make(g):
          return g
        def wrap(fun):
          wrapped = make(fun)
          return wrapped
        def use_h():
          return wrap(h)()
        def use():
          return wrap(wrap(f))
        def run():
          return use()()
        """


def _asked_both_ways(source: str, asked: list[tuple], ask=None) -> list[dict]:
    """What the flow of module `m` (`source`) answers to each question of `asked`
    (`ask(flow, question)`; by default a call's callees: module, owner, callee text),
    asked in that order and then in reverse, by two flows."""
    import copy

    from jaxmap.flow.flow import Flow
    from jaxmap.indexing import discover
    from jaxmap.indexing.resolve import resolve

    answers = []

    def call_graph(names, findings, definitions, flows, progress=None):
        for order in (asked, asked[::-1]):
            flow = Flow(names, copy.deepcopy(flows))
            flow.sites()
            answers.append({q: ask(flow, q) if ask else flow.callees(*q) for q in order})
            flow.close()
        return [], [], [], ()

    files = {"m.py": extract(textwrap.dedent(source).encode(), *discover.module_name("m.py"))}
    resolve(files, graph=call_graph)
    return answers


def test_a_call_read_in_the_middle_of_a_read_of_its_function_holds_what_it_holds_alone():
    asked = [("m", "run", "use()"), ("m", "use", "wrap(f)")]
    answers = _asked_both_ways(_NESTED_WRAPS, asked)
    # (asked first, the outer call had read the inner one as the local's every value)
    assert answers[0] == answers[1] == {q: {(FN, "m.f", "f")} for q in asked}


# Two functions that give back their parameter through each other: whether each passes
# its parameter on is read with the other's answer, whichever is asked first.
_PASSED_THROUGH_EACH_OTHER = """
        def f(): pass
        def g(): pass
        def pb(x, c=False):
          return pa(x) if c else x
        def pa(x):
          return pb(x)
        def use_f():
          return pa(f)
        def use_g():
          return pb(g)
        """


def test_functions_passing_a_parameter_through_each_other_pass_it_in_any_order():
    asked = [("m", "use_f", "pa(f)"), ("m", "use_g", "pb(g)")]
    answers = _asked_both_ways(_PASSED_THROUGH_EACH_OTHER, asked)
    # (with `pb` asked first, `pa` had been cut as passing nothing on: `pa(f)` held nothing)
    assert answers[0] == answers[1]
    assert (FN, "m.f", "f") in answers[0][asked[0]]


# Two type aliases that name each other, one of them an Array.
_ALIASES_OF_EACH_OTHER = """
        Index = Indices | None
        Indices = Index | Array
        """


def test_type_aliases_naming_each_other_say_an_array_in_any_order():
    from jaxmap.flow.flowfacts import ARRAY

    asked = [("m", "Index"), ("m", "Indices")]
    answers = _asked_both_ways(_ALIASES_OF_EACH_OTHER, asked,
                               lambda flow, q: flow._annotation_tags(*q))
    # (with `Indices` asked first, `Index` had been cut at the cycle: no Array)
    assert answers[0] == answers[1] == {q: {ARRAY} for q in asked}


# A registry stored into through a parameter (`table`), which holds the registry only
# where call sites hand it: the call sites' passes find that holder; sites read before
# and after it must not differ in what they find through it.
_HELD_BY_A_PARAMETER = """
        REG = {}
        def put(table, k, fn):
          table[k] = fn
        def get(table, k):
          return table[k]
        def h():
          return 1
        def f(cb):
          return cb()
        def each():
          for fn in REG.values():
            fn(h)
        put(REG, 'f', f)
        def use(x):
          return get(REG, 'f')(x)
        """


def test_the_call_sites_find_the_same_in_any_order_of_sites():
    import copy
    import random

    from jaxmap.flow.flow import Flow
    from jaxmap.indexing import discover
    from jaxmap.indexing.resolve import resolve

    answers = []
    asked = [("m", "f", "cb"), ("m", "each", "fn"), ("m", "use", "get(REG, 'f')")]

    def call_graph(names, findings, definitions, flows, progress=None):
        for seed in range(8):
            flow = Flow(names, copy.deepcopy(flows))
            random.Random(seed).shuffle(flow._calls)
            flow.sites()
            answers.append({q: flow.callees(*q) for q in asked})
            flow.close()
        return [], [], [], ()

    files = {"m.py": extract(textwrap.dedent(_HELD_BY_A_PARAMETER).encode(),
                             *discover.module_name("m.py"))}
    resolve(files, graph=call_graph)
    assert all(answer == answers[0] for answer in answers[1:])
    # once the sites are read, the registry holds what was stored through `table`
    assert answers[0][("m", "each", "fn")] == {(FN, "m.f", "f")}
    assert answers[0][("m", "use", "get(REG, 'f')")] == {(FN, "m.f", "f")}


# What the two tests below call: two functions and an exception class.
_TARGETS = """
        def helper(x): return x
        def other(x): return x
        class Error(Exception): pass"""


def test_statements_joined_by_semicolons_are_read_each_alone():
    res = resolve_sources({"m.py": _TARGETS + """
        def use(x):
          import os; f = helper; g = other
          return f(x) + g(x)
        def give(x):
          y = 1; return helper
        def fail(x):
          y = 1; raise Error
        def caller(x):
          return give(x)(x)
        """})
    assert callees_of(res, "m.use") == {"m.helper", "m.other"}
    assert callees_of(res, "m.caller") == {"m.give", "m.helper"}
    assert "m.Error" in callees_of(res, "m.fail")


def test_a_body_on_its_headers_line_is_read_as_a_statement():
    res = resolve_sources({"m.py": _TARGETS + """
        def pick(x):
          if x: return helper
          return other
        def looped(xs):
          for f in xs: g = f
          while xs: h = other
          return g(xs) + h(xs)
        def fail(x):
          if x: pass
          else: raise Error
        def guarded(f=None):
          if f is None: return helper
          return f
        def caller(x):
          return pick(x)(x)
        def calls_guarded(x):
          return guarded(other)(x)
        """})
    assert callees_of(res, "m.caller") == {"m.pick", "m.helper", "m.other"}
    assert "m.other" in callees_of(res, "m.looped")
    assert "m.Error" in callees_of(res, "m.fail")
    # handed `other`, guarded's `return helper` under `if f is None:` does not run
    assert callees_of(res, "m.calls_guarded") == {"m.guarded", "m.other"}


def test_a_top_level_lambdas_calls_are_its_names_and_the_flow_reads_it_once():
    facts = extract(textwrap.dedent("""
        class A:
          x = f
        b = lambda y: g(y)
        """).encode(), "m")
    assert [fact[:3] for fact in facts["flow"][""]] == [("=", "b", "lambda y: g(y)")]
    assert [fact[:3] for fact in facts["flow"]["A"]] == [("=", "x", "f")]
    assert [callee[0] for callee in facts["callees"]["b"]] == ["g", "y"]
    assert "g" not in [callee[0] for callee in facts["callees"].get("", ())]
    without = extract(b"class A:\n  x = f\n", "m")  # no lambda: each text read once too
    assert [fact[:3] for fact in without["flow"]["A"]] == [("=", "x", "f")]


def test_library_code_calls_no_function_a_test_registers():
    # A test stores its lambda into the library's registry: the library's dispatch
    # calls what the library registers, not the test's function.
    res = resolve_sources({
        "lib.py": """
            handlers = {}
            def double(x): return x
            handlers[int] = double
            def dispatch(x): return handlers[type(x)](x)
            """,
        "tests/test_lib.py": """
            import lib
            def shout(x): return x
            def test_dispatch():
              lib.handlers[str] = lambda x: shout(x)
              lib.dispatch("a")
            """})
    assert callees_of(res, "lib.dispatch") == {"lib.double", None}  # (None: `type`)
    assert "tests.test_lib.shout" in callees_of(res, "tests.test_lib.test_dispatch")


def test_library_code_calls_a_test_module_it_imports():
    # Test support (not a test module) importing a test utility calls it.
    res = resolve_sources({
        "lib.py": "def double(x): return x\n",
        "support.py": """
            from tests import test_util
            def cases(): return test_util.rand_default()
            """,
        "tests/test_util.py": "def rand_default(): return 1\n"})
    assert callees_of(res, "support.cases") == {"tests.test_util.rand_default"}

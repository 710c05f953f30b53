"""The resolver on inline sources: one idiom or one error path per test."""

from __future__ import annotations

import textwrap

import pytest
from inline import primitive, resolve_sources, rules

from jaxmap.knowledge import registrars as R
from jaxmap.store.records import Place

CORE = "from jax._src import core\nfrom jax._src.interpreters import ad, batching, mlir\n"


def test_constructor_and_methods():
    res = resolve_sources({"m.py": CORE + """
        def _impl(x): return x
        p = core.Primitive('p')
        p.def_impl(_impl)
        """})
    assert rules(res, "p") == [("impl", None, "_impl")]
    assert primitive(res, "p").variable == "p"


def test_registry_setitem_and_update():
    res = resolve_sources({"m.py": CORE + """
        def _jvp(*a): pass
        def _batch(*a): pass
        p = core.Primitive('p')
        ad.primitive_jvps[p] = _jvp
        batching.primitive_batchers.update({p: _batch})
        """})
    assert rules(res, "p") == [("jvp", None, "_jvp"), ("batching", None, "_batch")]


def test_helper_receiving_the_primitive_is_summarised():
    res = resolve_sources({"m.py": CORE + """
        def _t(*a): pass
        def _register(prim, transpose):
          ad.deflinear2(prim, transpose)
        p = core.Primitive('p')
        _register(p, _t)
        """})
    assert rules(res, "p") == [("jvp", None, None), ("transpose", None, "_t")]


def test_factory_that_returns_a_new_primitive():
    res = resolve_sources({"m.py": CORE + """
        def _lower(*a): pass
        def make(name):
          prim = core.Primitive(name)
          mlir.register_lowering(prim, _lower)
          return prim
        p = make('made')
        """})
    assert rules(res, "made") == [("lowering", None, "_lower")]
    assert primitive(res, "made").variable == "p"


def test_loop_over_a_literal_tuple_and_zip():
    res = resolve_sources({"m.py": CORE + """
        def _l(*a): pass
        a = core.Primitive('a'); b = core.Primitive('b')
        for prim, platform in zip((a, b), ('cpu', 'tpu')):
          mlir.register_lowering(prim, _l, platform=platform)
        """})
    assert rules(res, "a") == [("lowering", "cpu", "_l")]
    assert rules(res, "b") == [("lowering", "tpu", "_l")]


def test_branch_on_a_parameter_is_decided_per_call():
    res = resolve_sources({"m.py": CORE + """
        def _b(*a): pass
        def register(prim, batch=True):
          if batch:
            batching.primitive_batchers[prim] = _b
          else:
            prim.def_impl(_b)
        p = core.Primitive('p'); q = core.Primitive('q')
        register(p)
        register(q, batch=False)
        """})
    assert rules(res, "p") == [("batching", None, "_b")]
    assert rules(res, "q") == [("impl", None, "_b")]


def test_known_false_branch_at_module_level_is_skipped():
    res = resolve_sources({"m.py": CORE + """
        def _i(*a): pass
        p = core.Primitive('p')
        if False:
          p.def_impl(_i)
        """})
    assert rules(res, "p") == []


def test_decorators_plain_and_partial():
    res = resolve_sources({"m.py": CORE + """
        from functools import partial
        p = core.Primitive('p')
        @p.def_abstract_eval
        def _abstract(x): return x
        @partial(mlir.register_lowering, p, platform='cpu')
        def _lower(ctx, x): return [x]
        """})
    assert rules(res, "p") == [("abstract_eval", None, "_abstract"),
                               ("lowering", "cpu", "_lower")]


def test_partial_rule_names_the_function_inside():
    res = resolve_sources({"m.py": CORE + """
        from functools import partial
        def _rule(axis, *a): pass
        p = core.Primitive('p')
        ad.primitive_jvps[p] = partial(_rule, 0)
        """})
    assert rules(res, "p") == [("jvp", None, "_rule")]


def test_names_resolve_through_reexports_and_relative_imports():
    res = resolve_sources({
        "pkg/__init__.py": "from .impl import p as p\n",
        "pkg/impl.py": CORE + "p = core.Primitive('p')\n",
        "user.py": "import pkg\ndef _i(x): pass\npkg.p.def_impl(_i)\n",
    })
    assert rules(res, "p") == [("impl", None, "_i")]


def test_primitive_subclass_instance_gets_its_method_rules():
    res = resolve_sources({"m.py": CORE + """
        class MyPrimitive(core.Primitive):
          def impl(self, x): return x
        p = MyPrimitive('p')
        """})
    assert rules(res, "p") == [("impl", None, "impl")]


def test_vjp_hi_primitive_subclass_is_a_primitive():
    res = resolve_sources({"m.py": """
        from jax._src import hijax
        class Base(hijax.VJPHiPrimitive):
          pass
        class MyOp(Base):
          def expand(self, x): return x
          def vjp_fwd(self, x): return x
        """})
    assert primitive(res, "MyOp").style == "hijax"
    assert rules(res, "MyOp") == [("impl", None, "expand"), ("transpose", None, "vjp_fwd")]


def test_splat_arguments_leave_later_parameters_unknown():
    res = resolve_sources({"m.py": CORE + """
        def _i(*a): pass
        def register(prim, flag, other):
          prim.def_impl(_i)
          other.def_impl(_i)
        p = core.Primitive('p'); q = core.Primitive('q')
        middle = ()
        register(p, *middle, q)
        """})
    # `*middle` may hold any number of arguments: q is not known to be `other`.
    assert rules(res, "p") == [("impl", None, "_i")]
    assert rules(res, "q") == []


# -- error paths ------------------------------------------------------------------------


def test_rule_on_something_not_a_primitive_is_a_diagnostic():
    res = resolve_sources({"m.py": CORE + "def _i(x): pass\nad.primitive_jvps[mystery] = _i\n"})
    assert res.diagnostics == [("m.py:4: jvp rule registered via ad.primitive_jvps[...] = on "
                                "a value that is not a known primitive")]


def test_unread_factory_is_a_diagnostic():
    """A helper in another module whose body has no registration word is not read."""
    res = resolve_sources({"h.py": "import os\n\ndef helper(name):\n  x = name\n  return x\n",
                           "m.py": "from h import helper\nx_p = helper('x')\n"})
    assert res.diagnostics[0].startswith("m.py:2: x_p = helper(...): the body of h.helper "
                                         "was not read")


def test_a_file_that_could_not_be_read_is_a_diagnostic_not_a_crash():
    from jaxmap.indexing import extract
    from jaxmap.indexing.resolve import resolve

    broken = {**extract.extract(b"", "gone"), "error": "gone.py: not indexed (unreadable)"}
    ok = extract.extract((CORE + "p = core.Primitive('p')\n").encode(), "m")
    res = resolve({"gone.py": broken, "m.py": ok})
    assert res.diagnostics == ["gone.py: not indexed (unreadable)"]
    assert [p.name for p in res.primitives] == ["p"]


def test_recursive_helpers_terminate():
    res = resolve_sources({"m.py": CORE + """
        def _i(x): pass
        def a(prim): b(prim); prim.def_impl(_i)
        def b(prim): a(prim)
        p = core.Primitive('p')
        a(p)
        """})
    assert ("impl", None, "_i") in rules(res, "p")


def test_import_cycles_terminate():
    res = resolve_sources({"a.py": "from b import y\nx = 1\n",
                           "b.py": "from a import x\ny = x\n"})
    assert res.primitives == [] and res.diagnostics == []


# -- idioms of newer releases -------------------------------------------------------------


def test_loop_over_a_parameter_default_is_unrolled_per_call():
    res = resolve_sources({"m.py": CORE + """
        from functools import partial
        def _l(ctx, x, prefix): pass
        def register_cpu_gpu(prim, rule, platforms=("cpu", "cuda")):
          for platform in platforms:
            mlir.register_lowering(prim, partial(rule, prefix=platform), platform=platform)
        a = core.Primitive('a'); b = core.Primitive('b')
        register_cpu_gpu(a, _l)
        register_cpu_gpu(b, _l, platforms=("rocm",))
        """})
    assert rules(res, "a") == [("lowering", "cpu", "_l"), ("lowering", "cuda", "_l")]
    assert rules(res, "b") == [("lowering", "rocm", "_l")]


def test_loop_over_a_parameter_through_two_helpers():
    res = resolve_sources({"m.py": CORE + """
        def _l(*a): pass
        def inner(prim, platforms):
          for platform in platforms:
            mlir.register_lowering(prim, _l, platform=platform)
        def outer(prim, platforms=("tpu",)):
          inner(prim, platforms)
        a = core.Primitive('a')
        outer(a)
        """})
    assert rules(res, "a") == [("lowering", "tpu", "_l")]


def test_helper_that_returns_two_primitives_unpacked_at_module_level():
    res = resolve_sources({"m.py": CORE + """
        def _i(*a): pass
        def make_pair(name):
          fwd = core.Primitive(name)
          wrapper = core.Primitive(name + "_wrapper")
          wrapper.def_impl(_i)
          return fwd, wrapper
        attn_p, attn_wrapper_p = make_pair("attention")
        """})
    assert [(p.name, p.variable) for p in res.primitives] == [
        ("attention", "attn_p"), ("attention_wrapper", "attn_wrapper_p")]
    assert rules(res, "attention_wrapper") == [("impl", None, "_i")]


def test_defbilinear_names_both_transposes():
    res = resolve_sources({"m.py": CORE + """
        def _left(*a): pass
        def _right(*a): pass
        mul_p = core.Primitive('mul')
        ad.defbilinear(mul_p, _left, _right)
        """})
    (transpose,) = [r for r in primitive(res, "mul").rules if r.kind == "transpose"]
    assert transpose.function.name == "_left"
    assert [f.name for f in transpose.functions] == ["_left", "_right"]


@pytest.mark.parametrize("registrar", ["defjvp", "defjvp2"])
def test_defjvp_names_every_operands_rule_skipping_none_and_lambdas(registrar):
    res = resolve_sources({"m.py": CORE + f"""
        def _jvp_x(*a): pass
        def _jvp_y(*a): pass
        p = core.Primitive('p')
        ad.{registrar}(p, lambda g, x, y, z, w: g, _jvp_x, None, _jvp_y, _jvp_x)
        """})
    (jvp,) = primitive(res, "p").rules
    assert [f.name for f in jvp.functions] == ["_jvp_x", "_jvp_y"]


def test_defjvp_through_a_helper_names_every_operands_rule():
    res = resolve_sources({"m.py": CORE + """
        def _jvp_x(*a): pass
        def _jvp_y(*a): pass
        def _register_two(prim, left, right):
          ad.defjvp(prim, left, right)
        p = core.Primitive('p')
        _register_two(p, _jvp_x, _jvp_y)
        """})
    (jvp,) = primitive(res, "p").rules
    assert [f.name for f in jvp.functions] == ["_jvp_x", "_jvp_y"]


def test_platform_alias_expands_through_the_trees_own_table():
    res = resolve_sources({
        "jax/_src/xla_bridge.py": '_platform_aliases = {"cuda": "gpu", "rocm": "gpu"}\n',
        "m.py": CORE + """
        def _l(*a): pass
        p = core.Primitive('p')
        mlir.register_lowering(p, _l, platform='gpu')
        mlir.register_lowering(p, _l, platform='tpu')
        mlir.register_lowering(p, _l)
        """})
    assert res.platform_aliases == {"gpu": ["cuda", "rocm"]}
    assert [(r.platform, r.platforms) for r in primitive(res, "p").rules] == [
        ("gpu", ["cuda", "rocm"]), ("tpu", ["tpu"]), (None, [])]


def test_without_an_alias_table_gpu_is_the_gpu_backends_of_every_release():
    """A library outside jax: `register_lowering` of the installed jax expands `gpu`
    (it stayed `gpu`, so `--platform cuda` fell back to the default lowering)."""
    res = resolve_sources({"m.py": CORE + """
        def _l(*a): pass
        p = core.Primitive('p')
        mlir.register_lowering(p, _l, platform='gpu')
        """})
    assert res.platform_aliases == {"gpu": ["cuda", "rocm"]}
    assert [r.platforms for r in primitive(res, "p").rules] == [["cuda", "rocm"]]


def test_hiprim_subclasses_of_subclasses_are_primitives():
    res = resolve_sources({
        "jax/_src/hijax.py": "class HiPrim:\n  def expand(self, *a): pass\n",
        "m.py": """
        from jax._src import hijax
        class Base(hijax.HiPrim):
          def jvp(self, primals, tangents): pass
        class Einsum(Base):
          def expand(self, *a): pass
          def batch(self, axis_data, args, dims): pass
        """})
    assert [p.name for p in res.primitives if p.style == "hijax"] == ["Base", "Einsum"]
    assert rules(res, "Einsum") == [("jvp", None, "jvp"), ("impl", None, "expand"),
                                    ("batching", None, "batch")]


# -- definitions and public paths --------------------------------------------------------


def definition(resolution, qualname: str, kind: str | None = None) -> dict:
    (found,) = [d for d in resolution.definitions
                if d.qualname == qualname and kind in (None, d.kind)]
    return found


def test_overload_stubs_fold_into_the_implementation():
    source = ("from typing import overload\nimport typing\n@overload\n"
              "def f(x: int) -> int: ...\n@typing.overload\ndef f(x: str) -> str: ...\n"
              "def f(x):\n  return x\n")
    res = resolve_sources({"m.py": source})
    implementation = source.splitlines().index("def f(x):") + 1
    assert [(d.qualname, d.line) for d in res.definitions if d.name == "f"] == [
        ("m.f", implementation)]


def test_docstring_first_lines_are_summaries():
    res = resolve_sources({"m.py": '''
        """The module."""
        import os

        def read(x):
          """Read a thing.

          More words.
          """
          a = x
          return a

        class Box:
          \'\'\'Holds a value.\'\'\'
        '''})
    assert [definition(res, q).summary for q in ("m", "m.read", "m.Box")] == [
        "The module.", "Read a thing.", "Holds a value."]


def test_a_restructuredtext_directive_is_no_summary():
    """`.. currentmodule:: pkg` opens jax.experimental.sparse's docstring: markup."""
    res = resolve_sources({"pkg/__init__.py": '''
        """
        .. currentmodule:: pkg

        Sparse arrays.
        """
        def f():
          """.. deprecated:: 0.4
          """
        '''})
    assert [definition(res, q).summary for q in ("pkg", "pkg.f")] == ["Sparse arrays.", None]


def test_public_paths_follow_reexports_not_internal_imports():
    res = resolve_sources({
        "pkg/_src/impl.py": "def jit(f): return f\ndef grad(f): return f\n"
                            "from pkg._src import helpers\n",
        "pkg/_src/helpers.py": "def util(): pass\n",
        "pkg/__init__.py": "from pkg._src.impl import jit as jit\n"
                           "from pkg._src.impl import grad as gradient\n",
        "pkg/api.py": "from pkg._src.impl import grad\nfrom pkg._src import helpers\n"
                      "def public(): pass\n",
        "pkg/listed.py": "from pkg._src.impl import grad\n__all__ = ['grad']\n"
                         "def unlisted(): pass\n",
        "pkg/star.py": "from pkg.listed import *\n",
    })
    assert definition(res, "pkg._src.impl.jit").public == ["pkg.jit"]
    assert sorted(definition(res, "pkg._src.impl.grad").public) == [
        "pkg.gradient", "pkg.listed.grad", "pkg.star.grad"]
    assert definition(res, "pkg._src.helpers").public == []  # only imported for use
    assert definition(res, "pkg.api.public").public == ["pkg.api.public"]
    assert definition(res, "pkg.listed.unlisted").public == []


def test_a_name_the_top_level_deletes_is_not_exported():
    res = resolve_sources({
        "pkg/_src/api.py": "def jit(f): return f\ndef grad(f): return f\n",
        "pkg/__init__.py": "import pkg._src.api as jax_api\n"
                           "from pkg._src.api import jit as jit\n"
                           "def temporary(): pass\n"
                           "del jax_api, temporary\n",
        "pkg/star.py": "from pkg._src.api import *\ndel (grad)\n",
    })
    assert definition(res, "pkg._src.api").public == []
    assert definition(res, "pkg._src.api.jit").public == ["pkg.jit", "pkg.star.jit"]
    assert definition(res, "pkg.temporary").public == []
    assert definition(res, "pkg._src.api.grad").public == []


def test_a_wrapped_function_is_public_under_its_name():
    res = resolve_sources({
        "pkg/_src/api.py": """
        from pkg._src.util import boundary
        def jit(f):
          return f
        jit = boundary(jit)
        """,
        "pkg/_src/util.py": "def boundary(f):\n  return f\n",
        "pkg/__init__.py": "from pkg._src.api import jit as jit\n",
    })
    assert definition(res, "pkg._src.api.jit", "function").public == ["pkg.jit"]


def test_loop_over_a_modules_primitives_with_an_isinstance_filter():
    res = resolve_sources({
        "ops.py": CORE + "a_p = core.Primitive('a')\nb_p = core.Primitive('b')\n"
                         "def helper(): pass\nNAMES = ('x',)\n",
        "jax/experimental/roofline/roofline.py": """
        _rooflines = {}
        def register_standard_roofline(prim):
          def rule(ctx): pass
          _rooflines[prim] = rule
        """,
        "m.py": CORE + """
        import itertools
        import ops
        from jax.experimental.roofline import roofline
        c_p = core.Primitive('c')
        for prim in itertools.chain(ops.__dict__.values(), [c_p]):
          if isinstance(prim, core.Primitive):
            roofline.register_standard_roofline(prim)
        """})
    assert [rules(res, n) for n in "abc"] == [[("roofline", None, "rule")]] * 3  # nested def
    assert res.diagnostics == []


# -- registries beyond the autodiff/batching/lowering ones ----------------------------------


def test_more_registries_are_kinds():
    res = resolve_sources({
        "jax/_src/state/discharge.py": """
        _discharge_rules = {}
        def register_discharge_rule(prim):
          def register(f):
            _discharge_rules[prim] = f
          return register
        """,
        "m.py": CORE + """
        from jax._src.state import discharge
        def _typecheck(*a): pass
        def _pp(*a): pass
        p = core.Primitive('p')
        core.custom_typechecks[p] = _typecheck
        core.pp_eqn_rules[p] = _pp
        @discharge.register_discharge_rule(p)
        def _discharge(*a): pass
        """})
    assert rules(res, "p") == [("typecheck", None, "_typecheck"),
                               ("pretty_print", None, "_pp"),
                               ("discharge", None, "_discharge")]


def test_call_like_primitive_is_handled_by_trace_methods():
    res = resolve_sources({"m.py": """
        from jax._src import core
        class CallPrimitive(core.Primitive):
          def bind_with_trace(self, trace, args, params):
            return trace.process_call(self, args)
        class EvalTrace:
          def process_call(self, primitive, args):
            return primitive
        class JVPTrace:
          def process_call(self, primitive, args):
            return primitive
        call_p = CallPrimitive('call')
        """})
    assert [(r.kind, r.via) for r in primitive(res, "call").rules] == [
        ("trace", "EvalTrace.process_call"), ("trace", "JVPTrace.process_call")]


def test_a_lambda_that_registers_is_followed_when_called():
    res = resolve_sources({"m.py": CORE + """
        from functools import partial
        def _rule(prim, *a): pass
        def register(prim):
          def wrap(f):
            ad.primitive_jvps[prim] = f
          return wrap
        register_binop = lambda prim: register(prim)(partial(_rule, prim))
        p = core.Primitive('p')
        register_binop(p)
        """})
    assert rules(res, "p") == [("jvp", None, "_rule")]


def test_the_same_diagnostic_is_said_once():
    res = resolve_sources({"m.py": CORE + """
        def _i(x): pass
        for _ in (1, 2, 3):
          ad.primitive_jvps[mystery] = _i
        """})
    assert len(res.diagnostics) == 1


def test_zip_rebound_to_jaxs_checked_zip_still_unrolls():
    res = resolve_sources({
        "jax/_src/util.py": "def safe_zip(*args):\n  return list(zip(*args))\n",
        "m.py": CORE + """
        from jax._src.util import safe_zip
        unsafe_zip, zip = zip, safe_zip
        def _l(*a): pass
        a = core.Primitive('a'); b = core.Primitive('b')
        for p, plat in zip([a, b], ['cpu', 'tpu']):
          mlir.register_lowering(p, _l, platform=plat)
        """})
    assert rules(res, "a") == [("lowering", "cpu", "_l")]
    assert rules(res, "b") == [("lowering", "tpu", "_l")]


def test_a_registration_under_an_undecided_condition_says_so():
    res = resolve_sources({"m.py": CORE + """
        from jax._src.lib import gpu_sparse
        def _l(*a): pass
        p = core.Primitive('p')
        if gpu_sparse.cuda_is_supported:
          mlir.register_lowering(p, _l, platform='cuda')
        else:
          mlir.register_lowering(p, _l)
        """})
    assert [(r.platform, r.condition) for r in primitive(res, "p").rules] == [
        ("cuda", "gpu_sparse.cuda_is_supported"), (None, "not gpu_sparse.cuda_is_supported")]


def test_an_undecided_comparison_is_kept_as_written():
    """`if jax.__version__ >= "0.5":` read `(only if ...)`: a condition the values do
    not model is kept as its source text, and negated in parentheses for `else`."""
    res = resolve_sources({"m.py": CORE + """
        import jax
        def _l(*a): pass
        p = core.Primitive('p')
        if jax.__version__ >= "0.5":
          mlir.register_lowering(p, _l, platform='cuda')
        else:
          mlir.register_lowering(p, _l)
        if not jax.config.jax_enable_x64:
          p.def_impl(_l)
        else:
          p.def_abstract_eval(_l)
        """})
    assert [r.condition for r in primitive(res, "p").rules] == [
        'jax.__version__ >= "0.5"', 'not (jax.__version__ >= "0.5")',
        "not jax.config.jax_enable_x64", "jax.config.jax_enable_x64"]


LOOP_INTO_A_DICT = """
    from jax.extend.core import Primitive
    from jax.interpreters import mlir
    def _l(*a): pass
    _PRIMS = {}
    for _name in ['loop_abs', 'loop_sq']:
      _p = Primitive(_name)
      mlir.register_lowering(_p, _l, platform='tpu')
      _PRIMS[_name] = _p
    loop_abs_p = _PRIMS['loop_abs']
    def use_abs(x):
      return loop_abs_p.bind(x)
    """


def test_primitives_made_in_a_loop_into_a_dict_are_named_by_what_takes_them_out():
    """`_p`, the loop's name, held each primitive for one turn only: it is not their
    variable (binds said "_p.bind"); `loop_abs_p = _PRIMS["loop_abs"]` is, and binds."""
    res = resolve_sources({"m.py": LOOP_INTO_A_DICT})
    assert [(p.name, p.variable, [r.platform for r in p.rules]) for p in res.primitives] \
        == [("loop_abs", "loop_abs_p", ["tpu"]), ("loop_sq", None, ["tpu"])]
    assert [(b.function, res.primitives[b.primitive].name) for b in res.binds] == [
        ("use_abs", "loop_abs")]


def test_nested_functions_run_where_they_are_called():
    """`def register(fn, platform=None)` inside a helper, called twice; and a decorator
    factory that returns its nested `decorator`."""
    source = CORE + textwrap.dedent("""
        from functools import partial
        def _scan(*a): pass
        def _window(*a): pass
        def make(name):
          prim = core.Primitive(name)
          def register(fn, platform=None):
            mlir.register_lowering(prim, fn, platform=platform)
          register(partial(_scan, 1), 'METAL')
          register(_window)
          return prim
        cumsum_p = make('cumsum')
        rules_table = {}
        def register_rule(prim):
          def decorator(rule):
            ad.primitive_jvps[prim] = rule
            return rule
          return decorator
        @register_rule(cumsum_p)
        def _cumsum_jvp(*a): pass
        """)
    res = resolve_sources({"m.py": source})
    assert rules(res, "cumsum") == [("lowering", "METAL", "_scan"),
                                    ("lowering", None, "_window"),
                                    ("jvp", None, "_cumsum_jvp")]
    [jvp] = [r for r in primitive(res, "cumsum").rules if r.kind == "jvp"]
    assert jvp.via == "@register_rule > ad.primitive_jvps[...] ="
    assert jvp.line == source.splitlines().index("@register_rule(cumsum_p)") + 1


@pytest.mark.parametrize("short, kind", sorted(R.REGISTRIES.items()))
def test_every_registry_of_the_table_gives_its_kind(short, kind):
    """Each registry of registrars.py, written to in its own module's way."""
    leaf, _, table = short.partition(".")
    module = R.MODULES[leaf][0]
    path = module.replace(".", "/") + ".py"
    res = resolve_sources({
        path: f"{table} = {{}}\n",
        "user.py": f"from jax._src import core\nimport {module} as registry_module\n"
                   f"def _rule(*a): pass\np = core.Primitive('p')\n"
                   f"registry_module.{table}[p] = _rule\n",
    })
    assert rules(res, "p") == [(str(kind), None, "_rule")]


def test_every_name_of_a_chained_assignment_is_defined():
    res = resolve_sources({"m.py": CORE + """
        def _i(*a): pass
        call_p = closed_call_p = core.Primitive('closed_call')
        closed_call_p.def_impl(_i)
        """})
    assert rules(res, "closed_call") == [("impl", None, "_i")]
    assert {d.name for d in res.definitions if d.kind == "variable"} >= {
        "call_p", "closed_call_p"}


def test_other_names_of_a_primitive_are_its_aliases():
    res = resolve_sources({"m.py": CORE + """
        eval_jaxpr_p = core.Primitive('eval_jaxpr')
        call_p = closed_call_p = eval_jaxpr_p
        """})
    assert primitive(res, "eval_jaxpr").variable == "eval_jaxpr_p"
    assert primitive(res, "eval_jaxpr").aliases == ["call_p", "closed_call_p"]


def test_a_public_classs_methods_are_public_under_its_paths():
    res = resolve_sources({
        "pkg/_src/cd.py": "class custom_vjp:\n  def __call__(self, *a): pass\n"
                          "  def defvjp(self, f, b): pass\n  def _private(self): pass\n",
        "pkg/__init__.py": "from pkg._src.cd import custom_vjp as custom_vjp\n",
    })
    assert [definition(res, f"pkg._src.cd.custom_vjp.{m}").public
            for m in ("__call__", "defvjp", "_private")] == [
        ["pkg.custom_vjp.__call__"], ["pkg.custom_vjp.defvjp"], []]


def test_closure_held_by_a_call_it_is_passed_to():
    """A nested function whose locals hold a call that was passed the function itself
    (jax 0.7-0.8's shape): its value is a cycle, followed once, not forever."""
    res = resolve_sources({"m.py": CORE + """
        from elsewhere import wrap
        def make(name):
          p = core.Primitive(name)
          def impl(*args):
            return wrap(impl)
          wrapped = wrap(impl)
          p.def_impl(impl)
          return p
        x_p = make('x')
        """})
    assert rules(res, "x") == [("impl", None, "impl")]


def test_value_too_deep_to_follow_is_unknown_and_said():
    """Past the bound on a value's depth, the part left is unknown and a diagnostic
    says where; the rest of the tree is still indexed."""
    parts = ", ".join(repr(f"_{i}") for i in range(60))
    res = resolve_sources({"m.py": CORE + f"""
        def make(name):
          for part in ({parts}):
            name = name + part
          return core.Primitive(name)
        deep_p = make('deep')
        plain_p = core.Primitive('plain')
        """})
    assert [p.name for p in res.primitives] == [None, "plain"]
    assert any("m.py:" in d and "too deep" in d for d in res.diagnostics)


RECEIVING_HELPER = CORE + textwrap.dedent("""
    from functools import partial
    def standard_abstract_eval(prim, shape_rule, dtype_rule, layout_rule, *avals, **kw):
      pass
    def standard_primitive(shape_rule, dtype_rule, name, layout_rule=None):
      prim = core.Primitive(name)
      prim.def_abstract_eval(partial(standard_abstract_eval, prim, shape_rule, dtype_rule,
                                     layout_rule))
      return prim
    def _shape(*a): pass
    def _dtype(*a): pass
    def _layout(*a): pass
    """)


def test_rules_a_helper_receives_are_kinds_named_by_its_parameters():
    """`standard_primitive(shape_rule, dtype_rule, ...)` keeps them in a partial of its
    abstract_eval: each is a rule whose kind is the parameter's name in the tree's own
    signature (`layout_rule` here: no list of names); one not passed is no rule."""
    res = resolve_sources({"m.py": RECEIVING_HELPER + textwrap.dedent("""
        foo_p = standard_primitive(_shape, _dtype, 'foo', layout_rule=_layout)
        bar_p = standard_primitive(_shape, _dtype, 'bar')
        """)})
    assert rules(res, "foo") == [("abstract_eval", None, "standard_abstract_eval"),
                                 ("shape_rule", None, "_shape"), ("dtype_rule", None, "_dtype"),
                                 ("layout_rule", None, "_layout")]
    assert [kind for kind, _, _ in rules(res, "bar")] == [
        "abstract_eval", "shape_rule", "dtype_rule"]
    [shape] = [r for r in primitive(res, "foo").rules if r.kind == "shape_rule"]
    assert shape.via == "standard_primitive > prim.def_abstract_eval > shape_rule"


def test_or_and_is_and_conditional_expressions_are_followed():
    """`rule or default`, `x if c else y`, `a is None and b`: the operand they give,
    decided per call where a parameter is in them."""
    res = resolve_sources({"m.py": RECEIVING_HELPER + textwrap.dedent("""
        def _default(*a): pass
        def make(name, shape_rule=None, layout_rule=None, fancy=True):
          shape_rule = shape_rule or _default
          dtype_rule = _dtype if layout_rule is None and fancy else _default
          return standard_primitive(shape_rule, dtype_rule, name, layout_rule=layout_rule)
        a_p = make('a')
        b_p = make('b', _shape, _layout)
        c_p = make('c', fancy=False)
        """)})
    assert rules(res, "a")[1:] == [("shape_rule", None, "_default"),
                                   ("dtype_rule", None, "_dtype")]
    assert rules(res, "b")[1:] == [("shape_rule", None, "_shape"),
                                   ("dtype_rule", None, "_default"),
                                   ("layout_rule", None, "_layout")]
    assert rules(res, "c")[2] == ("dtype_rule", None, "_default")


def test_a_rule_factorys_lambda_is_truthy_and_named_by_the_factory():
    """`layout_rule=_argnum_layout(0)` handed to a helper that writes `layout_rule or
    _default`: the factory returns a lambda, so the `or` gives it, and the rule is the
    factory's (the index folds the lambda into it); a wrapper's argument still names it."""
    res = resolve_sources({"m.py": RECEIVING_HELPER + textwrap.dedent("""
        def _default(*a): pass
        def _argnum_layout(*argnums):
          return lambda *args, **_: all(args[i] for i in argnums)
        def _index(f, i):
          return lambda *args: f(*args)[i]
        def make(name, layout_rule=None):
          return standard_primitive(_shape, _dtype, name, layout_rule=layout_rule or _default)
        a_p = make('a', _argnum_layout(0))
        b_p = make('b', _index(_layout, 0))
        c_p = make('c')
        """)})
    assert rules(res, "a")[-1] == ("layout_rule", None, "_argnum_layout")
    assert rules(res, "b")[-1] == ("layout_rule", None, "_layout")
    assert rules(res, "c")[-1] == ("layout_rule", None, "_default")


def test_a_name_assigned_under_an_if_on_a_parameter_is_decided_per_call():
    """`if sharding_rule is None and batched: sharding_rule = default` in a helper: each
    call runs the helper with its own arguments, so the branch is taken or not."""
    res = resolve_sources({"m.py": RECEIVING_HELPER + textwrap.dedent("""
        def make(name, layout_rule=None, batched=True):
          if layout_rule is None and batched:
            layout_rule = _layout
          return standard_primitive(_shape, _dtype, name, layout_rule=layout_rule)
        def _given(*a): pass
        a_p = make('a')
        b_p = make('b', _given)
        c_p = make('c', batched=False)
        """)})
    assert rules(res, "a")[-1] == ("layout_rule", None, "_layout")
    assert rules(res, "b")[-1] == ("layout_rule", None, "_given")
    assert [kind for kind, _, _ in rules(res, "c")] == ["abstract_eval", "shape_rule",
                                                        "dtype_rule"]


def test_a_helper_whose_body_is_not_read_still_names_its_parameters():
    """A partial of a function extraction does not walk (it registers nothing) still
    says which of its arguments is which rule."""
    res = resolve_sources({"m.py": CORE + textwrap.dedent("""
        from functools import partial
        def multi_eval(prim, shape_rule, dtype_rule, *avals):
          return [shape_rule(*avals), dtype_rule(*avals)]
        def _shape(*a): pass
        def _dtype(*a): pass
        p = core.Primitive('p')
        p.def_abstract_eval(partial(multi_eval, p, _shape, _dtype))
        """)})
    assert rules(res, "p") == [("abstract_eval", None, "multi_eval"),
                               ("shape_rule", None, "_shape"), ("dtype_rule", None, "_dtype")]


def test_a_rule_registered_through_a_name_bound_to_a_partial_keeps_the_name():
    """`_foo_batch = partial(_batch, 1)` then `primitive_batchers[p] = _foo_batch`: the
    rule's function is what the partial wraps, and `written` the name as written."""
    source = CORE + textwrap.dedent("""
        from functools import partial
        def _batch(*a): pass
        _foo_batch = partial(_batch, 1)
        foo_p = core.Primitive('foo')
        batching.primitive_batchers[foo_p] = _foo_batch
        ad.primitive_jvps[foo_p] = partial(_batch, 2)
        """)
    res = resolve_sources({"m.py": source})
    batching_rule, jvp_rule = primitive(res, "foo").rules
    assert batching_rule.function.name == "_batch"
    assert batching_rule.written == Place(
        "_foo_batch", "m.py", source.splitlines().index("_foo_batch = partial(_batch, 1)") + 1)
    assert jvp_rule.function.name == "_batch" and jvp_rule.written is None


def test_marshalled_facts_resolve_as_the_facts_do():
    """The indexer hands the resolver each file's facts marshalled, unmarshalled a file
    at a time (and the flow facts again, as the flow reads them): the same resolution,
    call graph and all, as from the facts themselves."""
    import marshal

    from jaxmap.flow.graph import call_graph
    from jaxmap.indexing import extract
    from jaxmap.indexing.resolve import resolve

    sources = {"pkg/core.py": CORE + """
        def _impl(x): return x
        def helper(x): return p.bind(x)
        p = core.Primitive('p')
        p.def_impl(_impl)
        """, "pkg/api.py": """
        from pkg import core as c
        def f(x):
          g = c.helper
          return g(x)
        """}

    def facts():
        return {path: extract.extract(textwrap.dedent(text).encode(), path[:-3].replace("/", "."),
                                      flow=True)
                for path, text in sources.items()}

    raw = resolve(facts(), graph=call_graph)
    stored = resolve({path: marshal.dumps(f) for path, f in facts().items()}, graph=call_graph)
    assert stored == raw
    # (what they agree on is not nothing: `g(x)` is read through the value flow)
    assert raw.binds and any(row.text == "g" and row.callee is not None for row in raw.calls)

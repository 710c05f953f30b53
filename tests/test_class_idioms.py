"""Primitives built in classes, as libraries outside JAX write them: each idiom on a
small inline source, found by following objects, attributes, `super()` and bases."""

from __future__ import annotations

import textwrap

from inline import primitive, resolve_sources, rules

HEAD = textwrap.dedent("""\
    from functools import partial
    from jax.extend import core
    from jax.interpreters import ad, batching, mlir
    def _impl(*a): pass
    def _abstract(*a): pass
    def _lower(*a): pass
    def _transpose(*a): pass
    def _jvp(*a): pass
    """)


def resolve(body: str):
    return resolve_sources({"lib/ops.py": HEAD + textwrap.dedent(body)})


def test_an_object_keeping_its_primitive_in_an_attribute():
    """`self.primitive = Primitive(name)`, rules registered in `__init__` and in a
    method it calls per platform; then rules given to the object at module level, by a
    call and as a decorator."""
    res = resolve("""
        class Kernel:
          def __init__(self, name):
            self.primitive = core.Primitive(name)
            self.primitive.def_impl(_impl)
            self.primitive.def_abstract_eval(_abstract)
            for platform in ("cpu", "cuda"):
              self._register_lowering(platform)
          def _register_lowering(self, platform):
            mlir.register_lowering(self.primitive, _lower, platform=platform)
          def def_transpose_rule(self, rule):
            ad.primitive_transposes[self.primitive] = rule
            return rule
          def def_jvp_rule(self, rule):
            ad.primitive_jvps[self.primitive] = rule
            return rule
        spmv_p = Kernel("spmv")
        spmv_p.def_transpose_rule(_transpose)
        @spmv_p.def_jvp_rule
        def _spmv_jvp(*a): pass
        """)
    assert rules(res, "spmv") == [
        ("impl", None, "_impl"), ("abstract_eval", None, "_abstract"),
        ("lowering", "cpu", "_lower"), ("lowering", "cuda", "_lower"),
        ("transpose", None, "_transpose"), ("jvp", None, "_spmv_jvp")]
    assert primitive(res, "spmv").variable == "spmv_p.primitive"


def test_a_primitive_subclass_names_itself_through_super():
    """The name passed to `super().__init__`, positionally or by keyword, is the
    primitive's name (not the class's first argument, not '')."""
    res = resolve("""
        class Tagged(core.Primitive):
          def __init__(self):
            super().__init__("my_tag")
            self.def_impl(_impl)
        class Other(core.Primitive):
          def __init__(self, config):
            super().__init__(name="other_tag")
        tagged_p = Tagged()
        other_p = Other("config")
        """)
    assert rules(res, "my_tag") == [("impl", None, "_impl")]
    assert primitive(res, "other_tag").variable == "other_p"


def test_rules_a_parent_class_registers_in_its_init():
    res = resolve("""
        class Base(core.Primitive):
          def __init__(self, name):
            super().__init__(name)
            self.def_abstract_eval(_abstract)
            ad.primitive_jvps[self] = _jvp
            mlir.register_lowering(self, _lower)
        class Child(Base):
          def __init__(self, name):
            super().__init__(name)
            self.def_impl(_impl)
        child_p = Child("child")
        """)
    assert sorted(rules(res, "child")) == [
        ("abstract_eval", None, "_abstract"), ("impl", None, "_impl"),
        ("jvp", None, "_jvp"), ("lowering", None, "_lower")]


def test_call_and_map_primitives_and_their_subclasses():
    res = resolve("""
        class MyCall(core.CallPrimitive):
          pass
        call_p = core.CallPrimitive("my_call")
        map_p = core.MapPrimitive("my_map")
        sub_p = MyCall("my_sub_call")
        ad.primitive_jvps[sub_p] = _jvp
        """)
    assert {p.name for p in res.primitives} == {"my_call", "my_map", "my_sub_call"}
    assert rules(res, "my_sub_call") == [("jvp", None, "_jvp")]


def test_a_helper_taking_a_class_makes_its_primitives():
    """`Primitive(cls.name)`, `cls.name + "_wrapper"`, `cls.outer_primitive = p` read
    back as `SomeOp.outer_primitive`; and `Primitive(fun.__name__)`."""
    res = resolve("""
        class SomeOp:
          name = "some_op"
        def make(cls):
          inner = core.Primitive(cls.name)
          outer = core.Primitive(cls.name + "_wrapper")
          inner.def_impl(_impl)
          cls.outer_primitive = outer
        make(SomeOp)
        ad.primitive_transposes[SomeOp.outer_primitive] = _transpose
        def fused(*a): pass
        fused_p = core.Primitive(fused.__name__)
        """)
    assert rules(res, "some_op") == [("impl", None, "_impl")]
    assert rules(res, "some_op_wrapper") == [("transpose", None, "_transpose")]
    assert rules(res, "fused") == []


def test_hooks_kept_in_a_dict_and_applied_in_a_loop():
    res = resolve("""
        def _register_jvp(prim):
          ad.primitive_jvps[prim] = _jvp
        def _register_lowering(prim):
          mlir.register_lowering(prim, _lower)
        HOOKS = {"jvp": _register_jvp, "lowering": _register_lowering}
        class Op(core.Primitive):
          def __init__(self, name):
            super().__init__(name)
            for register in HOOKS.values():
              register(self)
        op_p = Op("op")
        """)
    assert rules(res, "op") == [("jvp", None, "_jvp"), ("lowering", None, "_lower")]


def test_an_objects_method_as_a_rule_and_a_helper_that_unwraps_the_object():
    """`def_abstract_eval(self._abstract_eval)` names the method; a helper given either
    the object or its primitive (`if isinstance(p, Kernel): p = p.primitive`) decides
    the isinstance for each call."""
    res = resolve("""
        def defjvp(primitive, *rules):
          if isinstance(primitive, Kernel):
            primitive = primitive.primitive
          ad.primitive_jvps[primitive] = partial(_jvp, rules)
        class Kernel:
          def __init__(self, name):
            self.primitive = core.Primitive(name)
            self.primitive.def_abstract_eval(self._abstract_eval)
          def _abstract_eval(self, *avals):
            pass
          def def_jvp_rules(self, *rules):
            defjvp(self.primitive, *rules)
        k_p = Kernel("k")
        k_p.def_jvp_rules(_transpose, None)
        other_p = Kernel("other")
        defjvp(other_p, _transpose)
        """)
    assert rules(res, "k") == [("abstract_eval", None, "_abstract_eval"), ("jvp", None, "_jvp")]
    assert rules(res, "other")[1] == ("jvp", None, "_jvp")


def test_a_primitive_made_in_a_class_body_and_registered_there():
    """`inner_p = Primitive(...)` then `inner_p.def_impl(...)` in one class body: the
    body's own name is the class attribute (it had no rules)."""
    res = resolve("""
        class Ops:
          inner_p = core.Primitive("inner")
          inner_p.def_impl(_impl)
          mlir.register_lowering(inner_p, _lower)
        inner_p = None
        """)
    assert rules(res, "inner") == [("impl", None, "_impl"), ("lowering", None, "_lower")]
    assert primitive(res, "inner").variable == "Ops.inner_p"

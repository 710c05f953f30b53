"""Rules a helper receives (`shape_rule`, `dtype_rule`, ...): kinds named by the helper's
parameters, accepted wherever a rule kind is, and checked by verify against the partial
a live abstract_eval holds."""

from __future__ import annotations

import textwrap
from functools import partial
from pathlib import Path

import pytest

from jaxmap.commands import verify
from jaxmap.commands.lookup import check_rule_kinds
from jaxmap.errors import JaxmapError
from jaxmap.models import FunctionRef, Primitive, Rule, RuleKind, SourceLoc


def test_a_parameter_ending_in_rule_is_a_kind_of_its_own():
    kind = RuleKind("layout_rule")
    assert kind is RuleKind("layout_rule") and kind.received and str(kind) == "layout_rule"
    assert not RuleKind.ABSTRACT_EVAL.received
    with pytest.raises(ValueError):
        RuleKind("layout")
    check_rule_kinds(missing=("shape_rule",), has=("jvp",))
    with pytest.raises(JaxmapError, match="_rule"):
        check_rule_kinds(missing=("shape",))


def _abstract_eval(prim, shape_rule, dtype_rule, sharding_rule, *avals, **kwargs):
    pass


def _shape(*avals):
    pass


def _dtype(*avals):
    pass


def _wrapped(fn):
    """As def_abstract_eval keeps it: the partial in a closure cell."""
    def abstract_eval(*args, **kwargs):
        return fn(*args, **kwargs)
    return abstract_eval


def _argnum_weak_type(*argnums):
    return lambda *args, **_: all(args[i] for i in argnums)


def test_verify_names_a_live_lambda_also_by_the_function_that_made_it():
    here = str(Path(__file__).resolve())
    found = verify.rule_functions(_argnum_weak_type(0))
    assert {(here, "<lambda>"), (here, "_argnum_weak_type")} <= found
    assert verify.rule_functions(_shape) == {(here, "_shape")}


def test_verify_reads_the_partial_in_a_live_abstract_eval():
    live = _wrapped(partial(_abstract_eval, "prim", _shape, _dtype, None))
    assert verify.received_rules(live) == [("shape_rule", _shape), ("dtype_rule", _dtype)]
    assert verify.received_rules(_shape) == []


def test_verify_compares_received_rules_with_the_runtime():
    here = Path(__file__).resolve()
    runtime = verify.Runtime("0", here.parent, {"foo": {"abstract_eval"}}, {here.name})
    runtime.add_received("foo", "shape_rule", _shape)
    runtime.add_received("foo", "dtype_rule", _dtype)

    def rule(kind, function):
        line = function.__code__.co_firstlineno
        return Rule(RuleKind(kind), SourceLoc(here.name, 1), "standard_primitive",
                    function=FunctionRef(function.__name__, SourceLoc(here.name, line)))

    foo = Primitive("foo", "foo_p", "m", SourceLoc(here.name, 1), rules=(
        rule("shape_rule", _shape), rule("dtype_rule", _shape), rule("sharding_rule", _dtype)))
    report = verify.compare([foo], runtime)
    assert report.received == (2, 2)
    assert report.received_extra == (1, 3) and report.extra_received == ["foo:sharding_rule"]
    assert report.received_functions == (1, 2)
    assert report.unconfirmed_received == ["foo:dtype_rule:_shape"]


def test_rules_received_by_a_replaced_abstract_eval_are_not_checked():
    """`p = standard_primitive(...)` then `p.def_abstract_eval(f)`: the runtime holds only
    the later one, so the rules the first received are not counted as extra."""
    here = Path(__file__).resolve()
    runtime = verify.Runtime("0", here.parent, {"foo": {"abstract_eval"}}, {here.name})
    first, later = SourceLoc(here.name, 1), SourceLoc(here.name, 2)
    foo = Primitive("foo", "foo_p", "m", first, rules=(
        Rule(RuleKind.ABSTRACT_EVAL, first, "standard_primitive"),
        Rule(RuleKind("shape_rule"), first, "standard_primitive > shape_rule"),
        Rule(RuleKind.ABSTRACT_EVAL, later, "foo_p.def_abstract_eval")))
    assert verify.compare([foo], runtime).received_extra == (0, 0)


def test_a_rule_written_as_a_partials_name_shows_both():
    from jaxmap.render import json as json_render
    from jaxmap.render import text

    wraps = FunctionRef("_dot_batch_rule", SourceLoc("lax.py", 5869))
    written = FunctionRef("_dot_general_batch_rule", SourceLoc("lax.py", 6027))
    rule = Rule(RuleKind.BATCHING, SourceLoc("lax.py", 6030), "primitive_batchers[...] =",
                function=wraps, functions=(wraps,), written=written)
    assert text.rule_line(rule, str).endswith(
        "-> _dot_general_batch_rule lax.py:6027 (partial of _dot_batch_rule :5869)")
    assert json_render.rule(rule)["written"] == {
        "name": "_dot_general_batch_rule", "file": "lax.py", "line": 6027}


def test_received_kinds_and_written_names_survive_the_index(tmp_path):
    """Through the store and back: a received kind reads as itself, `written` as the
    name and line the partial was bound at."""
    from jaxmap.session import open_index

    source = textwrap.dedent("""\
        from functools import partial
        from jax.extend import core
        from jax.interpreters import batching
        def standard_abstract_eval(prim, shape_rule, *avals): pass
        def _shape(*a): pass
        def _batch(*a): pass
        foo_p = core.Primitive('foo')
        foo_p.def_abstract_eval(partial(standard_abstract_eval, foo_p, _shape))
        _foo_batch = partial(_batch, 1)
        batching.primitive_batchers[foo_p] = _foo_batch
        """)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "ops.py").write_text(source)
    with open_index(tmp_path) as index:
        [foo] = index.primitives()
    kinds = {rule.kind.value: rule for rule in foo.rules}
    assert kinds["shape_rule"].function.name == "_shape"
    assert kinds["batching"].written == FunctionRef("_foo_batch", SourceLoc("pkg/ops.py", 9))
    assert kinds["shape_rule"].written is None

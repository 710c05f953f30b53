"""verify checks every function of a rule against what the live rule reaches: each
operand's JVP of `ad.defjvp`, not the first alone."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from jaxmap.commands import verify
from jaxmap.models import FunctionRef, Primitive, Rule, RuleKind, SourceLoc


def _standard_jvp(jvps, primitive, primals, tangents):
    pass


def _jvp_x(g, x, y):
    pass


def _jvp_y(g, x, y):
    pass


def _renamed(g, x, y):
    pass


def _report(*functions):
    here = Path(__file__).resolve()
    runtime = verify.Runtime("0", here.parent, {"foo": {"jvp"}}, {here.name})
    runtime.add("foo", "jvp", partial(_standard_jvp, (_jvp_x, None, _jvp_y), "foo"))
    refs = tuple(FunctionRef(f.__name__, SourceLoc(here.name, f.__code__.co_firstlineno))
                 for f in functions)
    rule = Rule(RuleKind.JVP, SourceLoc(here.name, 1), "ad.defjvp", function=refs[0],
                functions=refs)
    foo = Primitive("foo", "foo_p", "m", SourceLoc(here.name, 1), rules=(rule,))
    return verify.compare([foo], runtime)


def test_every_jvp_of_a_defjvp_rule_is_confirmed():
    assert _report(_jvp_x, _jvp_y).functions == (2, 2)


def test_a_jvp_the_live_rule_does_not_reach_is_unconfirmed_whichever_operand():
    report = _report(_jvp_x, _renamed)
    assert report.functions == (1, 2)
    assert report.unconfirmed_functions == ["foo:jvp:_renamed"]

"""explain on a tree of the user's own (not jax), which raises none of JAX's messages:
a rule-missing message worded as a jax release words it is still answered in the
tree, where it registers the rule (so the registration did not run) or lacks it; and
the fix never points at a block it did not show."""

from __future__ import annotations

import pytest
from inline import indexed_tree

from jaxmap.commands import explain
from jaxmap.render import explain_text
from jaxmap.render.view import View

_OPS = '''
    from jax.extend import core
    from jax.interpreters import ad, batching

    wiggle_p = core.Primitive("wiggle")


    def _wiggle_jvp(g, x):
      return g


    def _wiggle_batch(args, dims):
      return wiggle_p.bind(*args), dims[0]


    ad.defjvp(wiggle_p, _wiggle_jvp)
    '''
_REGISTERS = "batching.primitive_batchers[wiggle_p] = _wiggle_batch\n"
# jax's wording of the message, as an older release's snapshot holds it.
_OLDER = [("0.10.2", [("jax/_src/interpreters/batching.py", 277,
                       "jax._src.interpreters.batching.BatchTrace.process_primitive",
                       "NotImplementedError", ("Batching rule for '", "' not implemented"),
                       False)])]
_MESSAGE = "Batching rule for 'wiggle' not implemented"


def _answer(tmp_path_factory, ops: str):
    index = indexed_tree(tmp_path_factory, {"wig/__init__.py": "", "wig/ops.py": ops})
    try:
        [answer] = explain.explain_all(index, _MESSAGE, older=_OLDER)
        return answer, explain_text.explanation([answer], View(index.root))
    finally:
        index.close()


def _line(text: str, code: str) -> int:
    import textwrap

    return next(n for n, line in enumerate(textwrap.dedent(text).splitlines(), 1)
                if code in line)


def test_a_rule_the_tree_registers_is_said_to_be_registered_there(tmp_path_factory):
    ops = _OPS + "    " + _REGISTERS
    answer, text = _answer(tmp_path_factory, ops)
    assert answer.status == explain.Status.OLDER and answer.missing is None
    assert answer.has_rule.kind == "batching"
    assert "not missing: the index's wiggle has a batching rule" in text
    assert f"its batching   wig/ops.py:{_line(ops, 'primitive_batchers')}" in text
    assert "the tree registers this rule (above)" in text
    assert "register with" not in text and "shows where and how" not in text


def test_a_rule_the_tree_lacks_is_missing_with_its_primitive_and_no_promise(tmp_path_factory,
                                                                          monkeypatch):
    from jaxmap.commands import missing_rules

    # no jax release's snapshot to read registrars from (test_explain_library.py: with one)
    monkeypatch.setattr(missing_rules, "jax_release", lambda release: None)
    answer, text = _answer(tmp_path_factory, _OPS)
    assert answer.status == explain.Status.OLDER and answer.has_rule is None
    assert "missing rule: batching of classic primitive wiggle" in text
    assert f"primitive      wiggle  wig/ops.py:{_line(_OPS, 'core.Primitive')}" in text
    assert "the indexed tree is not jax, and no jax release" in text
    assert "usually fixes  the primitive lacks the rule this transform needs" in text
    assert "above" not in text  # nothing above shows where and how to register it
    # a template to copy the rule's wiring from, which writes nothing
    assert "template       jaxmap new-primitive NAME --dry-run  (a new primitive" in text


@pytest.mark.parametrize("text", ["register it (jaxmap shows where and how above)"])
def test_the_fix_points_above_only_where_registrars_are_shown(text):
    from jaxmap.knowledge import fixes

    assert text in fixes.missing_rule(shown=True, registered=False, not_linear=False).fix
    assert text not in fixes.missing_rule(shown=False, registered=False, not_linear=False).fix
    assert fixes.missing_rule(shown=True, registered=False, not_linear=True) is None

"""Rules made of a `functools.partial` of one function, told apart by the partial's
keyword arguments (`partial(_lower, rolled=False)` for the default lowering,
`rolled=True` for cpu): read into the index, kept by a snapshot, shown by `locate`."""

from __future__ import annotations

import textwrap

import pytest

from jaxmap.models import FunctionRef, Rule, RuleKind, SourceLoc

SOURCE = textwrap.dedent("""\
    from functools import partial
    from jax.extend import core
    from jax.interpreters import batching, mlir
    def _lower(ctx, x, *, rolled=True): pass
    def _device_lower(ctx, x, *, prefix, n=1, scale=None): pass
    def _batch(args, dims, *, axis): pass
    _lower_rule = mlir.lower_fun(partial(_lower, rolled=False), multiple_results=True)
    foo_p = core.Primitive('foo')
    mlir.register_lowering(foo_p, _lower_rule)
    mlir.register_lowering(foo_p, partial(_lower, rolled=True), platform='cpu')
    mlir.register_lowering(foo_p, partial(partial(_device_lower, prefix='cu'), scale=None),
                           platform='cuda')
    mlir.register_lowering(foo_p, partial(_device_lower, prefix='hip', n=3), platform='rocm')
    batching.primitive_batchers[foo_p] = _batch
    """)


@pytest.fixture
def foo(tmp_path_factory):
    from jaxmap.session import open_index

    root = tmp_path_factory.mktemp("tree")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "ops.py").write_text(SOURCE)
    with open_index(root) as index:
        [found] = index.primitives()
        yield index, found


def test_the_partials_keywords_tell_its_rules_apart(foo):
    _index, prim = foo
    assert {(r.kind.value, r.platform, r.keywords) for r in prim.rules} == {
        ("lowering", None, "rolled=False"),  # through mlir.lower_fun
        ("lowering", "cpu", "rolled=True"),
        ("lowering", "cuda", "prefix='cu', scale=None"),  # a partial of a partial
        ("lowering", "rocm", "prefix='hip', n=..."),  # a number the facts do not keep
        ("batching", None, None)}


def test_a_snapshot_keeps_the_keywords(foo, tmp_path):
    from jaxmap.store import snapshot

    index, prim = foo
    target = tmp_path / "jax-0.0.1.json.gz"
    target.write_bytes(snapshot.export(index))
    with snapshot.load(str(target)) as snap:
        [again] = snap.primitives()
    assert [r.keywords for r in again.rules] == [r.keywords for r in prim.rules]


def test_locate_shows_the_keywords_after_the_function():
    from jaxmap.render import json as json_render
    from jaxmap.render import text

    lower = FunctionRef("_lower", SourceLoc("ops.py", 4))
    rule = Rule(RuleKind.LOWERING, SourceLoc("ops.py", 10), "mlir.register_lowering", "cpu",
                lower, ("cpu",), (lower,), keywords="rolled=True")
    assert text.rule_line(rule, str).endswith("-> _lower(rolled=True) ops.py:4")
    assert json_render.rule(rule)["keywords"] == "rolled=True"
    named = rule._replace(written=FunctionRef("_cpu_rule", SourceLoc("ops.py", 7)))
    assert text.rule_line(named, str).endswith(
        "-> _cpu_rule ops.py:7 (partial of _lower(rolled=True) :4)")
    assert json_render.rule(rule._replace(keywords=None))["keywords"] is None

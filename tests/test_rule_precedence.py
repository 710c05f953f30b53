"""Which registration of a rule overrides another (only the last one run takes
effect): claimed only where the order is certain, shown by locate and diff."""

from __future__ import annotations

import json

import pytest
from inline import primitive, resolve_sources

from jaxmap.cli import main

_HEAD = """\
from jax._src import core
from jax._src.interpreters import ad, batching, mlir

def _impl_a(x): return x
def _impl_b(x): return x
def _low(ctx, x): return [x]
def _low_cpu(ctx, x): return [x]
def _jvp(g, x): return g
def _batch(args, dims): return args, dims

p = core.Primitive('p')
"""


def _line(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


def _overridden(body: str, extra: dict[str, str] | None = None) -> dict[tuple, int | None]:
    """(kind, platform, line) -> the line overriding that registration of p, if any."""
    source = _HEAD + body
    found = primitive(resolve_sources({"pkg/__init__.py": "", "pkg/m.py": source,
                                       **(extra or {})}), "p")
    return {(r.kind, r.platform, r.line): r.overridden_by for r in found.rules}


def test_a_later_top_level_registration_overrides_an_earlier_one():
    body = "p.def_impl(_impl_a)\np.def_impl(_impl_b)\n"
    first, second = _line(_HEAD + body, "_impl_a)"), _line(_HEAD + body, "_impl_b)")
    assert _overridden(body) == {("impl", None, first): second, ("impl", None, second): None}


@pytest.mark.parametrize("later", [
    "if core.config_flag:\n  p.def_impl(_impl_b)\n",  # may not run
    "for _ in range(2):\n  p.def_impl(_impl_b)\n",  # a loop's order is not its lines'
    "try:\n  p.def_impl(_impl_b)\nexcept ImportError:\n  pass\n",  # may raise before it
    "with open('x'):\n  p.def_impl(_impl_b)\n",
])
def test_a_later_registration_that_a_block_holds_overrides_nothing(later):
    assert set(_overridden("p.def_impl(_impl_a)\n" + later).values()) == {None}


def test_an_earlier_registration_in_a_block_is_overridden_all_the_same():
    body = "if core.config_flag:\n  p.def_impl(_impl_a)\np.def_impl(_impl_b)\n"
    assert _overridden(body)[("impl", None, _line(_HEAD + body, "_impl_a)"))] == \
        _line(_HEAD + body, "_impl_b)")


def test_a_registration_in_another_module_overrides_nothing():
    """Which of two modules runs last is their import order, which the index does not
    know."""
    other = "from pkg.m import p, _impl_b\np.def_impl(_impl_b)\n"
    assert set(_overridden("p.def_impl(_impl_a)\n", {"pkg/n.py": other}).values()) == {None}


def test_only_one_table_entry_is_overridden():
    """`fancy_primitive_batchers` is another table than `primitive_batchers`; a cpu
    lowering replaces the cpu one, not the default; `ad.defjvp` and
    `ad.primitive_jvps[p] =` write one entry, a gpu lowering cuda's and rocm's."""
    body = ("batching.primitive_batchers[p] = _batch\n"
            "batching.fancy_primitive_batchers[p] = _batch\n"
            "mlir.register_lowering(p, _low)\n"
            "mlir.register_lowering(p, _low_cpu, platform='cpu')\n"
            "mlir.register_lowering(p, _low, platform='cuda')\n"
            "mlir.register_lowering(p, _low, platform='gpu')\n"
            "ad.defjvp(p, _jvp)\nad.primitive_jvps[p] = _jvp\n")
    source = _HEAD + body
    overridden = {key: by for key, by in _overridden(body).items() if by is not None}
    assert overridden == {
        ("lowering", "cuda", _line(source, "platform='cuda'")): _line(source, "platform='gpu'"),
        ("jvp", None, _line(source, "ad.defjvp")): _line(source, "primitive_jvps")}


def _tree(root, body: str):
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "m.py").write_text(_HEAD + body)
    return str(root)


def test_locate_marks_the_overridden_registration(tmp_path, capsys):
    root = _tree(tmp_path, "p.def_impl(_impl_a)\np.def_impl(_impl_b)\n")
    first, second = _line(_HEAD, "p = core") + 1, _line(_HEAD, "p = core") + 2
    assert main(["locate", "p", "--root", root, "--json"]) == 0
    rules = json.loads(capsys.readouterr().out)["primitives"][0]["rules"]
    assert [(r["line"], r["overridden_by"]) for r in rules] == [
        (first, {"file": "pkg/m.py", "line": second}), (second, None)]
    assert main(["locate", "p", "--root", root]) == 0
    out = capsys.readouterr().out
    assert f"pkg/m.py:{first}  via p.def_impl  -> _impl_a pkg/m.py:4  (overridden by " \
           f"pkg/m.py:{second})" in out
    assert f"pkg/m.py:{second}  via p.def_impl  -> _impl_b pkg/m.py:5\n" in out


def test_diff_says_whether_an_added_registration_overrides(tmp_path, capsys):
    """The new release registers p's impl again, later in the file: it overrides the
    kept one, which the row says of both."""
    old = _tree(tmp_path / "old", "p.def_impl(_impl_a)\n")
    new = _tree(tmp_path / "new", "p.def_impl(_impl_a)\np.def_impl(_impl_b)\n")
    kept, added = _line(_HEAD, "p = core") + 1, _line(_HEAD, "p = core") + 2
    result = json.loads(_run(capsys, "diff", old, new, "--json"))
    assert [(r["change"], r["old"], r["new"]) for r in result["rules"]] == [(
        "registration-added", [f"pkg/m.py:{kept} (_impl_a)"],
        [f"pkg/m.py:{kept} (_impl_a) [overridden by line {added}]",
         f"pkg/m.py:{added} (_impl_b) [overrides line {kept}]"])]
    assert f"[overrides line {kept}]" in _run(capsys, "diff", old, new)


def _run(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out

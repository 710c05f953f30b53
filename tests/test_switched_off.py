"""A rule switched off where a primitive is made: a helper that registers it only
under an `if` on a parameter, called with that parameter the other way
(`linalg_primitive(..., supports_batching=False)`). Recorded with the call and the
`if`, never as a rule; shown by locate, explain and the map's gaps."""

from __future__ import annotations

import gzip
import json

import pytest
from inline import primitive, resolve_sources, written_tree

from jaxmap.cli import main
from jaxmap.commands import repomap, rule_gaps
from jaxmap.render import markdown
from jaxmap.session import open_index
from jaxmap.store import snapshot, write

_HELPERS = """\
from jax._src import core
from jax._src.interpreters import batching, mlir

def _batch(args, dims):
  return args, dims

def _low(ctx, x):
  return [x]

def _one(x):
  return x

def _many(x):
  return [x]

def make(name, supports_batching=True):
  p = core.Primitive(name)
  p.def_impl(_one)
  if supports_batching:
    batching.primitive_batchers[p] = _batch
  return p

def make_per_call(name, supports_batching=True, rule=None):
  if rule is None and supports_batching:
    rule = _batch
  p = core.Primitive(name)
  p.def_impl(_one)
  if supports_batching:
    batching.primitive_batchers[p] = rule
  return p

def make_either(name, multiple=False):
  p = core.Primitive(name)
  if multiple:
    p.def_abstract_eval(_many)
  else:
    p.def_abstract_eval(_one)
  return p

def make_via(name):
  p = make(name, supports_batching=False)
  p.def_abstract_eval(_one)
  return p

def lower(p, on_cpu=True):
  if not on_cpu:
    return
  mlir.register_lowering(p, _low, platform="cpu")

def lower_else(p, fallback=True):
  if fallback:
    pass
  else:
    mlir.register_lowering(p, _low)
"""
_OPS = """\
from pkg.helpers import lower, lower_else, make, make_either, make_per_call, make_via

on_p = make('on')
off_p = make('off',
             supports_batching=False)
special_p = make_per_call('special', supports_batching=False)
either_p = make_either('either')
nested_p = make_via('nested')
lower(on_p)
lower_else(on_p, fallback=False)
lower_else(off_p, fallback=True)
"""
_SIBLINGS = """\
from jax._src import core
from pkg.helpers import _one, make

a_p = make('a')
b_p = make('b')
c_p = make('c')
lone_p = make('lone', supports_batching=False)
bare_p = core.Primitive('bare')
bare_p.def_impl(_one)
"""
_SOURCES = {"pkg/__init__.py": "", "pkg/helpers.py": _HELPERS, "pkg/ops.py": _OPS,
            "pkg/siblings.py": _SIBLINGS}


def _line(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


_BATCHING_IF = _line(_HELPERS, "  if supports_batching:")  # make's
_OFF = _line(_OPS, "off_p = make(")


def _offs(name: str) -> list[tuple]:
    return [(o.kind, o.platform, o.file, o.line, o.end_line, o.condition, o.guard_file,
             o.guard_line) for o in primitive(resolve_sources(_SOURCES), name).switched_off]


def test_a_call_that_switches_a_helpers_rule_off_records_it_with_the_call_and_the_if():
    assert _offs("off")[:1] == [("batching", None, "pkg/ops.py", _OFF, _OFF + 1,
                             "`supports_batching` is False", "pkg/helpers.py", _BATCHING_IF)]


def test_a_helper_made_with_the_switch_on_has_the_rule_and_nothing_switched_off():
    found = primitive(resolve_sources(_SOURCES), "on")
    assert {r.kind for r in found.rules} == {"impl", "batching", "lowering"}
    assert found.switched_off == []


def test_a_helper_summarised_per_call_records_what_the_call_switches_off():
    """`make_per_call` assigns a name under an `if` on its parameters, so each call
    runs its body with the arguments: the branch is skipped there, not guarded."""
    (off,) = _offs("special")
    assert off[:2] == ("batching", None)
    assert off[3] == _line(_OPS, "special_p =")
    assert off[6:] == ("pkg/helpers.py", _nth_line(_HELPERS, "  if supports_batching:", 2))


def _nth_line(source: str, text: str, nth: int) -> int:
    return [n for n, line in enumerate(source.splitlines(), 1) if text in line][nth - 1]


def test_the_else_of_the_same_if_registering_that_kind_switches_nothing_off():
    found = primitive(resolve_sources(_SOURCES), "either")
    assert [r.kind for r in found.rules] == ["abstract_eval"]
    assert found.switched_off == []


def test_a_helper_calling_a_helper_with_the_switch_off_passes_it_on_to_its_call():
    assert _offs("nested") == [("batching", None, "pkg/ops.py", _line(_OPS, "nested_p ="),
                                _line(_OPS, "nested_p ="), "`supports_batching` is False",
                                "pkg/helpers.py", _BATCHING_IF)]


def test_a_lowering_switched_off_keeps_its_platform_and_an_else_branch_its_condition():
    found = primitive(resolve_sources(_SOURCES), "off")
    offs = sorted((o.kind, o.platform, o.condition) for o in found.switched_off)
    assert offs == [("batching", None, "`supports_batching` is False"),
                    ("lowering", None, "`fallback` is True")]
    assert not [r for r in found.rules if r.kind == "lowering"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = written_tree(tmp_path_factory, _SOURCES)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JAXMAP_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield root


def _out(capsys, *argv: str, code: int = 0) -> str:
    assert main(list(argv)) == code
    return capsys.readouterr().out


def test_locate_shows_what_is_switched_off_and_lists_it_with_no_rule(tree, capsys):
    out = _out(capsys, "locate", "off_p", "--root", tree)
    assert (f"  switched off           batching  pkg/ops.py:{_OFF}  `supports_batching` is "
            f"False here (make registers it only under its `if` at "
            f"pkg/helpers.py:{_BATCHING_IF})") in out
    assert "\n  batching " not in out  # no rule line of that kind
    located = json.loads(_out(capsys, "locate", "off_p", "--root", tree, "--json"))
    (prim,) = located["primitives"]
    assert [r["kind"] for r in prim["rules"]] == ["impl"]
    assert [(o["kind"], o["file"], o["line"], o["condition"], o["guard"])
            for o in prim["switched_off"]] == [
        ("batching", "pkg/ops.py", _OFF, "`supports_batching` is False",
         {"file": "pkg/helpers.py", "line": _BATCHING_IF}),
        ("lowering", "pkg/ops.py", _line(_OPS, "lower_else(off_p"), "`fallback` is True",
         {"file": "pkg/helpers.py", "line": _line(_HELPERS, "if fallback:")})]
    on = json.loads(_out(capsys, "locate", "on_p", "--root", tree, "--json"))
    assert on["primitives"][0]["switched_off"] == []
    assert "switched off" not in _out(capsys, "locate", "on_p", "--root", tree)


def test_what_is_switched_off_is_listed_apart_and_no_rule_to_primitives_has(tree, capsys):
    listed = json.loads(_out(capsys, "primitives", "--has", "batching", "--root", tree,
                             "--json"))
    assert sorted(p["name"] for p in listed["primitives"]) == ["a", "b", "c", "on"]
    lacking = json.loads(_out(capsys, "primitives", "--missing", "batching", "--root", tree,
                              "--json"))
    assert {p["name"]: [o["kind"] for o in p["switched_off"]]
            for p in lacking["primitives"]} == {
        "either": [], "nested": ["batching"], "off": ["batching", "lowering"],
        "special": ["batching"], "lone": ["batching"], "bare": []}
    assert _out(capsys, "locate", "off_p", "--kind", "batching", "--root", tree,
                code=1) == ""


def test_explain_says_the_rule_is_switched_off_where_the_primitive_is_made(tree, capsys):
    out = _out(capsys, "explain", "Batching rule for 'off' not implemented", "--root", tree)
    assert "switched off: batching of primitive off, by design" in out
    assert f"  switched off   batching  pkg/ops.py:{_OFF}  `supports_batching` is False" in out
    assert "missing rule:" not in out
    assert "switched off on purpose" in out  # what usually fixes it says so too
    answer = json.loads(_out(capsys, "explain", "Batching rule for 'off' not implemented",
                             "--root", tree, "--json"))
    (off,) = answer["exceptions"][0]["missing_rule"]["switched_off"]
    assert (off["kind"], off["line"]) == ("batching", _OFF)
    # one not switched off is missing as before: where to add it
    either = json.loads(_out(capsys, "explain", "Batching rule for 'either' not implemented",
                             "--root", tree, "--json"))
    assert either["exceptions"][0]["missing_rule"]["switched_off"] == []
    out = _out(capsys, "explain", "Batching rule for 'either' not implemented", "--root", tree)
    assert "missing rule: batching of classic primitive either" in out
    assert "switched off" not in out


def test_map_gaps_name_a_kind_switched_off_as_by_design_not_as_a_surprise(tree):
    with open_index(tree) as index:
        data = repomap.gather(index, links=False)
    gap = next(g for g in data.gaps if g.title == "without a batching rule")
    assert "either" in gap.surprises
    assert "off" not in gap.surprises and "nested" not in gap.surprises
    assert gap.switched_off == ("lone", "nested", "off", "special")
    text = markdown.repo_map(data)
    row = next(r for r in text.splitlines() if "without a batching rule |" in r)
    assert "switched off where made: `lone`, `nested`, `off`, `special`" in row
    assert "- *switched off where made*:" in text


def test_an_edit_that_only_moves_lines_moves_the_call_and_the_if(tmp_path_factory, capsys):
    """Lines far below the small numbers the facts also hold, so that each line maps
    to one other (moves.line_moves): the rows are moved, not resolved again."""
    pad = "#\n" * 60
    root = written_tree(tmp_path_factory, {path: pad + text for path, text in _SOURCES.items()},
                        "moved")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JAXMAP_CACHE_DIR", str(tmp_path_factory.mktemp("moved-cache")))
        _out(capsys, "index", "--root", root, "-q")  # with its call graph, which is kept
        for name in ("ops.py", "helpers.py"):  # two comment lines more on top of each
            path = f"{root}/pkg/{name}"
            text = open(path).read()
            open(path, "w").write("# moved\n# down\n" + text)
        moved = []
        patch.setattr(write, "move_lines",
                      lambda *a, **k: moved.append(_move(*a, **k)) or moved[-1])
        (prim,) = json.loads(_out(capsys, "locate", "off_p", "--root", root,
                                  "--json"))["primitives"]
    off = prim["switched_off"][0]
    assert moved == [True] and (off["line"], off["end_line"], off["guard"]["line"]) == \
        (_OFF + 62, _OFF + 63, _BATCHING_IF + 62)


_move = write.move_lines


def test_a_snapshot_keeps_what_is_switched_off_and_only_where_there_is_any(tree, tmp_path):
    with open_index(tree) as index:
        data = snapshot.export(index)
    document = json.loads(gzip.decompress(data))
    assert {p["name"] for p in document["primitives"] if "switched_off" in p} == \
        {"off", "special", "nested", "lone"}
    path = tmp_path / "jax-0.0.0.json.gz"
    path.write_bytes(data)
    (off,) = [p for p in snapshot.load(str(path)).primitives() if p.name == "off"]
    assert [(o.kind.value, o.loc.line, o.condition, o.guard.line) for o in off.switched_off] \
        == [("batching", _OFF, "`supports_batching` is False", _BATCHING_IF),
            ("lowering", _line(_OPS, "lower_else(off_p"), "`fallback` is True",
             _line(_HELPERS, "if fallback:"))]


def test_the_editor_flags_no_gap_where_the_making_call_switches_the_rule_off(tree):
    with open_index(tree) as index:
        found = rule_gaps.gaps(index, "pkg/siblings.py")
    assert [(g.primitive, g.code, g.what) for g in found if g.what == "batching"] == [
        ("bare", rule_gaps.MISSING_RULE, "batching")]

"""Snapshots (index --snapshot, locate --jax), diff between two trees or versions, and
scripts/jax_repo_locator.py with and without the package importable."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from inline import TRACE_CORE
from markers import ROOT

from jaxmap.cli import main
from jaxmap.commands.locate import locate
from jaxmap.session import open_index
from jaxmap.store import snapshot

REPO = Path(__file__).resolve().parent.parent
LOCATOR = REPO / "scripts" / "jax_repo_locator.py"
COMMITTED_VERSIONS = ("0.4.38", "0.6.2", "0.10.2")


def run_json(capsys, *argv) -> dict:
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


# -- snapshots ------------------------------------------------------------------------


def test_snapshot_round_trip_answers_like_the_live_index(tmp_path, capsys):
    target = tmp_path / "jax-0.0.1.json.gz"
    assert main(["index", "--root", str(ROOT), "--snapshot", str(target)]) == 0
    assert f"wrote {target}: a snapshot of " in capsys.readouterr().out
    assert target.read_bytes() == snapshot.export(open_index(ROOT))  # deterministic
    with open_index(ROOT) as live, snapshot.load(str(target)) as snap:
        assert snap.jax_version == live.jax_version == "0.0.1"
        assert snap.primitives() == live.primitives()
        found = locate(snap, "jax.lax.psum")
        assert [p.name for p in found.primitives] == ["psum"]
        assert [d.public_paths for d in found.definitions] == [("jax.lax.psum",)]


def test_snapshot_file_is_not_overwritten_without_force(tmp_path, capsys):
    target = tmp_path / "snap.json.gz"
    target.write_bytes(b"mine")
    assert main(["index", "--root", str(ROOT), "--snapshot", str(target)]) != 0
    assert target.read_bytes() == b"mine"
    assert main(["index", "--root", str(ROOT), "--snapshot", str(target), "--force"]) == 0


@pytest.mark.parametrize("version", COMMITTED_VERSIONS)
def test_committed_snapshots_answer_locate(version, capsys):
    document = run_json(capsys, "locate", "psum", "--jax", version)
    [psum] = document["primitives"]
    assert document["jax_version"] == version
    assert {"impl", "abstract_eval", "jvp", "transpose", "batching", "lowering"} <= {
        r["kind"] for r in psum["rules"]}


def test_the_committed_snapshot_of_the_installed_release_is_fresh(installed_index):
    """`locate --jax V` answers as a live index of release V does: the committed
    snapshot equals one written now from the installed jax, when it is that release."""
    version = installed_index.jax_version
    if version not in COMMITTED_VERSIONS:
        pytest.skip(f"no committed snapshot of the installed jax {version}")
    committed = gzip.decompress(Path(snapshot.find(version)).read_bytes())
    assert committed == gzip.decompress(snapshot.export(installed_index)), \
        f"indexes/jax-{version}.json.gz is stale: run scripts/build_snapshots.py"


def test_unknown_version_lists_the_available_ones(capsys):
    assert main(["locate", "psum", "--jax", "9.9.9"]) != 0
    err = capsys.readouterr().err
    assert "no snapshot for jax 9.9.9" in err and "0.4.38" in err


def test_corrupt_snapshot_is_a_clear_error(tmp_path, monkeypatch, capsys):
    (tmp_path / "jax-1.2.3.json.gz").write_bytes(b"not gzip")
    monkeypatch.setenv("JAXMAP_INDEXES", str(tmp_path))
    assert main(["locate", "psum", "--jax", "1.2.3"]) != 0
    err = capsys.readouterr().err
    assert err.startswith("jaxmap: error: cannot read snapshot") and "Traceback" not in err


# -- diff -----------------------------------------------------------------------------


@pytest.fixture
def two_trees(tmp_path):
    """The fixture, and a copy where a primitive was added, one removed, a rule added,
    a rule removed, and a rule retargeted to another function of its file."""
    old, new = tmp_path / "old", tmp_path / "new"
    shutil.copytree(ROOT, old)
    shutil.copytree(ROOT, new)
    lax = new / "jax" / "_src" / "lax" / "lax.py"
    text = lax.read_text()
    text = text.replace("ad.defjvp2(exp_p, _exp_jvp)", "pass")  # exp loses its jvp
    text = text.replace("mlir.register_lowering(sin_p, _sin_lowering)",
                        "mlir.register_lowering(sin_p, _sin_cpu_lowering)")  # retargeted
    text += "\nbrand_new_p = core.Primitive('brand_new')\nbrand_new_p.def_impl(_exp_jvp)\n"
    text += "mlir.register_lowering(sign_p, _sin_lowering)\n"  # sign gains a lowering
    lax.write_text(text)
    (new / "jax" / "_src" / "lax" / "old_convert.py").unlink()  # the second convert goes
    return old, new


def test_diff_between_two_trees(two_trees, capsys):
    old, new = two_trees
    result = run_json(capsys, "diff", str(old), str(new))
    assert result["primitives_added"] == ["brand_new"]
    assert result["primitives_removed"] == ["convert@jax._src.lax.old_convert"]
    changes = {(c["primitive"], c["kind"], c["platform"], c["change"]) for c in result["rules"]}
    assert changes == {("exp", "jvp", None, "removed"), ("sign", "lowering", None, "added"),
                       ("sin", "lowering", None, "retargeted")}



def test_a_registration_added_or_removed_beside_those_kept(tmp_path, capsys):
    """A rule that keeps its registration and gains one in another file is not moved,
    nor one that keeps one and loses another."""
    old, new = tmp_path / "old", tmp_path / "new"
    shutil.copytree(ROOT, old)
    shutil.copytree(ROOT, new)
    header = ("from jax._src.interpreters import ad, mlir\n"
              "from jax._src.lax.lax import exp_p, sin_p\n"
              "def _again(*args, **kwargs):\n  return args\n")
    (old / "jax" / "_src" / "lax" / "more_rules.py").write_text(
        header + "ad.defjvp2(exp_p, _again)\n")  # exp's jvp registered twice, then once
    (new / "jax" / "_src" / "lax" / "more_rules.py").write_text(
        header + "mlir.register_lowering(sin_p, _again)\n")  # sin's lowering: once, then twice
    result = run_json(capsys, "diff", str(old), str(new))
    changes = {(c["primitive"], c["kind"], c["change"]) for c in result["rules"]}
    assert changes == {("exp", "jvp", "registration-removed"),
                       ("sin", "lowering", "registration-added")}
    assert main(["diff", str(old), str(new)]) == 0
    out = capsys.readouterr().out
    assert "rules with a registration added (1):" in out and "rules moved (0): -" in out


def test_diff_leaves_out_what_tests_and_docs_define(tmp_path, capsys):
    """A checkout's tests and docs define primitives and rules of their own; a release
    holds none of them, so they are counted apart, not reported as added."""
    old, new = tmp_path / "old", tmp_path / "new"
    shutil.copytree(ROOT, old)
    shutil.copytree(ROOT, new)
    for place in ("tests/custom_test.py", "docs/example.py"):
        (new / place).parent.mkdir(exist_ok=True)
        (new / place).write_text(
            "from jax._src import core\nfrom jax._src.interpreters import mlir\n"
            "from jax._src.lax.lax import sin_p\n"
            "demo_p = core.Primitive('demo')\n"
            "mlir.register_lowering(sin_p, lambda ctx, x: [x], platform='tpu')\n")
    result = run_json(capsys, "diff", str(old), str(new))
    assert result["primitives_added"] == [] and result["rules"] == []
    assert result["left_out"] == {"primitives": 2, "rules": 2}
    assert main(["diff", str(old), str(new)]) == 0
    assert "left out: 2 primitives and 2 rules" in capsys.readouterr().out


def test_diff_between_versions_reports_real_changes(capsys):
    result = run_json(capsys, "diff", "0.4.38", "0.10.2")
    assert result["old"] == "jax 0.4.38" and result["new"] == "jax 0.10.2"
    assert "SearchSorted" in result["primitives_added"]  # hijax arrived after 0.4.38
    assert {"old": "pjit", "new": "jit"} in result["primitives_renamed"]
    assert "pjit" not in result["primitives_removed"] and "jit" not in result["primitives_added"]
    assert not set(result["primitives_added"]) & set(result["primitives_removed"])


def test_diff_json_pages_its_rule_changes(capsys):
    whole = run_json(capsys, "diff", "0.4.38", "0.10.2")
    page = run_json(capsys, "diff", "0.4.38", "0.10.2", "--limit", "3", "--offset", "2",
                    "--field", "primitive", "--field", "change")
    assert page["rules"] == [{"primitive": r["primitive"], "change": r["change"]}
                             for r in whole["rules"][2:5]]
    assert page["total"] == len(whole["rules"]) > 5 and page["next_offset"] == 5
    assert page["primitives_added"] == whole["primitives_added"]  # only rules are paged


def test_diff_of_a_version_with_itself_is_empty(capsys):
    result = run_json(capsys, "diff", "0.6.2", "0.6.2")
    assert result["primitives_added"] == result["primitives_removed"] == result["rules"] == []


# -- scripts/jax_repo_locator.py ------------------------------------------------------


def locator(*args: str, package: bool) -> subprocess.CompletedProcess:
    """Run the script; without the package: an isolated Python with no site-packages."""
    flags = [] if package else ["-I", "-S"]
    return subprocess.run([sys.executable, *flags, str(LOCATOR), *args], capture_output=True,
                          text=True, cwd=REPO)


@pytest.mark.parametrize("name", ["psum", "lax.psum", "jax.lax.psum_p", "scatter-add", "cumsum",
                                  "closed_call"])
def test_locator_gives_the_same_answers_with_and_without_the_package(name):
    without = locator(name, "--jax", "0.10.2", "--json", package=False)
    with_package = locator(name, "--jax", "0.10.2", "--json", package=True)
    assert without.returncode == with_package.returncode == 0, without.stderr + with_package.stderr
    assert json.loads(without.stdout) == json.loads(with_package.stdout)
    assert json.loads(without.stdout)["primitives"]


def test_locator_reads_trace_methods_as_jaxmap_does():
    """Its copy of the Trace classes' kinds is jaxmap's (`trace (jvp)`, `stands_for`)."""
    import importlib.util

    from jaxmap.knowledge.traces import TRACE_CLASS_KINDS

    spec = importlib.util.spec_from_file_location("locator", LOCATOR)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.TRACE_CLASS_KINDS == {c: k.value for c, k in TRACE_CLASS_KINDS.items()}
    text = locator("closed_call", "--jax", "0.10.2", package=False).stdout
    assert "trace (jvp)" in text


def test_locator_without_the_package_defaults_to_the_newest_snapshot():
    result = locator("psum", package=False)
    assert result.returncode == 0
    assert result.stdout.startswith("primitive psum\n  defined    jax/_src/lax/parallel.py:")


def test_locator_errors_are_one_line():
    missing = locator("psumm", package=False)
    assert missing.returncode == 1 and "did you mean: psum" in missing.stderr
    rooted = locator("psum", "--root", str(ROOT), package=False)
    assert rooted.returncode == 2 and rooted.stderr.count("\n") == 1
    assert "needs the jaxmap package" in rooted.stderr


def test_locator_with_the_package_is_jaxmap_locate(tmp_path):
    env_cache = {"JAXMAP_CACHE_DIR": str(tmp_path)}
    import os

    result = subprocess.run([sys.executable, str(LOCATOR), "psum", "--root", str(ROOT), "--json"],
                            capture_output=True, text=True, env={**os.environ, **env_cache})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["root"] == str(ROOT.resolve())


def test_diff_keeps_primitives_that_share_a_name_and_module(tmp_path, capsys):
    old, new = tmp_path / "old", tmp_path / "new"
    source = ("from jax._src import core\n"
              "a_p = core.Primitive('same')\nb_p = core.Primitive('same')\n"
              "c_p = core.Primitive('same')\n")
    for root in (old, new):
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "__init__.py").write_text("")
        (root / "pkg" / "m.py").write_text(source)
    (new / "pkg" / "m.py").write_text(source + "b_p.def_impl(lambda x: x)\n")
    result = run_json(capsys, "diff", str(old), str(new))
    assert result["primitives_added"] == result["primitives_removed"] == []
    [change] = result["rules"]
    assert (change["primitive"], change["kind"], change["change"]) == (
        "same@pkg.m:3", "impl", "added")


def test_diff_compares_expanded_platforms(tmp_path, capsys):
    """A release that registers cuda and rocm one by one, where the older one said
    platform='gpu', removes no lowering; dropping rocm does."""
    old, new = tmp_path / "old", tmp_path / "new"
    shutil.copytree(ROOT, old)
    shutil.copytree(ROOT, new)
    lax = new / "jax" / "_src" / "lax" / "lax.py"
    lax.write_text(lax.read_text().replace(
        "mlir.register_lowering(exp_p, _exp_gpu_lowering, platform='gpu')",
        "for _platform in ('cuda', 'rocm'):\n"
        "  mlir.register_lowering(exp_p, _exp_gpu_lowering, platform=_platform)"))
    result = run_json(capsys, "diff", str(old), str(new))
    assert [c for c in result["rules"] if c["primitive"] == "exp"] == []
    lax.write_text(lax.read_text().replace("('cuda', 'rocm')", "('cuda',)"))
    result = run_json(capsys, "diff", str(old), str(new))
    assert [(c["kind"], c["platform"], c["change"]) for c in result["rules"]
            if c["primitive"] == "exp"] == [("lowering", "rocm", "removed")]


def test_diff_text_keeps_its_columns_for_long_names():
    from jaxmap.commands.diff import IndexDiff, RuleChange
    from jaxmap.render.text import index_diff

    long_name = "ragged_paged_attention_with_a_long_name"
    rules = (RuleChange("exp", "jvp", None, "removed", ("a.py:1 (f)",), ()),
             RuleChange(long_name, "pallas_block_spec_push", "mosaic_gpu", "added", (),
                        ("b.py:2 (g)",)))
    lines = index_diff(IndexDiff("old", "new", (), (), rules, (0, 0))).splitlines()
    places = [line.index(place) for line in lines for place in ("a.py:1", "b.py:2")
              if place in line]
    assert len(places) == 2 and places[0] == places[1]


def test_diff_pairs_a_renamed_primitive_by_its_own_rule_functions(tmp_path, capsys):
    """frob -> frob2 keeps its own rule functions; widget -> widget_general extends
    its name; `other` shares only a helper that four primitives use, and gadget has
    two names that extend it: none of them tells anything."""
    helpers = "from jax._src import core\ndef _generic(x): return x\n" + "".join(
        f"h{i}_p = core.Primitive('h{i}')\nh{i}_p.def_impl(_generic)\n" for i in range(3))
    rules = "def _frob_impl(x): return x\ndef _frob_abstract(x): return x\n" \
            "def _widget_impl(x): return x\ndef _widget_general_impl(x): return x\n"
    old, new = tmp_path / "old", tmp_path / "new"
    for root, body in ((old, "frob_p = core.Primitive('frob')\n"
                             "frob_p.def_impl(_frob_impl)\n"
                             "frob_p.def_abstract_eval(_frob_abstract)\n"
                             "widget_p = core.Primitive('widget')\n"
                             "widget_p.def_impl(_widget_impl)\n"
                             "gadget_p = core.Primitive('gadget')\n"),
                       (new, "frob_p = core.Primitive('frob2')\n"
                             "frob_p.def_impl(_frob_impl)\n"
                             "frob_p.def_abstract_eval(_frob_abstract)\n"
                             "other_p = core.Primitive('other')\n"
                             "other_p.def_impl(_generic)\n"
                             "widget_p = core.Primitive('widget_general')\n"
                             "widget_p.def_impl(_widget_general_impl)\n"
                             "start_p = core.Primitive('gadget_start')\n"
                             "done_p = core.Primitive('gadget_done')\n")):
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "__init__.py").write_text("")
        (root / "pkg" / "m.py").write_text(helpers + rules + body)
    result = run_json(capsys, "diff", str(old), str(new))
    assert result["primitives_renamed"] == [{"old": "frob", "new": "frob2"},
                                            {"old": "widget", "new": "widget_general"}]
    assert result["primitives_added"] == ["gadget_done", "gadget_start", "other"]
    assert result["primitives_removed"] == ["gadget"]
    assert [(c["primitive"], c["kind"], c["change"]) for c in result["rules"]] == [
        ("widget_general", "impl", "retargeted")]
    assert main(["diff", str(old), str(new)]) == 0
    assert "primitives renamed (2): frob -> frob2, widget -> widget_general" \
        in capsys.readouterr().out


def test_diff_pairs_a_renamed_primitive_by_the_variable_holding_it(tmp_path, capsys):
    """my_neg -> my_negate, held by `neg_p` on both sides, its rules lambdas: no rule
    function of its own tells it, the variable does."""
    old, new = tmp_path / "old", tmp_path / "new"
    for root, name in ((old, "my_neg"), (new, "my_negate")):
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "__init__.py").write_text("")
        (root / "pkg" / "m.py").write_text(
            f"from jax._src import core\nneg_p = core.Primitive('{name}')\n"
            "neg_p.def_impl(lambda x: -x)\nneg_p.def_abstract_eval(lambda x: x)\n")
    result = run_json(capsys, "diff", str(old), str(new))
    assert result["primitives_renamed"] == [{"old": "my_neg", "new": "my_negate"}]
    assert result["primitives_added"] == result["primitives_removed"] == []


def test_diff_retargets_a_rule_registered_another_way_without_a_function_of_its_own(
        tmp_path, capsys):
    """`batching.defvectorized(p)` for `primitive_batchers[p] = lambda ...` on the same
    line names no function on either side: how it registers tells them apart."""
    head = ("from jax._src import core\nfrom jax.interpreters import batching\n"
            "softclip_p = core.Primitive('softclip')\n")
    for side, rule in (("old", "batching.defvectorized(softclip_p)\n"),
                       ("new", "batching.primitive_batchers[softclip_p] = lambda a, d: (a, d)\n")):
        (tmp_path / side / "pkg").mkdir(parents=True)
        (tmp_path / side / "pkg" / "__init__.py").write_text(head + rule)
    result = run_json(capsys, "diff", str(tmp_path / "old"), str(tmp_path / "new"))
    assert [(r["primitive"], r["kind"], r["change"]) for r in result["rules"]] == [
        ("softclip", "batching", "retargeted")]


def test_diff_tells_a_rule_moved_to_another_file_from_one_retargeted_in_its_file(
        tmp_path, capsys):
    """frob's impl keeps its registration but its function is renamed: retargeted, not
    moved; its abstract eval is registered from another file: moved."""
    head = "from jax._src import core\n"
    old = head + ("def _frob_impl(x): return x\ndef _frob_abstract(x): return x\n"
                  "frob_p = core.Primitive('frob')\nfrob_p.def_impl(_frob_impl)\n"
                  "frob_p.def_abstract_eval(_frob_abstract)\n")
    new = head + ("def _frob_impl_v2(x): return x\n"
                  "frob_p = core.Primitive('frob')\nfrob_p.def_impl(_frob_impl_v2)\n")
    rules = "from pkg.m import frob_p\ndef _frob_abstract(x): return x\n" \
            "frob_p.def_abstract_eval(_frob_abstract)\n"
    for side, files in (("old", {"m.py": old}), ("new", {"m.py": new, "rules.py": rules})):
        (tmp_path / side / "pkg").mkdir(parents=True)
        (tmp_path / side / "pkg" / "__init__.py").write_text("")
        for name, text in files.items():
            (tmp_path / side / "pkg" / name).write_text(text)
    result = run_json(capsys, "diff", str(tmp_path / "old"), str(tmp_path / "new"))
    assert [(r["primitive"], r["kind"], r["change"], r["new"]) for r in result["rules"]] == [
        ("frob", "abstract_eval", "moved", ["pkg/rules.py:3 (_frob_abstract)"]),
        ("frob", "impl", "retargeted", ["pkg/m.py:4 (_frob_impl_v2)"])]
    assert main(["diff", str(tmp_path / "old"), str(tmp_path / "new")]) == 0
    out = capsys.readouterr().out
    assert "rules moved (1):" in out and "rules retargeted (1):" in out
    assert "pkg/m.py:5 (_frob_impl) -> pkg/m.py:4 (_frob_impl_v2)" in out


def test_diff_tells_a_helper_changed_from_a_rule_retargeted(tmp_path, capsys):
    """plus's batching is built by `batching.defbroadcasting` on both sides, reached
    through `standard_binop` before and `binop` after: the same rule through another
    helper, not retargeted; minus's helper switches it to `batching.defvectorized`: its
    rule function is another, retargeted."""
    head = ("from jax._src import core\nfrom jax.interpreters import batching\n"
            "def {0}(name, vectorized=False):\n  prim = core.Primitive(name)\n"
            "  if vectorized:\n    batching.defvectorized(prim)\n"
            "  else:\n    batching.defbroadcasting(prim)\n  return prim\n")
    sides = {"old": head.format("standard_binop") + "plus_p = standard_binop('plus')\n"
                                                    "minus_p = standard_binop('minus')\n",
             "new": head.format("binop") + "plus_p = binop('plus')\n"
                                           "minus_p = binop('minus', vectorized=True)\n"}
    for side, text in sides.items():
        (tmp_path / side / "pkg").mkdir(parents=True)
        (tmp_path / side / "pkg" / "__init__.py").write_text(text)
    old, new = str(tmp_path / "old"), str(tmp_path / "new")
    result = run_json(capsys, "diff", old, new)
    assert [(r["primitive"], r["kind"], r["change"], r["old"], r["new"])
            for r in result["rules"]] == [
        ("minus", "batching", "retargeted",
         ["pkg/__init__.py:11 (via standard_binop > batching.defbroadcasting)"],
         ["pkg/__init__.py:11 (via binop > batching.defvectorized)"]),
        ("plus", "batching", "helper-changed",
         ["pkg/__init__.py:10 (via standard_binop > batching.defbroadcasting)"],
         ["pkg/__init__.py:10 (via binop > batching.defbroadcasting)"])]
    assert main(["diff", old, new]) == 0
    out = capsys.readouterr().out
    assert "rules retargeted (1):\n  minus " in out
    assert "rules registered through another helper (1):\n  plus " in out


_TRACE_CORE = TRACE_CORE + """\
class EvalTrace(Trace):
  def process_thing(self, prim, args, params):
    return args
"""
_THING = """
from jax._src import core

class ThingPrimitive(core.Primitive):
  def bind_with_trace(self, trace, args, params):
    return trace.process_thing(self, args, params)

thing_p = ThingPrimitive('thing')

def _thing_jvp(trace, prim, args, params):
  return args
"""


def _trace_tree(root, files: dict[str, str]) -> str:
    tree = {"jax/__init__.py": "", "jax/_src/__init__.py": "", "jax/_src/core.py": _TRACE_CORE,
            "jax/_src/interpreters/__init__.py": "", **files}
    for path, text in tree.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return str(root)


def test_diff_compares_trace_rules_one_trace_class_at_a_time(tmp_path, capsys):
    """thing's trace rules: EvalTrace's method stays (not listed), BatchTrace's goes,
    RematTrace's comes, and JVPTrace's assignment moves to another file: one short row
    each, with the class, not one row listing every class's method on both sides."""
    batch = ("from jax._src.core import Trace\nclass BatchTrace(Trace):\n"
             "  def process_thing(self, prim, args, params):\n    return args\n")
    remat = batch.replace("BatchTrace", "RematTrace")
    jvp = "from jax._src.interpreters import ad\n"
    ad = "from jax._src.core import Trace\nclass JVPTrace(Trace):\n  pass\n"
    old = _trace_tree(tmp_path / "old", {
        "jax/_src/interpreters/ad.py": ad, "jax/_src/interpreters/batching.py": batch,
        "jax/_src/thing.py": _THING.replace("from jax._src import core\n", "from jax._src "
                                            "import core\n" + jvp)
        + "ad.JVPTrace.process_thing = _thing_jvp\n"})
    new = _trace_tree(tmp_path / "new", {
        "jax/_src/interpreters/ad.py": ad, "jax/_src/interpreters/remat.py": remat,
        "jax/_src/thing.py": _THING,
        "jax/_src/thing_rules.py": "from jax._src.thing import _thing_jvp\n" + jvp
        + "ad.JVPTrace.process_thing = _thing_jvp\n"})
    result = run_json(capsys, "diff", old, new)
    assert [(r["trace"], r["change"], r["old"], r["new"]) for r in result["rules"]] == [
        ("BatchTrace", "removed", ["jax/_src/interpreters/batching.py:3 (process_thing)"], []),
        ("JVPTrace", "moved", ["jax/_src/thing.py:13 (_thing_jvp)"],
         ["jax/_src/thing_rules.py:3 (_thing_jvp)"]),
        ("RematTrace", "added", [], ["jax/_src/interpreters/remat.py:3 (process_thing)"])]
    assert main(["diff", old, new]) == 0
    rows = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    assert ("thing trace (JVPTrace) jax/_src/thing.py:13 (_thing_jvp) -> "
            "jax/_src/thing_rules.py:3 (_thing_jvp)") in rows
    assert not any("EvalTrace" in row for row in rows)

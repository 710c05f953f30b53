"""binds, callers, calls, coverage, graph and index's call counts, on the minijax
fixture through the CLI (`main(argv) -> int`)."""

from __future__ import annotations

import json
import re

from markers import ROOT, mark
from test_cli import assert_one_line_error, run, run_json

from jaxmap.cli import main
from jaxmap.flow.calls import MAX_CERTAIN

CALL_KEYS = {"root", "query", "direction", "targets", "count", "unresolved", "others",
             "others_why", "found", "registrations", "read_as", "total", "offset", "truncated",
             "next_offset", "aliases", "also_named", "unparsed"}
FOUND_KEYS = {"name", "kind", "file", "line", "depth", "public", "chain", "call_line",
              "call_file", "through", "handed", "dispatch", "steps", "trace_time",
              "left_out"}


def test_binds_lists_the_public_api_first_with_chains(capsys):
    document = run_json(capsys, "binds", "psum")
    assert CALL_KEYS == document.keys() and document["targets"] == ["psum_p.bind"]
    assert all(FOUND_KEYS == f.keys() for f in document["found"])
    psum = next(f for f in document["found"] if f["name"] == "jax.lax.psum")
    assert psum["chain"] == ["jax.lax.psum", "psum_p.bind"] and psum["steps"] == ["binds"]
    pmean = next(f for f in document["found"] if f["name"] == "jax.lax.pmean")
    assert pmean["chain"] == ["jax.lax.pmean", "jax._src.lax.parallel._pmean",
                              "jax._src.lax.parallel._psum_halved", "psum_p.bind"]
    assert pmean["steps"] == ["calls", "calls", "binds"]
    assert all(f["public"] and f["trace_time"] for f in document["found"])
    everything = run_json(capsys, "binds", "psum", "--all")
    assert document["count"] + document["others"] == everything["count"]
    assert sum(document["others_why"].values()) == document["others"]
    publics = [f["public"] for f in everything["found"]]
    assert publics == sorted(publics, reverse=True)


def test_binds_public_without_all_is_a_usage_error(capsys):
    """The default answer lists public functions only: --public narrows --all's."""
    code, out, err = run(capsys, "binds", "psum_p", "--public")
    assert_one_line_error(code, out, err)
    assert code == 2 and "add --all" in err


def test_binds_public_and_depth(capsys):
    public = run_json(capsys, "binds", "psum_p", "--all", "--public")["found"]
    assert {f["name"] for f in public} == {"jax.lax.psum", "jax.lax.pmean"}
    direct = run_json(capsys, "binds", "psum", "--all", "--depth", "1")["found"]
    assert {f["depth"] for f in direct} == {1}
    assert "jax.lax.pmean" not in {f["name"] for f in direct}


def test_every_depth_counts_the_steps_of_a_chain_a_bind_one(capsys):
    """binds, callers, calls and path read --depth alike: 1 is the direct relation."""
    binds = run_json(capsys, "binds", "psum", "--all")["found"]
    calls = run_json(capsys, "calls", "lax.pmean", "--depth", "3")["found"]
    callers = run_json(capsys, "callers", "jax._src.lax.parallel._psum_halved")["found"]
    for found in binds + calls + callers:
        assert found["depth"] == len(found["chain"]) - 1, found
    psum = next(f for f in binds if f["name"] == "jax.lax.psum")
    assert psum["depth"] == 1 == next(f for f in callers)["depth"]
    assert {f["name"] for f in run_json(capsys, "binds", "psum", "--all", "--depth", "2")[
        "found"]} == {f["name"] for f in binds if f["depth"] <= 2}
    for command in (["binds", "psum"], ["callers", "lax.psum"], ["calls", "lax.psum"]):
        code, out, err = run(capsys, *command, "--depth", "0")
        assert code == 2 and "--depth" in err
    assert main(["path", "lax.pmean", "psum_p", "--depth", "2", "--root", str(ROOT)]) == 1
    assert "within 2 steps" in capsys.readouterr().err
    assert main(["path", "lax.pmean", "psum_p", "--depth", "3", "--root", str(ROOT)]) == 0


def test_callers_and_calls_follow_helpers(capsys):
    callers = run_json(capsys, "callers", "jax._src.lax.parallel._psum_halved", "--depth", "2")
    assert [(f["name"], f["depth"]) for f in callers["found"]] == \
        [("jax._src.lax.parallel._pmean", 1), ("jax.lax.pmean", 2)]
    calls = run_json(capsys, "calls", "lax.pmean", "--depth", "3")["found"]
    assert ("psum_p", "primitive") in {(f["name"], f["kind"]) for f in calls}


def test_tests_reach_primitives_through_every_idiom(capsys):
    run(capsys, "index")  # the call graph, which tests and reaches come from
    (mul,) = run_json(capsys, "locate", "mul_p")["primitives"]
    found = {(t["name"], t["file"], t["line"]) for t in mul["tests"]}
    for name, key in [("test_nested_def", "test-mul-nested"), ("test_lambda", "test-mul-lambda"),
                      ("test_partial", "test-mul-partial"),
                      ("test_own_helper", "test-mul-helper"),
                      ("test_op_named_in_the_decorator", "test-mul-decorator")]:
        assert (name, *mark(key)) in found


def test_locate_lists_what_a_function_reaches(capsys):
    run(capsys, "index")  # the call graph, which tests and reaches come from
    (pmean,) = run_json(capsys, "locate", "lax.pmean")["definitions"]
    assert pmean["reaches"][0]["primitive"] == "psum_p"
    assert pmean["reaches"][0]["chain"][-1] == "psum_p.bind"
    code, out, _ = run(capsys, "locate", "lax.pmean")
    assert code == 0 and "\n  reaches  psum_p" in out


def test_callers_name_unresolved_calls_that_may_be_to_it(capsys, tmp_path):
    (tmp_path / "m.py").write_text("def target(x):\n  return x\n\n"
                                   "def user(obj):\n  return obj.target(1)\n")
    code = run_tree(capsys, tmp_path, "callers", "target", "--json")
    found = json.loads(code)["found"]
    assert [(f["name"], f["kind"], f["chain"]) for f in found] == \
        [("obj.target", "unresolved", ["m.user", "obj.target"])]
    assert json.loads(code)["unresolved"] == 1
    heading = run_tree(capsys, tmp_path, "callers", "target").splitlines()[0]
    assert heading == "no callers of m.target, and 1 call the index could not name"


def test_binds_and_calls_count_the_calls_the_index_could_not_name(capsys, tmp_path):
    (tmp_path / "m.py").write_text(
        "from jax._src import core\np_p = core.Primitive('p')\n"
        "def api(x):\n  return p_p.bind(x)\n"
        "def user(obj):\n  return obj.api(1)\n")
    binds = json.loads(run_tree(capsys, tmp_path, "binds", "p", "--json"))
    assert binds["unresolved"] == 1  # obj.api may be one more caller of api
    assert run_tree(capsys, tmp_path, "binds", "p").splitlines()[0].endswith(
        ", and 1 call the index could not name that may call a function reaching it "
        "(their text ends with its name)")
    calls = json.loads(run_tree(capsys, tmp_path, "calls", "user", "--json"))
    assert calls["unresolved"] == 1


_RULES = """\
import functools
from jax._src import core
from jax._src.interpreters import batching
p_p = core.Primitive('p')
q_p = core.Primitive('q')

def _p_batch_rule(args, dims):
  return args, dims

def _shared_rule(which, args, dims):
  return args, dims

def helper(x):
  return x

def target(x):
  y = x + 1
  return helper(y)

batching.primitive_batchers[p_p] = _p_batch_rule
_q_batch_rule = functools.partial(_shared_rule, 1)
batching.primitive_batchers[q_p] = _q_batch_rule
"""


def test_callers_give_the_line_of_each_call(capsys, tmp_path):
    (tmp_path / "m.py").write_text(_RULES)
    [found] = json.loads(run_tree(capsys, tmp_path, "callers", "helper", "--json"))["found"]
    assert (found["name"], found["line"], found["call_line"]) == ("m.target", 16, 18)
    assert "  m.target  m.py:18  [m.target -> m.helper]" in \
        run_tree(capsys, tmp_path, "callers", "helper").splitlines()


def test_calls_and_binds_give_the_line_of_each_call_too(capsys, tmp_path):
    (tmp_path / "m.py").write_text(_RULES + "def binder(x):\n  return helper(p_p.bind(x))\n")
    [found] = json.loads(run_tree(capsys, tmp_path, "calls", "target", "--json"))["found"]
    # Where the callee is defined, and where the caller calls it.
    assert (found["name"], found["line"], found["call_line"], found["call_file"]) == \
        ("m.helper", 13, 18, "m.py")
    text = run_tree(capsys, tmp_path, "calls", "target").splitlines()
    assert text[0] == "1 callee of m.target, at its first call"
    assert "  m.helper  m.py:18  (defined at line 13)  [m.target -> m.helper]" in text
    [found] = json.loads(run_tree(capsys, tmp_path, "binds", "p", "--json"))["found"]
    assert (found["name"], found["call_line"]) == ("m.binder", 24)  # its bind


def test_calls_two_levels_down_place_each_call_in_its_callers_file(capsys, tmp_path):
    (tmp_path / "lib.py").write_text("def leaf(x):\n  return x\n")
    (tmp_path / "mid.py").write_text("import lib\n\ndef mid(x):\n  return lib.leaf(x)\n")
    (tmp_path / "m.py").write_text("import mid\n\ndef top(x):\n  return mid.mid(x)\n")
    found = json.loads(run_tree(capsys, tmp_path, "calls", "top", "--depth", "2",
                                "--json"))["found"]
    leaf = next(f for f in found if f["name"] == "lib.leaf")
    assert (leaf["file"], leaf["line"], leaf["call_file"], leaf["call_line"]) == \
        ("lib.py", 1, "mid.py", 4)
    assert "  lib.leaf  mid.py:4  (defined at lib.py:1)  [m.top -> mid.mid -> lib.leaf]" in \
        run_tree(capsys, tmp_path, "calls", "top", "--depth", "2").splitlines()


def test_callers_of_a_rule_function_name_the_registrations_that_run_it(capsys, tmp_path):
    (tmp_path / "m.py").write_text(_RULES)
    document = json.loads(run_tree(capsys, tmp_path, "callers", "_p_batch_rule", "--json"))
    assert document["found"] == []
    assert document["registrations"] == [{"function": "m._p_batch_rule", "kind": "batching",
                                          "primitive": "p", "file": "m.py", "line": 20,
                                          "platforms": []}]
    # A partial of another function, registered by its name: the statement names it.
    text = run_tree(capsys, tmp_path, "callers", "_q_batch_rule")
    assert "runs as  the batching rule of q, registered at m.py:22" in text


def test_callers_of_a_lowering_say_the_platforms_of_each_registration(capsys, tmp_path):
    """A default lowering and one a loop registers for two platforms: two registrations,
    each with its platforms, not the same line twice."""
    (tmp_path / "m.py").write_text(
        "from functools import partial\nfrom jax._src import core\n"
        "from jax._src.interpreters import mlir\np_p = core.Primitive('p')\n\n"
        "def _lower(ctx, x, platform=None):\n  return [x]\n\n"
        "mlir.register_lowering(p_p, _lower)\n"
        "for platform in ['cpu', 'tpu']:\n"
        "  mlir.register_lowering(p_p, partial(_lower, platform=platform),\n"
        "                         platform=platform)\n")
    document = json.loads(run_tree(capsys, tmp_path, "callers", "_lower", "--json"))
    assert [(r["line"], r["platforms"]) for r in document["registrations"]] == \
        [(9, []), (11, ["cpu", "tpu"])]
    text = run_tree(capsys, tmp_path, "callers", "_lower").splitlines()
    assert "  runs as  the lowering rule of p (default: any platform without its own), " \
        "registered at m.py:9  (m._lower)" in text
    assert "           the lowering rule of p for cpu, tpu, registered at m.py:11  (m._lower)" \
        in text


def test_callers_of_any_operands_jvp_name_the_defjvp_that_runs_it(capsys, tmp_path):
    (tmp_path / "m.py").write_text(
        "from jax._src import core\nfrom jax._src.interpreters import ad\n"
        "p_p = core.Primitive('p')\n\ndef _jvp_x(g, x, y):\n  return g\n\n"
        "def _jvp_y(g, x, y):\n  return g\n\nad.defjvp(p_p, _jvp_x, None, _jvp_y)\n")
    for function in ("_jvp_x", "_jvp_y"):
        document = json.loads(run_tree(capsys, tmp_path, "callers", function, "--json"))
        assert document["registrations"] == [{"function": f"m.{function}", "kind": "jvp",
                                              "primitive": "p", "file": "m.py", "line": 11,
                                              "platforms": []}]


def test_a_primitive_variable_does_not_run_as_the_rules_registered_on_it(capsys, tmp_path):
    """`batching.primitive_batchers[p_p] = ...` names p_p, but p_p runs as no rule."""
    (tmp_path / "m.py").write_text(_RULES)
    code = main(["callers", "p_p", "--json", "--root", str(tmp_path)])
    out, err = capsys.readouterr()  # no registration of its own: it is only bound
    assert_one_line_error(code, out, err)
    assert "p_p is a primitive, which is bound, not called: `jaxmap binds p_p`" in err


def test_what_a_primitive_calls_points_at_binds(capsys, tmp_path):
    (tmp_path / "m.py").write_text(_RULES)
    code = main(["calls", "p_p", "--root", str(tmp_path)])
    out, err = capsys.readouterr()
    assert_one_line_error(code, out, err)
    assert "`jaxmap binds p_p` lists what binds it" in err


def run_tree(capsys, root, *argv) -> str:
    from jaxmap.cli import main

    assert main([*argv, "--root", str(root)]) == 0
    return capsys.readouterr().out


def test_coverage_totals_agree_with_primitives(capsys):
    prims = run_json(capsys, "primitives")["primitives"]
    document = run_json(capsys, "coverage")
    assert document["primitives"] == len(prims)
    for kind in ("impl", "jvp", "transpose", "batching", "lowering"):
        assert document["totals"][kind] == run_json(
            capsys, "primitives", "--has", kind)["total"] == sum(
            1 for p in prims if any(kind in (r["kind"], r["stands_for"]) for r in p["rules"]))
    cpu = sum(1 for p in prims if any(r["kind"] == "lowering" and "cpu" in r["platforms"]
                                      for r in p["rules"]))
    assert document["totals"].get("lowering:cpu", 0) == cpu
    missing = run_json(capsys, "coverage", "--missing", "jvp")
    assert all(not row["rules"].get("jvp") for row in missing["rows"])
    code, out, _ = run(capsys, "coverage", "--kind", "jvp", "--format", "csv")
    assert code == 0 and out.splitlines()[0] == "primitive,module,jvp,by_trace"


def test_graph_formats_and_output_file(capsys, tmp_path):
    document = run_json(capsys, "graph", "psum", "--depth", "2")
    kinds = {e["kind"] for e in document["edges"]}
    assert {"defines", "has_rule", "implemented_by", "binds", "calls"} <= kinds
    code, out, _ = run(capsys, "graph", "psum", "--format", "mermaid")
    assert code == 0 and out.startswith("flowchart LR") and "-->|binds|" in out
    [roots] = [line.split()[1] for line in out.splitlines() if line.startswith("  class ")]
    nodes = {line.split("[")[0].strip(): line for line in out.splitlines() if '["' in line}
    assert all(re.search(r"[:.]psum\b", nodes[root]) for root in roots.split(","))  # asked
    code, out, _ = run(capsys, "graph", "psum", "--format", "dot")
    assert code == 0 and out.startswith("digraph") and '[label="has_rule"]' in out
    target = tmp_path / "psum.graphml"
    code, _, _ = run(capsys, "graph", "psum", "--format", "graphml", "-o", str(target))
    assert code == 0 and "<graphml" in target.read_text()
    refused = run(capsys, "graph", "psum", "-o", str(target))  # no --force
    assert_one_line_error(*refused)
    assert refused == run(capsys, "repo-map", "-o", str(target))  # as every -o says it
    inside_a_file = run(capsys, "graph", "psum", "-o", str(target / "in_a_file.txt"))
    assert_one_line_error(*inside_a_file)
    assert "give a directory" in inside_a_file[2]
    target.write_text("")
    code, _, err = run(capsys, "graph", "psum", "-o", str(target), "--force")
    assert code == 0 and "<graphml" in target.read_text()  # the suffix's format
    assert err.startswith(f"wrote {target} (graphml: ")
    plain = tmp_path / "psum.txt"
    code, _, _ = run(capsys, "graph", "psum", "-o", str(plain))
    assert code == 0 and " -has_rule-> rule:psum:" in plain.read_text()  # text by default


def test_index_counts_call_edges(capsys):
    calls = run_json(capsys, "index")["calls"]
    assert calls["total"] == sum(calls[status] for status in (
        "resolved", "through", "handed", "external", "unresolved"))
    assert 0 <= calls["unresolved_share"] <= 1


def test_unknown_names_are_one_line_errors(capsys):
    for argv in (["binds", "no_such_prim"], ["callers", "no_such_function"],
                 ["calls", "no_such_function"], ["graph", "no_such_thing"],
                 ["coverage", "--kind", "nope"]):
        assert_one_line_error(*run(capsys, *argv))


def test_coverage_keeps_the_column_of_a_kind_it_filters_on(capsys):
    document = run_json(capsys, "coverage", "--kind", "jvp", "--kind", "transpose",
                        "--missing", "transpose", "--format", "json")
    assert document["kinds"] == ["jvp", "transpose"]
    assert document["rows"] and document["totals"]["transpose"] == 0
    # each row counts those columns only, as the table shows them
    assert all(row["rules"].keys() <= {"jvp", "transpose"} for row in document["rows"])
    assert any(row["rules"] for row in document["rows"])


def test_binds_finds_a_primitive_by_its_alias(tmp_path, capsys):
    """`call_p = closed_call_p = eval_jaxpr_p`: every command that takes a primitive's
    name reads it by the one rule `locate` uses."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "m.py").write_text(
        "from jax._src import core\n"
        "eval_jaxpr_p = core.Primitive('eval_jaxpr')\n"
        "call_p = closed_call_p = eval_jaxpr_p\n"
        "def run(x):\n  return call_p.bind(x)\n")
    assert main(["binds", "closed_call_p", "--root", str(tmp_path), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [f["name"] for f in document["found"]] == ["pkg.m.run"]


def test_a_long_list_of_modules_is_asked_for_in_slices_without_repeats(installed_index):
    """More modules than SQLite takes parameters at once: each import edge once, whether
    its two ends fall in one slice or in two."""
    edges = installed_index.imports()
    module, target = edges[0]
    others = [f"not.a.module{i}" for i in range(1500)]
    found = installed_index.imports_touching([module, *others, target])
    assert len(found) == len(set(found))
    assert set(found) == set(installed_index.imports_touching([module, target]))


def test_central_modules_rank_the_most_imported_first(capsys):
    ranked = run_json(capsys, "graph", "--central", "3")
    assert [row["module"] for row in ranked][0] == "jax._src.core"  # the most imported
    scores = [row["score"] for row in ranked]
    assert len(ranked) == 3 and scores == sorted(scores, reverse=True)
    code, out, _ = run(capsys, "graph", "--central", "3")
    assert code == 0 and out.split()[1] == "jax._src.core"
    both = run(capsys, "graph", "psum", "--central", "3")  # NAME would be ignored
    assert_one_line_error(*both)
    assert both[0] == 2 and "without NAME" in both[2]


def test_callers_list_top_levels_and_class_bodies_at_their_call(capsys, tmp_path):
    (tmp_path / "m.py").write_text(
        "from jax._src import core\np_p = core.Primitive('p')\n"
        "def target(x):\n  return p_p.bind(x)\n\n"
        "class Holder:\n  value = target(1)\n\n"
        "def user(x):\n  return Holder()\n\n"
        "target(2)\n")
    found = json.loads(run_tree(capsys, tmp_path, "callers", "target", "--depth", "3",
                                "--json"))["found"]
    assert [(f["name"], f["kind"], f["line"]) for f in found] == \
        [("m", "module", 12), ("m.Holder", "class", 7)]
    text = run_tree(capsys, tmp_path, "callers", "target")
    assert "  m (top level)  m.py:12  [m -> m.target]" in text.splitlines()
    binders = json.loads(run_tree(capsys, tmp_path, "binds", "p", "--json"))["found"]
    assert [f["name"] for f in binders] == ["m.target"]
    # Calling Holder does not run its body: user calls the class, and no further.
    calls = json.loads(run_tree(capsys, tmp_path, "calls", "user", "--depth", "4",
                                "--json"))["found"]
    assert [(f["name"], f["kind"]) for f in calls] == [("m.Holder", "class")]
    graph = run_tree(capsys, tmp_path, "graph", "target").splitlines()
    assert {"module:m -calls-> function:m.target",
            "class:m.Holder -calls-> function:m.target"} <= set(graph)


def test_mermaid_warns_past_the_edges_github_draws(capsys, tmp_path):
    callers = "".join(f"def user{i}():\n  return target()\n" for i in range(501))
    (tmp_path / "m.py").write_text("def target():\n  return 1\n" + callers)
    run_tree(capsys, tmp_path, "index")
    assert main(["graph", "target", "--format", "mermaid", "--root", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert out.count(" -->|calls| ") == 501
    assert err.startswith("jaxmap: warning: 502 edges:") and len(err.splitlines()) == 1
    assert main(["graph", "user0", "--format", "mermaid", "--root", str(tmp_path)]) == 0
    assert capsys.readouterr().err == ""


def test_an_alias_reaches_what_the_function_it_names_binds(capsys, tmp_path):
    (tmp_path / "m.py").write_text(
        "from jax._src import core\np_p = core.Primitive('p')\n"
        "def silu(x):\n  return p_p.bind(x)\nswish = silu\n")
    binds = json.loads(run_tree(capsys, tmp_path, "binds", "p", "--json"))
    assert [f["name"] for f in binds["found"]] == ["m.silu"]  # the alias is silu, once
    silu = json.loads(run_tree(capsys, tmp_path, "locate", "silu", "--json"))
    assert silu["definitions"][0]["public_paths"] == ["m.silu", "m.swish"]
    calls = json.loads(run_tree(capsys, tmp_path, "calls", "swish", "--json"))
    assert [f["name"] for f in calls["found"] if f["kind"] == "function"] == ["m.silu"]
    located = json.loads(run_tree(capsys, tmp_path, "locate", "swish", "--json"))
    assert [r["chain"] for r in located["definitions"][0]["reaches"]] == \
        [["m.swish", "m.silu", "p_p.bind"]]


def test_binds_follows_the_impl_and_lowering_rules_a_bind_runs(capsys, tmp_path):
    (tmp_path / "m.py").write_text(
        "from jax._src import core\nfrom jax._src.interpreters import ad, mlir\n"
        "p_p = core.Primitive('p')\nq_p = core.Primitive('q')\nr_p = core.Primitive('r')\n"
        "def _helper(x):\n  return p_p.bind(x)\n"
        "def _q_impl(x):\n  return _helper(x)\n"
        "q_p.def_impl(_q_impl)\n"
        "def _r_lowering(ctx, x):\n  return p_p.bind(x)\n"
        "mlir.register_lowering(r_p, _r_lowering)\n"
        "def _r_jvp(primals, tangents):\n  return p_p.bind(*primals), tangents\n"
        "ad.primitive_jvps[r_p] = _r_jvp\n"
        "def api_q(x):\n  return q_p.bind(x)\n"
        "def api_r(x):\n  return r_p.bind(x)\n")
    binds = json.loads(run_tree(capsys, tmp_path, "binds", "p", "--all", "--json"))
    chains = {f["name"]: f["chain"] for f in binds["found"]}
    steps = {f["name"]: f["steps"] for f in binds["found"]}
    assert chains["m.api_q"] == ["m.api_q", "m._q_impl", "m._helper", "p_p.bind"]
    assert steps["m.api_q"] == ["binds `q_p`, which runs its impl rule", "calls", "binds"]
    assert chains["m.api_r"] == ["m.api_r", "m._r_lowering", "p_p.bind"]
    assert steps["m.api_r"][0] == "binds `r_p`, which runs its lowering rule"
    assert {f["name"] for f in binds["found"] if f["trace_time"]} == \
        {"m._helper", "m._q_impl", "m._r_lowering", "m._r_jvp"}  # none through a rule
    assert "m._r_jvp" in chains  # it binds p itself; a jvp rule is not followed up from it
    assert set(chains) == {"m._helper", "m._q_impl", "m.api_q", "m._r_lowering", "m.api_r",
                           "m._r_jvp"}


def test_binds_follows_what_a_rules_partial_hands_the_rule_to_call(capsys, tmp_path):
    (tmp_path / "m.py").write_text(
        "from functools import partial\n"
        "from jax._src import core\nfrom jax._src.interpreters import mlir\n"
        "s_p = core.Primitive('s')\nm_p = core.Primitive('m')\n"
        "def _sum(x):\n  return s_p.bind(x)\n"
        "def _max(x):\n  return m_p.bind(x)\n"
        "def _cumulative_impl(reduce, x):\n  return reduce(x)\n"
        "def make(name, reduce):\n  p = core.Primitive(name)\n"
        "  mlir.register_lowering(p, mlir.lower_fun(partial(_cumulative_impl, reduce)))\n"
        "  return p\n"
        "cumsum_p = make('cumsum', _sum)\ncummax_p = make('cummax', _max)\n"
        "def cumsum(x):\n  return cumsum_p.bind(x)\n"
        "def cummax(x):\n  return cummax_p.bind(x)\n")
    binds = json.loads(run_tree(capsys, tmp_path, "binds", "s", "--all", "--json"))
    found = {f["name"]: f for f in binds["found"]}
    assert found["m.cumsum"]["chain"] == ["m.cumsum", "m._sum", "s_p.bind"]
    assert found["m.cumsum"]["steps"][0] == \
        "binds `cumsum_p`, which runs its lowering rule `m._cumulative_impl`, which calls"
    assert "m.cummax" not in found  # its partial hands the rule _max
    path = json.loads(run_tree(capsys, tmp_path, "path", "cummax", "m_p", "--json"))
    assert [[(step["callee"], step["how"]) for step in chain] for chain in path["chains"]] == \
        [[("m._max", "binds `cummax_p`, which runs its lowering rule `m._cumulative_impl`, "
                     "which calls"), ("m_p.bind", "binds")]]


def test_a_call_of_what_a_registry_holds_is_marked_through(capsys, tmp_path):
    rules = "".join(f"def rule{i}(x): return x\nregistry['p{i}'] = rule{i}\n"
                    for i in range(MAX_CERTAIN + 1))
    (tmp_path / "m.py").write_text("registry = {}\n" + rules +
                                   "def apply(name, x):\n  rule = registry[name]\n"
                                   "  return rule(x)\n"
                                   "def direct(x):\n  return rule3(x)\n")
    callers = json.loads(run_tree(capsys, tmp_path, "callers", "rule3", "--json"))
    assert {(f["name"], f["through"]) for f in callers["found"]} == \
        {("m.apply", True), ("m.direct", False)}
    # Text: the certain caller first, then the one that may be, after its legend.
    text = run_tree(capsys, tmp_path, "callers", "rule3").splitlines()
    assert text[0].endswith(", at its first call; 1 more may call it through a value")
    assert [line[:12] for line in text[1:]] == ["  m.direct  ", "* may call i", "* m.apply  m"]
    graph = json.loads(run_tree(capsys, tmp_path, "graph", "m.rule3", "--format", "json"))
    calling = {e["source"] for e in graph["edges"] if e["kind"] == "calls"}
    assert "function:m.direct" in calling and "function:m.apply" not in calling
    calls = json.loads(run_tree(capsys, tmp_path, "calls", "apply", "--json"))
    assert {f["through"] for f in calls["found"] if f["name"].startswith("m.rule")} == {True}


def test_a_chain_through_a_value_is_marked_through_at_every_depth(capsys, tmp_path):
    """`user -> apply -> rule3`, where apply calls what a registry holds: user may not
    reach rule3 either (it was listed as a certain caller at depth 2), nor what rule3
    calls or binds (for `calls`)."""
    rules = "".join(f"def rule{i}(x): return x\nregistry['p{i}'] = rule{i}\n"
                    for i in range(MAX_CERTAIN + 1))
    (tmp_path / "m.py").write_text(
        "from jax._src import core\nq_p = core.Primitive('q')\nregistry = {}\n" + rules +
        "def rule_q(x):\n  return helper(x)\nregistry['q'] = rule_q\n"
        "def helper(x):\n  return q_p.bind(x)\n"
        "def apply(name, x):\n  rule = registry[name]\n  return rule(x)\n"
        "def user(x):\n  return apply('p3', x)\n"
        "def direct(x):\n  return rule3(x)\ndef outer(x):\n  return direct(x)\n")
    callers = json.loads(run_tree(capsys, tmp_path, "callers", "rule3", "--depth", "2",
                                  "--json"))
    assert {(f["name"], f["depth"], f["through"]) for f in callers["found"]} == {
        ("m.apply", 1, True), ("m.direct", 1, False), ("m.user", 2, True),
        ("m.outer", 2, False)}
    calls = json.loads(run_tree(capsys, tmp_path, "calls", "user", "--depth", "4",
                                "--json"))
    marked = {(f["name"], f["through"]) for f in calls["found"]}
    assert {("m.apply", False), ("m.rule_q", True), ("m.helper", True),
            ("q_p", True)} <= marked


def test_binds_does_not_follow_a_pallas_kernels_lowering(capsys, tmp_path):
    pallas = tmp_path / "jax" / "_src" / "pallas" / "triton"
    pallas.mkdir(parents=True)
    for folder in (tmp_path / "jax", tmp_path / "jax" / "_src", pallas.parent, pallas):
        (folder / "__init__.py").write_text("")
    (pallas / "lowering.py").write_text(
        "triton_lowering_rules = {}\n"
        "def register_lowering(prim):\n  def deco(fn):\n"
        "    triton_lowering_rules[prim] = fn\n    return fn\n  return deco\n")
    (tmp_path / "m.py").write_text(
        "from jax._src import core\nfrom jax._src.interpreters import mlir\n"
        "from jax._src.pallas.triton import lowering as triton\n"
        "p_p = core.Primitive('p')\nr_p = core.Primitive('r')\n"
        "def _r_xla(ctx, x):\n  return x\n"
        "mlir.register_lowering(r_p, _r_xla)\n"
        "@triton.register_lowering(r_p)\n"
        "def _r_triton(ctx, x):\n  return p_p.bind(x)\n"
        "def api_r(x):\n  return r_p.bind(x)\n")
    assert "lowering[triton]" in run_tree(capsys, tmp_path, "locate", "r")
    binds = json.loads(run_tree(capsys, tmp_path, "binds", "p", "--all", "--json"))
    assert {f["name"] for f in binds["found"]} == {"m._r_triton"}


def test_path_does_not_go_through_a_dispatch(capsys, tmp_path):
    rules = "".join(f"def rule{i}(x): return x\nregistry['p{i}'] = rule{i}\n"
                    for i in range(MAX_CERTAIN + 1))
    (tmp_path / "m.py").write_text("registry = {}\n" + rules +
                                   "def apply(name, x):\n  rule = registry[name]\n"
                                   "  return rule(x)\n")
    assert main(["path", "apply", "rule3", "--root", str(tmp_path)]) == 1
    assert "no call chain from apply to rule3" in capsys.readouterr().err


def test_a_function_handed_on_is_marked_as_such(capsys, tmp_path):
    (tmp_path / "lib.py").write_text("def psum(x): return x\n")
    (tmp_path / "m.py").write_text("import lib\n"
                                   "def reduce(x, parallel_reduce=None): return x\n"
                                   "def total(x):\n  return reduce(x, parallel_reduce=lib.psum)\n")
    callers = json.loads(run_tree(capsys, tmp_path, "callers", "psum", "--json"))
    assert [(f["name"], f["handed"], f["through"]) for f in callers["found"]] == \
        [("m.total", True, False)]
    text = run_tree(capsys, tmp_path, "callers", "psum").splitlines()
    assert text[0] == "no callers of lib.psum; 1 more hands it on"
    assert text[1].startswith("^ hand it on, not calling it there")
    assert text[2].startswith("^ m.total  m.py:4")


def _lax_utils(root):
    """Where a tree under `root` keeps `jax._src.lax.utils`, its packages made."""
    utils = root / "jax" / "_src" / "lax"
    utils.mkdir(parents=True)
    for folder in (root / "jax", root / "jax" / "_src", utils):
        (folder / "__init__.py").write_text("")
    return utils / "utils.py"


def test_callers_of_a_rule_name_only_the_kinds_it_runs_as(capsys, tmp_path):
    (tmp_path / "m.py").write_text(
        "from jax._src.lax.utils import standard_primitive\n"
        "def _shape_rule(x): return x\ndef _dtype_rule(x): return x\n"
        "p_p = standard_primitive(_shape_rule, _dtype_rule, 'p',\n"
        "                         weak_type_rule=unknown_weak_type)\n")
    _lax_utils(tmp_path).write_text(
        "from functools import partial\nfrom jax._src import core\n"
        "def standard_abstract_eval(prim, shape_rule, dtype_rule, weak_type_rule, *avals):\n"
        "  return shape_rule(*avals), dtype_rule(*avals)\n"
        "def standard_primitive(shape_rule, dtype_rule, name, weak_type_rule=None):\n"
        "  prim = core.Primitive(name)\n"
        "  prim.def_abstract_eval(partial(standard_abstract_eval, prim, shape_rule,\n"
        "                                 dtype_rule, weak_type_rule))\n"
        "  return prim\n")
    found = json.loads(run_tree(capsys, tmp_path, "callers", "_shape_rule", "--json"))
    assert {r["kind"] for r in found["registrations"]} == {"shape_rule"}


def test_path_follows_the_rules_a_bind_runs(capsys, tmp_path):
    (tmp_path / "m.py").write_text(
        "from jax._src import core\n"
        "p_p = core.Primitive('p')\nq_p = core.Primitive('q')\n"
        "def _q_impl(x):\n  return p_p.bind(x)\n"
        "q_p.def_impl(_q_impl)\n"
        "def api_q(x):\n  return q_p.bind(x)\n")
    chains = json.loads(run_tree(capsys, tmp_path, "path", "api_q", "p_p", "--json"))["chains"]
    assert [[(step["callee"], step["how"]) for step in chain] for chain in chains] == \
        [[("m._q_impl", "binds `q_p`, which runs its impl rule"), ("p_p.bind", "binds")]]


def test_a_primitive_compared_with_is_not_bound(capsys, tmp_path):
    (tmp_path / "m.py").write_text(
        "from jax._src import core\np_p = core.Primitive('p')\nq_p = core.Primitive('q')\n"
        "def process(primitive, x):\n"
        "  if primitive is not p_p and primitive != q_p:\n"
        "    return primitive.bind(x)\n"
        "def api(x):\n  return process(q_p, x)\n")
    binds = json.loads(run_tree(capsys, tmp_path, "binds", "p", "--json"))
    assert binds["found"] == []
    binds = json.loads(run_tree(capsys, tmp_path, "binds", "q", "--json"))
    assert {f["name"] for f in binds["found"]} == {"m.api"}


def test_a_function_called_and_handed_on_is_called(capsys, tmp_path):
    (tmp_path / "m.py").write_text("def bottom(x):\n  return x\n"
                                   "def wrap(f):\n  return f\n"
                                   "def top(x):\n  return wrap(bottom)(x)\n")
    found = json.loads(run_tree(capsys, tmp_path, "calls", "m.top", "--json"))["found"]
    assert {(f["name"], f["handed"], f["through"]) for f in found
            if f["name"] == "m.bottom"} == {("m.bottom", False, False)}



def test_binds_of_a_function_points_to_locate(capsys):
    """`binds jnp.sum`: no primitive is named so, and a function is: the error says
    where its primitives are listed, not primitives of close names."""
    code, _out, err = run(capsys, "binds", "apply_primitive")
    assert code == 1 and err.count("\n") == 1
    assert "it names a function, whose primitives `jaxmap locate apply_primitive` lists" in err


_MADE = """\
from jax._src import core
from jax._src.interpreters import ad, batching

def unop(name):
  prim = core.Primitive(name)
  batching.defvectorized(prim)
  return prim

def sqrt(x):
  return sqrt_p.bind(x)

def add(x, y):
  return add_p.bind(x, y)

def _add_transpose_left(t, x, y):
  return t

def _add_transpose_right(t, x, y):
  return t

sqrt_p = unop('sqrt')
add_p = unop('add_any')
ad.defjvp2(sqrt_p, lambda g, ans, x: add(g, ans))
ad.defbilinear(add_p, _add_transpose_left, _add_transpose_right)
"""


def test_a_public_wrapper_of_a_helper_made_primitive_runs_as_none_of_its_rules(
        capsys, tmp_path):
    """`sqrt_p = unop('sqrt')` writes sqrt's name, but no rule of sqrt is `sqrt`."""
    (tmp_path / "m.py").write_text(_MADE)
    document = json.loads(run_tree(capsys, tmp_path, "callers", "sqrt", "--json"))
    assert document["registrations"] == []
    assert "runs as" not in run_tree(capsys, tmp_path, "callers", "sqrt")


def test_a_function_a_lambda_rule_calls_is_not_that_rule(capsys, tmp_path):
    """sqrt's jvp rule is a lambda that calls `add`: add is called, it is not the rule."""
    (tmp_path / "m.py").write_text(_MADE)
    document = json.loads(run_tree(capsys, tmp_path, "callers", "add", "--json"))
    assert document["registrations"] == []


def test_each_function_of_a_rule_runs_as_it(capsys, tmp_path):
    """defbilinear's right transpose is the transpose rule's second function."""
    (tmp_path / "m.py").write_text(_MADE)
    document = json.loads(run_tree(capsys, tmp_path, "callers", "_add_transpose_right",
                                   "--json"))
    assert [(r["kind"], r["primitive"]) for r in document["registrations"]] == \
        [("transpose", "add_any")]


def test_registrations_on_one_line_come_sorted_by_kind(capsys, tmp_path):
    """One function registered as five rules by one statement: in kind order, not in
    the order of a set (which changes from one run to the next)."""
    (tmp_path / "m.py").write_text(
        "from jax._src.lax.utils import standard_primitive\n"
        "def _rule(x): return x\n"
        "p_p = standard_primitive(_rule, _rule, 'p', weak_type_rule=_rule,\n"
        "                         sharding_rule=_rule, vma_rule=_rule)\n")
    _lax_utils(tmp_path).write_text(
        "from functools import partial\nfrom jax._src import core\n"
        "def standard_abstract_eval(prim, shape_rule, dtype_rule, weak_type_rule,\n"
        "                           sharding_rule, vma_rule, *avals):\n"
        "  return shape_rule(*avals)\n"
        "def standard_primitive(shape_rule, dtype_rule, name, weak_type_rule=None,\n"
        "                       sharding_rule=None, vma_rule=None):\n"
        "  prim = core.Primitive(name)\n"
        "  prim.def_abstract_eval(partial(standard_abstract_eval, prim, shape_rule,\n"
        "                         dtype_rule, weak_type_rule, sharding_rule, vma_rule))\n"
        "  return prim\n")
    found = json.loads(run_tree(capsys, tmp_path, "callers", "_rule", "--json"))
    assert [r["kind"] for r in found["registrations"]] == \
        ["dtype_rule", "shape_rule", "sharding_rule", "vma_rule", "weak_type_rule"]


def test_an_updated_index_lists_callers_as_a_fresh_one_does(capsys, tmp_path, monkeypatch):
    """Editing a.py moves its call rows after b.py's in the updated index: callers
    still lists them by place, as from an index built afresh."""
    (tmp_path / "lib.py").write_text("def helper(x):\n  return x\n")
    for name in ("a", "b"):
        (tmp_path / f"{name}.py").write_text(
            f"import lib\ndef use_{name}(obj):\n  lib.helper(1)\n  return obj.helper(2)\n")
    run_tree(capsys, tmp_path, "callers", "helper")
    (tmp_path / "a.py").write_text(
        "import lib\ndef use_a(obj):\n  lib.helper(0)\n  lib.helper(1)\n"
        "  return obj.helper(2)\n")
    updated = json.loads(run_tree(capsys, tmp_path, "callers", "helper", "--json"))
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "fresh-cache"))
    fresh = json.loads(run_tree(capsys, tmp_path, "callers", "helper", "--json"))
    assert [(f["name"], f["file"]) for f in updated["found"]] == \
        [("a.use_a", "a.py"), ("b.use_b", "b.py"),
         ("obj.helper", "a.py"), ("obj.helper", "b.py")]
    assert updated == fresh


_JOINED = {  # calls after an import (or any statement) on one line, `;` between
    "a.py": "from jax._src import core\np_p = core.Primitive('p')\n\n"
            "def prim(x):\n  return p_p.bind(x)\n",
    "b.py": (
        '"""Opens with a docstring: its bodies are skimmed, not parsed."""\n'
        "from a import prim as top_prim\n\n"
        "def f1(x):\n  from a import prim as _q; _q(x)\n  return x\n\n"
        "def f4(x):\n  import a; a.prim(x)\n  return x\n\n"
        "def f7(x):\n  import os; top_prim(x)\n  return x\n\n"
        "def f8(x):\n  import os  # then; ghost(x)\n  return x\n\n"
        "def f9(x):\n  y = 1; h = top_prim\n  return h(x)\n\n"
        "def f10(x): import os; top_prim(x)\n"),
    "d.py": "import os; from a import prim; prim(1)\n",
}


def test_a_call_after_an_import_on_its_line_is_in_the_graph(capsys, tmp_path):
    for path, text in _JOINED.items():
        (tmp_path / path).write_text(text)
    binds = json.loads(run_tree(capsys, tmp_path, "binds", "p", "--all", "--json"))
    assert {f["name"] for f in binds["found"]} == \
        {"a.prim", "b.f1", "b.f4", "b.f7", "b.f9", "b.f10"}
    callers = json.loads(run_tree(capsys, tmp_path, "callers", "a.prim", "--json"))
    assert ("d", 1) in {(f["name"], f["call_line"]) for f in callers["found"]}
    calls = json.loads(run_tree(capsys, tmp_path, "calls", "b.f8", "--json"))
    assert calls["found"] == [] and calls["unresolved"] == 0  # `ghost(x)`: a comment


_ALIASES = {  # names bound to a lambda, a partial and a function, called elsewhere
    "pk/__init__.py": "",
    "pk/m.py": "from functools import partial\nfrom jax._src import core\n"
               "p_p = core.Primitive('p')\nb_p = core.Primitive('b')\n\n"
               "def full_like(x, fill_value):\n  return p_p.bind(x)\n\n"
               "_zeros = partial(full_like, fill_value=0)\n"
               "b = lambda x: b_p.bind(x)\n"
               "def silu(x):\n  return x\nswish = silu\n\n"
               "def user(x):\n  return _zeros(x) + swish(x)\n",
    "pk/n.py": "from pk.m import _zeros as z\n\n"
               "def other(x):\n  from pk import m\n  return m._zeros(x) + z(x) + m.b(x)\n",
}


def test_the_callers_of_a_name_bound_to_a_lambda_or_partial_are_its_calls(capsys, tmp_path):
    for path, text in _ALIASES.items():
        (tmp_path / path).parent.mkdir(exist_ok=True)
        (tmp_path / path).write_text(text)
    binds = json.loads(run_tree(capsys, tmp_path, "binds", "b", "--all", "--json"))
    assert [f["chain"] for f in binds["found"] if f["name"] == "pk.n.other"] == \
        [["pk.n.other", "pk.m.b", "b_p.bind"]]  # through the lambda
    zeros = json.loads(run_tree(capsys, tmp_path, "callers", "pk.m._zeros", "--json"))
    assert [(f["name"], f["call_line"]) for f in zeros["found"]] == \
        [("pk.m.user", 16), ("pk.n.other", 5)]
    assert zeros["aliases"] == [{"variable": "pk.m._zeros", "names": ["pk.m.full_like"]}]
    assert "  (pk.m._zeros is a variable naming pk.m.full_like: its callers are the calls " \
           "of its name, which the callers of pk.m.full_like list too)" in \
        run_tree(capsys, tmp_path, "callers", "pk.m._zeros").splitlines()
    full_like = json.loads(run_tree(capsys, tmp_path, "callers", "full_like", "--json"))
    assert {"pk.m.user", "pk.n.other"} <= {f["name"] for f in full_like["found"]}
    assert full_like["aliases"] == []
    swish = json.loads(run_tree(capsys, tmp_path, "callers", "swish", "--json"))
    assert [f["name"] for f in swish["found"]] == ["pk.m.user"]


def test_a_caller_that_calls_twice_is_shown_once_at_its_first_call(capsys, tmp_path):
    """The header says so: `_pad_stats` calling at two lines was one line, at the first."""
    (tmp_path / "m.py").write_text("def target(x):\n  return x\n\n"
                                   "def twice(x):\n  y = target(x)\n  return target(y)\n")
    text = run_tree(capsys, tmp_path, "callers", "target").splitlines()
    assert text[0] == "1 caller of m.target, at its first call"
    assert [line.split()[:2] for line in text[1:]] == [["m.twice", "m.py:5"]]


def test_a_function_a_name_means_calling_another_it_means_is_its_caller(tmp_path, monkeypatch):
    # `callers total` means both `a.total` and `b.total`; `b.total` calls `a.total`.
    (tmp_path / "a.py").write_text("def total(x):\n  return x\n")
    (tmp_path / "b.py").write_text("import a\ndef total(x):\n  return a.total(x)\n"
                                   "def use(x):\n  return total(x)\n")
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "cache"))
    from jaxmap.commands.callgraph import callers
    from jaxmap.session import open_index

    with open_index(str(tmp_path), graph=True) as index:
        answer = callers(index, "total")
    assert {(r.label, r.chain) for r in answer.found} == {
        ("b.use", ("b.use", "b.total")), ("b.total", ("b.total", "a.total"))}


OVERRIDES = {
    "pkg/__init__.py": "",
    "pkg/core.py": """\
        class Trace:
            def __init__(self):
                self.level = 0

            def process(self, x):
                raise NotImplementedError

            def again(self, x):
                return self.process(x)

        class Primitive:
            def bind_with_trace(self, trace, x):
                return trace.process(x)

        def bind(x):
            return Primitive().bind_with_trace(Trace(), x)
        """,
    "pkg/batching.py": """\
        from pkg import core
        from pkg.core import Trace

        class BatchTrace(Trace):
            def __init__(self):
                super().__init__()

            def process(self, x):
                return super().process(x)

        class OtherTrace(core.Trace):
            def __init__(self):
                super().__init__()

        def vmap_one(x):
            return BatchTrace().process(x)

        def plain(x):
            return vmap_one(x)
        """,
}


def test_callers_of_an_override_are_those_of_the_method_it_overrides(tmp_path_factory,
                                                                     capsys):
    """`trace.process(x)` on a value of the base class may run BatchTrace.process
    (dynamic dispatch): its callers list it, through Trace.process; `super()` calls
    and calls of a plain function are not read as such."""
    from inline import indexed_tree

    root = indexed_tree(tmp_path_factory, OVERRIDES).root

    def found(*argv) -> list[tuple]:
        document = json.loads(run_tree(capsys, root, "callers", *argv, "--json"))
        assert all(FOUND_KEYS == f.keys() for f in document["found"])
        return [(f["name"], f["depth"], f["dispatch"]) for f in document["found"]]

    base = "pkg.core.Trace.process"
    assert found("BatchTrace.process") == [
        ("pkg.batching.vmap_one", 1, None),
        ("pkg.core.Primitive.bind_with_trace", 1, base),
        ("pkg.core.Trace.again", 1, base)]
    assert found("BatchTrace.process", "--depth", "2") == [
        ("pkg.batching.vmap_one", 1, None), ("pkg.batching.plain", 2, None),
        ("pkg.core.Primitive.bind_with_trace", 1, base), ("pkg.core.Trace.again", 1, base),
        ("pkg.core.bind", 2, base)]
    text = run_tree(capsys, root, "callers", "BatchTrace.process").splitlines()
    assert text[0].endswith("; 2 more may call it through a method it overrides")
    assert f"> pkg.core.Primitive.bind_with_trace  pkg/core.py:13  (through {base}, which " \
           "it overrides)  [pkg.core.Primitive.bind_with_trace -> pkg.core.Trace.process " \
           "-> pkg.batching.BatchTrace.process]" in text
    # super().__init__() runs Trace's own: OtherTrace's is no caller of BatchTrace's
    assert all(dispatch is None for _n, _d, dispatch in found("BatchTrace.__init__"))
    assert found("plain") == [] and found("vmap_one") == [("pkg.batching.plain", 1, None)]
    # the base's own callers are as they were: no override is one of them
    assert ("pkg.batching.BatchTrace.process", 1, None) in found("Trace.process")


def test_calls_lists_a_bind_once_where_a_helper_binds_it_at_the_same_line(capsys, tmp_path):
    """`helper(prim, x) + prim.bind(x)`: the same primitives bound at one line, directly
    and through a helper that binds its parameter; each is listed once, most directly."""
    src = tmp_path / "jax" / "_src"
    src.mkdir(parents=True)
    (tmp_path / "jax" / "__init__.py").write_text("")
    (src / "__init__.py").write_text("")
    (src / "core.py").write_text("class Primitive:\n  def __init__(self, name):\n"
                                 "    self.name = name\n\n"
                                 "  def bind(self, *args):\n    return args\n")
    (src / "ops.py").write_text(
        "from jax._src import core\n\na_p = core.Primitive('a')\nb_p = core.Primitive('b')\n"
        "\n\ndef bind_helper(prim, x):\n  return prim.bind(x)\n\n\n"
        "def either(x, flag):\n  prim = a_p if flag else b_p\n"
        "  return bind_helper(prim, x) + prim.bind(x)\n")
    found = json.loads(run_tree(capsys, tmp_path, "calls", "jax._src.ops.either",
                                "--json"))["found"]
    bound = [(f["name"], f["chain"]) for f in found if f["kind"] == "primitive"]
    assert sorted(bound) == [("a_p", ["jax._src.ops.either", "a_p.bind"]),
                             ("b_p", ["jax._src.ops.either", "b_p.bind"])]

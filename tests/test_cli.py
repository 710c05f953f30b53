"""The CLI on the minijax fixture, run in-process through `main(argv) -> int`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from markers import ROOT, mark

from jaxmap.cli import cli, main

PSUM_FILE, PSUM_LINE = mark("psum-create")


def run(capsys, *argv):
    """(exit status, stdout, stderr) of `jaxmap ARGV --root minijax`."""
    code = main([*argv, "--root", str(ROOT)])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv) -> dict:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def assert_one_line_error(code: int, out: str, err: str) -> None:
    assert code != 0
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jaxmap: "), err


# -- locate: every way a JAX developer names a primitive -------------------------------


@pytest.mark.parametrize("name", ["psum", "psum_p", "lax.psum", "jax.lax.psum"])
def test_locate_psum_by_any_name(capsys, name):
    code, out, err = run(capsys, "locate", name)
    assert code == 0, err
    # A dotted name of the function puts the function first, the primitive after it.
    first = "function " if name in ("lax.psum", "jax.lax.psum") else "primitive psum"
    assert out.startswith(first) and "\nprimitive psum" in "\n" + out
    assert f"  defined    {PSUM_FILE}:{PSUM_LINE}\n" in out
    file, line = mark("psum-lowering")
    assert f"lowering               {file}:{line}  via mlir.register_lowering" in out


@pytest.mark.parametrize("name", ["lax.psum", "jax.lax.psum"])
def test_locate_public_path_finds_the_function(capsys, name):
    document = run_json(capsys, "locate", name)
    (definition,) = document["definitions"]
    assert definition["qualname"] == "jax._src.lax.parallel.psum"
    assert "jax.lax.psum" in definition["public_paths"]
    assert [p["name"] for p in document["primitives"]] == ["psum"]


@pytest.mark.parametrize("name", ["scatter-add", "scatter_add_p"])
def test_locate_by_name_string_and_variable(capsys, name):
    document = run_json(capsys, "locate", name)
    (prim,) = document["primitives"]
    assert (prim["name"], prim["variable"]) == ("scatter-add", "scatter_add_p")
    assert (prim["file"], prim["line"]) == mark("scatter-add-create")


def test_locate_public_primitive_path(capsys):
    document = run_json(capsys, "locate", "jax.lax.add_p")
    (prim,) = document["primitives"]
    assert (prim["file"], prim["line"]) == mark("add-create")
    assert any("jax.lax.add_p" in d["public_paths"] for d in document["definitions"])


# -- --json schema ---------------------------------------------------------------------

# The keys the README documents as stable.
PRIMITIVE_KEYS = {"name", "variable", "module", "style", "file", "line", "end_line", "rules"}
RULE_KEYS = {"kind", "file", "line", "end_line", "via", "platform", "function"}
FUNCTION_KEYS = {"name", "file", "line"}
DEFINITION_KEYS = {"name", "qualname", "kind", "file", "line", "end_line", "public_paths",
                   "summary"}


def _check_primitive(prim: dict) -> None:
    assert PRIMITIVE_KEYS <= prim.keys()
    assert isinstance(prim["line"], int) and prim["line"] >= 1
    assert prim["style"] in ("classic", "hijax")
    for rule in prim["rules"]:
        assert RULE_KEYS <= rule.keys()
        assert rule["line"] <= rule["end_line"]
        assert rule["platform"] is None or isinstance(rule["platform"], str)
        if rule["function"] is not None:
            assert FUNCTION_KEYS <= rule["function"].keys()


def test_locate_json_schema(capsys):
    document = run_json(capsys, "locate", "psum")
    assert {"root", "jax_version", "query", "primitives", "definitions"} <= document.keys()
    assert document["root"] == str(ROOT.resolve())
    assert document["jax_version"] == "0.0.1"
    assert document["query"] == "psum"
    (prim,) = document["primitives"]
    _check_primitive(prim)
    assert (prim["name"], prim["variable"], prim["file"], prim["line"]) == \
        ("psum", "psum_p", PSUM_FILE, PSUM_LINE)
    kinds = sorted(r["kind"] for r in prim["rules"])
    assert kinds == ["abstract_eval", "batching", "impl", "jvp", "lowering", "transpose"]
    batcher = next(r for r in prim["rules"] if r["kind"] == "batching")
    assert batcher["function"]["name"] == "_batched_reduction_collective"
    assert batcher["end_line"] > batcher["line"]  # a multi-line statement
    for definition in document["definitions"]:
        assert DEFINITION_KEYS <= definition.keys()
    assert [d["qualname"] for d in document["definitions"]] == ["jax._src.lax.parallel.psum"]


def test_locate_lists_the_tests_that_exercise_a_primitive(capsys):
    run(capsys, "index")  # the call graph, which tests and reaches come from
    (prim,) = run_json(capsys, "locate", "psum")["primitives"]
    # Most direct first: names the primitive, calls its binder, reaches it through two
    # helpers; each with its chain to the `.bind`.
    expected = [("ParallelTest.testPsumPrimitive", *mark("test-psum-primitive"), 0),
                ("ParallelTest.testPsum", *mark("test-psum"), 1),
                ("ParallelTest.testPmean", *mark("test-pmean"), 3)]
    assert [(t["name"], t["file"], t["line"], t["depth"]) for t in prim["tests"]] == expected
    assert prim["tests"][0]["chain"] == ["ParallelTest.testPsumPrimitive", "psum_p"]
    assert prim["tests"][2]["chain"] == [
        "ParallelTest.testPmean", "jax.lax.pmean", "jax._src.lax.parallel._pmean",
        "jax._src.lax.parallel._psum_halved", "psum_p.bind"]
    assert all(t["direct"] for t in prim["tests"])
    (neg,) = run_json(capsys, "locate", "neg_p")["primitives"]
    assert [t["name"] for t in neg["tests"]] == ["test_neg"]
    (add,) = run_json(capsys, "locate", "add_p")["primitives"]
    assert add["tests"] == []
    code, out, _ = run(capsys, "locate", "psum")
    file, line = mark("test-psum-primitive")
    assert code == 0 and \
        f"tested by              {file}:{line}  ParallelTest.testPsumPrimitive" in out


def test_primitives_json_schema(capsys):
    document = run_json(capsys, "primitives")
    assert {"root", "jax_version", "primitives"} <= document.keys()
    assert document["jax_version"] == "0.0.1"
    names = [p["name"] for p in document["primitives"]]
    assert len(names) == 31 and names.count("convert") == 2
    for prim in document["primitives"]:
        _check_primitive(prim)
    platforms = {r["platform"] for p in document["primitives"] for r in p["rules"]}
    assert {"cpu", "cuda", "rocm", "triton", None} <= platforms


def test_primitives_text_lists_each_with_path_line(capsys):
    code, out, err = run(capsys, "primitives")
    assert code == 0, err
    psum = next(line for line in out.splitlines() if line.startswith("psum "))
    assert f"{PSUM_FILE}:{PSUM_LINE}" in psum
    assert "lowering" in psum and "transpose" in psum


def test_primitives_missing_jvp(capsys):
    document = run_json(capsys, "primitives", "--missing", "jvp")
    names = {p["name"] for p in document["primitives"]}
    assert {"homonym", "pallas_call", "gather", "reduce_sum", "scatter-add",
            "convert"} <= names
    assert not names & {"psum", "neg", "sin", "add", "SearchSorted", "closed_call"}
    for prim in document["primitives"]:
        assert all(r["kind"] != "jvp" for r in prim["rules"])


def test_primitives_missing_text(capsys):
    code, out, err = run(capsys, "primitives", "--missing", "lowering")
    assert code == 0, err
    names = {line.split()[0] for line in out.splitlines()}
    assert "homonym" in names and "gather" in names
    assert "psum" not in names and "ragged_all_to_all" not in names


# -- locate filters and paths ----------------------------------------------------------


def test_kind_lowering_keeps_only_lowerings(capsys):
    document = run_json(capsys, "locate", "sin", "--kind", "lowering")
    (prim,) = document["primitives"]
    assert sorted((r["kind"], r["platform"] or "") for r in prim["rules"]) == [
        ("lowering", ""), ("lowering", "cpu")]
    assert document["definitions"] == []


def test_rule_kinds_keep_one_column_past_a_long_platform_label():
    from jaxmap.models import Primitive, Rule, RuleKind, SourceLoc
    from jaxmap.render.text import primitive

    here = SourceLoc("m.py", 3)
    prim = Primitive("p", "p_p", "m", here, rules=(
        Rule(RuleKind.IMPL, here, "p_p.def_impl"),
        Rule(RuleKind.LOWERING, here, "mlir.register_lowering", platform="gpu",
             platforms=("cuda", "rocm", "oneapi"))))
    rows = primitive(prim, str, lambda file, line: None).splitlines()[2:]
    assert rows[1].startswith("  lowering[gpu: cuda, rocm, oneapi] m.py:3")
    assert len({row.index(" m.py") for row in rows}) == 1


def test_kind_lowering_text(capsys):
    code, out, err = run(capsys, "locate", "ragged_all_to_all", "--kind", "lowering")
    assert code == 0, err
    rule_lines = [line for line in out.splitlines() if line.startswith("  ")
                  and not line.startswith("  defined")]
    assert len(rule_lines) == 2
    assert any("lowering[cuda]" in line for line in rule_lines)
    assert any("lowering[rocm]" in line for line in rule_lines)


def test_kind_of_rule_absent_is_not_found(capsys):
    code, out, err = run(capsys, "locate", "homonym", "--kind", "jvp")
    assert code == 1
    assert_one_line_error(code, out, err)


def test_kind_of_rule_on_a_function_says_rules_are_a_primitives(capsys):
    code, out, err = run(capsys, "locate", "_reduce_shape", "--kind", "lowering")
    assert_one_line_error(code, out, err)
    assert "'_reduce_shape' names no primitive, so no lowering rule: it names a " \
        "function" in err and "did you mean" not in err


def test_kind_function_keeps_only_definitions(capsys):
    document = run_json(capsys, "locate", "psum", "--kind", "function")
    assert document["primitives"] == []
    assert [d["kind"] for d in document["definitions"]] == ["function"]


def test_paths_are_root_relative_posix_by_default(capsys):
    document = run_json(capsys, "locate", "add")
    files = [document["primitives"][0]["file"]]
    files += [r["file"] for p in document["primitives"] for r in p["rules"]]
    files += [d["file"] for d in document["definitions"]]
    for file in files:
        assert not Path(file).is_absolute() and "\\" not in file
        assert (ROOT / file).is_file()


def test_absolute_paths(capsys):
    document = run_json(capsys, "locate", "psum", "--absolute")
    (prim,) = document["primitives"]
    assert prim["file"] == str(ROOT.resolve() / PSUM_FILE)
    for rule in prim["rules"]:
        assert Path(rule["file"]).is_absolute() and Path(rule["file"]).is_file()
        if rule["function"]:
            assert Path(rule["function"]["file"]).is_absolute()
    code, out, err = run(capsys, "locate", "psum", "--absolute")
    assert f"{ROOT.resolve() / PSUM_FILE}:{PSUM_LINE}" in out


# -- not found -------------------------------------------------------------------------


def test_near_miss_suggests(capsys):
    code, out, err = run(capsys, "locate", "psun")
    assert code == 1
    assert_one_line_error(code, out, err)
    assert "did you mean" in err and "psum" in err
    assert out == ""


@pytest.mark.parametrize("query, expected", [
    ("nosuch_p", ()),  # `touch_p` is no near miss
    ("psun", ("psum",)),
    ("psun_p", ("psum_p",)),  # of `psum` and `psum_p`, the one written alike
    ("cumsun", ("cumsum",)),
    ("reduce_", ("reduce_max", "reduce_sum")),  # starts with it
    ("sum", ("psum", "cumsum", "reduce_sum")),  # alike, then holding it
    ("con", ("consume", "assert_consumed_value")),  # a part starts with it, not `iconv`
    ("zz", ()),
    ("Psum", ("psum", "sum")),  # a case apart comes first
    ("SUM", ("sum", "psum", "cumsum", "reduce_sum")),
    ("PSUM_P", ("psum_p", "sum")),
])
def test_suggestions_are_close_names(query, expected):
    from jaxmap.commands.lookup import close_names

    names = {"touch", "touch_p", "psum", "psum_p", "cumsum", "cumsum_p", "reduce_max",
             "reduce_sum", "sum", "assert_consumed_value", "consume", "iconv"}
    assert close_names(query, names) == expected


def test_a_dotted_name_suggests_first_where_its_last_part_is_defined(capsys):
    code, out, err = run(capsys, "locate", "jax.numpy.pmean")
    assert code == 1
    assert_one_line_error(code, out, err)
    assert "did you mean: jax.lax.pmean, _pmean" in err


def test_a_moved_definition_is_suggested_by_its_qualified_name(tmp_path, capsys):
    (tmp_path / "jax/_src").mkdir(parents=True)
    (tmp_path / "jax/__init__.py").write_text("")
    (tmp_path / "jax/_src/__init__.py").write_text("")
    (tmp_path / "jax/_src/ann2.py").write_text(
        "def approx_max_k(x):\n  return x\n\n\ndef approx_min_k(x):\n  return x\n")
    code = main(["locate", "jax.lax.approx_max_k", "--root", str(tmp_path)])
    out, err = capsys.readouterr()
    assert_one_line_error(code, out, err)
    assert "did you mean: jax._src.ann2.approx_max_k, approx_min_k?" in err


def test_nothing_found(capsys):
    code, out, err = run(capsys, "locate", "qqqqzzzz")
    assert code == 1
    assert_one_line_error(code, out, err)
    assert "did you mean" not in err


def test_root_that_does_not_exist(capsys, tmp_path):
    code = main(["locate", "psum", "--root", str(tmp_path / "nowhere")])
    out, err = capsys.readouterr()
    assert_one_line_error(code, out, err)
    assert "does not exist" in err


def test_debug_before_the_command_raises_instead(tmp_path):
    from jaxmap.errors import RootError

    with pytest.raises(RootError):
        main(["--debug", "locate", "psum", "--root", str(tmp_path / "nowhere")])


def test_debug_after_the_command_raises_too(tmp_path):
    from jaxmap.errors import RootError

    with pytest.raises(RootError):
        main(["locate", "psum", "--debug", "--root", str(tmp_path / "nowhere")])


@pytest.mark.parametrize("command", ["callers", "calls", "locate", "binds"])
def test_quiet_is_taken_after_the_command_too(capsys, command):
    code, out, err = run(capsys, command, "psum", "-q")
    assert code == 0 and out and not err
    assert "-q, --quiet" in (run(capsys, command, "--help")[1])


@pytest.mark.parametrize("argv", [
    ["locate", "psum", "--kind", "bogus"],
    ["primitives", "--missing", "bogus"],
])
def test_bad_option_value_fails_without_traceback(capsys, argv):
    code = main([*argv, "--root", str(ROOT)])
    out, err = capsys.readouterr()
    assert code != 0
    assert "Traceback" not in out + err
    assert "bogus" in err


@pytest.mark.parametrize("argv", [
    ["locate", "psum", "--kind", "bogus", "--root", str(ROOT)],
    ["index", "--root", str(ROOT / "jax" / "version.py")],
])
def test_usage_errors_are_one_line(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    assert_one_line_error(code, out, err)


# -- index and the click group ----------------------------------------------------------


def test_index_then_up_to_date(capsys):
    code, out, err = run(capsys, "index")
    assert code == 0, err
    assert out.startswith("rebuilt:") and "31 primitives" in out
    code, out, err = run(capsys, "index")
    assert code == 0, err
    assert out.startswith("up to date:") and "0 parsed" in out
    code, out, err = run(capsys, "index", "--rebuild")
    assert out.startswith("rebuilt:")


def test_locate_quotes_the_statement_that_defines_the_primitive(tmp_path, capsys,
                                                                monkeypatch):
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "ops.py").write_text(
        "from jax._src import core\n"
        "foo_p = core.Primitive('foo'); foo_p.def_impl(lambda x: x * 2)\n")
    assert main(["locate", "foo_p", "--root", str(tmp_path / "lib")]) == 0
    assert "(defined by `foo_p = core.Primitive('foo')`)" in capsys.readouterr().out


def test_index_after_locate_says_why_every_file_is_read(capsys):
    code, _out, err = run(capsys, "locate", "psum")  # the first phase alone
    assert code == 0, err
    code, out, err = run(capsys, "index")
    assert code == 0, err
    files = out.partition(" files (")[0].rpartition(" ")[2]
    assert f"{files} files ({files} parsed ({files} of them again, for what the call " \
        "graph reads" in out
    assert run_json(capsys, "index")["for_graph"] == 0  # nothing left to read


def test_cli_runner_locate():
    result = CliRunner().invoke(cli, ["locate", "fused_call", "--root", str(ROOT)])
    assert result.exit_code == 0, result.output
    file, line = mark("fused-create")
    assert f"defined    {file}:{line}" in result.output


def test_help_lists_commands(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("index", "locate", "primitives"):
        assert command in out


# -- filters and honest misses (#9) -----------------------------------------------------


def test_kind_missing_from_a_primitive_says_so_and_lists_what_it_has(capsys):
    code, out, err = run(capsys, "locate", "psum", "--kind", "dce")
    assert code == 1 and out == ""
    assert err.strip().startswith("jaxmap: primitive psum has no dce rule; it has: ")
    assert "batching" in err and "did you mean" not in err


def test_missing_and_has_combine(capsys):
    document = run_json(capsys, "primitives", "--missing", "jvp", "--missing", "batching",
                        "--has", "impl")
    assert document["primitives"]
    for prim in document["primitives"]:
        kinds = {r["kind"] for r in prim["rules"]}
        assert not kinds & {"jvp", "batching"} and "impl" in kinds


def test_platform_keeps_the_lowerings_that_serve_it(capsys):
    cpu = run_json(capsys, "locate", "sin", "--platform", "cpu")
    [prim] = cpu["primitives"]
    assert [r["platform"] for r in prim["rules"] if r["kind"] == "lowering"] == ["cpu"]
    tpu = run_json(capsys, "locate", "sin", "--platform", "tpu")
    [prim] = tpu["primitives"]
    assert [r["platform"] for r in prim["rules"] if r["kind"] == "lowering"] == [None]
    assert {r["kind"] for r in prim["rules"]} > {"lowering"}  # other kinds stay


def test_gpu_alias_expands_through_the_trees_table(capsys):
    [prim] = run_json(capsys, "locate", "exp", "--kind", "lowering")["primitives"]
    [gpu] = [r for r in prim["rules"] if r["platform"] == "gpu"]
    assert gpu["platforms"] == ["cuda", "rocm"]
    code, out, err = run(capsys, "locate", "exp", "--platform", "rocm")
    assert "lowering[gpu: cuda, rocm]" in out


def test_a_librarys_gpu_lowering_serves_cuda_and_rocm(capsys, tmp_path):
    """A tree without jax's alias table: its `platform="gpu"` lowering is the one
    `--platform cuda` keeps, not the default one."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "ops.py").write_text(
        "from jax.extend.core import Primitive\nfrom jax.interpreters import mlir\n"
        "def _default(*a): pass\ndef _gpu(*a): pass\npair_p = Primitive('pair')\n"
        "mlir.register_lowering(pair_p, _default)\n"
        "mlir.register_lowering(pair_p, _gpu, platform='gpu')\n")
    for platform in ("cuda", "rocm", "gpu"):
        assert main(["locate", "pair", "--root", str(tmp_path), "--platform", platform,
                     "--json"]) == 0
        [prim] = json.loads(capsys.readouterr().out)["primitives"]
        assert [(r["platform"], r["platforms"]) for r in prim["rules"]] == [
            ("gpu", ["cuda", "rocm"])]


def test_primitives_text_has_a_platform_column(capsys):
    code, out, err = run(capsys, "primitives")
    assert code == 0, err
    [line] = [line for line in out.splitlines() if line.startswith("sin ")]
    assert line.endswith("[lowering: cpu default]")


def test_contradictory_filters_and_unknown_platforms_are_errors(capsys):
    code, out, err = run(capsys, "primitives", "--missing", "lowering", "--has", "lowering")
    assert_one_line_error(code, out, err)
    assert "no primitive can lack and have" in err
    code, out, err = run(capsys, "primitives", "--platform", "bogus")
    assert_one_line_error(code, out, err)
    assert "unknown platform 'bogus'" in err


# -- sized answers: --limit, --offset, --field, --max-chars ----------------------------


def test_json_prints_everything_by_default_and_says_so(capsys):
    document = run_json(capsys, "primitives")
    assert document["total"] == len(document["primitives"]) == 31
    assert document["offset"] == 0 and document["truncated"] is False
    assert document["next_offset"] is None


def test_limit_offset_and_fields_cut_the_json_to_one_page(capsys):
    whole = [p["name"] for p in run_json(capsys, "primitives")["primitives"]]
    page = run_json(capsys, "primitives", "--limit", "2", "--offset", "3", "--field", "name",
                    "--field", "line")
    assert page["primitives"] == [{"name": n, "line": page["primitives"][i]["line"]}
                                  for i, n in enumerate(whole[3:5])]
    assert list(page["primitives"][0]) == ["name", "line"]
    assert (page["total"], page["truncated"], page["next_offset"]) == (31, True, 5)


def test_max_chars_caps_the_answer(capsys):
    code, out, err = run(capsys, "primitives", "--json", "--max-chars", "4000")
    assert code == 0, err
    document = json.loads(out)
    assert len(out.rstrip("\n")) <= 4000 and document["truncated"]
    assert document["next_offset"] == len(document["primitives"]) >= 1


def test_locate_cuts_tests_and_reaches_to_the_limit(capsys):
    run(capsys, "index")  # the call graph, which tests and reaches come from
    whole = run_json(capsys, "locate", "psum")
    psum = whole["primitives"][0]
    assert psum["tests_total"] == len(psum["tests"]) >= 1
    cut = run_json(capsys, "locate", "psum", "--limit", "0")["primitives"][0]
    assert cut["tests"] == [] and cut["tests_total"] == psum["tests_total"]


def test_paging_options_without_json_are_a_one_line_error(capsys):
    # The text answers are whole: a --limit they would ignore is refused, not dropped.
    code, out, err = run(capsys, "primitives", "--limit", "2")
    assert_one_line_error(code, out, err)
    assert "page the JSON answer: add --json" in err


def test_an_unknown_field_is_a_one_line_error(capsys):
    assert_one_line_error(*run(capsys, "coverage", "--json", "--field", "nme"))


def test_a_usage_error_points_at_the_commands_help(capsys):
    code, out, err = run(capsys, "callers", "psum", "--limit", "abc")
    assert_one_line_error(code, out, err)
    assert err.rstrip().endswith("(see jaxmap callers --help)")


def test_an_option_missing_its_value_points_at_the_commands_help(capsys):
    code = main(["binds", "psum", "--depth"])  # (click's parser raises it with no context)
    out, err = capsys.readouterr()
    assert_one_line_error(code, out, err)
    assert err.rstrip().endswith("requires an argument. (see jaxmap binds --help)")


def test_a_commands_option_with_no_command_after_it_says_where_it_goes(capsys):
    code = main(["--json"])
    out, err = capsys.readouterr()
    assert_one_line_error(code, out, err)
    assert "no command follows it: jaxmap COMMAND ... --json" in err


@pytest.mark.parametrize("argv, said", [
    (["--json", "nosuchcmd"], "no command 'nosuchcmd'"),  # a command follows, unknown
    (["--bogus"], "No such option '--bogus'"),  # an option no command has
    (["--bogus", "locate", "psum"], "No such option '--bogus'"),
])
def test_a_wrong_word_before_the_command_is_named_for_what_it_is(capsys, argv, said):
    code = main(argv)
    out, err = capsys.readouterr()
    assert_one_line_error(code, out, err)
    assert said in err


@pytest.mark.parametrize("argv, said", [
    (["rules", "psum"], "no command 'rules'; `jaxmap locate PRIM` lists a primitive's rules"),
    (["caller", "psum"], "no command 'caller'; did you mean callers or calls?"),
    (["xyz"], "no command 'xyz' (see jaxmap --help)"),
    (["cov"], "no command 'cov'; did you mean coverage?"),  # a command it starts
    (["frobnicate"], "no command 'frobnicate' (see jaxmap --help)"),  # like no command
])
def test_an_unknown_command_says_which_answers_it(capsys, argv, said):
    code = main(argv)
    out, err = capsys.readouterr()
    assert_one_line_error(code, out, err)
    assert said in err


def test_locate_finds_a_hijax_class_by_the_name_new_primitive_was_given(tmp_path, capsys):
    (tmp_path / "my_hj.py").write_text(
        "from jax.experimental.hijax import VJPHiPrimitive\n\n\n"
        "class MyHj(VJPHiPrimitive):\n"
        "  def expand(self, x):\n    return x\n\n\n"
        "def my_hj(x):\n  return MyHj(x)(x)\n")
    for name in ("my_hj", "MyHj"):
        code = main(["locate", name, "--root", str(tmp_path), "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        prims = json.loads(out)["primitives"]
        assert [(p["name"], p["style"], p["line"]) for p in prims] == [("MyHj", "hijax", 4)]


def test_help_of_a_command_is_its_help(capsys):
    assert main(["locate", "--help"]) == 0
    asked = capsys.readouterr().out
    assert main(["help", "locate"]) == 0
    assert capsys.readouterr().out == asked
    assert main(["help"]) == 0
    assert "locate" in capsys.readouterr().out
    code = main(["help", "callee"])
    out, err = capsys.readouterr()
    assert_one_line_error(code, out, err)
    assert "did you mean callers or calls?" in err


@pytest.mark.parametrize("argv, kind, code", [
    (["locate", "psumm", "--json"], "not-found", 1),
    (["callers", "psum", "--limit", "abc", "--json"], "usage", 2),
    (["coverage", "--format", "json", "--kind", "nosuch"], "error", 2),
])
def test_a_json_error_is_a_json_object_on_stdout_beside_the_stderr_line(capsys, argv, kind,
                                                                        code):
    got, out, err = run(capsys, *argv)
    assert got == code
    assert len(err.strip().splitlines()) == 1 and err.startswith("jaxmap: ")
    error = json.loads(out)["error"]
    assert (error["kind"], error["exit_code"]) == (kind, code)
    assert error["message"] and error["message"] in err
    if kind == "not-found":
        assert error["suggestions"] == ["psum"]


def test_a_dotted_name_whose_prefix_names_nothing_is_not_read_as_its_last_part(capsys):
    code, out, err = run(capsys, "locate", "totally.bogus.sin")
    assert code == 1 and not out and err.count("\n") == 1
    assert "no module, class or alias is named 'totally.bogus'" in err
    assert run(capsys, "locate", "jax.lax.sin_p")[0] == 0  # a module's: the primitive


def test_a_dotted_name_whose_prefix_is_a_module_outside_the_tree_names_nothing(
        capsys, tmp_path):
    """`np` is numpy, outside the tree, even where a module's variable holds it:
    `np.cumsum` is not jax's cumsum primitive."""
    sources = {"jax/__init__.py": "",
               "jax/_src/__init__.py": "",
               "jax/_src/core.py": "class Primitive:\n    def __init__(self, name): pass\n",
               "jax/_src/loops.py": "from jax._src import core\n"
                                    "cumsum_p = core.Primitive('cumsum')\n",
               "jax/_src/generated.py": "from flatbuffers.compat import import_numpy\n"
                                        "np = import_numpy()\n"}
    for path, text in sources.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    code = main(["locate", "np.cumsum", "--root", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 1 and not out and err.count("\n") == 1
    assert "nothing named 'np.cumsum'" in err and "is named 'np'" in err, err
    for known in ("loops.cumsum_p", "jax._src.loops.cumsum_p", "cumsum"):
        assert main(["locate", known, "--root", str(tmp_path)]) == 0, known
        assert "primitive cumsum" in capsys.readouterr().out


def test_a_dotted_name_whose_module_holds_no_such_primitive_names_nothing(capsys, tmp_path):
    """`jnp.psum` and `jax.random.psum` name modules of the tree, neither of which holds
    psum: they are not the psum primitive, which `lax.psum` and its variable are."""
    sources = {"jax/__init__.py": "",
               "jax/_src/__init__.py": "",
               "jax/_src/core.py": "class Primitive:\n    def __init__(self, name): pass\n",
               "jax/_src/parallel.py": "from jax._src import core\n"
                                       "psum_p = core.Primitive('psum')\n"
                                       "sum_p = core.Primitive('sum')\n"
                                       "def psum(x):\n    return psum_p.bind(x)\n",
               "jax/lax/__init__.py": "from jax._src.parallel import psum, psum_p, sum_p\n",
               "jax/numpy/__init__.py": "def sum(x):\n    return x\n",
               "jax/random.py": "def key(seed):\n    return seed\n"}
    for path, text in sources.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    for query, module in (("jnp.psum", "jnp"), ("jax.random.psum", "jax.random")):
        code = main(["locate", query, "--root", str(tmp_path)])
        out, err = capsys.readouterr()
        assert code == 1 and not out and err.count("\n") == 1, (query, out)
        assert f"nothing named {query!r}" in err and f"{module} holds no psum" in err, err
        assert re.search(r"did you mean: [\w.]*\.psum\b", err), err
    # a variable's spelling: jax.numpy's function `sum` is no `sum_p` of it
    assert main(["locate", "jnp.sum_p", "--root", str(tmp_path)]) == 1
    assert "jnp holds no sum_p" in capsys.readouterr().err
    assert main(["locate", "lax.sum_p", "--root", str(tmp_path)]) == 0
    assert "primitive sum " in capsys.readouterr().out
    for known in ("psum", "psum_p", "lax.psum", "jax.lax.psum", "lax.psum_p",
                  "jax._src.parallel.psum_p"):
        assert main(["locate", known, "--root", str(tmp_path)]) == 0, known
        assert "psum" in capsys.readouterr().out.splitlines()[0], known


def test_a_commands_options_given_before_its_name_are_read_after_it(tmp_path, monkeypatch,
                                                                   capsys):
    tree = tmp_path / "lib"
    tree.mkdir()
    (tree / "ops.py").write_text("from jax._src import core\nneg_p = core.Primitive('neg')\n"
                                 "neg_p.def_impl(lambda x: -x)\n")
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "cache"))
    after = CliRunner().invoke(cli, ["primitives", "--root", str(tree), "--json"])
    before = CliRunner().invoke(cli, ["--root", str(tree), "--json", "primitives"])
    assert after.exit_code == 0 and before.exit_code == 0
    assert before.output == after.output and '"neg"' in before.output
    # a flag, then an option with a value
    flagged = CliRunner().invoke(cli, ["--json", "--root", str(tree), "primitives"])
    assert flagged.exit_code == 0 and flagged.output == after.output
    assert main(["--root", str(tree)]) != 0
    assert "no command follows it" in capsys.readouterr().err


def test_a_name_a_package_imports_is_found_through_it(tmp_path, monkeypatch, capsys):
    # `mylib.make` and `mylib.helper` are what mylib/__init__.py imports, not written
    # as re-exports: found at their definitions, for locate and for callers alike.
    package = tmp_path / "lib" / "mylib"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from mylib.factory import make, helper\n")
    (package / "factory.py").write_text("def helper(x): return x\n"
                                        "def make(x): return helper(x)\n")
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "cache"))
    root = str(tmp_path / "lib")
    assert main(["locate", "mylib.make", "--root", root]) == 0
    assert "function mylib.factory.make  mylib/factory.py:2" in capsys.readouterr().out
    assert main(["callers", "mylib.helper", "--root", root]) == 0
    assert "mylib.factory.make" in capsys.readouterr().out
    assert main(["locate", "mylib.absent", "--root", root]) != 0

"""`jaxmap new-primitive` as a library: generated primitives pass their own tests,
in and out of tree; bad input is one line and writes nothing."""

from __future__ import annotations

import os
import re

import pytest
from scaffold_cases import BAD_PARAMS, BAD_SPECS, CASES
from scaffold_run import expect_clean_pass, lint, run_pytest

from jaxmap.errors import JaxmapError
from jaxmap.knowledge import versions
from jaxmap.scaffold import (
    NameTaken,
    PrimitiveSpec,
    SpecError,
    TargetError,
    UnsupportedRelease,
    apply,
    generate,
    notes,
    parse_params,
    unified_diff,
)


@pytest.fixture
def shared_index(installed_index, monkeypatch):
    """Name checks against the installed jax reuse the session's index."""
    monkeypatch.setenv("JAXMAP_CACHE_DIR", os.path.dirname(installed_index.path))


# -- out of tree: the option matrix ------------------------------------------------------

def test_generated_matrix_passes_its_own_tests(tmp_path, shared_index):
    for spec in CASES:
        apply(generate(spec, out=str(tmp_path)))
    assert len(list(tmp_path.glob("test_*.py"))) == len(CASES)
    lint(tmp_path, sorted(tmp_path.glob("*.py")))
    expect_clean_pass(run_pytest(tmp_path))


@pytest.mark.parametrize("spec", CASES, ids=lambda s: s.name)
def test_generated_code_follows_house_style(spec, shared_index, tmp_path):
    files = {c.label: c.new for c in generate(spec, out=str(tmp_path))}
    module = files[f"{spec.name}.py"]
    for label, text in files.items():
        compile(text, label, "exec")
        long = [line for line in text.splitlines() if len(line) > 80]
        assert not long, long
        assert "\t" not in text
    assert "jax._src" not in module
    assert module.count("# TODO(jaxmap):") >= 3
    if spec.style == "classic":
        assert f"{spec.name}_p = core.Primitive('{spec.name}')" in module
        assert f"def _{spec.name}_abstract_eval(" in module
    else:
        assert f"class {spec.class_name}(VJPHiPrimitive):" in module
    assert re.search(rf"^def {spec.name}\(", module, re.MULTILINE)


@pytest.mark.parametrize("spec, release, fragment", [
    (PrimitiveSpec("jm_h", style="hijax"), "0.5.3",
     "--style hijax needs jax 0.9.0 or newer; the target is jax 0.5.3"),
    (PrimitiveSpec("jm_h", style="hijax", linear=True), "0.9.0",
     "--style hijax --linear needs jax 0.9.2 or newer; the target is jax 0.9.0"),
], ids=["hijax", "hijax-linear"])
def test_a_style_the_release_lacks_is_refused(spec, release, fragment, tmp_path):
    with pytest.raises(UnsupportedRelease) as error:
        generate(spec, out=str(tmp_path), release=versions.release(release))
    assert str(error.value) == fragment
    _assert_one_line_and_nothing_written(error, tmp_path)


@pytest.mark.parametrize("release, present, absent", [
    ("0.4.30", ["batching.primitive_batchers[", "mlir.aval_to_ir_type(aval)"],
     ["fancy_primitive_batchers"]),
    ("0.10.2", ["batching.fancy_primitive_batchers[",
                "mlir.aval_to_ir_type(ctx.module_context, aval)"], ["primitive_batchers["]),
])
def test_the_module_follows_the_release_table(release, present, absent, tmp_path,
                                               shared_index):
    spec = PrimitiveSpec("jm_rel", arity=2, lowering="hlo")
    changes = generate(spec, out=str(tmp_path), release=versions.release(release))
    module = changes[0].new
    assert all(text in module for text in present), module
    assert not any(f"batching.{text}" in module for text in absent), module


@pytest.mark.parametrize("release, present, absent", [
    ("0.5.3", ["from jax.experimental import shard_map\n",
               ("shard_map.register_standard_check(jm_rel_p)\n"
                "shard_map.register_standard_rewrite(jm_rel_p)\n")], ["check_rep=False"]),
    ("0.6.0", ["pass `check_rep=False` to\n`shard_map`"], ["shard_map."]),
    ("0.6.2", [], ["shard_map.", "check_rep"]),
])
def test_the_module_registers_what_the_releases_shard_map_checks(release, present, absent,
                                                                 tmp_path, shared_index):
    for spec in (PrimitiveSpec("jm_rel"), PrimitiveSpec("jm_rel", multiple_results=True)):
        module = generate(spec, out=str(tmp_path), release=versions.release(release))[0].new
        assert all(text in module for text in present), module
        assert not any(text in module for text in absent), module
        assert not [line for line in module.splitlines() if len(line) > 80], module


@pytest.mark.parametrize("release, fragment", [
    ("0.5.3", "from jax.experimental.shard_map import shard_map"),
    ("0.5.3", "shard_map(grad, mesh=mesh, in_specs=specs, out_specs=specs)\n"),
    ("0.5.3", 'pytest.importorskip(\n      "absl"'),
    ("0.6.0", "# What the module docstring tells users to pass in jax 0.6.0.\n"),
    ("0.6.0", "out_specs=specs,\n                           check_rep=False)"),
    ("0.12.0.1", "jax.shard_map(grad,"),
])
def test_the_tests_follow_the_release_table(release, fragment, tmp_path, shared_index):
    changes = generate(PrimitiveSpec("jm_rel"), out=str(tmp_path),
                       release=versions.release(release))
    assert fragment in changes[1].new, changes[1].new


@pytest.mark.parametrize("release, count", [("0.5.3", 0), ("0.6.0", 1), ("0.6.1", 0)])
def test_a_release_that_fails_grad_inside_shard_map_gets_one_line(release, count):
    lines = notes(release=versions.release(release))
    assert len(lines) == count and all("\n" not in line for line in lines), lines
    assert all(line.endswith("pass check_rep=False to shard_map there") for line in lines)


def test_hijax_base_class_follows_the_release(tmp_path, shared_index):
    for release, base in [("0.10.2", "VJPHiPrimitive"), ("0.12.0.1", "HiPrim")]:
        (module, _) = generate(PrimitiveSpec("jm_hj", style="hijax"), out=str(tmp_path),
                               release=versions.release(release))
        assert f"from jax.experimental.hijax import {base}," in module.new
        assert f"class JmHj({base}):" in module.new


def test_no_tests_generates_the_module_only(tmp_path, shared_index):
    changes = generate(PrimitiveSpec("jm_alone", tests=False), out=str(tmp_path))
    assert [c.label for c in changes] == ["jm_alone.py"]


def test_dry_run_is_a_diff_and_writes_nothing(tmp_path, shared_index):
    out = tmp_path / "pkg"
    changes = generate(PrimitiveSpec("jm_dry", arity=2), out=str(out))
    diff = unified_diff(changes)
    assert "--- /dev/null\n+++ b/jm_dry.py\n" in diff
    assert "+jm_dry_p = core.Primitive('jm_dry')" in diff
    assert not out.exists()


def test_existing_file_needs_force(tmp_path, shared_index):
    target = tmp_path / "jm_keep.py"
    target.write_text("mine\n")
    changes = generate(PrimitiveSpec("jm_keep"), out=str(tmp_path))
    assert [c.action for c in changes] == ["overwrite", "create"]
    with pytest.raises(TargetError, match="--force"):
        apply(changes)
    assert target.read_text() == "mine\n"
    assert not (tmp_path / "test_jm_keep.py").exists()
    assert "-mine" in unified_diff(changes)
    apply(changes, force=True)
    assert "jm_keep_p" in target.read_text()
    assert not list(tmp_path.glob(".jaxmap-*"))


# -- bad input ---------------------------------------------------------------------------

def _assert_one_line_and_nothing_written(error, directory):
    message = str(error.value)
    assert isinstance(error.value, JaxmapError)
    assert message and "\n" not in message
    assert not os.path.exists(directory) or not os.listdir(directory)


@pytest.mark.parametrize("kwargs, fragment", BAD_SPECS, ids=lambda v: str(v)[:40])
def test_bad_spec_is_one_line_and_writes_nothing(kwargs, fragment, tmp_path):
    with pytest.raises(SpecError, match=re.escape(fragment)) as error:
        generate(PrimitiveSpec(**kwargs), out=str(tmp_path))
    _assert_one_line_and_nothing_written(error, tmp_path)


@pytest.mark.parametrize("text", BAD_PARAMS)
def test_bad_params_syntax(text):
    with pytest.raises(SpecError, match="key=type") as error:
        parse_params(text)
    assert "\n" not in str(error.value)


def test_params_parse():
    assert parse_params(" scale=float, n=int ") == (("scale", "float"), ("n", "int"))
    assert parse_params("") == ()


@pytest.mark.parametrize("name, style", [("sin", "classic"), ("psum", "classic"),
                                          ("sin", "hijax")])
def test_name_of_an_installed_jax_primitive_is_taken(name, style, tmp_path,
                                                     shared_index):
    with pytest.raises(NameTaken, match="already exists at jax/") as error:
        generate(PrimitiveSpec(name, style=style), out=str(tmp_path))
    _assert_one_line_and_nothing_written(error, tmp_path)


def test_out_that_is_a_file(tmp_path, shared_index):
    target = tmp_path / "afile"
    target.write_text("")
    with pytest.raises(TargetError, match="is a file") as error:
        generate(PrimitiveSpec("jm_x"), out=str(target))
    assert "\n" not in str(error.value)


def test_unwritable_directory(tmp_path, shared_index, monkeypatch):
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if str(path) == str(
        tmp_path) else real_access(path, mode))
    with pytest.raises(TargetError, match="not writable") as error:
        generate(PrimitiveSpec("jm_x"), out=str(tmp_path / "sub"))
    _assert_one_line_and_nothing_written(error, tmp_path)


def test_module_without_in_tree_is_an_error(tmp_path):
    with pytest.raises(SpecError, match="--in-tree"):
        generate(PrimitiveSpec("jm_x"), out=str(tmp_path), module="jax/_src/x.py")


# -- the command line -------------------------------------------------------------------

def test_cli_dry_run_prints_the_diff_and_writes_nothing(tmp_path, shared_index, capsys):
    from jaxmap.cli import main

    out = tmp_path / "pkg"
    assert main(["new-primitive", "jm_cli_prim", "--out", str(out), "--arity", "2",
                 "--dry-run"]) == 0
    captured = capsys.readouterr()
    assert "+++ b/jm_cli_prim.py" in captured.out and "+++ b/test_jm_cli_prim.py" in captured.out
    assert "jm_cli_prim_p = core.Primitive('jm_cli_prim')" in captured.out
    assert "nothing written" in captured.err and not out.exists()


def test_cli_written_names_new_files_and_shows_the_diff_of_a_file_it_replaces(
        tmp_path, shared_index, capsys):
    from jaxmap.cli import main

    out = tmp_path / "pkg"
    assert main(["new-primitive", "jm_cli_new", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "wrote 2 files" in captured.err  # new: named, no diff
    (out / "jm_cli_new.py").write_text("mine\n")
    assert main(["new-primitive", "jm_cli_new", "--out", str(out), "--force"]) == 0
    captured = capsys.readouterr()
    assert "-mine" in captured.out and "+++ b/test_jm_cli_new.py" not in captured.out


@pytest.mark.parametrize("argv", [["new-primitive", "jm_note"], ["new", "primitive", "jm_note"]])
def test_cli_says_the_notes_of_the_target_release(argv, tmp_path, shared_index, capsys,
                                                   monkeypatch):
    import json

    from jaxmap.cli import main

    monkeypatch.setattr(versions, "installed", lambda: versions.release("0.6.0"))
    out = ["--out", str(tmp_path), "--dry-run"]
    assert main([*argv, *out]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == f"note: {notes(release=versions.release('0.6.0'))[0]}", err
    assert main([*argv, *out, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["notes"] == [err[-1][len("note: "):]]
    monkeypatch.setattr(versions, "installed", lambda: versions.release("0.6.2"))
    assert main([*argv, *out]) == 0
    assert "note:" not in capsys.readouterr().err


def test_cli_json_lists_each_file_with_its_diff(tmp_path, shared_index, capsys):
    import json

    from jaxmap.cli import main

    out = tmp_path / "pkg"
    argv = ["new-primitive", "jm_json_prim", "--out", str(out), "--json"]
    assert main([*argv, "--dry-run"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["dry_run"] is True and not out.exists()
    assert main(argv) == 0
    written = json.loads(capsys.readouterr().out)
    assert written["dry_run"] is False and written["name"] == "jm_json_prim"
    assert [(f["label"], f["action"]) for f in written["files"]] == \
        [("jm_json_prim.py", "create"), ("test_jm_json_prim.py", "create")]
    for entry in written["files"]:
        lines = (out / entry["label"]).read_text().splitlines()
        assert entry["diff"].startswith(f"--- /dev/null\n+++ b/{entry['label']}\n")
        assert [line[1:] for line in entry["diff"].splitlines()[3:]] == lines
        assert entry["path"] == str(out / entry["label"])


@pytest.mark.parametrize("argv, fragment", [
    (["new-primitive", "class"], "keyword"),
    (["new-primitive", "psum"], "already exists"),
    (["new-primitive", "ok_name", "--module", "jax/_src/lax/lax.py"], "--in-tree"),
])
def test_cli_errors_are_one_line(argv, fragment, tmp_path, shared_index, capsys):
    from jaxmap.cli import main

    assert main([*argv, "--out", str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("jaxmap: ") and fragment in err
    assert not (tmp_path / "out").exists()

"""`jaxmap new KIND`: every kind generates, and its own tests pass in a subprocess."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from jaxmap.errors import JaxmapError
from jaxmap.knowledge import backends, rungs
from jaxmap.knowledge.rungs import rung_of
from jaxmap.knowledge.versions import UnsupportedRelease
from jaxmap.scaffold import apply, kinds

# (kind, name, style): every kind and style, with names that cannot clash in one directory.
CASES = list(rungs.examples("jm_", every_style=True))
# The only skips a CPU run may report, each with the reason the test gives.
EXPECTED_SKIPS = {"compiled kernels need a GPU or TPU"}
if shutil.which("c++") is None and shutil.which("g++") is None and shutil.which("clang++") is None:
    EXPECTED_SKIPS.add("no C++ compiler")


@pytest.fixture
def shared_index(installed_index, monkeypatch):
    """`primitive` checks its name against the installed jax: reuse the session's index."""
    monkeypatch.setenv("JAXMAP_CACHE_DIR", os.path.dirname(installed_index.path))


def _generate_all(directory) -> list:
    changes = [c for kind, name, style in CASES
               for c in kinds.generate(kind, name, out=str(directory), style=style)]
    apply(changes)
    return changes


def test_every_kind_passes_its_own_tests(tmp_path, shared_index):
    _generate_all(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-rs", "-p", "no:cacheprovider",
         "-p", "no:asyncio", "-W", "error::DeprecationWarning", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, timeout=600, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert "passed" in summary and "failed" not in summary and "warning" not in summary, output
    for skip in re.findall(r"^SKIPPED \[\d+\] \S+: (.*)$", result.stdout, re.MULTILINE):
        assert any(reason in skip for reason in EXPECTED_SKIPS), skip
    for _, name, _ in CASES:
        assert re.search(rf"^test_{name}\.py::\S+ PASSED", result.stdout, re.MULTILINE), name


@pytest.mark.parametrize("kind, name, style", CASES[:-1], ids=lambda v: str(v))
def test_module_opens_with_its_rung_and_marks_the_math(kind, name, style, tmp_path):
    files = {c.label: c.new for c in kinds.generate(kind, name, out=str(tmp_path), style=style)}
    module = files[f"{name}.py"]
    doc = ast.get_docstring(ast.parse(module))
    rung = rung_of(kind)
    assert f"Rung {rung.number} of the escalation ladder: {rung.title}." in doc
    assert "Use it when:" in doc and "Not when:" in doc
    sources = [text for path, text in files.items() if not path.startswith("test_")]
    assert all(re.search(r"(#|//) TODO\(jaxmap\): ", text) for text in sources)
    assert set(files) >= {f"{name}.py", f"test_{name}.py"}


@pytest.mark.parametrize("version", ["0.4.38", "0.6.2", "0.10.2", "0.12.0.1"])
def test_generated_lines_fit_80_columns(version, tmp_path):
    for kind, name, style in CASES[:-1]:
        try:
            changes = kinds.generate(kind, name, out=str(tmp_path), style=style,
                                     jax_version=version)
        except UnsupportedRelease:
            continue
        for change in changes:
            long = [line for line in change.new.splitlines() if len(line) > 80]
            assert not long, (change.label, long)


@pytest.mark.parametrize("kind, name, style", CASES[:-1], ids=lambda v: str(v))
def test_generated_python_is_clean_under_ruff(kind, name, style, tmp_path):
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed")
    apply(kinds.generate(kind, name, out=str(tmp_path), style=style))
    # From the output directory, as a user would: the generated modules are first-party.
    result = subprocess.run([ruff, "check", "--no-cache", "--isolated", "."], cwd=tmp_path,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout


def test_ffi_writes_its_cpp_source(tmp_path):
    files = {c.label for c in kinds.generate("ffi", "jm_ffi", out=str(tmp_path))}
    assert files == {"jm_ffi.py", "test_jm_ffi.py", "jm_ffi.cc"}


def test_primitive_is_new_primitive(tmp_path, shared_index):
    from jaxmap.scaffold import PrimitiveSpec, generate

    ours = kinds.generate("primitive", "jm_same", out=str(tmp_path))
    theirs = generate(PrimitiveSpec(name="jm_same"), out=str(tmp_path))
    assert [(c.label, c.new) for c in ours] == [(c.label, c.new) for c in theirs]


# -- what each release gets ---------------------------------------------------------------

@pytest.mark.parametrize("kind, style, version, first", [
    ("pallas", None, "0.4.30", "0.4.31"),
    ("ffi", None, "0.4.38", "0.5.0"),
    ("custom-vjp", "hijax", "0.8.3", "0.9.0"),
])
def test_a_release_without_the_kind_is_refused_with_the_first_that_has_it(
        kind, style, version, first, tmp_path):
    with pytest.raises(UnsupportedRelease, match=rf"needs jax {re.escape(first)} or newer"):
        kinds.generate(kind, "jm_old", out=str(tmp_path), style=style, jax_version=version)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("version, present, absent", [
    ("0.6.2", "infer_sharding_from_operands=", "sharding_rule="),
    ("0.10.2", "sharding_rule=", "infer_sharding_from_operands="),
])
def test_custom_partitioning_follows_the_partitioner(version, present, absent, tmp_path):
    module = kinds.generate("custom-partitioning", "jm_cp", out=str(tmp_path),
                            jax_version=version)[0].new
    assert present in module and absent not in module
    compile(module, "jm_cp.py", "exec")


@pytest.mark.parametrize("version, needed", [("0.4.30", True), ("0.4.38", False)])
def test_custom_partitioning_tests_enter_the_mesh_where_the_release_needs_it(
        version, needed, tmp_path):
    test = kinds.generate("custom-partitioning", "jm_cp", out=str(tmp_path),
                          jax_version=version)[1].new
    assert ("  with mesh:" in test) == needed


@pytest.mark.parametrize("version, backend, other", [
    ("0.10.2", "pallas import triton", "mosaic_gpu"),
    ("0.11.1", "pallas import mosaic_gpu", "triton as"),
])
def test_pallas_gpu_backend_follows_the_release(version, backend, other, tmp_path):
    module = kinds.generate("pallas", "jm_pl", out=str(tmp_path), jax_version=version)[0].new
    assert backend in module and other not in module


@pytest.mark.parametrize("version, wrapper", [("0.6.2", "@jax.custom_vjp"),
                                              ("0.10.2", "(VJPHiPrimitive):")])
def test_ffi_is_made_transformable_the_releases_way(version, wrapper, tmp_path):
    module = kinds.generate("ffi", "jm_ffi", out=str(tmp_path), jax_version=version)[0].new
    assert wrapper in module
    assert ('vmap_method="broadcast_all"' in module) == (version == "0.6.2")


def test_hijax_base_class_follows_the_release(tmp_path):
    module = kinds.generate("custom-vjp", "jm_h", out=str(tmp_path), style="hijax",
                            jax_version="0.12.0.1")[0].new
    assert "from jax.experimental.hijax import HiPrim\n" in module
    assert "VJPHiPrimitive" not in module


# -- writing, refusing ---------------------------------------------------------------------

def test_dry_run_prints_a_diff_and_writes_nothing(tmp_path, capsys):
    from jaxmap.cli import main

    assert main(["new", "export", "jm_dry", "--out", str(tmp_path), "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert "+++ b/jm_dry.py" in out and "would write 2 files" in err
    assert list(tmp_path.iterdir()) == []


def test_json_lists_each_file(tmp_path, capsys):
    from jaxmap.cli import main

    assert main(["new", "ffi", "jm_js", "--out", str(tmp_path), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["name"] == "jm_js" and not document["dry_run"]
    assert {f["label"] for f in document["files"]} == {"jm_js.py", "test_jm_js.py", "jm_js.cc"}
    assert all(f["action"] == "create" and f["diff"] for f in document["files"])
    assert sorted(os.listdir(tmp_path)) == ["jm_js.cc", "jm_js.py", "test_jm_js.py"]


def test_existing_files_need_force(tmp_path, capsys):
    from jaxmap.cli import main

    (tmp_path / "jm_f.py").write_text("mine\n")
    assert main(["new", "custom-jvp", "jm_f", "--out", str(tmp_path)]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert (tmp_path / "jm_f.py").read_text() == "mine\n"
    assert not (tmp_path / "test_jm_f.py").exists()
    assert main(["new", "custom-jvp", "jm_f", "--out", str(tmp_path), "--force"]) == 0
    assert "custom_jvp" in (tmp_path / "jm_f.py").read_text()


@pytest.mark.parametrize("argv, fragment", [
    (["new", "custom-hessian", "jm_x"], "unknown kind 'custom-hessian'"),
    (["new", "export", "2fast"], "must be a Python identifier"),
    (["new", "export", "class"], "must be a Python identifier"),
    (["new", "pallas", "jax"], "would shadow"),
    (["new", "custom-jvp", "testy"], "pytest would collect"),
    (["new", "custom-vjp", "conftest"], "pytest's plugin module"),
    (["new", "export", "opt_einsum"], "a module that opt_einsum installs"),
    (["new", "export", "jm_x", "--style", "hijax"], "export has no style 'hijax'"),
    (["new", "ffi", "jm_x", "--backend", "tpu"], "cannot run on tpu; it runs on cpu, gpu"),
])
def test_bad_input_is_one_line(argv, fragment, tmp_path, capsys):
    from jaxmap.cli import main

    assert main(argv + ["--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("backend", backends.BACKENDS)
def test_each_backend_accepts_the_kinds_that_run_there(backend, tmp_path):
    for kind, name, style in CASES[:-1]:
        if backend in rungs.KINDS[kind].backends:
            assert kinds.generate(kind, name, out=str(tmp_path), style=style, backend=backend)
        else:
            with pytest.raises(JaxmapError, match=f"cannot run on {backend}"):
                kinds.generate(kind, name, out=str(tmp_path), style=style, backend=backend)


@pytest.mark.parametrize("kind, name, style", CASES[:-1], ids=lambda v: str(v))
def test_generated_tests_carry_the_tolerance_tables(kind, name, style, tmp_path):
    """The tables a generated test reads at run time are jaxmap's, every backend's."""
    files = {c.label: c.new for c in kinds.generate(kind, name, out=str(tmp_path), style=style)}
    assigned = {node.targets[0].id: ast.literal_eval(node.value)
                for node in ast.parse(files[f"test_{name}.py"]).body
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in ("TOLERANCES", "GRAD_CHECKS")}
    assert assigned["TOLERANCES"] == backends.TOLERANCES
    if "_check_grads(" in files[f"test_{name}.py"]:
        assert assigned["GRAD_CHECKS"] == backends.GRAD_CHECKS
    assert "rtol=1e" not in files[f"test_{name}.py"]


def test_every_backend_compares_float32():
    for table in (backends.TOLERANCES, backends.GRAD_CHECKS):
        assert set(table) == set(backends.BACKENDS)
        assert all("float32" in row for row in table.values())


def test_out_that_is_a_file(tmp_path):
    target = tmp_path / "file"
    target.write_text("")
    with pytest.raises(JaxmapError, match="is a file"):
        kinds.generate("export", "jm_x", out=str(target))

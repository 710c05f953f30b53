"""`jaxmap new-primitive` as a library: generated primitives pass their own tests,
in and out of tree; bad input is one line and writes nothing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from scaffold_cases import BAD_PARAMS, BAD_SPECS, CASES

from jaxmap.errors import JaxmapError
from jaxmap.scaffold import (
    AnchorError,
    NameTaken,
    PrimitiveSpec,
    SpecError,
    TargetError,
    apply,
    generate,
    parse_params,
    unified_diff,
)


@pytest.fixture
def shared_index(installed_index, monkeypatch):
    """Name checks against the installed jax reuse the session's index."""
    monkeypatch.setenv("JAXMAP_CACHE_DIR", os.path.dirname(installed_index.path))


def _run_pytest(directory, env=None):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-W", "error::DeprecationWarning", "-rs", str(directory)],
        capture_output=True, text=True, cwd=directory, env=env, timeout=600,
        check=False)


def _expect_clean_pass(result):
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert "passed" in summary and "failed" not in summary, summary
    if _has_flatbuffers():
        assert "skipped" not in summary, result.stdout[-2000:]
    assert "warning" not in summary, result.stdout[-4000:]


def _has_flatbuffers():
    import importlib.util

    return importlib.util.find_spec("flatbuffers") is not None


# -- out of tree: the option matrix ------------------------------------------------------

def test_generated_matrix_passes_its_own_tests(tmp_path, shared_index):
    for spec in CASES:
        apply(generate(spec, out=str(tmp_path)))
    assert len(list(tmp_path.glob("test_*.py"))) == len(CASES)
    _expect_clean_pass(_run_pytest(tmp_path))


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


# -- in tree -----------------------------------------------------------------------------

def _mini_tree(root, lax_init="from jax._src.lax.lax import (\n  add as add,\n)\n"):
    (root / "jax" / "lax").mkdir(parents=True)
    (root / "jax" / "_src" / "lax").mkdir(parents=True)
    (root / "jax" / "__init__.py").write_text("")
    (root / "jax" / "lax" / "__init__.py").write_text(lax_init)
    (root / "jax" / "_src" / "lax" / "lax.py").write_text(
        '"""lax."""\n\nimport numpy as np\n\nfrom jax._src import core\n\n\n'
        'def add(x, y):\n  return x + y\n')
    (root / "tests").mkdir()
    return root


def _snapshot(root):
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_in_tree_missing_anchor_changes_nothing(tmp_path):
    root = _mini_tree(tmp_path / "tree", lax_init="__all__ = []\n")
    before = _snapshot(root)
    with pytest.raises(AnchorError, match="no top-level import") as error:
        generate(PrimitiveSpec("jm_x"), in_tree_root=str(root))
    assert "\n" not in str(error.value)
    assert _snapshot(root) == before


def test_in_tree_hijax_is_refused(tmp_path):
    root = _mini_tree(tmp_path / "tree")
    with pytest.raises(SpecError, match="classic"):
        generate(PrimitiveSpec("jm_x", style="hijax"), in_tree_root=str(root))


def test_in_tree_existing_module_gets_minimal_insertions(tmp_path):
    root = _mini_tree(tmp_path / "tree")
    lax_py = root / "jax" / "_src" / "lax" / "lax.py"
    old = lax_py.read_text()
    changes = generate(PrimitiveSpec("jm_into", arity=2), in_tree_root=str(root),
                       module="jax._src.lax.lax")
    labels = [c.label for c in changes]
    assert labels == ["jax/_src/lax/lax.py", "jax/lax/__init__.py",
                      "tests/jm_into_test.py"]
    assert [c.action for c in changes] == ["edit", "edit", "create"]
    new = changes[0].new
    assert new.startswith('"""lax."""\n\nimport numpy as np\n\nfrom jax._src import core\n'
                          'from functools import partial\n')
    assert new.count("from jax._src import core\n") == 1
    assert _only_insertions(old, new)
    assert "jm_into_p = core.Primitive('jm_into')" in new
    assert changes[1].new.endswith("from jax._src.lax.lax import (\n  jm_into as jm_into,\n"
                                   "  jm_into_p as jm_into_p,\n)\n")
    with pytest.raises(NameTaken, match="already defines add"):
        generate(PrimitiveSpec("add"), in_tree_root=str(root), module="jax/_src/lax/lax.py")


def _only_insertions(old, new):
    import difflib

    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines())
    return {op for op, *_ in matcher.get_opcodes()} <= {"equal", "insert"}


def _copy_installed_jax(root):
    import jax

    shutil.copytree(jax.__path__[0], root / "jax",
                    ignore=shutil.ignore_patterns("__pycache__"))


IN_TREE = [PrimitiveSpec("jm_fused", arity=2, params=(("scale", "float"),),
                         platforms=("cuda", "tpu")),
           PrimitiveSpec("jm_fused_linear", arity=2, linear=True, lowering="hlo")]


def test_in_tree_in_a_copy_of_installed_jax(tmp_path):
    from jaxmap.locate import open_index

    root, tests = tmp_path / "root", tmp_path / "tests"
    tests.mkdir()
    _copy_installed_jax(root)
    for spec in IN_TREE:
        changes = generate(spec, in_tree_root=str(root), tests_dir=str(tests))
        assert "+++ b/jax/lax/__init__.py" in unified_diff(changes)
        apply(changes)
    env = {**os.environ, "PYTHONPATH": str(root)}
    code = "import jax, jax.lax as l; print(jax.__file__, l.jm_fused, l.jm_fused_linear_p)"
    check = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, cwd=tmp_path, check=False)
    assert check.returncode == 0 and str(root) in check.stdout, check.stderr
    _expect_clean_pass(_run_pytest(tests, env=env))
    with open_index(str(root)) as index:
        for spec in IN_TREE:
            (prim,) = index.locate(spec.name, "primitive").primitives
            kinds = {(r.kind.value, r.platform) for r in prim.rules}
            expected = {("impl", None), ("abstract_eval", None), ("jvp", None),
                        ("batching", None), ("lowering", None)}
            expected |= {("lowering", p) for p in spec.platforms}
            if spec.linear:
                expected.add(("transpose", None))
            assert expected <= kinds, kinds
            assert prim.loc.file == f"jax/_src/lax/{spec.name}.py"
        (public,) = [d for d in index.locate("jm_fused").definitions
                     if d.kind.value == "function"]
        assert "jax.lax.jm_fused" in public.public_paths
    with pytest.raises(NameTaken, match="already"):
        generate(IN_TREE[0], in_tree_root=str(root), tests_dir=str(tests))


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

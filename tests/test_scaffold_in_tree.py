"""`jaxmap new-primitive --in-tree`: a JAX commit's worth of edits, each an
insertion at an anchor; a missing anchor changes nothing."""

from __future__ import annotations

import datetime
import difflib
import os
import shutil
import subprocess
import sys

import pytest
from scaffold_run import expect_clean_pass, run_pytest

from jaxmap.commands.locate import locate
from jaxmap.scaffold import (
    AnchorError,
    NameTaken,
    PrimitiveSpec,
    SpecError,
    TargetError,
    apply,
    generate,
    unified_diff,
)

LAX_INIT = ("from jax._src.lax.lax import (\n  add as add,\n  mul as mul,\n)\n"
            "from jax._src.lax.other import thing as thing\n")
LAX_PY = ('"""lax."""\n\nfrom functools import partial, reduce\nimport numpy as np\n\n'
          'from jax._src import core\n\n\ndef add(x, y):\n  return x + y\n\n\n'
          'def sin(x):\n  return x\n\n\ndef cos(x):\n  return x\n')
DOCS = ("jax.lax module\n==============\n\nOperators\n---------\n\n.. autosummary::\n"
        "  :toctree: _autosummary\n\n    abs\n    add\n    zeta\n\nOther\n-----\n")
CHANGELOG = "# Change log\n\n## Unreleased\n\n* Changes\n  * Something.\n\n## JAX 0.11.1\n"
BUILD = ('load("//jaxlib:jax.bzl", "jax_multiplatform_test", "py_deps")\n\n'
         'jax_multiplatform_test(\n    name = "a_test",\n    srcs = ["a_test.py"],\n)\n\n'
         'py_test(name = "b")\n')

# A shard_map module of a release that checks replication: rules for lax's modules
# in a loop, one more by name after it.
SHARD_MAP = ("import itertools as it\n\nfrom jax._src import core\n"
             "from jax._src.lax import (lax, special as lax_special)\n"
             "from jax._src.lax.other import other_p\n\n\n"
             "def register_standard_check(p):\n  del p\n\n\n"
             "def register_standard_rewrite(p):\n  del p\n\n\n"
             "for o in it.chain(lax.__dict__.values(), lax_special.__dict__.values()):\n"
             "  if isinstance(o, core.Primitive):\n    register_standard_check(o)\n"
             "    register_standard_rewrite(o)\n\nregister_standard_rewrite(other_p)\n")


def _mini_tree(root):
    files = {"jax/__init__.py": "", "jax/version.py": '_version = "0.11.1"\n',
             "jax/lax/__init__.py": LAX_INIT, "jax/_src/lax/lax.py": LAX_PY,
             "docs/jax.lax.rst": DOCS, "CHANGELOG.md": CHANGELOG, "tests/BUILD": BUILD}
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def _snapshot(root):
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _only_insertions(old, new):
    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines())
    return {op for op, *_ in matcher.get_opcodes()} <= {"equal", "insert"}


def _changes(root, spec=None, **kwargs):
    changes = generate(spec or PrimitiveSpec("jm_new", arity=2), in_tree_root=str(root),
                       **kwargs)
    return {c.label: c for c in changes}


def test_a_new_module_is_a_jax_commit(tmp_path):
    root = _mini_tree(tmp_path)
    changes = _changes(root)
    assert list(changes) == ["jax/_src/lax/jm_new.py", "jax/lax/__init__.py",
                             "docs/jax.lax.rst", "CHANGELOG.md", "tests/jm_new_test.py",
                             "tests/BUILD"]
    for label in ("jax/_src/lax/jm_new.py", "tests/jm_new_test.py"):
        first = changes[label].new.splitlines()[0]
        assert first == f"# Copyright {datetime.date.today().year} The JAX Authors.", label
    test = changes["tests/jm_new_test.py"].new
    assert "class JmNewTest(jtu.JaxTestCase):" in test
    assert test.endswith('if __name__ == "__main__":\n'
                         '  absltest.main(testLoader=jtu.JaxTestLoader())\n')
    assert all(c.action == "edit" and _only_insertions(c.old, c.new)
               for c in changes.values() if c.old is not None)


def test_the_export_joins_the_block_from_its_module(tmp_path):
    root = _mini_tree(tmp_path)
    change = _changes(root, module="jax/_src/lax/lax.py")["jax/lax/__init__.py"]
    assert change.new == ("from jax._src.lax.lax import (\n  add as add,\n"
                          "  jm_new as jm_new,\n  jm_new_p as jm_new_p,\n  mul as mul,\n)\n"
                          "from jax._src.lax.other import thing as thing\n")


def test_a_new_module_gets_its_own_export_block(tmp_path):
    change = _changes(_mini_tree(tmp_path))["jax/lax/__init__.py"]
    assert change.new == LAX_INIT + ("from jax._src.lax.jm_new import (\n"
                                     "  jm_new as jm_new,\n  jm_new_p as jm_new_p,\n)\n")


def test_an_existing_module_gets_only_the_imports_it_lacks_and_uses(tmp_path):
    root = _mini_tree(tmp_path)
    change = _changes(root, module="jax._src.lax.lax")["jax/_src/lax/lax.py"]
    added = [line for line in change.new.splitlines()[:12]
             if line not in LAX_PY.splitlines()]
    # partial and core are there already; lax.py's own sin/cos need no `lax.`.
    assert added == ["from jax._src import dispatch",
                     "from jax._src.interpreters import ad",
                     "from jax._src.interpreters import batching",
                     "from jax._src.interpreters import mlir"]
    assert _only_insertions(LAX_PY, change.new)
    assert "return sin(x) + x * y" in change.new
    with pytest.raises(NameTaken, match="already defines add"):
        _changes(root, PrimitiveSpec("add"), module="jax/_src/lax/lax.py")


def test_docs_changelog_and_build_entries(tmp_path):
    changes = _changes(_mini_tree(tmp_path))
    assert "    add\n    jm_new\n    zeta\n" in changes["docs/jax.lax.rst"].new
    assert changes["CHANGELOG.md"].new.startswith(
        "# Change log\n\n## Unreleased\n\n* New features\n"
        "  * Added {func}`jax.lax.jm_new`.\n\n* Changes\n")
    assert ('    srcs = ["a_test.py"],\n)\n\njax_multiplatform_test(\n'
            '    name = "jm_new_test",\n    srcs = ["jm_new_test.py"],\n'
            in changes["tests/BUILD"].new)


def test_changelog_entry_joins_new_features(tmp_path):
    root = _mini_tree(tmp_path)
    (root / "CHANGELOG.md").write_text("## Unreleased\n\n* New features\n  * Old.\n")
    assert _changes(root)["CHANGELOG.md"].new == (
        "## Unreleased\n\n* New features\n  * Added {func}`jax.lax.jm_new`.\n  * Old.\n")


@pytest.mark.parametrize("path, text, error, fragment", [
    ("jax/lax/__init__.py", "__all__ = []\n", AnchorError, "no top-level import"),
    ("docs/jax.lax.rst", "Other\n-----\n", AnchorError, "no 'Operators' section"),
    ("docs/jax.lax.rst", "Operators\n---------\n\ntext\n", AnchorError, "no autosummary"),
    ("CHANGELOG.md", "# Change log\n", AnchorError, "no '## Unreleased' section"),
    ("tests/BUILD", 'py_test(name = "b")\n', AnchorError, "no jax_multiplatform_test"),
    ("tests/BUILD", "jax_multiplatform_test(\n", AnchorError, "does not parse"),
    ("jax/version.py", "VERSION = 1\n", TargetError, "assigns no `_version"),
], ids=lambda v: str(v)[:30])
def test_a_missing_anchor_changes_nothing(tmp_path, path, text, error, fragment):
    root = _mini_tree(tmp_path)
    (root / path).write_text(text)
    before = _snapshot(root)
    with pytest.raises(error, match=fragment) as raised:
        generate(PrimitiveSpec("jm_x"), in_tree_root=str(root))
    assert "\n" not in str(raised.value)
    assert _snapshot(root) == before


@pytest.mark.parametrize("path", ["docs/jax.lax.rst", "CHANGELOG.md", "tests/BUILD"])
def test_a_missing_file_changes_nothing(tmp_path, path):
    root = _mini_tree(tmp_path)
    (root / path).unlink()
    with pytest.raises(AnchorError, match="not found"):
        generate(PrimitiveSpec("jm_x"), in_tree_root=str(root))


def test_hijax_is_refused(tmp_path):
    with pytest.raises(SpecError, match="classic"):
        generate(PrimitiveSpec("jm_x", style="hijax"), in_tree_root=str(_mini_tree(tmp_path)))


def _copy_installed_jax(root):
    import jax

    shutil.copytree(jax.__path__[0], root / "jax",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for path, text in {"docs/jax.lax.rst": DOCS, "CHANGELOG.md": CHANGELOG,
                       "tests/BUILD": BUILD}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


IN_TREE = [PrimitiveSpec("jm_fused", arity=2, params=(("scale", "float"),),
                         platforms=("cuda", "tpu")),
           PrimitiveSpec("jm_fused_linear", arity=2, linear=True, lowering="hlo")]


def test_in_a_copy_of_installed_jax(tmp_path):
    pytest.importorskip("absl", reason="JAX's test utilities need absl-py")
    from jaxmap.session import open_index

    root = tmp_path / "root"
    _copy_installed_jax(root)
    for spec in IN_TREE:
        changes = generate(spec, in_tree_root=str(root))
        assert "+++ b/jax/lax/__init__.py" in unified_diff(changes)
        apply(changes)
    env = {**os.environ, "PYTHONPATH": str(root)}
    code = "import jax, jax.lax as l; print(jax.__file__, l.jm_fused, l.jm_fused_linear_p)"
    check = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, cwd=tmp_path, check=False)
    assert check.returncode == 0 and str(root) in check.stdout, check.stderr
    expect_clean_pass(run_pytest(root / "tests", env=env))
    direct = subprocess.run([sys.executable, str(root / "tests" / "jm_fused_test.py")],
                            capture_output=True, text=True, env=env, check=False)
    assert direct.returncode == 0 and "\nOK" in direct.stderr, direct.stderr[-2000:]
    with open_index(str(root)) as index:
        for spec in IN_TREE:
            (prim,) = locate(index, spec.name, "primitive").primitives
            kinds = {(r.kind.value, r.platform) for r in prim.rules}
            expected = {("impl", None), ("abstract_eval", None), ("jvp", None),
                        ("batching", None), ("lowering", None)}
            expected |= {("lowering", p) for p in spec.platforms}
            if spec.linear:
                expected.add(("transpose", None))
            assert expected <= kinds, kinds
            assert prim.loc.file == f"jax/_src/lax/{spec.name}.py"
        (public,) = [d for d in locate(index, "jm_fused").definitions
                     if d.kind.value == "function"]
        assert "jax.lax.jm_fused" in public.public_paths
    with pytest.raises(NameTaken, match="already"):
        generate(IN_TREE[0], in_tree_root=str(root))


@pytest.mark.parametrize("arity, helper", [(1, "standard_unop(_float, 'jm_new')"),
                                           (2, "standard_naryop([_float, _float], 'jm_new')")])
def test_a_module_with_lax_helpers_gets_a_primitive_like_its_neighbours(tmp_path, arity,
                                                                       helper):
    root = _mini_tree(tmp_path)
    special = root / "jax" / "_src" / "lax" / "special.py"
    special.write_text("from jax._src.lax.lax import _float, standard_naryop, "
                       "standard_unop\n")
    change = _changes(root, PrimitiveSpec("jm_new", arity=arity),
                      module="jax/_src/lax/special.py")["jax/_src/lax/special.py"]
    assert f"jm_new_p = {helper}\n" in change.new
    for absent in ("core.Primitive", "def_abstract_eval", "def_impl", "batching."):
        assert absent not in change.new


@pytest.mark.parametrize("version, present, absent", [
    ("0.4.38", ["import contextlib\n", "jtu.set_host_platform_device_count(8)",
                "from jax.experimental.shard_map import shard_map\n",
                "shard_map(grad, mesh=mesh, in_specs=specs, out_specs=specs)\n"],
     ["request_cpu_devices", "jax.shard_map(", "check_rep"]),
    ("0.11.1", ["jtu.request_cpu_devices(8)\n", "jax.shard_map(grad,"],
     ["contextlib", "set_host_platform_device_count", "check_rep"]),
])
def test_the_test_follows_the_checkouts_release(tmp_path, version, present, absent):
    root = _old_tree(tmp_path, version)
    test = _changes(root)["tests/jm_new_test.py"].new
    assert all(text in test for text in present), test
    assert not any(text in test for text in absent), test


def _old_tree(root, version="0.4.38"):
    """A mini tree of `version` with the shard_map module of a replication check."""
    _mini_tree(root)
    (root / "jax" / "version.py").write_text(f'_version = "{version}"\n')
    (root / "jax" / "experimental").mkdir()
    (root / "jax" / "experimental" / "shard_map.py").write_text(SHARD_MAP)
    return root


def test_shard_map_registers_the_replication_rules_of_a_new_module(tmp_path):
    changes = _changes(_old_tree(tmp_path))
    change = changes["jax/experimental/shard_map.py"]
    assert _only_insertions(change.old, change.new)
    assert ("from jax._src.lax.other import other_p\n"
            "from jax._src.lax.jm_new import jm_new_p\n\n") in change.new
    assert ("    register_standard_rewrite(o)\n\nregister_standard_check(jm_new_p)\n"
            "register_standard_rewrite(jm_new_p)\n\nregister_standard_rewrite(other_p)\n"
            ) in change.new
    compile(change.new, "shard_map.py", "exec")


@pytest.mark.parametrize("module", ["jax/_src/lax/lax.py", "jax/_src/lax/special.py"])
def test_a_module_shard_maps_loop_covers_needs_no_registration(tmp_path, module):
    root = _old_tree(tmp_path)
    (root / "jax" / "_src" / "lax" / "special.py").write_text("import numpy as np\n")
    assert "jax/experimental/shard_map.py" not in _changes(root, module=module)


@pytest.mark.parametrize("text, fragment", [
    (None, "jax/experimental/shard_map.py not found"),
    ("from jax._src import core\n", "has no loop calling register_standard_check"),
])
def test_no_shard_map_loop_to_register_after_changes_nothing(tmp_path, text, fragment):
    root = _old_tree(tmp_path)
    shard_map = root / "jax" / "experimental" / "shard_map.py"
    if text is None:
        shard_map.unlink()
    else:
        shard_map.write_text(text)
    before = _snapshot(root)
    with pytest.raises(AnchorError, match=fragment):
        _changes(root)
    assert _snapshot(root) == before


def test_a_release_checking_no_replication_leaves_shard_map_alone(tmp_path):
    assert "jax/experimental/shard_map.py" not in _changes(_old_tree(tmp_path, "0.6.0"))


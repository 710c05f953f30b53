"""Every new-primitive variant, generated for the oldest supported jax release,
passes its tests there (scripts/check_generated.py) and works as users call it:
jax.grad inside shard_map with its default arguments on 4 CPU devices, jit, vmap,
jvp and export (scripts/check_shard_map.py); in a virtual environment built once
and cached in the temporary directory (the pinned release is covered by
test_scaffold.py)."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path

import pytest

from jaxmap.knowledge import versions

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
VENVS = Path(tempfile.gettempdir()) / "jaxmap-test-venvs"


def _script(name):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check_generated():
    return _script("check_generated")


def test_every_variant_on_the_oldest_release(tmp_path, installed_index, monkeypatch):
    monkeypatch.setenv("JAXMAP_CACHE_DIR", os.path.dirname(installed_index.path))
    check = _check_generated()
    oldest = ".".join(map(str, versions.OLDEST))
    try:
        python = check.venv(oldest, VENVS)
    except RuntimeError as error:
        if "from versions: none" in str(error):
            pytest.skip(f"PyPI is unreachable, so no jax {oldest} to test with")
        raise
    table = check.check(oldest, VENVS, tmp_path)
    assert not [s for s in table.values() if s.startswith("FAIL")], table
    _assert_classic_variants_work_as_users_call_them(python, tmp_path / oldest)
    refused = {v: s for v, s in table.items() if s.startswith("refused")}
    assert {v: s for v, s in refused.items() if v in check.VARIANTS} == {
        v: f"refused: --style hijax needs jax 0.9.0 or newer; the target "
           f"is jax {oldest}" for v in ("hijax", "hijax linear")}
    # The `jaxmap new` kinds (check.KIND_VARIANTS) the oldest release cannot have.
    assert {v: s.split(" needs ")[1].split(";")[0] for v, s in refused.items()
            if v in check.KIND_VARIANTS} == {"custom-vjp hijax": "jax 0.9.0 or newer",
                                              "pallas": "jax 0.4.31 or newer",
                                              "ffi": "jax 0.5.0 or newer"}



def _assert_classic_variants_work_as_users_call_them(python, generated):
    """check_shard_map's probe of the classic variants check_generated wrote: grad
    inside shard_map with default arguments on 4 CPU devices, jit, vmap, jvp."""
    shard_map = _script("check_shard_map")
    report = shard_map.probe(python, generated)
    table = {"oldest": report}
    assert not shard_map.failed(table), shard_map.format_table(table)
    assert set(report) == {"control", *shard_map.VARIANTS}, report
    assert all(report[v]["grad in shard_map"] == "pass" for v in shard_map.VARIANTS)

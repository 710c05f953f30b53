"""Every new-primitive variant, generated for the oldest supported jax release,
passes its tests there: scripts/check_generated.py in a virtual environment built
once and cached in the temporary directory (the pinned release is covered by
test_scaffold.py)."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path

import pytest

from jaxmap.knowledge import versions

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "check_generated.py"
VENVS = Path(tempfile.gettempdir()) / "jaxmap-test-venvs"


def _check_generated():
    spec = importlib.util.spec_from_file_location("check_generated", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_variant_on_the_oldest_release(tmp_path, installed_index, monkeypatch):
    monkeypatch.setenv("JAXMAP_CACHE_DIR", os.path.dirname(installed_index.path))
    check = _check_generated()
    oldest = ".".join(map(str, versions.OLDEST))
    try:
        check.venv(oldest, VENVS)
    except RuntimeError as error:
        if "from versions: none" in str(error):
            pytest.skip(f"PyPI is unreachable, so no jax {oldest} to test with")
        raise
    table = check.check(oldest, VENVS, tmp_path)
    assert not [s for s in table.values() if s.startswith("FAIL")], table
    refused = {v: s for v, s in table.items() if s.startswith("refused")}
    assert {v: s for v, s in refused.items() if v in check.VARIANTS} == {
        v: f"refused: --style hijax needs jax 0.9.0 or newer; the target "
           f"is jax {oldest}" for v in ("hijax", "hijax linear")}
    # The `jaxmap new` kinds (check.KIND_VARIANTS) the oldest release cannot have.
    assert {v: s.split(" needs ")[1].split(";")[0] for v, s in refused.items()
            if v in check.KIND_VARIANTS} == {"custom-vjp hijax": "jax 0.9.0 or newer",
                                              "pallas": "jax 0.4.31 or newer",
                                              "ffi": "jax 0.5.0 or newer"}

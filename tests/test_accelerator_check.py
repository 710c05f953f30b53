"""scripts/accelerator_check.py and accelerator_wheels.py, without an accelerator:
the wheel names they read, what they install, the table they print."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


@pytest.fixture
def scripts(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    return importlib.import_module("accelerator_check"), importlib.import_module(
        "accelerator_wheels")


@pytest.mark.parametrize("wheel, name", [
    ("jinja2-3.1.6-py3-none-any.whl", "jinja2"),
    ("MarkupSafe-3.0.2-cp311-cp311-manylinux_2_17_x86_64.whl", "markupsafe"),
    ("tree_sitter_python-0.25.0-cp310-abi3-manylinux1_x86_64.whl", "tree-sitter-python"),
])
def test_a_wheel_names_its_distribution(scripts, wheel, name):
    _, wheels = scripts
    assert wheels.distribution(Path(wheel)) == name
    assert name in wheels.NEEDS


def test_wheels_whose_module_is_here_are_not_installed(scripts, tmp_path):
    check, _ = scripts
    (tmp_path / "jinja2-3.1.6-py3-none-any.whl").write_bytes(b"")
    assert check.install_wheels(tmp_path, tmp_path / "site") == []
    assert not (tmp_path / "site").exists()


def test_the_table_gives_a_refusal_one_cell(scripts):
    check, _ = scripts
    refused = "refused: cannot run on tpu"
    table = {"pallas": {"x64 off": "pass (6)", "x64 on": "FAIL (1 of 6: Mosaic)"},
             "ffi": {"x64 off": refused, "x64 on": refused}}
    lines = check.format_table("jax on tpu", table).splitlines()
    assert lines[0] == "jax on tpu"
    assert "| pallas | pass (6) | FAIL (1 of 6: Mosaic) |" in lines
    assert "| ffi | refused: cannot run on tpu |" in lines

"""jaxmap's own code under its linter and its type checker, as pyproject.toml configures
them ([tool.ruff], [tool.mypy]): any finding fails the suite."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(tool: str, *args: str) -> subprocess.CompletedProcess:
    if importlib.util.find_spec(tool) is None:
        pytest.skip(f"{tool} is not installed (it is in the test extra: pip install -e '.[test]')")
    return subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT,
                          capture_output=True, text=True)


def test_ruff_finds_nothing():
    result = _run("ruff", "check", "--no-cache", "--output-format", "concise", "jaxmap")
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def test_mypy_finds_nothing():
    result = _run("mypy", "jaxmap")
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]

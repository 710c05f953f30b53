"""Running what `jaxmap new-primitive` generated: its tests, ruff, compileall."""

from __future__ import annotations

import importlib.util
import subprocess
import sys


def run_pytest(directory, env=None, python=sys.executable):
    """The generated tests in `directory`, DeprecationWarnings as errors. pytest-asyncio
    (which pytest-lsp brings) is kept out: it warns at start-up under newer pytest,
    which -W error turns into an internal error, and generated tests need no asyncio."""
    return subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-p", "no:asyncio", "-W", "error::DeprecationWarning", "-rs", str(directory)],
        capture_output=True, text=True, cwd=directory, env=env, timeout=900,
        check=False)


def expect_clean_pass(result, skips_allowed=None):
    """Passed, none failed, no warnings; no skips unless allowed (default: only
    where flatbuffers, which the export round trip needs, is missing)."""
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert "passed" in summary and "failed" not in summary, summary
    if skips_allowed is None:
        skips_allowed = importlib.util.find_spec("flatbuffers") is None
    if not skips_allowed:
        assert "skipped" not in summary, result.stdout[-2000:]
    assert "warning" not in summary, result.stdout[-4000:]


def lint(directory, files):
    """`ruff check` with its default rules (run in `directory`, so a generated
    module counts as first-party for its test's imports) and compileall."""
    ruff = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated",
                           "--no-cache", *map(str, files)],
                          capture_output=True, text=True, cwd=directory, check=False)
    assert ruff.returncode == 0, ruff.stdout[-4000:] + ruff.stderr[-2000:]
    compiled = subprocess.run([sys.executable, "-m", "compileall", "-q", *map(str, files)],
                              capture_output=True, text=True, check=False)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr

"""Generate every new-primitive variant and `jaxmap new` kind for each jax release
and run its tests there.

    python scripts/check_generated.py [--jax VERSION ...] [--venvs DIR] [--work DIR]

For each release: a virtual environment DIR/jax-VERSION (default DIR /tmp/venvs)
with that jax, the matching jaxlib, pytest and flatbuffers, built with the first
interpreter of PYTHONS that pip can install the release for, and reused when it
already holds the release; every variant of VARIANTS generated for that release
into WORK/VERSION (jaxmap runs here, with the release given, not in the venv);
`ruff check` and compileall on what was written; each variant's tests run with
that environment's pytest. Prints a table of release x variant and exits non-zero
if any variant fails (a variant the release cannot have is refused, and says so).
Without --jax: 0.4.30 and the newest patch of every minor release after it that
`pip index versions jax` lists for the newest interpreter.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jaxmap.errors import SpecError
from jaxmap.knowledge import rungs, versions
from jaxmap.scaffold import PrimitiveSpec, UnsupportedRelease, apply, generate, kinds

PYTHONS = (sys.executable, os.path.expanduser("~/.pyenv/versions/3.12.1/bin/python"))
# The variants the table covers: name -> the spec generated.
VARIANTS = {
    "classic": PrimitiveSpec("jm_classic"),
    "linear": PrimitiveSpec("jm_linear", arity=2, linear=True),
    "params": PrimitiveSpec("jm_params", arity=2, params=(("scale", "float"), ("n", "int"),
                                                          ("flag", "bool"), ("mode", "str"))),
    "multiple results": PrimitiveSpec("jm_multi", multiple_results=True),
    "arity 3": PrimitiveSpec("jm_arity3", arity=3),
    "hlo, cuda": PrimitiveSpec("jm_hlo_cuda", arity=2, lowering="hlo", platforms=("cuda",)),
    "hijax": PrimitiveSpec("jm_hijax", arity=2, style="hijax", params=(("scale", "float"),)),
    "hijax linear": PrimitiveSpec("jm_hijax_linear", arity=2, linear=True, style="hijax"),
}
# The `jaxmap new` starters (the ladder issue): name -> (kind, module name, style).
KIND_VARIANTS = {kind + (f" {style}" if style else ""): (kind, name, style)
                 for kind, name, style in rungs.examples("jm_", every_style=True)
                 if kind != "primitive"}
# Each variant's generated test module.
TEST_MODULES = {**{variant: f"test_{spec.name}" for variant, spec in VARIANTS.items()},
                **{variant: f"test_{name}" for variant, (_, name, _) in KIND_VARIANTS.items()}}


def minor_releases(python: str = PYTHONS[-1]) -> list[str]:
    """0.4.30 and the newest patch of each later minor release on the index."""
    out = subprocess.run([python, "-m", "pip", "index", "versions", "jax"],
                         capture_output=True, text=True, check=True).stdout
    listed = re.search(r"Available versions: (.*)", out).group(1).split(", ")
    newest: dict[tuple[int, ...], str] = {}
    for text in listed:
        version = versions.parse(text)
        if version >= versions.OLDEST and version[:2] not in newest:
            newest[version[:2]] = text
    return sorted({"0.4.30", *newest.values()}, key=versions.parse)


def venv(release: str, directory: Path) -> Path:
    """The python of a virtual environment with jax `release`; built if missing."""
    target = directory / f"jax-{release}"
    python = target / "bin" / "python"
    probe = [str(python), "-c", "import jax, pytest; print(jax.__version__)"]
    if python.exists() and subprocess.run(probe, capture_output=True, text=True,
                                          check=False).stdout.strip() == release:
        return python
    jaxlib = ".".join(release.split(".")[:3])
    errors = []
    for interpreter in (p for p in PYTHONS if os.path.exists(p)):
        subprocess.run([interpreter, "-m", "venv", "--clear", str(target)], check=True)
        install = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", f"jax=={release}",
             f"jaxlib=={jaxlib}", "pytest", "flatbuffers"],
            capture_output=True, text=True, check=False)
        if install.returncode == 0:
            return python
        errors.append(" ".join(install.stderr.split())[-300:])
    raise RuntimeError(f"cannot install jax {release} with any of {PYTHONS}: {errors}")


def generate_all(release: str, out: Path, backend: str | None = None) -> dict[str, str]:
    """Write every variant for `release` (and `backend`, where given) into `out`;
    {variant: why refused}."""
    out.mkdir(parents=True, exist_ok=True)
    for stale in [*out.glob("*.py"), *out.glob("*.cc")]:
        stale.unlink()
    refused = {}
    for variant, spec in VARIANTS.items():
        try:
            apply(generate(spec, out=str(out), release=versions.release(release)))
        except UnsupportedRelease as error:
            refused[variant] = f"refused: {error}"
    for variant, (kind, name, style) in KIND_VARIANTS.items():
        try:
            apply(kinds.generate(kind, name, out=str(out), style=style, jax_version=release,
                                 backend=backend))
        except (UnsupportedRelease, SpecError) as error:
            refused[variant] = f"refused: {error}"
    return refused


def lint(out: Path) -> str:
    """'' if ruff (default rules) and compileall accept every generated file."""
    files = sorted(str(p.name) for p in out.glob("*.py"))
    ruff = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache",
                           "--quiet", *files], capture_output=True, text=True, cwd=out,
                          check=False)
    compiled = subprocess.run([sys.executable, "-m", "compileall", "-q", *files],
                              capture_output=True, text=True, cwd=out, check=False)
    return (ruff.stdout + compiled.stdout).strip()


def run_tests(python: Path, out: Path, env: dict | None = None) -> dict[str, str]:
    """{variant: 'pass' | 'pass, N skipped (reason)' | 'FAIL ...'} from one pytest run
    (in environment `env`, default this one's)."""
    report = out / "report.xml"
    subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "-p", "no:asyncio", "-W", "error::DeprecationWarning",
                    f"--junitxml={report}", "."],
                   capture_output=True, text=True, cwd=out, env=env, check=False, timeout=1800)
    outcomes = read_report(report, lambda classname: classname.split(".")[-1])
    return {variant: outcomes.get(module, _status([]))
            for variant, module in TEST_MODULES.items()}


def read_report(report: Path, module_of) -> dict[str, str]:
    """{module: status} from a pytest JUnit XML report, `module_of` naming the
    module of a test case's classname."""
    cases = ET.parse(report).getroot().iter("testcase") if report.exists() else ()
    outcomes: dict[str, list[tuple[str, str]]] = {}
    for case in cases:
        child = next(iter(case), None)
        kind = "pass" if child is None or child.tag in ("system-out", "system-err") \
            else child.tag
        outcomes.setdefault(module_of(case.get("classname", "")), []).append(
            (kind, (child.get("message") or "") if child is not None else ""))
    return {module: _status(results) for module, results in outcomes.items()}


def _status(results: list[tuple[str, str]]) -> str:
    if not results:
        return "FAIL (no tests collected)"
    failed = [message for kind, message in results if kind in ("failure", "error")]
    if failed:
        return f"FAIL ({len(failed)} of {len(results)}: {failed[0][:120]})"
    skipped = [message for kind, message in results if kind == "skipped"]
    if skipped:
        return f"pass, {len(skipped)} skipped ({skipped[0][:80]})"
    return f"pass ({len(results)})"


def check(release: str, venvs: Path, work: Path) -> dict[str, str]:
    """{variant: status} for one release."""
    python = venv(release, venvs)
    out = work / release
    refused = generate_all(release, out)
    problems = lint(out)
    if problems:
        return {variant: f"FAIL (lint: {problems.splitlines()[0]})" for variant in TEST_MODULES}
    return {**run_tests(python, out), **refused}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax", nargs="+", metavar="VERSION")
    parser.add_argument("--venvs", type=Path, default=Path("/tmp/venvs"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/jaxmap-check-generated"))
    args = parser.parse_args(argv)
    table = {}
    for release in args.jax or minor_releases():
        table[release] = check(release, args.venvs, args.work)
        print(f"{release}: " + "; ".join(f"{v}: {s}" for v, s in table[release].items()),
              file=sys.stderr, flush=True)
    print(format_table(table))
    return 1 if any(s.startswith("FAIL") for row in table.values() for s in row.values()) \
        else 0


def format_table(table: dict[str, dict[str, str]]) -> str:
    """A markdown table, release x variant, each cell's first word (and its notes below)."""
    header = ["jax", *TEST_MODULES]
    rows = [header, ["---"] * len(header)]
    notes = []
    for release, row in table.items():
        cells = [release]
        for variant in TEST_MODULES:
            status = row[variant]
            cells.append(status.split(" ")[0].rstrip(":,"))
            if not status.startswith("pass ("):
                notes.append(f"- {release} {variant}: {status}")
        rows.append(cells)
    return "\n".join("| " + " | ".join(r) + " |" for r in rows) + "\n\n" + "\n".join(notes)


if __name__ == "__main__":
    sys.exit(main())

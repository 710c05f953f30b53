"""Use every classic new-primitive variant, generated for each jax release, the way
users call it: jit, vmap, jvp, jax.grad inside shard_map with its default
arguments on 4 CPU devices, and an export round trip.

    python scripts/check_shard_map.py --jax VERSION ... [--venvs DIR] [--work DIR]

For each release: the virtual environment DIR/jax-VERSION of check_generated.py
(built there if missing); the variants of check_generated.VARIANTS in the
classic style generated into WORK/VERSION (jaxmap runs here); then
shard_map_probe.py, with that environment's python, checks them (not their
generated tests). With --in-tree, the variants are also added in tree to a copy
of the release's jax package and their absltests run there. Prints a table of
release x variant and, below it, every check that did not pass; exits non-zero
if any failed.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

import check_generated

from jaxmap.knowledge import versions
from jaxmap.scaffold import apply, generate, in_tree
from jaxmap.scaffold.context import TEST_VALUES

PROBE = ROOT / "scripts" / "shard_map_probe.py"
# The files besides jax/ that an in-tree generation edits, as small as it accepts.
TREE_STUBS = {
    "docs/jax.lax.rst": "jax.lax\n=======\n\nOperators\n---------\n\n.. autosummary::\n"
                        "  :toctree: _autosummary\n\n    abs\n",
    "CHANGELOG.md": "# Change log\n\n## Unreleased\n",
    "tests/BUILD": 'jax_multiplatform_test(\n    name = "a_test",\n    srcs = ["a_test.py"],\n)\n',
}
VARIANTS = {variant: spec for variant, spec in check_generated.VARIANTS.items()
            if spec.style == "classic"}


def probe_specs() -> list:
    """[variant, module, arity, params] for each variant, as the probe reads them."""
    return [[variant, spec.name, spec.arity,
             {name: ast.literal_eval(TEST_VALUES[kind]) for name, kind in spec.params}]
            for variant, spec in VARIANTS.items()]


def check(release: str, venvs: Path, work: Path) -> dict[str, dict[str, str]]:
    """{variant or 'control': {check: outcome}} for one release."""
    python = check_generated.venv(release, venvs)
    out = work / release
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("*.py"):
        stale.unlink()
    for spec in VARIANTS.values():
        apply(generate(spec, out=str(out), release=versions.release(release)))
    return probe(python, out)


def probe(python: Path, out: Path) -> dict[str, dict[str, str]]:
    """shard_map_probe.py's report on the variants generated into `out`, run by
    `python` (a release's environment) on 4 CPU devices."""
    flags = os.environ.get("XLA_FLAGS", "")
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS=f"{flags} --xla_force_host_platform_device_count=4")
    run = subprocess.run([str(python), str(PROBE), str(out), json.dumps(probe_specs())],
                         capture_output=True, text=True, env=env, check=False, timeout=900)
    if run.returncode != 0:
        why = f"FAIL: the probe exited {run.returncode}: {run.stderr.strip()[-300:]}"
        return {variant: {"probe": why} for variant in VARIANTS}
    return json.loads(run.stdout)


def check_in_tree(release: str, venvs: Path, work: Path) -> dict[str, str]:
    """{variant: outcome} of the classic variants added in tree to a copy of the
    release's jax package, their absltests run with the release's python."""
    python = check_generated.venv(release, venvs)
    found = subprocess.run([str(python), "-c", "import absl, jax; print(jax.__path__[0])"],
                           capture_output=True, text=True, check=False)
    if found.returncode != 0:
        return {variant: "n/a: no absl-py in the environment" for variant in VARIANTS}
    root = work / f"{release}-tree"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(found.stdout.strip(), root / "jax",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for path, text in TREE_STUBS.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    for spec in VARIANTS.values():
        # in_tree.changes, not generate: indexing the copy to check names costs minutes.
        apply(in_tree.changes(spec, str(root), versions.release(release)))
    report = root / "report.xml"
    subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    f"--junitxml={report}", "tests"], cwd=root, capture_output=True,
                   env=dict(os.environ, PYTHONPATH=str(root)), check=False, timeout=900)
    # A test case's classname is tests.<name>_test.<Class>.
    outcomes = check_generated.read_report(report, lambda name: name.split(".")[-2])
    return {variant: outcomes.get(f"{spec.name}_test", "FAIL (no tests collected)")
            for variant, spec in VARIANTS.items()}


def format_table(table: dict[str, dict[str, dict[str, str]]]) -> str:
    """A markdown table, release x variant ('pass' or 'FAIL'), then the notes."""
    header = ["jax", *VARIANTS]
    rows = [header, ["---"] * len(header)]
    notes = []
    for release, report in table.items():
        cells = [release]
        for variant in VARIANTS:
            outcomes = report.get(variant, {"probe": "FAIL: no report"})
            failed = any(o.startswith("FAIL") for o in outcomes.values())
            cells.append("FAIL" if failed else "pass")
            notes += [f"- {release} {variant}, {check}: {outcome}"
                      for check, outcome in outcomes.items() if outcome != "pass"]
        notes += [f"- {release} control, {check}: {outcome}"
                  for check, outcome in report.get("control", {}).items()
                  if outcome != "pass"]
        rows.append(cells)
    return "\n".join("| " + " | ".join(r) + " |" for r in rows) + "\n\n" + "\n".join(notes)


def failed(table: dict[str, dict[str, dict[str, str]]]) -> bool:
    """Whether any variant's check failed (the control's outcome is only reported)."""
    return any(outcome.startswith("FAIL") for report in table.values()
               for variant in VARIANTS for outcome in report.get(variant, {}).values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax", nargs="+", metavar="VERSION", required=True)
    parser.add_argument("--venvs", type=Path, default=Path("/tmp/venvs"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/jaxmap-check-shard-map"))
    parser.add_argument("--in-tree", action="store_true",
                        help="also add the variants to a copy of each release's jax "
                             "and run their absltests there")
    args = parser.parse_args(argv)
    table = {}
    for release in args.jax:
        table[release] = check(release, args.venvs, args.work)
        if args.in_tree:
            for variant, outcome in check_in_tree(release, args.venvs, args.work).items():
                table[release].setdefault(variant, {})["in-tree tests"] = (
                    "pass" if outcome.startswith("pass (") else outcome)
    print(format_table(table))
    return 1 if failed(table) else 0


if __name__ == "__main__":
    sys.exit(main())

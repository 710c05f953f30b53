"""Use every classic new-primitive variant, generated for each jax release, the way
users call it: jit, vmap, jvp, jax.grad inside shard_map with its default
arguments on 4 CPU devices, and an export round trip.

    python scripts/check_shard_map.py --jax VERSION ... [--venvs DIR] [--work DIR]

For each release: the virtual environment DIR/jax-VERSION of check_generated.py
(built there if missing); the variants of check_generated.VARIANTS in the
classic style generated into WORK/VERSION (jaxmap runs here); then
shard_map_probe.py, with that environment's python, checks them (not their
generated tests). Prints a table of release x variant and, below it, every check
that did not pass; exits non-zero if any failed.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

import check_generated

from jaxmap.knowledge import versions
from jaxmap.scaffold import apply, generate
from jaxmap.scaffold.context import TEST_VALUES

PROBE = ROOT / "scripts" / "shard_map_probe.py"
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
    args = parser.parse_args(argv)
    table = {release: check(release, args.venvs, args.work) for release in args.jax}
    print(format_table(table))
    return 1 if failed(table) else 0


if __name__ == "__main__":
    sys.exit(main())

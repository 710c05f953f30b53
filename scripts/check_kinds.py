"""Generate every `jaxmap new` kind for several jax releases and run its tests there.

    python scripts/check_kinds.py --jax 0.4.30 0.6.2 0.10.2 [--venvs DIR] [--keep DIR]

For each release: a virtual environment with that jax and jaxlib (reused from
VENVS/jax-VERSION when one is there, else built with pip: Python 3.12 from 0.11,
the running Python before), every variant in VARIANTS generated for that release
by this checkout, and its tests run with that environment's pytest and
DeprecationWarnings as errors. Prints a table of release x variant: passed and
skipped counts with the time, `refused (needs ...)` where the release lacks the
kind, or FAILED (the output is kept under --keep).

`VARIANTS` and `check(version, python, work)` are the pieces a release matrix for
other generators can import and run beside its own.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jaxmap.errors import JaxmapError  # noqa: E402  (after the path above)
from jaxmap.scaffold import apply, kinds  # noqa: E402

# (label, kind, name, style): every kind and style of `jaxmap new` but `primitive`,
# which new-primitive's own matrix covers.
VARIANTS = (("custom-jvp", "custom-jvp", "jm_softplus", None),
            ("custom-vjp", "custom-vjp", "jm_norm", None),
            ("custom-vjp hijax", "custom-vjp", "jm_norm_hijax", "hijax"),
            ("export", "export", "jm_export", None),
            ("custom-partitioning", "custom-partitioning", "jm_center", None),
            ("pallas", "pallas", "jm_tiles", None),
            ("ffi", "ffi", "jm_softsign", None))
PY312 = os.path.expanduser("~/.pyenv/versions/3.12.1/bin/python")


def environment(version: str, venvs: Path) -> str:
    """The Python of a venv with jax==version (built if missing)."""
    python = venvs / f"jax-{version}" / "bin" / "python"
    if python.exists():
        return str(python)
    base = PY312 if tuple(map(int, version.split(".")[:2])) >= (0, 11) else sys.executable
    subprocess.run([base, "-m", "venv", str(python.parent.parent)], check=True)
    jaxlib = ".".join(version.split(".")[:3])
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", f"jax=={version}",
                    f"jaxlib=={jaxlib}", "pytest", "flatbuffers"], check=True)
    return str(python)


def check(version: str, python: str, work: Path) -> dict[str, str]:
    """{variant label: outcome} for one release."""
    results = {}
    for label, kind, name, style in VARIANTS:
        directory = work / version / name
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        try:
            apply(kinds.generate(kind, name, out=str(directory), style=style,
                                 jax_version=version))
        except JaxmapError as error:
            results[label] = "refused (" + re.sub(r".*(needs [^;]*);.*", r"\1", str(error)) + ")"
            continue
        results[label] = _run(python, directory)
    return results


def _run(python: str, directory: Path) -> str:
    start = time.perf_counter()
    result = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "-W", "error::DeprecationWarning", str(directory)],
                            capture_output=True, text=True, cwd=directory, check=False)
    seconds = time.perf_counter() - start
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    # 5: nothing collected, as when a module skips itself on this release.
    if not (result.returncode == 0 or result.returncode == 5 and "skipped" in summary):
        (directory / "FAILED.txt").write_text(result.stdout + result.stderr)
        return f"FAILED ({directory / 'FAILED.txt'})"
    counts = ", ".join(re.findall(r"\d+ (?:passed|skipped)", summary))
    return f"{counts} in {seconds:.1f}s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax", nargs="+", required=True, metavar="VERSION")
    parser.add_argument("--venvs", type=Path, default=Path("/tmp/venvs"))
    parser.add_argument("--keep", type=Path, default=None,
                        help="Where generated files and failures stay [default: a temp dir].")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="check-kinds-"))
    args.venvs.mkdir(parents=True, exist_ok=True)
    failed = False
    print("| jax | " + " | ".join(label for label, *_ in VARIANTS) + " |")
    print("|---" * (len(VARIANTS) + 1) + "|")
    for version in args.jax:
        results = check(version, environment(version, args.venvs), work)
        failed |= any(r.startswith("FAILED") for r in results.values())
        print(f"| {version} | " + " | ".join(results[label] for label, *_ in VARIANTS) + " |",
              flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

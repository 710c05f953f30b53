"""`jaxmap new KIND`: how long each kind takes to generate, and its tests to run.

    python benchmarks/bench_new_kinds.py [--repeat N]

For each kind (and style), against the installed jax: generation in process
(`kinds.generate`, best of N, first call included separately since it loads the
templates) and its generated tests in a fresh `python -m pytest` with
DeprecationWarnings as errors. Targets from the ladder issue are printed beside
each figure; nothing here asserts.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jaxmap.knowledge import rungs
from jaxmap.scaffold import apply, kinds

CASES = rungs.examples("jm_", every_style=True)
TARGETS = {"generate_s": 1.0, "tests_s": 60.0}


def _generate(kind: str, name: str, style, out: Path) -> float:
    start = time.perf_counter()
    kinds.generate(kind, name, out=str(out), style=style)
    return time.perf_counter() - start


def _tests(directory: Path) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "-W", "error::DeprecationWarning", str(directory)],
                            capture_output=True, text=True, cwd=directory, check=False)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else "no output"
    return time.perf_counter() - start, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-new-kinds-"))
    print(f"{'kind':<24}{'first gen s':>12}{'best gen s':>12}{'target':>8}"
          f"{'tests s':>10}{'target':>8}  tests")
    for kind, name, style in CASES:
        directory = work / name
        directory.mkdir()
        first = _generate(kind, name, style, directory)
        best = min(_generate(kind, name, style, directory) for _ in range(args.repeat))
        apply(kinds.generate(kind, name, out=str(directory), style=style))
        seconds, summary = _tests(directory)
        label = kind + (f" --style {style}" if style else "")
        print(f"{label:<24}{first:>12.3f}{best:>12.3f}{TARGETS['generate_s']:>8.1f}"
              f"{seconds:>10.1f}{TARGETS['tests_s']:>8.0f}  {summary}", flush=True)


if __name__ == "__main__":
    main()

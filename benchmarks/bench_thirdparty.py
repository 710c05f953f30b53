"""Primitives of libraries outside JAX: how many of those written in their source are found.

    python benchmarks/bench_thirdparty.py LIBRARIES_DIR [--truth FILE]

LIBRARIES_DIR holds one folder per library, named as in the truth file (the unpacked
wheel or source: `pip download --no-deps brainevent`, unzipped into LIBRARIES_DIR/brainevent).
The truth file (default: benchmarks/thirdparty_primitives.txt) lists `library: name`, one
line per primitive the library makes, read by hand from its source. Each library is indexed
cold by `jaxmap primitives --root ... --json` in its own process; printed per library:
primitives found of those written (names compared with their repeats), extra ones, rules
found and primitives left without any. Nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

TRUTH = Path(__file__).resolve().parent / "thirdparty_primitives.txt"


def read_truth(path: Path) -> dict[str, Counter]:
    """library -> its primitives' names, with their repeats."""
    truth: dict[str, Counter] = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            library, _, name = line.partition(":")
            truth.setdefault(library.strip(), Counter())[name.strip()] += 1
    return truth


def index(root: Path) -> list[dict] | str:
    """The primitives of `root` (`primitives --json`), or the error line of a failure."""
    with tempfile.TemporaryDirectory(prefix="bench-thirdparty-") as cache:
        done = subprocess.run([sys.executable, "-m", "jaxmap", "primitives", "--root", str(root),
                               "--json"], capture_output=True, text=True, check=False,
                              env={**os.environ, "JAXMAP_CACHE_DIR": cache})
    if done.returncode != 0:
        return (done.stderr.strip().splitlines() or ["no output"])[-1]
    return json.loads(done.stdout)["primitives"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("libraries", type=Path)
    parser.add_argument("--truth", type=Path, default=TRUTH)
    args = parser.parse_args()
    print(f"{'library':<20}{'found':>7}{'written':>9}{'extra':>7}{'rules':>7}{'no rules':>10}")
    totals = Counter()
    for library, written in sorted(read_truth(args.truth).items()):
        primitives = index(args.libraries / library)
        if isinstance(primitives, str):
            print(f"{library:<20}  FAILED: {primitives}")
            continue
        names = Counter(p["name"] for p in primitives)
        found, extra = sum((written & names).values()), sum((names - written).values())
        rules = sum(len(p["rules"]) for p in primitives)
        bare = sum(1 for p in primitives if not p["rules"])
        totals.update(found=found, written=sum(written.values()), extra=extra, rules=rules,
                      bare=bare)
        print(f"{library:<20}{found:>7}{sum(written.values()):>9}{extra:>7}{rules:>7}{bare:>10}")
        missing = written - names
        if missing:
            print(f"  missing: {', '.join(sorted(missing.elements()))}")
    print(f"{'all':<20}{totals['found']:>7}{totals['written']:>9}{totals['extra']:>7}"
          f"{totals['rules']:>7}{totals['bare']:>10}")


if __name__ == "__main__":
    main()

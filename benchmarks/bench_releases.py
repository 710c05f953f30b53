"""Does every jax release index? Primitives, rules and cold index time per release.

    python benchmarks/bench_releases.py RELEASES_DIR [--timeout S]

RELEASES_DIR holds one folder per release, each with an unpacked `jax/` package
(`pip download --no-deps jax==0.7.2`, then unzip the wheel into RELEASES_DIR/0.7.2).
Each release is indexed cold (a fresh cache folder), both phases, call graph included,
by `jaxmap index --root ...` in its own process (timed); its counts come from
`jaxmap primitives --json` on that index. A failure prints its last error line.
Nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _release_key(folder: Path) -> tuple:
    """0.4.30 < 0.4.38 < 0.10.2: numeric parts compared as numbers."""
    return tuple(int(p) if p.isdigit() else 0 for p in folder.name.split("."))


def _jaxmap(args: list[str], env: dict, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxmap", *args], capture_output=True,
                          text=True, env=env, timeout=timeout, check=False)


def _index(root: Path, timeout: float) -> dict:
    """Index `root` cold; its counts, seconds and outcome."""
    with tempfile.TemporaryDirectory(prefix="bench-releases-") as cache:
        env = {**os.environ, "JAXMAP_CACHE_DIR": cache}
        start = time.perf_counter()
        try:
            done = _jaxmap(["index", "--root", str(root)], env, timeout)
            seconds = time.perf_counter() - start
            if done.returncode == 0:
                done = _jaxmap(["primitives", "--root", str(root), "--json"], env, timeout)
        except subprocess.TimeoutExpired:
            return {"ok": False, "seconds": timeout, "error": f"over {timeout:.0f} s"}
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["no output"]
        return {"ok": False, "seconds": seconds, "error": lines[-1]}
    primitives = json.loads(done.stdout)["primitives"]
    return {"ok": True, "seconds": seconds, "primitives": len(primitives),
            "rules": sum(len(p["rules"]) for p in primitives),
            "unnamed": sum(1 for p in primitives if not p["name"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("releases", type=Path)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    releases = sorted((d for d in args.releases.iterdir() if (d / "jax").is_dir()),
                      key=_release_key)
    print(f"{'release':<12}{'primitives':>11}{'rules':>7}{'unnamed':>9}{'index s':>9}  outcome")
    indexed = 0
    for folder in releases:
        result = _index(folder, args.timeout)
        indexed += result["ok"]
        if result["ok"]:
            print(f"{folder.name:<12}{result['primitives']:>11}{result['rules']:>7}"
                  f"{result['unnamed']:>9}{result['seconds']:>9.1f}  indexed")
        else:
            print(f"{folder.name:<12}{'-':>11}{'-':>7}{'-':>9}{result['seconds']:>9.1f}  "
                  f"FAILED: {result['error']}")
    print(f"{indexed} of {len(releases)} releases indexed")


if __name__ == "__main__":
    main()

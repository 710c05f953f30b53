"""Rebuild the committed snapshots in indexes/ from the released jax wheels.

    python scripts/build_snapshots.py [VERSION ...]

Each version's pure-Python `jax` wheel is downloaded with pip (no jaxlib needed),
unpacked into a temporary directory, indexed there with a throw-away cache, and
written to indexes/jax-VERSION.json.gz with `jaxmap index --snapshot`. With no
arguments it rebuilds every version listed in VERSIONS.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# The release pinned by the test extra, and two earlier ones to diff against.
VERSIONS = ("0.4.38", "0.6.2", "0.10.2")
INDEXES = Path(__file__).resolve().parent.parent / "indexes"


def build(version: str, work: Path) -> Path:
    wheels = work / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--only-binary=:all:", "-d", str(wheels), f"jax=={version}"], check=True)
    [wheel] = wheels.glob(f"jax-{version}-*.whl")
    tree = work / f"jax-{version}"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(tree)
    target = INDEXES / f"jax-{version}.json.gz"
    env = {**os.environ, "JAXMAP_CACHE_DIR": str(work / "cache")}
    subprocess.run([sys.executable, "-m", "jaxmap", "index", "--root", str(tree),
                    "--snapshot", str(target), "--force"], check=True, env=env)
    return target


def main() -> None:
    versions = sys.argv[1:] or VERSIONS
    INDEXES.mkdir(exist_ok=True)
    for version in versions:
        with tempfile.TemporaryDirectory(prefix="jaxmap-snapshot-") as work:
            print(f"{version}: {build(version, Path(work))}")


if __name__ == "__main__":
    main()

"""Collect the wheels a bare accelerator host needs for scripts/accelerator_check.py
into one folder, for the host's Python.

    python scripts/accelerator_wheels.py [--dest DIR] [--python-version 3.11]

The host is expected to have jax with its jaxlib and plugin (libtpu, or the CUDA
plugin), numpy and pytest, and no network. What it lacks is in NEEDS: jaxmap's
generator needs Jinja2, and tree-sitter to index the installed jax (new-primitive
checks that its name is free there); the generated export tests need flatbuffers.
Each is
downloaded (no dependencies, binary only) at the version installed here, for
manylinux x86-64 and the given Python, into DIR (default .accelerator-wheels,
which git ignores). Prints each wheel and the folder's size: a device tool that
copies the working tree may cap what travels (64 MiB here).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEST = ROOT / ".accelerator-wheels"
# Distribution -> the module it installs: what accelerator_check.py needs beyond jax,
# numpy and pytest.
NEEDS = {"jinja2": "jinja2", "markupsafe": "markupsafe", "flatbuffers": "flatbuffers",
         "tree-sitter": "tree_sitter", "tree-sitter-python": "tree_sitter_python"}
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux1_x86_64")


def download(dest: Path, python_version: str) -> list[Path]:
    """The wheels of NEEDS, at the versions installed here, in `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    pins = [f"{name}=={metadata.version(name)}" for name in NEEDS]
    platforms = [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--only-binary=:all:", "--python-version", python_version,
                    "--implementation", "cp", *platforms, "-d", str(dest), *pins],
                   check=True)
    return sorted(dest.glob("*.whl"))


def distribution(wheel: Path) -> str:
    """A wheel's distribution name, normalised: `MarkupSafe-3.0.2-...` -> `markupsafe`."""
    return wheel.name.split("-")[0].lower().replace("_", "-")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=DEST)
    parser.add_argument("--python-version", default="3.11")
    args = parser.parse_args(argv)
    wheels = download(args.dest, args.python_version)
    for wheel in wheels:
        print(f"{wheel.stat().st_size / 1024:8.0f} KiB  {wheel.name}")
    total = sum(wheel.stat().st_size for wheel in wheels)
    print(f"{total / 2**20:.1f} MiB in {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Generate every new-primitive variant and `jaxmap new` kind and run their tests on
this machine's accelerator, with x64 off and on; one line per variant.

    python scripts/accelerator_check.py [--wheels DIR] [--work DIR] [--backend B]
                                        [--report FILE]

For a bare accelerator host with jax (its jaxlib and plugin), numpy and pytest:
the wheels in DIR (default .accelerator-wheels, from scripts/accelerator_wheels.py)
whose modules this Python lacks are installed under WORK/site first and added to
the path after the host's own. The backend (default: jax.default_backend(), asked
in a child process) is passed to the generator, which refuses in one line a kind
that cannot run there (ffi on a TPU); the table shows that line. The variants are
scripts/check_generated.py's, generated for the installed jax into WORK/generated.
Their tests run in one pytest process per x64 setting, since an accelerator is
held by one program at a time; they run compiled there (Pallas through Mosaic on
a TPU) and compare with the tolerance row of that backend. Prints a markdown
table, also written to FILE, and exits non-zero if any variant fails.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import accelerator_wheels
import check_generated

from jaxmap.knowledge import versions

X64 = {"x64 off": "0", "x64 on": "1"}
PROBE = ("import jax; d = jax.devices()[0]; "
         "print(jax.__version__, jax.default_backend(), d.device_kind, sep='|')")


def install_wheels(wheels: Path, site: Path) -> list[str]:
    """Install into `site` the wheels of NEEDS whose module this Python lacks, and
    put `site` last on the path (here and for children); the names installed."""
    missing = [wheel for wheel in sorted(wheels.glob("*.whl"))
               if importlib.util.find_spec(
                   accelerator_wheels.NEEDS.get(accelerator_wheels.distribution(wheel),
                                                "")) is None]
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "install", "--isolated", "--quiet",
                        "--no-index", "--no-deps", "--no-compile", "--target", str(site),
                        *map(str, missing)], check=True,
                       env=dict(os.environ, PIP_CONFIG_FILE=os.devnull))
        sys.path.append(str(site))
        os.environ["PYTHONPATH"] = os.pathsep.join(
            filter(None, [os.environ.get("PYTHONPATH"), str(site)]))
    return [accelerator_wheels.distribution(wheel) for wheel in missing]


def probe() -> tuple[str, str, str]:
    """(jax version, backend, device kind), from a child process that lets go of
    the accelerator when it ends."""
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    version, backend, device = out.split("|")
    return version, backend, device


def check(release: str, backend: str, work: Path) -> dict[str, dict[str, str]]:
    """{variant: {x64 setting: status}}."""
    out = work / "generated"
    refused = check_generated.generate_all(release, out, backend=backend)
    table: dict[str, dict[str, str]] = {}
    for setting, flag in X64.items():
        env = dict(os.environ, JAX_ENABLE_X64=flag)
        statuses = {**check_generated.run_tests(Path(sys.executable), out, env), **refused}
        for variant, status in statuses.items():
            table.setdefault(variant, {})[setting] = status
        print(f"{setting}: " + "; ".join(f"{v}: {s}" for v, s in statuses.items()),
              file=sys.stderr, flush=True)
    return table


def format_table(title: str, table: dict[str, dict[str, str]]) -> str:
    """`title`, then a markdown table: variant x x64 setting (one cell when refused)."""
    rows = [title, "", "| variant | " + " | ".join(X64) + " |",
            "|---|" + "---|" * len(X64)]
    for variant, cells in table.items():
        values = list(cells.values())
        shown = values[:1] if values[0].startswith("refused") else values
        rows.append(f"| {variant} | " + " | ".join(shown) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheels", type=Path, default=accelerator_wheels.DEST)
    parser.add_argument("--work", type=Path, default=Path("/tmp/jaxmap-accelerator"))
    parser.add_argument("--backend", help="what the generator targets [default: jax's]")
    parser.add_argument("--report", type=Path, help="also write the table here")
    args = parser.parse_args(argv)
    installed = install_wheels(args.wheels, args.work / "site")
    os.environ.setdefault("JAXMAP_CACHE_DIR", str(args.work / "cache"))
    version, backend, device = probe()
    backend = args.backend or backend
    release = versions.release(version).text
    table = check(release, backend, args.work)
    title = (f"jax {version} on {backend} ({device}); wheels installed: "
             f"{', '.join(installed) or 'none'}")
    text = format_table(title, table)
    print(text)
    if args.report:
        args.report.write_text(text + "\n")
    failed = any(s.startswith("FAIL") for cells in table.values() for s in cells.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

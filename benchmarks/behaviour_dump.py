"""Dump what jaxmap answers on a tree, so a refactor can show it changed nothing.

    python benchmarks/behaviour_dump.py dump OUT_DIR [--root PATH]
    python benchmarks/behaviour_dump.py compare BEFORE_DIR AFTER_DIR

`dump` writes `primitives --json`, `index --json` (less its timings) and
`locate --json` for a fixed list of primitives, functions, classes and modules, plus
`graph --json` and `repo-map --json`, one file each. `compare` lists every file
that differs and exits 1 if any does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

NAMES = [
    # primitives, by every spelling
    "psum", "psum_p", "add", "add_p", "dot_general", "scatter-add", "cumsum", "eigh",
    "while", "cond", "scan", "pjit", "jit", "custom_jvp_call", "custom_vjp_call", "mul",
    "conv_general_dilated", "reduce_sum", "select_n", "sharding_constraint", "pallas_call",
    "ppermute", "all_gather", "sin", "exp", "cholesky", "random_bits", "convert_element_type",
    # functions, classes, modules, dotted paths
    "lax.psum", "jax.lax.psum", "jax.jit", "jnp.einsum", "jax.numpy.einsum", "shard_map",
    "custom_vjp", "Primitive", "jax._src.interpreters.ad", "jax._src.lax.lax", "ad",
    "mlir.register_lowering", "jax.grad", "vmap", "make_jaxpr", "checkpoint",
    "definitely_not_a_name", "psu",
]

_VOLATILE = {"seconds", "elapsed", "index", "index_path", "parse_seconds"}  # timings, cache paths


def _run(args: list[str], root: str | None) -> str:
    command = [sys.executable, "-m", "jaxmap", *args] + (["--root", root] if root else [])
    done = subprocess.run(command, capture_output=True, text=True)
    return json.dumps({"rc": done.returncode, "stdout": _stable(done.stdout),
                       "stderr": done.stderr}, indent=1, sort_keys=True)


def _stable(stdout: str):
    """Parsed JSON without the fields that change between runs."""
    try:
        data = json.loads(stdout)
    except json.JSONDecodeError:
        return stdout
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k not in _VOLATILE}
    return data


def dump(out: Path, root: str | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    _run(["index"], root)
    jobs = {"primitives": ["primitives", "--json"], "index": ["index", "--json"],
            "graph-psum": ["graph", "psum", "--json"],
            "repo-map": ["repo-map", "--json"]}
    jobs.update({f"locate-{name}": ["locate", name, "--json"] for name in NAMES})
    for label, args in jobs.items():
        (out / f"{label}.json").write_text(_run(args, root))


def compare(before: Path, after: Path) -> int:
    names = sorted({p.name for p in before.glob("*.json")} | {p.name for p in after.glob("*.json")})
    differing = [n for n in names if not (before / n).exists() or not (after / n).exists()
                 or (before / n).read_text() != (after / n).read_text()]
    for name in differing:
        print(f"differs: {name}")
    print(f"{len(names) - len(differing)} of {len(names)} dumps identical")
    return 1 if differing else 0


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "dump":
        root = argv[argv.index("--root") + 1] if "--root" in argv else None
        dump(Path(argv[1]), root)
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

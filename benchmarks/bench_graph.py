"""Call-graph figures for the installed jax, each measured side by side in one run.

    python benchmarks/bench_graph.py [--root PATH] [--repeat N] [--baseline DIR]

Prints: `binds`, `callers`, `calls` and `graph --depth 2` for psum, add, dot_general,
scan and jit on a warm index, each beside `locate` of the same name (new process each
time, interleaved); the cold index with call edges beside the cold index of the code
in --baseline DIR (a copy of jaxmap before the call graph, e.g. `git archive` of main),
alternating; peak memory of a cold index; the share of unresolved call edges.
Targets from the graph issue are printed beside each ratio; nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CODE = HERE.parent
sys.path.insert(0, str(HERE))
from bench_foundation import _line, peak_memory

TARGETS = {"query_vs_locate": 2.0, "cold_vs_baseline": 1.15, "peak_mb": 300}
NAMES = ("psum", "add", "dot_general", "scan", "jit")
QUERIES = (("binds", ()), ("callers", ()), ("calls", ()), ("graph", ("--depth", "2")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=None, help="tree to measure (default: installed jax)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", default=None, metavar="DIR",
                        help="jaxmap code to compare the cold index with")
    args = parser.parse_args()
    sys.path.insert(0, str(CODE))
    from jaxmap import roots

    root = str(roots.resolve_root(args.root))
    cache = tempfile.mkdtemp(prefix="jaxmap-bench-graph-")
    os.environ["JAXMAP_CACHE_DIR"] = cache
    try:
        print(f"root: {root}")
        queries(root, args.repeat)
        unresolved(root)
        if args.baseline:
            cold(root, args.repeat, Path(args.baseline).resolve())
        os.chdir(CODE)  # peak_memory runs `python -c`: this code, first on sys.path
        peak_memory(Path(root))
        _line("(graph issue's target)", "", f"target <= {TARGETS['peak_mb']} MB")
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def _jaxmap(code: Path, *argv: str) -> list[str]:
    """`jaxmap ARGV` run from the code in `code`."""
    program = (f"import sys; sys.path.insert(0, {str(code)!r}); "
               "from jaxmap.cli import main; sys.exit(main())")
    return [sys.executable, "-c", program, *argv]


def _time(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def queries(root: str, repeat: int) -> None:
    subprocess.run(_jaxmap(CODE, "index", "--root", root), check=True, capture_output=True)
    print(f"warm index, new process each time (median of {repeat}; ratio to locate NAME)")
    worst = 0.0
    for name in NAMES:
        runs = {"locate": _jaxmap(CODE, "locate", name, "--root", root)}
        for command, extra in QUERIES:
            runs[command] = _jaxmap(CODE, command, name, *extra, "--root", root)
        times = {label: [] for label in runs}
        for _ in range(repeat):  # interleaved, so machine noise hits all alike
            for label, command in runs.items():
                times[label].append(_time(command))
        median = {label: statistics.median(values) for label, values in times.items()}
        ratios = "  ".join(f"{label} {median[label] / median['locate']:.2f}x"
                           for label, _ in QUERIES)
        worst = max([worst] + [median[label] / median["locate"] for label, _ in QUERIES])
        _line(f"{name}: locate {median['locate'] * 1000:.0f} ms", ratios)
    _line("worst ratio", f"{worst:.2f}x", f"target <= {TARGETS['query_vs_locate']}x")


def unresolved(root: str) -> None:
    out = subprocess.run(_jaxmap(CODE, "index", "--json", "--root", root), check=True,
                         capture_output=True, text=True).stdout
    calls = json.loads(out)["calls"]
    print("call edges")
    _line("resolved / external / unresolved",
          f"{calls['resolved']} / {calls['external']} / {calls['unresolved']}")
    _line("unresolved share", f"{calls['unresolved_share']:.1%}")


def cold(root: str, repeat: int, baseline: Path) -> None:
    code = ("import sys, time; sys.path.insert(0, sys.argv[1]); "
            "from jaxmap.indexing import indexer; t = time.perf_counter(); "
            "indexer.build_index(sys.argv[2], rebuild=True); print(time.perf_counter() - t)")
    times: dict[str, list[float]] = {"call graph": [], "baseline": []}
    for _ in range(max(3, repeat // 2)):  # alternating, so machine noise hits both alike
        for label, where in (("call graph", CODE), ("baseline", baseline)):
            with tempfile.TemporaryDirectory() as cache:
                out = subprocess.run([sys.executable, "-c", code, str(where), root],
                                     check=True, capture_output=True, text=True,
                                     env={**os.environ, "JAXMAP_CACHE_DIR": cache})
            times[label].append(float(out.stdout))
    best = {label: min(values) for label, values in times.items()}
    print(f"cold index, best of {len(times['baseline'])}")
    _line("with call edges", f"{best['call graph']:.3f} s")
    _line(f"baseline ({baseline.name})", f"{best['baseline']:.3f} s")
    _line("ratio", f"{best['call graph'] / best['baseline']:.2f}x",
          f"target <= {TARGETS['cold_vs_baseline']}x")


if __name__ == "__main__":
    main()

"""Foundation figures for the installed jax, each measured side by side in one run.

    python benchmarks/bench_foundation.py [--root PATH] [--repeat N] [--skip-verify]

Prints: verify accuracy; cold index vs parsing every file once on one core; re-index
with nothing changed; `jaxmap locate psum` end to end vs `python -c "import click"`
and vs `rg -n psum_p ROOT/jax`; peak memory of a cold index. Targets from the
foundation issue are printed beside each ratio; nothing here asserts.
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

TARGETS = {
    "cold_ratio": 1.0, "reindex_s": 0.25, "locate_vs_click": 1.5, "peak_mb": 500,
    "primitive_recall": 0.99, "pair_recall": 0.99, "extra_rate": 0.01,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=None, help="tree to measure (default: installed jax)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--skip-verify", action="store_true")
    args = parser.parse_args()
    from jaxmap import roots

    root = roots.resolve_root(args.root)
    cache = Path(tempfile.mkdtemp(prefix="jaxmap-bench-"))
    os.environ["JAXMAP_CACHE_DIR"] = str(cache)
    try:
        print(f"root: {root}")
        cold_index(root, args.repeat)
        reindex(root, args.repeat)
        locate_end_to_end(root, args.repeat)
        peak_memory(root)
        if not args.skip_verify and args.root is None:
            accuracy()
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def _line(label: str, value: str, target: str = "") -> None:
    print(f"  {label:<44} {value:>14}   {target}")


def cold_index(root: Path, repeat: int) -> None:
    from jaxmap.indexing import discover, indexer, parse

    files = discover.list_files(root).files
    parse_times, index_times = [], []
    for _ in range(max(3, repeat // 2)):
        start = time.perf_counter()
        for source in files:
            parse.parse((Path(root) / source.path).read_bytes())
        parse_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        indexer.build_index(root, rebuild=True)
        index_times.append(time.perf_counter() - start)
    best_parse, best_index = min(parse_times), min(index_times)
    print(f"cold index ({len(files)} files, {os.cpu_count()} cores; best of {len(parse_times)})")
    _line("parse every file once, one core", f"{best_parse:.3f} s")
    _line("jaxmap cold index (build_index, rebuild)", f"{best_index:.3f} s")
    _line("ratio index / parse", f"{best_index / best_parse:.2f}x",
          f"target <= {TARGETS['cold_ratio']}x")
    phases(root)


def phases(root: Path) -> None:
    """One more cold index, timed by phase: extraction runs on every core, the rest
    on one, so on few cores the serial phases decide how far the ratio can fall."""
    from jaxmap.indexing import indexer, resolve, worker
    from jaxmap.store import write as store

    spent: dict[str, float] = {}

    def timed(module, name: str, label: str):
        run = getattr(module, name)

        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return run(*args, **kwargs)
            finally:
                spent[label] = time.perf_counter() - start
        return run, wrapper

    hooks = [(module, name, *timed(module, name, label)) for module, name, label in (
        (worker, "extract_files", "extract (parallel)"), (resolve, "resolve", "resolve"),
        (store.Writing, "files", "store the files' facts"),
        (store.Writing, "finish", "store the rest"))]
    for module, name, _, wrapper in hooks:
        setattr(module, name, wrapper)
    try:
        start = time.perf_counter()
        indexer.build_index(root, rebuild=True)
        total = time.perf_counter() - start
    finally:
        for module, name, run, _ in hooks:
            setattr(module, name, run)
    print("  where one cold index spends its time")
    for label, seconds in [*spent.items(), ("the rest", total - sum(spent.values()))]:
        _line(f"  {label}", f"{seconds:.3f} s")


def reindex(root: Path, repeat: int) -> None:
    from jaxmap.indexing import indexer

    indexer.build_index(root)
    in_process = []
    for _ in range(repeat):
        start = time.perf_counter()
        report = indexer.build_index(root)
        in_process.append(time.perf_counter() - start)
        assert report.parsed == 0
    cli = _times([_jaxmap(), "index"], repeat)
    print("re-index, nothing changed")
    _line("build_index() in process (median)", f"{statistics.median(in_process):.3f} s",
          f"target <= {TARGETS['reindex_s']} s")
    _line("`jaxmap index` new process (median)", f"{statistics.median(cli):.3f} s")


def locate_end_to_end(root: Path, repeat: int) -> None:
    jaxmap = _jaxmap()
    subprocess.run([jaxmap, "locate", "psum"], check=True, capture_output=True)
    runs = {"locate": [jaxmap, "locate", "psum"],
            "click": [sys.executable, "-c", "import click"]}
    rg = shutil.which("rg")
    if rg:
        runs["rg"] = [rg, "-n", "psum_p", str(Path(root) / "jax")]
    times = {name: [] for name in runs}
    for _ in range(repeat):  # interleaved, so machine noise hits all alike
        for name, command in runs.items():
            times[name] += _times(command, 1)
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"`jaxmap locate psum`, warm index, new process each time (median of {repeat})")
    _line("jaxmap locate psum", f"{median['locate'] * 1000:.1f} ms")
    _line('python -c "import click"', f"{median['click'] * 1000:.1f} ms")
    _line("ratio locate / import click", f"{median['locate'] / median['click']:.2f}x",
          f"target <= {TARGETS['locate_vs_click']}x")
    if rg:
        _line("rg -n psum_p ROOT/jax", f"{median['rg'] * 1000:.1f} ms")
        _line("ratio locate / rg", f"{median['locate'] / median['rg']:.2f}x")
    else:
        _line("rg -n psum_p ROOT/jax", "rg not installed")


def peak_memory(root: Path) -> None:
    code = ("import resource, sys; from jaxmap.indexing import indexer; "
            "indexer.build_index(sys.argv[1], rebuild=True); "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, str(root)], check=True,
                         capture_output=True, text=True).stdout.split()
    main_kb, helper_kb = int(out[0]), int(out[1])
    helpers = (os.cpu_count() or 1) - 1  # the main process extracts too
    print("peak memory, cold index")
    _line("main process", f"{main_kb / 1024:.0f} MB")
    _line(f"largest helper process (x{helpers})", f"{helper_kb / 1024:.0f} MB")
    _line("main + all helpers (upper bound)", f"{(main_kb + helpers * helper_kb) / 1024:.0f} MB",
          f"target <= {TARGETS['peak_mb']} MB")


def accuracy() -> None:
    out = subprocess.run([_jaxmap(), "verify", "--json"], check=True, capture_output=True,
                         text=True).stdout
    report = json.loads(out)
    print(f"accuracy vs live registries of jax {report['jax_version']} (jaxmap verify)")
    p, q, e = report["primitives"], report["pairs"], report["extra_rules"]
    _line("primitives found", f"{p['found']}/{p['total']} {p['recall']:.1%}",
          f"target >= {TARGETS['primitive_recall']:.0%}")
    _line("(primitive, kind) pairs found", f"{q['found']}/{q['total']} {q['recall']:.1%}",
          f"target >= {TARGETS['pair_recall']:.0%}")
    _line("reported rules the runtime lacks", f"{e['extra']}/{e['checked']} {e['rate']:.1%}",
          f"target <= {TARGETS['extra_rate']:.0%}")
    f = report["functions"]
    _line("rule functions the runtime holds", f"{f['confirmed']}/{f['checked']} {f['rate']:.1%}")


def _jaxmap() -> str:
    """The `jaxmap` command of this Python's environment (not just the first on PATH)."""
    beside = Path(sys.executable).with_name("jaxmap")
    found = str(beside) if beside.exists() else shutil.which("jaxmap")
    if not found:
        sys.exit("the `jaxmap` command is not installed: pip install .")
    return found


def _times(command: list[str], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


if __name__ == "__main__":
    main()

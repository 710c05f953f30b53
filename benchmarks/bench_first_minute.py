"""The first minute of a new user, measured side by side in interleaved rounds.

    python benchmarks/bench_first_minute.py [--root PATH] [--rounds N] [--callers NAME]

Each round times, one after the other: a one-core tree-sitter parse of every file of
the root (the yardstick); a cold `jaxmap locate psum` in a new process with an empty
cache (the index's first phase); the first graph question after it, `jaxmap callers
NAME` (the second phase); a warm `jaxmap locate psum`; `python -c "import click"`;
and a re-index with nothing changed, in process. Prints the best and median of each
ratio beside its target, and the peak memory of the two cold processes. Run it on a
`pip install .` (not editable): the `jaxmap` found on PATH is the one measured.
Nothing here asserts.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TARGETS = {"cold": 1.2, "graph": 0.8, "warm": 1.25, "reindex": 0.1, "peak_mb": 300}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=None, help="tree to index (default: installed jax)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--callers", default="jax._src.lax.parallel.psum")
    args = parser.parse_args()
    from jaxmap import roots
    from jaxmap.indexing import discover

    root = roots.resolve_root(args.root)
    files = discover.list_files(root).files
    jaxmap = shutil.which("jaxmap") or sys.exit("jaxmap is not on PATH: pip install . first")
    print(f"root: {root} ({len(files)} files), {os.cpu_count()} cores, {args.rounds} rounds, "
          f"jaxmap: {jaxmap}")
    rows: dict[str, list[float]] = {k: [] for k in
                                    ("parse", "cold", "graph", "warm", "click", "reindex")}
    peaks: dict[str, int] = {}
    for _ in range(args.rounds):
        rows["parse"].append(_parse_once(root, files))
        cache = tempfile.mkdtemp(prefix="jaxmap-first-minute-")
        env = {**os.environ, "JAXMAP_CACHE_DIR": cache, "JAXMAP_QUIET": "1"}
        locate = [jaxmap, "locate", "psum", *(["--root", args.root] if args.root else [])]
        seconds, peak = _timed(locate, env)
        peaks.setdefault("cold", peak)  # the first round's: RUSAGE_CHILDREN only grows
        rows["cold"].append(seconds)
        callers = [jaxmap, "callers", args.callers, *(["--root", args.root] if args.root
                                                       else [])]
        seconds, peak = _timed(callers, env)
        peaks.setdefault("graph", peak)
        rows["graph"].append(seconds)
        rows["warm"].append(_timed(locate, env)[0])
        rows["click"].append(_timed([sys.executable, "-c", "import click"], env)[0])
        rows["reindex"].append(_reindex(root, cache))
        shutil.rmtree(cache, ignore_errors=True)
    _report(rows, peaks)


def _parse_once(root: str, files) -> float:
    """Every file parsed once by tree-sitter on one core, reading included."""
    from jaxmap.indexing import parse

    start = time.perf_counter()
    for source in files:
        with open(os.path.join(root, source.path), "rb") as handle:
            parse.parse(handle.read())
    return time.perf_counter() - start


def _timed(command: list[str], env: dict) -> tuple[float, int]:
    """Wall seconds of a new process, and its peak memory in MB (its helpers' too:
    the largest of them, as RUSAGE_CHILDREN reports)."""
    start = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True)
    seconds = time.perf_counter() - start
    return seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024


def _reindex(root: str, cache: str) -> float:
    """build_index with nothing changed, in this process (best of three)."""
    os.environ["JAXMAP_CACHE_DIR"] = cache
    from jaxmap.indexing import indexer

    times = []
    for _ in range(3):
        start = time.perf_counter()
        indexer.build_index(root, graph=True)
        times.append(time.perf_counter() - start)
    return min(times)


def _report(rows: dict[str, list[float]], peaks: dict[str, int]) -> None:
    def ratios(key: str, over: str) -> list[float]:
        return [a / b for a, b in zip(rows[key], rows[over])]

    lines = [
        ("cold `locate psum` / one-core parse", ratios("cold", "parse"), TARGETS["cold"], "x"),
        ("first `callers` after it / one-core parse", ratios("graph", "parse"),
         TARGETS["graph"], "x"),
        ("warm `locate psum` / `import click`", ratios("warm", "click"), TARGETS["warm"], "x"),
        ("re-index, nothing changed, in process", rows["reindex"], TARGETS["reindex"], " s"),
    ]
    for key in ("parse", "cold", "graph", "warm", "click"):
        print(f"  {key:<44} best {min(rows[key]):7.3f} s   median "
              f"{statistics.median(rows[key]):7.3f} s")
    for label, values, target, unit in lines:
        print(f"  {label:<44} best {min(values):7.2f}{unit}  median "
              f"{statistics.median(values):7.2f}{unit}  (target <= {target}{unit})")
    for key, label in (("cold", "peak memory, cold locate"),
                       ("graph", "peak memory, first callers (upper bound)")):
        print(f"  {label:<44} {peaks[key]:7d} MB   (target <= {TARGETS['peak_mb']} MB)")


if __name__ == "__main__":
    main()

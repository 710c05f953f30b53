"""How long `jaxmap diff BASE..HEAD` takes on a JAX checkout, and its peak memory,
beside the issue's targets (#39: <= 3 s with BASE warm, <= 300 MB).

    python benchmarks/bench_review.py --repo PATH [--commit REF] [--keep-cache DIR]

Three runs, each in a fresh process with its own peak, in one cache: cold, REF~1
indexed in an empty cache, as a review whose HEAD it was leaves it (a review of
REF~2..REF~1 would index nothing where that commit changes no Python file); warm
BASE, REF~1..REF (REF~1 cached, REF laid from it: the issue's case); warm, REF~1..REF
again (both cached: the comparison alone). The cache is a temporary directory unless
--keep-cache names one (it must start empty).

Each row splits the wall time into the ends' index builds (the call graph solved for
a revision not cached) and the review's own (laying trees from git blobs, opening
and comparing both indexes, the JSON), and gives CPU seconds beside it: on shared
cores the wall time says as much about the neighbours as about jaxmap. Peak memory is
split the same way where Linux lets a process reset its peak (/proc/self/clear_refs):
the builds' and the review's own (after a build, the latter starts from what the
build's allocations left the process holding).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

_TARGET_SECONDS, _TARGET_MB = 3.0, 300.0


def one(repo: str, span: str) -> None:
    """Child: one review, in-process, as `jaxmap diff SPAN --json` makes it (where SPAN
    is one commit, that commit's index alone); prints its wall time, the part spent
    building indexes, CPU time and peak memory as JSON."""
    from jaxmap.render.review_json import review_document
    from jaxmap.revisions import git, materialise
    from jaxmap.revisions.compare import review_range
    from jaxmap.session import open_index

    building = 0.0
    peaks = {"build_mb": 0.0, "own_mb": 0.0}

    def open_tree(root: str):
        nonlocal building
        _phase_ends(peaks, "own_mb")
        start = time.perf_counter()
        try:
            return open_index(root, graph=True)
        finally:
            building += time.perf_counter() - start
            _phase_ends(peaks, "build_mb")

    start = time.perf_counter()
    if ".." in span:
        review_document(review_range(repo, span, open_tree))
    else:
        opened = git.open_repo(repo)
        for index in materialise.indexes(opened, [git.commit(opened, span)], open_tree):
            index.close()
    seconds = time.perf_counter() - start
    _phase_ends(peaks, "own_mb")
    own, children = (resource.getrusage(who) for who in
                     (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    print(json.dumps({"seconds": seconds, "building": building,
                      "cpu": own.ru_utime + own.ru_stime + children.ru_utime
                      + children.ru_stime,
                      # Resetting the peak resets ru_maxrss too: the phases' peaks hold it.
                      "mb": max(own.ru_maxrss / 1024, children.ru_maxrss / 1024,
                                *(peak for peak in peaks.values() if peak is not None)),
                      **peaks}))


def _phase_ends(peaks: dict, phase: str) -> None:
    """Add the process's peak memory since the last phase ended to `phase`'s, then
    start the next phase's peak from now (none where Linux's counters are absent)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
            clear.write("5")  # reset the peak resident size to the current one
    except (OSError, StopIteration, ValueError):
        peaks[phase] = None
        return
    if peaks[phase] is not None:
        peaks[phase] = max(peaks[phase], kb / 1024)


def _measure(repo: str, span: str, cache: str) -> dict:
    done = subprocess.run([sys.executable, __file__, "--one", span, "--repo", repo],
                          capture_output=True, text=True,
                          env={**os.environ, "JAXMAP_CACHE_DIR": cache})
    if done.returncode != 0:
        sys.exit(f"review of {span} failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True)
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--keep-cache", default=None)
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.repo, args.one)
        return
    cache = args.keep_cache or tempfile.mkdtemp(prefix="bench-review-")
    ref = args.commit
    rows = [("cold", _measure(args.repo, f"{ref}~1", cache)),
            ("warm BASE", _measure(args.repo, f"{ref}~1..{ref}", cache)),
            ("warm", _measure(args.repo, f"{ref}~1..{ref}", cache))]
    print(f"jaxmap diff on {args.repo} ({os.cpu_count()} cores): cold {ref}~1 indexed, "
          f"then {ref}~1..{ref}")
    print(f"{'run':<10} {'seconds':>8} {'x 3 s':>7} {'builds':>7} {'own':>6} {'cpu s':>6} "
          f"{'peak MB':>8} {'x 300 MB':>9} {'builds':>7} {'own':>6}")
    for name, row in rows:
        print(f"{name:<10} {row['seconds']:8.1f} {row['seconds'] / _TARGET_SECONDS:7.1f} "
              f"{row['building']:7.1f} {row['seconds'] - row['building']:6.1f} "
              f"{row['cpu']:6.1f} {row['mb']:8.0f} {row['mb'] / _TARGET_MB:9.2f} "
              f"{_mb(row['build_mb']):>7} {_mb(row['own_mb']):>6}")


def _mb(peak: float | None) -> str:
    return "-" if peak is None else f"{peak:.0f}"


if __name__ == "__main__":
    main()

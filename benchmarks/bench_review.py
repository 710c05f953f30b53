"""How long `jaxmap diff BASE..HEAD` takes on a JAX checkout, and its peak memory,
beside the issue's targets (#39: <= 3 s with BASE warm, <= 300 MB).

    python benchmarks/bench_review.py --repo PATH [--commit REF] [--keep-cache DIR]

Three reviews, each in a fresh process with its own peak, in one cache: cold, a
review of REF~2..REF~1 in an empty cache (both ends indexed, the second from the
first's tree and index); warm BASE, REF~1..REF (REF~1 cached, REF laid from it: the
issue's case); warm, REF~1..REF again (both cached: the comparison alone). The cache
is a temporary directory unless --keep-cache names one (it must start empty).
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
    """Child: one review, in-process; prints its wall time and peak memory as JSON."""
    from jaxmap.cli import main

    start = time.perf_counter()
    with open(os.devnull, "w") as sink:
        stdout, sys.stdout = sys.stdout, sink
        try:
            code = main(["--quiet", "diff", span, "--repo", repo, "--json"])
        finally:
            sys.stdout = stdout
    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    print(json.dumps({"code": code, "seconds": time.perf_counter() - start, "mb": peak}))


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
    rows = [("cold", _measure(args.repo, f"{ref}~2..{ref}~1", cache)),
            ("warm BASE", _measure(args.repo, f"{ref}~1..{ref}", cache)),
            ("warm", _measure(args.repo, f"{ref}~1..{ref}", cache))]
    print(f"jaxmap diff on {args.repo} ({os.cpu_count()} cores): cold {ref}~2..{ref}~1, "
          f"then {ref}~1..{ref}")
    print(f"{'run':<10} {'seconds':>8} {'x 3 s':>7} {'peak MB':>8} {'x 300 MB':>9}")
    for name, row in rows:
        print(f"{name:<10} {row['seconds']:8.1f} {row['seconds'] / _TARGET_SECONDS:7.1f} "
              f"{row['mb']:8.0f} {row['mb'] / _TARGET_MB:9.2f}")


if __name__ == "__main__":
    main()

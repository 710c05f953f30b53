"""A cold index on one worker and on every core: how each phase scales.

    python benchmarks/bench_cores.py [--root TREE] [--rounds N]

Builds the index of TREE (default: the installed jax) from nothing, with the call
graph, alternately on one worker and on every core of the machine (`os.cpu_count()`),
N rounds each (default 2), and prints each build's parse phase (files extracted in
helper processes), its call-graph phase (the value flow's solve, one process, and the
rows read off it, each module's in one of the helpers), and the ratio of every core to one for each (the engine issue's
target: the whole build at most 0.4). Nothing here asserts.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def _build(root: str | None, jobs: int) -> tuple[float, float]:
    """(parse s, call graph s) of one cold build on `jobs` workers."""
    from jaxmap.indexing.indexer import build_index

    os.environ["JAXMAP_CACHE_DIR"] = tempfile.mkdtemp(prefix="jaxmap-cores-")
    ends: list[float] = []

    def progress(done: int, total: int, _item=None) -> None:
        if done == total == 0:  # nought of nought: the parse phase ended
            ends.append(time.perf_counter())

    start = time.perf_counter()
    build_index(root, rebuild=True, jobs=jobs, progress=progress)
    end = time.perf_counter()
    parsed = ends[0] if ends else end
    return parsed - start, end - parsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=None)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    times: dict[int, list[tuple[float, float]]] = {1: [], cores: []}
    print(f"{'workers':>7} {'parse s':>8} {'graph s':>8} {'total s':>8}")
    for _ in range(args.rounds):
        for jobs in times:
            parse, graph = _build(args.root, jobs)
            times[jobs].append((parse, graph))
            print(f"{jobs:>7} {parse:>8.1f} {graph:>8.1f} {parse + graph:>8.1f}", flush=True)
    one, every = (tuple(map(sum, zip(*times[jobs]))) for jobs in (1, cores))
    print(f"every core ({cores}) / one: parse {every[0] / one[0]:.2f}, graph "
          f"{every[1] / one[1]:.2f}, total {sum(every) / sum(one):.2f} (target <= 0.4)")


if __name__ == "__main__":
    main()

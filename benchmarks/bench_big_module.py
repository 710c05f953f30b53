"""One generated module of many small functions: does indexing grow with its size?

    python benchmarks/bench_big_module.py [--functions N ...]

For each N (default 10,000, 20,000, 40,000 and 86,000: the issue's 4 MB module),
writes a package whose one module holds N functions, each calling another and a jax
function, and times in this process a one-core tree-sitter parse of it and a cold
index with call graph on one worker. Prints both, their ratio (the target: at most
10) and seconds per thousand functions, which stay flat when the cost is linear; and
both in this process's CPU time too, steadier than the clock on a shared machine.
Nothing here asserts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", type=int, nargs="+",
                        default=[10_000, 20_000, 40_000, 86_000])
    args = parser.parse_args()
    from jaxmap.indexing import indexer, parse

    scratch = tempfile.mkdtemp(prefix="jaxmap-big-module-")
    os.environ["JAXMAP_CACHE_DIR"] = os.path.join(scratch, "cache")
    print(f"{'functions':>9} {'MB':>5} {'parse s':>8} {'index s':>8} {'index/parse':>11} "
          f"{'s per 1k':>8} {'cpu parse':>9} {'cpu index':>9} {'cpu ratio':>9}")
    for count in args.functions:
        root = os.path.join(scratch, f"tree{count}")
        source = _module(count)
        os.makedirs(os.path.join(root, "generated"))
        open(os.path.join(root, "generated", "__init__.py"), "w").close()
        with open(os.path.join(root, "generated", "functions.py"), "wb") as handle:
            handle.write(source)
        start, cpu = time.perf_counter(), time.process_time()
        parse.parser().parse(source)
        parsed, cpu_parsed = time.perf_counter() - start, time.process_time() - cpu
        start, cpu = time.perf_counter(), time.process_time()
        report = indexer.build_index(root, jobs=1)
        indexed, cpu_indexed = time.perf_counter() - start, time.process_time() - cpu
        if report.files != 2:
            raise SystemExit(f"the module was not indexed ({report})")
        print(f"{count:9,} {len(source) / 1e6:5.1f} {parsed:8.2f} {indexed:8.2f} "
              f"{indexed / parsed:11.1f} {indexed / count * 1000:8.3f} {cpu_parsed:9.2f} "
              f"{cpu_indexed:9.2f} {cpu_indexed / cpu_parsed:9.1f}")
    shutil.rmtree(scratch, ignore_errors=True)


def _module(count: int) -> bytes:
    lines = ["import jax.numpy as jnp", ""]
    for i in range(count):
        lines += [f"def f{i}(x):", f"    return jnp.sin(f{i // 2}(x))", ""]
    return "\n".join(lines).encode()


if __name__ == "__main__":
    main()

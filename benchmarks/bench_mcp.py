"""`jaxmap mcp` figures on a warm index, side by side in one run.

    python benchmarks/bench_mcp.py [--root PATH] [--repeat N]

Prints: the `locate psum` tool's time inside the server (tools.call on a warm
session, as the server's handler runs it); the same call end to end from a real MCP
client over stdio to `python -m jaxmap mcp`; and `python -m jaxmap locate psum
--json` as a new process each time. Both commands run this checkout's code. The
issue's targets are printed beside; nothing here asserts.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGETS = {"server_ms": 20.0, "ratio": 1 / 3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=None)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    root_args = ["--root", args.root] if args.root else []
    command = [sys.executable, "-m", "jaxmap", "locate", "psum", "--json", *root_args]
    subprocess.run(command, check=True, capture_output=True, cwd=REPO)  # warm the index
    server = in_server(args.root, args.repeat)
    stdio = over_stdio(root_args, args.repeat)
    process = statistics.median(_process_times(command, args.repeat))
    print(f"locate psum on a warm index (median of {args.repeat})")
    _line("inside the server (tools.call)", f"{server * 1000:.2f} ms",
          f"target <= {TARGETS['server_ms']:.0f} ms")
    _line("MCP client over stdio, round trip", f"{stdio * 1000:.2f} ms")
    _line("`python -m jaxmap locate psum --json`", f"{process * 1000:.1f} ms")
    _line("ratio stdio round trip / process", f"{stdio / process:.3f}",
          f"target <= {TARGETS['ratio']:.3f}")


def in_server(root: str | None, repeat: int) -> float:
    from jaxmap import tools
    from jaxmap.session import Session

    with Session(root) as session:
        session.index()
        return statistics.median(_timed(lambda: tools.call(session, "locate", {"name": "psum"}),
                                        repeat))


def over_stdio(root_args: list[str], repeat: int) -> float:
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "jaxmap", "mcp", *root_args],
                                   cwd=str(REPO), env=dict(os.environ))

    async def run() -> list[float]:
        async with Client(params) as client:
            await client.call_tool("locate", {"name": "psum"})  # first call: not timed
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                result = await client.call_tool("locate", {"name": "psum"})
                times.append(time.perf_counter() - start)
                assert not result.is_error, result.content
            return times

    return statistics.median(anyio.run(run))


def _timed(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def _process_times(command: list[str], repeat: int) -> list[float]:
    return _timed(lambda: subprocess.run(command, check=True, cwd=REPO,
                                         stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL), repeat)


def _line(label: str, value: str, note: str = "") -> None:
    print(f"  {label:<40} {value:>12}  {note}")


if __name__ == "__main__":
    main()

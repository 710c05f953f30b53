"""The servers as a new user first meets them: started on an empty cache, on a tree
big enough that the indexer forks helpers, each gives a first answer while or after
it builds, and when its client goes, it and every process it started are gone within
2 s. Processes are read from /proc (Linux)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from lsprotocol import types as t
from processes import descendants, left
from pytest_lsp import ClientServerConfig

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc")

MODULES = 60  # over the indexer's threshold for forking helpers
PRIMITIVE = "from jax._src import core\n\nwide_p = core.Primitive('wide')\n"


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    package = root / "jax" / "_src"
    package.mkdir(parents=True)
    (root / "jax" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "core.py").write_text("class Primitive:\n  def __init__(self, name):\n"
                                     "    self.name = name\n")
    (package / "wide.py").write_text(PRIMITIVE)
    for n in range(MODULES):
        (package / f"m{n}.py").write_text(f"def f{n}(x):\n  return x + {n}\n")
    return root


def _env(cache: Path) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k != "JAXMAP_ROOT"},
            "JAXMAP_CACHE_DIR": str(cache)}


async def _watch(server_pid: int, until) -> set[int]:
    """Every process seen under the server while `until` (a task) runs."""
    seen: set[int] = set()
    while not until.done():
        seen |= descendants(server_pid)
        await asyncio.sleep(0.02)
    return seen


@pytest.mark.asyncio
async def test_lsp_on_an_empty_cache_answers_shows_progress_and_leaves_nothing(tmp_path):
    root = _tree(tmp_path)
    client = await ClientServerConfig([sys.executable, "-m", "jaxmap", "lsp"],
                                      server_env=_env(tmp_path / "cache")).start()
    server = client._server
    capabilities = t.ClientCapabilities(window=t.WindowClientCapabilities(
        work_done_progress=True))
    await client.initialize_session(t.InitializeParams(
        capabilities=capabilities, root_uri=root.as_uri(),
        workspace_folders=[t.WorkspaceFolder(root.as_uri(), root.name)]))
    query = t.WorkspaceSymbolParams(query="wide")
    assert await client.workspace_symbol_async(query) is None  # building: no index yet

    async def first_answer():
        for _ in range(1200):
            if symbols := await client.workspace_symbol_async(query):
                return symbols
            await asyncio.sleep(0.05)
        raise AssertionError(client.log_messages)

    answering = asyncio.ensure_future(first_answer())
    seen = await _watch(server.pid, answering)
    assert "wide" in {s.name for s in answering.result()}
    values = [v for reports in client.progress_reports.values() for v in reports]
    kinds = [getattr(v, "kind", None) for v in values]
    assert kinds[0] == "begin" and kinds[-1] == "end", kinds
    # one bar for the build, rising through its stages, each named
    percents = [v.percentage for v in values[:-1]]
    assert percents == sorted(percents), values
    assert {v.message.partition(":")[0] for v in values[:-1]} <= {
        "parsing", "call sites", "call graph"}, values
    # The build process at least: the helpers it forks may come and go between looks.
    assert len(seen) >= 1, seen

    server.stdin.close()  # the editor goes away without a word
    everyone = {server.pid, *seen, *descendants(server.pid)}
    await asyncio.sleep(0)  # let the loop close the pipe
    assert await asyncio.to_thread(left, everyone) == set()
    await client.stop()


def test_mcp_on_an_empty_cache_answers_and_leaves_nothing(tmp_path):
    import anyio
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    root = _tree(tmp_path)
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "jaxmap", "mcp", "--root", str(root)],
                                   env=_env(tmp_path / "cache"))
    seen: set[int] = set()

    async def run():
        async with Client(params) as client:
            listed = await client.list_tools()  # answered while the index is built
            server = _server_pid()
            seen.update(descendants(server), {server})
            result = await client.call_tool("locate", {"name": "wide"})
            return listed, result

    listed, result = anyio.run(run)
    assert listed.tools and not result.is_error
    assert "wide.py" in result.content[0].text
    assert len(seen) >= 2, seen  # the server and its build process
    assert left(seen) == set()


def _server_pid() -> int:
    """The `jaxmap mcp` process this test started."""
    mine = descendants(os.getpid())
    for pid in mine:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        if b"mcp" in argv and b"jaxmap" in argv:
            return pid
    raise AssertionError(f"no jaxmap mcp among {mine}")


def test_an_mcp_call_waiting_for_the_first_build_is_told_its_progress(tmp_path):
    import anyio
    from mcp.client import Client

    from jaxmap import server
    from jaxmap.served import ServedSession

    root = _tree(tmp_path)
    told: list[tuple[float, float | None, str | None]] = []

    async def run():
        served = ServedSession(str(root), asyncio.get_running_loop().call_soon_threadsafe,
                               lambda report, error: None)
        try:
            async with Client(server.build(served)) as client:
                async def progress(done, total, message):
                    told.append((done, total, message))
                return await client.call_tool("locate", {"name": "wide"},
                                              progress_callback=progress)
        finally:
            served.close()

    result = anyio.run(run, backend="asyncio")
    assert not result.is_error and "wide.py" in result.content[0].text
    assert told and told[-1][:2] == (100, 100)  # percent, rising; then done
    assert [done for done, _total, _message in told] == sorted(done for done, *_ in told)
    assert told[-1][2] == f"parsing: {MODULES + 4} of {MODULES + 4} files"

"""`jaxmap mcp`: the tools of tools.py served over the Model Context Protocol (stdio).

The only module that imports the `mcp` SDK, an optional extra (`jaxmap[mcp]`). One
session keeps the index open for every call; a failing call comes back as a tool
error carrying the CLI's one-line message. Over stdio the index is built and kept
current in the build process (served.py): the tool list is answered at once, and a
call waits for the update it asks for, with progress notifications when the client
gave a progress token.
"""

from __future__ import annotations

from jaxmap import tools
from jaxmap.errors import JaxmapError, describe
from jaxmap.served import ServedSession
from jaxmap.session import Session

EXTRA = "pip install 'jaxmap[mcp]'"


def require_sdk() -> None:
    """JaxmapError naming the extra when the MCP SDK (2.x) is not installed."""
    try:
        import mcp.server  # noqa: F401
    except ImportError:
        raise JaxmapError(f"jaxmap mcp needs the MCP SDK; install it with {EXTRA}") from None


def build(session: Session | ServedSession):
    """An mcp.server.Server answering tools/list and tools/call from `session`: a
    Session (each call checks the index itself), or a ServedSession (each call waits
    for the build process to bring the index up to date)."""
    from importlib import metadata

    from mcp import types
    from mcp.server import Server

    listed = types.ListToolsResult(tools=[
        types.Tool(name=s["name"], description=s["description"], input_schema=s["inputSchema"])
        for s in tools.schemas()])

    async def list_tools(_ctx, _params) -> types.ListToolsResult:
        return listed

    async def call_tool(ctx, params) -> types.CallToolResult:
        try:
            target = session if isinstance(session, Session) else \
                await _updated(session, _needs_graph(params.name), ctx)
            text, failed = tools.call(target, params.name, params.arguments), False
        except Exception as error:  # noqa: BLE001 - a tool error, never a traceback
            text, failed = describe(error, debug_hint=False), True
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    is_error=failed)

    return Server("jaxmap", version=metadata.version("jaxmap"),
                  on_list_tools=list_tools, on_call_tool=call_tool)


def _needs_graph(name: str) -> bool:
    tool = tools.BY_NAME.get(name)
    return bool(tool and tool.command.graph)


class _Updated:
    """What tools.call reads from a ServedSession once an update has ended."""

    def __init__(self, served: ServedSession, error: str | None):
        self.root, self._served, self._error = served.root, served, error

    def index(self, graph: bool = False):
        index = self._served.index()
        if index is None:  # the first build failed: say why
            raise JaxmapError((self._error or "no index").removeprefix("jaxmap: error: "))
        return index


async def _updated(served: ServedSession, graph: bool, ctx) -> _Updated:
    """Wait for the build process to bring the index up to date (with the call graph
    if `graph`), telling the client its progress if it asked for that."""
    import anyio

    ended = anyio.Event()
    outcome: list = []
    served.on_progress = _progress_sender(ctx)

    def done() -> None:
        outcome.append(served.error)
        served.on_progress = None  # this call's progress ends here
        ended.set()

    served.refresh(graph=graph, then=done)
    await ended.wait()
    return _Updated(served, outcome[0])


def _progress_sender(ctx):
    """Progress notifications for the call of `ctx` (none unless it sent a token)."""
    import asyncio

    def send(done: int, total: int) -> None:
        asyncio.ensure_future(ctx.session.report_progress(done, total, "jaxmap: indexing"))
    return send


def serve_stdio(root: str | None = None) -> None:
    """Serve until stdin closes; the index is built and kept current in the build
    process, which ends with the server. An index that cannot be built (a root that
    does not exist) is every call's tool error."""
    import asyncio

    import anyio
    from mcp.server.stdio import stdio_server

    async def serve() -> None:
        served = ServedSession(root, asyncio.get_running_loop().call_soon_threadsafe,
                               lambda report, error: None)
        served.start(graph=False)
        try:
            server = build(served)
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
        finally:
            served.close()

    anyio.run(serve)

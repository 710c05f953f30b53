"""`jaxmap mcp`: the tools of tools.py served over the Model Context Protocol (stdio).

The only module that imports the `mcp` SDK, an optional extra (`jaxmap[mcp]`). One
session keeps the index open for every call; a failing call comes back as a tool
error carrying the CLI's one-line message. Over stdio the index is built and kept
current in the build process (served.py): the tool list is answered at once, and a
call waits for the update it asks for, with progress notifications when the client
gave a progress token. A line that is no JSON-RPC message gets JSON-RPC 2.0's error
response (the SDK's transport would drop it unanswered).
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
            texts, failed = [tools.call(target, params.name, params.arguments)], False
        except Exception as error:  # noqa: BLE001 - a tool error, never a traceback
            # its line, then the partial answer the CLI prints with it, if any (explain's
            # closest messages for a message no site raises; path's steps searched)
            texts = [describe(error, debug_hint=False), *filter(None, [getattr(
                error, "output", "")])]
            failed = True
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text) for text in texts],
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
    """Progress notifications for the call of `ctx` (none unless it sent a token): the
    percentage of the update, which only rises, and its stage."""
    import asyncio

    from jaxmap.render.text import build_progress

    def send(progress) -> None:  # a stages.Progress: its percentage only rises
        asyncio.ensure_future(ctx.session.report_progress(progress.percent, 100, build_progress(
            progress.stage, progress.done, progress.total)))
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
                await server.run(_Answering(read, write), write,
                                 server.create_initialization_options())
        finally:
            served.close()

    anyio.run(serve)


class _Answering:
    """The stdio transport's read stream, answering each line that is no JSON-RPC
    message: the SDK passes it on as the exception parsing it raised, which its
    dispatcher drops unanswered (Server.run takes no observer for it). JSON-RPC 2.0's
    error response goes back instead, id null: -32700 for a line that is not JSON,
    -32600 for JSON that is no message; a blank line is none, and gets nothing."""

    def __init__(self, read, write):
        self._read, self._write = read, write

    @property
    def last_context(self):
        """The context the transport sent the last message with, for the dispatcher."""
        return getattr(self._read, "last_context", None)

    async def receive(self):
        while True:
            item = await self._read.receive()
            if not isinstance(item, Exception):
                return item
            answer = _error_response(item)
            if answer is not None:
                await self._write.send(answer)

    def __aiter__(self):
        return self

    async def __anext__(self):
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._read.aclose()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()


def _error_response(error: Exception):
    """The SessionMessage answering the line whose parsing raised `error` (pydantic's
    ValidationError), or None for a blank line."""
    from mcp import types
    from mcp.shared.message import SessionMessage

    errors = getattr(error, "errors", None)
    problems = errors() if callable(errors) else []
    unparsed = [p for p in problems if p.get("type") == "json_invalid"]
    if unparsed and not str(unparsed[0].get("input", "")).strip():
        return None
    code, message = (types.PARSE_ERROR, "Parse error") if unparsed else \
        (types.INVALID_REQUEST, "Invalid Request")
    return SessionMessage(types.JSONRPCError(
        jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message)))

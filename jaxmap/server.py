"""`jaxmap mcp`: the tools of tools.py served over the Model Context Protocol (stdio).

The only module that imports the `mcp` SDK, an optional extra (`jaxmap[mcp]`). One
session keeps the index open for every call; a failing call comes back as a tool
error carrying the CLI's one-line message.
"""

from __future__ import annotations

from jaxmap import tools
from jaxmap.errors import JaxmapError, describe
from jaxmap.session import Session

EXTRA = "pip install 'jaxmap[mcp]'"


def require_sdk() -> None:
    """JaxmapError naming the extra when the MCP SDK (2.x) is not installed."""
    try:
        import mcp.server  # noqa: F401
    except ImportError:
        raise JaxmapError(f"jaxmap mcp needs the MCP SDK; install it with {EXTRA}") from None


def build(session: Session):
    """An mcp.server.Server answering tools/list and tools/call from `session`."""
    from importlib import metadata

    from mcp import types
    from mcp.server import Server

    listed = types.ListToolsResult(tools=[
        types.Tool(name=s["name"], description=s["description"], input_schema=s["inputSchema"])
        for s in tools.schemas()])

    async def list_tools(_ctx, _params) -> types.ListToolsResult:
        return listed

    async def call_tool(_ctx, params) -> types.CallToolResult:
        try:
            text, failed = tools.call(session, params.name, params.arguments), False
        except Exception as error:  # noqa: BLE001 - a tool error, never a traceback
            text, failed = describe(error, debug_hint=False), True
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    is_error=failed)

    return Server("jaxmap", version=metadata.version("jaxmap"),
                  on_list_tools=list_tools, on_call_tool=call_tool)


def serve_stdio(root: str | None = None) -> None:
    """Open (or build) the index of `root`, then serve until stdin closes. An index
    that cannot be opened (a root that does not exist) is every call's tool error."""
    import anyio
    from mcp.server.stdio import stdio_server

    with Session(root) as session:
        try:
            session.index()  # warm before the first question
        except JaxmapError:
            pass
        server = build(session)

        async def serve() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(serve)

"""The tools `jaxmap mcp` serves, built from the command table (commands/registry.py):
every row that MCP serves is a tool answering with its command's `--json` document,
written compact (no indentation: an agent pays for each character).

Nothing here knows MCP: `schemas()` gives the tool list, `call()` checks a call's
arguments against its row and runs it on a session.Session. A scaffold row is a dry
run unless called with `write: true` (which needs `out`). A paged row answers one page
(`Command.page` items unless `limit` says otherwise) of at most MCP_CHARS characters.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from jaxmap.commands.registry import COMMANDS, MCP_CHARS, Command, Param
from jaxmap.errors import ArgumentError, JaxmapError
from jaxmap.render.paging import COMPACT

_JSON_TYPES = {"string": str, "integer": int, "boolean": bool, "array": list}
_WRITE = (Param("write", "boolean", "write the files; default: dry run, diff only"),
          Param("force", "boolean", "with write: overwrite existing files"))


class Tool(NamedTuple):
    name: str
    doc: str
    params: tuple[Param, ...]
    command: Command


def _tool(command: Command) -> Tool:
    params = tuple(p for p in command.params if p.mcp)
    if command.kind == "scaffold":
        params += _WRITE
    return Tool(command.tool, command.doc, params, command)


TOOLS: tuple[Tool, ...] = tuple(_tool(c) for c in COMMANDS if c.mcp)
BY_NAME = {tool.name: tool for tool in TOOLS}


def schemas() -> list[dict]:
    """The tool list: name, description and JSON Schema of each tool's arguments."""
    return [{"name": tool.name, "description": tool.doc, "inputSchema": _schema(tool)}
            for tool in TOOLS]


def _schema(tool: Tool) -> dict:
    properties = {p.name: {"type": p.type, "description": _as_arguments(tool, p.doc),
                           **({"items": {"type": "string"}} if p.type == "array" else {}),
                           **({"enum": list(p.choices)} if p.choices else {}),
                           **({"minimum": p.minimum} if p.minimum is not None else {})}
                  for p in tool.params}
    required = [p.name for p in tool.params if p.required]
    return {"type": "object", "properties": properties,
            **({"required": required} if required else {})}


def call(session, name: str, arguments: dict | None) -> str:
    """Run tool `name` with `arguments` on `session`: its JSON document.
    ArgumentError for an unknown tool or arguments that do not fit it."""
    from jaxmap import dispatch

    tool = BY_NAME.get(name)
    if tool is None:
        raise ArgumentError(f"no tool {name!r}; one of: {', '.join(BY_NAME)}")
    arguments = _checked(tool, arguments or {})
    if tool.command.page:  # one page by default, never more than MCP_CHARS
        arguments = {"limit": tool.command.page, **arguments, "max_chars": MCP_CHARS}
    compact = COMPACT.set(True)
    try:
        if tool.command.kind == "scaffold":
            return _scaffold(session, tool.command, arguments)
        return dispatch.answer(tool.command, session.index(graph=tool.command.graph),
                               arguments)
    except JaxmapError as error:  # its message names the CLI's options: say the tool's
        error.args = (_as_arguments(tool, str(error)), *error.args[1:])
        raise
    finally:
        COMPACT.reset(compact)


def _as_arguments(tool: Tool, message: str) -> str:
    """`message` with each CLI option of the tool's arguments written as the argument:
    `pass --force` reads `pass force: true`, `--arity must` reads `arity must`."""
    for param in tool.params:
        option = param.flag or "--" + param.name.replace("_", "-")
        said = f"{param.name}: true" if param.type == "boolean" else param.name
        message = re.sub(rf"(?<![\w-]){re.escape(option)}(?![\w-])", said, message)
    return message


def _scaffold(session, command: Command, arguments: dict) -> str:
    """A scaffold row: its files and diffs, written only with `write: true`."""
    from jaxmap import dispatch
    from jaxmap.scaffold import apply

    write, force = arguments.pop("write", False), arguments.pop("force", False)
    if write and not arguments.get("out"):
        raise ArgumentError("write: true needs out, the directory to write into")
    if any(p.name == "root" for p in command.params):
        arguments["root"] = session.root  # names are checked against the server's tree
    changed = dispatch.changes(command, arguments)
    if write:
        apply(changed, force=force)
    return dispatch.scaffold_document(command, arguments, changed, not write)


def _checked(tool: Tool, arguments: dict) -> dict:
    params = {p.name: p for p in tool.params}
    arguments = _unaliased(tool, arguments)
    for key, value in arguments.items():
        if key not in params:
            takes = ", ".join(params) or "no arguments"
            raise ArgumentError(f"{tool.name} has no argument {key!r}; it takes {takes}")
        param = params[key]
        if not _fits(value, param.type):
            raise ArgumentError(f"{tool.name}: {key} must be of type {param.type}")
        if param.minimum is not None and value < param.minimum:
            raise ArgumentError(f"{tool.name}: {key} must be at least {param.minimum}")
        if param.choices and value not in param.choices:
            raise ArgumentError(f"{tool.name}: {key} must be one of "
                                f"{', '.join(param.choices)}")
    missing = [p.name for p in tool.params if p.required and p.name not in arguments]
    if missing:
        raise ArgumentError(f"{tool.name} needs {', '.join(missing)}")
    return dict(arguments)


def _unaliased(tool: Tool, arguments: dict) -> dict:
    """`arguments` with a former name of an argument (binds' `prim`) read as its name."""
    found = dict(arguments)
    for param in tool.params:
        for alias in (a for a in param.aliases if a in found):
            if param.name in found:
                raise ArgumentError(f"{tool.name}: give {param.name} or {alias}, not both")
            found[param.name] = found.pop(alias)
    return found


def _fits(value, json_type: str) -> bool:
    if isinstance(value, bool) and json_type != "boolean":
        return False
    if json_type == "array":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, _JSON_TYPES[json_type])

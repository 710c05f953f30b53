"""The tools `jaxmap mcp` serves, as a table: one row per tool, each answering with
the JSON document of the matching command's `--json`.

Nothing here knows MCP: `schemas()` gives the tool list, `call()` checks a call's
arguments against its row and runs it on a session.Session. Adding a tool is one row
and the function it names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from jaxmap.errors import ArgumentError

_JSON_TYPES = {"string": str, "integer": int, "boolean": bool, "array": list}


class Param(NamedTuple):
    """One argument: a JSON Schema type (`array` is an array of strings); an
    integer's `minimum`."""

    name: str
    type: str
    doc: str
    required: bool = False
    minimum: int | None = None


class Tool(NamedTuple):
    name: str
    doc: str
    params: tuple[Param, ...]
    run: Callable[..., str]  # (session, **arguments) -> JSON text


def _locate(session, name: str, kind: str | None = None, platform: str | None = None) -> str:
    from jaxmap.commands import locate
    from jaxmap.render import json as render_json

    index = session.index()
    found = locate.locate(index, name, kind, platform)
    return render_json.located_document(index.root, index.jax_version, found)


def _primitives(session, missing=(), has=(), platform: str | None = None) -> str:
    from jaxmap.commands.lookup import check_rule_kinds, select
    from jaxmap.render import json as render_json

    check_rule_kinds(missing=missing, has=has)
    index = session.index()
    chosen = select(index.primitives(), tuple(missing), tuple(has), platform)
    return render_json.primitives_document(index.root, index.jax_version, chosen)


def _binds(session, prim: str, depth: int | None = None, public: bool = False) -> str:
    return _call_graph(session, "binds", prim, depth, public=public)


def _callers(session, name: str, depth: int = 1) -> str:
    return _call_graph(session, "callers", name, depth)


def _call_graph(session, direction: str, name: str, depth, **options) -> str:
    from jaxmap.commands import callgraph
    from jaxmap.render import calls as render_calls

    index = session.index()
    answer = getattr(callgraph, direction)(index, name, depth, **options)
    return render_calls.call_document(index.root, answer, _same)


def _coverage(session, kinds=(), missing=(), platform: str | None = None) -> str:
    from jaxmap.commands import coverage
    from jaxmap.commands.lookup import check_rule_kinds
    from jaxmap.render import calls as render_calls

    check_rule_kinds(kind=kinds, missing=missing)
    matrix = coverage.coverage(session.index().primitives(), tuple(kinds), tuple(missing),
                               platform)
    return render_calls.coverage(matrix, "json")


def _explain(session, text: str) -> str:
    from jaxmap.commands import explain
    from jaxmap.render import explained

    if not text.strip():
        raise ArgumentError("explain needs the message (or traceback) to explain")
    index = session.index()
    return explained.document(index.root, explain.explain(index, text), _same)


def _same(path: str) -> str:
    return path


def _ladder(session) -> str:
    from jaxmap.commands import ladder
    from jaxmap.render import ladder as render_ladder

    return render_ladder.document(ladder.gather(session.index()))


def _new_primitive(session, name: str, out: str | None = None, write: bool = False,
                   force: bool = False, params: str | None = None, platforms=(),
                   **options) -> str:
    from jaxmap import scaffold

    spec = scaffold.PrimitiveSpec(name=name, params=scaffold.parse_params(params),
                                  platforms=tuple(platforms), **options)
    changes = scaffold.generate(spec, out=_out(out, write), index_root=session.root)
    return _scaffolded(name, changes, write, force)


def _new(session, kind: str, name: str, out: str | None = None, style: str | None = None,
         write: bool = False, force: bool = False) -> str:
    from jaxmap.scaffold import kinds

    changes = kinds.generate(kind, name, out=_out(out, write), style=style)
    return _scaffolded(name, changes, write, force)


def _out(out: str | None, write: bool) -> str | None:
    if write and not out:
        raise ArgumentError("write: true needs out, the directory to write into")
    return out


def _scaffolded(name: str, changes, write: bool, force: bool) -> str:
    """What `new`/`new-primitive --json` print: written with `write`, else a dry run."""
    from jaxmap.render import json as render_json
    from jaxmap.scaffold import apply, file_diffs

    if write:
        apply(changes, force=force)
    return render_json.scaffold_document(name, changes, file_diffs(changes), not write)


_NAME = Param("name", "string", "psum, psum_p, lax.psum, a name string, any definition", True)
_PLATFORM = Param("platform", "string", "only lowerings serving it: cpu, cuda, rocm, tpu")
_OUT = Param("out", "string", "directory for the files (needed to write)")
_WRITE = (Param("write", "boolean", "write the files; default: dry run, diff only"),
          Param("force", "boolean", "with write: overwrite existing files"))

TOOLS: tuple[Tool, ...] = (
    Tool("locate", "Where a JAX name is defined; for a primitive, every rule with file:line "
         "and the tests using it.",
         (_NAME, Param("kind", "string", "only this rule kind (jvp, lowering...) or "
                                         "result kind (primitive, function...)"), _PLATFORM),
         _locate),
    Tool("primitives", "Primitives with their rules, filtered: all filters must hold.",
         (Param("missing", "array", "rule kinds they lack (none of them)"),
          Param("has", "array", "rule kinds they have (all of them)"), _PLATFORM),
         _primitives),
    Tool("binds", "Functions that reach a primitive's bind, public API first, with chains.",
         (Param("prim", "string", "primitive: psum, psum_p", True),
          Param("depth", "integer", "at most this many calls away", minimum=0),
          Param("public", "boolean", "public API only")), _binds),
    Tool("callers", "Functions, class bodies and module top levels that call a name, "
                    "and unresolved calls that may.",
         (Param("name", "string", "function, dotted or not", True),
          Param("depth", "integer", "levels up; default 1", minimum=1)), _callers),
    Tool("explain", "Where a JAX error message or traceback is raised; for a missing rule, "
         "where and how to register it.",
         (Param("text", "string", "the message or traceback", True),), _explain),
    Tool("coverage", "Primitives x rule kinds matrix (lowerings per platform), with totals.",
         (Param("kinds", "array", "only these rule kinds' columns"),
          Param("missing", "array", "only primitives lacking these kinds"), _PLATFORM),
         _coverage),
    Tool("ladder", "The escalation ladder (plain JAX ... new primitive): when each rung pays, "
         "what starts it, where its machinery lives; and the checklist.", (), _ladder),
    Tool("new", "Start a ladder rung with tests that pass on the installed jax.",
         (Param("kind", "string", "custom-jvp, custom-vjp, export, custom-partitioning, "
                                  "pallas, ffi or primitive", True),
          Param("name", "string", "Python identifier", True), _OUT,
          Param("style", "string", "hijax (custom-vjp, primitive)"), *_WRITE), _new),
    Tool("new_primitive", "Generate a primitive with every rule registered, and its tests.",
         (Param("name", "string", "Python identifier", True), _OUT,
          Param("style", "string", "classic or hijax"),
          Param("arity", "integer", "array operands"),
          Param("linear", "boolean", "deflinear and a transpose rule"),
          Param("multiple_results", "boolean", "two results"),
          Param("params", "string", "static params: scale=float,n=int"),
          Param("platforms", "array", "extra lowerings: cpu, cuda, rocm, tpu"),
          Param("lowering", "string", "lower_fun or hlo"), *_WRITE), _new_primitive),
)
BY_NAME = {tool.name: tool for tool in TOOLS}


def schemas() -> list[dict]:
    """The tool list: name, description and JSON Schema of each tool's arguments."""
    return [{"name": tool.name, "description": tool.doc, "inputSchema": _schema(tool)}
            for tool in TOOLS]


def _schema(tool: Tool) -> dict:
    properties = {p.name: {"type": p.type, "description": p.doc,
                           **({"items": {"type": "string"}} if p.type == "array" else {}),
                           **({"minimum": p.minimum} if p.minimum is not None else {})}
                  for p in tool.params}
    required = [p.name for p in tool.params if p.required]
    return {"type": "object", "properties": properties,
            **({"required": required} if required else {})}


def call(session, name: str, arguments: dict | None) -> str:
    """Run tool `name` with `arguments` on `session`: its JSON document.
    ArgumentError for an unknown tool or arguments that do not fit it."""
    tool = BY_NAME.get(name)
    if tool is None:
        raise ArgumentError(f"no tool {name!r}; one of: {', '.join(BY_NAME)}")
    return tool.run(session, **_checked(tool, arguments or {}))


def _checked(tool: Tool, arguments: dict) -> dict:
    params = {p.name: p for p in tool.params}
    for key, value in arguments.items():
        if key not in params:
            takes = ", ".join(params) or "no arguments"
            raise ArgumentError(f"{tool.name} has no argument {key!r}; it takes {takes}")
        if not _fits(value, params[key].type):
            raise ArgumentError(f"{tool.name}: {key} must be of type {params[key].type}")
        if params[key].minimum is not None and value < params[key].minimum:
            raise ArgumentError(f"{tool.name}: {key} must be at least {params[key].minimum}")
    missing = [p.name for p in tool.params if p.required and p.name not in arguments]
    if missing:
        raise ArgumentError(f"{tool.name} needs {', '.join(missing)}")
    return arguments


def _fits(value, json_type: str) -> bool:
    if isinstance(value, bool) and json_type != "boolean":
        return False
    if json_type == "array":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, _JSON_TYPES[json_type])

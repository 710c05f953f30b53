"""`jaxmap mcp`: every tool through the SDK's in-memory client answers with its
command's `--json` document; bad calls are one-line tool errors; once over stdio."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from markers import ROOT, mark
from mcp import Client, StdioServerParameters

from jaxmap import server, tools
from jaxmap.cli import main
from jaxmap.commands.registry import MCP_CHARS
from jaxmap.render.paging import COMPACT
from jaxmap.session import Session


def _calls(root, *calls) -> list:
    """Each (tool, arguments) called in turn on one in-memory server for `root`."""
    async def run():
        with Session(str(root)) as session:
            async with Client(server.build(session)) as client:
                return [await client.call_tool(name, arguments) for name, arguments in calls]
    return anyio.run(run)


def _text(result) -> str:
    assert len(result.content) == 1
    return result.content[0].text


def _cli_json(capsys, *argv) -> dict:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _tool_json(root, name, arguments) -> dict:
    (result,) = _calls(root, (name, arguments))
    assert not result.is_error, _text(result)
    return json.loads(_text(result))


# (tool, arguments, the command whose --json it must equal)
SAME_AS_CLI = [
    ("locate", {"name": "psum"}, ["locate", "psum"]),
    ("locate", {"name": "lax.add", "kind": "jvp"}, ["locate", "lax.add", "--kind", "jvp"]),
    ("primitives", {}, ["primitives"]),
    ("primitives", {"missing": ["jvp"], "has": ["impl"]},
     ["primitives", "--missing", "jvp", "--has", "impl"]),
    ("ladder", {}, ["ladder"]),
    ("binds", {"name": "psum"}, ["binds", "psum"]),
    ("binds", {"prim": "psum"}, ["binds", "psum"]),  # its former name, still taken
    ("binds", {"name": "psum_p", "depth": 1, "public": True, "everything": True},
     ["binds", "psum_p", "--depth", "1", "--public", "--all"]),
    ("callers", {"name": "jax._src.lax.parallel._psum_halved", "depth": 2},
     ["callers", "jax._src.lax.parallel._psum_halved", "--depth", "2"]),
    ("coverage", {}, ["coverage"]),
    ("coverage", {"kinds": ["jvp", "lowering"], "missing": ["batching"], "platform": "tpu"},
     ["coverage", "--kind", "jvp", "--kind", "lowering", "--missing", "batching",
      "--platform", "tpu"]),
]


def _mcp_page(name: str) -> list[str]:
    """The CLI options that ask for the page a tool answers by default."""
    page = tools.BY_NAME[name].command.page
    return ["--limit", str(page), "--max-chars", str(MCP_CHARS)] if page else []


@pytest.mark.parametrize("name, arguments, argv", SAME_AS_CLI, ids=lambda v: str(v))
def test_tool_answers_with_the_commands_json(name, arguments, argv, capsys):
    compact = COMPACT.set(True)  # as the tool writes it: a page holds what fits so
    try:
        expected = _cli_json(capsys, *argv, *_mcp_page(name), "--json", "--root", str(ROOT))
    finally:
        COMPACT.reset(compact)
    assert _tool_json(ROOT, name, arguments) == expected


def test_a_default_answer_is_one_page_that_says_what_is_left():
    (result,) = _calls(ROOT, ("primitives", {}))
    text = _text(result)
    first = json.loads(text)
    assert first["total"] == 31 and first["truncated"] and first["offset"] == 0
    shown = len(first["primitives"])
    assert 0 < shown < 31 and first["next_offset"] == shown
    # written compact, the page as full as MCP_CHARS allows: one item more would not fit
    assert "\n" not in text and text == json.dumps(first, separators=(",", ":"))
    assert len(text) <= MCP_CHARS < len(text) + len(json.dumps(
        _tool_json(ROOT, "primitives", {"offset": shown, "limit": 1})["primitives"][0],
        separators=(",", ":")))
    names, offset = [], 0
    while offset is not None:  # paging walks every primitive once
        page = _tool_json(ROOT, "primitives", {"offset": offset, "fields": ["name", "module"]})
        assert all(item.keys() == {"name", "module"} for item in page["primitives"])
        names += [item["name"] for item in page["primitives"]]
        offset = page["next_offset"]
    assert names == [p["name"] for p in _tool_json(ROOT, "primitives", {
        "limit": 100, "fields": ["name"]})["primitives"]] and len(names) == 31


def test_limit_offset_and_fields_page_every_long_answer():
    coverage = _tool_json(ROOT, "coverage", {"limit": 2, "offset": 1, "fields": ["name"]})
    assert coverage["rows"] == [{"name": n} for n in coverage_names()[1:3]]
    assert coverage["total"] == coverage["primitives"] and coverage["next_offset"] == 3
    binds = _tool_json(ROOT, "binds", {"name": "psum", "limit": 1})
    assert len(binds["found"]) == 1 and binds["total"] == binds["count"] > 1
    located = _tool_json(ROOT, "locate", {"name": "psum", "limit": 0})
    assert located["definitions"] == [] and located["total"] >= 1
    assert located["primitives"][0]["tests"] == [] and located["primitives"][0]["tests_total"]


def coverage_names() -> list[str]:
    return [row["name"] for row in _tool_json(ROOT, "coverage", {"limit": 100})["rows"]]


def test_every_tool_that_looks_a_name_up_takes_it_as_name():
    """An agent that learnt `callers` calls `binds` alike: `name`, in the schema too."""
    schemas = {s["name"]: s["inputSchema"] for s in tools.schemas()}
    for tool in ("locate", "binds", "callers", "calls"):
        assert schemas[tool]["required"] == ["name"], tool


def test_an_unknown_field_is_a_one_line_tool_error():
    (result,) = _calls(ROOT, ("primitives", {"fields": ["nme"]}))
    assert result.is_error and _text(result).count("\n") == 0
    assert "no field 'nme'" in _text(result)


# The tools whose answers grow with the tree, with the heaviest names of jax.
HEAVY = [("primitives", {}), ("coverage", {}), ("binds", {"name": "add"}),
         ("callers", {"name": "bind"}), ("locate", {"name": "add"})]


def test_default_answers_fit_in_8k_tokens_on_the_installed_jax():
    with Session(None) as session:
        for name, arguments in HEAVY:
            text = tools.call(session, name, arguments)
            document = json.loads(text)
            assert len(text) / 4 < 8000 and "total" in document, name
            assert document["truncated"] is (document["next_offset"] is not None)


def test_explain_answers_with_the_commands_json(tmp_path, capsys):
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "shapes.py").write_text(
        "def check(x):\n    raise ValueError(f'operand of rank {x.ndim} is not a matrix')\n")
    message = "ValueError: operand of rank 3 is not a matrix"
    expected = _cli_json(capsys, "explain", message, "--json", "--root", str(tree))
    assert expected["sites"]
    assert _tool_json(tree, "explain", {"text": message}) == expected


def test_new_is_a_dry_run_unless_told_to_write(tmp_path, capsys):
    out = tmp_path / "out"
    expected = _cli_json(capsys, "new", "custom-jvp", "softplus", "--out", str(out),
                         "--dry-run", "--json")
    arguments = {"kind": "custom-jvp", "name": "softplus", "out": str(out)}
    assert _tool_json(ROOT, "new", arguments) == expected
    assert not out.exists()
    written = _tool_json(ROOT, "new", {**arguments, "write": True})
    assert written["dry_run"] is False
    assert sorted(p.name for p in out.iterdir()) == ["softplus.py", "test_softplus.py"]
    again, forced = _calls(ROOT, ("new", {**arguments, "write": True}),
                           ("new", {**arguments, "write": True, "force": True}))
    assert again.is_error and "exists" in _text(again)
    assert not forced.is_error


def test_new_primitive_is_a_dry_run_unless_told_to_write(tmp_path, capsys):
    out = tmp_path / "out"
    expected = _cli_json(capsys, "new-primitive", "softclip", "--out", str(out), "--arity", "2",
                         "--params", "scale=float", "--root", str(ROOT), "--dry-run", "--json")
    arguments = {"name": "softclip", "out": str(out), "arity": 2, "params": "scale=float"}
    assert _tool_json(ROOT, "new_primitive", arguments) == expected
    assert not out.exists()
    _tool_json(ROOT, "new_primitive", {**arguments, "write": True})
    assert sorted(p.name for p in out.iterdir()) == ["softclip.py", "test_softclip.py"]
    # The refusal to overwrite names the tool's argument, not the CLI's --force.
    again, bad = _calls(ROOT, ("new_primitive", {**arguments, "write": True}),
                        ("new_primitive", {**arguments, "arity": 99}))
    assert again.is_error and _text(again).endswith("exists; pass force: true to overwrite it")
    assert bad.is_error and "arity must be between" in _text(bad) and "--" not in _text(bad)


@pytest.mark.parametrize("name, arguments, fragment", [
    ("locate", {}, "needs name"),
    ("locate", {"name": 3}, "name must be of type string"),
    ("locate", {"name": "psum", "depth": 2}, "no argument 'depth'"),
    ("primitives", {"missing": "jvp"}, "missing must be of type array"),
    ("primitives", {"missing": ["bogus"]}, "'bogus' is not one of"),
    ("new_primitive", {"name": "x", "arity": True}, "arity must be of type integer"),
    ("new_primitive", {"name": "softclip", "write": True}, "needs out"),
    ("new_primitive", {"name": "psum"}, "already exists"),
    ("new", {"kind": "quantum", "name": "q"}, "unknown kind 'quantum'"),
    ("new", {"kind": "ffi", "name": "q", "backend": "tpu"}, "it runs on cpu, gpu"),
    ("new", {"kind": "ffi", "name": "q", "backend": "npu"}, "must be one of cpu, gpu, tpu"),
    ("locate", {"name": "psun"}, "did you mean: psum"),
    ("nowhere", {}, "no tool 'nowhere'"),
    ("callers", {"name": "jax.lax.psum", "depth": 0}, "depth must be at least 1"),
    ("binds", {"name": "no_such_prim"}, "no_such_prim"),
    ("binds", {"name": "psum", "prim": "psum"}, "give name or prim, not both"),
    ("coverage", {"kinds": ["bogus"]}, "'bogus' is not one of"),
    ("explain", {"text": "  "}, "needs the message"),
])
def test_bad_calls_are_one_line_tool_errors(name, arguments, fragment):
    (result,) = _calls(ROOT, (name, arguments))
    assert result.is_error
    text = _text(result)
    assert text.startswith("jaxmap: ") and "\n" not in text and fragment in text, text


def test_a_refusal_with_a_partial_answer_gives_both(capsys):
    """The CLI prints explain's closest messages before its error line: so does the tool,
    the line first, then the same JSON."""
    text = "cannot reshape the array of shape (3,) to shape 4"
    (result,) = _calls(ROOT, ("explain", {"text": text}))
    assert result.is_error and len(result.content) == 2
    line, document = (content.text for content in result.content)
    assert line == "jaxmap: not an error message raised in this tree"
    assert main(["explain", text, "--json", "--root", str(ROOT)]) == 1
    assert json.loads(document) == json.loads(capsys.readouterr().out)
    assert json.loads(document)["status"] == "unmatched"


def test_a_missing_root_is_a_tool_error(tmp_path):
    (result,) = _calls(tmp_path / "missing", ("locate", {"name": "psum"}))
    assert result.is_error
    assert _text(result) == f"jaxmap: error: root {tmp_path / 'missing'} does not exist"


def test_an_edited_file_is_seen_by_the_next_call(tmp_path):
    """One session: the index is refreshed between calls when a file changes."""
    tree = shutil.copytree(ROOT, tmp_path / "tree")
    file, line = mark("psum-create")
    path = tree / file

    async def run():
        with Session(str(tree)) as session:
            async with Client(server.build(session)) as client:
                before = await client.call_tool("locate", {"name": "psum"})
                path.write_text("# one more line\n" + path.read_text())
                after = await client.call_tool("locate", {"name": "psum"})
                return json.loads(_text(before)), json.loads(_text(after))

    before, after = anyio.run(run)
    assert before["primitives"][0]["line"] == line
    assert after["primitives"][0]["line"] == line + 1


def test_a_graph_answer_names_the_files_that_do_not_parse(tmp_path):
    """A file left mid-edit is read as far as it parses: the call-graph tools say which,
    as the CLI does on stderr, since what follows the refusal may be missing."""
    tree = shutil.copytree(ROOT, tmp_path / "tree")
    module = tree / "jax" / "_src" / "lax" / "parallel.py"
    assert _tool_json(tree, "callers", {"name": "apply_primitive"})["unparsed"] == []
    module.write_text(module.read_text() + "\ndef broken(:\n    pass\n")
    line = module.read_text().count("\n") - 1
    said = [f"jax/_src/lax/parallel.py:{line}: does not parse (invalid syntax); "
            "read as far as it parses"]
    for name, arguments in (("callers", {"name": "apply_primitive"}),
                            ("binds", {"name": "psum_p"}), ("calls", {"name": "psum"}),
                            ("path", {"source": "psum", "target": "psum_p"})):
        assert _tool_json(tree, name, arguments)["unparsed"] == said, name
    # a name not found may be behind the refusal, not absent: the error says where
    (result,) = _calls(tree, ("binds", {"name": "gone_p"}))
    assert result.is_error and _text(result).endswith(
        f"(the index may lack what follows a line Python cannot parse: "
        f"jax/_src/lax/parallel.py:{line})"), _text(result)


def test_the_tool_list_is_small_and_complete():
    """Agents pay for the tool list in every conversation: under 2,000 tokens,
    estimated as characters / 4 of its JSON (as the README states)."""
    async def run():
        async with Client(server.build(Session(str(ROOT)))) as client:
            return await client.list_tools()

    listed = anyio.run(run).tools
    assert [t.name for t in listed] == [t.name for t in tools.TOOLS]
    assert len(json.dumps(tools.schemas())) / 4 < 2000
    for tool in listed:
        assert tool.description and all(p.get("description") for p in
                                        tool.input_schema["properties"].values())
        # the tool's arguments named as arguments, not as the CLI's options (`--all`)
        assert not any(re.search(r"(?<![\w-])--\w", p["description"])
                       for p in tool.input_schema["properties"].values()), tool.name


def test_the_readme_states_the_tool_lists_size():
    readme = " ".join((Path(__file__).resolve().parent.parent / "README.md").read_text().split())
    size = len(json.dumps(tools.schemas()))
    assert f"is {size:,} characters, about {round(size / 4, -1):,.0f} tokens" in readme


def _over_stdio(root, tool: str, arguments: dict):
    """The tool list and one call's result, from `python -m jaxmap mcp --root ROOT`
    driven by the SDK's client over stdio."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "jaxmap", "mcp", "--root", str(root)],
        cwd=os.getcwd(), env=dict(os.environ))

    async def run():
        async with Client(params) as client:
            listed = await client.list_tools()
            return listed, await client.call_tool(tool, arguments)

    return anyio.run(run)


def test_over_stdio_as_a_subprocess():
    listed, result = _over_stdio(ROOT, "locate", {"name": "psum_p"})
    assert len(listed.tools) == len(tools.TOOLS)
    assert not result.is_error
    assert json.loads(_text(result))["primitives"][0]["name"] == "psum"


def test_without_the_sdk_the_command_names_the_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "mcp", None)
    monkeypatch.setitem(sys.modules, "mcp.server", None)
    code = main(["mcp", "--root", str(ROOT)])
    out, err = capsys.readouterr()
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and "jaxmap[mcp]" in err, err


def test_a_server_started_on_a_missing_root_answers_with_tool_errors(tmp_path):
    """The client sees a tool error naming the root, not 'Connection closed'."""
    missing = tmp_path / "missing"
    listed, result = _over_stdio(missing, "locate", {"name": "psum"})
    assert len(listed.tools) == len(tools.TOOLS)
    assert result.is_error and _text(result) == f"jaxmap: error: root {missing} does not exist"


def test_a_server_started_on_a_missing_root_says_so_once_as_it_starts(tmp_path):
    """A person starting it by hand sees the error at once, not a silent server."""
    import subprocess

    missing = tmp_path / "missing"
    done = subprocess.run([sys.executable, "-m", "jaxmap", "mcp", "--root", str(missing)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.stdout == "" and done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"jaxmap: error: root {missing} does not exist; serving")


def test_a_line_that_is_no_json_rpc_message_gets_an_error_response():
    """JSON-RPC 2.0: -32700 with id null for a line that is not JSON, -32600 for JSON that
    is no message; a blank line is none; the server then answers on as before."""
    import subprocess
    import threading

    process = subprocess.Popen(
        [sys.executable, "-m", "jaxmap", "mcp", "--root", str(ROOT)], cwd=os.getcwd(),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    watchdog = threading.Timer(60, process.kill)  # a missing answer fails, not hangs
    watchdog.start()
    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {},
                 "clientInfo": {"name": "test", "version": "0"}}
        lines = [json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                             "params": hello}),
                 json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                 "this is not json", '{"jsonrpc": "2.0", "id": 2, "method": "tools/list"',
                 "", '{"foo": 1}', json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"})]
        process.stdin.write("".join(line + "\n" for line in lines))
        process.stdin.flush()
        answers = [json.loads(process.stdout.readline()) for _ in range(5)]
    finally:
        process.stdin.close()
        process.wait()
        watchdog.cancel()
    assert answers[0]["id"] == 1 and "result" in answers[0]
    assert [(a["id"], a["error"]["code"]) for a in answers[1:4]] == \
        [(None, -32700), (None, -32700), (None, -32600)]
    assert answers[4] == {"jsonrpc": "2.0", "id": 3, "result": {}}

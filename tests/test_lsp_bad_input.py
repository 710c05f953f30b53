"""`jaxmap lsp` given what a real session throws at it: broken JSON-RPC, unknown
methods, wrong params, a file deleted while open, a cache made unusable, a root that
disappears. Each is answered per the protocol (an error response, or one line of
`window/logMessage`), nothing on stderr looks like a crash, and the next request is
answered. One server serves the file's tests, in order; its stderr goes to a file,
and after `shutdown` and `exit` it and its build process are gone."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest
import pytest_asyncio
from lsp_logs import logged
from lsprotocol import types as t
from markers import ROOT, mark
from processes import descendants, left
from pytest_lsp import ClientServerConfig

pytestmark = pytest.mark.asyncio(loop_scope="module")

READY = "index refreshed"
PSUM = mark("psum-create")


@pytest.fixture(scope="module")
def places(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("bad-input")
    root = base / "minijax"
    shutil.copytree(ROOT, root)
    return {"root": root, "cache": base / "cache", "stderr": base / "stderr.txt"}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(places):
    root = places["root"]
    env = {**{k: v for k, v in os.environ.items() if k != "JAXMAP_ROOT"},
           "JAXMAP_CACHE_DIR": str(places["cache"]), "STDERR_FILE": str(places["stderr"])}
    command = ["sh", "-c", 'exec "$0" -m jaxmap lsp 2>"$STDERR_FILE"', sys.executable]
    client = await ClientServerConfig(command, server_env=env).start()
    await client.initialize_session(t.InitializeParams(
        capabilities=t.ClientCapabilities(), root_uri=root.as_uri(),
        workspace_folders=[t.WorkspaceFolder(root.as_uri(), root.name)]))
    await logged(client, READY)
    yield client
    server = client._server.pid
    everyone = {server, *descendants(server)}
    await client.shutdown_session()  # shutdown, then exit: all gone within 2 s
    assert await asyncio.to_thread(left, everyone) == set()
    await client.stop()
    stderr = places["stderr"].read_text()
    assert "Traceback" not in stderr and "Error" not in stderr, stderr


async def _still_answers(client, root: Path) -> None:
    """A hover on psum's creation answers with its primitive."""
    file, line = PSUM
    text = (root / file).read_text().splitlines()[line - 1]
    hover = await client.text_document_hover_async(t.HoverParams(
        t.TextDocumentIdentifier((root / file).as_uri()),
        t.Position(line - 1, text.index("psum_p"))))
    assert hover is not None and "psum" in hover.contents.value


def _one_line(message) -> bool:
    return "\n" not in message.message and "Traceback" not in message.message


async def test_broken_json_rpc_is_one_log_line(client, places):
    seen = len(client.log_messages)
    _send_raw(client, b'{"jsonrpc": "2.0", "id": 99, "method": ')
    message = await logged(client, "could not handle a message", after=seen)
    assert "\n" not in message
    await _still_answers(client, places["root"])


async def test_a_header_it_cannot_read_costs_that_message_alone(client, places):
    """`Content-Length: abc`, then its body run into the next message's header: each is
    one log line, and the next request is answered (none was, nor `exit`, before)."""
    seen = len(client.log_messages)
    client._server.stdin.write(b"Content-Length: abc\r\n\r\n{}")
    message = await logged(client, "a header it could not read", after=seen)
    assert "\n" not in message
    await _still_answers(client, places["root"])
    assert any("bytes of a message it could not read" in m.message
               for m in client.log_messages[seen:])


async def test_an_unknown_method_is_an_error_response(client, places):
    with pytest.raises(Exception, match="(?i)method not found|unknown method|not supported"):
        await client.protocol.send_request_async("jaxmap/noSuchThing", {})
    await _still_answers(client, places["root"])


async def test_wrong_params_are_an_error_response(client, places):
    """Sent as raw JSON: the client's own types would refuse these params."""
    answer = asyncio.get_running_loop().create_future()
    client.protocol._request_futures["wrong-params"] = answer
    _send_raw(client, b'{"jsonrpc": "2.0", "id": "wrong-params", "method": "textDocument/hover", '
              b'"params": {"textDocument": 5, "position": "here"}}')
    with pytest.raises(Exception, match="Invalid Params") as raised:  # -32602, not a timeout
        await asyncio.wait_for(answer, 30)
    assert "Traceback" not in str(raised.value)
    await _still_answers(client, places["root"])


async def _answer_to_raw(client, body: bytes, answered_id):
    """The error a raw message is answered with, the id it answers (None: null)."""
    answer = asyncio.get_running_loop().create_future()
    client.protocol._request_futures[answered_id] = answer
    _send_raw(client, body)
    with pytest.raises(Exception) as raised:  # an error response, not a timeout
        await asyncio.wait_for(answer, 30)
    return raised.value


@pytest.mark.parametrize("body, answered_id, why", [
    (b'{"jsonrpc": "2.0", "id": "non-string", "method": 5}', "non-string", '"method"'),
    (b'{"jsonrpc": "2.0", "id": "no-params", "method": "shutdown", "params": 7}',
     "no-params", '"params"'),
    (b"[]", None, "an empty batch"),  # JSON-RPC 2.0: one Invalid Request, id null
    (b'"hello"', None, "no JSON object"),
    (b'{"jsonrpc": "2.0", "id": "neither"}', "neither", "neither a request nor a response"),
])
async def test_a_message_that_is_no_request_is_invalid_request(client, places, body,
                                                               answered_id, why):
    seen = len(client.log_messages)
    error = await _answer_to_raw(client, body, answered_id)
    assert getattr(error, "code", None) == -32600, error
    message = await logged(client, "Invalid Request", after=seen)
    assert why in message and "\n" not in message
    assert all(_one_line(m) and "object has no attribute" not in m.message
               and "Internal Error" not in m.message for m in client.log_messages[seen:])
    await _still_answers(client, places["root"])


def _send_raw(client, body: bytes) -> None:
    client._server.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


async def test_a_file_deleted_while_open(client, places):
    root = places["root"]
    path = root / "jax" / "_src" / "doomed.py"
    path.write_text("from jax._src import core\ndoomed_p = core.Primitive('doomed')\n")
    uri = path.as_uri()
    client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(
        uri, "python", 1, path.read_text())))
    path.unlink()
    seen = len(client.log_messages)
    client.text_document_did_save(t.DidSaveTextDocumentParams(t.TextDocumentIdentifier(uri)))
    await logged(client, READY, after=seen)
    assert await client.text_document_definition_async(t.DefinitionParams(
        t.TextDocumentIdentifier(uri), t.Position(1, 0))) is None
    lenses = await client.text_document_code_lens_async(
        t.CodeLensParams(t.TextDocumentIdentifier(uri)))
    assert not lenses
    await _still_answers(client, root)


async def test_a_cache_made_unusable_is_one_log_line(client, places):
    """Read-only for an ordinary user; root writes anywhere, so for root the cache
    directory is replaced by a file."""
    cache, root = places["cache"], places["root"]
    as_root = os.geteuid() == 0
    moved = cache.with_name("cache-away")
    if as_root:
        cache.rename(moved)
        cache.write_text("not a directory")
    else:
        cache.chmod(0o555)
    try:
        (root / "jax" / "_src" / "touched.py").write_text("x = 1\n")
        seen = len(client.log_messages)
        client.text_document_did_save(t.DidSaveTextDocumentParams(
            t.TextDocumentIdentifier((root / "jax" / "_src" / "touched.py").as_uri())))
        message = await logged(client, "cache", after=seen)
        assert t.MessageType.Error in [m.type for m in client.log_messages[seen:]]
        assert all(_one_line(m) for m in client.log_messages[seen:]), message
        await _still_answers(client, root)
    finally:
        if as_root:
            cache.unlink()
            moved.rename(cache)
        else:
            cache.chmod(0o755)


async def test_a_root_that_disappears(client, places):
    root = places["root"]
    away = root.with_name("minijax-away")
    root.rename(away)
    try:
        seen = len(client.log_messages)
        client.text_document_did_save(t.DidSaveTextDocumentParams(
            t.TextDocumentIdentifier((root / PSUM[0]).as_uri())))
        message = await logged(client, "does not exist", after=seen)
        assert "\n" not in message
        symbols = await client.workspace_symbol_async(t.WorkspaceSymbolParams(query="psum"))
        assert symbols  # answered from the index it had
    finally:
        away.rename(root)
    await _still_answers(client, root)

"""The editor server on the wire: a request whose params cannot be read is answered
with that error (-32602), as JSON-RPC requires, not left unanswered."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from markers import ROOT


def _send(stdin, message: dict) -> None:
    body = json.dumps(message).encode()
    stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stdin.flush()


def _receive(stdout) -> dict:
    length = None
    while True:
        line = stdout.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    assert length is not None, "the server closed its output"
    return json.loads(stdout.read(length))


def test_a_request_with_unreadable_params_is_answered(tmp_path):
    server = subprocess.Popen(
        [sys.executable, "-m", "jaxmap", "lsp", "--root", str(ROOT)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env={**os.environ, "JAXMAP_CACHE_DIR": str(tmp_path / "cache")})
    try:
        _send(server.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                             "params": {"capabilities": {}, "rootUri": None}})
        assert _receive(server.stdout)["id"] == 1
        _send(server.stdin, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
        _send(server.stdin, {"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover",
                             "params": {"x": 1}})
        _send(server.stdin, {"jsonrpc": "2.0", "id": 8, "method": "foo/bar", "params": {}})
        answers = {}
        while 8 not in answers:  # the unknown method's answer comes after the hover's
            message = _receive(server.stdout)
            if "id" in message:
                answers[message["id"]] = message
        assert answers[7]["error"]["code"] == -32602
        assert answers[8]["error"]["code"] == -32601
    finally:
        server.kill()
        server.wait()

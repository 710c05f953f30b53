"""What `jaxmap lsp` takes as a JSON-RPC 2.0 message (lspmessages.py), as a table: a
value (an object as `judge` sees it, anything else as `unread` does), why it is no
message (None: it is one), and the id its Invalid Request answers."""

from __future__ import annotations

import pytest

from jaxmap import lspmessages

CASES = [
    ({"jsonrpc": "2.0", "id": 1, "method": "shutdown"}, None, None),
    ({"jsonrpc": "2.0", "method": "exit", "params": None}, None, None),
    ({"jsonrpc": "2.0", "id": "a", "result": None}, None, None),  # a response
    ({"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": "m"}}, None, None),
    ({"jsonrpc": "2.0", "id": 1, "method": 5}, '"method" is no string', 1),
    ({"jsonrpc": "2.0", "method": 5}, '"method" is no string', None),
    ({"jsonrpc": "2.0", "id": 1, "method": "m", "params": 7}, '"params"', 1),
    ({"jsonrpc": "2.0", "id": True, "method": "m"}, '"id"', None),
    ({"jsonrpc": "2.0", "id": 2}, "neither a request nor a response", 2),
    ({"jsonrpc": "2.0", "id": 2, "result": 1, "error": {}}, "neither", 2),
    ({"jsonrpc": "1.0", "id": 3, "method": "m"}, '"jsonrpc": "2.0"', 3),
    ({"id": 4, "method": "m"}, '"jsonrpc": "2.0"', 4),
    ([], "an empty batch", None),
    ([{"jsonrpc": "2.0", "method": "exit"}], "a batch", None),
    ("hello", "no JSON object", None),
    (None, "no JSON object", None),
    (7, "no JSON object", None),
]


@pytest.mark.parametrize("value, why, answered", CASES)
def test_what_is_no_message(value, why, answered):
    invalid = lspmessages.judge(value) if isinstance(value, dict) else \
        lspmessages.unread(value)
    if why is None:
        assert invalid is None
        return
    assert why in invalid.why
    assert lspmessages.answer(invalid) == {
        "jsonrpc": "2.0", "id": answered,
        "error": {"code": -32600, "message": f"Invalid Request: {invalid.why}"}}


def test_a_message_pygls_made_is_left_to_it():
    assert lspmessages.unread(object()) is None

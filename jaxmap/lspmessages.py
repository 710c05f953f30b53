"""What `jaxmap lsp` takes as a JSON-RPC 2.0 message, judged before pygls reads it.

A value that is no message (a batch, which LSP does not use, the empty one among them;
a string; an object whose "method" is no string) is for JSON-RPC 2.0 an Invalid Request
(-32600), answered with the id it carries where that can be read, else null. pygls
would answer it Internal Error, or nothing, and log Python's words for what failed.
"""

from __future__ import annotations

from typing import Any, NamedTuple

CODE = -32600
MESSAGE = "Invalid Request"
_ID = (str, int, float, type(None))


class Invalid(NamedTuple):
    """A value that is no JSON-RPC 2.0 message: why (a phrase), and the id to answer."""

    why: str
    id: Any = None


def judge(message: dict) -> Invalid | None:
    """An Invalid for an object meant as a message (it has "jsonrpc") that is none;
    None for one that is."""
    why = _why(message)
    if why is None:
        return None
    found = message.get("id")
    return Invalid(why, found if _an_id(found) else None)


def unread(value: Any) -> Invalid | None:
    """What json.loads gave, `judge` its hook, as a message: an Invalid for a value that
    is none (one `judge` made, a batch, an object without "jsonrpc", a string, a number,
    null); None for a message pygls made."""
    if isinstance(value, Invalid):
        return value
    if isinstance(value, list):
        return Invalid("an empty batch" if not value else "a batch, which LSP does not use")
    if isinstance(value, dict):  # pygls leaves only those without "jsonrpc" so
        return judge(value)
    if value is None or isinstance(value, (str, int, float)):
        return Invalid("a message that is no JSON object")
    return None


def _why(message: dict) -> str | None:
    if message.get("jsonrpc") != "2.0":
        return 'a message without "jsonrpc": "2.0"'
    if "id" in message and not _an_id(message["id"]):
        return 'a message whose "id" is neither a number nor a string'
    if "method" in message:
        if not isinstance(message["method"], str):
            return 'a message whose "method" is no string'
        if not isinstance(message.get("params"), (dict, list, type(None))):
            return 'a message whose "params" are neither an object nor an array'
        return None
    if "id" not in message or ("result" in message) == ("error" in message):
        return "a message that is neither a request nor a response"
    return None


def _an_id(value: Any) -> bool:
    return isinstance(value, _ID) and not isinstance(value, bool)


def answer(invalid: Invalid) -> dict:
    """The Invalid Request response to send (its id null where none could be read)."""
    return {"jsonrpc": "2.0", "id": invalid.id,
            "error": {"code": CODE, "message": f"{MESSAGE}: {invalid.why}"}}

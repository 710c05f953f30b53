"""Waiting on what a language server under test logs (window/logMessage)."""

from __future__ import annotations

import asyncio


async def logged(client, text: str, after: int = 0, timeout: float = 120) -> str:
    """The first log message from index `after` on that contains `text`."""
    for _ in range(int(timeout / 0.05)):
        for message in client.log_messages[after:]:
            if text in message.message:
                return message.message
        await asyncio.sleep(0.05)
    raise AssertionError(f"no log message with {text!r}: {client.log_messages}")

"""A message template as stored (its literal pieces, a placeholder between each two;
build/messages.py reads them from source) -> the regex that matches the message as
raised, whole or by its start."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\w+|[^\w\s]+")  # a word, or a run of signs
MIN_LITERAL = 12  # a message with less literal text than this matches too much


def _literal(piece: str) -> str:
    """A piece of text, any run of whitespace matching any other (messages get wrapped)."""
    return r"\s+".join(re.escape(word) for word in piece.split()) \
        + (r"\s*" if piece[-1:].isspace() else "")


def template_regex(pieces: tuple[str, ...]) -> re.Pattern:
    """A pattern matching a message raised from `pieces`: each placeholder a group;
    any run of whitespace matches any other (messages get wrapped)."""
    parts = [_literal(p) if p.strip() else r"\s*" for p in pieces]
    pattern = "(.*?)".join(parts)
    if len(pieces) > 1 and not pieces[-1].strip():  # ends with a field: to the line's end
        pattern = pattern[:pattern.rindex("(.*?)")] + r"([^\n]*)" + parts[-1]
    return re.compile(pattern, re.DOTALL)


def start_regex(pieces: tuple[str, ...]) -> re.Pattern:
    """A pattern matching the start of a message raised from `pieces`, cut after any
    word or inside any placeholder (a first line copied alone), up to the end of the
    text: each placeholder reached is a group."""
    def cut(piece: str, at_least_one: bool) -> str:
        """Any leading run of the piece's words and signs (`name:` is `name` then `:`;
        none allowed unless `at_least_one`)."""
        tokens = list(_TOKEN.finditer(piece))
        if not tokens:
            return ""
        pattern = ""
        for before, token in reversed(list(zip(tokens, tokens[1:]))):
            gap = r"\s+" if before.end() < token.start() else ""
            pattern = f"(?:{gap}{re.escape(token.group())}{pattern})?"
        pattern = re.escape(tokens[0].group()) + pattern
        return pattern if at_least_one else f"(?:{pattern})?"

    pattern = cut(pieces[-1], at_least_one=len(pieces) == 1)
    for index in range(len(pieces) - 2, -1, -1):
        piece = pieces[index]
        whole = (_literal(piece) if piece.strip() else r"\s*") + "(.*?)" + pattern
        pattern = f"(?:{whole}|{cut(piece, at_least_one=index == 0)})" if piece.strip() \
            else whole
    return re.compile(pattern + r"\s*\Z", re.DOTALL)

"""A message template as stored (its literal pieces, a placeholder between each two;
indexing/messages.py reads them from source) -> the regex that matches the message as
raised, whole or by its start."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\w+|[^\w\s]+")  # a word, or a run of signs
MIN_LITERAL = 12  # a message with less literal text than this matches too much
INIT_KIND = "__init__"  # the exception of a site that hands a message to a base __init__
WARNING_KIND = "warning"  # the exception of a `warnings.warn` site
# Where a message shows a value the index cannot fill, in every command's output:
# Python's own spelling of a format field, and no mark of text cut short (`…`).
PLACEHOLDER = "{}"


def template(pieces: tuple[str, ...]) -> str:
    """A message as shown: its literal pieces, PLACEHOLDER where each value goes."""
    return PLACEHOLDER.join(pieces)


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


# A template with little fixed text for its placeholders (under ten characters each, or
# under thirty in all after a leading one) matches almost anything: it must match whole,
# with this much in one fixed piece. A leading placeholder stays on one short line.
_DISTINCT_PIECE = 16
_FIXED_PER_FIELD = 10
_FIXED_AFTER_LEADING = 30
_LEADING_FIELD = 120


def loose(pieces: tuple[str, ...]) -> bool:
    """Whether a template is mostly placeholders."""
    fixed = fixed_length(pieces)
    return fixed < _FIXED_PER_FIELD * (len(pieces) - 1) or (
        len(pieces) > 1 and not pieces[0].strip() and fixed < _FIXED_AFTER_LEADING)


def matches_whole(pieces: tuple[str, ...], message: str) -> re.Match | None:
    """The match of a template from the start of `message` (its fixed text all there),
    ending at a line's end or a word's; None if it does not explain the message's start,
    or if the template is too loose to tell it (see `loose`)."""
    fixed = sum(len(p.strip()) for p in pieces)
    if fixed < MIN_LITERAL:
        return None
    if loose(pieces) and max(len(p.strip()) for p in pieces) < _DISTINCT_PIECE:
        return None
    found = template_regex(pieces).match(message)
    if found is None or not _ends_cleanly(message, found.end()):
        return None
    if not pieces[0].strip() and len(pieces) > 1 and not _short_line(found.group(1)):
        return None
    return found


def matches_start(pieces: tuple[str, ...], message: str) -> re.Match | None:
    """The match of `message` as the start of a template (a first line copied alone),
    with enough fixed text read to tell it; never for a loose template."""
    if loose(pieces):
        return None
    found = start_regex(pieces).match(message)
    if found is None or not pieces[0].strip() and not _short_line(found.group(1) or ""):
        return None
    fixed = len(found.group().strip()) - sum(len(g) for g in found.groups() if g)
    return found if fixed >= MIN_LITERAL else None


def _ends_cleanly(message: str, end: int) -> bool:
    """A match ends at the message's end, a line's end, or between a word and a space
    (not in the middle of a word)."""
    rest = message[end:]
    return not rest.strip() or rest[:1] in "\n \t" or not (message[end - 1:end].isalnum()
                                                          and rest[:1].isalnum())


def _short_line(text: str) -> bool:
    return "\n" not in text and len(text) <= _LEADING_FIELD


def fixed_length(pieces: tuple[str, ...]) -> int:
    """How much fixed text a template has (its pieces, less outer spaces)."""
    return sum(len(p.strip()) for p in pieces)

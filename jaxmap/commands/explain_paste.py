"""A paste as users paste it (a test run's report, a log, a notebook's output, one
message) cut into the tracebacks it holds, each rewritten as Python prints it
(explain_formats.py) and read on its own; the exceptions of one chain stay together.
Also the jax release a paste says it ran (`jax.__version__`, `jax==0.4.38`,
`print_environment_info`'s `jax: 0.4.38`, a path through `jax-0.4.38`)."""

from __future__ import annotations

import re
from typing import NamedTuple

from jaxmap.commands import explain_formats as formats

_VERSION = re.compile(r"\bjax(?:\.__version__\W{0,8}|==|-|:[ \t]+|[ \t]+version[ \t]+|"
                      r"[ \t]+v?)(\d+\.\d+\.\d+)\b")


_SIMPLIFIED = re.compile(r"^(?:jax\.errors\.|jax\._src\.traceback_util\.)?SimplifiedTraceback: ")


# `ValueError: ...`, `jax.errors.ConcretizationTypeError: ...` at a line's start
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit)\w*: ")


class Segment(NamedTuple):
    number: int  # 1-based, in the paste's order
    label: str | None  # what the paste calls it: the test's name under pytest's banner
    text: str  # one traceback (a chain) or one message, as Python prints it


def segments(text: str) -> tuple[Segment, ...]:
    """The tracebacks (or the message alone) `text` holds, in its order."""
    text = formats.plain(text)
    sections = formats.pytest_sections(text) if formats.is_pytest(text) else [(None, text)]
    found: list[tuple[str | None, str]] = []
    for label, body in sections:
        if formats.is_ipython(body):
            body = formats.from_ipython(body)
        found += [(label, piece) for piece in split(body)]
    found = found or [(None, text)]
    return tuple(Segment(i, label, piece) for i, (label, piece) in enumerate(found, 1))


def split(text: str) -> list[str]:
    """The tracebacks of one section, each from its header (or from the first of the
    chain it belongs to) to the next; a `path:line: Class: message` line is one of its
    own. Text with neither is one message, from its first `Class: message` line if it
    has one ("I get this error:" before it left out); text before the first is left
    out."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if _starts_one(lines, i)]
    if not starts:
        first = next((i for i, line in enumerate(lines) if _EXCEPTION_LINE.match(line)), 0)
        return ["\n".join(lines[first:])] if text.strip() else []
    pieces = []
    for start, end in zip(starts, [*starts[1:], len(lines)]):
        located = formats.LOCATED.match(lines[start])
        pieces.append(formats.located_traceback(located) if located
                      else "\n".join(lines[start:end]).strip("\n"))
    return pieces


def _starts_one(lines: list[str], i: int) -> bool:
    """Whether line `i` starts a traceback that is not the next of a chain (Python before
    3.11 starts JAX's filtered one with its `SimplifiedTraceback` note, no frames)."""
    line = lines[i]
    if _SIMPLIFIED.match(line):
        return True
    if line.rstrip() == formats.HEADER:
        before = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        return before not in formats.CHAIN_SENTENCES
    located = formats.LOCATED.match(line)
    return bool(located) and (not line[:1].isspace() or _after_test_id(lines, i))


def _after_test_id(lines: list[str], i: int) -> bool:
    """An indented warning line under pytest's `path::test` in its warnings summary."""
    return i > 0 and "::" in lines[i - 1] and not lines[i - 1][:1].isspace()


def release(text: str) -> str | None:
    """The jax release the paste says it ran, if it says one."""
    found = _VERSION.search(text)
    return found.group(1) if found else None

"""A pasted traceback (or a message alone) read as the chain of exceptions it shows,
the root cause first: each one's class as printed, its message, its frames, and
whether JAX filtered its own frames out."""

from __future__ import annotations

import re
from typing import NamedTuple

# Python's words between the exceptions of a chain: the cause is printed first.
_CHAINED = re.compile(r"^(The above exception was the direct cause of the following exception:"
                      r"|During handling of the above exception, another exception occurred:)"
                      r"\s*$", re.MULTILINE)
# A lookup JAX's own code failed and replaced, while handling it or from it, with the
# error it means (`get_primitive_transpose`: a KeyError, then "Transpose rule ... not
# implemented").
_LOOKUPS = frozenset({"KeyError", "IndexError", "AttributeError", "StopIteration"})
_CARRIED = "Traceback (most recent call last):"  # anywhere in a message
# JAX's copies of an exception: with all its frames, and (before 0.2.18) the filtered one
_COPIES = ("UnfilteredStackTrace", "FilteredStackTrace")
_HEADER = re.compile(r"^Traceback \(most recent call last\):\s*$", re.MULTILINE)
_FRAME = re.compile(r'^[ \t]*File "(.*)", line (\d+), in (\S+)[ \t]*$', re.MULTILINE)
# The note JAX adds under a message when it filters the traceback (quiet mode): a line
# of twenty dashes, then 'For simplicity, JAX has removed its internal frames ...'.
_FILTER_NOTE = re.compile(r"^-{20}\r?\n(?=For simplicity, JAX has removed)", re.MULTILINE)
_JAX_REMOVED = "JAX has removed its internal frames"
# The note under a copy before JAX 0.2.18: 'The stack trace above excludes JAX-internal frames.'
_OLD_NOTE = re.compile(r"^The stack trace (?:above|below) excludes JAX-internal frames\.",
                       re.MULTILINE)
# `TypeError: ...`, `jax.errors.ConcretizationTypeError: ...`, `KeyError: 'b'`, a class alone
_CLASS = re.compile(r"([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)(?::[ \t]?|[ \t]*$)")
_CLASS_WORDS = re.compile(r"(?:Error|Exception|Warning|Interrupt|Exit|Operation)$")
# A path inside a `jax` package (installed, or a checkout: `.../jax/jax/_src/core.py`).
_JAX_PATH = re.compile(r"(?:^|^.*/)(jax(?:lib)?/.*)$")
# A script at a checkout's top (`.../packages/jax/repro.py`, run as `<module>`): the user's.
_CHECKOUT_SCRIPT = re.compile(r"^jax/(?!__init__\.py$)[^/]+\.py$")
# Python's markers under a frame's source (`^^^^`, `~~^~~`), at any indent: a long source
# line's markers start at the line's start.
_MARKERS = re.compile(r"^[ \t]*[~^]+[ \t~^]*$")


class Frame(NamedTuple):
    path: str  # as printed, `/` separated
    line: int
    function: str
    code: str  # the source line printed under it, stripped; "" if none

    @property
    def jax_file(self) -> str | None:
        """The frame's path from its `jax/` (or `jaxlib/`) folder on; None outside JAX
        (and for a script run from a checkout's top folder)."""
        found = _JAX_PATH.search(self.path)
        if found is None or (self.function == "<module>" and
                             _CHECKOUT_SCRIPT.match(found.group(1))):
            return None
        return found.group(1)


class Raised(NamedTuple):
    exception: str | None  # the class as printed (`jax.errors.X`, `TypeError`); None: not said
    message: str
    frames: tuple[Frame, ...]  # outermost first; () for a message pasted alone
    filtered: bool  # JAX said it removed its internal frames

    @property
    def jax_frames(self) -> tuple[Frame, ...]:
        return tuple(f for f in self.frames if f.jax_file)

    @property
    def traceback(self) -> bool:
        """Whether frames were pasted with the message (else it stands alone)."""
        return bool(self.frames) or self.filtered

    @property
    def carried(self) -> tuple[Raised, ...]:
        """The exceptions of a traceback the message carries, root cause first (XLA's
        `CpuCallback error calling callback: Traceback ...`: the callback's error that
        failed the computation); () if it carries none."""
        at = self.message.find(_CARRIED)
        return read(self.message[at:]) if at >= 0 else ()


def read(text: str) -> tuple[Raised, ...]:
    """The exceptions `text` shows, the root cause first (a message alone: one). A paste
    that ends at JAX's unfiltered copy of an exception (`UnfilteredStackTrace: TypeError:
    ...`, the filtered one cut off) ends with the exception it copies."""
    parts = _CHAINED.split(text.replace("\r\n", "\n"))
    chain = []
    for part, replaced in zip(parts[::2], [*parts[1::2], None]):  # [text, words, ...]
        raised = _one(part) if part.strip() else None
        if raised is not None and not (replaced and _replaced_lookup(raised)):
            chain.append(raised)  # (a lookup of JAX's that it handled is left out)
    if chain and _copy(chain[-1]):
        chain[-1] = _unwrapped(chain[-1])
    elif len(chain) > 1 and _copy(chain[-2]) and not (chain[-1].exception or chain[-1].message):
        # its class line cut: JAX's copy above is 'the original exception, unmodified'
        copied = _unwrapped(chain[-2])
        chain[-1] = chain[-1]._replace(exception=copied.exception, message=copied.message)
    return tuple(chain)


def _replaced_lookup(raised: Raised) -> bool:
    """Whether an exception JAX's code handled by raising another is a failed lookup
    of its own (raised in a JAX file): the one raised instead says what it means."""
    return (raised.exception or "").rpartition(".")[2] in _LOOKUPS \
        and bool(raised.frames) and raised.frames[-1].jax_file is not None


def _copy(raised: Raised) -> bool:
    return (raised.exception or "").rpartition(".")[2] in _COPIES


def _unwrapped(raised: Raised) -> Raised:
    exception, message = _split_class(raised.message, strict=True)
    return raised._replace(exception=exception, message=message.strip()) if exception \
        else raised


def _one(text: str) -> Raised:
    """One exception: its frames, then its class and message (a message alone: the text,
    less any `ExcType: ` it starts with)."""
    frames = _own_frames(text)
    rest = text[frames[-1].end():] if frames else text[_after_header(text):]
    if frames:
        rest = _past_code(rest)
    exception, message = _split_class(rest.strip("\n"), strict=not frames)
    parts = _FILTER_NOTE.split(_OLD_NOTE.split(message, maxsplit=1)[0], maxsplit=1)
    message, filtered = parts[0], len(parts) > 1 or _JAX_REMOVED in text
    return Raised(exception, message.strip(), tuple(_frames(text, frames)), filtered)


def _own_frames(text: str) -> list[re.Match]:
    """The exception's own frames: the run of `File ...` lines (each with its indented
    source) up to its class line; frames of a traceback its message carries are the
    message's."""
    frames: list[re.Match] = []
    for frame in _FRAME.finditer(text):
        if frames and _past_code(text[frames[-1].end():frame.start()]).strip():
            break
        frames.append(frame)
    return frames


def _after_header(text: str) -> int:
    header = _HEADER.search(text)
    return header.end() if header else 0


def _past_code(rest: str) -> str:
    """What follows the last frame, less the indented source and marker lines under it."""
    at = 0
    while at < len(rest):
        end = rest.find("\n", at)
        end = len(rest) if end < 0 else end + 1
        line = rest[at:end]
        if line.strip() and line[:1] not in " \t" and not _MARKERS.match(line):
            break
        at = end
    return rest[at:]


def _split_class(text: str, strict: bool) -> tuple[str | None, str]:
    """(`ExcType`, the message after it) of an exception line; a message alone names
    its class only when the name reads like one (`TypeError:`, `jax.errors.X:`)."""
    found = _CLASS.match(text)
    if not found:
        return None, text
    name = found.group(1)
    if strict and not (_CLASS_WORDS.search(name) or name.rpartition(".")[2] in _COPIES
                       or "." in name and name[:1].islower()
                       and name.rpartition(".")[2][:1].isupper()):
        return None, text
    if not found.group().rstrip().endswith(":") and text[found.end():].strip() and strict:
        return None, text
    return name, text[found.end():]


def _frames(text: str, frames) -> list[Frame]:
    out = []
    for frame in frames:
        after = text[frame.end():].split("\n", 2)
        code = after[1].strip() if len(after) > 1 and after[1][:1] in " \t" else ""
        if code.startswith('File "'):
            code = ""
        out.append(Frame(frame.group(1).replace("\\", "/"), int(frame.group(2)),
                         frame.group(3), code))
    return out

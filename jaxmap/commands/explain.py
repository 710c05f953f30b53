"""`jaxmap explain TEXT`: where a JAX error message comes from, and what to do about it.

TEXT is a message or a whole traceback; each exception of a chained traceback is
answered, the root cause first. The message formats are the indexed tree's own
`raise`/`warnings.warn` sites (indexing/messages.py), so each release's wording is
followed. A site answers only if it explains the message from its start with enough
fixed text, raises the class the traceback prints, and, where the traceback shows
JAX frames, is among them or ranks after those that are. What no site explains is
placed at the traceback's innermost frame when that is JAX's ('raised here, message
not matched'),
or, for an error of the runtime that carries the traceback of a callback it ran (each
of whose exceptions is answered first), at the frame that called the runtime, or
matched against the wording of older releases (the committed snapshots), or
said to be unplaced, with the closest messages of the tree apart; a traceback with
no JAX in it is 'not from JAX'. A rule-missing message is answered by
missing_rules.py: the rule to add, or why none should be added (the primitive is not
linear; the index has the rule).
"""

from __future__ import annotations

import enum
from difflib import SequenceMatcher
from typing import NamedTuple

from jaxmap.commands import missing_rules, tracebacks
from jaxmap.commands.exception_classes import Agreement, agreement, builtin
from jaxmap.commands.explain_rank import Ranker
from jaxmap.commands.missing_rules import HasRule, MissingRule, NotLinear
from jaxmap.errors import ArgumentError, NotFound
from jaxmap.store.message_patterns import (
    INIT_KIND,
    MIN_LITERAL,
    fixed_length,
    matches_start,
    matches_whole,
)

# JAX's own additions to a chain: the user's frames where a failing operation was
# created, or the unfiltered copy of the exception. Their frames serve the next one.
_PSEUDO = ("JaxStackTraceBeforeTransformation", "UnfilteredStackTrace")
_JAX_PACKAGES = ("jax", "jaxlib")
_CLOSEST = 3
_CLOSEST_AT_LEAST = 0.5
_COMPARED = 300  # characters of a message compared for the closest ones
_SUCCESSOR_AT_LEAST = 0.8  # 'most of the text', for a successor in another function
_SAME_FUNCTION_AT_LEAST = 0.6  # a successor raised by the same function


class Status(str, enum.Enum):
    MATCHED = "matched"  # sites raise this message
    FRAME = "frame"  # no site's message matched; the traceback's innermost JAX frame
    # ... of a traceback JAX filtered: its frames below the one shown were removed
    FRAME_SHOWN = "frame-shown"
    # an error of the runtime (XLA) that carries the traceback of a callback it ran; the
    # frame that called the runtime, read from that traceback
    RUNTIME = "runtime"
    OLDER = "older"  # worded as an older release words it
    UNMATCHED = "unmatched"  # nothing placed it
    NOT_JAX = "not-jax"  # a traceback with no JAX in it


class Site(NamedTuple):
    file: str
    line: int
    function: str
    exception: str
    returned: bool = False  # the function returns the exception; its callers raise it


class Near(NamedTuple):
    similarity: float
    site: Site
    template: str  # the message's fixed text, `{}` for each placeholder


class Older(NamedTuple):
    version: str  # the release whose wording matched
    site: Site  # where that release raised it
    successors: tuple[Site, ...]  # where this release raises its successor; () if none


class Explanation(NamedTuple):
    message: str  # the text matched (else the message as pasted)
    sites: tuple[Site, ...]  # where it is raised (several: one wording, several sites)
    missing: MissingRule | None
    # For a message an exception class builds in its __init__, or a helper returns (or
    # yields) as an exception: where it is raised (the traceback's innermost JAX frame,
    # then the calls to the class or helper from the call graph).
    raised_by: tuple[Site, ...] = ()
    exception: str | None = None  # the class as the traceback prints it
    status: Status = Status.MATCHED
    not_linear: NotLinear | None = None
    older: Older | None = None
    closest: tuple[Near, ...] = ()
    has_rule: HasRule | None = None  # the rule said to be missing is in the index

    @property
    def placed(self) -> bool:
        return self.status in (Status.MATCHED, Status.FRAME, Status.FRAME_SHOWN,
                               Status.RUNTIME, Status.OLDER)


class OlderReleases:
    """(version, messages) of the committed snapshots of releases older than the
    index's, newest first; read on first use."""

    def __init__(self, index):
        self._version, self._read = index.jax_version, None

    def __iter__(self):
        if self._read is None:
            from jaxmap.store import snapshot

            self._read = []
            for version, path in snapshot.older_than(self._version):
                rows = [row for row in snapshot.load(path).messages()
                        if fixed_length(row[4]) >= MIN_LITERAL]
                if rows:
                    self._read.append((version, rows))
        return iter(self._read)


def explain(index, text: str, older=None) -> Explanation:
    """The first exception of `text` that is placed (see `explain_all`); NotFound if
    none is."""
    answers = explain_all(index, text, older)
    for answer in answers:
        if answer.placed:
            return answer
    raise NotFound(unplaced_reason(answers))


def refusal(answers) -> str | None:
    """Why the answers place no exception, in a line (the front ends fail with it);
    None if one is placed."""
    return None if any(a.placed for a in answers) else unplaced_reason(answers)


def unplaced_reason(answers) -> str:
    """Why no answer placed its exception, in a line."""
    if answers and all(a.status == Status.NOT_JAX for a in answers):
        return "not from JAX: the traceback has no JAX frame and no JAX exception"
    return "not an error message raised in this tree"


def explain_all(index, text: str, older=None) -> tuple[Explanation, ...]:
    """An answer for each exception of `text` (a message, or a traceback, chained or
    not), the root cause first. `older`: (version, messages rows) of older releases,
    newest first, read when no site of this tree matches (default: the committed
    snapshots older than the index's release)."""
    if not text.strip():
        raise ArgumentError("explain needs the message (or traceback) to explain; on the "
                            "command line, - reads it from stdin")
    older = OlderReleases(index) if older is None else older
    messages = [row for row in index.messages() if fixed_length(row[4]) >= MIN_LITERAL]
    answers = []
    before: tuple = ()  # the frames a JAX pseudo-cause lends to the exception after it
    for raised in tracebacks.read(text):
        if raised.exception and raised.exception.rpartition(".")[2] in _PSEUDO:
            before = raised.frames
            continue
        answers += [_answer(index, messages, carried, (), older)
                    for carried in raised.carried
                    if carried.exception and carried.exception.rpartition(".")[2] not in _PSEUDO]
        answers.append(_answer(index, messages, raised, before, older))
        before = ()
    return tuple(answers)


def _answer(index, messages, raised, before, older) -> Explanation:
    message = raised.message
    if raised.traceback and not _from_jax(raised):
        return Explanation(message, (), None, exception=raised.exception,
                           status=Status.NOT_JAX)
    found = match(messages, raised)
    if found:
        return _matched(index, raised, before, *found)
    if raised.frames and raised.frames[-1].jax_file:  # not a raise in the user's code
        frame = raised.frames[-1]
        site = Site(frame.jax_file, frame.line, frame.function, raised.exception or "")
        return Explanation(message, (site,), None, exception=raised.exception,
                           status=Status.FRAME_SHOWN if raised.filtered else Status.FRAME)
    entry = _runtime_entry(index, raised)
    if entry is not None:
        return Explanation(message, (entry,), None, exception=raised.exception,
                           status=Status.RUNTIME)
    for version, rows in older:
        found = match(rows, raised)
        if found:
            return _older(messages, raised, version, found)
    return Explanation(message, (), None, exception=raised.exception,
                       status=Status.UNMATCHED, closest=closest(messages, message))


def _runtime_entry(index, raised) -> Site | None:
    """Where an error of the runtime that carries a callback's traceback surfaced: that
    traceback is the stack when the callback failed, and the runtime between the frame
    that called it and the callback is code the index cannot see. So: the innermost JAX
    frame of it whose line the index sees calling nothing that is the next frame's
    function."""
    carried = raised.carried
    frames = carried[-1].jax_frames if carried else ()
    for outer, inner in reversed(list(zip(frames, frames[1:]))):
        called = index.nodes({callee for _text, callee in index.calls_at(outer.jax_file,
                                                                          outer.line)})
        if inner.function not in {node.qualname.rpartition(".")[2] for node in called.values()}:
            return Site(outer.jax_file, outer.line, outer.function, raised.exception or "")
    return None


def _from_jax(raised) -> bool:
    """Whether a pasted traceback shows JAX: a frame in it, its note on removed frames,
    or an exception class of JAX's (`jax.errors.X`; not Python's own, nor another
    module's, like `json.decoder.JSONDecodeError`)."""
    if raised.filtered or raised.jax_frames or raised.exception is None:
        return True
    if "." in raised.exception:
        return raised.exception.partition(".")[0] in _JAX_PACKAGES
    return not builtin(raised.exception)


def match(rows, raised) -> tuple[list[Site], tuple[str, ...], object, bool] | None:
    """(the sites whose message explains `raised` best, its pieces, the match, whether
    it matched whole): whole matches first, else the message as the start of one
    (a first line copied alone); sites raising another class are left out."""
    text = raised.message
    for whole, matcher, near in ((True, matches_whole, _longest_word_in),
                                 (False, matches_start, _first_word_in)):
        best: list[Site] = []
        score, chosen = 0, None
        for file, line, function, exception, pieces, returned in rows:
            if not near(pieces, text):
                continue
            if agreement(raised.exception, exception, function) == Agreement.CONFLICT:
                continue
            found = matcher(pieces, text)
            if found is None:
                continue
            scored = fixed_length(pieces) if whole else _start_length(found)
            if scored < score:
                continue
            if scored > score:
                best, score, chosen = [], scored, (pieces, found)
            best.append(Site(file, line, function, exception, returned))
        if best:
            assert chosen is not None  # set with the first site kept
            return best, chosen[0], chosen[1], whole
    return None


def _start_length(found) -> int:
    return len(found.group().strip()) - sum(len(g) for g in found.groups() if g)


def _longest_word_in(pieces, text: str) -> bool:
    words = _words(pieces)
    return bool(words) and max(words, key=len) in text


def _first_word_in(pieces, text: str) -> bool:
    words = _words(pieces)
    return bool(words) and words[0] in text


def _words(pieces: tuple[str, ...]) -> list[str]:
    return [word for piece in pieces for word in piece.split()]


def _matched(index, raised, before, sites, pieces, found, whole) -> Explanation:
    ranker = Ranker(index, raised, pieces)
    sites = ranker.order(sites)
    missing = missing_rules.missing_rule(index, pieces, found.groups()) if whole else None
    diagnosis = missing_rules.not_linear(missing, before + raised.frames)
    present = missing_rules.has_rule(index, missing)
    return Explanation(found.group().strip(), tuple(sites),
                       None if diagnosis or present else missing,
                       tuple(_raised_by(index, raised, sites, ranker)),
                       raised.exception, Status.MATCHED, diagnosis, has_rule=present)


def _raised_by(index, raised, sites: list[Site], ranker: Ranker) -> list[Site]:
    """Where a message built by a class's `__init__` or returned by a helper is raised:
    the traceback's innermost JAX frame (that is where), then the calls to the class
    or helper, best first."""
    found = []
    for site in sites:
        cls, _, method = site.function.rpartition(".")
        builder = site.function if site.returned else \
            cls if site.exception == INIT_KIND or method == "__init__" else None
        if builder is None:
            continue
        rows = index.callers(index.definition_ids(builder))
        nodes = index.nodes({row[0] for row in rows})
        found += [Site(nodes[caller].file, line, nodes[caller].qualname, site.exception)
                  for caller, _callee, line, _function in rows if caller in nodes]
    if not found:
        return []
    found = ranker.order(list(dict.fromkeys(found)))
    if raised.jax_frames and not raised.filtered:  # the raise is the innermost frame
        frame = raised.jax_frames[-1]
        if (found[0].file, found[0].line) != (frame.jax_file, frame.line):
            found.insert(0, Site(frame.jax_file, frame.line, frame.function, sites[0].exception))
    return found


def _older(messages, raised, version, found) -> Explanation:
    """A message worded as `version` words it: its site there, and where this release
    raises its successor: of the messages of the same class, the one most like it raised
    by the same function (if alike), else one that keeps most of its text."""
    sites, pieces, matched, _whole = found
    old = sites[0]
    wording = "{}".join(pieces)
    same = [(_similarity(wording, "{}".join(p)), Site(file, line, function, exception, returned))
            for file, line, function, exception, p, returned in messages
            if function == old.function and exception == old.exception]
    same = [(score, site) for score, site in same if score >= _SAME_FUNCTION_AT_LEAST]
    if not same:
        same = [(near.similarity, near.site) for near in closest(messages, wording)
                if near.site.exception == old.exception
                and near.similarity >= _SUCCESSOR_AT_LEAST]
    successors = tuple(site for _score, site in sorted(same, key=lambda item: -item[0])[:1])
    return Explanation(matched.group().strip(), (), None, exception=raised.exception,
                       status=Status.OLDER, older=Older(version, old, successors))


def _similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, a[:_COMPARED], b[:_COMPARED]).ratio()


def closest(messages, text: str) -> tuple[Near, ...]:
    """The messages of the tree most like `text` (never an answer: a hint)."""
    words = {w for w in text[:_COMPARED].split() if len(w) >= 5}
    scored = []
    for file, line, function, exception, pieces, returned in messages:
        if len(words & set(_words(pieces))) < 2:
            continue
        template = "{}".join(pieces)
        matcher = SequenceMatcher(None, template[:_COMPARED], text[:_COMPARED])
        if matcher.quick_ratio() < _CLOSEST_AT_LEAST:
            continue
        ratio = matcher.ratio()
        if ratio >= _CLOSEST_AT_LEAST:
            scored.append(Near(round(ratio, 2),
                               Site(file, line, function, exception, returned), template))
    scored.sort(key=lambda near: -near.similarity)
    return tuple(scored[:_CLOSEST])

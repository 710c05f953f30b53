"""`jaxmap explain TEXT`: where a JAX error message comes from, and what to do about it.

TEXT is a message, a traceback, or a paste holding several (a test run's report, a
log, a notebook's output: explain_paste.py cuts it, each answered in its turn); each
exception of a chained traceback is answered, the root cause first, with the user's
frame nearest the failure, the user's function JAX called on the way if any
(explain_user.py; when it raised, it is the root cause), and what usually fixes
the message's family (knowledge/fixes.py). The message formats are the indexed tree's own
`raise`/`warnings.warn` sites (indexing/messages.py), so each release's wording is
followed. A site answers only if it explains the message from its start with enough
fixed text, raises the class the traceback prints, and, where the traceback shows
JAX frames, is among them or ranks after those that are. What no site explains is
placed at the traceback's innermost frame when that is JAX's ('raised here, message
not matched'),
or, for an error of the runtime that carries the traceback of a callback it ran (each
of whose exceptions is answered first), at the frame that called the runtime, or
matched against the wording of older releases (the committed snapshots), or
said to be unplaced, with the closest messages of the tree apart; a traceback is 'not
from JAX' when neither its frames nor the catalogue say it is JAX's. Which release's
wording a message is matched against: explain_releases.py. A rule-missing message is answered by
missing_rules.py: the rule to add, or why none should be added (the primitive is not
linear; the index has the rule).
"""

from __future__ import annotations

import enum
import re
from difflib import SequenceMatcher
from itertools import takewhile
from typing import TYPE_CHECKING, NamedTuple

from jaxmap.commands import (
    explain_entry,
    explain_paste,
    explain_releases,
    explain_user,
    missing_rules,
    tracebacks,
)
from jaxmap.commands.exception_classes import Agreement, agreement, builtin
from jaxmap.commands.explain_entry import EntryCall
from jaxmap.commands.explain_rank import Ranker
from jaxmap.commands.explain_releases import OlderReleases
from jaxmap.commands.explain_user import CALLBACK, CalledByJax, Transformed
from jaxmap.commands.missing_rules import HasRule, MissingRule, NotLinear
from jaxmap.commands.tracebacks import Frame
from jaxmap.errors import ArgumentError, NotFound
from jaxmap.knowledge import fixes
from jaxmap.knowledge.fixes import Family
from jaxmap.store.message_patterns import (
    INIT_KIND,
    MIN_LITERAL,
    fixed_length,
    matches_start,
    matches_whole,
    template,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from jaxmap.store.read import Index

# JAX's own additions to a chain: the user's frames where a failing operation was
# created, the unfiltered copy of the exception, or (Python < 3.11) the note that it
# filtered the next one's frames. Their frames serve the next one.
_PSEUDO = ("JaxStackTraceBeforeTransformation", "UnfilteredStackTrace", "FilteredStackTrace",
           "SimplifiedTraceback")
_JAX_PACKAGES = ("jax", "jaxlib")
_CLOSEST = 3
_CLOSEST_AT_LEAST = 0.5
_COMPARED = 300  # characters of a message compared for the closest ones
_SUCCESSOR_AT_LEAST = 0.8  # 'most of the text', for a successor in another function
_SAME_FUNCTION_AT_LEAST = 0.6  # a successor raised by the same function
_JAX_NAMES = re.compile(r"\b(?:jax|jnp|lax)\b")  # a line that calls JAX by name
# What ends a message's first sentence: a `.`, `,`, `;` or `:` before a space or the
# end, or the end of its line.
_SENTENCE_END = re.compile(r"[.,;:](?:\s|\Z)|\n")
_OPENING_WORDS = 4  # a first sentence of fewer words tells too little
_DISTINCTIVE = 50  # fixed characters of a message no other library words alike


class Status(str, enum.Enum):
    MATCHED = "matched"  # sites raise this message
    FRAME = "frame"  # no site's message matched; the traceback's innermost JAX frame
    # ... of a traceback JAX filtered: its frames below the one shown were removed
    FRAME_SHOWN = "frame-shown"
    # an error of the runtime (XLA) that carries the traceback of a callback it ran; the
    # frame that called the runtime, read from that traceback
    RUNTIME = "runtime"
    OLDER = "older"  # worded as an older release words it
    # raised by the user's own function that JAX called (a callback, a branch, ...)
    USER_CODE = "user-code"
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
    segment: int = 1  # which traceback of the paste (1-based)
    label: str | None = None  # what the paste calls that traceback (a test's name)
    user: Frame | None = None  # the user's frame nearest the failure
    called: CalledByJax | None = None  # the user's function JAX called on the way
    fix: Family | None = None  # what usually fixes the message's family
    wording: str | None = None  # the release whose wording matched
    ran: str | None = None  # the release the paste says it ran, if it says
    why_not_jax: str | None = None  # for NOT_JAX: why, in a few words
    entry: EntryCall | None = None  # the public JAX function the user called
    on_path: int = 0  # how many of `raised_by`, from the first, `entry` reaches
    transformed: tuple[Transformed, ...] = ()  # the user's calls of transformations

    @property
    def placed(self) -> bool:
        return self.status in (Status.MATCHED, Status.FRAME, Status.FRAME_SHOWN,
                               Status.RUNTIME, Status.OLDER, Status.USER_CODE)


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
        if len(answers) == 1:
            return f"not from JAX: {answers[0].exception}, {answers[0].why_not_jax}"
        return f"not from JAX: none of the paste's {len(answers)} exceptions is JAX's"
    older = next((a.older for a in answers if a.older), None)
    if older is not None:
        site = older.site
        return (f"not placed: it starts like jax {older.version}'s wording ({site.file}:"
                f"{site.line} in {site.function}), which goes on past the pasted end, and "
                f"the paste does not say it ran jax {older.version}")
    return "not an error message raised in this tree"


class _Reading(NamedTuple):
    """What every exception of one paste is read against."""
    tree: Index
    messages: list  # this tree's message rows
    older: Iterable  # (version, rows) of older releases
    release: str | None  # the release the paste says it ran


def explain_all(index, text: str, older=None) -> tuple[Explanation, ...]:
    """An answer for each exception of each traceback of `text` (a message, a traceback,
    chained or not, or a paste holding several), in the paste's order, each chain's
    root cause first. `older`: (version, messages rows) of older releases, newest first
    (default: the committed snapshots older than the index's release)."""
    if not text.strip():
        raise ArgumentError("explain needs the message (or traceback) to explain; on the "
                            "command line, - reads it from stdin")
    reading = _Reading(index, [row for row in index.messages()
                               if fixed_length(row[4]) >= MIN_LITERAL],
                       OlderReleases(index) if older is None else older,
                       explain_paste.release(text))
    answers: list[Explanation] = []
    for segment in explain_paste.segments(text):
        answers += _segment(reading, segment)
    return tuple(answers)


def _segment(reading: _Reading, segment) -> list[Explanation]:
    """The answers for one traceback of a paste (each exception of its chain)."""
    chain = tracebacks.read(segment.text)
    outermost = next((f for raised in chain
                      if (f := explain_user.user_frame(raised.frames))), None)
    answers = []
    before: tuple = ()  # the frames a JAX pseudo-cause lends to the exception after it
    for raised in chain:
        if _pseudo(raised):
            before = raised.frames
            continue
        for one, lent in [*((c, ()) for c in raised.carried if c.exception and not _pseudo(c)),
                          (raised, before)]:
            one = _settled(reading, one)
            answer = _answer(reading, one, lent)._replace(ran=reading.release)
            answers.append(_with_user_side(answer, one, lent, outermost, segment,
                                           reading.tree))
        before = ()
    return answers


def _public_paths(index, name: str) -> list[str]:
    """The public paths of the definitions named `name`, shortest first."""
    return sorted({path for d in index.definitions_named(name) for path in d.public_paths},
                  key=lambda path: (len(path), path))


def _pseudo(raised) -> bool:
    return bool(raised.exception) and raised.exception.rpartition(".")[2] in _PSEUDO


def _settled(reading: _Reading, raised):
    """`raised` with JAX frames printed by another release moved to this tree's line
    of their source (explain_releases.settled)."""
    frames = tuple(f._replace(line=explain_releases.settled(reading.tree.root, f))
                   if f.jax_file else f for f in raised.frames)
    return raised._replace(frames=frames)


def _with_user_side(answer: Explanation, raised, before, outermost, segment,
                    index) -> Explanation:
    """The answer with the user's side: their frame nearest the failure, the function of
    theirs JAX called, the transformations they called on the way (a JAX pseudo-cause's
    frames, where the operation was traced, run inside the exception's own), and what
    usually fixes the message's family (for a name a jax module lacks, where the tree
    makes it public)."""
    user = explain_user.nearest(raised.frames, before) or outermost
    called = explain_user.called_by_jax(raised.frames)
    family = fixes.family(answer.exception, answer.message)
    missing = fixes.NO_ATTRIBUTE.search(answer.message or "")
    if family is None and missing:
        module, name = missing.groups()
        family = fixes.moved(module, name, _public_paths(index, name))
    if family is not None and family.name in fixes.RULE_FAMILIES:
        family = fixes.missing_rule(shown=bool(answer.missing and answer.missing.register_with),
                                    registered=answer.has_rule is not None,
                                    not_linear=answer.not_linear is not None,
                                    switched_off=bool(answer.missing
                                                      and answer.missing.switched_off),
                                    family=family)
    if answer.status == Status.USER_CODE:
        family = fixes.CALLBACK_RAISED if called and called.via == CALLBACK else \
            fixes.USER_CODE
    return answer._replace(segment=segment.number, label=segment.label, user=user,
                           called=called, fix=family,
                           transformed=explain_user.transformed(raised.frames + before))


def _answer(reading: _Reading, raised, before) -> Explanation:
    index, messages, message = reading.tree, reading.messages, raised.message
    called = explain_user.called_by_jax(raised.frames)
    if called is not None and called.raised and called.route:
        return _user_code(raised)
    found = match(messages, raised)
    if found and _raised_by_python(reading, raised, found):
        found = None
    wording = _older_wording(reading, raised, found)
    if wording and _raised_by_python(reading, raised, wording[1]):
        wording = None
    catalogued = found or (wording[1] if wording else None)
    if raised.traceback and not _from_jax(raised) and \
            not (catalogued and _may_be_jax(raised, catalogued)):
        return Explanation(message, (), None, exception=raised.exception,
                           status=Status.NOT_JAX, why_not_jax=_why_not_jax(raised))
    if wording is not None:
        return _older(reading, raised, before, *wording)
    if found:
        return _matched(index, raised, before, *found, release=reading.release)._replace(
            wording=index.jax_version)
    if called is not None and called.raised and _raises(raised.frames[-1]):
        return _user_code(raised)
    if raised.frames and raised.frames[-1].jax_file:  # not a raise in the user's code
        frame = raised.frames[-1]
        site = Site(frame.jax_file, frame.line, frame.function, raised.exception or "")
        return Explanation(message, (site,), None, exception=raised.exception,
                           status=Status.FRAME_SHOWN if raised.filtered else Status.FRAME)
    entry = _runtime_entry(index, raised)
    if entry is not None:
        return Explanation(message, (entry,), None, exception=raised.exception,
                           status=Status.RUNTIME)
    older = [(version, found) for version, rows in reading.older
             if (found := match(rows, raised))]
    for version, found in older:
        if _corroborated(reading, version, found):
            return _older(reading, raised, before, version, found)
    if older:  # named, not placed: its wording goes on past what a placeholder took
        return _older(reading, raised, before, *older[0])._replace(
            message=message, status=Status.UNMATCHED, closest=closest(messages, message),
            missing=None, not_linear=None, has_rule=None)
    return Explanation(message, (), None, exception=raised.exception,
                       status=Status.UNMATCHED, closest=closest(messages, message))


def _corroborated(reading: _Reading, version: str, found) -> bool:
    """Whether the paste supports an older release's site for its message: the wording
    explains the whole message, or, where a placeholder took its end and the wording
    goes on past it (explain_releases.ends_in_field: another message may be the one
    pasted), the paste says it ran that release. (A paste whose innermost frame is
    JAX's is placed there before this.)"""
    return found[3] or not explain_releases.ends_in_field(found) or reading.release == version


def _raised_by_python(reading: _Reading, raised, found) -> bool:
    """Whether a traceback's innermost frame, shown whole and JAX's, raised the exception
    with no `raise` of its own (Python or C code failed on its line: `x.shape` of an
    int, an `assert`) and no site whose message matched is on it: the match is then a
    wording that only looks alike. Only where the frame's source line is the tree's,
    or the tree lacks its file, and the match is not whole and JAX's own (a paste cut
    above the raise: `dot_general requires lhs batch dimensions ...` under `einsum`)."""
    frame = raised.frames[-1] if raised.frames and not raised.filtered else None
    if frame is None or not frame.jax_file or not frame.code or "raise" in frame.code:
        return False
    sites, pieces, _matched, whole = found
    if whole and fixed_length(pieces) >= _DISTINCTIVE:
        return False
    if not explain_releases.unknown_or_same(reading.tree.root, frame):
        return False
    return all((site.file, site.line) != (frame.jax_file, frame.line) for site in sites)


def _user_code(raised) -> Explanation:
    """Raised by the user's own function that JAX called: it is the root cause."""
    return Explanation(raised.message, (), None, exception=raised.exception,
                       status=Status.USER_CODE)


def _raises(frame: Frame) -> bool:
    return frame.code.startswith(("raise ", "assert "))


def _why_not_jax(raised) -> str:
    innermost = raised.frames[-1] if raised.frames else None
    if innermost is not None and explain_user.is_library(innermost):
        return f"raised in another package or Python's library ({innermost.path})"
    if innermost is not None and _raises(innermost):
        return f"raised by the user's own code ({innermost.path}:{innermost.line})"
    return "no JAX frame, no JAX class, and not a message of JAX's"


def _may_be_jax(raised, found) -> bool:
    """Whether a traceback showing no JAX, whose message the catalogue has, was still
    raised by JAX, its frames filtered and their note cut: its innermost frame is the
    user's and does not raise the exception itself, and either that line calls JAX by
    name or the message has more of JAX's own words than a wording JAX shares with
    Python and NumPy (`negative dimensions are not allowed`) would."""
    if not raised.frames:
        return True
    innermost = raised.frames[-1]
    if not explain_user.is_user(innermost) or _raises(innermost):
        return False
    return bool(_JAX_NAMES.search(innermost.code)) or \
        explain_releases.score(found)[1] >= _DISTINCTIVE


def _older_wording(reading: _Reading, raised, found) -> tuple[str, tuple] | None:
    """(release, match) of an older release's wording that explains the message better
    than this tree's match: the paste's release when it names an older one; else only
    when this tree's wording explains the message by its start alone. Among releases,
    the one whose raise site is a pasted JAX frame comes first, then the fullest match."""
    indexed = reading.tree.jax_version
    if found is not None and found[3] and reading.release in (None, indexed):
        return None
    shown = {(frame.jax_file, frame.line) for frame in raised.jax_frames}
    best, best_key = None, None
    for version, rows in explain_releases.candidates(reading.older, reading.release,
                                                     indexed):
        old = match(rows, raised)
        if old is None or not old[3]:
            continue
        if found is not None and explain_releases.score(old) <= explain_releases.score(found):
            continue
        key = (any((s.file, s.line) in shown for s in old[0]), explain_releases.score(old))
        if best_key is None or key > best_key:
            best, best_key = (version, old), key
    return best


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
    module's, like `json.decoder.JSONDecodeError`), unless another package raised it."""
    if raised.filtered or raised.jax_frames or raised.exception is None:
        return True
    if raised.frames and explain_user.is_library(raised.frames[-1]):
        return False  # raised in another package, or in Python's own library
    if "." in raised.exception:
        return raised.exception.partition(".")[0] in _JAX_PACKAGES
    return not builtin(raised.exception)


def match(rows, raised) -> tuple[list[Site], tuple[str, ...], object, bool] | None:
    """(the sites whose message explains `raised` best, its pieces, the match, whether
    it matched whole): whole matches first, else the message as the start of one
    (a first line copied alone); sites raising another class are left out. The site
    the traceback's innermost frame raises at is kept where it matches at all, and its
    template is the one raised, though another quotes the message more closely."""
    text = raised.message
    innermost = raised.frames[-1] if raised.frames else None
    at = (innermost.jax_file, innermost.line) if innermost else None
    for whole, matcher, near in ((True, matches_whole, _longest_word_in),
                                 (False, matches_start, _first_word_in)):
        best: list[Site] = []
        score, chosen, raising = 0, None, None
        for file, line, function, exception, pieces, returned in rows:
            if not near(pieces, text):
                continue
            if agreement(raised.exception, exception, function) == Agreement.CONFLICT:
                continue
            found = matcher(pieces, text)
            if found is None:
                continue
            site = Site(file, line, function, exception, returned)
            if (file, line) == at:
                raising = site, (pieces, found)
            scored = fixed_length(pieces) if whole else _start_length(found)
            if scored < score:
                continue
            if scored > score:
                best, score, chosen = [], scored, (pieces, found)
            best.append(site)
        if raising is not None:
            best = [raising[0], *(site for site in best if site != raising[0])]
            chosen = raising[1]
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


def _matched(index, raised, before, sites, pieces, found, whole,
             release: str | None = None) -> Explanation:
    entry = explain_entry.entry_call(index, before + raised.frames)
    if entry is not None and not entry.shown and _arisen_elsewhere(raised.message,
                                                                   entry.spelled):
        entry = None  # read off the user's line, but the message names another function
    path = explain_entry.reached(index, entry)
    ranker = Ranker(index, raised, pieces, path)
    sites = ranker.order(sites)
    raised_by = tuple(_raised_by(index, raised, sites, ranker))
    if entry is not None and not entry.shown and \
            not any(map(ranker.on_path, (*sites, *raised_by))):
        entry = None  # read off the user's line, and it reaches no place that raises
    return Explanation(found.group().strip(), tuple(sites), raised_by=raised_by,
                       exception=raised.exception, status=Status.MATCHED, entry=entry,
                       on_path=len(list(takewhile(ranker.on_path, raised_by))),
                       **_rule_diagnosis(index, pieces, found, before + raised.frames, whole,
                                         release))


def _arisen_elsewhere(message: str, spelled: str) -> bool:
    """Whether the message names another function than `spelled` as the one a tracer
    met (`int` in `jax.jit(lambda x: int(x))(jnp.ones(()))`: not `jnp.ones`)."""
    from jaxmap.knowledge.fixes import ARISEN_WITH

    named = ARISEN_WITH.search(message)
    return named is not None and named.group(1).rpartition(".")[2] != spelled.rpartition(".")[2]


def _rule_diagnosis(index, pieces, found, frames, whole: bool,
                    release: str | None) -> dict:
    """For a rule-missing message matched whole, in this tree: the rule to add
    (`missing`; in a tree that is not jax, with the registrars of jax `release`, the
    one the paste ran, else the installed one), or why none should be (`not_linear`;
    `has_rule`: the tree registers it)."""
    missing = missing_rules.missing_rule(index, pieces, found.groups(), frames, release) \
        if whole else None
    diagnosis = missing_rules.not_linear(missing, frames)
    present = missing_rules.has_rule(index, missing)
    return {"missing": None if diagnosis or present else missing, "not_linear": diagnosis,
            "has_rule": present}


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


def _older(reading: _Reading, raised, before, version, found) -> Explanation:
    """A message worded as `version` words it: its site there, and where this release
    raises its successor: of the messages of the same class, the one most like it raised
    by the same function (if alike), else one that keeps most of its text. A rule-missing
    message is diagnosed in this tree as a matched one is (a tree of the user's own
    raises none of JAX's messages, but has the primitive)."""
    messages = reading.messages
    sites, pieces, matched, whole = found
    old = sites[0]
    wording = template(pieces)
    same = [(_similarity(wording, template(p)), Site(file, line, function, exception, returned))
            for file, line, function, exception, p, returned in messages
            if function == old.function and exception == old.exception]
    same = [(score, site) for score, site in same if score >= _SAME_FUNCTION_AT_LEAST]
    if not same:
        same = [(near.similarity, near.site)
                for near in closest(messages, wording, openings=False)
                if near.site.exception == old.exception
                and near.similarity >= _SUCCESSOR_AT_LEAST]
    successors = tuple(site for _score, site in sorted(same, key=lambda item: -item[0])[:1])
    return Explanation(matched.group().strip(), (), exception=raised.exception,
                       status=Status.OLDER, older=Older(version, old, successors),
                       wording=version,
                       **_rule_diagnosis(reading.tree, pieces, matched, before + raised.frames,
                                         whole, reading.release))


def _similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, a[:_COMPARED], b[:_COMPARED]).ratio()


def closest(messages, text: str, openings: bool = True) -> tuple[Near, ...]:
    """The messages of the tree most like `text` (never an answer: a hint): alike as a
    whole, or with `openings`, in their openings, `text`'s first sentence against as
    much of the template (another wording that goes on otherwise: jaxlib's `Non-hashable
    static arguments are not supported. An error occurred ...`, api_util.py's `... not
    supported, as this can lead to ...`)."""
    words = {w for w in text[:_COMPARED].split() if len(w) >= 5}
    opening = _SENTENCE_END.split(text.strip(), maxsplit=1)[0] if openings else ""
    if len(opening.split()) < _OPENING_WORDS:
        opening = ""
    scored = []
    for file, line, function, exception, pieces, returned in messages:
        if len(words & set(_words(pieces))) < 2:
            continue
        shown = template(pieces)
        ratio = _likeness(shown[:_COMPARED], text[:_COMPARED])
        if opening:
            ratio = max(ratio, _likeness(shown[:len(opening)], opening))
        if ratio >= _CLOSEST_AT_LEAST:
            scored.append(Near(round(ratio, 2),
                               Site(file, line, function, exception, returned), shown))
    scored.sort(key=lambda near: -near.similarity)
    return tuple(scored[:_CLOSEST])


def _likeness(template: str, text: str) -> float:
    """How alike two texts are (0 where they surely differ by more than _CLOSEST_AT_LEAST)."""
    matcher = SequenceMatcher(None, template, text)
    return matcher.ratio() if matcher.quick_ratio() >= _CLOSEST_AT_LEAST else 0.0

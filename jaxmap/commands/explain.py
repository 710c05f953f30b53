"""`jaxmap explain TEXT`: where a JAX error message comes from, and for a missing rule,
how to add it.

The message formats are the indexed tree's own `raise`/`warnings.warn` sites
(messages.py), so each release's wording is followed. A message that says a rule is
missing (`Differentiation rule for 'foo' not implemented`, `MLIR translation rule for
primitive 'foo' not found for platform cpu`, hijax's `for grad support, subclass ...
must implement `vjp_fwd``) is answered with the primitive, the missing kind, the
registries that take it, the rules the primitive has, sibling primitives whose rule
of that kind is a working example, and `jaxmap new-primitive`'s flag for it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from jaxmap.errors import ArgumentError, NotFound
from jaxmap.knowledge import registrars as R
from jaxmap.models import Primitive
from jaxmap.models import RuleKind as K
from jaxmap.store.message_patterns import MIN_LITERAL, start_regex, template_regex

# What a rule-missing message says, in its own words -> the kind; first match wins
# ("Transpose rule (for reverse-mode differentiation)" is a transpose rule).
_RULE_WORDS = (("transpose rule", K.TRANSPOSE), ("differentiation rule", K.JVP),
               ("batching rule", K.BATCHING), ("translation rule", K.LOWERING),
               ("abstract evaluation", K.ABSTRACT_EVAL), ("evaluation rule", K.IMPL))
_MISSING = ("not implemented", "not found", "must implement")
_METHOD = re.compile(r"`(\w+)`")
_CLASS = re.compile(r"<class '([^']+)'>")
# `jaxmap new-primitive` options that generate the rule a message says is missing.
_FLAGS = {K.TRANSPOSE: "--linear", K.LOWERING: "--platform {platform}"}
_SIBLINGS = 3


class Site(NamedTuple):
    file: str
    line: int
    function: str
    exception: str
    returned: bool = False  # the function returns the exception; its callers raise it


class Sibling(NamedTuple):
    name: str
    file: str  # where its rule of the missing kind is registered
    line: int
    function: str | None


class MissingRule(NamedTuple):
    kind: str
    style: str  # classic or hijax
    name: str  # the primitive (or hijax class) as the message names it
    platforms: tuple[str, ...]
    primitive: Primitive | None  # None: not defined in the indexed tree
    register_with: tuple[tuple[str, str, int], ...]  # (registry or method, file, line)
    siblings: tuple[Sibling, ...]
    flag: str | None


class Explanation(NamedTuple):
    message: str  # the text matched
    sites: tuple[Site, ...]  # where it is raised (several: one wording, several sites)
    missing: MissingRule | None
    # For a message an exception class builds in its __init__, or a helper returns as
    # an exception: where it is raised (resolved calls to the class or the helper,
    # from the call graph).
    raised_by: tuple[Site, ...] = ()


def explain(index, text: str) -> Explanation:
    """The raise sites of the message in `text` (a message or a whole traceback, or
    only its start: a first line copied alone), best match first (of sites with the
    same wording, one the traceback passes through first); NotFound if no message of
    the tree matches."""
    if not text.strip():
        raise ArgumentError("explain needs the message (or traceback) to explain; on the "
                            "command line, - reads it from stdin")
    frames = _FRAME_PLACE.findall(text)
    text = _message_of(text)
    # Read once for both passes; a message with little literal text matches too much.
    messages = [row for row in index.messages() if _literal(row[4]) >= MIN_LITERAL]
    best, match = _best(_candidates(messages, text), lambda pieces: _whole(pieces, text))
    whole = bool(best)
    if not whole:
        best, match = _best(_starting(messages, text), lambda pieces: _start(pieces, text))
    if not best:
        raise NotFound("not an error message raised in this tree")
    found, pieces = match
    best.sort(key=lambda site: _distance(site, frames))
    return Explanation(found.group().strip(), tuple(best),
                       _missing(index, pieces, found.groups()) if whole else None,
                       tuple(sorted(_raised_by(index, best),
                                    key=lambda site: _distance(site, frames))))


def _raised_by(index, sites: list[Site]) -> list[Site]:
    """The calls to the exception classes whose `__init__` builds the message, and to
    the functions that return it as an exception."""
    found = []
    for site in sites:
        cls, _, method = site.function.rpartition(".")
        builder = site.function if site.returned else cls if method == "__init__" else None
        if builder is None:
            continue
        rows = index.callers(index.definition_ids(builder))
        nodes = index.nodes({row[0] for row in rows})
        found += [Site(nodes[caller].file, line, nodes[caller].qualname, site.exception)
                  for caller, _callee, line, _function in rows if caller in nodes]
    return found


_FRAME = re.compile(r'^\s*File ".*", line \d+', re.MULTILINE)
_FILTER_NOTE = re.compile(r"^-{20}\r?$", re.MULTILINE)
_FRAME_PLACE = re.compile(r'^\s*File "(.*)", line (\d+), in (\S+)', re.MULTILINE)
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Warning|Interrupt|Exit)\b.*$",
                        re.MULTILINE)


def _message_of(text: str) -> str:
    """The message of a traceback: from the exception line after its last frame on (a
    message alone as it is), less the note JAX adds under it when it filters the
    traceback ('For simplicity, JAX has removed its internal frames...'), which it
    opens with a line of twenty dashes."""
    frames = list(_FRAME.finditer(text))
    if frames:
        exception = _EXCEPTION.search(text, frames[-1].end())
        text = text[exception.start():] if exception else text[frames[-1].end():]
    return _FILTER_NOTE.split(text, maxsplit=1)[0]


def _distance(site: Site, frames: list[tuple[str, str, str]]) -> int:
    """0 if a traceback frame is at the site, 1 if one is in its function, else 2."""
    best = 2
    for path, line, function in frames:
        if path.replace("\\", "/").endswith("/" + site.file) or path == site.file:
            if int(line) == site.line:
                return 0
            if function == site.function.rpartition(".")[2]:
                best = 1
    return best


def _best(rows, score_of) -> tuple[list[Site], tuple | None]:
    """The sites of the rows whose message matches best (the most literal text), and
    that match with its pieces."""
    best, score, match = [], 0, None
    for file, line, function, exception, pieces, returned in rows:
        scored = score_of(pieces)
        if scored is None or scored[1] < score:
            continue
        if scored[1] > score:
            best, score, match = [], scored[1], (scored[0], pieces)
        best.append(Site(file, line, function, exception, returned))
    return best, match


def _whole(pieces: tuple[str, ...], text: str) -> tuple[re.Match, int] | None:
    found = template_regex(pieces).search(text)
    return (found, _literal(pieces)) if found else None


def _start(pieces: tuple[str, ...], text: str) -> tuple[re.Match, int] | None:
    """A match of `text` as the start of the message, with its literal length (enough
    of it to tell the message apart)."""
    found = start_regex(pieces).search(text)
    if not found:
        return None
    literal = len(found.group().strip()) - sum(len(g) for g in found.groups() if g)
    return (found, literal) if literal >= MIN_LITERAL else None


def _starting(messages: list[tuple], text: str):
    """The messages whose first word is in `text`."""
    return (row for row in messages if _words(row[4])[0] in text)


def _candidates(messages: list[tuple], text: str):
    """The messages whose longest word is in `text`."""
    return (row for row in messages if max(_words(row[4]), key=len) in text)


def _literal(pieces: tuple[str, ...]) -> int:
    """How much literal text a message has (its pieces, less outer spaces)."""
    return sum(len(p.strip()) for p in pieces)


def _words(pieces: tuple[str, ...]) -> list[str]:
    return [word for piece in pieces for word in piece.split()]


def _missing(index, pieces: tuple[str, ...], groups: tuple[str, ...]) -> MissingRule | None:
    """What a rule-missing message is about; None for any other message."""
    wording = " ".join(pieces).lower()
    if not any(word in wording for word in _MISSING):
        return None
    methods = [m for m in _METHOD.findall(" ".join(pieces)) if m in R.HIJAX_METHODS]
    if methods and "subclass" in wording:
        kind, style = R.HIJAX_METHODS[methods[0]], "hijax"
    else:
        kinds = [k for words, k in _RULE_WORDS if words in wording]
        if not kinds:
            return None
        kind, style = kinds[0], "classic"
    name, prim = _primitive(index, groups)
    platforms = _platforms(pieces, groups) if kind == K.LOWERING else ()
    flag = "--style hijax" if style == "hijax" else _FLAGS.get(kind)
    if flag and "{platform}" in flag:
        flag = flag.format(platform=platforms[0]) if platforms else None
    return MissingRule(kind.value, style, name, platforms, prim,
                       _registries(index, kind, style, methods),
                       _siblings(index, prim, kind, platforms, style), flag)


def _primitive(index, groups: tuple[str, ...]) -> tuple[str, Primitive | None]:
    """The primitive a message names: a quoted name, or a hijax class."""
    from jaxmap.commands.lookup import spellings

    names = []
    for group in groups:
        cls = _CLASS.search(group)
        names.append(cls.group(1).rpartition(".")[2] if cls else group.strip(" '\"`"))
    for name in names:
        if name and re.fullmatch(r"[\w\-.]+", name):
            found = index.primitives_named(*spellings(name))
            if found:
                return name, found[0]
    return next((n for n in names if n), ""), None


def _platforms(pieces: tuple[str, ...], groups: tuple[str, ...]) -> tuple[str, ...]:
    """The platforms a lowering message names (the field after `platform`)."""
    for piece, group in zip(pieces, groups):
        if "platform" in piece:
            return tuple(re.findall(r"[a-z_]+", group))
    return ()


def _registries(index, kind: K, style: str, methods: list[str]) -> tuple:
    """Where to register a rule of `kind`: the registrars and registries of that kind
    (or, for hijax, the methods to define), each with its file and line."""
    if style == "hijax":
        names = [f"{base}.{m}" for base in R.HI_PRIMITIVE_BASES + R.HIJAX_CLASS_BASES
                 for m in methods]
    else:
        names = [n for n, entry in R.CALLS.items() if kind in entry.kinds]
        names += [f"core.Primitive.{m}" for m, k in R.METHODS.items() if k == kind]
        names += [n for n, k in R.REGISTRIES.items() if k == kind]
    found = []
    for short in names:
        for qualified in R.expand(short):
            place = index.place(qualified)
            if place:
                found.append((short, *place))
                break
    return tuple(found[:4])


def _siblings(index, prim: Primitive | None, kind: K, platforms: tuple[str, ...],
              style: str) -> tuple[Sibling, ...]:
    """Primitives of the same module (for one outside the tree: jax.lax's, or any hijax
    class for a hijax one) with a rule of `kind` (for one of `platforms`), most similar
    rule kinds first."""
    def near(other: Primitive) -> bool:
        if prim is not None:
            return other.module == prim.module and other.name != prim.name
        return other.style == "hijax" if style == "hijax" else \
            other.module == R.EXAMPLE_MODULES[0]

    have = {r.kind for r in prim.rules} if prim else set()
    ranked = []
    for other in index.primitives():
        if not near(other):
            continue
        rules = [r for r in other.rules if r.kind == kind and (
            not platforms or not (r.platforms or r.platform)
            or set(platforms) & set(r.platforms or (r.platform,)))]
        if rules:
            kinds = {r.kind for r in other.rules}
            similarity = len(kinds & have) / len(kinds | have) if have else 0.0
            ranked.append((-similarity, other.name, rules[0]))
    ranked.sort(key=lambda item: item[:2])
    return tuple(Sibling(name, r.loc.file, r.loc.line, r.function.name if r.function else None)
                 for _, name, r in ranked[:_SIBLINGS])

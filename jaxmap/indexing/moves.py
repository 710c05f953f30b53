"""Telling an edit that only moved code (comments, blank lines, trailing spaces) from
one that changed it, and how lines moved.

A file's facts carry two code fingerprints: a digest of its text with comments,
blank lines and trailing spaces left out, and the same of its outline, the file
without the bodies extract does not read (those that cannot register anything).
When a file's fingerprint is unchanged, its code is, so its old and new facts differ
only in line numbers: `line_moves` reads the map from old lines to new ones off the
two, and the index moves its rows instead of resolving the tree again. When only its
outline's is unchanged, the same holds of the facts the index's first phase reads
(`outline_moves`): its first phase's rows move, and the call graph, which read the
bodies, waits for the next question that reads it (`graph_moves`)."""

from __future__ import annotations

import hashlib
import marshal
import re
from typing import Any

from jaxmap.flow.flowtext import ASSIGN, DEF
from jaxmap.flow.parsing import parameter_names
from jaxmap.indexing.facts import Definition

# A string or a comment, whichever starts first: strings are consumed whole, so a `#`
# inside one is not taken for a comment. (A prefix such as `rb` stays as code.) A
# triple-quoted string (a docstring, mostly) is told apart: its words are left out.
_STRING_OR_COMMENT = re.compile(
    rb'(?P<long>"""(?:[^"\\]|\\.|"(?!""))*"""' rb"|'''(?:[^'\\]|\\.|'(?!''))*''')"
    rb'|(?P<string>"(?:[^"\\\n]|\\.)*"' rb"|'(?:[^'\\\n]|\\.)*')" rb"|(?P<comment>#[^\n]*)",
    re.DOTALL)
_BLANK = re.compile(rb"[ \t]*\n(?:[ \t]*\n)*")  # trailing spaces and the blank lines after


def fingerprints(source: bytes, bodies=()) -> tuple[str, str]:
    """Digests of the code of `source` and of its outline, `source` without the given
    function bodies (skim.Body, each a run of whole lines): equal for two sources that
    differ only in comments, blank lines, trailing spaces and what triple-quoted
    strings say (what a string says is in the facts where anything reads it, and
    `line_moves` compares them whole, but for docstrings' summaries: `summaries`)."""
    code, outline, start = [], [], 0
    for body in sorted(bodies, key=lambda body: body.first):
        outside = _code(source[start:body.first])
        code += [outside, _code(source[body.first:body.end])]
        outline += [outside, b"\x00"]
        start = body.end
    rest = _code(source[start:])
    return _digest(code + [rest]), _digest(outline + [rest])


def _code(text: bytes) -> bytes:
    if b'"' not in text and b"'" not in text and b"#" not in text:
        return text  # (a function body often holds no string or comment)
    return _STRING_OR_COMMENT.sub(_kept, text)


def _kept(match: re.Match) -> bytes:
    """What the fingerprint keeps of a string or comment: a short string whole, a
    triple-quoted one as its quotes alone (what it says, where the facts keep any of
    it, they compare whole), a comment not at all."""
    if match.group("long") is not None:
        return match.group("long")[:3] * 2
    return match.group("string") or b""


def _digest(pieces: list[bytes]) -> str:
    code = _BLANK.sub(b"\n", b"".join(pieces))
    return hashlib.blake2b(code.lstrip(b"\n"), digest_size=16).hexdigest()


_FINGERPRINTS = frozenset({"code", "outline"})
# What only the index's second phase reads of a file's facts, and the fingerprints.
_SECOND_PHASE = frozenset({"flow", "flow_spans", "callees", "callee_spans", "messages",
                           "function_spans"}) | _FINGERPRINTS
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def first_phase(facts: dict) -> dict:
    """What the index's first phase reads of a file's facts."""
    return {key: value for key, value in facts.items() if key not in _SECOND_PHASE}


def graph_moves(old: dict, new: dict) -> dict[int, int] | None:
    """Old line -> new line of every row read from two extractions of one file with its
    value flow's facts, where its code only moved or changed only in assignments nothing
    reads or in docstrings; else None."""
    if old.get("code") == new.get("code"):
        return line_moves(_undocumented(old), _undocumented(new))
    return unread_moves(old, new)


def outline_moves(old: dict, new: dict) -> dict[int, int] | None:
    """Old line -> new line of the rows of the index's first phase, read from two
    extractions of one file (with or without the value flow's facts) whose outline only
    moved, or changed only in docstrings (`summaries` says how the rows change); else
    None."""
    if old.get("outline") != new.get("outline"):
        return None
    return line_moves(_undocumented(first_phase(old)), _undocumented(first_phase(new)))


def summaries(old: dict, new: dict) -> list[tuple[str, str, int, str | None]]:
    """(qualified name, kind, new line, new summary) of each definition whose
    docstring's first line differs between two extractions of one file that
    `outline_moves` found only moved (the module's own at line 1)."""
    module = new["module"]
    found = [(module, "module", 1, new["doc"])] if old["doc"] != new["doc"] else []
    pairs = zip(map(Definition._make, old["defs"]), map(Definition._make, new["defs"]))
    return found + [(f"{module}.{after.qualname}", after.kind, after.line, after.doc)
                    for before, after in pairs if before.doc != after.doc]


def _undocumented(facts: dict) -> dict:
    """The facts with no docstring summary: the module's, and each definition's."""
    return {**facts, "doc": None,
            "defs": [tuple(Definition._make(d)._replace(doc=None)) for d in facts["defs"]]}


def unread_moves(old: dict, new: dict) -> dict[int, int] | None:
    """Old line -> new line of two extractions of one file with its value flow's facts
    that differ, besides moved lines, only in assignments to local names that no other
    string of either's facts holds, in functions, above any nested def (`unused = 1`;
    no parenthesis, lambda or loop in the value): the value flow reads a name's
    assignments only where some text names it, so the tree's call graph is unchanged,
    its rows moved. (In a body the first phase reads, its events name every target:
    there no assignment is left out.) None otherwise, at once where a def was added or
    removed (before the names of a whole file's facts are gathered)."""
    if "flow" not in old or "flow" not in new or len(old["defs"]) != len(new["defs"]):
        return None
    unread = _unread(old), _unread(new)
    named = _names(old, unread[0]) | _names(new, unread[1])
    return line_moves(_undocumented(_without(old, unread[0], named)),
                      _undocumented(_without(new, unread[1], named)))


def _unread(facts: dict) -> dict[int, tuple]:
    """id -> fact of the plain local assignments of the file's functions, above any def
    nested in them: those `unread_moves` may leave out. (Below one, a statement's
    indent may end the nested def for the statements after it, which tells whose
    returns they are: flowfacts.py.)"""
    flow = facts["flow"]
    enclosing = {owner[:at] for owner in flow for at, char in enumerate(owner) if char == "."}
    found: dict[int, tuple] = {}
    for owner, owned in flow.items():
        if owner not in facts["funcs"] or owner in enclosing:
            continue
        nested = sorted(fact[3] for fact in owned if fact[0] == DEF)[1:]
        found.update((id(fact), fact) for fact in owned
                     if fact[0] == ASSIGN and fact[1].isidentifier() and "(" not in fact[2]
                     and "lambda" not in fact[2] and not fact[2].startswith("<iter> ")
                     and (not nested or fact[3] < nested[0]))
    return found


def _names(facts: dict, unread: dict[int, tuple]) -> set[str]:
    """Every identifier in the strings of the facts but the targets of the `unread`
    assignments (a docstring's or a message's words too: only ever more)."""
    found: set[str] = set()

    def visit(value: Any) -> None:
        if isinstance(value, str):
            found.update(_IDENTIFIER.findall(value))
        elif isinstance(value, dict):
            for key, item in value.items():
                visit(key)
                visit(item)
        elif isinstance(value, (tuple, list)):
            if id(value) in unread:
                visit(value[2:])
            else:
                for item in value:
                    visit(item)

    visit(_unprinted(facts))
    return found


def _without(facts: dict, unread: dict[int, tuple], named: set[str]) -> dict:
    """The facts but fingerprints and the `unread` assignments to names not in `named`."""
    dropped = {key for key, fact in unread.items() if fact[1] not in named}
    flow = {owner: tuple(fact for fact in found if id(fact) not in dropped)
            for owner, found in facts["flow"].items()}
    return {**_unprinted(facts), "flow": flow}


def added_functions(old: dict, new: dict) -> tuple[dict[int, int], frozenset[str]] | None:
    """Old line -> new line, and the names added, where two extractions of one file
    differ, besides moved lines, only in module-level functions the new one adds that
    no string of either's facts names but their own, and that, where the facts hold
    the value flow's, call nothing and hand on nothing but their own names (`def
    helper(x): return x`): the value flow reads nothing of such a def, and no text can
    ask what it holds, so the call graph is unchanged, its rows moved (the caller
    checks that no other file names them: indexer._named_elsewhere). None otherwise."""
    added = frozenset(d[1] for d in new["defs"] if d[2] == "function" and "." not in d[1]
                      and not d[1].startswith("__")) \
        - {d[1] for d in old["defs"]}
    if not added or "flow" in new and not all(_inert(new, name) for name in added):
        return None
    rest = without_functions(new, added)
    held = marshal.dumps(old) + marshal.dumps(rest)  # a string marshalled is its bytes
    if any(name.encode() in held for name in added):
        return None
    lines = line_moves(_undocumented(_unprinted(old)), _undocumented(_unprinted(rest)))
    return None if lines is None else (lines, added)


def _unprinted(facts: dict) -> dict:
    """The facts without their code fingerprints."""
    return {key: value for key, value in facts.items() if key not in _FINGERPRINTS}


def _inert(facts: dict, name: str) -> bool:
    """Whether the module-level function `name`'s flow facts are its signature and
    assignments to its own names (none a lambda or a loop), and its callees its own
    names handed on: nothing the value flow evaluates unless asked what it holds."""
    own = facts["flow"].get(name, ())
    local = {param for fact in own if fact[0] == DEF for param, _ in parameter_names(fact[2])}
    local.update(fact[1] for fact in own if fact[0] == ASSIGN and fact[1].isidentifier())
    local -= {"self", "cls", name}
    return all(fact[0] == DEF and fact[1] == name and not fact[5]
               or fact[0] == ASSIGN and (fact[1] == "<return>" or fact[1] in local)
               and "lambda" not in fact[2] and not fact[2].startswith("<iter> ")
               for fact in own) \
        and all(not called and text.partition(".")[0] in local
                for text, _line, called, *_ in facts.get("callees", {}).get(name, ()))


def without_functions(facts: dict, names: frozenset[str]) -> dict:
    """The facts without the module-level functions `names`."""
    kept = {**facts, "defs": [d for d in facts["defs"]
                              if not (d[1] in names and d[2] == "function")]}
    for key in ("funcs", "flow", "callees"):
        if key in facts:
            kept[key] = {owner: value for owner, value in facts[key].items()
                         if owner not in names}
    return kept


def line_moves(old: Any, new: Any) -> dict[int, int] | None:
    """Old line -> new line, read off two extractions of one file whose code is
    unchanged: their facts are equal in all but some integers, and each integer that
    differs always becomes the same other one. Integers that stay map to themselves
    (lines that did not move, and numbers that are not lines). An integer that stays
    in one place and moves in another is left out (a function's end line is its last
    statement's: a line added after that statement moves the end, not the statement),
    so a row on that line is not moved, and the index resolves the file instead. None
    when the facts differ otherwise (then more than lines changed)."""
    moves: dict[int, int] = {}
    kept: set[int] = set()
    if not _walk(old, new, moves, kept):
        return None
    return {**{line: line for line in kept - moves.keys()},
            **{line: moved for line, moved in moves.items() if line not in kept}}


def _walk(old: Any, new: Any, moves: dict[int, int], kept: set[int]) -> bool:
    """Whether `old` and `new` have one shape; integers that differ go to `moves`,
    integers that stay to `kept`."""
    if type(old) is not type(new):
        return False
    if type(old) is int:
        if old == new:
            kept.add(old)
            return True
        return moves.setdefault(old, new) == new
    if isinstance(old, (tuple, list)):
        return len(old) == len(new) and all(
            _walk(a, b, moves, kept) for a, b in zip(old, new))
    if isinstance(old, dict):
        return old.keys() == new.keys() and all(
            _walk(value, new[key], moves, kept) for key, value in old.items())
    return old == new

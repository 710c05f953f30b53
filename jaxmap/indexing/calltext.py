"""The call graph's reading of a file's text: what each owner's text calls or names
(its callees) and its value-flow facts (flowtext.py), from the byte ranges extract.py
records; read at once, or later by `add_graph_facts` (the index's second phase, which
also reads the messages a file raises)."""

from __future__ import annotations

import keyword
import re

from jaxmap.flow import flowtext
from jaxmap.flow.guardtext import EQUALS, SPREAD, VALUE, Guards, arguments
from jaxmap.indexing import messages
from jaxmap.indexing.kept import kept

# Read left to right, each string, comment, import statement and name that a `def` or
# `class` introduces is taken whole (no group: not code); otherwise a dotted name (group
# 1) that is called, that is an argument or default (before `,`, `)` or `]`: group 2),
# or that ends in `_p`; or the `@` of a bare decorator (`@api_boundary` alone on its
# line: its name is group 3): what a function's text calls or may hand on. The
# look-ahead group and back-reference take a name atomically (no backtracking into
# it). Each alternative starts with a literal, or with the one `\b` they share: the
# engine rules out most places with one test.
_CALLEE = re.compile(
    rb'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|#[^\n]*'
    rb"|\b(?:(?:def|class)[ \t]+\w+"
    rb"|(?:from[ \t]+[\w.]+[ \t]+)?import\b(?:[ \t]*\([^)]*\)|(?:\\\n|[^\n;#])*)"
    rb"|(?=([A-Za-z_][\w.]*))\1(?:(?=[ \t]*([(,)\]]))|(?<=_p)(?![\w.(])))"
    rb"|@(?=([A-Za-z_][\w.]*)[ \t]*(?:#|\r?\n))")
_NOT_CALLEES = frozenset(word.encode() for word in keyword.kwlist) | {b"self", b"cls"}
_COMPARED = (b" is", b" not", b"==", b"!=")  # what a `_p` name compared with follows
_UNKNOWN = (SPREAD,)  # what a call passes, where a name is also handed on: unknown


def add_graph_facts(facts: dict, source: bytes) -> None:
    """Give facts extracted without `flow` what the index's second phase reads from the
    same source: each owner's callees and value-flow facts, and the messages raised,
    as `flow=True` gives them."""
    spans = facts.pop("flow_spans", None)
    if spans is not None:
        facts["flow"] = read_flow(source, spans, facts["defs"], facts["imports"])
    functions = facts.pop("function_spans", None)
    if functions is not None:
        facts["messages"] = messages.scoped(source, functions)
    callees: dict[str, tuple] = {}
    for qualname, ranges, line, merge in facts.pop("callee_spans", ()):
        set_callees(callees, qualname, read_callees(source, ranges, line), merge)
    if callees:
        facts["callees"] = callees
    if "error" in facts:  # last, where one extraction with the rest puts it: same bytes
        facts["error"] = facts.pop("error")


def set_callees(callees: dict, qualname: str, found: tuple, merge: bool) -> None:
    """An owner's callees: `found`, or with `merge` added to what it has (if any)."""
    if not merge:
        callees[qualname] = found
    elif found:
        callees[qualname] = _merged(callees.get(qualname, ()), found)


def read_flow(source: bytes, spans, defs, imports) -> dict:
    """Each owner's value-flow facts (flowtext.py), merged per owner, from the
    (owner, byte ranges, first line) of its text."""
    defined = frozenset(d[0].encode() for d in defs if d[0] == d[1])
    imported = frozenset(i[1].partition(".")[0].encode() for i in imports if not i[0])
    flow: dict[str, tuple] = {}
    for qualname, pieces, line in spans:
        found = flowtext.read(source, pieces, line, defined, imported)
        if found:
            flow[qualname] = flow.get(qualname, ()) + found
    return flow


def read_callees(source: bytes, pieces: list[tuple[int, int]], line: int) -> tuple:
    """The stored `facts.Callee`s of the text of `pieces` ((start, end) byte ranges, in
    order; the first starts at `line`): each name called, each `_p` name, and each
    argument or default that is dotted, private or a first argument
    (`lax.dot_general`, `_einsum`, `partial(f`), at its first call (or its first use,
    if never called); a decorator is a call. Strings, comments, import statements, names
    that a `def` or `class` introduces, methods of values (`x.f(`) and a `_p` name an
    identity or equality test compares with, and the classes of a `case` pattern, are
    not read. Each also has its call guard (the names that every use of it requires
    None: guardtext.py), what each of its calls passes, once per different call, and
    the line of the first call that passes it so."""
    found: dict[bytes, list] = {}  # name -> [called, where first found]
    guards = Guards(source, pieces)
    guarded: dict[bytes, frozenset[str]] = {}  # name -> the names all its uses require None
    sites: dict[bytes, dict[tuple, int]] = {}  # name -> what its calls pass -> first where
    # (a `case` clause's line may start before the first piece: looked for from there)
    cases = source.find(b"case", source.rfind(b"\n", 0, pieces[0][0]) + 1, pieces[-1][1]) >= 0
    for start, end in pieces:
        for match in _CALLEE.finditer(source, start, end):
            name, trailing, decorator = match.groups()
            if name is not None:
                at, called = match.start(), trailing == b"("
            elif decorator is not None:
                at = match.start()
                if source[source.rfind(b"\n", 0, at) + 1:at].strip():
                    continue  # `a @b`: a product, not a decorator
                name, at, called = decorator, at + 1, True
            else:
                continue
            if name in _NOT_CALLEES:
                continue
            if not called and not name.endswith(b"_p") and kept(source, at):
                continue  # a rule kept for later: registering it runs none of it
            if called and cases and _in_case_pattern(source, at):
                continue  # `case Blocked(...):` tests a class, it makes none
            before = source[at - 1:at]
            if before == b"." or trailing is None and not called \
                    and source[max(0, at - 8):at].rstrip().endswith(_COMPARED):
                continue  # `primitive is not core.ref_p`: compared with, not used
            guard = guards.at(at)
            guarded[name] = guarded[name] & guard if name in guarded else guard
            # a decorator passes its function; a name handed on, what its taker passes
            site = arguments(source, source.index(b"(", at), guards) \
                if called and decorator is None \
                else (VALUE,) if called else _UNKNOWN
            sites.setdefault(name, {}).setdefault(site, at)
            seen = found.get(name)
            if seen is not None:
                if called and not seen[0]:
                    seen[:] = True, at
            elif called or before == b"(" or name[0] == 95 or b"." in name \
                    or name.endswith(b"_p"):  # 95: `_`
                found[name] = [called, at]
    lines = _lines(source, pieces[0][0], line, [at for _called, at in found.values()]
                   + [at for name in found for at in sites[name].values()])
    callees = []
    for name, (called, at) in sorted(found.items(), key=lambda item: item[1][1]):
        passed = sites[name] if called else {}
        if _UNKNOWN in passed:  # handed on too: what any call passes is unknown
            passed = {_UNKNOWN: at}
        guard = guarded[name]
        callees.append((name.decode(), lines[at], called,
                        tuple(sorted(g for g in guard
                                     if g.partition(EQUALS)[0] not in guards.assigned))
                        if guard else (),
                        tuple(passed), tuple(map(lines.__getitem__, passed.values()))))
    return tuple(callees)


def _lines(source: bytes, start: int, line: int, offsets: list[int]) -> dict[int, int]:
    """offset -> its line, for each of `offsets` in `source` (from `start`, at `line`)."""
    found = {}
    for at in sorted(set(offsets)):
        line += source.count(b"\n", start, at)
        start = at
        found[at] = line
    return found


def _in_case_pattern(source: bytes, at: int) -> bool:
    """Whether the name at `at` is in a `case` clause's pattern (its line starts with
    `case` and the clause's `:` is not yet passed)."""
    start = source.rfind(b"\n", 0, at) + 1
    head = source[start:at].lstrip()
    return head.startswith(b"case ") and b":" not in head


def outside_functions(classes: list[tuple[int, int, str, int]],
                       functions: list[tuple[int, int]], size: int) -> list[tuple]:
    """The text of a file of `size` bytes outside every function, in (start, end) byte
    ranges by owner: (qualname, start byte, its line, ranges) of the top level ('', 0,
    1) and of each class (`classes`: (start, end, qualname, line)) for its body, less
    the classes nested in it; owners with no text are left out."""
    owners: list[tuple[str, int, int, list]] = [("", 0, 1, [])]
    inside = [(size, 0)]  # (end, owner) of the open classes, innermost last
    at = 0
    scopes = sorted([*classes, *((start, end, None, 0) for start, end in functions)])
    for start, end, qualname, line in [*scopes, (size, size, None, 0)]:
        while len(inside) > 1 and inside[-1][0] <= start:  # classes closed before it
            closed, owner = inside.pop()
            owners[owner][3].append((at, closed))
            at = max(at, closed)
        if at < start:
            owners[inside[-1][1]][3].append((at, start))
        if qualname is None:  # a function: skipped
            at = max(at, end)
        else:
            owners.append((qualname, start, line, []))
            inside.append((end, len(owners) - 1))
            at = start
    return [owner for owner in owners if owner[3]]


def _merged(first: tuple, second: tuple) -> tuple:
    """The callees of two texts of one owner, each name once: called if it is called
    in either, at its first call (or first use), in order of line; guarded by what
    both texts require, with the calls of both (each different one at its first
    line in either)."""
    if not first:
        return second
    best: dict[str, tuple] = {}
    for callee in first + second:
        seen = best.get(callee[0])
        if seen is None:
            best[callee[0]] = callee
            continue
        kept = callee if (not callee[2], callee[1]) < (not seen[2], seen[1]) else seen
        passed = dict(zip(seen[4], seen[5]))
        for site, line in zip(callee[4], callee[5]):
            passed[site] = min(line, passed.get(site, line))
        best[callee[0]] = (*kept[:3], tuple(sorted(set(seen[3]) & set(callee[3]))),
                           tuple(passed), tuple(passed.values()))
    return tuple(sorted(best.values(), key=lambda callee: callee[1]))

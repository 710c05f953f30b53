"""What a place in a source file means to the index, for an editor (the LSP server's
questions as plain functions of an open Index): the symbol at a position; the
primitives, definitions and rules it names; where they are; what refers to them; the
code lenses of a file; the names a workspace-symbol query matches.

Lines are 1-based, as in the index; columns are 0-based offsets into a line.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from jaxmap.commands.lookup import definitions, spellings
from jaxmap.models import Definition, DefKind, Primitive, SourceLoc

if TYPE_CHECKING:
    from jaxmap.store.read import Index

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING = re.compile(r"""(['"])([A-Za-z_][\w\-]*)\1""")
_DOTTED_HEAD = re.compile(r"(?<![\w.)\]])((?:[A-Za-z_][A-Za-z0-9_]*\.)+)$")
_BIND = ".bind"
_MOST_DEFINITIONS = 50  # of one name, offered as places to go
# `import a.b as c, d` and `from a.b import (c as d, e)`, each statement from the start
# of a line (a parenthesised list over several lines).
_IMPORT = re.compile(r"^[ \t]*(?:import[ \t]+([^\n#;]+)|from[ \t]+([A-Za-z_][\w.]*)[ \t]+"
                     r"import[ \t]+(\([^)]*\)|[^\n#;]*))", re.MULTILINE)
_AS = re.compile(r"([A-Za-z_][\w.]*)(?:\s+as\s+([A-Za-z_]\w*))?")


class Symbol(NamedTuple):
    """What the cursor is on: a dotted name as written up to the word under the cursor
    (`ad.defjvp`), or a string's contents (`'psum'`), and the columns of that word."""

    text: str
    quoted: bool
    start: int
    end: int


class Served(NamedTuple):
    """A rule a function implements: its kind, the primitive's name, the registration."""

    kind: str
    primitive: str
    loc: SourceLoc


class Meaning(NamedTuple):
    """What a symbol names: primitives, definitions, the rules each definition serves,
    and the primitives the definitions bind (offered as further places)."""

    symbol: str
    primitives: tuple[Primitive, ...] = ()
    definitions: tuple[Definition, ...] = ()
    served: tuple[tuple[Served, ...], ...] = ()
    bound: tuple[Primitive, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.primitives and not self.definitions and not self.bound


class Reference(NamedTuple):
    """A place that refers to a primitive or a function: a bind, a call, a registration."""

    loc: SourceLoc
    how: str  # binds, calls, registers
    by: str  # the function (or module) it is in


class Lens(NamedTuple):
    """A code lens: above a primitive's definition, or above a rule function."""

    line: int
    primitive: Primitive | None
    function: str = ""  # a rule function's name
    served: tuple[Served, ...] = ()


class Counts(NamedTuple):
    """A primitive's figures for its lens."""

    rules: int
    binders: int
    tests: int


class SymbolRow(NamedTuple):
    """A workspace symbol: a primitive, a public path, or a private function or class."""

    name: str
    kind: str  # primitive, function, class, variable, module
    container: str
    loc: SourceLoc


def symbol_at(line: str, column: int) -> Symbol | None:
    """The symbol at `column` of `line` (a cursor just past a word is on it)."""
    for match in _STRING.finditer(line):
        if match.start() <= column < match.end():
            return Symbol(match.group(2), True, match.start(2), match.end(2))
    for match in _WORD.finditer(line):
        if match.start() <= column <= match.end():
            head = _DOTTED_HEAD.search(line, 0, match.start())
            text = (head.group(1) if head else "") + match.group()
            return Symbol(text, False, match.start(), match.end())
    return None


def imported(text: str) -> dict[str, str]:
    """The names a file's imports bind -> the dotted path each stands for (`import
    jax.numpy as jnp`: jnp -> jax.numpy; `import jax.numpy`: jax -> jax; `from jax
    import lax`: lax -> jax.lax), the later import of a name winning. Read off the
    text, so a file that does not parse while it is edited still has them."""
    found: dict[str, str] = {}
    for match in _IMPORT.finditer(text):
        plain, module, names = match.groups()
        for part in (plain or names.strip("()\\ \t\n")).split(","):
            named = _AS.fullmatch(" ".join(part.replace("\\", " ").split()))
            if named is None or (module and "." in named.group(1)):
                continue
            path, alias = named.groups()
            if module:
                found[alias or path] = f"{module}.{path}"
            else:
                found[alias or path.partition(".")[0]] = path if alias else \
                    path.partition(".")[0]
    return found


def through_imports(symbol: Symbol, names: dict[str, str]) -> Symbol | None:
    """`symbol` with its first name read as what the file imported under it
    (`jnp.cumsum` -> `jax.numpy.cumsum`); None for a string or a name no import of
    the file binds (a local, a builtin)."""
    head, dot, rest = symbol.text.partition(".")
    path = None if symbol.quoted else names.get(head)
    return None if path is None else symbol._replace(text=path + dot + rest)


def meaning(index: Index, file: str | None, line: int, symbol: Symbol) -> Meaning:
    """What `symbol`, at `line` of `file` (root-relative; None: a file outside the
    root, whose symbol through_imports has read), names in the index."""
    text = symbol.text
    if not symbol.quoted and text.endswith(_BIND) and len(text) > len(_BIND):
        text = text[:-len(_BIND)]
    prims = _primitives(index, text, symbol.quoted)
    if symbol.quoted or (prims and text != symbol.text):
        return Meaning(text, tuple(prims))
    held = {(p.loc.file, p.loc.line) for p in prims}  # a primitive's own variable
    defs = [d for d in _definitions(index, file, line, text)
            if d.kind != DefKind.VARIABLE or (d.loc.file, d.loc.line) not in held]
    served = tuple(_served(index, d) for d in defs)
    known = {(p.name, p.variable) for p in prims}
    bound = tuple(p for p in _bound(index, defs) if (p.name, p.variable) not in known)
    return Meaning(text, tuple(prims), tuple(defs), served, bound)


def _primitives(index: Index, text: str, quoted: bool) -> list[Primitive]:
    """Primitives named by a string (their name) or a name (their variable, an alias)."""
    leaf, stem = spellings(text)
    found = index.primitives_named(leaf, stem)
    if quoted:
        return [p for p in found if p.name == text]
    return [p for p in found if leaf == p.variable or leaf in p.aliases]


def _definitions(index: Index, file: str | None, line: int, text: str) -> list[Definition]:
    """What a name means here: the callee of a call written so at this line, as the
    call graph resolved it; else a definition of that name in this file; else every
    definition the name may mean anywhere (conventional aliases read). Outside the
    root, only the last."""
    if file is None:
        return definitions(index, text)[:_MOST_DEFINITIONS]
    called = [callee for written, callee in index.calls_at(file, line) if written == text]
    if called:
        return index.definitions_with_ids(called)
    if "." not in text:
        local = [d for d in index.definitions_named(text) if d.loc.file == file]
        if local:
            return local
    return definitions(index, text)[:_MOST_DEFINITIONS]


def _served(index: Index, d: Definition) -> tuple[Served, ...]:
    if d.kind != DefKind.FUNCTION:
        return ()
    return tuple(Served(kind, prim, SourceLoc(file, line)) for _l, _n, kind, prim, file, line
                 in index.rules_with_function_in(d.loc.file, d.loc.line))


def _bound(index: Index, defs: list[Definition]) -> list[Primitive]:
    """The primitives the functions among `defs` bind themselves, and the primitive of
    its own name a public one reaches through calls (`jax.lax.psum` -> `_psum` ->
    psum_p.bind)."""
    ids = [index.definition_id(d) for d in defs if d.kind == DefKind.FUNCTION]
    pids = {pid for _d, pid, _line, _via in index.bound_by(ids)} if ids else set()
    found = []
    for _pid, name, variable in index.primitive_labels(sorted(pids)):
        found += [p for p in index.primitives_named(variable or name, name)
                  if (p.name, p.variable) == (name, variable) and p not in found]
    for d in defs:
        if d.kind == DefKind.FUNCTION and d.public_paths and \
                not any(p.name == d.name for p in found):
            found += [p for p in _namesakes_reached(index, d) if p not in found]
    return found


def _namesakes_reached(index: Index, d: Definition) -> list[Primitive]:
    """The primitives named as function `d` is that it reaches through calls."""
    from jaxmap.commands import callgraph

    named = [p for p in index.primitives_named(d.name, d.name) if p.name == d.name]
    if not named:
        return []
    reached = {r.label for r in callgraph.reaches(index, index.definition_id(d))
               if r.kind == "primitive"}
    return [p for p in named if (p.variable or p.name) in reached]


def locations(found: Meaning) -> list[SourceLoc]:
    """Where a name is defined: its definitions, then each primitive it names with its
    rules' registrations; a public function's name adds the primitives it binds (the
    way from `lax.psum` to `psum_p`). A private function, a rule among them, is its
    definition alone: what it binds or serves is for hover and references."""
    places = [d.loc for d in found.definitions]
    public = any(d.public_paths for d in found.definitions)
    for prim in found.primitives + (found.bound if public else ()):
        places += [prim.loc] + [r.loc for r in prim.rules]
    return _once(places)


def rule_locations(found: Meaning) -> list[SourceLoc]:
    """A rule function's lens: the registrations of the rules it serves, then
    `locations`."""
    return _once([s.loc for served in found.served for s in served] + locations(found))


def _once(places) -> list[SourceLoc]:
    return list(dict.fromkeys(SourceLoc(p.file, p.line) for p in places))


def references(index: Index, found: Meaning) -> list[Reference]:
    """The binds and rule registrations of the primitives, the registrations of the
    rules the definitions serve (a rule function's), and the calls of the definitions,
    each at its line."""
    refs = []
    pids = _primitive_ids(index, found.primitives)
    rows = index.binders(pids) if pids else []
    nodes = index.nodes({did for did, _pid, _line, _via in rows})
    refs += [Reference(SourceLoc(nodes[did].file, line), "binds", nodes[did].label)
             for did, _pid, line, _via in rows if did in nodes]
    for prim in found.primitives:
        refs += [Reference(SourceLoc(r.loc.file, r.loc.line), "registers", f"{r.kind} rule")
                 for r in prim.rules]
    refs += [Reference(s.loc, "registers", f"{s.kind} rule of {s.primitive}")
             for served in found.served for s in served]
    ids = [index.definition_id(d) for d in found.definitions]
    calls = index.callers(ids) if ids else []
    callers = index.nodes({caller for caller, _callee, _line, _fn in calls})
    refs += [Reference(SourceLoc(callers[c].file, line), "calls", callers[c].label)
             for c, _callee, line, _fn in calls if c in callers]
    return list(dict.fromkeys(refs))


def _primitive_ids(index: Index, prims) -> list[int]:
    wanted = {(p.name, p.variable) for p in prims}
    ids = []
    for prim in prims:
        ids += [pid for pid, name, variable in index.primitive_ids(*spellings(prim.variable or
                                                                            prim.name))
                if ((name or ""), (variable or "")) in wanted and pid not in ids]
    return ids


def lenses(index: Index, file: str) -> list[Lens]:
    """A lens above each primitive defined in `file` and each rule function in it."""
    found = [Lens(p.loc.line, p) for p in index.primitives_in_file(file)]
    by_function: dict[tuple[int, str], list[Served]] = {}
    for line, name, kind, prim, rule_file, rule_line in index.rules_with_function_in(file):
        by_function.setdefault((line, name), []).append(
            Served(kind, prim, SourceLoc(rule_file, rule_line)))
    found += [Lens(line, None, name, tuple(served))
              for (line, name), served in by_function.items()]
    return sorted(found, key=lambda lens: lens.line)


def primitive(index: Index, name: str, variable: str) -> Primitive | None:
    """The primitive of this name string and variable, with its rules and tests."""
    found = [p for p in index.primitives_named(*spellings(variable or name))
             if (p.name, p.variable) == (name, variable)]
    return found[0] if found else None


def counts(index: Index, prim: Primitive) -> Counts:
    """Its rules, the public functions that bind it when traced (`binds`), the tests
    that exercise it (`prim` as `primitive` returns it, tests included)."""
    from jaxmap.commands import callgraph

    binders = callgraph.binds(index, prim.variable or prim.name).found
    return Counts(len(prim.rules), len(binders), len(prim.tests))


def summaries(index: Index, prims) -> dict[str, str]:
    """Primitive name -> the docstring summary of the public function of that name,
    `jax.lax.NAME` first (`psum` -> jax.lax.psum's), for those that have one."""
    found: dict[str, str] = {}
    for prim in prims:
        documented = [(d.summary, d.public_paths) for d in index.definitions_named(prim.name)
                      if prim.name and d.kind == DefKind.FUNCTION and d.public_paths and d.summary]
        lax = [(summary, paths) for summary, paths in documented
               if f"jax.lax.{prim.name}" in paths]
        if lax or documented:
            found[prim.name] = (lax or documented)[0][0]
    return found


def symbols(index: Index, query: str, limit: int = 100) -> list[SymbolRow]:
    """Primitives (by name or variable), public paths (by their last part), then the
    functions and classes without one (by name), that contain `query`."""
    rows = [SymbolRow(name or variable, "primitive", module, SourceLoc(file, line))
            for name, variable, module, file, line in index.primitives_matching(query, limit)]
    rows += [SymbolRow(path, kind, path.rpartition(".")[0], SourceLoc(file, line))
             for path, kind, file, line in index.public_paths_matching(query, limit)]
    rows += [SymbolRow(name, kind, qualname.rpartition(".")[0], SourceLoc(file, line))
             for name, qualname, kind, file, line
             in index.private_definitions_matching(query, max(limit - len(rows), 0))]
    return rows[:limit]

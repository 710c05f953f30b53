"""The order of the sites that raise one wording: the one a pasted traceback passes
through first, then the one the public JAX function the user called reaches
(explain_entry.py), then the one the innermost JAX frame shown calls (directly, or through
one function it calls), then the one whose own text (or the text its callers pass it) the
message quotes, then the one whose nearby names it quotes (`in_specs` of
`_spec_rank_error(..., in_specs, fail)`). `concrete_or_error(None, x, "It arose in the
jnp.arange argument ...")` or `fname_context = f"The problem arose with the `{fname}`
function."` tell which of the 19 places that raise a ConcretizationTypeError fired,
where the filtered traceback shows no JAX frame at all. A raise that writes words of
its own the message lacks comes after those that pass on what they were handed. Last,
the one of the machinery of a transformation the user's own frames call
(knowledge/transformations.py): under `jax.grad(f)(x)` the linearize rule's raise of a
wording the JVP trace raises too.

The text is read from the indexed tree's source at the site's function and at the
calls to it, when the tree is on disk (not for a snapshot)."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from jaxmap.commands.exception_classes import agreement
from jaxmap.knowledge import transformations

if TYPE_CHECKING:
    from jaxmap.commands.tracebacks import Raised
    from jaxmap.store.read import Index

# A string literal, any prefix; f-string fields split it into pieces.
_STRING = re.compile(r"""[rRbBuUfF]{0,2}("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")
_FIELD = re.compile(r"\{[^{}]*\}")
_QUOTED = 8  # a piece of text shorter than this is no evidence
_CALL_LINES = 6  # at most this many lines of a call's arguments are read
_CALLERS = 200  # calls read per site, at most
_BEFORE = 3  # lines before a raise read for the names that build its message
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


class Ranker:
    """Orders sites for one exception of a traceback; reads each file once."""

    def __init__(self, index: Index, raised: Raised, template: tuple[str, ...],
                 path: set[int] | None = None):
        self.index, self.raised = index, raised
        self.path = path or set()  # what the public function the user called reaches
        self.own = " ".join(template)
        self.message = raised.message
        self.machinery = transformations.called_in(
            frame.code for frame in raised.frames if frame.jax_file is None)
        self._files: dict[str, list[str] | None] = {}
        self._callees: set[int] | None = None
        self._ids: dict[str, list[int]] = {}

    def order(self, sites) -> list:
        """`sites` best first: the class agreeing, at or near a traceback frame, quoted
        by the message, of the transformation the user called; else in source order."""
        keyed = [(self._key(site), i, site) for i, site in enumerate(sites)]
        return [site for _key, _i, site in sorted(keyed, key=lambda item: item[:2])]

    def _key(self, site) -> tuple:
        return (-agreement(self.raised.exception, site.exception, site.function),
                distance(site, self.raised), -self.on_path(site), -self._reached(site),
                -self._found(self._call_text(site.file, site.line)), -self.quoted(site),
                -self._names_quoted(site), self._unquoted(site), -self._ran(site))

    def _definition_ids(self, qualname: str) -> list[int]:
        """The index's ids of `qualname`, asked once per name (each key reads them)."""
        if qualname not in self._ids:
            self._ids[qualname] = self.index.definition_ids(qualname)
        return self._ids[qualname]

    def on_path(self, site) -> bool:
        """Whether the public function the user called (explain_entry.py) reaches the
        site's function: `jnp.arange`'s path goes through `concrete_or_error`, not
        through `Tracer.tolist`."""
        return bool(self.path) and not self.path.isdisjoint(
            self._definition_ids(site.function))

    def _reached(self, site) -> int:
        """2 if the innermost JAX frame shown calls the site's function, 1 if it calls a
        function that does (`jnp.nonzero`'s `concrete_dim_or_error(...)` line reaches
        `concrete_or_error`'s raise, not `concretization_function_error`'s), else 0."""
        callees = self._frame_callees()
        if not callees:
            return 0
        ids = set(self._definition_ids(site.function))
        if ids & callees:
            return 2
        return int(any(row[0] in callees for row in self.index.callers(ids)[:_CALLERS]))

    def _frame_callees(self) -> set[int]:
        if self._callees is None:
            frames = self.raised.jax_frames
            file = frames[-1].jax_file if frames else None
            self._callees = {callee for _text, callee in
                             self.index.calls_at(file, frames[-1].line)} if file else set()
        return self._callees

    def _unquoted(self, site) -> bool:
        """Whether the raise writes words of its own into the message that the message
        lacks. A class built at many places is raised either directly, with the raise's
        own words (`ConcretizationTypeError(self, f"The tolist() method was called on
        ...")`), or by a helper that passes on what it was handed (`concrete_or_error`'s
        `context`, `concretization_function_error`'s `fname_context`). A direct raise
        fired only if the message has its words: with them it comes first (the call's
        text is quoted), without them after the helpers, which could have written any
        of the rest, whether the user pasted it all or its first line only."""
        own = self._pieces(self._call_text(site.file, site.line))
        return bool(own) and not any(p in self.message for p in own)

    def _ran(self, site) -> bool:
        """Whether the site's function is of the machinery of a transformation the
        user's frames call (`jax.grad(f)(x)`: the linearize trace's)."""
        name = site.function.lower()
        return any(word in name for word in self.machinery)

    def _names_quoted(self, site) -> int:
        """How many names of the lines that build and raise the message (the raise
        and the few before it) the message has as words: `in_specs` of
        `_spec_rank_error(..., in_specs, fail)` where the message says 'in_specs is'."""
        lines = (self._lines(site.file) or [])[max(0, site.line - 1 - _BEFORE):site.line]
        names = {n for line in lines for n in _IDENTIFIER.findall(line) if "_" in n.strip("_")}
        return sum(1 for n in names if re.search(rf"(?<![\w.]){re.escape(n)}\b", self.message))

    def quoted(self, site) -> int:
        """How much of the message is text of the site's function, or of a call to it,
        that is not the message's template (characters)."""
        found = self._found(self._function_text(site.function))
        ids = self._definition_ids(site.function)
        if ids:
            rows = self.index.callers(ids)[:_CALLERS]
            nodes = self.index.nodes({row[0] for row in rows})
            for caller, _callee, line, _function in rows:
                if caller in nodes:
                    found = max(found, self._found(self._call_text(nodes[caller].file, line)))
        return found

    def _found(self, text: str) -> int:
        return sum(len(p) for p in self._pieces(text) if p in self.message)

    def _pieces(self, text: str) -> set[str]:
        """The fixed text of the string literals of `text` long enough to be evidence,
        less what the message's template has."""
        pieces = {p.strip() for literal in _STRING.findall(text)
                  for p in _FIELD.split(literal[1:-1])}
        return {p for p in pieces if len(p) >= _QUOTED and p not in self.own}

    def _function_text(self, qualname: str) -> str:
        span = self.index.span(qualname)
        if span is None:
            return ""
        lines = self._lines(span[0]) or []
        return " ".join(lines[span[1] - 1:span[2]])  # literals are read line by line

    def _call_text(self, file: str, line: int) -> str:
        """The call at `line`, to its closing parenthesis (a few lines at most)."""
        lines = self._lines(file) or []
        text, depth = "", 0
        for row in lines[line - 1:line - 1 + _CALL_LINES]:
            text += row + " "
            depth += row.count("(") - row.count(")")
            if depth <= 0:
                break
        return text

    def _lines(self, file: str) -> list[str] | None:
        if file not in self._files:
            try:
                with open(os.path.join(str(self.index.root), file), encoding="utf-8",
                          errors="replace") as handle:
                    self._files[file] = handle.read().split("\n")
            except OSError:
                self._files[file] = None
        return self._files[file]


def distance(site, raised: Raised) -> int:
    """0 if a traceback frame is at the site, 1 if one is in its function, 2 if one is
    in its file, 3 if none is (or the traceback shows no JAX frame)."""
    best = 3
    for frame in raised.jax_frames:
        if frame.jax_file != site.file:
            continue
        if frame.line == site.line:
            return 0
        best = min(best, 1 if frame.function == site.function.rpartition(".")[2] else 2)
    return best

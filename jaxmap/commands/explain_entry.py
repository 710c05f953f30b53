"""The public JAX function the user called on the way to an error (`jnp.arange(n)` with
a traced `n`), and the definitions it reaches: the raise sites on the traceback's path.

The function is the JAX frame right under the user's innermost frame, when its
definition has a public path; it is named as the user's line spells it (`jnp.arange`,
else its shortest public path). Where JAX removed its frames (the user's frame is the
last one shown), it is the one call of the user's line that names a public JAX
function, if the line has exactly one and it reaches a place that raises the
message (explain.py checks: `jax.typeof(v)` on the line of a failing bind is not
the call); a function that takes the user's function
(`jax.jit(lambda n: ...)`, knowledge/transformations.py) is not that call: the error
is the user's function's."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from jaxmap.commands import explain_user, lookup
from jaxmap.errors import JaxmapError
from jaxmap.knowledge.transformations import TAKE_FUNCTIONS
from jaxmap.store.rows import shown_path

if TYPE_CHECKING:
    from jaxmap.commands.tracebacks import Frame
    from jaxmap.models import Definition
    from jaxmap.store.read import Index

_CALL = re.compile(r"([A-Za-z_][\w.]*)\s*\(")
_DEPTH = 4  # calls followed down from the function, for the raise sites it reaches
_REACHED = 5000  # definitions visited at most


class EntryCall(NamedTuple):
    spelled: str  # as the user's line writes it: `jnp.arange`
    public: str  # its shortest public path: `jax.numpy.arange`
    file: str  # where it is defined
    line: int
    called_at: Frame  # the user's frame whose line calls it
    shown: bool  # its frame is in the traceback (else read off the user's line)


def entry_call(index: Index, frames: tuple[Frame, ...]) -> EntryCall | None:
    """The public JAX function the user's innermost frame called, if it is known."""
    inner = next((i for i in range(len(frames) - 1, -1, -1)
                  if explain_user.is_user(frames[i])), None)
    if inner is None:
        return None
    user = frames[inner]
    if inner + 1 < len(frames):
        callee = frames[inner + 1]
        found = _defined_at(index, callee) if callee.jax_file else None
        return _entry(found, user, callee.function, shown=True) if found else None
    return _from_line(index, user)


def reached(index: Index, entry: EntryCall | None) -> set[int]:
    """Ids of the definitions `entry` is or reaches within _DEPTH calls."""
    if entry is None:
        return set()
    ids = set(index.definition_ids(entry.public))
    frontier = set(ids)
    for _step in range(_DEPTH):
        if not frontier or len(ids) > _REACHED:
            break
        frontier = {callee for _caller, callee, _text, _status, _line in
                    index.callees(frontier) if callee is not None} - ids
        ids |= frontier
    return ids


def _defined_at(index: Index, frame: Frame) -> Definition | None:
    """The public definition a JAX frame runs: its function's, at the frame's line."""
    found = [d for d in index.definitions_named(frame.function)
             if d.loc.file == frame.jax_file and d.loc.line <= frame.line
             <= (d.loc.end_line or d.loc.line)]
    found = [d for d in found if d.public_paths]
    return max(found, key=lambda d: d.loc.line) if found else None


def _entry(found: Definition, user: Frame, name: str, shown: bool) -> EntryCall:
    public = shown_path(found.qualname, found.public_paths)
    spelled = next((m.group(1) for m in _CALL.finditer(user.code)
                    if m.group(1).rpartition(".")[2] == name), public)
    return EntryCall(spelled, public, found.loc.file, found.loc.line, user, shown)


def _from_line(index: Index, user: Frame) -> EntryCall | None:
    """The one call of the user's line that names a public JAX function."""
    calls = {}
    for match in _CALL.finditer(user.code):
        spelled = match.group(1)
        if "." not in spelled or spelled in calls or \
                spelled.rpartition(".")[2] in TAKE_FUNCTIONS:
            continue
        try:
            defs = [d for d in lookup.definitions(index, spelled) if d.public_paths]
        except JaxmapError:
            continue
        if defs:
            calls[spelled] = defs[0]
    if len(calls) != 1:
        return None
    [(spelled, found)] = calls.items()
    entry = _entry(found, user, spelled.rpartition(".")[2], shown=False)
    return entry._replace(spelled=spelled)

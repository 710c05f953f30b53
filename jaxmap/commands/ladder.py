"""`jaxmap ladder`: the escalation ladder, each rung with where its machinery lives
in an open index: `gather(index) -> Ladder`."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from jaxmap.knowledge import rungs

if TYPE_CHECKING:
    from jaxmap.store.read import Index


class Place(NamedTuple):
    """Where a public name is defined in the indexed tree; file None: not found."""

    name: str
    file: str | None
    line: int | None


class Step(NamedTuple):
    """A rung, the `jaxmap new` commands that start it, and its machinery."""

    rung: rungs.Rung
    commands: tuple[str, ...]
    places: tuple[Place, ...]


class Ladder(NamedTuple):
    root: str
    jax_version: str | None
    steps: tuple[Step, ...]
    checklist: tuple[str, ...]


def gather(index: Index) -> Ladder:
    """The ladder with each rung's machinery looked up with `index.locate`."""
    steps = tuple(Step(rung, tuple(_command(kind) for kind in rung.kinds),
                       tuple(_place(index, name) for name in rung.machinery))
                  for rung in rungs.RUNGS)
    return Ladder(index.root, index.jax_version, steps, rungs.CHECKLIST)


def _command(kind: str) -> str:
    extra = "".join(f" [--style {style}]" for style in rungs.KINDS[kind].styles
                    if style != "classic")
    return f"jaxmap new {kind} NAME --out DIR{extra}"


def _place(index: Index, name: str) -> Place:
    """The definition that `name` is a public path of; else the first definition
    or primitive found."""
    from jaxmap.commands.lookup import definitions, spellings

    found = definitions(index, name)
    public = [d for d in found if name in d.public_paths]
    best = public or found or index.primitives_named(*spellings(name))
    return Place(name, best[0].loc.file, best[0].loc.line) if best else \
        Place(name, None, None)

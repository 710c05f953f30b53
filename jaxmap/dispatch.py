"""What every front end does with a row of the command table (commands/registry.py):
load the functions it names, run it, render the result."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from jaxmap.errors import NotFound
from jaxmap.models import UNPARSED
from jaxmap.render.paging import EVERYTHING, Paging, taken
from jaxmap.render.view import View

if TYPE_CHECKING:
    from jaxmap.commands.registry import Command
    from jaxmap.store.read import Index


def load(reference: str):
    """The function a "module:function" reference names."""
    module, _, function = reference.partition(":")
    return getattr(import_module(module), function)


def answer(command: Command, index: Index, arguments: dict, fmt: str = "json",
           view: View | None = None, said: list[str] | None = None) -> str:
    """A query row run on an open index and rendered in `fmt` (paths as `view` shows
    them; default: root-relative; a paged row's JSON cut to the page its arguments ask);
    NotFound, with the rendered text as its output, if the row's refusal says the result
    answers nothing. The row's line for stderr, if any, is added to `said`."""
    arguments = dict(arguments)
    paging = _paging(command, arguments)
    try:
        result = load(command.run)(index, **arguments)
    except NotFound as error:
        raise _noting_unparsed(error, index) from None
    view = (view or View(index.root, index.jax_version))._replace(paging=paging)
    if command.graph:
        view = view._replace(unparsed=tuple(index.unparsed()))
    if said is not None and command.said and (line := load(command.said)(result, view)):
        said.append(line)
    text = load(command.render[fmt])(result, view)
    reason = load(command.refusal)(result) if command.refusal else None
    if reason:
        raise _noting_unparsed(NotFound(reason, output=text), index)
    return text


def _noting_unparsed(error: NotFound, index: Index) -> NotFound:
    """`error`, naming the files of the tree that Python's parser refuses, if any: what
    was not found may be behind a refusal (a file left mid-edit), not absent."""
    unparsed = index.unparsed()
    if unparsed:
        places = ", ".join(line.partition(f": {UNPARSED}")[0] for line in unparsed)
        error.args = (f"{error.args[0]} (the index may lack what follows a line Python "
                      f"cannot parse: {places})", *error.args[1:])
    return error


def _paging(command: Command, arguments: dict) -> Paging:
    """The page a paged row's arguments ask for, taken out of them."""
    return taken(arguments) if command.page else EVERYTHING


def changes(command: Command, arguments: dict) -> list:
    """The file changes a scaffold row's run returns (nothing is written)."""
    return load(command.run)(**arguments)


def notes(command: Command, arguments: dict) -> list[str]:
    """A scaffold row's one-line notes on what it generates (none if it names no
    notes function)."""
    return load(command.notes)(**arguments) if command.notes else []


def scaffold_document(command: Command, arguments: dict, changed: list, dry_run: bool) -> str:
    """A scaffold row's JSON document: each file with its action and diff, and the
    row's notes."""
    from jaxmap.scaffold import file_diffs

    return load(command.render["json"])(arguments["name"], changed, file_diffs(changed),
                                        dry_run, notes(command, arguments))


def scaffold_summary(command: Command, arguments: dict, changed: list, dry_run: bool) -> str:
    """A scaffold row's one line: what it wrote, or would write, for its kind (`new`'s
    KIND argument; `new-primitive` makes a primitive)."""
    return load(command.render["text"])(arguments.get("kind", "primitive"),
                                        arguments["name"], changed, dry_run)

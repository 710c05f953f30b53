"""`jaxmap skill`: an agent skill folder written for the indexed jax.

  files(index, out, budget=None) -> {relative path: text}   (writes nothing)

SKILL.md (front matter; the ladder with where each rung lives, the checklist, and
how to answer questions about internals with jaxmap), references/REPO-MAP.md (and,
without a budget, REPO-MAP-PRIMITIVES.md) from the repo-map generator,
scripts/jax_repo_locator.py (the standalone locator), and assets/KIND/ with the
`jaxmap new` starter of each rung and its test. Same index, same files.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

from jaxmap.errors import TargetError
from jaxmap.knowledge import rungs

if TYPE_CHECKING:
    from jaxmap.store.read import Index

SKILL_NAME = "jax-internals"
# The starter written for each `jaxmap new` kind: the name its files get.
STARTERS = tuple((kind, name) for kind, name, _ in rungs.examples())
MARKER = "SKILL.md"
# What SKILL.md says of itself (skill.md.j2): a folder whose SKILL.md says it is one
# `jaxmap skill` wrote, which --force may replace (a user's own skill folder is not).
SIGNATURE = "This folder was written by `jaxmap skill`"
# (question, command) rows of SKILL.md's command table; every command takes --json.
COMMANDS = (
    ("where is NAME defined; every rule of a primitive", "jaxmap locate psum"),
    ("one kind of rule, or one platform's lowerings",
     "jaxmap locate psum --kind transpose; jaxmap locate sin --platform tpu"),
    ("which primitives lack a rule", "jaxmap primitives --missing batching --has impl"),
    ("which functions reach a primitive's bind (public first)", "jaxmap binds psum"),
    ("who calls a function; what it calls", "jaxmap callers NAME; jaxmap calls NAME"),
    ("where an error is raised (`-`: a traceback on stdin); how to add a missing rule",
     "jaxmap explain \"MESSAGE\""),
    ("which rules every primitive has", "jaxmap coverage --missing batching"),
    ("what a module or primitive connects to", "jaxmap graph psum"),
    ("the ladder, with where each rung lives", "jaxmap ladder"),
    ("start a rung from a tested starter", "jaxmap new custom-vjp NAME --out DIR"),
    ("a new primitive with every rule", "jaxmap new-primitive NAME --out DIR"),
    ("what changed between two releases or trees", "jaxmap diff OLD NEW"),
    ("a map sized for a context budget", "jaxmap repo-map --budget 4000 -o -"),
    ("the same answers over MCP, index kept open", "jaxmap mcp"),
)
LOCATOR = "jax_repo_locator.py"
# A source checkout: jaxmap/scaffold/skill.py -> the directory that holds jaxmap/.
_CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Starter(NamedTuple):
    """A rung's starter in assets/: its directory and files, or why the release has none."""

    kind: str
    directory: str
    files: tuple[str, ...]
    refused: str | None


def written_before(directory: str) -> bool:
    """Whether `directory` is a skill folder `jaxmap skill` wrote: its SKILL.md says so."""
    try:
        with open(os.path.join(directory, MARKER), encoding="utf-8", errors="replace") as f:
            return SIGNATURE in f.read()
    except OSError:
        return False


def files(index: Index, out: str, budget: int | None = None,
          tools: tuple[str, ...] = ()) -> dict[str, str | bytes]:
    """The skill folder for `index`'s tree, as {POSIX path under the folder: text, or
    bytes for the snapshot the standalone locator reads};
    `out` is where it will be written (starters are generated as if there); `tools`
    are the MCP tools SKILL.md lists."""
    from jaxmap.commands import ladder, repomap
    from jaxmap.render import map_pages, markdown
    from jaxmap.scaffold.templating import fill

    data = repomap.gather(index)
    folder: dict[str, str | bytes] = {"references/REPO-MAP.md": markdown.repo_map(data, budget)}
    if budget is None:
        folder["references/" + markdown.PRIMITIVES_FILE] = markdown.primitives_page(data)
        folder.update({f"references/REPO-MAP-{name}.md": text
                       for name, text in map_pages.pages(data).items()})
    folder[f"scripts/{LOCATOR}"] = locator_source()
    if index.jax_version:  # the locator answers from it where jaxmap is not installed
        from jaxmap.store import snapshot

        folder[f"indexes/jax-{index.jax_version}.json.gz"] = snapshot.export(index)
    starters = []
    for kind, name in STARTERS:
        starter, texts = _starter(kind, name, out)
        starters.append(starter)
        folder.update(texts)
    from jaxmap.knowledge import versions

    folder[MARKER] = fill("skill.md.j2", {
        "name": SKILL_NAME, "jax_version": index.jax_version,
        "release": versions.installed().text, "ladder": ladder.gather(index),
        "starters": {s.kind: s for s in starters}, "commands": COMMANDS,
        "locator": LOCATOR, "tools": list(tools), "budget": budget,
        "primitives_file": markdown.PRIMITIVES_FILE})
    return dict(sorted(folder.items()))


def _starter(kind: str, name: str, out: str) -> tuple[Starter, dict[str, str]]:
    from jaxmap.knowledge.versions import UnsupportedRelease
    from jaxmap.scaffold import kinds

    directory = f"assets/{kind.replace('-', '_')}"
    try:
        changes = kinds.generate(kind, name, out=os.path.join(out, directory))
    except UnsupportedRelease as error:
        return Starter(kind, directory, (), str(error)), {}
    texts = {f"{directory}/{c.label}": c.new for c in changes}
    return Starter(kind, directory, tuple(c.label for c in changes), None), texts


def locator_source() -> str:
    """The text of scripts/jax_repo_locator.py: installed as package data of
    `jaxmap_scripts`, or beside the package in a source checkout."""
    places = [os.path.join(_CHECKOUT, "scripts", LOCATOR)]
    try:
        from importlib import resources

        places.insert(0, str(resources.files("jaxmap_scripts") / LOCATOR))
    except (ModuleNotFoundError, TypeError, OSError):  # OSError: an editable install's
        pass  # mapped package, which importlib.resources cannot list
    for path in places:
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                return handle.read()
    raise TargetError(f"cannot find {LOCATOR} (looked in {', '.join(places)}); "
                      f"reinstall jaxmap")

"""`jaxmap new KIND NAME`: a tested starting point for one rung of the ladder.

  generate(kind, name, out=..., style=...) -> list[FileChange]   (writes nothing)

Each kind is a row of knowledge.rungs.KINDS: its rung, the templates it renders and
the styles it offers.
What differs between jax releases comes from `jaxmap.versions`; a kind or style
the target release lacks is refused with the first release that has it.
"""

from __future__ import annotations

import keyword
import os
import re

from jaxmap.errors import SpecError, TargetError
from jaxmap.knowledge import rungs
from jaxmap.knowledge.backends import BACKENDS
from jaxmap.knowledge.rungs import KINDS, Kind
from jaxmap.scaffold.files import FileChange, new_file
from jaxmap.scaffold.names_used import names_used
from jaxmap.scaffold.spec import check_module_name, check_not_its_class, class_name
from jaxmap.scaffold.templating import fill

NAMES = tuple(KINDS)
_PLACEHOLDER = "jaxmapplaceholder"

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def generate(kind: str, name: str, *, out: str | None = None, style: str | None = None,
             jax_version: str | None = None, backend: str | None = None) -> list[FileChange]:
    """The files that start `kind` as `name` in `out` (default: the working
    directory), for `jax_version` (default: the installed jax); SpecError if
    `backend` cannot run them; nothing is written."""
    from jaxmap.knowledge import versions

    kind = canonical(kind, name)
    check_backend(kind, backend)
    check_name(name)
    out = os.path.abspath(out or os.curdir)
    if os.path.exists(out) and not os.path.isdir(out):
        raise TargetError(f"--out {out} is a file; give a directory")
    if kind == "primitive":
        return _primitive(name, out, style)
    release = versions.release(jax_version) if jax_version else versions.installed()
    _check_free(kind, name, style or "classic", release)
    files = _files(KINDS[kind], kind, name, style or "classic", release)
    return [new_file(os.path.join(out, path), path, text) for path, text in files.items()]


def notes(kind: str, name: str, *, jax_version: str | None = None, **options) -> list[str]:
    """`jaxmap new`'s one-line notes, given `generate`'s arguments: a primitive's."""
    del name, options  # The notes depend on the kind and the target release alone.
    if kind != "primitive":
        return []
    from jaxmap import scaffold
    from jaxmap.knowledge import versions

    return scaffold.notes(release=versions.release(jax_version) if jax_version else None)


def canonical(kind: str, name: str = "NAME") -> str:
    """`kind` as KINDS spells it, accepting JAX's underscores (`custom_vjp`);
    SpecError if it is no kind, pointing at `--style` for a style and at the command
    (`jaxmap new-primitive NAME`) for another scaffold command's name."""
    from jaxmap.commands.registry import COMMANDS

    spelled = kind.replace("_", "-") if isinstance(kind, str) else kind
    if spelled not in NAMES:
        styled = [each for each in NAMES if spelled in KINDS[each].styles]
        commands = {row.name for row in COMMANDS if row.kind == "scaffold"} - {"new"}
        hint = f" ({spelled} is a style: `--style {spelled}` of {', '.join(styled)})" \
            if styled else f" ({spelled} is a command: `jaxmap {spelled} {name}`)" \
            if spelled in commands else ""
        raise SpecError(f"unknown kind {kind!r}; one of {', '.join(NAMES)}{hint}")
    return spelled


def check_backend(kind: str, backend: str | None) -> None:
    """SpecError, naming the backends that can, if `backend` cannot run `kind`."""
    if backend is None:
        return
    if backend not in BACKENDS:
        raise SpecError(f"unknown backend {backend!r}; one of {', '.join(BACKENDS)}")
    runs_on = KINDS[kind].backends
    if backend not in runs_on:
        raise SpecError(f"`jaxmap new {kind}` cannot run on {backend}; it runs on "
                        f"{', '.join(runs_on)}")


def check_name(name: str) -> None:
    """SpecError unless `name` can be a module and a function of generated code."""
    if not isinstance(name, str) or not _IDENTIFIER.match(name) or keyword.iskeyword(name):
        raise SpecError(f"name {name!r} must be a Python identifier starting with a "
                        f"letter, and not a keyword")
    check_module_name(name, "name")


def _check_free(kind: str, name: str, style: str, release) -> None:
    """SpecError if a module `kind` generates uses `name` (or, where it defines a class
    for it, its class name) for something else: read off those modules generated
    under a placeholder name."""
    files = _files(KINDS[kind], kind, _PLACEHOLDER, style, release)
    ours = {_PLACEHOLDER: name, class_name(_PLACEHOLDER): class_name(name)}
    for path, text in files.items():
        if not path.endswith(".py"):
            continue
        used = names_used(text)
        if _PLACEHOLDER in used and class_name(_PLACEHOLDER) in used:
            check_not_its_class(name)  # a function and a class of the name, one module
        for taken in (mine for theirs, mine in ours.items() if theirs in used):
            if taken in used:
                what = f"name {name!r}" + (f" (class {taken!r})" if taken != name else "")
                raise SpecError(f"{what} would shadow a name the code `jaxmap new {kind}` "
                                f"generates uses (an import, parameter or local); "
                                f"choose another")


def _files(kind: Kind, kind_name: str, name: str, style: str, release) -> dict:
    if style not in kind.styles:
        raise SpecError(f"{kind_name} has no style {style!r}; one of "
                        f"{', '.join(kind.styles)}")
    command = f"`jaxmap new {kind_name}" + (f" --style {style}`" if style != "classic" else "`")
    for feature in kind.styles[style].needs:
        release.require(feature, command)
    ctx = {"kind": kind_name, "name": name, "style": style, "facts": release.needs(),
           "cls": class_name(name),
           "rung": rungs.rung_of(kind_name), "jax_version": release.text}
    files = {f"{name}.py": fill(kind.styles[style].template, ctx),
             f"test_{name}.py": fill(kind.test, ctx)}
    for pattern, template in kind.extras:
        files[pattern.format(name=name)] = fill(template, ctx)
    return files


def _primitive(name: str, out: str, style: str | None) -> list[FileChange]:
    from jaxmap import scaffold

    spec = scaffold.PrimitiveSpec(name=name, style=style or "classic")
    return scaffold.generate(spec, out=out)

"""Terminal text: one fact per line, locations as `path:line` so editors can jump."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jaxmap.models import Definition, Primitive, Rule

if TYPE_CHECKING:
    from typing import Callable

    PathFn = Callable[[str], str]
    SourceFn = Callable[[str, int], "str | None"]


_TESTS_SHOWN = 5


def located(found, path: PathFn, source_line: SourceFn) -> str:
    blocks = [primitive(p, path, source_line) for p in found.primitives]
    if found.definitions:
        blocks.append("\n".join(definition(d, path) for d in found.definitions))
    return "\n\n".join(blocks)


def primitive(prim: Primitive, path: PathFn, source_line: SourceFn) -> str:
    label = "hijax primitive" if prim.style == "hijax" else "primitive"
    head = f"{label} {prim.name}"
    statement = source_line(prim.loc.file, prim.loc.line)
    if statement:
        head += f"  (defined by `{statement}`)"
    lines = [head, f"  defined    {path(prim.loc.file)}:{prim.loc.line}"]
    lines += [rule_line(r, path) for r in prim.rules]
    if not prim.rules:
        lines.append("  (no rules registered)")
    for i, test in enumerate(prim.tests[:_TESTS_SHOWN]):
        label = "tested by" if i == 0 else ""
        lines.append(f"  {label:<22} {path(test.loc.file)}:{test.loc.line}  {test.name}")
    if len(prim.tests) > _TESTS_SHOWN:
        lines.append(f"  {'':<22} ... {len(prim.tests) - _TESTS_SHOWN} more (--json lists all)")
    return "\n".join(lines)


def rule_line(r: Rule, path: PathFn) -> str:
    kind = r.kind.value + (f"[{r.platform}]" if r.platform else "")
    text = f"  {kind:<22} {path(r.loc.file)}:{r.loc.line}  via {r.via}"
    if r.function is not None:
        text += f"  -> {r.function.name} {path(r.function.loc.file)}:{r.function.loc.line}"
    return text


def definition(d: Definition, path: PathFn) -> str:
    text = f"{d.kind.value} {d.qualname}  {path(d.loc.file)}:{d.loc.line}"
    if d.public_paths:
        text += "  (public: " + ", ".join(d.public_paths) + ")"
    return text


def primitives_table(prims: list[Primitive], path: PathFn) -> str:
    lines = []
    for p in prims:
        kinds = sorted({r.kind.value for r in p.rules})
        lines.append(f"{p.name:<32} {path(p.loc.file)}:{p.loc.line}  {' '.join(kinds) or '-'}")
    return "\n".join(lines)

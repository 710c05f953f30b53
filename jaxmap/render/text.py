"""Terminal text: one fact per line, locations as `path:line` so editors can jump."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jaxmap.models import Definition, Primitive, Rule, RuleKind

if TYPE_CHECKING:
    from typing import Callable

    PathFn = Callable[[str], str]
    SourceFn = Callable[[str, int], "str | None"]


_TESTS_SHOWN = 5
_REACHED_SHOWN = 8


def located(found, path: PathFn, source_line: SourceFn) -> str:
    """Primitives, then definitions; definitions first for a dotted name that is not a
    primitive's variable (`jnp.cumsum` asks for the function more than for the cumsum
    primitive; `lax.psum_p` for the primitive)."""
    blocks = [primitive(p, path, source_line) for p in found.primitives]
    if found.definitions:
        named = "\n".join(definition(d, path) + reached(r)
                           for d, r in zip(found.definitions, found.reaches))
        leaf = found.query.rpartition(".")[2]
        exact = "." in found.query and not leaf.endswith("_p")
        blocks.insert(0, named) if exact else blocks.append(named)
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
    kind = r.kind.value + platform_label(r)
    text = f"  {kind:<22} {path(r.loc.file)}:{r.loc.line}  via {r.via}"
    if r.functions:
        text += "  -> " + ", ".join(f"{f.name} {path(f.loc.file)}:{f.loc.line}"
                                    for f in r.functions)
    if r.condition:
        text += f"  (only if {r.condition})"
    return text


def platform_label(r: Rule) -> str:
    """`[tpu]`, or `[gpu: cuda, rocm]` where the registered platform is an alias."""
    if not r.platform:
        return ""
    if r.platforms and list(r.platforms) != [r.platform]:
        return f"[{r.platform}: {', '.join(r.platforms)}]"
    return f"[{r.platform}]"


def definition(d: Definition, path: PathFn) -> str:
    text = f"{d.kind.value} {d.qualname}  {path(d.loc.file)}:{d.loc.line}"
    if d.public_paths:
        text += "  (public: " + ", ".join(d.public_paths) + ")"
    return text


def reached(prims) -> str:
    """`  reaches  add_p, mul_p, ...`: the primitives a function reaches, a few."""
    if not prims:
        return ""
    names = ", ".join(r.label for r in prims[:_REACHED_SHOWN])
    more = f", ... {len(prims) - _REACHED_SHOWN} more (--json lists all with chains)" \
        if len(prims) > _REACHED_SHOWN else ""
    return f"\n  reaches  {names}{more}"


def primitives_table(prims: list[Primitive], path: PathFn) -> str:
    """A line a primitive: name, where it is defined, its rule kinds, and the
    platforms its lowerings serve (`default` for the rule registered without one)."""
    lines = []
    for p in prims:
        kinds = sorted({r.kind.value for r in p.rules})
        platforms = sorted({platform for r in p.rules if r.kind == RuleKind.LOWERING
                            for platform in (r.platforms or ("default",))})
        where = f"{path(p.loc.file)}:{p.loc.line}"
        lines.append(f"{p.name:<32} {where:<48} {' '.join(kinds) or '-'}"
                     + (f"  [lowering: {' '.join(platforms)}]" if platforms else ""))
    return "\n".join(lines)


def index_report(report) -> str:
    """One line for an indexer.IndexReport."""
    state = "rebuilt" if report.rebuilt else ("updated" if report.changed else "up to date")
    return (f"{state}: {report.files} files ({report.parsed} parsed, {report.removed} "
            f"removed), {report.primitives} primitives, {report.rules} rules, "
            f"{report.diagnostics} diagnostics -> {report.index}")


def verify_summary(report, show: int = 20) -> str:
    """A verify.Report: the figures, then up to `show` of each kind of difference."""
    lines = [f"jax {report.jax_version}: static index vs live registries"]
    for label, (found, total), share in (
            ("primitives found", report.primitives, report.primitive_recall),
            ("(primitive, kind) found", report.pairs, report.pair_recall),
            ("rules the runtime lacks", report.extra_rules, report.extra_rate),
            ("rule functions confirmed", report.functions, report.function_agreement),
            ("lowering platforms found", report.platform_recall,
             report.platform_pair_recall),
            ("lowering platforms right", report.platform_precision,
             report.platform_pair_precision)):
        lines.append(f"  {label:<25} {found}/{total} ({share:.1%})")
    live, conditional = report.conditional
    lines.append(f"  {'rules under a condition':<25} {conditional} (not counted as extra; "
                 f"{live} registered in this runtime)")
    for title, items in (("missing primitives", report.missing_primitives),
                         ("missing (primitive, kind)", report.missing_pairs),
                         ("extra (primitive, kind)", report.extra_pairs),
                         ("missing (primitive, platform)", report.missing_platforms),
                         ("extra (primitive, platform)", report.extra_platforms),
                         ("rule functions the runtime does not reach",
                          report.unconfirmed_functions)):
        if items and show:
            shown = ", ".join(items[:show]) + (" ..." if len(items) > show else "")
            lines.append(f"  {title}: {shown}")
    return "\n".join(lines)


def diff_side(argument: str, jax_version: str | None, is_root: bool) -> str:
    """How `diff` names one side: `jax 0.4.38` for a snapshot, else the root given."""
    return f"jax {jax_version}" if jax_version and not is_root else argument


def index_diff(diff) -> str:
    """A diff.IndexDiff: primitives added and removed, then rules by change."""
    lines = [f"{diff.old} -> {diff.new}",
             f"primitives added ({len(diff.added)}): {', '.join(diff.added) or '-'}",
             f"primitives removed ({len(diff.removed)}): {', '.join(diff.removed) or '-'}"]
    if diff.renamed:
        lines.append(f"primitives renamed ({len(diff.renamed)}): "
                     + ", ".join(f"{old} -> {new}" for old, new in diff.renamed))
    kinds = [c.kind + (f"[{c.platform}]" if c.platform else "") for c in diff.rules]
    # Columns as wide as their longest entry (at least the usual width).
    name_width = max([28, *(len(c.primitive) for c in diff.rules)])
    kind_width = max([22, *map(len, kinds)])
    for change in ("added", "removed", "moved"):
        rows = [(c, kind) for c, kind in zip(diff.rules, kinds) if c.change == change]
        lines.append(f"rules {change} ({len(rows)}):")
        for c, kind in rows:
            where = {"added": ", ".join(c.new), "removed": ", ".join(c.old),
                     "moved": f"{', '.join(c.old)} -> {', '.join(c.new)}"}[change]
            lines.append(f"  {c.primitive:<{name_width}} {kind:<{kind_width}} {where}")
    if any(diff.left_out):
        lines.append(f"left out: {diff.left_out[0]} primitives and {diff.left_out[1]} rules "
                     "defined in tests, docs, examples or benchmarks (no release holds them)")
    return "\n".join(lines)


def ranking(rows: list[tuple[str, float]]) -> str:
    """(name, score) rows, best first: `0.0123  jax._src.core`."""
    return "\n".join(f"{score:.4f}  {name}" for name, score in rows)


def map_written(paths: list[str], data, tokens: int) -> str:
    """What `repo-map` wrote: a repomap.RepoMap to `paths` (the map first)."""
    return (f"wrote {' and '.join(paths)}: {len(data.primitives)} primitives, "
            f"{len(data.modules)} modules; the map is about {tokens} tokens")


def scaffold_dry_run(changes) -> str:
    return f"dry run: {len(changes)} files would change; nothing written"


def scaffold_written(name: str, changes, written) -> str:
    return (f"wrote {len(written)} files for primitive {name!r}: "
            + ", ".join(c.label for c in changes))


def new_kind_summary(kind: str, name: str, changes, dry_run: bool) -> str:
    """`wrote 2 files for pallas 'my_kernel': NAME.py, test_NAME.py` after `jaxmap new`."""
    state = "would write" if dry_run else "wrote"
    return (f"{state} {len(changes)} files for {kind} {name!r}: "
            + ", ".join(c.label for c in changes))


def skill_written(out: str, folder: dict[str, str]) -> str:
    """What `skill` wrote: the folder, then how many files under each part of it."""
    parts: dict[str, int] = {}
    for path in folder:
        top = path.split("/")[0]
        parts[top] = parts.get(top, 0) + 1
    listed = ", ".join(f"{top}/ ({n})" if n > 1 or "." not in top else top
                       for top, n in parts.items())
    return f"wrote the skill folder {out}: {listed}"

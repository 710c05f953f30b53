"""What an editor shows: hover text (Markdown), code-lens titles, diagnostic messages,
and the notes the LSP server adds while its index is being built or refreshed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jaxmap.models import RuleKind

if TYPE_CHECKING:
    from collections.abc import Callable

    LinkFn = Callable[[str, int], str]  # (root-relative file, line) -> a URI to it

STALE = "answered from the previous index; a refresh is running"
GRAPH_STALE = ("definitions and rules are current; calls and binds answer nothing "
               "while the call graph is solved again")
FIRST_PHASE = "definitions and rules refreshed: {parsed} files parsed; solving the call graph"
BUILDING = "the index of {root} is being built; answers come once it is ready"
INVALID_REQUEST = "answered Invalid Request to {why}"

def hover(found, link: LinkFn, summaries: dict[str, str], note: str | None = None) -> str | None:
    """Markdown for what a symbol means: each primitive with its rules by kind, its
    platforms and the first line of its docstring; each definition with the rules it
    serves; each primitive a function binds, with its rules too. None when it means
    nothing the index knows."""
    blocks = [_primitive(p, link, summaries.get(p.name)) for p in found.primitives]
    blocks += [_definition(d, served, link) for d, served in zip(found.definitions, found.served)]
    blocks += [_primitive(p, link, None, "binds ") for p in found.bound]
    if not blocks:
        return None
    if note:  # the index is being refreshed (STALE, GRAPH_STALE)
        blocks.append(f"_{note}_")
    return "\n\n---\n\n".join(blocks)


def _primitive(prim, link: LinkFn, summary: str | None, how: str = "") -> str:
    label = "hijax primitive" if prim.style == "hijax" else "primitive"
    head = f"{how}**{label} `{prim.name}`** (`{prim.variable}`, "
    lines = [head + f"{_at(prim.loc.file, prim.loc.line, link)})"]
    if summary:
        lines += ["", summary]
    by_kind: dict[str, list[str]] = {}
    for rule in prim.rules:
        where = f" ({rule.platform})" if rule.platform else ""
        by_kind.setdefault(rule.kind.value, []).append(
            _at(rule.loc.file, rule.loc.line, link) + where)
    lines += [""] + [f"- {kind}: {', '.join(places)}" for kind, places in by_kind.items()]
    if not prim.rules:
        lines.append("- no rules registered")
    lines += ["", f"platforms: {platforms(prim)}"]
    return "\n".join(lines)


def platforms(prim) -> str:
    """`all (a default lowering), and cuda, rocm` / `cpu, tpu` / `none (no lowering)`."""
    lowerings = [r for r in prim.rules if r.kind == RuleKind.LOWERING]
    named = sorted({p for r in lowerings if r.platform for p in (r.platforms or (r.platform,))})
    if any(r.platform is None for r in lowerings):
        return "all (a default lowering)" + (f"; also {', '.join(named)}" if named else "")
    return ", ".join(named) if named else "none (no lowering)"


def _definition(d, served, link: LinkFn) -> str:
    path = d.public_paths[0] if d.public_paths else d.qualname
    lines = [f"**{d.kind.value} `{path}`** ({_at(d.loc.file, d.loc.line, link)})"]
    if d.summary:
        lines += ["", d.summary]
    if served:
        lines += [""] + [f"- {s.kind} rule of `{s.primitive}`, registered at "
                         f"{_at(s.loc.file, s.loc.line, link)}" for s in served]
    return "\n".join(lines)


def _at(file: str, line: int, link: LinkFn) -> str:
    return f"[{file}:{line}]({link(file, line)})"


def refreshed(report) -> str:
    """The log line after a refresh that changed the index, naming the files left out."""
    skipped = "".join(f"; skipped {path}: {reason}" for path, reason in report.skipped)
    return (f"index refreshed: {report.parsed} files parsed, {report.removed} removed, "
            f"{report.primitives} primitives{skipped}")


def primitive_lens(counts) -> str:
    """`9 rules · 128 binders · 1,978 tests`; counts None: the primitive is gone."""
    if counts is None:
        return "no longer in the index"
    return " · ".join(_count(n, noun) for n, noun in
                      ((counts.rules, "rule"), (counts.binders, "binder"), (counts.tests, "test")))


def rule_lens(served) -> str:
    """`transpose rule of dot_general`; `jvp and transpose rules of psum`; `batching
    rule of add, sub, mul and 4 more`."""
    kinds = list(dict.fromkeys(s.kind for s in served))
    prims = list(dict.fromkeys(s.primitive for s in served))
    what = " and ".join([", ".join(kinds[:-1]), kinds[-1]] if len(kinds) > 1 else kinds)
    rules = "rules" if len(kinds) > 1 else "rule"
    whose = ", ".join(prims[:3]) + (f" and {len(prims) - 3} more" if len(prims) > 3 else "")
    return f"{what} {rules} of {whose}"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


_GAPS = {  # rule_gaps.Gap.code -> its message
    "missing-rule": "{primitive} has no {what} rule, which {having} of its {siblings} "
                    "sibling primitives in this module have",
    "missing-platform": "{primitive} has no lowering for {what}, which {having} of its "
                        "{siblings} sibling primitives in this module have",
    "unknown-platform": "{what!r} is no platform JAX lowers for: this lowering of "
                        "{primitive} serves nothing",
}


def gap(g) -> str:
    """The diagnostic message of a rule_gaps.Gap."""
    return _GAPS[g.code].format(**g._asdict())

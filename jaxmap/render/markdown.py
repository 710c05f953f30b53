"""REPO-MAP.md and REPO-MAP-PRIMITIVES.md: a repomap.RepoMap as Markdown.

Deterministic: the same data gives the same bytes. The map opens with orientation
(subsystems, the jit call flow, entry points, contributor paths); with a token budget
it keeps sections and rows by priority, cut from the end of each section, and says
what it left out.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import NamedTuple

from jaxmap.errors import JaxmapError
from jaxmap.knowledge.orientation import MESSAGE_PAGES
from jaxmap.models import RuleKind
from jaxmap.render.map_pages import HEADER, anchor, document, message_page, page_path
from jaxmap.render.text import SWITCHED_OFF_DESCRIPTION, SWITCHED_OFF_FAMILY

CHARS_PER_TOKEN = 3  # conservative for Markdown full of paths; English prose runs nearer 4
PRIMITIVES_FILE = "REPO-MAP-PRIMITIVES.md"
_LISTED = 6  # modules named per package in the layout


def primitives_path(map_path: str) -> str:
    """Where the per-primitive page of a map goes: REPO-MAP.md -> REPO-MAP-PRIMITIVES.md,
    beside it (standard output: the default name)."""
    return page_path(map_path, "PRIMITIVES")


def estimate_tokens(text: str) -> int:
    """Tokens a model will read, estimated from characters (CHARS_PER_TOKEN a token)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class Section(NamedTuple):
    """One `##` section: `head` and `tail` always show with it; `rows` may be cut from
    the end, or replaced by `brief` (shorter rows, one for each) when they do not fit."""

    title: str
    priority: int  # 0 first kept under a budget
    head: tuple[str, ...]
    rows: tuple[str, ...] = ()
    tail: tuple[str, ...] = ()
    brief: tuple[str, ...] = ()


def repo_map(data, budget: int | None = None, primitives_file: str = PRIMITIVES_FILE) -> str:
    """The map; with `budget`, at most that many tokens by estimate_tokens (JaxmapError
    when not even its header fits)."""
    link = _linker(data.links)
    sections = [s for s in (
        _subsystems(data, link), _reading(data, link), _flow(data, link),
        _entry_points(data, link), _contributing(data, link), _core_classes(data, link),
        _alternate_paths(data, link), _tests(data),
        _export(data, link), _pipeline(data, link), _where_to_add(data, link),
        _gaps(data), _central(data, link), _layout(data),
        _primitives_summary(data, primitives_file),
        _lookup_pages(data, primitives_file)) if s.rows or s.head]
    if budget is None:
        return _join(_header(data, sections, None), [(s, s.rows, len(s.rows)) for s in sections])
    chars = budget * CHARS_PER_TOKEN
    header = _header(data, sections, budget)  # every title listed: the longest header
    kept = _fit(sections, chars - len(header) - 2)
    while True:  # _fit's sums are exact; this only guards them
        text = _join(_header(data, [s for s, _, _ in kept], budget), kept)
        if estimate_tokens(text) <= budget:
            return text
        if not kept:
            raise JaxmapError(f"a budget of {budget} tokens cannot hold even the map's "
                              f"header; give at least {estimate_tokens(text)}")
        worst = max(kept, key=lambda item: item[0].priority)
        kept = [item for item in kept if item is not worst]


def _fit(sections: list[Section], chars: int) -> list[tuple[Section, tuple[str, ...], int]]:
    """(section, the rows it shows, how many of them) in document order, filled by
    priority: all its rows (when a section has brief rows, only if the full ones take
    at most half of what is left), else all its brief rows, else as many as fit."""
    shown: dict[int, tuple] = {}
    for i in sorted(range(len(sections)), key=lambda i: sections[i].priority):
        section = sections[i]
        for rows in (section.rows, section.brief or section.rows):
            used = _size(_lines(section, rows, len(rows))) + 2
            if used <= (chars // 2 if section.brief and rows is section.rows else chars):
                shown[i], chars = (rows, len(rows)), chars - used
                break
        else:
            rows = section.brief or section.rows
            kept, used = 0, 0
            while kept < len(rows):
                size = _size(_lines(section, rows, kept + 1)) + 2
                if size > chars:
                    break
                kept, used = kept + 1, size
            if kept:
                shown[i], chars = (rows, kept), chars - used
    return [(sections[i], *shown[i]) for i in sorted(shown)]


def _lines(section: Section, rows: tuple[str, ...], kept: int) -> list[str]:
    lines = [f"## {section.title}", "", *section.head, *rows[:kept]]
    if kept < len(rows):
        lines += ["", _cut_note(len(rows) - kept)]
    elif rows is section.brief and rows is not section.rows:
        lines += ["", "*Shortened to fit the budget; `jaxmap repo-map` has the full rows.*"]
    return lines + list(section.tail)


def _cut_note(left_out: int) -> str:
    return f"*… {left_out} more left out to fit the budget; `jaxmap repo-map` has them all.*"


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _join(header: str, kept: list[tuple[Section, tuple[str, ...], int]]) -> str:
    return "\n\n".join([header] + ["\n".join(_lines(*item)) for item in kept]).rstrip() + "\n"


def _linker(links: bool):
    """`[label](path#L12)` for a checkout (works on GitHub), plain `path:12` otherwise."""
    def link(file: str, line: int, label: str | None = None) -> str:
        if links:
            return f"[{label or f'{file}:{line}'}]({file}#L{line})"
        return f"`{file}:{line}`" if label is None else f"{label} `{file}:{line}`"
    return link


def _header(data, sections, budget: int | None) -> str:
    version = f"jax {data.jax_version}" if data.jax_version else "this tree"
    total_rules = sum(len(p.rules) for p in data.primitives)
    lines = [
        HEADER,
        f"# Repository map: {version}",
        "",
        (f"Where things live in {version}: {data.files} Python files, "
        f"{len(data.primitives)} primitives, {total_rules} registered rules. Every location "
        "below comes from jaxmap's static index of the source; regenerate with "
        "`jaxmap repo-map -o REPO-MAP.md`, ask for one name with `jaxmap locate NAME`.")]
    if budget is not None:
        lines += ["", (f"Fitted to {budget} tokens, estimated as characters / "
                      f"{CHARS_PER_TOKEN}: sections and rows are kept by priority, "
                      "orientation first.")]
    lines += ["", "Contents:", ""]
    lines += [f"- [{s.title}](#{anchor(s.title)})" for s in sections]
    return "\n".join(lines)


# -- orientation -------------------------------------------------------------------------


def _subsystems(data, link) -> Section:
    rows = []
    for s in data.subsystems:
        entries = ", ".join(link(p.file, p.line, f"`{_short(p.name)}`") for p in s.entries)
        modules = ", ".join(f"`{p.name}`" for p in s.modules)
        links = "; ".join(part for part in (
            "uses " + ", ".join(s.uses) if s.uses else "",
            "used by " + ", ".join(s.used_by) if s.used_by else "") if part)
        rows.append(f"| **{s.name}** | {s.does} | {modules} ({_count(s.module_count, 'module')}, "
                    f"{_count(s.primitive_count, 'primitive')}) | {entries or '—'} | "
                    f"{links or '—'} |")
    brief = [f"| **{s.name}** | {s.does} | " + ", ".join(f"`{p.name}`" for p in s.modules[:1])
             + " | " + ", ".join(link(p.file, p.line, f"`{_short(p.name)}`")
                                 for p in s.entries[:1]) + " | — |" for s in data.subsystems]
    head = (("JAX as the index sees it: each subsystem's key modules and entry points (at "
            "their definitions), and the subsystems it imports most and is imported by."), "",
            "| subsystem | what it does | key modules | entry points | connects to |",
            "|---|---|---|---|---|")
    return Section("Subsystems", 1, head if rows else (), tuple(rows), brief=tuple(brief))


def _reading(data, link) -> Section:
    rows = [f"{i}. `{r.module}` ({link(r.file, 1)}): {r.why}"
            for i, r in enumerate(data.reading, 1)]
    return Section("Core modules in reading order", 3, (
        "Read these first, in this order; each builds on the ones before it.", ""),
        tuple(rows))


def _core_classes(data, link) -> Section:
    def row(c, shown: int) -> str:
        extended = ""
        if c.subclasses[:shown]:
            more = f" ({c.subclass_count} in all)" if c.subclass_count > shown else ""
            extended = f"; extended by{more}:"
        lines = [f"- {link(c.file, c.line, f'`{_short(c.qualname)}`')}: {c.stands_for}"
                 + extended]
        lines += [f"  - {link(file, line, f'`{_short(name)}`')}"
                  for name, file, line in c.subclasses[:shown]]
        return "\n".join(lines)

    head = (("The base classes the rest of JAX extends, in reading order, each with the "
             "classes that extend it directly (JAX's own internals first)."), "")
    return Section("Core classes", 3, head if data.core_classes else (),
                   tuple(row(c, len(c.subclasses)) for c in data.core_classes),
                   brief=tuple(row(c, 2) for c in data.core_classes))


def _alternate_paths(data, link) -> Section:
    rows = []
    for p in data.alternate_paths:
        (entry, file, line), (dispatcher, d_file, d_line) = p.entry, p.dispatcher
        at = f"calls it at {link(d_file, p.dispatch_line)}" if p.dispatch_line \
            else f"defined at {link(d_file, d_line)}, dispatches to it"
        rows.append(f"- {p.mode}:\n  `{_short(entry)}` defined at {link(file, line)};\n"
                    f"  `{_short(dispatcher)}` {at}")
    head = (("Where a feature leaves its usual path: the function that runs the mode, and "
             "the call that dispatches to it."), "")
    return Section("Alternate paths", 4, head if rows else (), tuple(rows))


def _numbered(title: str, priority: int, stages, link) -> Section:
    """Stages as a numbered list, each line naming where its definitions are."""
    def row(i, stage, places) -> str:
        return f"{i}. {stage.heading}: " + ", ".join(
            f"`{_short(p.name)}` defined at {link(p.file, p.line)}" for p in places)

    return Section(title, priority, (), tuple(
        row(i, stage, stage.places) for i, stage in enumerate(stages, 1)), brief=tuple(
        row(i, stage, stage.places[:1]) for i, stage in enumerate(stages, 1)))


def _flow(data, link) -> Section:
    return _numbered("Pipeline: how jax.jit(f)(x) runs", 2, data.flow, link)


def _export(data, link) -> Section:
    return _numbered("Export: from a function to bytes and back", 5, data.export, link)


def _entry_points(data, link) -> Section:
    rows = [f"- `{p.name}` — defined at {link(p.file, p.line)}" for p in data.entry_points]
    head = (("The public functions and classes people look for, at their real definition "
            "(not an `@overload` stub)."), "")
    return Section("Entry points", 4, head if rows else (), tuple(rows))


def _tests(data) -> Section:
    in_tree = any(t.in_tree for t in data.tests)
    head = ("The test files for each subsystem." if in_tree else
            ("Not in this tree (an installed package): the file names a JAX checkout uses "
             "under `tests/` for each subsystem."),
            ("Run one with `pytest -n auto tests/lax_test.py -k testAdd`, or "
             "`bazel test //tests:lax_test`."), "")
    rows = [f"- {t.subsystem}: " + ", ".join(
        f"[`{f}`]({f})" if t.in_tree and data.links else f"`{f}`" for f in t.files)
        for t in data.tests]
    return Section("Tests by subsystem", 5, head if rows else (), tuple(rows))


def _contributing(data, link) -> Section:
    c = data.contributing
    if c.test_modules:
        tests = (f"- Tests: {_count(c.test_modules, 'module')} `tests/*_test.py` (e.g. "
                 + ", ".join(f"`{t}`" for t in c.test_examples) + "; see Tests by "
                 "subsystem); `JAX_NUM_GENERATED_CASES` sets how many generated cases run.")
    else:
        tests = ("- Tests: none in this tree (an installed package); a JAX checkout keeps "
                 "them in `tests/*_test.py` (see Tests by subsystem).")
    rows = [tests, "- Read first: " + "; ".join(f"`{path}` ({why})" for path, why in c.docs)
            + ".", "- Every user-visible change gets a line in `CHANGELOG.md`."]
    if c.jaxlib:
        rows.append(f"- The C++ side (XLA client, runtime, custom calls) is jaxlib; jax reaches "
                    f"it through `{c.jaxlib.name}` ({link(c.jaxlib.file, 1)}).")
    rows.append("- Adding a primitive: `jaxmap new-primitive NAME --in-tree --root CHECKOUT` "
                "writes `jax/_src/lax/NAME.py` with every rule registered, exports it from "
                "`jax/lax/__init__.py` and writes `tests/NAME_test.py`; then add the docs "
                "entry (`docs/jax.lax.rst`), the Bazel test target in `tests/BUILD`, and a "
                "CHANGELOG line.")
    if c.ladder:
        rows.append("- When transformations are not enough, in order: " + "; ".join(
            f"{label} (`{_short(p.name)}` defined at {link(p.file, p.line)})"
            for label, p in c.ladder)
            + ".")
    return Section("Contributing", 5, (), tuple(rows))


# -- reference ---------------------------------------------------------------------------


def _pipeline(data, link) -> Section:
    rows = [f"| {stage.heading} | " + ", ".join(link(p.file, p.line, f"`{_short(p.name)}`")
                                                for p in stage.places) + " |"
            for stage in data.stages]
    head = (("From a traced Python function to compiled code: the definitions behind each "
            "stage of the pipeline."), "", "| stage | defined in |", "|---|---|")
    return Section("Where each stage lives", 6, head if rows else (), tuple(rows))


def _where_to_add(data, link) -> Section:
    rows = []
    for registry in data.registries:  # one row per kind, so a budget cuts whole kinds
        title = f": {registry.title}" if registry.title else ""
        lines = ["", f"### {registry.kind}{title}", ""]
        if registry.error:
            lines.append(f"- JAX says, when it is missing: `{registry.error}`")
        lines += [f"- `{short}` — defined at {link(file, line)}"
                  for short, file, line in registry.registrars]
        if registry.example:
            prim, file, line, via, function, function_file, function_line = registry.example
            lines.append(f"- example: `{prim}` registers `{function}` (defined at "
                         f"{link(function_file, function_line)}) via `{via}` at "
                         f"{link(file, line)}")
        rows.append("\n".join(lines))
    return Section("Where to add things", 3, (
        ("For each kind of rule: the error JAX raises when a primitive lacks it (search "
        "for your traceback's message here), the registries and helpers that register it, "
        "and one real registration to copy. `jaxmap new-primitive` writes all of them at "
        "once."),), tuple(rows))


def _gaps(data) -> Section:
    head = [("Primitives (not hijax classes) lacking a rule of a kind. Some families lack "
            "rules by design and are counted, not listed:")]
    head += [f"- *{f.name}*: {f.description} ({len(f.members)})" for f in data.families]
    if any(gap.switched_off for gap in data.gaps):
        head.append(f"- *{SWITCHED_OFF_FAMILY}*: {SWITCHED_OFF_DESCRIPTION} (named in the table)")
    head += ["", "| lacking | surprises | by design |", "|---|---|---|"]
    rows = []
    for gap in data.gaps:
        off = [f"{SWITCHED_OFF_FAMILY}: {', '.join(f'`{n}`' for n in gap.switched_off)}"] \
            if gap.switched_off else []
        design = ", ".join([f"{n} {name}" for name, n in gap.by_design] + off) or "—"
        names = ", ".join(f"`{n}`" for n in gap.surprises) or "none"
        rows.append(f"| {len(gap.surprises)} {gap.title} | {names} | {design} |")
    return Section("Gaps", 7, tuple(head), tuple(rows))


def _central(data, link) -> Section:
    head = (("Hubs are implementation modules ranked by the geometric mean of how many "
            "modules import them and how many they import: the layers others build on "
            "that themselves build on many. Infrastructure that everything imports but "
            "that imports almost nothing is listed apart, not ranked."), "",
            "| rank | hub module | imported by | imports |", "|---|---|---|---|")
    rows = [f"| {i} | `{m}` | {by} | {to} |" for i, (m, by, to) in enumerate(data.hubs, 1)]
    tail = []
    if data.infrastructure:
        tail += ["", "Infrastructure: " + ", ".join(f"`{m}` ({n})"
                                                    for m, n in data.infrastructure) + "."]
    if data.helpers:
        tail += ["", "Rule functions shared by the most primitives: " + ", ".join(
            f"{link(p.file, p.line, f'`{p.name}`')} ({n})" for p, n in data.helpers) + "."]
    return Section("Central modules", 8, head, tuple(rows), tuple(tail))


def _layout(data) -> Section:
    rows = []
    for package in data.packages:
        shown = list(package.modules[:_LISTED]) + ["…"] * (len(package.modules) > _LISTED)
        parts = [_cell(package.purpose)] if package.purpose else []
        parts += [", ".join(shown)] if shown else []
        rows.append(f"| `{package.name}` | {len(package.modules)} | "
                    f"{' — '.join(parts) or '—'} |")
    return Section("Layout", 9, (
        (f"One row per package: its docstring's first line, then its modules (the first "
        f"{_LISTED} of a larger package). `jaxmap repo-map --json` lists every module with "
        f"its purpose (its docstring, else what it defines)."), "",
        "| package | modules | what it holds |", "|---|---|---|"), tuple(rows))


def _primitives_summary(data, primitives_file: str) -> Section:
    modules: dict[str, int] = defaultdict(int)
    for prim in data.primitives:
        modules[prim.module] += 1
    busiest = sorted(modules.items(), key=lambda kv: (-kv[1], kv[0]))[:8]
    return Section("Primitives", 10, (
        f"{len(data.primitives)} primitives in {len(modules)} modules; every rule of each, "
        f"by kind, with the function that implements it: [{primitives_file}]"
        f"({primitives_file}). Most are in " + ", ".join(f"`{m}` ({n})" for m, n in busiest)
        + ".",))


def _lookup_pages(data, primitives_file: str) -> Section:
    def page(name: str) -> str:
        file = primitives_file.replace("-PRIMITIVES", f"-{name}")
        return f"[{file}]({file})"

    messages = Counter(site.page for site in data.messages)
    message_pages = "; ".join(f"{title} ({messages[p]}): {page(message_page(p))}"
                              for p, title, _modules in MESSAGE_PAGES)
    names = sum(len(rows) for _module, rows in data.public_names)
    rows = (f"- Public names that are not functions ({names}: namespaces, classes, enums, "
            f"tables, dtypes) and the {len(data.config_options)} configuration options, "
            f"at their definitions: {page('NAMES')}.",
            (f"- The primitives each public function binds ({len(data.public_binds)} "
             f"functions), nearest first: {page('BINDS')}."),
            (f"- User-facing error and warning messages with their raise sites and the "
             f"public functions that reach them, by area: {message_pages}."))
    return Section("Names, binds and messages", 10, (
        "Pages beside this one, one grep-friendly line per entry:", ""), rows)


# -- the per-primitive page ----------------------------------------------------------------


def primitives_page(data, map_file: str = "REPO-MAP.md") -> str:
    """REPO-MAP-PRIMITIVES.md: one line per primitive and one per rule registration, every
    path whole, in a fenced block per module, so that `grep '^NAME  '` finds them all."""
    version = f"jax {data.jax_version}" if data.jax_version else "this tree"
    by_module = defaultdict(list)
    for prim in data.primitives:
        by_module[prim.module].append(prim)
    rules = sum(len(p.rules) for p in data.primitives)
    lines = [HEADER, f"# Primitives: {version}", "",
             (f"{len(data.primitives)} primitives in {len(by_module)} modules and their "
              f"{rules} rule registrations, from the same index as [{map_file}]({map_file}). "
              "One line per primitive, then one per registered rule (a rule registered for "
              "several platforms at once has a line per platform); fields are separated by "
              "two spaces:"), "",
             "    PRIMITIVE  primitive  VARIABLE  PATH:LINE (definition)",
             ("    PRIMITIVE  KIND[PLATFORM]  REGISTRY/HELPER  PATH:LINE (registration)  "
              "-> FUNCTION PATH:LINE (definition)"), "",
             ("- `REGISTRY/HELPER` is the call or table at the registration; `A > B` means "
              "helper `A` registers through `B`; `@A` is a decorator."),
             ("- `FUNCTION` is the rule function the registration resolves to; where the "
              "registration names a module-level `functools.partial`, that name comes first and "
              "`a partial of` the function it wraps. `(built by the helper)` means the helper "
              "makes the rule itself. `if ...` is a condition around the registration."),
             ("- `[PLATFORM]` is a platform lowering: `cpu`, `cuda`, `rocm`, `gpu`, `tpu`, or "
              "a Pallas backend (`mosaic_tpu`, `mosaic_gpu`, `triton`)."),
             "- Hijax primitives are classes; their rules are methods.",
             ("- Everything about one primitive: `grep '^dot_general  ' "
              "REPO-MAP-PRIMITIVES.md`; one kind: `grep '^dot_general  batching'`; a backend: "
              "`grep 'lowering\\[triton\\]'`.")]
    return document(lines, [(module, [line for prim in prims for line in _primitive_lines(prim)])
                            for module, prims in by_module.items()])


def _primitive_lines(prim) -> list[str]:
    style = "primitive (hijax class)" if prim.style == "hijax" else "primitive"
    lines = [f"{prim.name}  {style}  {prim.variable}  {prim.loc.file}:{prim.loc.line} (definition)"]
    order = {kind: i for i, kind in enumerate(RuleKind)}  # kinds made on the fly come last
    for rule in sorted(prim.rules, key=lambda r: (order.get(r.kind, len(order)), r.kind.value,
                                                  r.platform or "", r.loc.file, r.loc.line)):
        kind = f"{rule.kind.value}[{rule.platform}]" if rule.platform else rule.kind.value
        functions = ", ".join(f"{f.name} {f.loc.file}:{f.loc.line} (definition)"
                              for f in rule.functions) or "(built by the helper)"
        if rule.written and rule.functions:  # the name the source registers, then its func
            w = rule.written
            functions = f"{w.name} {w.loc.file}:{w.loc.line} (definition), a partial of " \
                + functions
        condition = f"  if {rule.condition}" if rule.condition else ""
        lines.append(f"{prim.name}  {kind}  {rule.via}  {rule.loc.file}:{rule.loc.line} "
                     f"(registration)  -> {functions}{condition}")
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _short(qualname: str, keep: int = 2) -> str:
    """The last `keep` dotted parts: `jax._src.core.Trace` -> `core.Trace`."""
    return ".".join(qualname.split(".")[-keep:])


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")

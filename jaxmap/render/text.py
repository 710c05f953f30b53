"""Terminal text: one fact per line, locations as `path:line` so editors can jump."""

from __future__ import annotations

import os
import textwrap
from typing import TYPE_CHECKING

from jaxmap.knowledge.traces import rule_kinds, trace_kind, trace_only
from jaxmap.models import Definition, Primitive, Rule, RuleKind, SwitchedOff
from jaxmap.render.view import View

if TYPE_CHECKING:
    from typing import Callable

    PathFn = Callable[[str], str]
    SourceFn = Callable[[str, int], "str | None"]


_TESTS_SHOWN = 5
_REACHED_SHOWN = 8


def located(found, view: View) -> str:
    """`locate`: primitives, then definitions; definitions first for a dotted name that is not a
    primitive's variable (`jnp.cumsum` asks for the function more than for the cumsum
    primitive; `lax.psum_p` for the primitive)."""
    path = view.path
    blocks = [primitive(p, path, view.source_line, tests)
              for p, tests in zip(found.primitives, found.tests or [None] * len(found.primitives))]
    if found.definitions:
        named = "\n".join(definition(d, path) + reached(r)
                           for d, r in zip(found.definitions, found.reaches))
        leaf = found.query.rpartition(".")[2]
        exact = "." in found.query and not leaf.endswith("_p")
        blocks.insert(0, named) if exact else blocks.append(named)
    blocks += [config_option(o, path, view.source_line) for o in found.options]
    if not found.graph:
        blocks.append(_STALE_GRAPH if found.stale else _NO_GRAPH)
    blocks += [f"({message})" for message in found.unparsed]
    return "\n\n".join(blocks)


def config_option(option, path: PathFn, source_line: SourceFn) -> str:
    """A config option defined by a call whose result no variable holds, at the call."""
    statement = (source_line(option.file, option.line) or "").strip()
    defined = f"  (defined by `{statement}`; no variable holds its state)" if statement \
        else "  (no variable holds its state)"
    return f"config option {option.name}  {path(option.file)}:{option.line}{defined}"


_NO_GRAPH = ("(no call graph in this index yet, so what functions reach and which tests use "
             "a primitive are not listed: `jaxmap index` builds it, and so does the first "
             "binds, callers, calls, path or graph)")
_STALE_GRAPH = ("(the call graph is not current since an edit, so what functions reach and "
                "which tests use a primitive are not listed: the next binds, callers, calls, "
                "path or graph brings it up to date)")


def _own_statement(line: str | None, variable: str) -> str | None:
    """Of a line of statements joined by `;` (`foo_p = core.Primitive('foo'); foo_p.
    def_impl(...)`), the one that assigns `variable`; else the line."""
    if not line or ";" not in line:
        return line
    for part in line.split(";"):
        target = part.partition("=")[0].strip()
        if target == variable and "==" not in part:
            return part.strip()
    return line


def primitive(prim: Primitive, path: PathFn, source_line: SourceFn, tests=None) -> str:
    """A primitive, its rules, and its tests (`tests`: test_links.TestLink, most direct
    first; else the index's, by place)."""
    label = "hijax primitive" if prim.style == "hijax" else "primitive"
    head = f"{label} {prim.name}"
    statement = _own_statement(source_line(prim.loc.file, prim.loc.line), prim.variable)
    if statement:
        head += f"  (defined by `{statement}`)"
    lines = [head, f"  defined    {path(prim.loc.file)}:{prim.loc.line}"]
    width = max([_KIND_WIDTH] + [len(_kind_label(r)) for r in prim.rules])
    lines += [rule_line(r, path, width) for r in prim.rules]
    if not prim.rules:
        lines.append("  (no rules registered)")
    lines += [f"  {SWITCHED_OFF:<{width}} {switched_off(o, path)}" for o in prim.switched_off]
    if tests is None:
        tests = [(t.name, t.loc.file, t.loc.line, "") for t in prim.tests]
    else:
        tests = [(t.name, t.file, t.line, "" if t.direct else "  (indirect: through a value)")
                 for t in tests]
    for i, (name, file, line, note) in enumerate(tests[:_TESTS_SHOWN]):
        label = "tested by" if i == 0 else ""
        lines.append(f"  {label:<{width}} {path(file)}:{line}  {name}{note}")
    if len(prim.tests) > _TESTS_SHOWN:
        lines.append(f"  {'':<{width}} ... {len(prim.tests) - _TESTS_SHOWN} more "
                     f"(--json lists all)")
    return "\n".join(lines)


_KIND_WIDTH = 22  # the column of a rule's kind, wider where a primitive's longest is


def _kind_label(r: Rule) -> str:
    """`lowering[tpu]`; a Trace method's with the kind its class stands for
    (`trace (jvp)`)."""
    stands = trace_kind(r.kind, r.via)
    return r.kind.value + platform_label(r) + (f" ({stands.value})" if stands else "")


def rule_line(r: Rule, path: PathFn, width: int = _KIND_WIDTH) -> str:
    kind = _kind_label(r)
    text = f"  {kind:<{width}} {path(r.loc.file)}:{r.loc.line}  via {r.via}"
    # the partial's keywords after its function: `_lower(use_rolled_loops=False)`
    bound = f"({r.keywords})" if r.keywords else ""
    if r.written and r.function:  # `_dot_general_batch_rule (partial of _dot_batch_rule :5869)`
        w, f = r.written, r.function
        where = "" if f.loc.file == w.loc.file else path(f.loc.file)
        text += (f"  -> {w.name} {path(w.loc.file)}:{w.loc.line} "
                 f"(partial of {f.name}{bound} {where}:{f.loc.line})")
    elif r.functions:
        text += "  -> " + ", ".join(f"{f.name}{bound if i == 0 else ''} "
                                    f"{path(f.loc.file)}:{f.loc.line}"
                                    for i, f in enumerate(r.functions))
    if r.condition:
        text += f"  (only if {r.condition})"
    if r.overridden_by is not None:  # a later registration in its file replaces it
        text += f"  (overridden by {path(r.loc.file)}:{r.overridden_by})"
    return text


SWITCHED_OFF = "switched off"  # a rule the call that makes the primitive switches off


def switched_off(o: SwitchedOff, path: PathFn) -> str:
    """`batching  PATH:977  `supports_batching` is False here (standard_linalg_primitive
    registers it only under its `if` at PATH:845)`: a rule the call that makes the
    primitive switches off, at that call."""
    helper = o.via.partition(" > ")[0]
    return (f"{o.kind.value}{platform_label(o)}  {path(o.loc.file)}:{o.loc.line}  "
            f"{o.condition} here ({helper} registers it only under its `if` at "
            f"{path(o.guard.file)}:{o.guard.line})")


# REPO-MAP's gaps: primitives lacking a rule their making call switches off.
SWITCHED_OFF_FAMILY = "switched off where made"
SWITCHED_OFF_DESCRIPTION = (
    "made by a helper called with the rule switched off (`linalg_primitive(..., "
    "supports_batching=False)`); `jaxmap locate NAME` shows the call and the helper's `if`")


def switched_off_heading(kind: str, platforms: str, name: str) -> str:
    """explain's first line for a rule missing by design."""
    return (f"switched off: {kind}{platforms} of primitive {name}, by design: the call "
            f"that makes it switches the rule off")


def platform_label(r: Rule | SwitchedOff) -> str:
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
    if d.alias_of:  # its public paths are that function's
        text += f"  (an alias of {d.alias_of}: its public paths are that function's)"
    return text


def reached(prims) -> str:
    """`  reaches  add_p, mul_p, ...`: the primitives a function reaches, a few."""
    if not prims:
        return ""
    names = ", ".join(r.label for r in prims[:_REACHED_SHOWN])
    more = f", ... {len(prims) - _REACHED_SHOWN} more (--json lists all with chains)" \
        if len(prims) > _REACHED_SHOWN else ""
    return f"\n  reaches  {names}{more}"


def kind_labels(rules) -> list[str]:
    """The kinds `rules` have, sorted, a Trace method's class's included: marked
    `jvp(trace)` where Trace methods alone give it (closed_call's `JVPTrace.process_call`)."""
    alone = trace_only(rules)
    return [kind + ("(trace)" if kind in alone else "")
            for kind in sorted({kind for r in rules for kind in rule_kinds(r)})]


def primitives_table(prims: list[Primitive], view: View) -> str:
    """A line a primitive: name, where it is defined, its rule kinds (`kind_labels`),
    and the platforms its lowerings serve (`default` for the rule registered without
    one)."""
    lines = []
    for p in prims:
        kinds = kind_labels(p.rules)
        platforms = sorted({platform for r in p.rules if r.kind == RuleKind.LOWERING
                            for platform in (r.platforms or ("default",))})
        where = f"{view.path(p.loc.file)}:{p.loc.line}"
        lines.append(f"{p.name:<32} {where:<48} {' '.join(kinds) or '-'}"
                     + (f"  [lowering: {' '.join(platforms)}]" if platforms else ""))
    return "\n".join(lines)


def index_report(report) -> str:
    """One line for an indexer.IndexReport."""
    state = "rebuilt" if report.rebuilt else ("updated" if report.changed else "up to date")
    solved = ", the call graph solved" if report.solved else ""
    count = report.diagnostics
    diagnostics = "no diagnostics" if not count else \
        f"{count} diagnostic{'s' if count > 1 else ''} (`index --json` lists them)"
    why = f" ({report.for_graph} of them again, for what the call graph reads, which a " \
        "first-phase question such as `locate` left out)" if report.for_graph else ""
    return (f"{state}: {report.files} files ({report.parsed} parsed{why}, {report.removed} "
            f"removed{solved}), {report.primitives} primitives, {report.rules} rules, "
            f"{diagnostics} -> {report.path}")


def snapshot_written(path: str, primitives: int) -> str:
    """Where `index --snapshot` wrote, and what reads it."""
    return (f"wrote {path}: a snapshot of {primitives} primitives (`jaxmap locate NAME "
            f"--jax VERSION` reads it from indexes/ or $JAXMAP_INDEXES)")


def graph_written(path: str, fmt: str, hood) -> str:
    """What `graph -o` wrote: a neighbourhood.Neighbourhood in format `fmt`."""
    return f"wrote {path} ({fmt}: {len(hood.nodes)} nodes, {len(hood.edges)} edges)"


def folders_created(folders: list[str]) -> str:
    """A line for each folder a command created to write into (it did not exist)."""
    return "\n".join(f"created the folder {folder} (it did not exist)" for folder in folders)


def skipped_files(skipped) -> str:
    """A line for each Python file the index left out, and why."""
    return "\n".join(f"jaxmap: skipped {path}: {reason}" for path, reason in skipped)


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
             report.platform_pair_precision),
            ("received rules found", report.received, report.received_recall),
            ("received rules extra", report.received_extra, report.received_extra_rate),
            ("received rule functions", report.received_functions,
             report.received_agreement)):
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
                          report.unconfirmed_functions),
                         ("missing received rules", report.missing_received),
                         ("extra received rules", report.extra_received),
                         ("received rule functions not confirmed",
                          report.unconfirmed_received)):
        if items and show:
            shown = ", ".join(items[:show]) + (" ..." if len(items) > show else "")
            lines.append(f"  {title}: {shown}")
    return "\n".join(lines)


def diff_side(argument: str, jax_version: str | None, is_root: bool) -> str:
    """How `diff` names one side: `jax 0.4.38` for a snapshot, else the root given."""
    return f"jax {jax_version}" if jax_version and not is_root else argument


# Each way `diff` tells a rule changed, in the order shown, with its section's words.
RULE_CHANGES = {"added": "added", "removed": "removed", "moved": "moved",
                "retargeted": "retargeted",
                "helper-changed": "registered through another helper",
                "registration-added": "with a registration added",
                "registration-removed": "with a registration removed"}


def rule_change_kind(change, platform: bool = True) -> str:
    """A diff.RuleChange's kind: `lowering[cuda]` (the platform unless `platform` is
    off); a trace rule's with its Trace class, `trace (JVPTrace)`."""
    where = f"[{change.platform}]" if platform and change.platform else ""
    return change.kind + where + (f" ({change.trace})" if change.trace else "")


def index_diff(diff) -> str:
    """A diff.IndexDiff: primitives added and removed, then rules by change."""
    lines = [f"{diff.old} -> {diff.new}",
             f"primitives added ({len(diff.added)}): {', '.join(diff.added) or '-'}",
             f"primitives removed ({len(diff.removed)}): {', '.join(diff.removed) or '-'}"]
    if diff.renamed:
        lines.append(f"primitives renamed ({len(diff.renamed)}): "
                     + ", ".join(f"{old} -> {new}" for old, new in diff.renamed))
    kinds = [rule_change_kind(c) for c in diff.rules]
    # Columns as wide as their longest entry (at least the usual width).
    name_width = max([28, *(len(c.primitive) for c in diff.rules)])
    kind_width = max([22, *map(len, kinds)])
    for change, title in RULE_CHANGES.items():
        rows = [(c, kind) for c, kind in zip(diff.rules, kinds) if c.change == change]
        lines.append(f"rules {title} ({len(rows)}):" + ("" if rows else " -"))
        for c, kind in rows:
            where = {"added": ", ".join(c.new), "removed": ", ".join(c.old)}.get(
                change, f"{', '.join(c.old)} -> {', '.join(c.new)}")
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
    shown = " and ".join(paths) if len(paths) <= 2 else f"{paths[0]} and {len(paths) - 1} pages"
    return (f"wrote {shown}: {len(data.primitives)} primitives, "
            f"{len(data.modules)} modules; the map is about {tokens} tokens")


def scaffold_notes(notes: list[str]) -> str:
    """The generator's notes, one `note:` line each."""
    return "\n".join(f"note: {line}" for line in notes)


def scaffold_summary(kind: str, name: str, changes, dry_run: bool) -> str:
    """`wrote 2 files for pallas 'my_kernel': NAME.py, test_NAME.py` after `jaxmap new`
    or `new-primitive` (kind `primitive`)."""
    state = "would write" if dry_run else "wrote"
    return (f"{state} {len(changes)} files for {kind} {name!r}: "
            + ", ".join(c.label for c in changes) + ("; dry run, nothing written" if dry_run
                                                     else ""))


def no_primitives(root: str) -> str:
    """The warning for a tree with no JAX primitives, where one was expected."""
    return (f"jaxmap: warning: no JAX primitives in {root}; give --root a JAX checkout or a "
            f"tree that defines primitives")


def build_stage(label: str, stage: int) -> str:
    """A progress bar's label: stage 0 parses files, stage 1 reads the call sites,
    stage 2 the modules' calls."""
    return f"jaxmap: {label} ({_STAGES[stage]})"


_STAGES = ("parsing", "the call sites", "the call graph")
# The same stages (indexing/stages.py) in a server's progress message, and what each counts.
_SERVED_STAGES = (("parsing", "files"), ("call sites", "read"), ("call graph", "modules"))


def build_progress(stage: int, done: int, total: int) -> str:
    """A server's progress message for its build: `call graph: 120 of 617 modules`, or
    the stage alone before it counts."""
    name, counted = _SERVED_STAGES[stage]
    return f"{name}: {done:,} of {total:,} {counted}" if total else name


_IN_WORK_CHARS = 40  # of the file in work a progress bar shows after it


def build_in_work(path: str | None) -> str | None:
    """The file in work, after a progress bar: its path, cut at the front to fit."""
    if path is None or len(path) <= _IN_WORK_CHARS:
        return path
    return "..." + path[3 - _IN_WORK_CHARS:]


def build_started(label: str, root: str, count: int, stage: int = 0) -> str:
    """Stage 0 parses files; stage 1 reads the call sites, each call twice (without
    and with what parameters receive); stage 2 the call graph of modules."""
    if stage == 2:
        return f"jaxmap: {label} {root}: the call graph of {count} modules..."
    if stage == 1:
        return f"jaxmap: {label} {root}: the call sites, {count // 2} calls read twice..."
    return f"jaxmap: {label} {root}: parsing {count} files..."


def build_done(label: str, count: int, seconds: float, stage: int = 0) -> str:
    if stage == 2:
        return f"jaxmap: {label}: done, the call graph of {count} modules in {seconds:.1f} s"
    if stage == 1:
        return f"jaxmap: {label}: done, {count // 2} call sites read in {seconds:.1f} s"
    return f"jaxmap: {label}: done, {count} files parsed in {seconds:.1f} s"


def build_slow(label: str, path: str, seconds: float, stage: int, done: int,
               total: int | None) -> str:
    """A file in work a long time, named while the build goes on."""
    where = f"the call graph, {done} of {total} modules done" if stage == 2 \
        else f"the call sites, {done} of {total} readings done" if stage == 1 \
        else f"parsing, {done} of {total} files done"
    return f"jaxmap: {label}: still on {path} after {seconds:.0f} s ({where})"


def served_anyway(error: str) -> str:
    """The error line of a --root the MCP server cannot index, said as it starts."""
    return f"{error}; serving anyway: every tool call answers with this error"


def mcp_help(tools: list[str]) -> str:
    """`jaxmap mcp --help`: what it serves."""
    return (f"Serve {', '.join(tools[:-1])} and {tools[-1]} to an MCP client over stdio, "
            f"with the index kept open (needs jaxmap[mcp]).")


# Commands users ask for by another name, and the ones that answer them.
_ASKED_FOR = {
    "rules": "`jaxmap locate PRIM` lists a primitive's rules, "
             "`jaxmap primitives --missing KIND` those lacking one",
    "find": "`jaxmap locate NAME` says where NAME is defined",
    "where": "`jaxmap locate NAME` says where NAME is defined",
    "callees": "`jaxmap calls NAME` lists what NAME calls",
    "references": "`jaxmap callers NAME` lists what calls NAME",
}


def unknown_command(name: str, near: list[str]) -> str:
    """No command `name`: the one answering what users ask by it, else the `near` ones."""
    hint = _ASKED_FOR.get(name) or (f"did you mean {' or '.join(near)}?" if near else "")
    return f"no command {name!r}" + (f"; {hint}" if hint else "")


def usage_error(message: str, command_path: str) -> str:
    """A usage error, pointing at the help of the command it is about."""
    return f"{message} (see {command_path} --help)"


def option_before_command(option: str) -> str:
    """An option the group does not take, given with no command after it."""
    return (f"{option} is an option of a command, and no command follows it: "
            f"jaxmap COMMAND ... {option}")


def read_from(what: str) -> str:
    """The end of `--help` for a command whose `what` (TEXT) may come from elsewhere."""
    return f"{what}: - reads it from stdin; the path of an existing file reads that file."


def reading_stdin(what: str) -> str:
    """What a command that reads `-` from a terminal says it waits for."""
    return f"jaxmap: reading the {what} from stdin; end it with Ctrl-D"


def empty_stdin(what: str) -> str:
    """Why a `-` whose standard input held nothing is refused."""
    return f"- reads the {what} from stdin, and stdin held nothing"


def output_is_directory(path: str) -> str:
    """Why an output FILE that names a directory is refused (even with --force)."""
    return f"{path} is a directory, not a file to write; give a file's path (nothing was written)"


def unreadable_input(path: str, error: OSError) -> str:
    """Why the file given for a command's text cannot be read."""
    return f"cannot read {path}: {error.strerror or error}; check its permissions"


def missing_input(path: str) -> str:
    """A command's text given as what reads as a file's path that names no file."""
    what = "is a directory" if os.path.isdir(path) else "names no file"
    return (f"{path} {what}; give the path of a file holding the text, `-` to read it "
            "from standard input, or the text itself")


def skill_written(out: str, folder: dict[str, str | bytes]) -> str:
    """What `skill` wrote: the folder, then how many files under each part of it."""
    parts: dict[str, int] = {}
    for path in folder:
        top = path.split("/")[0]
        parts[top] = parts.get(top, 0) + 1
    listed = ", ".join(f"{top}/ ({n})" if n > 1 or "." not in top else top
                       for top, n in parts.items())
    return f"wrote the skill folder {out}: {listed}"


_HEADINGS = {"binds": "{n} {function} {reach} {targets}",
             # "can": some arguments bind it, not all (`path` shows the calls' guards)
             "traced": "{n} public {function} can call {targets} when traced",
             "callers": "{n} {caller} of {targets}",
             "calls": "{n} {callee} of {targets}"}
_BODIES = {"module": " (top level)", "class": " (class body)"}  # callers that are not functions
# The groups listed after the certain answers, in order: their mark, then what a line of
# each is, for callers and for calls, said once as the group's legend.
_GROUPS = {
    "external": ("~ ", "", "calls outside the tree"),
    "handed": ("^ ", "hand it on, not calling it there (`jit(f)`, `partial(f)`, an argument)",
               "handed on, not called there (`jit(f)`, `partial(f)`, an argument)"),
    "through": ("* ", "may call it: each calls what a value holds (a dispatch, a parameter)",
                "may be called: each a call of what a value holds (a dispatch, a parameter)"),
    "dispatch": ("> ", "may call it through a method it overrides: each calls a base class's "
                 "method of its name, on a value that may be of its class (dynamic dispatch)",
                 ""),
    "unresolved": ("? ", "may be calls of it: unresolved calls whose text ends with its name",
                   "calls the resolver could not name"),
}

# How the heading counts a group that may not be answers: (one, more than one).
_MORE = {("callers", "handed"): ("hands it on", "hand it on"),
         ("callers", "through"): ("may call it through a value",) * 2,
         ("callers", "dispatch"): ("may call it through a method it overrides",) * 2,
         ("calls", "handed"): ("handed on",) * 2,
         ("calls", "through"): ("may be called through a value",) * 2}


def _alias_notes(answer) -> list[str]:
    """Of each target of `callers` or `calls` that is a variable: that its callers are
    the calls of its name, which the callers of what it names list too; of each that
    has other names (`also`), those."""
    notes = []
    for label, names in answer.aliases:
        naming = f" naming {', '.join(names)}" if names else ""
        if answer.direction == "callers":
            also = f", which the callers of {names[0]} list too" if len(names) == 1 else ""
            notes.append(f"  ({label} is a variable{naming}: its callers are the calls of "
                         f"its name{also})")
        else:
            notes.append(f"  ({label} is a variable{naming}: calling it calls "
                         f"{'that' if names else 'what it holds'})")
    return notes + [f"  ({label} is also named {', '.join(names)}: aliases of it)"
                    for label, names in answer.also]


def _group(r) -> str:
    """The group of `_GROUPS` a call answer's `r` is listed in ("" for a certain one)."""
    if r.kind in ("unresolved", "external"):
        return r.kind
    if r.dispatch:
        return "dispatch"
    return "through" if r.through else "handed" if r.handed else ""


def call_answer(answer, view: View) -> str:
    """A callgraph.CallAnswer: a heading, the certain answers, then each group that may
    not be one (`_GROUPS`) after its legend. Callers and callees are at the line of the
    call, a function callee with where it is defined after it."""
    groups: dict[str, list] = {"": [], **{name: [] for name in _GROUPS}}
    for r in answer.found:
        groups[_group(r)].append(r)
    lines = [_call_heading(answer, groups), *_alias_notes(answer)]
    if answer.traced and not answer.chains and len(groups[""]) > _SCREEN:
        lines += _by_module(groups.pop(""), answer.targets)
    for name, found in groups.items():
        mark, legend = ("  ", "") if not name else \
            (_GROUPS[name][0], _GROUPS[name][1 if answer.direction == "callers" else 2])
        if found and legend:
            lines.append(f"{mark}{legend}:")
        for i, r in enumerate(found):
            if r.left_out and not (i and found[i - 1].left_out):
                lines.append(f"{mark}{_left_out_legend(found)}")
            lines.append(mark + _call_line(r, answer.direction, view))
    if answer.others:
        lines.append(f"and {answer.others} more reach it: {_others(answer.others_why)}; "
                     "--all lists them")
    for i, reg in enumerate(answer.registrations):
        label = "runs as" if i == 0 else ""
        lines.append(f"  {label:<8} the {reg.kind} rule of {reg.primitive}"
                     f"{_for_platforms(reg)}, registered at "
                     f"{view.path(reg.file)}:{reg.line}  ({reg.function})")
    return "\n".join(lines)


def _for_platforms(reg) -> str:
    """` for cpu, tpu`: the platforms a registration names; a lowering that names none
    is the default, which serves any platform without one of its own."""
    if reg.platforms:
        return f" for {', '.join(reg.platforms)}"
    return " (default: any platform without its own)" if reg.kind == RuleKind.LOWERING else ""


# More chains than this do not fit a screen: `binds` then lists the names by module.
_SCREEN, _WIDTH = 40, 100


def _by_module(found, targets: tuple[str, ...]) -> list[str]:
    """The default answer of `binds` as names after their module, wrapped, each module
    once in the answer's order (the module of the most direct function first, each
    module's names most direct first); then how to see a chain."""
    modules: dict[str, list[str]] = {}
    for r in found:
        module, _, name = r.label.rpartition(".")
        modules.setdefault(module, []).append(name)
    lines = []
    for module, names in modules.items():
        line = f"  {module} ({len(names)}):"
        for i, name in enumerate(names):
            word = f" {name}{',' if i < len(names) - 1 else ''}"
            if len(line) + len(word) > _WIDTH:
                lines.append(line)
                line = "   "
            line += word
        lines.append(line)
    target = targets[0].removesuffix(".bind").rpartition(".")[2] if targets else "PRIM"
    lines.append(f"  (most direct first; each one's chain: jaxmap path MODULE.NAME {target}; "
                 f"all here: --chains)")
    return lines


def unparsed_note(diagnostic: str) -> str:
    """What a call-graph command says on stderr of a file Python's parser refuses."""
    return f"jaxmap: {diagnostic}, so the answer may lack what follows it"


def read_as_note(answer, view: View) -> str | None:
    """What a `binds` query that is not exactly one primitive's name was read as
    (the CLI says it on stderr): the primitives, and the functions it also names."""
    reading = answer.read_as  # (None for callers and calls)
    if reading is None or reading.exact:
        return None
    prims = ", ".join(f"{p.variable or p.name} ({view.path(p.file)}:{p.line})"
                      for p in reading.primitives)
    many = len(reading.primitives) > 1
    line = f"jaxmap: read {reading.query!r} as the primitive{'s' if many else ''} {prims}"
    if many:
        line += ", alike named: their answers together"
    if reading.functions:
        first, more = reading.functions[0], len(reading.functions) - 1
        line += f"; not the function {first}{f' (or {more} more)' if more else ''}" \
                f", whose primitives `jaxmap locate {reading.query}` lists"
    return line


def _call_heading(answer, groups: dict[str, list]) -> str:
    """`N callers of X, each at its first call`, N counting the certain answers; then
    how many more may be ones, and how many calls the index could not name."""
    named = len(groups[""]) + len(groups["external"])
    one = named == 1
    heading = _HEADINGS["traced" if answer.traced else answer.direction].format(
        n=named or "no", targets=", ".join(answer.targets),
        reach="reaches" if one else "reach",
        **{word: word if one else word + "s" for word in ("function", "caller", "callee")})
    if answer.direction != "binds" and named:
        heading += ", at its first call" if one else ", each at its first call"
    for name in ("handed", "through", "dispatch"):
        if groups[name]:
            count = len(groups[name])
            heading += f"; {count} more {_MORE[answer.direction, name][count > 1]}"
    if answer.unresolved:  # never a bare "no callers" where some may be unnamed
        heading += f", and {answer.unresolved} call{'' if answer.unresolved == 1 else 's'}" \
                   " the index could not name"
        if answer.direction == "binds":  # say which: binds lists none of them
            heading += " that may call a function reaching it (their text ends with " \
                       "its name)"
    return heading


# Before the functions `binds --all` lists after its default answer, each with its
# reason (callgraph.LEFT_OUT) in parentheses: what each reason that occurs means.
_LEFT_OUT_MEANS = {
    "impl_rule": "impl_rule or lowering_rule (through a rule another primitive's bind runs)",
    "interpreter": "interpreter",
    "guarded_call": "guarded_call (a call under `if x is None:` its callers pass x to, or "
                    "`if m == 'word':` or `in (...)`, a word it does not allow)",
    "private": "private (binds it when traced)"}


def _left_out_legend(found) -> str:
    """The legend of the reasons some of `found` are left out of the default answer for."""
    reasons = {_reason(r.left_out) for r in found if r.left_out}
    means = ", ".join(means for why, means in _LEFT_OUT_MEANS.items() if why in reasons)
    return f"left out of the default answer, each (why): {means}:"


def _reason(left_out: str) -> str:
    """A reason of LEFT_OUT as the text tells it: a rule of either kind is one."""
    return "impl_rule" if left_out == "lowering_rule" else left_out


# How the last line of `binds` counts the functions left out for each reason (LEFT_OUT).
_LEFT_OUT_WORDS = {
    "impl_rule": "through other primitives' rules",
    "interpreter": "through interpreters",
    "guarded_call": "through calls under `if x is None:` their callers pass x to (or `if m "
                    "== 'word':` or `in (...)`, a word it does not allow)",
    "private": "private"}


def _others(counts: tuple[tuple[str, int], ...]) -> str:
    """`12 through other primitives' rules, 3 private`: the rules' two kinds as one."""
    merged: dict[str, int] = {}
    for why, n in counts:
        words = _LEFT_OUT_WORDS[_reason(why)]
        merged[words] = merged.get(words, 0) + n
    return ", ".join(f"{n} {words}" for words, n in merged.items())


def _call_line(r, direction: str, view: View) -> str:
    """One answer: its name, the place of its call (binds: of its definition, and why
    the default answer leaves it out), and its chain; a function callee also where it
    is defined."""
    path, chain = view.path, _chain_text(r.chain, r.steps)
    if direction == "binds" or r.call_line is None:
        why = f"  ({r.left_out})" if r.left_out else ""
        return f"{r.label}  {path(r.file)}:{r.line}{why}  [{chain}]"
    call_file = r.call_file or r.file
    where = f"{path(call_file)}:{r.call_line}"
    if direction == "calls" and r.kind == "variable":  # `_zeros`, beside what it names
        return f"{r.label}  {where}  (a variable, defined at " \
               f"{f'line {r.line}' if r.file == call_file else f'{path(r.file)}:{r.line}'})" \
               f"  [{chain}]"
    if direction == "callers" or r.kind not in ("function", "class"):
        overrides = f"  (through {r.dispatch}, which it overrides)" if r.dispatch else ""
        return f"{r.label}{_BODIES.get(r.kind, '') if direction == 'callers' else ''}" \
               f"  {where}{overrides}  [{chain}]"
    defined = f"line {r.line}" if r.file == call_file else f"{path(r.file)}:{r.line}"
    return f"{r.label}  {where}  (defined at {defined})  [{chain}]"


def _chain_text(names, steps) -> str:
    """`a -calls-> b -binds-> p.bind`: each name, and the words of each step (a chain
    without them, as `callers` and `calls` give, joined by `->`)."""
    if not steps:
        return " -> ".join(names)
    return names[0] + "".join(f" -{how}-> {name}" for how, name in zip(steps, names[1:]))


def path_refusal(answer) -> str | None:
    """Why a path.PathAnswer joins nothing, in a line, saying what SOURCE and TARGET
    were read as where that is not simply the name asked (`sum`: three functions, not
    jax.numpy.sum, the source); None where a chain joins them."""
    if answer.chains:
        return None
    source, target = answer.asked
    left = (f"; {target} also names {', '.join(answer.not_target)}, the source itself, "
            "left out" if answer.not_target else "")
    through = ("; one joins them through calls of what a value may hold (marked * by "
               "`calls` and `callers`), which path and binds do not follow"
               if answer.through_only else "")
    return (f"no call chain from {_read_as(source, answer.source)} to "
            f"{_read_as(target, answer.target)} within {answer.depth} steps{left}{through}")


_READ_AS_LISTED = 6  # the definitions a refusal names of one that a name was read as


def _read_as(name: str, labels: tuple[str, ...]) -> str:
    """`name`, with what it was read as where that is several definitions (`sum`: 3,
    each named) or one of another name; not where it is one of that name (`jnp.sum`)."""
    if len(labels) == 1:
        same = labels[0].rpartition(".")[2] == name.rpartition(".")[2]
        return name if same else f"{name} (read as {labels[0]})"
    named = ", ".join(labels[:_READ_AS_LISTED])
    more = f" and {len(labels) - _READ_AS_LISTED} more" if len(labels) > _READ_AS_LISTED else ""
    return f"{name} (read as {len(labels)} definitions: {named}{more})"


def path_chains(answer, view: View) -> str:
    """A path.PathAnswer: each chain as its steps, one a line, each saying how it
    happens, at the line where it does; nothing where there is none (`path_refusal`
    says why)."""
    if not answer.chains:
        return ""
    count = len(answer.chains)
    plural = "s" if count > 1 else ""
    # binds' chain, shown first, may be longer than the shortest ones after it
    shortest = "" if len({len(steps) for steps in answer.chains}) > 1 else "shortest "
    lines = [f"{count} {shortest}call chain{plural} from {', '.join(answer.source)} to "
             + ", ".join(answer.target)
             + (" (the first as `binds` gives it, then the shortest)" if not shortest else "")]
    for steps in answer.chains:
        lines.append(f"  {steps[0].caller}")
        lines += [f"    -{step.how}-> {step.callee}  {view.path(step.file)}:{step.line}"
                  for step in steps]
    if answer.left_out and answer.left_out != "private":  # (which binds when traced)
        lines.append(f"(the first is not how it binds when traced: `binds` leaves "
                     f"{answer.chains[0][0].caller} out of its default answer, "
                     f"{_LEFT_OUT_MEANS[_reason(answer.left_out)]})")
    if not answer.runs:
        lines.append("(no shortest chain runs as a whole: each passes a call under "
                     "`if x is None:` (or a word test) that its callers' arguments never "
                     "take)")
    return "\n".join(lines)


def coverage_cells(matrix, by_trace: bool = True) -> tuple[list, list, list]:
    """A coverage.Coverage as cells: the header, a row a primitive, the totals; with
    `by_trace`, a last column `by_trace`: the columns whose count holds a Trace method
    (`jvp` for closed_call's `JVPTrace.process_call`)."""
    last = ["by_trace"] if by_trace else []
    header = ["primitive", "module", *matrix.kinds, *last]
    body = [[name, module, *(counts.get(k, 0) for k in matrix.kinds),
             *([" ".join(traced)] if by_trace else [])]
            for name, module, counts, traced in matrix.rows]
    footer = ["total", f"{len(matrix.rows)} primitives",
              *(matrix.totals.get(k, 0) for k in matrix.kinds), *([""] if by_trace else [])]
    return header, body, footer


def coverage_table(matrix, view: View) -> str:
    """A coverage.Coverage as aligned columns, totals last; `by_trace` only where a row
    has a Trace method (the CSV has it always)."""
    header, body, totals = coverage_cells(matrix, any(row[3] for row in matrix.rows))
    rows = [header, *body, totals]
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(str(cell).ljust(w) for cell, w in zip(row, widths)).rstrip()
                     for row in rows)


WIDTH = 88


def ladder(ladder, view: View) -> str:
    """The ladder as a short guide: each rung, how to start it, where it lives."""
    version = f"jax {ladder.jax_version}" if ladder.jax_version else "this tree"
    lines = [f"The escalation ladder for {version} ({ladder.root}).",
             "Climb only as far as the problem needs; each rung costs more to keep.", ""]
    for step in ladder.steps:
        rung = step.rung
        lines.append(f"{rung.number}. {rung.title}")
        lines += _items("use when", rung.use_when)
        lines += _items("not when", rung.avoid_when)
        lines += _items("ask", rung.ask)
        lines += _items("start", step.commands, wrap=False)
        lines += _items("lives in", [_ladder_place(p) for p in step.places], wrap=False)
        lines.append("")
    lines.append("Before climbing a rung, check:")
    lines += [f"  [ ] {item}" for item in ladder.checklist]
    return "\n".join(lines)


def _items(label: str, items, wrap: bool = True) -> list[str]:
    """`label:` then one item a line; prose wrapped at WIDTH under its own start."""
    head = f"   {label + ':':<10}"
    pad = " " * len(head)
    width = WIDTH if wrap else 10_000
    return [line for i, item in enumerate(items) for line in textwrap.wrap(
        item, width, initial_indent=head if i == 0 else pad, subsequent_indent=pad + "  ",
        break_on_hyphens=False)]


def _ladder_place(place) -> str:
    where = f"{place.file}:{place.line}" if place.file else "(not in this tree)"
    return f"{place.name}  {where}"

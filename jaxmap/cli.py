"""`jaxmap` commands: parse options, call one library function, render, map errors.

Heavy modules (tree-sitter, networkx, jax) are imported inside the commands that
need them, so `jaxmap locate` and `--help` start fast.
"""

from __future__ import annotations

import os
import sys

import click

from jaxmap.errors import JaxmapError, NotFound, describe, exit_code

_ROOT_HELP = ("Tree to index: a JAX checkout or any directory of Python code "
              "[default: $JAXMAP_ROOT, else the installed jax package].")


def _root_option(f):
    return click.option("--root", type=click.Path(file_okay=False),
                        default=None, help=_ROOT_HELP)(f)


def _absolute_option(f):
    return click.option("--absolute", is_flag=True,
                        help="Print absolute paths instead of root-relative ones.")(f)


def _platform_option(f):
    return click.option("--platform", default=None, metavar="PLATFORM",
                        help="Only the lowerings that serve this platform (cpu, cuda, rocm, "
                             "tpu, or a Pallas backend): its own, else the default.")(f)


def _json_option(f):
    return click.option("--json", "as_json", is_flag=True,
                        help="Print one JSON document (schema in the README).")(f)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="jaxmap")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Where everything in JAX's internals is defined: primitives, their rules, definitions."""
    ctx.ensure_object(dict)["debug"] = debug  # main() reads it to decide how errors show


@cli.command()
@_root_option
@click.option("--rebuild", is_flag=True, help="Discard the index and parse every file again.")
@click.option("--snapshot", "snapshot_file", default=None, metavar="FILE",
              help="Also write a compact snapshot of the primitive index (.json.gz).")
@click.option("--force", is_flag=True, help="Overwrite an existing snapshot FILE.")
@_json_option
def index(root: str | None, rebuild: bool, snapshot_file: str | None, force: bool,
          as_json: bool) -> None:
    """Build or refresh the index (only changed files are parsed again)."""
    from jaxmap.build.indexer import build_index
    from jaxmap.render import text

    if snapshot_file:
        _check_output(snapshot_file, force)
    with _progress("indexing") as progress:
        report = build_index(root, rebuild=rebuild, progress=progress)
    messages, call_counts = [], {}
    if snapshot_file or as_json:
        from jaxmap.store.read import open_file

        with open_file(report.index) as idx:  # just built: no need to check it again
            if snapshot_file:
                _write_snapshot(idx, snapshot_file)
            if as_json:
                messages, call_counts = idx.diagnostics(), idx.call_counts()
    if as_json:
        from jaxmap.render import json as render_json

        click.echo(render_json.index_document(report, messages, call_counts))
        return
    click.echo(text.index_report(report))


@cli.command()
@click.argument("name")
@_root_option
@click.option("--jax", "jax_version", default=None, metavar="VERSION",
              help="Answer from the committed snapshot of this jax release (see indexes/).")
@click.option("--kind", default=None, metavar="KIND",
              help="Only this: a rule kind (jvp, lowering, ...) or a result kind "
                   "(primitive, function, class, variable, module).")
@_platform_option
@_json_option
@_absolute_option
def locate(name: str, root: str | None, jax_version: str | None, kind: str | None,
           platform: str | None, as_json: bool, absolute: bool) -> None:
    """Where NAME is defined; for a primitive, every rule registered for it."""
    from jaxmap.commands import locate as locate_mod
    from jaxmap.commands.lookup import RESULT_KINDS, RULE_KINDS

    if kind is not None and kind not in RULE_KINDS + RESULT_KINDS:
        raise click.BadParameter(f"{kind!r} is not one of: {', '.join(RULE_KINDS + RESULT_KINDS)}",
                                 param_hint="--kind")
    if jax_version and (root or absolute):
        raise click.UsageError("--jax answers from a snapshot, which has no files on disk: "
                               "it takes neither --root nor --absolute")
    with _open_version(jax_version) if jax_version else _open(root) as idx:
        found = locate_mod.locate(idx, name, kind, platform)
        path = _path_fn(idx.root, absolute)
        if as_json:
            from jaxmap.render import json as render_json

            click.echo(render_json.located_document(idx.root, idx.jax_version, found, path))
        else:
            from jaxmap.render import text

            click.echo(text.located(found, path, _source_line(idx.root)))


@cli.command()
@_root_option
@click.option("--missing", multiple=True, metavar="KIND",
              help="Only primitives without a rule of this kind (repeatable: none of them).")
@click.option("--has", multiple=True, metavar="KIND",
              help="Only primitives with a rule of this kind (repeatable: all of them).")
@_platform_option
@_json_option
@_absolute_option
def primitives(root: str | None, missing: tuple[str, ...], has: tuple[str, ...],
               platform: str | None, as_json: bool, absolute: bool) -> None:
    """Every primitive with its rules."""
    from jaxmap.commands.lookup import check_rule_kinds, select

    check_rule_kinds(missing=missing, has=has)
    with _open(root) as idx:
        prims = select(idx.primitives(), missing, has, platform)
        path = _path_fn(idx.root, absolute)
        if as_json:
            from jaxmap.render import json as render_json

            click.echo(render_json.primitives_document(idx.root, idx.jax_version, prims, path))
        else:
            from jaxmap.render import text

            click.echo(text.primitives_table(prims, path))


@cli.command()
@_root_option
@_json_option
@click.option("--show", default=20, show_default=True, type=click.IntRange(min=0),
              help="How many missing/extra to list.")
def verify(root: str | None, as_json: bool, show: int) -> None:
    """Compare the static index with the live registries of the installed jax."""
    from jaxmap.commands import verify as verify_mod
    from jaxmap.render import json as render_json
    from jaxmap.render import text

    verify_mod.check_root(root)  # before indexing a tree the runtime cannot speak for
    with _open(root) as idx:
        report = verify_mod.verify(idx)
    click.echo(render_json.verify_document(report) if as_json
               else text.verify_summary(report, show))


@cli.command()
@click.argument("name", required=False)
@_root_option
@click.option("--depth", default=1, show_default=True, type=click.IntRange(min=0),
              help="Steps from NAME to include.")
@click.option("--format", "fmt", default="text", show_default=True,
              type=click.Choice(["text", "json", "dot", "mermaid", "graphml", "svg", "png"]),
              help="svg and png are drawn by Graphviz (`dot`), where it is installed.")
@click.option("-o", "--output", default=None, metavar="FILE", help="Write to FILE.")
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
@click.option("--central", default=None, metavar="N", type=click.IntRange(min=1),
              help="Instead of NAME: the N most central modules (PageRank over imports).")
@_json_option
def graph(name: str | None, root: str | None, depth: int, fmt: str, output: str | None,
          force: bool, central: int | None, as_json: bool) -> None:
    """The neighbourhood of NAME (a primitive, function or module) over every edge kind
    (defines, imports, has_rule, implemented_by, binds, calls), or the most central
    modules."""
    if not name and not central:
        raise click.UsageError("give a NAME, or --central N")
    fmt = "json" if as_json else fmt
    if fmt in ("svg", "png") and not output:
        raise click.UsageError(f"--format {fmt} writes a picture: give -o FILE")
    if output:
        _check_output(output, force)
    from jaxmap.render import json as render_json
    from jaxmap.render import text

    if central:
        from jaxmap.commands import central as graph_mod

        with _open(root) as idx:
            rows = graph_mod.central_modules(idx, central)
        click.echo(render_json.ranking_document(rows) if fmt == "json" else text.ranking(rows))
        return
    from jaxmap.commands import neighbourhood as neighbours
    from jaxmap.render import graphs

    with _open(root) as idx:
        hood = neighbours.neighbourhood(idx, name, depth)
    caveat = graphs.caveat(hood, fmt)
    if caveat:
        click.echo(caveat, err=True)
    if output:
        from jaxmap.store import atomic

        atomic.write(output, graphs.picture(hood, fmt) if fmt in graphs.PICTURE_FORMATS
                     else graphs.render(hood, fmt) + "\n")
        return
    click.echo(graphs.render(hood, fmt))


# -- the call graph: binds, callers, calls, coverage ------------------------------------


def _call_command(direction: str, name: str, root, depth, as_json: bool, absolute: bool,
                  **options) -> None:
    """One call-graph question (callgraph.binds/callers/calls), rendered."""
    from jaxmap.commands import callgraph
    from jaxmap.render import calls as render_calls

    with _open(root) as idx:
        answer = getattr(callgraph, direction)(idx, name, depth, **options)
        path = _path_fn(idx.root, absolute)
        click.echo(render_calls.call_document(idx.root, answer, path) if as_json
                   else render_calls.call_answer(answer, path))


@cli.command()
@click.argument("prim")
@_root_option
@click.option("--depth", default=None, type=click.IntRange(min=0), metavar="N",
              help="At most N calls away from the `.bind` [default: any].")
@click.option("--public", is_flag=True, help="Only functions of the public API.")
@_json_option
@_absolute_option
def binds(prim: str, root, depth, public: bool, as_json: bool, absolute: bool) -> None:
    """Every function that reaches primitive PRIM, public API first, with its chain."""
    _call_command("binds", prim, root, depth, as_json, absolute, public=public)


def _walk_options(depth_help: str):
    """NAME, --root, --depth N (one level by default), --json, --absolute."""
    def decorate(f):
        for option in reversed((
                click.argument("name"), _root_option,
                click.option("--depth", default=1, show_default=True, metavar="N",
                             type=click.IntRange(min=1), help=depth_help),
                _json_option, _absolute_option)):
            f = option(f)
        return f
    return decorate


@cli.command()
@_walk_options("Callers of callers, N levels up.")
def callers(name: str, root, depth: int, as_json: bool, absolute: bool) -> None:
    """Functions, class bodies and module top levels that call NAME, and the unresolved
    calls that may be to it."""
    _call_command("callers", name, root, depth, as_json, absolute)


@cli.command()
@_walk_options("Callees of callees, N levels down.")
def calls(name: str, root, depth: int, as_json: bool, absolute: bool) -> None:
    """What NAME calls: functions, primitives bound, external and unresolved calls."""
    _call_command("calls", name, root, depth, as_json, absolute)


@cli.command()
@_root_option
@click.option("--kind", "kinds", multiple=True, metavar="KIND",
              help="Only this rule kind's columns (repeatable).")
@click.option("--missing", multiple=True, metavar="KIND",
              help="Only primitives without a rule of this kind (repeatable).")
@_platform_option
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]),
              default="table", show_default=True)
@_json_option
def coverage(root, kinds, missing, platform, fmt: str, as_json: bool) -> None:
    """The matrix of primitives x rule kinds (lowerings per platform), with totals."""
    from jaxmap.commands import coverage as coverage_mod
    from jaxmap.commands.lookup import check_rule_kinds
    from jaxmap.render import calls as render_calls

    check_rule_kinds(kind=kinds, missing=missing)
    with _open(root) as idx:
        matrix = coverage_mod.coverage(idx.primitives(), kinds, missing, platform)
    click.echo(render_calls.coverage(matrix, "json" if as_json else fmt))


# -- explain --------------------------------------------------------------------------


@cli.command()
@click.argument("text")
@_root_option
@_json_option
@_absolute_option
def explain(text: str, root, as_json: bool, absolute: bool) -> None:
    """Where a JAX error message TEXT is raised (`-` reads it, or a whole traceback,
    from stdin); for a missing rule, where and how to add it."""
    from jaxmap.commands import explain as explain_mod
    from jaxmap.render import explained

    if text == "-":
        text = sys.stdin.read()
    if not text.strip():
        raise click.UsageError("give the message to explain, or - to read it from stdin")
    with _open(root) as idx:
        found = explain_mod.explain(idx, text)
        path = _path_fn(idx.root, absolute)
        click.echo(explained.document(idx.root, found, path) if as_json
                   else explained.text(found, path))


@cli.command("new-primitive")
@click.argument("name")
@click.option("--out", type=click.Path(), default=None,
              help="Directory for NAME.py and test_NAME.py [default: .].")
@click.option("--in-tree", is_flag=True, help="Add the primitive inside the JAX tree at --root.")
@click.option("--root", type=click.Path(file_okay=False), default=None,
              help="With --in-tree: the JAX checkout to edit. Otherwise: the tree whose "
                   "primitive names NAME must not clash with [default: the installed jax].")
@click.option("--module", default=None,
              help="With --in-tree: implementation module [default: jax/_src/lax/NAME.py].")
@click.option("--tests-dir", type=click.Path(file_okay=False), default=None,
              help="With --in-tree: where NAME_test.py goes [default: ROOT/tests].")
@click.option("--style", type=click.Choice(["classic", "hijax"]), default="classic",
              show_default=True)
@click.option("--arity", type=int, default=1, show_default=True, help="Number of array operands.")
@click.option("--linear", is_flag=True, help="Linear in its operands: deflinear + a transpose rule.")
@click.option("--multiple-results", is_flag=True, help="Two results instead of one.")
@click.option("--params", default=None, metavar="KEY=TYPE,...",
              help="Static parameters; TYPE is float, int, bool or str.")
@click.option("--platform", "platforms", multiple=True,
              help="Also register a lowering for this platform (cpu, cuda, rocm, tpu); repeatable.")
@click.option("--lowering", type=click.Choice(["lower_fun", "hlo"]), default="lower_fun",
              show_default=True, help="mlir.lower_fun of a jnp reference, or StableHLO ops.")
@click.option("--no-tests", is_flag=True, help="Do not generate a test module.")
@click.option("--dry-run", is_flag=True, help="Print the diff; write nothing.")
@click.option("--force", is_flag=True, help="Overwrite files that exist.")
@_json_option
def new_primitive(name, out, in_tree, root, module, tests_dir, style, arity, linear,
                  multiple_results, params, platforms, lowering, no_tests, dry_run, force,
                  as_json):
    """Generate a primitive NAME with every rule registered, and tests that pass."""
    from jaxmap import scaffold
    from jaxmap.render import text

    spec = scaffold.PrimitiveSpec(
        name=name, arity=arity, linear=linear, multiple_results=multiple_results,
        params=scaffold.parse_params(params), platforms=tuple(platforms), style=style,
        lowering=lowering, tests=not no_tests)
    if in_tree:
        changes = scaffold.generate(spec, in_tree_root=root or os.curdir, module=module,
                                    tests_dir=tests_dir)
    else:
        changes = scaffold.generate(spec, out=out, index_root=root, module=module,
                                    tests_dir=tests_dir)
    if not dry_run:
        scaffold.check(changes, force=force)  # refuse before showing a diff we won't apply
    if as_json:
        from jaxmap.render import json as render_json

        if not dry_run:
            scaffold.apply(changes, force=force)
        click.echo(render_json.scaffold_document(name, changes, scaffold.file_diffs(changes),
                                                 dry_run))
        return
    click.echo(scaffold.unified_diff(changes), nl=False)
    if dry_run:
        click.echo(text.scaffold_dry_run(changes), err=True)
        return
    written = scaffold.apply(changes, force=force)
    click.echo(text.scaffold_written(name, changes, written), err=True)


# -- the escalation ladder: `jaxmap new KIND NAME`, `jaxmap ladder` --------------------

@cli.command("new")
@click.argument("kind", metavar="KIND")
@click.argument("name")
@click.option("--out", type=click.Path(), default=None,
              help="Directory for NAME.py, test_NAME.py and what KIND needs [default: .].")
@click.option("--style", default=None,
              help="custom-vjp and primitive: hijax instead of the classic form.")
@click.option("--dry-run", is_flag=True, help="Print the diff; write nothing.")
@click.option("--force", is_flag=True, help="Overwrite files that exist.")
@_json_option
def new(kind, name, out, style, dry_run, force, as_json):
    """Start a rung of the ladder: KIND is custom-vjp, custom-jvp, export,
    custom-partitioning, pallas, ffi or primitive; tests included."""
    from jaxmap.render import json as render_json
    from jaxmap.render import text
    from jaxmap.scaffold import apply, file_diffs, kinds, unified_diff

    changes = kinds.generate(kind, name, out=out, style=style)
    if not dry_run:
        apply(changes, force=force)  # checks them all first
    if as_json:
        click.echo(render_json.scaffold_document(name, changes, file_diffs(changes), dry_run))
        return
    click.echo(unified_diff(changes), nl=False)
    click.echo(text.new_kind_summary(kind, name, changes, dry_run), err=True)


@cli.command()
@_root_option
@_json_option
def ladder(root: str | None, as_json: bool) -> None:
    """The escalation ladder and its checklist: each rung, the `jaxmap new`
    command that starts it, and where its machinery lives in the indexed jax."""
    from jaxmap.commands import ladder as ladder_mod
    from jaxmap.render import ladder as render_ladder

    with _open(root) as idx:
        result = ladder_mod.gather(idx)
    click.echo(render_ladder.document(result) if as_json else render_ladder.text(result))


# -- for coding agents: `jaxmap mcp`, `jaxmap skill` ------------------------------------

@cli.command()
@_root_option
def mcp(root: str | None) -> None:
    """Serve locate, primitives, binds, callers, explain, coverage, ladder, new and
    new_primitive to an MCP client over stdio, with the index kept open (needs
    jaxmap[mcp])."""
    from jaxmap import roots, server

    server.require_sdk()
    roots.resolve_root(root)  # a bad --root fails here, not at the first question
    server.serve_stdio(root)


@cli.command()
@click.option("--out", required=True, type=click.Path(), metavar="DIR",
              help="The skill folder to write; an existing one needs --force.")
@_root_option
@click.option("--budget", type=click.IntRange(min=1), default=None, metavar="TOKENS",
              help="Fit references/REPO-MAP.md into TOKENS tokens (as repo-map --budget); "
                   "the per-primitive page is then left out.")
@click.option("--force", is_flag=True, help="Replace DIR if it exists.")
@_json_option
def skill(out: str, root: str | None, budget: int | None, force: bool, as_json: bool) -> None:
    """Write an agent skill folder for the indexed jax: SKILL.md (the ladder, its
    checklist, jaxmap's commands), references/REPO-MAP.md, scripts/ (the standalone
    locator) and assets/ (a tested starter per rung)."""
    from jaxmap.render import text
    from jaxmap.scaffold import skill as skill_mod
    from jaxmap.store import atomic

    atomic.check_tree(out, force)  # refuse before any work
    with _open(root) as idx:
        from jaxmap import tools

        folder = skill_mod.files(idx, out, budget, tuple(tools.BY_NAME))
        jax_version = idx.jax_version
    atomic.write_tree(out, folder, force=force)
    if as_json:
        from jaxmap.render import json as render_json

        click.echo(render_json.skill_document(os.path.abspath(out), jax_version, folder))
        return
    click.echo(text.skill_written(out, folder))


@cli.command("repo-map")
@_root_option
@click.option("-o", "--output", default="REPO-MAP.md", show_default=True, metavar="FILE",
              help="Where to write the map (and, beside it, FILE-PRIMITIVES.md); "
                   "- for standard output.")
@click.option("--budget", type=click.IntRange(min=1), default=None, metavar="TOKENS",
              help="Fit the map into TOKENS tokens (estimated as characters / 3), keeping "
                   "orientation first; the per-primitive page is not written.")
@click.option("--force", is_flag=True, help="Overwrite FILE even if jaxmap did not write it.")
@click.option("--json", "as_json", is_flag=True,
              help="Print what the map shows as one JSON document; write no file.")
def repo_map(root: str | None, output: str, budget: int | None, force: bool,
             as_json: bool) -> None:
    """Write REPO-MAP.md: JAX's subsystems, how a jit call flows, entry points,
    contributor paths, where to add things, gaps, hubs and layout, all from the index;
    and REPO-MAP-PRIMITIVES.md, every primitive's rules."""
    from jaxmap.commands import repomap
    from jaxmap.render import markdown, text

    targets = [] if output == "-" or as_json else [output]
    if targets and budget is None:
        targets.append(markdown.primitives_path(output))
    for target in targets:
        _check_output(target, force or _generated(target))
    with _open(root) as idx:
        data = repomap.gather(idx)
    if as_json:
        from jaxmap.render import json as render_json

        click.echo(render_json.repo_map_document(data))
        return
    page = markdown.repo_map(data, budget, os.path.basename(markdown.primitives_path(output)))
    if not targets:
        click.echo(page, nl=False)
        return
    from jaxmap.store import atomic

    atomic.write(output, page)
    if len(targets) > 1:
        atomic.write(targets[1], markdown.primitives_page(data, os.path.basename(output)))
    click.echo(text.map_written(targets, data, markdown.estimate_tokens(page)))


def _generated(path: str) -> bool:
    """Whether `path` is a map jaxmap repo-map wrote (so it may be replaced)."""
    from jaxmap.render.markdown import HEADER

    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readline().rstrip("\n") == HEADER
    except OSError:
        return False


def _check_output(path: str, force: bool) -> None:
    """Before any work: the output's directory is writable, and an existing file is
    only replaced with --force."""
    from jaxmap.store import atomic

    atomic.check_directory(os.path.dirname(path) or ".")
    if os.path.exists(path) and not force:
        raise JaxmapError(f"{path} exists; pass --force to overwrite it")


@cli.command()
@click.argument("old")
@click.argument("new")
@_json_option
def diff(old: str, new: str, as_json: bool) -> None:
    """Primitives and rules added, removed or moved between OLD and NEW: jax versions
    with a snapshot (0.4.38) or roots (paths)."""
    from jaxmap.commands import diff as diff_mod
    from jaxmap.render import json as render_json
    from jaxmap.render import text

    with _open_either(old) as before, _open_either(new) as after:
        result = diff_mod.compare(
            text.diff_side(old, before.jax_version, os.path.isdir(old)), before.primitives(),
            text.diff_side(new, after.jax_version, os.path.isdir(new)), after.primitives())
    click.echo(render_json.diff_document(result) if as_json else text.index_diff(result))


def _open_either(argument: str):
    """A directory is a root, a file a snapshot (`index --snapshot`'s); anything else
    names a released version's snapshot, unless it looks like a path."""
    from jaxmap.store import snapshot

    if os.path.isdir(argument):
        return _open(argument)
    if os.path.isfile(argument):
        return snapshot.load(argument)
    if os.sep in argument or argument.endswith(".gz"):
        raise click.UsageError(f"{argument} is neither a directory nor a snapshot file")
    return _open_version(argument)


def _open_version(version: str):
    from jaxmap.store import snapshot

    return snapshot.load(snapshot.find(version))


def _write_snapshot(idx, snapshot_file: str) -> None:
    from jaxmap.store import atomic, snapshot

    atomic.write(snapshot_file, snapshot.export(idx))


def _open(root):
    from jaxmap.session import open_index

    with _progress("indexing") as progress:
        return open_index(root, progress=progress)


class _progress:
    """A click progress bar on a terminal; nothing when stderr is piped."""

    def __init__(self, label: str):
        self.label = label
        self.bar = None

    def __enter__(self):
        if not sys.stderr.isatty():
            return None
        return self._update

    def _update(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.bar.pos)

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)


def _path_fn(root: str, absolute: bool):
    if absolute:
        return lambda p: os.path.join(root, p)
    return lambda p: p


def _source_line(root: str):
    """The first line of a statement, read from the tree (for `defined by`)."""
    def read(file: str, line: int) -> str | None:
        try:
            with open(os.path.join(root, file), encoding="utf-8", errors="replace") as handle:
                for number, text in enumerate(handle, 1):
                    if number == line:
                        return text.strip()[:100]
        except OSError:
            return None
        return None
    return read


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit status (callable in-process by tests)."""
    args = sys.argv[1:] if argv is None else argv
    options: dict = {}  # filled by the group from its parsed options
    try:
        result = cli.main(args=args, prog_name="jaxmap", standalone_mode=False, obj=options)
        return result if isinstance(result, int) else 0
    except click.exceptions.Abort:
        click.echo("jaxmap: aborted", err=True)
        return 130
    except click.exceptions.Exit as exit_:
        return exit_.exit_code
    except click.ClickException as error:
        hint = " (see jaxmap --help)" if isinstance(error, click.UsageError) else ""
        click.echo(f"jaxmap: error: {error.format_message()}{hint}", err=True)
        return error.exit_code
    except Exception as error:  # noqa: BLE001 - never a traceback without --debug
        if options.get("debug") and not isinstance(error, NotFound):
            raise
        click.echo(describe(error), err=True)
        return exit_code(error)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

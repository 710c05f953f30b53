"""`jaxmap` commands: parse options, call one library function, render, map errors.

Heavy modules (tree-sitter, networkx, jax) are imported inside the commands that
need them, so `jaxmap locate` and `--help` start fast.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import threading
import time
from typing import TYPE_CHECKING, cast

import click

from jaxmap.errors import JaxmapError, NotFound, describe, exit_code
from jaxmap.render.graphs import FORMATS as GRAPH_FORMATS

if TYPE_CHECKING:
    from typing import Callable

    from click._termui_impl import ProgressBar  # what click.progressbar returns

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


class _Command(click.Command):
    """A command whose usage errors know it: click's parser raises an option missing
    its value (`binds psum --depth`) with no context, which pointed at `jaxmap --help`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as error:
            error.ctx = error.ctx or ctx
            raise


class _Group(click.Group):
    """The CLI's group. Each row of the command table becomes a click command when it
    is asked for: building them all took 1.4 ms of every command's start."""

    command_class = _Command

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        row = None if found is not None else _rows().get(cmd_name)
        if row is not None:
            found = _declared(row)
            self.add_command(found)
        return _with_global_options(found) if found is not None else None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *_rows()})

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, self._options_after_command(ctx, args))

    def _options_after_command(self, ctx: click.Context, args: list[str]) -> list[str]:
        """`jaxmap --root T primitives` as `jaxmap primitives --root T`: the options before
        the command that are not the group's own move after its name (the word after
        them, a command or not: an unknown one is then named as such). An option no
        command has stays where it is, for click to refuse."""
        own = {opt for param in self.get_params(ctx) for opt in param.opts}
        takes = self.command_options(ctx)
        kept, moved, at = [], [], 0
        while at < len(args) and args[at].startswith("-") and args[at] != "--":
            word = args[at]
            name = word.partition("=")[0]
            if name in own or name not in takes:
                kept.append(word)
            elif takes[name] and "=" not in word and at + 1 < len(args):
                moved += args[at:at + 2]
                at += 1
            else:
                moved.append(word)
            at += 1
        if not moved or at == len(args):
            return args
        return [*kept, args[at], *moved, *args[at + 1:]]

    def command_options(self, ctx: click.Context) -> dict[str, bool]:
        """Every command's options, each with whether it takes a value."""
        found: dict[str, bool] = {}
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            for param in command.params if command is not None else ():
                if isinstance(param, click.Option):
                    for opt in (*param.opts, *param.secondary_opts):
                        found[opt] = not param.is_flag and not param.count
        return found

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """An unknown command says which one answers it (render.text.unknown_command)."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            import difflib

            from jaxmap.render.text import unknown_command

            commands = self.list_commands(ctx)
            # commands it starts (`cov`), and those a slip away (`calers`); none
            # for a word that is no command's (`frobnicate` is not `locate`)
            near = list(dict.fromkeys([c for c in commands if c.startswith(name)]
                                      + difflib.get_close_matches(name, commands, n=3,
                                                                  cutoff=0.7)))[:3]
            raise click.UsageError(unknown_command(name, near), ctx)
        return super().resolve_command(ctx, args)


@functools.cache
def _rows() -> dict:
    """The command table's rows by name."""
    from jaxmap.commands.registry import COMMANDS

    return {command.name: command for command in COMMANDS}


def _global_options() -> list[click.Option]:
    """The group's options, which every command takes too (`jaxmap callers psum -q`)."""
    return [click.Option(["--debug"], is_flag=True, help="Show tracebacks for errors."),
            click.Option(["-q", "--quiet"], is_flag=True,
                         help="Say nothing on stderr while building an index "
                              "[or set $JAXMAP_QUIET].")]


_GLOBAL_NAMES = ("debug", "quiet")


def _with_global_options(command: click.Command) -> click.Command:
    """`command`, taking the group's options after its name too, once: given there,
    they go where the group's own go, the root context's object (main() reads debug)."""
    if any(p.name == "quiet" for p in command.params):
        return command
    command.params += _global_options()
    callback = command.callback

    def run(**given):
        given_globally = click.get_current_context().find_root().obj
        for name in _GLOBAL_NAMES:
            given_globally[name] = given.pop(name) or given_globally.get(name, False)
        return callback(**given) if callback else None

    command.callback = functools.update_wrapper(run, callback) if callback else run
    return command


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]},
             params=_global_options())
@click.version_option(package_name="jaxmap")
@click.pass_context
def cli(ctx: click.Context, debug: bool, quiet: bool) -> None:
    """Where everything in JAX's internals is defined: primitives, their rules, definitions."""
    ctx.ensure_object(dict).update(debug=debug, quiet=quiet)  # main() reads debug


@cli.command("help")
@click.argument("command", required=False)
@click.pass_context
def help_(ctx: click.Context, command: str | None) -> None:
    """Show COMMAND's help, as `jaxmap COMMAND --help` does; without one, the list of
    commands."""
    group = ctx.parent
    assert group is not None  # a command's context has the group's above it
    if not command:
        click.echo(group.get_help())
        return
    _name, found, _rest = cli.resolve_command(group, [command])  # unknown: a usage error
    assert found is not None
    with click.Context(found, info_name=command, parent=group) as asked:
        click.echo(found.get_help(asked))


@cli.command()
@_root_option
@click.option("--rebuild", is_flag=True, help="Discard the index and parse every file again.")
@click.option("--snapshot", "snapshot_file", default=None, metavar="FILE",
              help="Also write a compact snapshot of the primitive index (.json.gz).")
@click.option("--force", is_flag=True, help="Overwrite an existing snapshot FILE.")
@_json_option
def index(root: str | None, rebuild: bool, snapshot_file: str | None, force: bool,
          as_json: bool) -> None:
    """Build or refresh the index (only changed files are parsed again, but after a
    first-phase question such as `locate`, which leaves out what the call graph reads:
    then every file is read once more)."""
    from jaxmap.indexing.indexer import build_index
    from jaxmap.render import text

    created = []
    if snapshot_file:
        _check_output(snapshot_file, force)
        from jaxmap.store import atomic

        created = atomic.missing_folders([snapshot_file])
    with _progress("indexing", root) as progress:
        report = build_index(root, rebuild=rebuild, progress=progress)
    if report.skipped:
        click.echo(text.skipped_files(report.skipped), err=True)
    messages, call_counts = [], {}
    if snapshot_file or as_json:
        from jaxmap.store.read import open_file

        with open_file(report.path) as idx:  # just built: no need to check it again
            if snapshot_file:
                _write_snapshot(idx, snapshot_file)
            if as_json:
                messages, call_counts = idx.diagnostics(), idx.call_counts()
    if as_json:
        from jaxmap.render import json as render_json

        click.echo(render_json.index_document(report, messages, call_counts))
        return
    click.echo(text.index_report(report))
    if snapshot_file:
        _say_created(created)
        click.echo(text.snapshot_written(snapshot_file, report.primitives))


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
@click.option("--format", "fmt", default=None, type=click.Choice(GRAPH_FORMATS),
              help="svg and png are drawn by Graphviz (`dot`), where it is installed "
                   "[default: FILE's suffix (.dot, .mmd, .graphml, .json, .svg, .png), "
                   "else text].")
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
    if bool(name) == bool(central):
        raise click.UsageError("give a NAME, or --central N" if not name else
                               "--central N ranks the whole tree's modules: give it "
                               "without NAME")
    fmt = "json" if as_json else fmt or _graph_format_of(output)
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

    assert name  # checked above: NAME, or --central
    with _open(root, graph=True) as idx:
        hood = neighbours.neighbourhood(idx, name, depth)
    caveat = graphs.caveat(hood, fmt)
    if caveat:
        click.echo(caveat, err=True)
    if output:
        from jaxmap.store import atomic

        created = atomic.missing_folders([output])
        atomic.write(output, graphs.picture(hood, fmt) if fmt in graphs.PICTURE_FORMATS
                     else graphs.render(hood, fmt) + "\n")
        _say_created(created, err=True)
        click.echo(text.graph_written(output, fmt, hood), err=True)
        return
    click.echo(graphs.render(hood, fmt))


_GRAPH_SUFFIXES = {".dot": "dot", ".gv": "dot", ".mmd": "mermaid", ".mermaid": "mermaid",
                   ".graphml": "graphml", ".json": "json", ".svg": "svg", ".png": "png"}


def _graph_format_of(output: str | None) -> str:
    """The format `graph -o FILE` writes when --format is not given: FILE's suffix's."""
    suffix = os.path.splitext(output)[1].lower() if output else ""
    return _GRAPH_SUFFIXES.get(suffix, "text")


# -- the commands of the command table (commands/registry.py) ----------------------


def _click_param(param) -> click.Parameter:
    """A registry Param as a click argument or option."""
    if param.positional:
        return click.Argument([param.name], required=param.required,
                              metavar=param.metavar or param.name.upper())
    flag = param.flag or "--" + param.name.replace("_", "-")
    kwargs = {"help": param.doc[:1].upper() + param.doc[1:] + ".", "default": param.default}
    if param.type == "boolean":
        return click.Option([flag, param.name], is_flag=True, help=kwargs["help"])
    if param.type == "array":
        kwargs.update(multiple=True, default=())
    elif param.type == "integer":
        kwargs["type"] = int if param.minimum is None else click.IntRange(min=param.minimum)
    if param.choices:
        kwargs["type"] = click.Choice(param.choices)
    if param.metavar:
        kwargs["metavar"] = param.metavar
    show = param.default is not None and param.type != "array"
    return click.Option([flag, param.name], show_default=show, **kwargs)


def _source_options(command) -> list[click.Parameter]:
    """What the CLI adds before a row's own options: --root, --jax."""
    names = {p.name for p in command.params}
    options: list[click.Parameter] = []
    if command.kind == "query" and "root" not in names:
        options.append(click.Option(["--root"], type=click.Path(file_okay=False),
                                    default=None, help=_ROOT_HELP))
    if command.snapshot:
        options.append(click.Option(
            ["--jax", "jax_version"], default=None, metavar="VERSION",
            help="Answer from the committed snapshot of this jax release (see indexes/)."))
    return options


def _output_options(command) -> list[click.Parameter]:
    """What the CLI adds after a row's own options: the output format and --absolute;
    for a scaffold row --dry-run and --force."""
    options: list[click.Parameter] = []
    if command.kind == "scaffold":
        options += [click.Option(["--dry-run"], is_flag=True,
                                 help="Print the diff; write nothing."),
                    click.Option(["--force"], is_flag=True, help="Overwrite files that exist.")]
    formats = list(command.render)
    if command.kind == "query" and len(formats) > 2:
        options.append(click.Option(["--format", "fmt"], type=click.Choice(formats),
                                    default=formats[0], show_default=True))
    options.append(click.Option(["--json", "as_json"], is_flag=True,
                                help="Print one JSON document (schema in the README)."))
    if command.paths:
        options.append(click.Option(["--absolute"], is_flag=True,
                                    help="Print absolute paths instead of root-relative ones."))
    return options


def _declared(command) -> click.Command:
    """The click command of a registry row."""
    params = [_click_param(p) for p in command.params if p.cli]
    positional = [p for p in params if isinstance(p, click.Argument)]
    options = [p for p in params if not isinstance(p, click.Argument)]
    run = _run_scaffold if command.kind == "scaffold" else _run_query
    return _Command(command.name, help=command.doc, short_help=command.doc.split(". ")[0],
                    epilog=_epilog(command),
                    params=positional + _source_options(command) + options
                    + _output_options(command),
                    callback=lambda **given: run(command, given))


def _run_query(command, given: dict) -> None:
    from jaxmap import dispatch
    from jaxmap.commands.registry import PAGING_NAMES
    from jaxmap.render.view import View

    root, as_json, absolute = given.pop("root"), given.pop("as_json"), given.pop("absolute", False)
    jax_version, fmt = given.pop("jax_version", None), given.pop("fmt", None)
    if jax_version and (root or absolute):
        raise click.UsageError("--jax answers from a snapshot, which has no files on disk: "
                               "it takes neither --root nor --absolute")
    _read_input(command, given)
    fmt = "json" if as_json else fmt or next(iter(command.render))
    if fmt != "json" and any(given.get(p) for p in PAGING_NAMES):
        raise click.UsageError("--limit, --offset, --field and --max-chars page the JSON "
                               "answer: add --json")
    with _open_version(jax_version) if jax_version else _open(root, command.graph) as idx:
        if command.about_primitives:
            _warn_without_primitives(idx)
        if command.graph and not _quiet():  # a graph answer may lack what they hold
            from jaxmap.render.text import unparsed_note

            for line in idx.unparsed():
                click.echo(unparsed_note(line), err=True)
        view = View(idx.root, idx.jax_version, _path_fn(idx.root, absolute),
                    _source_line(idx.root))
        said: list[str] = []
        try:
            text = dispatch.answer(command, idx, given, fmt, view, said)
            for line in said if not _quiet() else ():
                click.echo(line, err=True)
            click.echo(text)
        except NotFound as error:
            if error.output:  # a partial answer (explain's closest messages) first
                click.echo(error.output)
            raise


def _warn_without_primitives(idx) -> None:
    from jaxmap.render.text import no_primitives

    if not idx.primitive_count():
        click.echo(no_primitives(idx.root), err=True)


def _epilog(command) -> str | None:
    """The end of a command's --help: where a parameter read from stdin may come from."""
    read = [p.name.upper() for p in command.params if p.stdin and p.cli]
    if not read:
        return None
    from jaxmap.render.text import read_from

    return read_from(read[0])


def _read_input(command, given: dict) -> None:
    """For a parameter that reads standard input, a `-`: its text (saying on a terminal
    what it waits for); the path of an existing file: that file's text."""
    for param in command.params:
        value = given.get(param.name)
        if not param.stdin or not isinstance(value, str):
            continue
        if value == "-":
            if sys.stdin.isatty():
                from jaxmap.render.text import reading_stdin

                click.echo(reading_stdin(param.name), err=True)
            given[param.name] = sys.stdin.read()
            if not given[param.name].strip():
                from jaxmap.errors import ArgumentError
                from jaxmap.render.text import empty_stdin

                raise ArgumentError(empty_stdin(param.name))
        elif "\n" in value:  # the text itself
            continue
        elif os.path.isfile(value):
            given[param.name] = _read_file(value)
        elif os.path.isdir(value) or _PATH_LIKE.fullmatch(value):
            from jaxmap.errors import ArgumentError
            from jaxmap.render.text import missing_input

            raise ArgumentError(missing_input(value))


# A file's path, not a message: no spaces, ending with a suffix files of text have
# (`pt.log`, `out/trace.txt`, `dir/`); a message like `jax.errors.X` does not.
_PATH_LIKE = re.compile(r"[^\s]*(?:\.(?:txt|log|out|err|md|py)|/)")


def _read_file(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError as error:
        from jaxmap.errors import ArgumentError
        from jaxmap.render.text import unreadable_input

        raise ArgumentError(unreadable_input(path, error)) from None


def _run_scaffold(command, given: dict) -> None:
    from jaxmap import dispatch
    from jaxmap.scaffold import apply, check, unified_diff

    dry_run, force, as_json = given.pop("dry_run"), given.pop("force"), given.pop("as_json")
    changed = dispatch.changes(command, given)
    if not dry_run:
        check(changed, force=force)  # refuse before showing a diff that will not apply
    if as_json:
        if not dry_run:
            apply(changed, force=force)
        click.echo(dispatch.scaffold_document(command, given, changed, dry_run))
        return
    # Written, a new file is named in the summary below; an edit or overwrite shows
    # its diff: what changed in a file the user had.
    click.echo(unified_diff(changed if dry_run else [c for c in changed if c.old is not None]),
               nl=False)
    if not dry_run:
        from jaxmap.store import atomic

        created = atomic.missing_folders([c.path for c in changed])
        apply(changed, force=force)
        _say_created(created, err=True)
    click.echo(dispatch.scaffold_summary(command, given, changed, dry_run), err=True)
    notes = dispatch.notes(command, given)
    if notes:
        from jaxmap.render.text import scaffold_notes

        click.echo(scaffold_notes(notes), err=True)


# -- for coding agents: `jaxmap mcp`, `jaxmap skill` ------------------------------------

@cli.command()
@_root_option
def mcp(root: str | None) -> None:
    from jaxmap import server

    server.require_sdk()
    _serving()
    _say_a_bad_root(root)
    server.serve_stdio(root)  # a bad --root is each call's tool error, not a dead server


def _say_a_bad_root(root: str | None) -> None:
    """A --root that cannot be indexed, said once on stderr as the server starts (its
    client sees it as each call's tool error; a person running it sees it at once)."""
    from jaxmap import roots
    from jaxmap.render.text import served_anyway

    try:
        roots.resolve_root(root)
    except JaxmapError as error:
        click.echo(served_anyway(describe(error)), err=True)


def _serving() -> None:
    """A server lives on and indexes again and again: what the start-up froze (see
    entry.py) goes back to the collector, so that indexing hands what it built to the
    collector's oldest generation, where what it leaves behind is collected in time,
    rather than freezing it too."""
    import gc

    gc.unfreeze()


def _mcp_help() -> str:
    from jaxmap.commands.registry import COMMANDS
    from jaxmap.render.text import mcp_help

    return mcp_help([c.tool for c in COMMANDS if c.mcp])


mcp.help = _mcp_help()


# -- for editors: `jaxmap lsp` ----------------------------------------------------------

@cli.command()
@_root_option
def lsp(root: str | None) -> None:
    """Serve go to definition, hover, code lenses, references, workspace symbols and
    diagnostics to an editor over the Language Server Protocol (stdio), refreshing the
    index after each save (needs jaxmap[lsp]). Without --root or $JAXMAP_ROOT: the
    folder the editor opens."""
    from jaxmap import lsp as lsp_server
    from jaxmap import roots

    lsp_server.require_sdk()
    _serving()
    if root:
        roots.resolve_root(root)  # a bad --root fails here, not at the first question
    lsp_server.serve_stdio(root)


@cli.command()
@click.option("--out", required=True, type=click.Path(), metavar="DIR",
              help="The skill folder to write; an existing one needs --force.")
@_root_option
@click.option("--budget", type=click.IntRange(min=1), default=None, metavar="TOKENS",
              help="Fit references/REPO-MAP.md into TOKENS tokens (as repo-map --budget); "
                   "the per-primitive page is then left out.")
@click.option("--force", is_flag=True,
              help="Replace DIR if it exists: a skill folder written before, or an empty one.")
@_json_option
def skill(out: str, root: str | None, budget: int | None, force: bool, as_json: bool) -> None:
    """Write an agent skill folder for the indexed jax: SKILL.md (the ladder, its
    checklist, jaxmap's commands), references/REPO-MAP.md, scripts/ (the standalone
    locator) and assets/ (a tested starter per rung)."""
    from jaxmap.render import text
    from jaxmap.scaffold import skill as skill_mod
    from jaxmap.store import atomic

    atomic.check_tree(out, force, skill_mod.written_before)  # refuse before any work
    with _open(root, graph=True) as idx:  # the map's pages read the call graph
        from jaxmap import tools

        folder = skill_mod.files(idx, out, budget, tuple(tools.BY_NAME))
        jax_version = idx.jax_version
    created = atomic.missing_folders([out])  # the folder it goes in
    atomic.write_tree(out, folder, skill_mod.written_before, force=force)
    if as_json:
        from jaxmap.render import json as render_json

        click.echo(render_json.skill_document(os.path.abspath(out), jax_version, folder))
        return
    _say_created(created)
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
    """Write REPO-MAP.md: JAX's subsystems, how a jit call flows, core classes,
    entry points, contributor paths, where to add things, gaps, hubs and layout, all
    from the index; and beside it REPO-MAP-PRIMITIVES.md (every primitive's rules),
    -NAMES.md, -BINDS.md and -MESSAGES*.md."""
    from jaxmap.commands import repomap
    from jaxmap.render import map_pages, markdown, text

    targets = [] if output == "-" or as_json else [output]
    if targets and budget is None:
        targets.append(markdown.primitives_path(output))
        targets += [map_pages.page_path(output, page) for page in map_pages.PAGES]
    for target in targets:
        _check_output(target, force or _generated(target))
    with _open(root, graph=True) as idx:
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

    created = atomic.missing_folders(targets)
    atomic.write(output, page)
    if len(targets) > 1:
        map_file = os.path.basename(output)
        atomic.write(targets[1], markdown.primitives_page(data, map_file))
        for name, page_text in map_pages.pages(data, map_file).items():
            atomic.write(map_pages.page_path(output, name), page_text)
    _say_created(created)
    click.echo(text.map_written(targets, data, markdown.estimate_tokens(page)))


def _generated(path: str) -> bool:
    """Whether `path` is a map jaxmap repo-map wrote (so it may be replaced)."""
    from jaxmap.render.markdown import HEADER

    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readline().rstrip("\n") == HEADER
    except OSError:
        return False


def _say_created(folders: list[str], err: bool = False) -> None:
    """One line for each folder a command created to write into."""
    if folders:
        from jaxmap.render import text

        click.echo(text.folders_created(folders), err=err)


def _check_output(path: str, force: bool) -> None:
    """Before any work: the output's directory is writable, the output is not a
    directory, and an existing file is only replaced with --force."""
    from jaxmap.store import atomic

    atomic.check_directory(os.path.dirname(path) or ".")
    if os.path.isdir(path):
        from jaxmap.render.text import output_is_directory

        raise JaxmapError(output_is_directory(path))
    if os.path.exists(path) and not force:
        raise JaxmapError(f"{path} exists; pass --force to overwrite it")


def _paged(command: click.Command) -> click.Command:
    """A hand-written command whose JSON is paged: the command table's paging options."""
    from jaxmap.commands.registry import PAGING

    command.params += [_click_param(p) for p in PAGING]
    return command


@_paged
@cli.command()
@click.argument("old")
@click.argument("new", required=False)
@_json_option
@click.option("--repo", default=".", show_default=True, type=click.Path(file_okay=False),
              help="With BASE..HEAD: the git repository (a work tree or a bare clone).")
@click.option("--format", "form", type=click.Choice(["text", "json", "markdown"]),
              default=None, help="With BASE..HEAD: text, json (as --json), or markdown "
                                 "(one pull-request comment).")
@click.option("--link-base", default=None, metavar="URL",
              help="Markdown: link places to URL/COMMIT/PATH#LLINE "
                   "(https://github.com/jax-ml/jax/blob).")
@click.option("--fail-on", default="", metavar="CHECKS",
              help="With BASE..HEAD: exit 1 if any of these trip (comma-separated): "
                   "removed-rule, removed-primitive, uncovered, gap, reach, message.")
def diff(old: str, new: str | None, as_json: bool, repo: str, form: str | None,
         link_base: str | None, fail_on: str, **paging):
    """Primitives and rules added, removed, moved, retargeted, registered through
    another helper or with a registration added or removed between OLD and NEW: jax
    versions with a snapshot (0.4.38) or roots (paths). Or review a git range,
    BASE..HEAD (or BASE...HEAD, from their merge base; or one commit, C~1..C), in
    --repo: rules, reach, messages, gaps, tests.
    The paging options (--limit, ...) page `diff OLD NEW --json` only."""
    if as_json and form:
        raise click.UsageError(f"--json and --format {form} each choose the output: give one")
    if new is None:
        if any(paging.values()):
            raise click.UsageError("--limit, --offset, --field and --max-chars page "
                                   "`diff OLD NEW --json`; a review prints everything")
        if link_base and form != "markdown":
            raise click.UsageError("--link-base links the places of --format markdown; "
                                   "add --format markdown")
        if link_base and not re.match(r"https?://\S+\Z", link_base):
            raise click.UsageError(f"--link-base takes a URL that links start with "
                                   f"(https://github.com/jax-ml/jax/blob), not {link_base!r}")
        return _review(old, repo, "json" if as_json else form or "text", link_base, fail_on)
    if form or link_base or fail_on:
        raise click.UsageError("--format, --link-base and --fail-on review a range: "
                               "jaxmap diff BASE..HEAD")
    from jaxmap.commands import diff as diff_mod
    from jaxmap.render import json as render_json
    from jaxmap.render import text
    from jaxmap.render.paging import taken

    with _open_either(old) as before, _open_either(new) as after:
        _warn_without_primitives(before)
        _warn_without_primitives(after)
        result = diff_mod.compare(
            text.diff_side(old, before.jax_version, os.path.isdir(old)), before.primitives(),
            text.diff_side(new, after.jax_version, os.path.isdir(new)), after.primitives())
    click.echo(render_json.diff_document(result, taken(paging)) if as_json
               else text.index_diff(result))
    return 0


def _review(range_text: str, repo: str, form: str, link_base: str | None,
            fail_on: str) -> int:
    """`diff BASE..HEAD`: the review, rendered; 1 if a --fail-on check trips."""
    from jaxmap.commands.review import FAIL_ON, failures
    from jaxmap.revisions.compare import review_range

    if ".." not in range_text and (os.path.exists(range_text)
                                   or re.fullmatch(r"\d+\.\d+(?:\.\d+)?", range_text)):
        raise click.UsageError(f"give OLD and NEW, a git range BASE..HEAD, or one commit "
                               f"(not {range_text!r} alone)")
    checks = tuple(filter(None, (c.strip() for c in fail_on.split(","))))
    unknown = [c for c in checks if c not in FAIL_ON]
    if unknown:
        raise click.UsageError(f"--fail-on {', '.join(unknown)}: choose from "
                               f"{', '.join(FAIL_ON)}")
    result = review_range(repo, range_text, _open_revision)
    tripped = failures(result, checks)
    click.echo(_rendered_review(result, form, link_base, checks, tripped))
    if tripped:
        from jaxmap.render.review_text import failed_checks

        click.echo(failed_checks(tripped), err=True)
        return 1
    return 0


def _rendered_review(result, form: str, link_base: str | None, checks: tuple[str, ...],
                     tripped: list[tuple[str, int]]) -> str:
    if form == "json":
        from jaxmap.render.review_json import review_document

        return review_document(result, checks, tripped)
    if form == "markdown":
        from jaxmap.render.review_markdown import review_comment

        return review_comment(result, link_base)
    from jaxmap.render.review_text import review

    return review(result)


def _open_revision(root: str):
    """A revision's tree's index with the call graph, with the build's progress shown."""
    return _open(root, graph=True)


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


def _open(root, graph: bool = False):
    """The index of `root`, built or refreshed first; with `graph`, holding the call
    graph."""
    from jaxmap.session import open_index

    with _progress("indexing", root) as progress:
        return open_index(root, progress=progress, graph=graph)


def _quiet() -> bool:
    """Whether --quiet or $JAXMAP_QUIET asks for nothing on stderr but errors."""
    context = click.get_current_context(silent=True)
    quiet = context is not None and (context.find_root().obj or {}).get("quiet")
    return bool(quiet or os.environ.get("JAXMAP_QUIET"))


class _progress:
    """What a build says on stderr once it has taken a second: a live bar on a
    terminal, else a line when that second passes and one when it ends; nothing with
    --quiet or $JAXMAP_QUIET. Each count has a bar of its own, in its stage
    (indexing/stages.py: the files parsed, the call sites read, the call graph's
    modules); a stage with nothing to count says nothing. A file in work for SLOW_S
    seconds is named, and again every AGAIN_S seconds it stays."""

    SLOW_S, AGAIN_S = 10.0, 30.0

    def __init__(self, label: str, root: str | None = None):
        from jaxmap.indexing.stages import PARSING, Stages

        self.label, self.root = label, root
        self.bar: ProgressBar[int] | None = None
        self.started = time.perf_counter()
        self.total: int | None = None
        self.announced = False
        self.stage, self.done = PARSING, 0
        self._stages = Stages(graph=True)  # (its percentages are the servers')
        self.working: Callable[[], list[str]] = list  # names the files in work, once told
        self._in_work: dict[str, list[float]] = {}  # path -> [since, next notice]
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self._saying = threading.Lock()  # the stage's first line: said once, by either

    def __enter__(self):
        if _quiet():
            return None
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()
        return self._update

    def _watch(self) -> None:
        """Every half second, until the build ends: name the files in work too long."""
        while not self._stop.wait(0.5):
            self._name_slow(time.monotonic())

    def _name_slow(self, now: float) -> None:
        working = self.working()
        self._in_work = {path: self._in_work.get(path) or [now, now + self.SLOW_S]
                         for path in working}
        for path, times in self._in_work.items():
            if now >= times[1]:
                times[1] = now + self.AGAIN_S
                from jaxmap.render.text import build_slow

                if self.bar is None and self.total and not sys.stderr.isatty():
                    self._announce()
                click.echo(("\r\033[K" if self.bar is not None else "") + build_slow(
                    self.label, path, now - times[0], self.stage, self.done, self.total),
                    err=True)

    def _update(self, done: int, total: int, working=list) -> None:
        self.working = working
        stage = self._stages.read(done, total).stage
        if stage != self.stage or (self.total is not None and (
                done < self.done or total != self.total)):  # a stage, or a count, begins
            self._end_stage(None)
            self.stage = stage
            self.started, self.announced = time.perf_counter(), False
        self.total, self.done = total, done
        if not total or time.perf_counter() - self.started < 1.0:  # nothing to count
            return
        if sys.stderr.isatty():
            if self.bar is None:
                from jaxmap.render.text import build_in_work, build_stage

                self.bar = click.progressbar(length=total, file=sys.stderr,
                                             label=build_stage(self.label, self.stage),
                                             # its items: the files in work, not counts
                                             item_show_func=cast(
                                                 "Callable[[int | None], str | None]",
                                                 build_in_work))
                self.bar.__enter__()
            self.bar.update(done - self.bar.pos, next(iter(working()), None))
        else:
            self._announce()
        self.announced = True

    def _announce(self) -> None:
        """The stage's first line, once (without a bar)."""
        with self._saying:
            if not self.announced:
                from jaxmap.render.text import build_started
                from jaxmap.roots import resolve_root

                click.echo(build_started(self.label, resolve_root(self.root),
                                         self.total or 0, self.stage), err=True)
                self.announced = True

    def _end_stage(self, kind) -> None:
        if self.bar is not None:
            self.bar.__exit__(kind, None, None)
            self.bar = None
        elapsed = time.perf_counter() - self.started
        if kind is None and self.total and elapsed >= 1.0:
            from jaxmap.render.text import build_done

            click.echo(build_done(self.label, self.total, elapsed, self.stage), err=True)

    def __exit__(self, kind, *exc):
        self._stop.set()
        if self._watcher is not None:  # nothing said after the build ends
            self._watcher.join()
        self._end_stage(kind)

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


def _usage_message(error: click.ClickException) -> str:
    """A click error's message, and where its help is."""
    from jaxmap.render.text import option_before_command, usage_error

    if not isinstance(error, click.UsageError):
        return error.format_message()
    context = error.ctx
    if isinstance(error, click.NoSuchOption) and context is not None \
            and context.parent is None and isinstance(context.command, _Group) \
            and error.option_name in context.command.command_options(context):
        return option_before_command(error.option_name)
    return usage_error(error.format_message(), context.command_path if context else "jaxmap")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit status (callable in-process by tests)."""
    args = sys.argv[1:] if argv is None else argv
    options: dict = {}  # filled by the group from its parsed options
    try:
        result = cli.main(args=args, prog_name="jaxmap", standalone_mode=False, obj=options)
        return result if isinstance(result, int) else 0
    except click.exceptions.Abort:
        return _failed(args, "aborted", "jaxmap: aborted", 130)
    except click.exceptions.Exit as exit_:
        return exit_.exit_code
    except click.exceptions.NoArgsIsHelpError as no_args:
        click.echo(no_args.ctx.get_help())  # `jaxmap` alone: the help, not an error
        return 0
    except click.ClickException as error:
        message = _usage_message(error)
        kind = "usage" if isinstance(error, click.UsageError) else "error"
        return _failed(args, kind, f"jaxmap: error: {message}", error.exit_code, message)
    except Exception as error:  # noqa: BLE001 - never a traceback without --debug
        if options.get("debug") and not isinstance(error, NotFound):
            raise
        if isinstance(error, NotFound):
            if error.output and _asks_json(args):
                click.echo(describe(error), err=True)  # its JSON answer is on stdout
                return exit_code(error)
            return _failed(args, "not-found", describe(error), exit_code(error), str(error),
                           error.suggestions)
        kind = "error" if isinstance(error, JaxmapError) else "internal"
        line = describe(error)
        return _failed(args, kind, line, exit_code(error),
                       str(error) if kind == "error" else line.removeprefix("jaxmap: "))


def _failed(args: list[str], kind: str, line: str, code: int, message: str = "",
            suggestions: tuple[str, ...] = ()) -> int:
    """Say why a command failed in one line on stderr and, where the command was asked
    for JSON, as a JSON error object on stdout too; return its exit status."""
    click.echo(line, err=True)
    if _asks_json(args):
        from jaxmap.render.json import error_document

        click.echo(error_document(kind, message or line.removeprefix("jaxmap: "), code,
                                  suggestions))
    return code


def _asks_json(args: list[str]) -> bool:
    """Whether the command line asks for JSON (`--json`, `--format json`)."""
    given = args[:args.index("--")] if "--" in args else args
    return "--json" in given or "--format=json" in given or any(
        a == "--format" and b == "json" for a, b in zip(given, given[1:]))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

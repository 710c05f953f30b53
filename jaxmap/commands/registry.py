"""The command table: each question jaxmap answers, declared once.

cli.py builds its click commands from these rows and tools.py the MCP tools, so a
command's name, doc and parameters are written here alone. Functions are named as
"module:function" strings and imported only when the command runs, which keeps
`jaxmap locate` and `--help` fast.

A `query` row runs on an open store.read.Index: `run(index, **arguments) -> result`,
then `render[format](result, view) -> str` (render.view.View says how paths show);
the first format is the default, and `json` is what MCP answers. A `scaffold` row
returns file changes (`run(**arguments) -> list[FileChange]`) that the front end
shows as a diff and writes (CLI: unless --dry-run; MCP: only with `write: true`);
its renderers give the summary line and the JSON document, and its `notes`
function, given the same arguments, the lines the generator has to say.

Commands that write files or need more than one index (index, verify, graph, diff,
skill, repo-map, mcp) stay hand-written in cli.py.
"""

from __future__ import annotations

from typing import NamedTuple

from jaxmap.commands.lookup import RESULT_KINDS, RULE_KINDS
from jaxmap.knowledge.backends import BACKENDS
from jaxmap.knowledge.rungs import KINDS


class Param(NamedTuple):
    """One argument: its Python keyword (the MCP argument too), a JSON Schema type
    (`array`: of strings), and how the CLI spells it."""

    name: str
    type: str
    doc: str
    required: bool = False
    default: object = None  # the CLI's; an MCP call that omits it gets the run's own
    minimum: int | None = None
    choices: tuple[str, ...] = ()
    positional: bool = False  # a CLI argument (NAME) rather than an option
    flag: str = ""  # the CLI option when it is not --name (`--kind` for `kinds`)
    metavar: str = ""
    stdin: bool = False  # on the CLI, `-` reads the value from stdin, a file's path the file
    cli: bool = True
    mcp: bool = True
    aliases: tuple[str, ...] = ()  # MCP: former names still accepted for it


class Command(NamedTuple):
    name: str  # the CLI's; the MCP tool's with `-` read as `_`
    doc: str  # the first line is the summary both front ends show
    params: tuple[Param, ...]
    run: str
    render: dict[str, str]
    kind: str = "query"
    mcp: bool = True
    paths: bool = True  # prints paths: the CLI offers --absolute
    snapshot: bool = False  # the CLI offers --jax VERSION (a committed snapshot)
    about_primitives: bool = False  # on a tree without primitives the CLI warns
    # reads the call graph or messages: the index's second phase is built first
    graph: bool = False
    # "module:function" saying why a result answers nothing (None when it does): the
    # front ends then fail with that line, the CLI after printing the rendered result.
    refusal: str = ""
    notes: str = ""  # a scaffold row's one-line notes: run's arguments -> list[str]
    # "module:function": (result, view) -> a line the CLI says on stderr first, or None
    # (what a query was read as)
    said: str = ""
    page: int = 0  # its JSON's long list is paged (PAGING): MCP's default page size

    @property
    def tool(self) -> str:
        return self.name.replace("-", "_")


_TEXT = "jaxmap.render.text"
_JSON = "jaxmap.render.json"
_NAME = Param("name", "string", "psum, psum_p, lax.psum, a name string, any definition",
              required=True, positional=True)
_PLATFORM = Param("platform", "string", "only lowerings serving it: cpu, cuda, rocm, tpu, "
                                        "or a Pallas backend", metavar="PLATFORM")
_RULE_KINDS = f"rule kinds ({', '.join(RULE_KINDS[:4])}, ...)"

# What every paged command takes (render/paging.py cuts the JSON answer): the CLI shows
# everything unless told; MCP answers one page of `Command.page` items, at most
# MCP_CHARS characters.
PAGING: tuple[Param, ...] = (
    Param("limit", "integer", "JSON: at most N items", minimum=0, metavar="N"),
    Param("offset", "integer", "JSON: from item N (next_offset)", minimum=0, metavar="N"),
    Param("fields", "array", "JSON: only these item fields", flag="--field", metavar="FIELD"),
    Param("max_chars", "integer", "JSON: at most N characters, dropping items from the end "
          "(one stays; over_max_chars gives the size of an answer still larger)",
          minimum=1, metavar="N", mcp=False))
PAGING_NAMES = frozenset(p.name for p in PAGING)
MCP_CHARS = 30_000  # about 7,500 tokens (characters / 4)


def _paged(command: Command, page: int) -> Command:
    """`command` with the paging parameters, answering `page` items over MCP by default."""
    return command._replace(params=command.params + PAGING, page=page)


def _calls(direction: str, doc: str, params: tuple[Param, ...], mcp: bool = True) -> Command:
    return _paged(Command(direction, doc, params, f"jaxmap.commands.callgraph:{direction}",
                          {"text": f"{_TEXT}:call_answer", "json": f"{_JSON}:call_document"},
                          said=f"{_TEXT}:read_as_note",
                          mcp=mcp, graph=True), 50)


def _walk(direction: str, doc: str, depth_doc: str, mcp: bool) -> Command:
    return _calls(direction, doc, (
        Param("name", "string", "a function, dotted or not", required=True, positional=True),
        Param("depth", "integer", depth_doc, default=1, minimum=1, metavar="N")), mcp)


COMMANDS: tuple[Command, ...] = (
    _paged(Command("locate", "Where NAME is defined; for a primitive, each rule registered for it "
                      "(file:line) and the tests using it.",
            (_NAME, Param("kind", "string", "only this rule kind (jvp, lowering, ...) or "
                                            "result kind (" + ", ".join(RESULT_KINDS) + ")",
                          metavar="KIND"), _PLATFORM),
            "jaxmap.commands.locate:locate",
            {"text": f"{_TEXT}:located", "json": f"{_JSON}:located_document"},
            snapshot=True), 20),
    _paged(Command("primitives", "Every primitive with its rules; all filters must hold.",
            (Param("missing", "array", f"only primitives lacking these {_RULE_KINDS}",
                   metavar="KIND"),
             Param("has", "array", "only primitives having all of these rule kinds",
                   metavar="KIND"), _PLATFORM),
            "jaxmap.commands.lookup:primitives",
            {"text": f"{_TEXT}:primitives_table", "json": f"{_JSON}:primitives_document"},
            about_primitives=True), 20),
    _calls("binds", "The public functions that bind a primitive when traced, each step "
                    "of its chain saying how.",
           (Param("name", "string", "the primitive: psum, psum_p, scatter-add",
                  required=True, positional=True, metavar="PRIM", aliases=("prim",)),
            Param("depth", "integer", "at most N steps, the .bind one (1: binders) "
                                      "[default: any]", minimum=1, metavar="N"),
            Param("everything", "boolean", "every function reaching it, also via rules or "
                                           "interpreters", flag="--all"),
            Param("public", "boolean", "with --all: public API only"),
            Param("chains", "boolean", "text: each function's chain, also where more than "
                                       "a screen of them", mcp=False))),
    _walk("callers", "What calls NAME (functions, class bodies, module code), and unresolved "
                     "calls that may be to it.", "at most N steps (1: direct callers)",
          mcp=True),
    _walk("calls", "What NAME calls: functions, primitives bound, external and unresolved "
                   "calls.", "at most N steps (1: direct callees)", mcp=True),
    Command("path", "The shortest call chains from function SOURCE to TARGET, a function or "
                    "a primitive's .bind (ending in _p), with each call's line.",
            (Param("source", "string", "the calling function, dotted or not", required=True,
                   positional=True),
             Param("target", "string", "the function reached, or a primitive: psum_p",
                   required=True, positional=True),
             Param("most", "integer", "at most this many chains", default=5, minimum=1,
                   metavar="N"),
             Param("depth", "integer", "up to N steps, a .bind one", default=12, minimum=1,
                   metavar="N")),
            "jaxmap.commands.path:path",
            {"text": f"{_TEXT}:path_chains", "json": f"{_JSON}:path_document"}, graph=True,
            refusal=f"{_TEXT}:path_refusal"),
    _paged(Command("coverage", "The matrix of primitives x rule kinds (lowerings per platform), "
                        "with totals.",
            (Param("kinds", "array", "only these rule kinds' columns", flag="--kind",
                   metavar="KIND"),
             Param("missing", "array", "only primitives lacking these rule kinds",
                   metavar="KIND"), _PLATFORM),
            "jaxmap.commands.coverage:run",
            {"table": f"{_TEXT}:coverage_table", "json": f"{_JSON}:coverage_document",
             "csv": "jaxmap.render.csv:coverage"}, paths=False, about_primitives=True), 100),
    Command("explain", "Where JAX raises each error in TEXT (a message, traceback, test or log "
                       "paste), the user's line and usual fix; a missing rule: how to add it.",
            (Param("text", "string", "the message or whole traceback (CLI: - reads stdin)",
                   required=True, positional=True, stdin=True),),
            "jaxmap.commands.explain:explain_all",
            {"text": "jaxmap.render.explain_text:explanation",
             "json": f"{_JSON}:explanation_document"},
            refusal="jaxmap.commands.explain:refusal", graph=True),
    Command("ladder", "The escalation ladder and its checklist: each rung, the `jaxmap new` "
                      "command that starts it, and where its machinery lives.",
            (), "jaxmap.commands.ladder:gather",
            {"text": f"{_TEXT}:ladder", "json": f"{_JSON}:ladder_document"}, paths=False),
    Command("new", "Start a ladder rung with tests that pass on the installed jax (KIND: one "
                   "of `jaxmap ladder`'s kinds).",
            (Param("kind", "string", ", ".join(KINDS), required=True, positional=True),
             Param("name", "string", "a Python identifier", required=True, positional=True),
             Param("out", "string", "directory for the files [default: .]", metavar="DIR"),
             Param("style", "string", "hijax instead of classic (custom-vjp, primitive)"),
             Param("backend", "string", "refuse a kind it cannot run", choices=BACKENDS)),
            "jaxmap.scaffold.kinds:generate",
            {"text": f"{_TEXT}:scaffold_summary", "json": f"{_JSON}:scaffold_document"},
            kind="scaffold", paths=False, notes="jaxmap.scaffold.kinds:notes"),
    Command("new-primitive", "Generate a primitive NAME with every rule registered, and "
                             "tests that pass.",
            (Param("name", "string", "a Python identifier", required=True, positional=True),
             Param("out", "string", "directory for NAME.py and test_NAME.py [default: .]",
                   metavar="DIR"),
             Param("in_tree", "boolean", "add the primitive inside the JAX tree at --root",
                   mcp=False),
             Param("root", "string", "with --in-tree: the JAX checkout to edit; otherwise the "
                                     "tree whose primitive names NAME must not clash with "
                                     "[default: the installed jax]", mcp=False),
             Param("module", "string", "with --in-tree: the implementation module [default: "
                                       "jax/_src/lax/NAME.py]", mcp=False),
             Param("tests_dir", "string", "with --in-tree: where NAME_test.py goes [default: "
                                          "ROOT/tests]", mcp=False),
             Param("style", "string", "classic or hijax", default="classic",
                   choices=("classic", "hijax")),
             Param("arity", "integer", "number of array operands", default=1),
             Param("linear", "boolean", "linear in its operands: deflinear and a transpose "
                                        "rule"),
             Param("multiple_results", "boolean", "two results instead of one"),
             Param("params", "string", "static parameters: scale=float,n=int (float, int, "
                                       "bool, str)", metavar="KEY=TYPE,..."),
             Param("platforms", "array", "also a lowering for this platform: cpu, cuda, rocm, "
                                         "tpu", flag="--platform"),
             Param("lowering", "string", "`mlir.lower_fun` of a jnp reference, or StableHLO ops",
                   default="lower_fun", choices=("lower_fun", "hlo")),
             Param("no_tests", "boolean", "do not generate a test module", mcp=False)),
            "jaxmap.scaffold:new_primitive",
            {"text": f"{_TEXT}:scaffold_summary", "json": f"{_JSON}:scaffold_document"},
            kind="scaffold", paths=False, notes="jaxmap.scaffold:new_primitive_notes"),
)
BY_NAME = {command.name: command for command in COMMANDS}


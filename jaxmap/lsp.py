"""`jaxmap lsp`: the index served to editors over the Language Server Protocol (stdio).

The only module that imports pygls and lsprotocol, an optional extra (`jaxmap[lsp]`).
The questions are commands/editor.py's and commands/rule_gaps.py's, the texts
render/editor.py's; this module turns URIs and positions into files and lines and
back, and holds the index through a ServedSession (served.py), which builds and
refreshes it in a child process after each save: a request is answered at once from
the index it has, and says so while that is the index from before the save (or, once
the save's first phase is written, while its call graph answers nothing). What
goes wrong is the request's LSP error or one `window/logMessage` line; pygls's own
log, tracebacks included, is kept off stderr.
"""

from __future__ import annotations

import functools
import logging
import os
from typing import TYPE_CHECKING

from jaxmap.errors import JaxmapError, describe
from jaxmap.served import ServedSession

if TYPE_CHECKING:
    import asyncio

EXTRA = "pip install 'jaxmap[lsp]'"
REFERENCES, DEFINITIONS = "jaxmap.references", "jaxmap.definitions"


def require_sdk() -> None:
    """JaxmapError naming the extra when pygls (2.x) is not installed."""
    try:
        import pygls.lsp.server  # noqa: F401
    except ImportError:
        raise JaxmapError(f"jaxmap lsp needs pygls; install it with {EXTRA}") from None


# The features served: (LSP method, options or None, _Answers method), declared once.
_FEATURES = (
    ("initialized", None, "initialized"),
    ("shutdown", None, "shutdown"),
    ("exit", None, "shutdown"),
    ("textDocument/didOpen", None, "did_open"),
    ("textDocument/didSave", None, "did_save"),
    ("textDocument/didClose", None, "did_close"),
    ("textDocument/definition", None, "definition"),
    ("textDocument/hover", None, "hover"),
    ("textDocument/references", None, "references"),
    ("textDocument/codeLens", "lens_options", "code_lens"),
    ("codeLens/resolve", None, "resolve_lens"),
    ("workspace/symbol", None, "workspace_symbols"),
)
_COMMANDS = ((REFERENCES, "references_command"), (DEFINITIONS, "definitions_command"))


def build(root: str | None = None):
    """A pygls LanguageServer for `root` (None: the workspace root the editor opens)."""
    from lsprotocol import types as t

    from jaxmap import __version__

    server = _server_class()("jaxmap", __version__,
                            text_document_sync_kind=t.TextDocumentSyncKind.Full)
    answers = server.answers = _Answers(server, root)
    for method, options, name in _FEATURES:
        server.feature(method, getattr(answers, options) if options else None)(
            answers.handler(name))
    for command, name in _COMMANDS:
        server.command(command)(answers.handler(name, command=True))
    return server


class _Answers:
    """The server's handlers: each turns a request's URI and position into a file, a
    line and a symbol, asks commands/editor.py, and turns the answer into LSP types.
    A JaxmapError is logged and answered with nothing; any other error becomes the
    request's LSP error (pygls's), never the server's end."""

    def __init__(self, server, root: str | None):
        from lsprotocol import types

        from jaxmap.commands import editor, rule_gaps
        from jaxmap.render import editor as render

        self.t, self.editor, self.gaps, self.render = types, editor, rule_gaps, render
        self.server = server
        self.root = root
        self.served: ServedSession | None = None  # from `initialized` on
        self.progress = _BuildProgress(server)
        self.lens_options = types.CodeLensOptions(resolve_provider=True)
        self._told: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None  # from `initialized` on
        self._early: list[str] = []  # what the stdin reader said before that

    def index(self):
        """The index answers come from; None before the first one is built."""
        return self.served.index() if self.served else None

    @property
    def stale(self) -> str | None:
        """What answers say while a refresh runs: that they come from the previous
        index, or that its call graph is being solved again; None at rest."""
        served = self.served
        if served is None:
            return None
        return self.render.STALE if served.stale else \
            self.render.GRAPH_STALE if served.graph_stale else None

    def handler(self, name: str, command: bool = False):
        answer = getattr(self, name)

        def run(ls, *args):
            try:
                return answer(*args) if command else answer(args[0] if args else None)
            except JaxmapError as error:
                if command:
                    raise
                self.log(describe(error, debug_hint=False), self.t.MessageType.Warning)
                return None
        run.__name__ = name
        return run

    # -- messages ------------------------------------------------------------------------

    def log(self, message: str, kind=None) -> None:
        self.server.window_log_message(self.t.LogMessageParams(
            type=kind or self.t.MessageType.Info, message=f"jaxmap: {message}"))

    def log_from_reader(self, message: str) -> None:
        """`log`, from the thread that reads stdin: on the server's loop, once it runs
        (`initialized` says those said before)."""
        if self._loop is None:
            self._early.append(message)
        else:
            self._loop.call_soon_threadsafe(self.log, message, self.t.MessageType.Error)

    def note_once(self, message: str) -> None:
        """Log `message` once until the next refresh ends."""
        if message not in self._told:
            self._told.add(message)
            self.log(message)

    def _first_phase(self, report) -> None:
        """A refresh wrote what a save changed but for the call graph: diagnostics and
        definitions are current now, while the graph is solved."""
        self.log(self.render.FIRST_PHASE.format(parsed=report.parsed))
        for uri in list(self.server.workspace.text_documents):
            self.publish(uri)

    def _refreshed(self, report, error: str | None) -> None:
        self._told.clear()
        self.progress.end()
        if error is not None:
            self.log(error.removeprefix("jaxmap: "), self.t.MessageType.Error)
            return
        if report is not None:
            self.log(self.render.refreshed(report))
        for uri in list(self.server.workspace.text_documents):
            self.publish(uri)

    # -- places --------------------------------------------------------------------------

    def relative(self, uri: str) -> str | None:
        """The root-relative POSIX path of a file under the root; None for any other."""
        from pygls.uris import to_fs_path

        path, index = to_fs_path(uri), self.index()
        if path is None or index is None:
            return None
        rel = os.path.relpath(os.path.realpath(path), index.root)
        return None if rel.startswith("..") else rel.replace(os.sep, "/")

    def uri_of(self, file: str) -> str:
        from pygls.uris import from_fs_path

        return from_fs_path(os.path.join(self.index().root, file))

    def location(self, loc):
        line = max(loc.line - 1, 0)
        return self.t.Location(uri=self.uri_of(loc.file), range=self.range(line, 0, line + 1))

    def range(self, line: int, column: int, end_line: int | None = None):
        """From (line, column) to the start of `end_line`, or an empty range there."""
        t = self.t
        end = t.Position(line=line, character=column) if end_line is None else \
            t.Position(line=end_line, character=0)
        return t.Range(start=t.Position(line=line, character=column), end=end)

    def link(self, file: str, line: int) -> str:
        return f"{self.uri_of(file)}#L{line}"

    def lines(self, uri: str) -> list[str]:
        """The document's lines as the editor has them (else as on disk)."""
        return self.server.workspace.get_text_document(uri).lines

    def outside_lines(self, uri: str) -> list[str]:
        """The lines of a document outside the root: none for one that is no text (or
        cannot be read)."""
        try:
            return self.lines(uri)
        except (OSError, UnicodeDecodeError, ValueError):
            return []

    def column(self, uri: str, lines: list[str], line: int, character: int) -> int:
        """The str index of an LSP character offset (UTF-16 code units by default)."""
        codec = self.server.workspace.get_text_document(uri).position_codec
        return codec.position_from_client_units(
            lines, self.t.Position(line=line, character=character)).character

    def client_column(self, uri: str, lines: list[str], line: int, column: int) -> int:
        """The LSP character offset of a str index."""
        codec = self.server.workspace.get_text_document(uri).position_codec
        return codec.position_to_client_units(
            lines, self.t.Position(line=line, character=column)).character

    def meaning(self, uri: str, line: int, character: int):
        """(index, editor.Meaning) at a 0-based position; (index, None) where nothing
        is (between words; outside the root, a name the file imported from no module the
        index has), and (None, None) before the first index. Outside the root, the
        document's own imports say what its names stand for (`jnp.cumsum`)."""
        index, file = self.index(), self.relative(uri)
        if index is None:
            self.note_once(self.render.BUILDING.format(root=self.root or "the workspace"))
            return None, None
        lines = self.lines(uri) if file is not None else self.outside_lines(uri)
        symbol = self.editor.symbol_at(lines[line], self.column(uri, lines, line, character)) \
            if line < len(lines) else None
        if symbol is not None and file is None:
            symbol = self.editor.through_imports(symbol, self.editor.imported("".join(lines)))
        if symbol is None:  # no lines: no symbol
            return index, None
        if self.stale:
            self.note_once(self.stale)
        found = self.editor.meaning(index, file, line + 1, symbol)
        return index, None if found.empty else found

    # -- life cycle ----------------------------------------------------------------------

    def initialized(self, _params) -> None:
        """Serve the root given (`--root`, else $JAXMAP_ROOT), else the editor's
        workspace folder, else the installed jax: the index as it is on disk at once,
        brought up to date in the build process."""
        import asyncio

        from pygls.uris import to_fs_path

        workspace = self.server.workspace
        folders = list(workspace.folders.values())
        uri = folders[0].uri if folders else workspace.root_uri
        self.root = self.root or os.environ.get("JAXMAP_ROOT") or (
            to_fs_path(uri) if uri else None)
        loop = self._loop = asyncio.get_running_loop()
        for message in self._early:
            self.log(message, self.t.MessageType.Error)
        self.served = ServedSession(self.root, loop.call_soon_threadsafe, self._refreshed,
                                    self.progress.report, self._first_phase)
        self.served.start()

    def shutdown(self, _params) -> None:
        self.close()

    def close(self) -> None:
        """End the build process (and its helpers) and close the index."""
        if self.served is not None:
            self.served.close()

    def did_open(self, params) -> None:
        self.publish(params.text_document.uri)

    def did_save(self, params) -> None:
        """Refresh what the saved file changed; answers meanwhile say they are older."""
        if self.served is not None:
            self.served.refresh()

    def did_close(self, params) -> None:
        self.server.text_document_publish_diagnostics(
            self.t.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    def publish(self, uri: str) -> None:
        """The information-level findings of rule_gaps for one open document."""
        t, index, file = self.t, self.index(), self.relative(uri)
        if index is None or file is None:
            return
        found = [t.Diagnostic(range=self.range(g.line - 1, 0, g.line), message=self.render.gap(g),
                              severity=t.DiagnosticSeverity.Information, code=g.code,
                              source="jaxmap") for g in self.gaps.gaps(index, file)]
        self.server.text_document_publish_diagnostics(
            t.PublishDiagnosticsParams(uri=uri, diagnostics=found))

    # -- questions -----------------------------------------------------------------------

    def definition(self, params):
        _index, found = self.meaning(params.text_document.uri, params.position.line,
                                     params.position.character)
        return [self.location(loc) for loc in self.editor.locations(found)] if found else None

    def hover(self, params):
        t = self.t
        index, found = self.meaning(params.text_document.uri, params.position.line,
                                    params.position.character)
        if found is None:
            return None
        text = self.render.hover(found, self.link, self.editor.summaries(index, found.primitives),
                                 self.stale)
        return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=text))

    def references(self, params):
        index, found = self.meaning(params.text_document.uri, params.position.line,
                                    params.position.character)
        if found is None:
            return None
        return [self.location(loc) for loc in _places(self.editor.references(index, found))]

    def code_lens(self, params):
        """Lenses of primitives come without their titles (resolve_lens counts); those
        of rule functions come whole."""
        t, uri = self.t, params.text_document.uri
        file = self.relative(uri)
        if file is None:
            return None
        lines, found = self.lines(uri), []
        for lens in self.editor.lenses(self.index(), file):
            line = lens.line - 1
            text = lines[line] if line < len(lines) else ""
            prim = lens.primitive
            column = max(text.find(prim.variable or prim.name if prim else lens.function), 0)
            column = self.client_column(uri, lines, line, column) if text else 0
            if prim is not None:
                found.append(t.CodeLens(range=self.range(line, column), data={
                    "uri": uri, "line": line, "character": column,
                    "primitive": [prim.name, prim.variable]}))
            else:
                found.append(t.CodeLens(range=self.range(line, column), command=t.Command(
                    title=self.render.rule_lens(lens.served), command=DEFINITIONS,
                    arguments=[uri, line, column])))
        return found

    def resolve_lens(self, lens):
        data, index = lens.data or {}, self.index()
        name, variable = data.get("primitive") or ("", "")
        prim = self.editor.primitive(index, name, variable) if index else None
        counts = self.editor.counts(index, prim) if prim else None
        lens.command = self.t.Command(title=self.render.primitive_lens(counts),
                                      command=REFERENCES, arguments=[
                                          data.get("uri"), data.get("line"), data.get("character")])
        return lens

    def references_command(self, *args):
        return self._command(args, lambda index, found: _places(
            self.editor.references(index, found)))

    def definitions_command(self, *args):
        return self._command(args, lambda _index, found: self.editor.rule_locations(found))

    def _command(self, args, places) -> list:
        if len(args) != 3 or not isinstance(args[0], str) or not all(
                isinstance(a, int) for a in args[1:]):
            raise JaxmapError("a jaxmap command takes a document URI, a line and a character")
        index, found = self.meaning(*args)
        return [self.location(loc) for loc in places(index, found)] if found else []

    def workspace_symbols(self, params):
        t, index = self.t, self.index()
        if index is None:
            return None
        kinds = {"primitive": t.SymbolKind.Constant, "function": t.SymbolKind.Function,
                 "class": t.SymbolKind.Class, "variable": t.SymbolKind.Variable,
                 "module": t.SymbolKind.Module}
        return [t.SymbolInformation(name=row.name, kind=kinds.get(row.kind, t.SymbolKind.Variable),
                                    location=self.location(row.loc), container_name=row.container)
                for row in self.editor.symbols(index, params.query)]


def _places(refs) -> list:
    """The places of references, each once: one line registering several rules of a
    primitive (`ad.deflinear2(p, ...)`: a jvp and a transpose) is one location."""
    return list(dict.fromkeys(ref.loc for ref in refs))


@functools.cache
def _server_class():
    """pygls's LanguageServer, holding its answers, that tells the editor in one line
    of a message it could not read (pygls would pop up a window), answers a request
    whose params it cannot read with that error (pygls answers none: a client waiting
    for its id would wait for ever), and a value that is no JSON-RPC message (`[]`, a
    "method" that is no string) with Invalid Request (lspmessages.py)."""
    from lsprotocol import types as t
    from pygls.exceptions import JsonRpcException
    from pygls.lsp.server import LanguageServer
    from pygls.protocol import LanguageServerProtocol

    from jaxmap import lspmessages

    class Protocol(LanguageServerProtocol):
        def structure_message(self, data):
            invalid = lspmessages.judge(data) if "jsonrpc" in data else None
            if invalid is not None:  # what json.loads returns, for handle_message
                return invalid
            try:
                return super().structure_message(data)
            except JsonRpcException as error:
                if "id" in data and "method" in data:
                    self._send_response(data["id"], error=error.to_response_error())
                raise

        def handle_message(self, message):
            invalid = lspmessages.unread(message)
            if invalid is None:
                return super().handle_message(message)
            self._send_data(lspmessages.answer(invalid))
            self._server.answers.log(self._server.answers.render.INVALID_REQUEST.format(
                why=invalid.why), t.MessageType.Error)

    class Server(LanguageServer):
        answers: _Answers

        def report_server_error(self, error, source) -> None:
            self.answers.log(_one_line(error), t.MessageType.Error)

    return functools.partial(Server, protocol_cls=Protocol)


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"could not handle a message: {type(error).__name__}" + (f": {text[0]}" if text else "")


class _BuildProgress:
    """An update shown as work-done progress (`$/progress`) where the client supports
    it: begun at its first progress, ended when it ends; its percentage (stages.py)
    only rises, and its message names the stage (`call graph: 120 of 617 modules`)."""

    def __init__(self, server):
        self.server = server
        self._token: str | None = None  # of the update running
        self._begun = False
        self._unanswered: str | None = None  # of one that ended before its bar was begun
        self._count = 0
        self._told = (0, "")  # (percentage, message): the latest

    def supported(self) -> bool:
        window = self.server.client_capabilities.window
        return bool(window and window.work_done_progress)

    def report(self, progress) -> None:
        from lsprotocol import types as t

        from jaxmap.render.text import build_progress

        if not self.supported():
            return
        told = (progress.percent, build_progress(progress.stage, progress.done, progress.total))
        if self._token is None:
            self._count += 1
            token = self._token = f"jaxmap-index-{self._count}"
            self.server.work_done_progress.create(token, lambda *_: self._begin(token))
        elif self._begun and told != self._told:
            self.server.work_done_progress.report(self._token, t.WorkDoneProgressReport(
                message=told[1], percentage=told[0]))
        self._told = told

    def _begin(self, token: str) -> None:
        from lsprotocol import types as t

        if token == self._token:
            self._begun = True
        elif token == self._unanswered:  # the editor answered after the update ended
            self._unanswered = None
        else:
            return
        self.server.work_done_progress.begin(token, t.WorkDoneProgressBegin(
            title="jaxmap: indexing", percentage=self._told[0], message=self._told[1]))
        if token != self._token:
            self._ended(token)

    def end(self) -> None:
        """The update ended: its bar too, or, where the editor has not yet answered
        the bar's creation (a short update on a busy machine), once it does."""
        token, begun, self._token, self._begun = self._token, self._begun, None, False
        if token is None:
            return
        if begun:
            self._ended(token)
        else:
            self._unanswered = token

    def _ended(self, token: str) -> None:
        from lsprotocol import types as t

        self.server.work_done_progress.end(token, t.WorkDoneProgressEnd(message="index ready"))


def serve_stdio(root: str | None = None) -> None:
    """Serve `root` (None: the workspace root the editor opens) until the editor exits
    or closes stdin; then end the build process and leave at once (the thread that
    reads stdin may still wait on it). pygls's own log, tracebacks included, stays
    quiet: what a user should see goes to the editor as one line."""
    import sys

    from jaxmap.lspheaders import Headers

    require_sdk()
    pygls_log = logging.getLogger("pygls")
    pygls_log.addHandler(logging.NullHandler())
    pygls_log.propagate = False
    server = build(root)
    try:
        server.start_io(stdin=Headers(sys.stdin.buffer, server.answers.log_from_reader))
    finally:
        server.answers.close()
        try:
            sys.stdout.flush()
        except (OSError, ValueError):  # closed by pygls at `exit`
            pass
        os._exit(0)

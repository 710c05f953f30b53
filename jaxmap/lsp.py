"""`jaxmap lsp`: the index served to editors over the Language Server Protocol (stdio).

The only module that imports pygls and lsprotocol, an optional extra (`jaxmap[lsp]`).
The questions are commands/editor.py's and commands/rule_gaps.py's, the texts
render/editor.py's; this module turns URIs and positions into files and lines and
back, keeps one index open, and refreshes it in the background after each save: a
request is answered at once from the index it has, and says so while that is the
index from before the save.
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from jaxmap.errors import JaxmapError, describe
from jaxmap.session import Session

if TYPE_CHECKING:
    from asyncio import AbstractEventLoop

EXTRA = "pip install 'jaxmap[lsp]'"
REFERENCES, DEFINITIONS = "jaxmap.references", "jaxmap.definitions"


def require_sdk() -> None:
    """JaxmapError naming the extra when pygls (2.x) is not installed."""
    try:
        import pygls.lsp.server  # noqa: F401
    except ImportError:
        raise JaxmapError(f"jaxmap lsp needs pygls; install it with {EXTRA}") from None


class Served:
    """One root's index as the server holds it: opened as it is on disk at start-up,
    then kept current by refreshes that run in a worker thread, one at a time (a save
    during a refresh queues one more)."""

    def __init__(self, root: str | None, on_refreshed):
        self.root = root
        self.session: Session | None = None
        self._on_refreshed = on_refreshed  # called on the server's thread: (report, error)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jaxmap-refresh")
        self._running: Future | None = None
        self._again = False
        self._loop: AbstractEventLoop | None = None

    def start(self, workspace: str | None, loop: AbstractEventLoop) -> None:
        """Serve the root given (`--root`, else $JAXMAP_ROOT), else the editor's
        `workspace`, else the installed jax: open its index as it is, and check it
        against the files on disk in the background."""
        self.root = self.root or os.environ.get("JAXMAP_ROOT") or workspace
        self._loop = loop
        self.session = Session(self.root)
        self.session.open_as_is()
        self.refresh()

    def index(self):
        """The open index, or None while the first build runs."""
        return self.session.current() if self.session else None

    @property
    def stale(self) -> bool:
        """Whether a refresh is running while answers come from the index before it."""
        return self._running is not None and self.index() is not None

    def refresh(self) -> None:
        if self._running is not None:
            self._again = True
            return
        session, loop = self.session, self._loop
        assert session is not None and loop is not None  # start() comes first
        self._running = self._worker.submit(session.refresh)
        self._running.add_done_callback(
            lambda done: loop.call_soon_threadsafe(self._finish, done))

    def _finish(self, done: Future) -> None:
        self._running = None
        report, error = None, done.exception()
        assert self.session is not None  # a refresh ran on it
        if error is None:
            try:
                report = done.result()
                self.session.reopen()
            except (JaxmapError, OSError) as failed:
                error = failed
        if self._again:
            self._again = False
            self.refresh()
        self._on_refreshed(report, error)

    def close(self) -> None:
        self._worker.shutdown(wait=False, cancel_futures=True)
        if self.session is not None:
            self.session.close()


# The features served: (LSP method, options or None, _Answers method), declared once.
_FEATURES = (
    ("initialized", None, "initialized"),
    ("shutdown", None, "shutdown"),
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
    from pygls.lsp.server import LanguageServer

    from jaxmap import __version__

    server = LanguageServer("jaxmap", __version__,
                            text_document_sync_kind=t.TextDocumentSyncKind.Full)
    answers = _Answers(server, root)
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
        self.served = Served(root, self._refreshed)
        self.lens_options = types.CodeLensOptions(resolve_provider=True)
        self._told: set[str] = set()

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

    def note_once(self, message: str) -> None:
        """Log `message` once until the next refresh ends."""
        if message not in self._told:
            self._told.add(message)
            self.log(message)

    def _refreshed(self, report, error) -> None:
        self._told.clear()
        if error is not None:
            self.log(describe(error, debug_hint=False), self.t.MessageType.Error)
            return
        if report is not None:
            self.log(self.render.refreshed(report))
        for uri in list(self.server.workspace.text_documents):
            self.publish(uri)

    # -- places --------------------------------------------------------------------------

    def relative(self, uri: str) -> str | None:
        """The root-relative POSIX path of a file under the root; None for any other."""
        from pygls.uris import to_fs_path

        path, index = to_fs_path(uri), self.served.index()
        if path is None or index is None:
            return None
        rel = os.path.relpath(os.path.realpath(path), index.root)
        return None if rel.startswith("..") else rel.replace(os.sep, "/")

    def uri_of(self, file: str) -> str:
        from pygls.uris import from_fs_path

        return from_fs_path(os.path.join(self.served.index().root, file))

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
        is (outside the root, between words), and (None, None) before the first index."""
        index, file = self.served.index(), self.relative(uri)
        if index is None:
            self.note_once(self.render.BUILDING.format(root=self.served.root or "the workspace"))
            return None, None
        lines = self.lines(uri) if file is not None else []
        symbol = self.editor.symbol_at(lines[line], self.column(uri, lines, line, character)) \
            if line < len(lines) else None
        if symbol is None or file is None:  # no file, no lines: no symbol
            return index, None
        if self.served.stale:
            self.note_once(self.render.STALE)
        found = self.editor.meaning(index, file, line + 1, symbol)
        return index, None if found.empty else found

    # -- life cycle ----------------------------------------------------------------------

    def initialized(self, _params) -> None:
        import asyncio

        from pygls.uris import to_fs_path

        workspace = self.server.workspace
        folders = list(workspace.folders.values())
        uri = folders[0].uri if folders else workspace.root_uri
        try:
            self.served.start(to_fs_path(uri) if uri else None, asyncio.get_running_loop())
        except JaxmapError as error:
            self.log(describe(error, debug_hint=False), self.t.MessageType.Error)

    def shutdown(self, _params) -> None:
        self.served.close()

    def did_open(self, params) -> None:
        self.publish(params.text_document.uri)

    def did_save(self, _params) -> None:
        if self.served.session is not None:
            self.served.refresh()

    def did_close(self, params) -> None:
        self.server.text_document_publish_diagnostics(
            self.t.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    def publish(self, uri: str) -> None:
        """The information-level findings of rule_gaps for one open document."""
        t, index, file = self.t, self.served.index(), self.relative(uri)
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
                                 self.served.stale)
        return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=text))

    def references(self, params):
        index, found = self.meaning(params.text_document.uri, params.position.line,
                                    params.position.character)
        if found is None:
            return None
        return [self.location(ref.loc) for ref in self.editor.references(index, found)]

    def code_lens(self, params):
        """Lenses of primitives come without their titles (resolve_lens counts); those
        of rule functions come whole."""
        t, uri = self.t, params.text_document.uri
        file = self.relative(uri)
        if file is None:
            return None
        lines, found = self.lines(uri), []
        for lens in self.editor.lenses(self.served.index(), file):
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
        data, index = lens.data or {}, self.served.index()
        name, variable = data.get("primitive") or ("", "")
        prim = self.editor.primitive(index, name, variable) if index else None
        counts = self.editor.counts(index, prim) if prim else None
        lens.command = self.t.Command(title=self.render.primitive_lens(counts),
                                      command=REFERENCES, arguments=[
                                          data.get("uri"), data.get("line"), data.get("character")])
        return lens

    def references_command(self, *args):
        return self._command(args, lambda index, found: [
            ref.loc for ref in self.editor.references(index, found)])

    def definitions_command(self, *args):
        return self._command(args, lambda _index, found: self.editor.locations(found))

    def _command(self, args, places) -> list:
        if len(args) != 3 or not isinstance(args[0], str) or not all(
                isinstance(a, int) for a in args[1:]):
            raise JaxmapError("a jaxmap command takes a document URI, a line and a character")
        index, found = self.meaning(*args)
        return [self.location(loc) for loc in places(index, found)] if found else []

    def workspace_symbols(self, params):
        t, index = self.t, self.served.index()
        if index is None:
            return None
        kinds = {"primitive": t.SymbolKind.Constant, "function": t.SymbolKind.Function,
                 "class": t.SymbolKind.Class, "variable": t.SymbolKind.Variable,
                 "module": t.SymbolKind.Module}
        return [t.SymbolInformation(name=row.name, kind=kinds.get(row.kind, t.SymbolKind.Variable),
                                    location=self.location(row.loc), container_name=row.container)
                for row in self.editor.symbols(index, params.query)]


def serve_stdio(root: str | None = None) -> None:
    """Serve `root` (None: the workspace root the editor opens) until the editor exits."""
    require_sdk()
    build(root).start_io()

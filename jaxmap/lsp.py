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

from jaxmap.errors import JaxmapError, describe
from jaxmap.session import Session

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
        self._loop = None

    def start(self, root: str | None, loop) -> None:
        """Serve `root` (the workspace's, unless one was given): open its index as it is,
        and check it against the files on disk in the background."""
        self.root = self.root or root
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
        self._running = self._worker.submit(self.session.refresh)
        self._running.add_done_callback(
            lambda done: self._loop.call_soon_threadsafe(self._finish, done))

    def _finish(self, done: Future) -> None:
        self._running = None
        error = done.exception()
        report = None
        if error is None:
            report = done.result()
            self.session.reopen()
        if self._again:
            self._again = False
            self.refresh()
        self._on_refreshed(report, error)

    def close(self) -> None:
        self._worker.shutdown(wait=False, cancel_futures=True)
        if self.session is not None:
            self.session.close()


def build(root: str | None = None):
    """A pygls LanguageServer for `root` (None: the workspace root the editor opens)."""
    from lsprotocol import types as t
    from pygls.lsp.server import LanguageServer

    from jaxmap.commands import editor, rule_gaps
    from jaxmap.render import editor as render

    from jaxmap import __version__

    server = LanguageServer("jaxmap", __version__,
                            text_document_sync_kind=t.TextDocumentSyncKind.Full)
    told: set[str] = set()

    def log(message: str, kind=t.MessageType.Info) -> None:
        server.window_log_message(t.LogMessageParams(type=kind, message=f"jaxmap: {message}"))

    def note_once(message: str) -> None:
        if message not in told:
            told.add(message)
            log(message)

    def refreshed(report, error) -> None:
        told.clear()
        if error is not None:
            log(describe(error, debug_hint=False), t.MessageType.Error)
            return
        if report is not None:
            log(f"index refreshed: {report.parsed} files parsed, {report.removed} removed, "
                f"{report.primitives} primitives")
        for uri in list(server.workspace.text_documents):
            publish(uri)

    served = Served(root, refreshed)

    # -- places ------------------------------------------------------------------------

    def relative(uri: str) -> str | None:
        """The root-relative POSIX path of a file under the root; None for any other."""
        from pygls.uris import to_fs_path

        path = to_fs_path(uri)
        index = served.index()
        if path is None or index is None:
            return None
        rel = os.path.relpath(os.path.realpath(path), index.root)
        return None if rel.startswith("..") else rel.replace(os.sep, "/")

    def uri_of(file: str) -> str:
        from pygls.uris import from_fs_path

        return from_fs_path(os.path.join(served.index().root, file))

    def location(loc) -> t.Location:
        line = max(loc.line - 1, 0)
        return t.Location(uri=uri_of(loc.file), range=_range(t, line, 0, line + 1))

    def link(file: str, line: int) -> str:
        return f"{uri_of(file)}#L{line}"

    def at(uri: str, position: t.Position):
        """(index, file, 1-based line, symbol) at a position, or None."""
        index, file = served.index(), relative(uri)
        if index is None:
            note_once(render.BUILDING.format(root=served.root or "the workspace"))
            return None
        if file is None:
            return None
        lines = server.workspace.get_text_document(uri).lines
        if position.line >= len(lines):
            return None
        symbol = editor.symbol_at(lines[position.line], position.character)
        if symbol is None:
            return None
        if served.stale:
            note_once(render.STALE)
        return index, file, position.line + 1, symbol

    def meaning(uri: str, position: t.Position):
        here = at(uri, position)
        if here is None:
            return None, None
        index, file, line, symbol = here
        return index, editor.meaning(index, file, line, symbol)

    def answering(default):
        """A handler that answers `default` and logs the message on a JaxmapError."""
        def wrap(handler):
            def run(ls, params):
                try:
                    return handler(params)
                except JaxmapError as error:
                    log(describe(error, debug_hint=False), t.MessageType.Warning)
                    return default
            run.__name__ = handler.__name__
            return run
        return wrap

    # -- life cycle --------------------------------------------------------------------

    @server.feature(t.INITIALIZED)
    def initialized(ls, _params) -> None:
        import asyncio

        folders = ls.workspace.folders
        workspace = next(iter(folders.values())).uri if folders else ls.workspace.root_uri
        from pygls.uris import to_fs_path

        try:
            served.start(to_fs_path(workspace) if workspace else None,
                         asyncio.get_running_loop())
        except JaxmapError as error:
            log(describe(error, debug_hint=False), t.MessageType.Error)

    @server.feature(t.SHUTDOWN)
    def shutdown(ls, _params) -> None:
        served.close()

    @server.feature(t.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: t.DidOpenTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @server.feature(t.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls, params: t.DidSaveTextDocumentParams) -> None:
        if served.session is not None:
            served.refresh()

    @server.feature(t.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: t.DidCloseTextDocumentParams) -> None:
        ls.text_document_publish_diagnostics(
            t.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    def publish(uri: str) -> None:
        index, file = served.index(), relative(uri)
        if index is None or file is None:
            return
        try:
            found = rule_gaps.gaps(index, file)
        except JaxmapError as error:
            log(describe(error, debug_hint=False), t.MessageType.Warning)
            return
        server.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri=uri, diagnostics=[
            t.Diagnostic(range=_range(t, g.line - 1, 0, g.line), message=render.gap(g),
                         severity=t.DiagnosticSeverity.Information, code=g.code,
                         source="jaxmap") for g in found]))

    # -- questions ---------------------------------------------------------------------

    @server.feature(t.TEXT_DOCUMENT_DEFINITION)
    @answering(None)
    def definition(params: t.DefinitionParams):
        _index, found = meaning(params.text_document.uri, params.position)
        if found is None or found.empty:
            return None
        return [location(loc) for loc in editor.locations(found)]

    @server.feature(t.TEXT_DOCUMENT_HOVER)
    @answering(None)
    def hover(params: t.HoverParams):
        index, found = meaning(params.text_document.uri, params.position)
        if found is None:
            return None
        text = render.hover(found, link, editor.summaries(index, found.primitives),
                            served.stale)
        if text is None:
            return None
        return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=text))

    @server.feature(t.TEXT_DOCUMENT_REFERENCES)
    @answering(None)
    def references(params: t.ReferenceParams):
        index, found = meaning(params.text_document.uri, params.position)
        if found is None or found.empty:
            return None
        return [location(ref.loc) for ref in editor.references(index, found)]

    @server.feature(t.TEXT_DOCUMENT_CODE_LENS, t.CodeLensOptions(resolve_provider=True))
    @answering(None)
    def code_lens(params: t.CodeLensParams):
        uri, index = params.text_document.uri, served.index()
        file = relative(uri)
        if file is None:
            return None
        lines = server.workspace.get_text_document(uri).lines
        found = []
        for lens in editor.lenses(index, file):
            line = lens.line - 1
            text = lines[line] if line < len(lines) else ""
            if lens.primitive is not None:
                column = max(text.find(lens.primitive.variable or lens.primitive.name), 0)
                found.append(t.CodeLens(range=_range(t, line, column), data={
                    "uri": uri, "line": line, "character": column,
                    "primitive": [lens.primitive.name, lens.primitive.variable]}))
            else:
                column = max(text.find(lens.function), 0)
                found.append(t.CodeLens(range=_range(t, line, column), command=t.Command(
                    title=render.rule_lens(lens.served), command=DEFINITIONS,
                    arguments=[uri, line, column])))
        return found

    @server.feature(t.CODE_LENS_RESOLVE)
    @answering(None)
    def resolve_lens(lens: t.CodeLens):
        data = lens.data or {}
        index = served.index()
        name, variable = data.get("primitive") or ("", "")
        prim = editor.primitive(index, name, variable)
        title = render.primitive_lens(editor.counts(index, prim)) if prim else "no longer indexed"
        lens.command = t.Command(title=title, command=REFERENCES, arguments=[
            data.get("uri"), data.get("line"), data.get("character")])
        return lens

    @server.command(REFERENCES)
    def references_command(ls, *args):
        return run_command(args, lambda index, found: [ref.loc
                                                       for ref in editor.references(index, found)])

    @server.command(DEFINITIONS)
    def definitions_command(ls, *args):
        return run_command(args, lambda index, found: editor.locations(found))

    def run_command(args, places):
        if len(args) != 3:
            raise JaxmapError("a jaxmap command takes a document URI, a line and a character")
        uri, line, character = args
        index, found = meaning(uri, t.Position(line=int(line), character=int(character)))
        if found is None or found.empty:
            return []
        return [location(loc) for loc in places(index, found)]

    @server.feature(t.WORKSPACE_SYMBOL)
    @answering(None)
    def workspace_symbols(params: t.WorkspaceSymbolParams):
        index = served.index()
        if index is None:
            return None
        kinds = {"primitive": t.SymbolKind.Constant, "function": t.SymbolKind.Function,
                 "class": t.SymbolKind.Class, "variable": t.SymbolKind.Variable,
                 "module": t.SymbolKind.Module}
        return [t.SymbolInformation(name=row.name, kind=kinds.get(row.kind, t.SymbolKind.Variable),
                                    location=location(row.loc), container_name=row.container)
                for row in editor.symbols(index, params.query)]

    return server


def _range(t, line: int, column: int, end_line: int | None = None):
    """From (line, column) to the start of `end_line`, or an empty range there."""
    end = t.Position(line=end_line, character=0) if end_line is not None else \
        t.Position(line=line, character=column)
    return t.Range(start=t.Position(line=line, character=column), end=end)


def serve_stdio(root: str | None = None) -> None:
    """Serve `root` (None: the workspace root the editor opens) until the editor exits."""
    require_sdk()
    build(root).start_io()

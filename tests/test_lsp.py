"""`jaxmap lsp` end to end: the real server over stdio, driven by pytest-lsp's client,
on a copy of the minijax fixture (with a module of siblings added) and on the
installed jax, asked at real positions in real files (found by searching their text,
never hard-coded)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest
import pytest_asyncio
from lsp_logs import logged
from lsprotocol import types as t
from markers import ROOT, mark
from pytest_lsp import ClientServerConfig

pytestmark = pytest.mark.asyncio(loop_scope="module")

SERVER = [sys.executable, "-m", "jaxmap", "lsp"]
READY = "index refreshed"
# A module of siblings: three primitives with a batching rule and one without; one
# lowering registered for a platform JAX does not know.
SIBLINGS = """\
from jax._src import core
from jax._src.interpreters import batching
from jax._src.interpreters import mlir


def _rule(*args):
  return args


a_p = core.Primitive('a')
b_p = core.Primitive('b')
c_p = core.Primitive('c')
d_p = core.Primitive('d')  # no batching rule
batching.primitive_batchers[a_p] = _rule
batching.primitive_batchers[b_p] = _rule
batching.primitive_batchers[c_p] = _rule
mlir.register_lowering(a_p, _rule, platform='gpuu')
"""
SIBLINGS_FILE = "jax/_src/siblings.py"
# Code as users write it, outside jax.
USER = {"app/__init__.py": "", "app/model.py": "from jax import lax\n\n\ndef total(x):\n"
                                               "  return lax.psum(x, 'i')\n\n\n"
                                               "def wide(x):\n"
                                               "  s = '😋😋😋😋😋'; return lax.psum(x, s)\n"}


async def _start(root: Path, cache: Path, *args: str, ready: bool = True, **env: str):
    """A client, initialized on `root`, whose server keeps its index under `cache`
    (and has `env`); with `ready`, once the server has said it built its index."""
    env = {**{k: v for k, v in os.environ.items() if k != "JAXMAP_ROOT"},
           "JAXMAP_CACHE_DIR": str(cache), **env}
    client = await ClientServerConfig(SERVER + list(args), server_env=env).start()
    await client.initialize_session(t.InitializeParams(
        capabilities=t.ClientCapabilities(), root_uri=root.as_uri(),
        workspace_folders=[t.WorkspaceFolder(root.as_uri(), root.name)]))
    if ready:
        await logged(client, READY)
    return client


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tree") / "minijax"
    shutil.copytree(ROOT, root)
    (root / SIBLINGS_FILE).write_text(SIBLINGS)
    for file, text in USER.items():
        (root / file).parent.mkdir(exist_ok=True)
        (root / file).write_text(text)
    return root


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(tree, tmp_path_factory):
    client = await _start(tree, tmp_path_factory.mktemp("cache"))
    yield client
    await client.shutdown_session()
    await client.stop()


def _doc(root: Path, file: str) -> t.TextDocumentIdentifier:
    return t.TextDocumentIdentifier((root / file).as_uri())


def _at(root: Path, file: str, line: int, word: str, offset: int = 0) -> dict:
    """The document and position of `word` on 1-based `line` of `file`."""
    text = (root / file).read_text().splitlines()[line - 1]
    assert word in text, (word, text)
    return {"text_document": _doc(root, file),
            "position": t.Position(line - 1, text.index(word) + offset)}


def _line_of(root: Path, file: str, text: str) -> int:
    return next(n for n, line in enumerate((root / file).read_text().splitlines(), 1)
                if text in line)


def _places(locations) -> list[tuple[str, int]]:
    return [(Path(t_uri(loc)).name, loc.range.start.line + 1) for loc in locations]


def t_uri(loc) -> str:
    from pygls.uris import to_fs_path

    return to_fs_path(loc.uri)


def _hover_text(hover) -> str:
    assert hover is not None
    return hover.contents.value


PARALLEL = "jax/_src/lax/parallel.py"


async def test_definition_of_a_primitive_variable_offers_its_rules(client, tree):
    file, line = mark("psum-deflinear2")
    places = _places(await client.text_document_definition_async(
        t.DefinitionParams(**_at(tree, file, line, "psum_p"))))
    expected = [mark(key)[1] for key in ("psum-create", "psum-impl", "psum-aeval",
                                          "psum-lowering", "psum-deflinear2", "psum-batcher")]
    assert places[0] == ("parallel.py", expected[0])
    assert {line for _name, line in places} >= set(expected)


async def test_definition_of_a_name_string_and_of_a_bind(client, tree):
    file, line = mark("psum-create")
    by_string = await client.text_document_definition_async(
        t.DefinitionParams(**_at(tree, file, line, "'psum'", 1)))
    bind_line = _line_of(tree, PARALLEL, "return psum_p.bind(x, axes=axis_name)")
    by_bind = await client.text_document_definition_async(
        t.DefinitionParams(**_at(tree, PARALLEL, bind_line, "bind")))
    assert _places(by_string)[0] == _places(by_bind)[0] == ("parallel.py", line)


async def test_definition_of_a_registry_helper_and_a_rule_function(client, tree):
    file, line = mark("psum-deflinear2")
    helper = await client.text_document_definition_async(
        t.DefinitionParams(**_at(tree, file, line, "deflinear2")))
    rule = await client.text_document_definition_async(
        t.DefinitionParams(**_at(tree, file, line, "_psum_transpose_rule")))
    ad = "jax/_src/interpreters/ad.py"
    assert _places(helper) == [("ad.py", _line_of(tree, ad, "def deflinear2("))]
    assert _places(rule) == [("parallel.py", _line_of(tree, PARALLEL,
                                                       "def _psum_transpose_rule("))]


async def test_definition_of_a_user_spelling_offers_the_primitive_it_binds(client, tree):
    places = _places(await client.text_document_definition_async(
        t.DefinitionParams(**_at(tree, "app/model.py", 5, "psum"))))
    assert places[0] == ("parallel.py", _line_of(tree, PARALLEL, "def psum("))
    assert places[1] == ("parallel.py", mark("psum-create")[1])
    assert ("parallel.py", mark("psum-batcher")[1]) in places


async def test_positions_count_utf16_code_units(client, tree):
    at = _at(tree, "app/model.py", 9, "psum")
    at["position"].character += 5  # five emoji before it, two UTF-16 units each
    places = _places(await client.text_document_definition_async(t.DefinitionParams(**at)))
    assert places[0] == ("parallel.py", _line_of(tree, PARALLEL, "def psum("))


async def test_hover_on_a_primitive_lists_rules_by_kind(client, tree):
    file, line = mark("psum-impl")
    text = _hover_text(await client.text_document_hover_async(
        t.HoverParams(**_at(tree, file, line, "psum_p"))))
    assert "primitive `psum`" in text
    for kind, key in (("impl", "psum-impl"), ("transpose", "psum-deflinear2"),
                      ("batching", "psum-batcher")):
        assert f"- {kind}: [{PARALLEL}:{mark(key)[1]}](" in text
    assert "platforms: all (a default lowering)" in text


async def test_hover_on_a_rule_function_names_its_primitive_and_kind(client, tree):
    line = _line_of(tree, PARALLEL, "def _psum_transpose_rule(")
    text = _hover_text(await client.text_document_hover_async(
        t.HoverParams(**_at(tree, PARALLEL, line, "_psum_transpose_rule"))))
    assert f"transpose rule of `psum`, registered at [{PARALLEL}:{mark('psum-deflinear2')[1]}]" \
        in text


async def test_code_lenses_above_primitives_and_rule_functions(client, tree):
    lenses = await client.text_document_code_lens_async(
        t.CodeLensParams(_doc(tree, PARALLEL)))
    by_line = {lens.range.start.line + 1: lens for lens in lenses}
    prim = await client.code_lens_resolve_async(by_line[mark("psum-create")[1]])
    assert prim.command.title.startswith("6 rules · ")
    assert " binders · " in prim.command.title
    rule = by_line[_line_of(tree, PARALLEL, "def _psum_transpose_rule(")]
    assert rule.command.title == "transpose rule of psum"
    places = await client.workspace_execute_command_async(t.ExecuteCommandParams(
        rule.command.command, rule.command.arguments))
    assert mark("psum-deflinear2")[1] in [p["range"]["start"]["line"] + 1 for p in places]


async def test_references_of_a_primitive_are_its_binds_and_registrations(client, tree):
    file, line = mark("psum-create")
    refs = await client.text_document_references_async(t.ReferenceParams(
        context=t.ReferenceContext(include_declaration=False), **_at(tree, file, line, "psum_p")))
    lines = {line for _name, line in _places(refs)}
    assert _line_of(tree, PARALLEL, "return psum_p.bind(x, axes=axis_name)") in lines
    assert _line_of(tree, PARALLEL, "return psum_p.bind(x, axes=axis_name) / 2") in lines
    assert mark("psum-batcher")[1] in lines
    # `ad.deflinear2(psum_p, ...)` registers a jvp and a transpose: one location
    assert mark("psum-deflinear2")[1] in lines
    assert len({(ref.uri, ref.range.start.line) for ref in refs}) == len(refs)


async def test_references_of_a_function_are_its_calls(client, tree):
    line = _line_of(tree, PARALLEL, "def _psum_halved(")
    refs = await client.text_document_references_async(t.ReferenceParams(
        context=t.ReferenceContext(include_declaration=False),
        **_at(tree, PARALLEL, line, "_psum_halved")))
    assert _places(refs) == [("parallel.py", _line_of(tree, PARALLEL,
                                                       "return _psum_halved(x, axis_name)"))]


async def test_references_of_a_rule_function_are_its_registrations_each_once(client, tree):
    """`_rule` is registered as three batching rules and one lowering, each on a line
    of its own."""
    line = _line_of(tree, SIBLINGS_FILE, "def _rule(")
    refs = await client.text_document_references_async(t.ReferenceParams(
        context=t.ReferenceContext(include_declaration=False),
        **_at(tree, SIBLINGS_FILE, line, "_rule")))
    places = _places(refs)
    assert [("siblings.py", _line_of(tree, SIBLINGS_FILE, text))
            for text in ("primitive_batchers[a_p]", "primitive_batchers[b_p]",
                         "primitive_batchers[c_p]", "mlir.register_lowering(a_p")] == sorted(
        place for place in places if place[0] == "siblings.py")
    assert len(set(places)) == len(places)


async def test_workspace_symbols_find_primitives_public_paths_and_private_functions(client):
    symbols = await client.workspace_symbol_async(t.WorkspaceSymbolParams(query="psum"))
    named = {(s.name, s.kind) for s in symbols}
    assert ("psum", t.SymbolKind.Constant) in named
    assert ("jax.lax.psum", t.SymbolKind.Function) in named
    assert ("_psum_halved", t.SymbolKind.Function) in named


async def test_diagnostics_name_a_missing_rule_and_an_unknown_platform(client, tree):
    uri = (tree / SIBLINGS_FILE).as_uri()
    client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(
        uri, "python", 1, (tree / SIBLINGS_FILE).read_text())))
    for _ in range(200):
        if uri in client.diagnostics:
            break
        await asyncio.sleep(0.05)
    found = {(d.range.start.line + 1, d.code, d.severity) for d in client.diagnostics[uri]}
    info = t.DiagnosticSeverity.Information
    assert (_line_of(tree, SIBLINGS_FILE, "d_p = "), "missing-rule", info) in found
    assert (_line_of(tree, SIBLINGS_FILE, "platform='gpuu'"), "unknown-platform", info) in found
    assert not any(line == _line_of(tree, SIBLINGS_FILE, "a_p = ") for line, *_ in found)


async def test_a_save_refreshes_the_index_in_the_background(client, tree):
    path = tree / "jax/_src/fresh.py"
    path.write_text("from jax._src import core\n")
    client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(
        path.as_uri(), "python", 1, path.read_text())))
    path.write_text(path.read_text() + "e_p = core.Primitive('e')\n")
    client.text_document_did_change(t.DidChangeTextDocumentParams(  # as an editor would
        t.VersionedTextDocumentIdentifier(2, path.as_uri()),
        [t.TextDocumentContentChangeWholeDocument(path.read_text())]))
    seen = len(client.log_messages)
    client.text_document_did_save(t.DidSaveTextDocumentParams(_doc(tree, "jax/_src/fresh.py")))
    assert "1 files parsed" in await logged(client, READY, after=seen)
    places = await client.text_document_definition_async(
        t.DefinitionParams(**_at(tree, "jax/_src/fresh.py", 2, "e_p")))
    assert _places(places) == [("fresh.py", 2)]


async def test_during_a_refresh_answers_come_from_the_previous_index_and_say_so(client, tree):
    from jaxmap.render.editor import STALE

    path = tree / "jax/_src/fresh.py"  # written by the test before, if it ran here
    before = path.read_text() if path.exists() else "from jax._src import core\n"
    path.write_text(before + "f_p = core.Primitive('f')\n")
    hover = t.HoverParams(**_at(tree, *mark("psum-impl"), "psum_p"))
    seen = len(client.log_messages)
    client.text_document_did_save(t.DidSaveTextDocumentParams(_doc(tree, "jax/_src/fresh.py")))
    during = await client.text_document_hover_async(hover)  # the refresh takes far longer
    await logged(client, READY, after=seen)
    after = await client.text_document_hover_async(hover)
    assert STALE in _hover_text(during)
    assert STALE not in _hover_text(after)


async def test_a_save_answers_from_its_first_phase_while_the_call_graph_is_solved(client, tree):
    from jaxmap.render.editor import FIRST_PHASE

    path, file = tree / "jax/_src/early.py", "jax/_src/early.py"
    path.write_text("import math\n\n\ndef h(x):\n  return x\n\n\ndef g(x):\n  return x\n")
    client.text_document_did_save(t.DidSaveTextDocumentParams(_doc(tree, file)))
    await logged(client, READY, after=len(client.log_messages))  # the new file, solved
    # a call added in a body the first phase does not read: its call graph is solved again
    path.write_text(path.read_text().replace("def g(x):\n", "def g(x):\n  h(x)\n"))
    seen = len(client.log_messages)
    client.text_document_did_save(t.DidSaveTextDocumentParams(_doc(tree, file)))
    first = await logged(client, FIRST_PHASE.split(":")[0], after=seen)
    assert "1 files parsed" in first
    places = await client.text_document_definition_async(
        t.DefinitionParams(**_at(tree, file, 9, "h")))
    assert _places(places) == [("early.py", 4)]
    ready = await logged(client, READY, after=seen)
    messages = [m.message for m in client.log_messages[seen:]]
    assert messages.index(first) < messages.index(ready)
    refs = await client.text_document_references_async(t.ReferenceParams(
        context=t.ReferenceContext(include_declaration=False), **_at(tree, file, 4, "h")))
    assert _places(refs) == [("early.py", 9)]  # the call graph solved again


async def test_a_bad_request_leaves_the_server_answering(client, tree):
    outside = await client.text_document_definition_async(t.DefinitionParams(
        t.TextDocumentIdentifier(Path(sys.executable).resolve().as_uri()), t.Position(0, 0)))
    assert outside is None
    with pytest.raises(Exception, match="takes a document URI"):
        await client.workspace_execute_command_async(
            t.ExecuteCommandParams("jaxmap.references", ["only one"]))
    file, line = mark("psum-create")
    assert await client.text_document_hover_async(
        t.HoverParams(**_at(tree, file, line, "psum_p"))) is not None


# Code as users write it, in a file outside the root, open in the editor and never saved.
OUTSIDE = "import jax\nfrom jax import lax as L\n\n\ndef f(y):\n  return L.psum(y, 'i')\n"


async def _open_outside(client, folder: Path, text: str) -> t.TextDocumentIdentifier:
    uri = (folder / "user.py").as_uri()
    client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(
        uri, "python", 1, text)))
    return t.TextDocumentIdentifier(uri)


def _in(text: str, line: int, word: str) -> t.Position:
    return t.Position(line - 1, text.splitlines()[line - 1].index(word))


async def test_outside_the_root_a_files_own_imports_say_what_its_names_mean(
        client, tree, tmp_path):
    doc = await _open_outside(client, tmp_path, OUTSIDE)
    at = _in(OUTSIDE, 6, "psum")
    places = _places(await client.text_document_definition_async(t.DefinitionParams(doc, at)))
    assert places[0] == ("parallel.py", _line_of(tree, PARALLEL, "def psum("))
    assert places[1] == ("parallel.py", mark("psum-create")[1])
    assert ("parallel.py", mark("psum-batcher")[1]) in places
    text = _hover_text(await client.text_document_hover_async(t.HoverParams(doc, at)))
    assert "**function `jax.lax.psum`**" in text
    assert f"binds **primitive `psum`** (`psum_p`, [{PARALLEL}:{mark('psum-create')[1]}](" \
        in text
    assert f"- batching: [{PARALLEL}:{mark('psum-batcher')[1]}](" in text
    for line, word in ((5, "f"), (5, "y")):  # names no import of the file binds
        assert await client.text_document_definition_async(
            t.DefinitionParams(doc, _in(OUTSIDE, line, word))) is None


# -- the installed jax, from the test session's index of it -------------------------


@pytest.fixture(scope="module")
def installed_root(installed_index) -> Path:
    return Path(installed_index.root)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def installed(installed_index, installed_root):
    client = await _start(installed_root, Path(installed_index.path).parent, ready=False)
    yield client
    await client.shutdown_session()
    await client.stop()


INSTALLED_PARALLEL = "jax/_src/lax/parallel.py"
LAX = "jax/_src/lax/lax.py"


async def test_installed_definition_and_hover_of_psum_p(installed, installed_root):
    line = _line_of(installed_root, INSTALLED_PARALLEL, "psum_p = core.Primitive('psum')")
    at = _at(installed_root, INSTALLED_PARALLEL, line, "psum_p")
    places = _places(await installed.text_document_definition_async(t.DefinitionParams(**at)))
    assert places[0] == ("parallel.py", line)
    registered = _line_of(installed_root, INSTALLED_PARALLEL, "ad.deflinear2(psum_p,")
    assert ("parallel.py", registered) in places
    text = _hover_text(await installed.text_document_hover_async(t.HoverParams(**at)))
    assert f"- transpose: [{INSTALLED_PARALLEL}:{registered}](" in text
    assert "platforms: " in text


async def test_installed_user_spelling_goes_where_the_call_graph_resolved_it(
        installed, installed_root, installed_index):
    file = "jax/_src/nn/functions.py"
    line = _line_of(installed_root, file, "jnp.einsum('BMK,BNK->BMN'")
    places = await installed.text_document_definition_async(
        t.DefinitionParams(**_at(installed_root, file, line, "einsum")))
    (einsum,) = [d for d in installed_index.definitions_named("jax.numpy.einsum")
                 if d.kind.value == "function"]
    assert _places(places)[0] == (Path(einsum.loc.file).name, einsum.loc.line)


async def test_installed_code_lens_counts_match_the_commands(installed, installed_root,
                                                            installed_index):
    from jaxmap.commands import callgraph

    lenses = await installed.text_document_code_lens_async(
        t.CodeLensParams(_doc(installed_root, LAX)))
    by_line = {lens.range.start.line + 1: lens for lens in lenses}
    line = _line_of(installed_root, LAX, "dot_general_p = standard_primitive(")
    title = (await installed.code_lens_resolve_async(by_line[line])).command.title
    (prim,) = installed_index.primitives_named("dot_general_p", "dot_general")
    binders = len(callgraph.binds(installed_index, "dot_general_p").found)
    assert title == f"{len(prim.rules)} rules · {binders:,} binders · {len(prim.tests):,} tests"
    rule = by_line[_line_of(installed_root, LAX, "def _dot_general_transpose_lhs(")]
    assert rule.command.title == "transpose rule of dot_general"


async def test_installed_references_of_a_batching_rule_are_its_registration(
        installed, installed_root):
    line = _line_of(installed_root, LAX, "def _clamp_batch_rule(")
    refs = await installed.text_document_references_async(t.ReferenceParams(
        context=t.ReferenceContext(include_declaration=False),
        **_at(installed_root, LAX, line, "_clamp_batch_rule")))
    assert ("lax.py", _line_of(installed_root, LAX, "primitive_batchers[clamp_p] = ")) \
        in _places(refs)
    assert len(set(_places(refs))) == len(refs)


# The new user's file: jnp and lax as most code imports them.
USER_CODE = ("import jax\nimport jax.numpy as jnp\nfrom jax import lax\n\ndef f(x):\n"
             "  y = jnp.cumsum(x)\n  return lax.psum(y, \"i\")\n")


@pytest.mark.parametrize("line, word, defined, primitive", [
    (6, "cumsum", ("jax/_src/numpy/reductions.py", "def cumsum("),
     ("jax/_src/lax/control_flow/loops.py", "cumsum_p = ")),
    (7, "psum", (INSTALLED_PARALLEL, "def psum("),
     (INSTALLED_PARALLEL, "psum_p = core.Primitive('psum')")),
])
async def test_installed_outside_the_root_jnp_and_lax_go_to_the_function_and_its_primitive(
        installed, installed_root, tmp_path, line, word, defined, primitive):
    doc = await _open_outside(installed, tmp_path, USER_CODE)
    at = _in(USER_CODE, line, word)
    places = _places(await installed.text_document_definition_async(
        t.DefinitionParams(doc, at)))
    assert places[0] == (Path(defined[0]).name, _line_of(installed_root, *defined))
    created = _line_of(installed_root, *primitive)
    assert places[1] == (Path(primitive[0]).name, created)
    text = _hover_text(await installed.text_document_hover_async(t.HoverParams(doc, at)))
    assert f"binds **primitive `{word}`** (`{word}_p`, [{primitive[0]}:{created}](" in text
    assert "- transpose: [" in text


async def test_installed_workspace_symbols(installed):
    symbols = await installed.workspace_symbol_async(t.WorkspaceSymbolParams(query="dot_general"))
    named = {(s.name, s.kind) for s in symbols}
    assert ("dot_general", t.SymbolKind.Constant) in named
    assert ("jax.lax.dot_general", t.SymbolKind.Function) in named


# -- a tree that is not JAX ----------------------------------------------------------


async def test_a_tree_that_is_not_jax_still_serves_its_names_from_jaxmap_root(tmp_path):
    root = tmp_path / "plain"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "util.py").write_text("def helper(x):\n    return x\n")
    (root / "pkg" / "main.py").write_text("from pkg import util\n\n\n"
                                          "def run():\n    return util.helper(1)\n")
    elsewhere = tmp_path / "elsewhere"  # the editor's folder: $JAXMAP_ROOT wins over it
    elsewhere.mkdir()
    client = await _start(elsewhere, tmp_path / "cache", ready=False, JAXMAP_ROOT=str(root))
    try:
        definition = t.DefinitionParams(**_at(root, "pkg/main.py", 5, "helper"))
        assert await client.text_document_definition_async(definition) is None  # building
        assert "being built" in await logged(client, "jaxmap: ")
        await logged(client, READY)
        assert _places(await client.text_document_definition_async(definition)) == [
            ("util.py", 1)]
        refs = await client.text_document_references_async(t.ReferenceParams(
            context=t.ReferenceContext(include_declaration=False),
            **_at(root, "pkg/util.py", 1, "helper")))
        assert _places(refs) == [("main.py", 5)]
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_an_update_that_ends_before_its_bar_is_answered_still_shows_it_whole():
    """An editor answers the progress bar's creation after the update ended (a short
    update on a busy machine): the bar is begun then, and ended at once; before, it
    was never begun, so the editor saw no progress at all."""
    from types import SimpleNamespace

    from jaxmap.lsp import _BuildProgress

    sent, answers = [], []
    bar = SimpleNamespace(create=lambda token, answered: answers.append(answered),
                          begin=lambda token, value: sent.append((token, value.kind)),
                          report=lambda token, value: sent.append((token, value.kind)),
                          end=lambda token, value: sent.append((token, value.kind)))
    server = SimpleNamespace(work_done_progress=bar, client_capabilities=SimpleNamespace(
        window=SimpleNamespace(work_done_progress=True)))
    progress = _BuildProgress(server)
    progress.report(SimpleNamespace(percent=50, stage=0, done=1, total=2))
    progress.end()
    assert sent == []  # the editor has not answered yet
    answers[0]()
    assert sent == [("jaxmap-index-1", "begin"), ("jaxmap-index-1", "end")]
    progress.report(SimpleNamespace(percent=10, stage=0, done=0, total=2))  # the next update
    answers[1]()
    progress.report(SimpleNamespace(percent=60, stage=0, done=1, total=2))
    progress.end()
    assert sent[2:] == [("jaxmap-index-2", "begin"), ("jaxmap-index-2", "report"),
                        ("jaxmap-index-2", "end")]

"""`jaxmap lsp` figures on a warm index, side by side in one run.

    python benchmarks/bench_lsp.py [--root PATH] [--requests N] [--starts N] [--refreshes N]
                                   [--body-edits N] [--call-edits N] [--leaf-call-edits N]
                                   [--settle S] [--cold]

Prints, for N definition and N hover requests at real positions (every `*_p` name and
every `def` in two of jax's busiest files, taken in turn): the p50/p95 of the work the
server's handlers do (commands/editor.py and render/editor.py on the warm index, in
this process) and of the round trip from a pygls client over stdio to a real
`jaxmap lsp` process; then the time from starting that process to its first answer
(initialize, then a definition) on a warm cache, beside a process that only imports
pygls and lsprotocol, the floor of any pygls server. With --refreshes N (on a copy of
the root's jax/ in a temporary folder, indexed there first): N times, a primitive
appended to parallel.py and saved, the time from didSave to the first answer that
knows it, and the p50/p95 of definitions and hovers asked meanwhile (answered from the
previous index) beside those at rest; with --body-edits N, the same for a statement
added first in `_psum_transpose_rule`'s body, one nothing reads (the answer is current
when the next primitive made below it has moved down); with --call-edits N, the same
for a call added there (the call graph is solved again: definitions are current
from the refresh's first phase on, the call graph when the refresh ends, timed
too); with --leaf-call-edits N, a call of `jnp.asarray` added first in the body of
`odeint`, in a module no other module of jax imports (jax/experimental/ode.py), the
issue's "body edit in a leaf module". With --settle S, each of those waits S seconds
after the server starts before its first save (an editor opened, then a while before
the first edit: meanwhile the build process solves the call graph the saves are solved
again from). With --cold: the server started on an empty cache, the time to its first
answer (initialize) and to its first definition that finds something (the build done),
beside `jaxmap index` on an empty cache. The issue's targets are printed beside;
nothing here asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FILES = ("jax/_src/lax/parallel.py", "jax/_src/lax/lax.py")
TARGETS = {"p95_ms": 20.0, "start_s": 0.5}
_NAMES = re.compile(r"\b\w+_p\b|(?<=def )\w+")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=None)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--refreshes", type=int, default=0)
    parser.add_argument("--body-edits", type=int, default=0)
    parser.add_argument("--call-edits", type=int, default=0)
    parser.add_argument("--leaf-call-edits", type=int, default=0)
    parser.add_argument("--settle", type=float, default=0.0)
    parser.add_argument("--cold", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from jaxmap.session import open_index

    with open_index(args.root, graph=True) as index:  # builds it if needed: the cache is warm after
        root = Path(index.root)
        places = positions(root, args.requests)
        handlers = in_process(index, places)
    trips = asyncio.run(over_stdio(root, places))
    starts = [asyncio.run(first_answer(root, places[0])) for _ in range(args.starts)]
    wall, cpu = (statistics.median(column) for column in zip(*starts))
    floor_wall, floor_cpu = (statistics.median(column) for column in
                             zip(*(_import_pygls() for _ in range(args.starts))))
    print(f"{len(places)} positions in {', '.join(FILES)} (root {root})")
    for kind in ("definition", "hover"):
        _line(f"{kind}: handlers in process, p50 / p95", _ms(handlers[kind]),
              f"target p95 <= {TARGETS['p95_ms']:.0f} ms")
        _line(f"{kind}: stdio round trip, p50 / p95", _ms(trips[kind]))
    _line(f"start-up to first answer, median of {len(starts)}", f"{wall:.3f} s",
          f"target <= {TARGETS['start_s']} s")
    _line("  the server's CPU time (user + sys) in it", f"{cpu:.3f} s",
          "(wall minus this: waiting for a CPU)")
    _line("a process that only imports pygls: wall", f"{floor_wall:.3f} s", "(the floor)")
    _line("  its CPU time", f"{floor_cpu:.3f} s")
    if args.refreshes:
        refreshes(root, args.refreshes, trips, _append_a_primitive, args.settle)
    if args.body_edits:
        refreshes(root, args.body_edits, trips, _add_a_body_statement, args.settle)
    if args.call_edits:
        refreshes(root, args.call_edits, trips, _add_a_call, args.settle)
    if args.leaf_call_edits:
        refreshes(root, args.leaf_call_edits, trips, _add_a_leaf_call, args.settle)
    if args.cold:
        cold(root, places[0])


def cold(root: Path, place) -> None:
    """The --cold figures, each with a cache of its own."""
    import os
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-lsp-cold-") as scratch:
        env = {**os.environ, "JAXMAP_CACHE_DIR": os.path.join(scratch, "server")}
        first, found = asyncio.run(_cold_answers(root, place, env))
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "jaxmap", "-q", "index", "--root", str(root)],
                       check=True, stdout=subprocess.DEVNULL,
                       env={**env, "JAXMAP_CACHE_DIR": os.path.join(scratch, "cli")})
        index = time.perf_counter() - start
    print("on an empty cache")
    _line("start to the first answer (initialize)", f"{first:.2f} s")
    _line("start to the first definition found", f"{found:.1f} s")
    _line("`jaxmap index` on an empty cache", f"{index:.1f} s",
          f"ratio {found / index:.2f}x")


async def _cold_answers(root: Path, place, env: dict) -> tuple[float, float]:
    from lsprotocol import types as t

    path, line, column = place
    start = time.perf_counter()
    client = await _client(root, env=env)
    first = time.perf_counter() - start
    params = t.DefinitionParams(t.TextDocumentIdentifier(path.as_uri()), t.Position(line, column))
    while not await client.text_document_definition_async(params):
        await asyncio.sleep(0.1)
    found = time.perf_counter() - start
    await _stop(client)
    return first, found


# --leaf-call-edits' module: one no other module of jax imports (its functions are
# called from outside the tree only), and the function it edits
LEAF = ("jax/experimental/ode.py", "def odeint(")


def _append_a_primitive(root: Path, n: int) -> tuple[str, Path, str, object]:
    """--refreshes' edit: (what it is, the file saved, the symbol to ask for, whether an
    answer knows it)."""
    name = f"bench_refresh_{n}"
    with open(root / FILES[0], "a") as handle:
        handle.write(f"\n{name}_p = core.Primitive('{name}')\n")
    return f"a primitive appended to {FILES[0]}", root / FILES[0], name, bool


def _add_a_body_statement(root: Path, n: int, statement: str = "unused_by_an_edit_{n} = {n}",
                          where: tuple[str, str] = (FILES[0], "def _psum_transpose_rule"),
                          following: str = r"^(\w+_p) = ") -> tuple[str, Path, str, object]:
    """--body-edits' edit: a statement nothing reads, first in `_psum_transpose_rule`'s
    body; an answer knows it when the next primitive made below (a workspace symbol)
    has moved down."""
    file, function = where
    target = root / file
    text = target.read_text()
    at = text.index(function)
    end = text.index("\n", at) + 1
    if function.startswith("def ") and '"""' in text[end:text.index("\n", end) + 1]:
        end = text.index('"""', text.index('"""', end) + 3) + 4  # after its docstring
    text = text[:end] + "  " + statement.format(n=n) + "\n" + text[end:]
    target.write_text(text)
    below = re.compile(following, re.M).search(text, end)
    line = text.count("\n", 0, below.start(1))  # 0-based, as LSP counts

    def moved(found) -> bool:
        return any(symbol.location.range.start.line == line for symbol in found or ())

    return f"a statement in a body of {file}", target, below.group(1), moved


def _add_a_call(root: Path, n: int) -> tuple[str, Path, str, object]:
    """--call-edits' edit: a call first in `_psum_transpose_rule`'s body."""
    what, target, name, moved = _add_a_body_statement(root, n, "cts = lax.stop_gradient(cts)")
    return what.replace("a statement", "a call"), target, name, moved


def _add_a_leaf_call(root: Path, n: int) -> tuple[str, Path, str, object]:
    """--leaf-call-edits' edit: a call of a popular function (`jnp.asarray`) first in
    the body of a function of a leaf module (`LEAF`); an answer knows it when the next
    def below has moved down."""
    what, target, name, moved = _add_a_body_statement(
        root, n, "jnp.asarray(t).reshape({n})", LEAF, r"^def (\w+)")
    return what.replace("a statement", "a call"), target, name, moved


def refreshes(root: Path, count: int, at_rest: dict[str, list[float]], edit,
              settle: float) -> None:
    """The figures after `count` saves of `edit`, on a copy of the root's jax/ (never
    the root itself), the first `settle` seconds after the server starts."""
    import shutil
    import tempfile

    from jaxmap.session import open_index

    with tempfile.TemporaryDirectory(prefix="bench-lsp-") as scratch:
        copy = Path(scratch) / "tree"
        shutil.copytree(root / "jax", copy / "jax")
        open_index(str(copy), graph=True).close()
        places = [(copy / p.relative_to(root), line, column)
                  for p, line, column in positions(root, 40)]
        what, waits, ends, during = asyncio.run(_refreshes(copy, places, count, edit, settle))
    print(f"after a save ({what}), {count} times, the first {settle:.0f} s after the start")
    _line("didSave to the first current answer, median", f"{statistics.median(waits):.2f} s",
          f"max {max(waits):.2f} s")
    _line("didSave to the refresh's end (call graph current)",
          f"{statistics.median(ends):.2f} s", f"max {max(ends):.2f} s")
    for kind in ("definition", "hover"):
        _line(f"{kind} during a refresh, p50 / p95", _ms(during[kind]),
              f"target p95 <= {TARGETS['p95_ms']:.0f} ms")
        _line("  ratio p95 during / at rest", f"{_p95(during[kind]) / _p95(at_rest[kind]):.2f}x")


async def _refreshes(root: Path, places, count: int, edit, settle: float):
    from lsprotocol import types as t

    client = await _client(root)
    await asyncio.sleep(settle)
    waits: list[float] = []
    ends: list[float] = []
    during: dict[str, list[float]] = {"definition": [], "hover": []}
    ask = {"definition": (client.text_document_definition_async, t.DefinitionParams),
           "hover": (client.text_document_hover_async, t.HoverParams)}
    for n in range(count):
        what, target, name, current = edit(root, n)
        start = time.perf_counter()
        client.text_document_did_save(t.DidSaveTextDocumentParams(
            t.TextDocumentIdentifier(target.as_uri())))
        turn = 0
        while not current(await client.workspace_symbol_async(
                t.WorkspaceSymbolParams(query=name))):
            path, line, column = places[turn % len(places)]
            for kind, (send, make) in ask.items():
                began = time.perf_counter()
                await send(make(t.TextDocumentIdentifier(path.as_uri()), t.Position(line, column)))
                during[kind].append(time.perf_counter() - began)
            turn += 1
            await asyncio.sleep(0.02)  # an editor asks now and then, not in a loop
        waits.append(time.perf_counter() - start)
        while not any(at >= start and "index refreshed" in text for at, text in client.logs):
            await asyncio.sleep(0.02)
        ends.append(min(at for at, text in client.logs
                        if at >= start and "index refreshed" in text) - start)
    await _stop(client)
    return what, waits, ends, during


def positions(root: Path, count: int) -> list[tuple[Path, int, int]]:
    """(file, 0-based line, column) of each `*_p` name and `def` name, in turn to `count`."""
    found = []
    for file in FILES:
        for number, text in enumerate((root / file).read_text().splitlines()):
            found += [(root / file, number, m.start()) for m in _NAMES.finditer(text)]
    step = max(len(found) // count, 1)
    return (found[::step] * (count // max(len(found[::step]), 1) + 1))[:count]


def in_process(index, places) -> dict[str, list[float]]:
    """What the definition and hover handlers compute, timed per request."""
    from jaxmap.commands import editor
    from jaxmap.render import editor as render

    lines = {}
    times = {"definition": [], "hover": []}
    for path, line, column in places:
        text = lines.setdefault(path, path.read_text().splitlines())[line]
        file = path.relative_to(index.root).as_posix()
        for kind, spent in times.items():
            start = time.perf_counter()
            symbol = editor.symbol_at(text, column)
            found = editor.meaning(index, file, line + 1, symbol)
            if kind == "definition":
                editor.locations(found)
            else:
                render.hover(found, lambda f, n: f"{f}#L{n}",
                             editor.summaries(index, found.primitives))
            spent.append(time.perf_counter() - start)
    return times


async def _client(root: Path, **kwargs):
    from lsprotocol import types as t
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("bench-lsp", "1")
    client.logs = []  # (when, message) of each log message
    client.feature(t.WINDOW_LOG_MESSAGE)(
        lambda params: client.logs.append((time.perf_counter(), params.message)))
    await client.start_io(sys.executable, "-m", "jaxmap", "lsp", "--root", str(root), **kwargs)
    await client.initialize_async(t.InitializeParams(capabilities=t.ClientCapabilities(),
                                                     root_uri=root.as_uri()))
    client.initialized(t.InitializedParams())
    return client


async def _stop(client) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


async def over_stdio(root: Path, places) -> dict[str, list[float]]:
    from lsprotocol import types as t

    client = await _client(root)
    times = {"definition": [], "hover": []}
    ask = {"definition": client.text_document_definition_async,
           "hover": client.text_document_hover_async}
    make = {"definition": t.DefinitionParams, "hover": t.HoverParams}
    for path, line, column in places:
        for kind, spent in times.items():
            params = make[kind](t.TextDocumentIdentifier(path.as_uri()), t.Position(line, column))
            start = time.perf_counter()
            await ask[kind](params)
            spent.append(time.perf_counter() - start)
    await _stop(client)
    return times


async def first_answer(root: Path, place) -> tuple[float, float]:
    """Seconds from starting the server to a non-empty answer to a definition, and the
    CPU seconds the server process used in all (start-up to exit)."""
    import resource

    from lsprotocol import types as t

    path, line, column = place
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    client = await _client(root)
    answer = await client.text_document_definition_async(t.DefinitionParams(
        t.TextDocumentIdentifier(path.as_uri()), t.Position(line, column)))
    elapsed = time.perf_counter() - start
    await _stop(client)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert answer, "the first answer was empty"
    return elapsed, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _import_pygls() -> tuple[float, float]:
    """Wall and CPU seconds of `python -c "import pygls.lsp.server, lsprotocol.types"`."""
    import resource
    import subprocess

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import pygls.lsp.server, lsprotocol.types"],
                   check=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(int(len(ordered) * 0.95), len(ordered) - 1)]


def _ms(times: list[float]) -> str:
    return f"{statistics.median(times) * 1000:.2f} / {_p95(times) * 1000:.2f} ms"


def _line(label: str, value: str, note: str = "") -> None:
    print(f"  {label:<44} {value:>20}  {note}")


if __name__ == "__main__":
    main()

"""Edits, one after another, then a question: the index they leave equals a cold index
of the edited tree, table by table; an edit that only moves code moves the index's rows
and keeps the call graph (moves.py); a first-phase question leaves the call graph
stale, and the next graph question moves it, or builds it again."""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from jaxmap.indexing import extract, indexer, moves
from jaxmap.store import write_carry
from jaxmap.store.write import DROPPED, SECOND_PHASE, STALE

MINIJAX = Path(__file__).parent / "fixtures" / "minijax"
PARALLEL = "jax/_src/lax/parallel.py"
LAX = "jax/_src/lax/lax.py"


def _comment_on_top(text: str) -> str:
    return "# a comment on top\n\n" + text


def _comment_inside_a_body(text: str) -> str:
    at = text.index("\ndef ") + 1
    end = text.index("\n", at) + 1
    return text[:end] + "  # a comment inside a body\n" + text[end:]


def _blank_lines_at_the_middle(text: str) -> str:
    lines = text.split("\n")
    middle = len(lines) // 2
    while lines[middle].startswith((" ", "\t", ")", "]", "}")):  # a top-level line
        middle += 1
    return "\n".join(lines[:middle] + ["", "", "# moved down"] + lines[middle:])


def _trailing_spaces(text: str) -> str:
    return text.replace("\n", "   \n", 3)


def _a_new_def(text: str) -> str:
    return text + ("\n\ndef _added_by_an_edit(x):\n  if x is None:\n"
                   "    raise ValueError('an edit raised this message here')\n"
                   "  return psum(x, 'i')\n")


def _a_def_nothing_names(text: str) -> str:
    return text + "\n\ndef _added_by_an_edit(x):\n  y = x\n  return y\n"


def _a_def_nothing_names_above_neg(text: str) -> str:
    at = text.index("\ndef neg(") + 1
    return text[:at] + "def _added_by_an_edit(x, *rest):\n  return rest\n\n\n" + text[at:]


def _into_neg(text: str, line: str, after: int = 1) -> str:
    """`text` with `line` put after the first `after` lines of lax's `def neg` (its def
    line; 2: its one statement too)."""
    end = text.index("\ndef neg(") + 1
    for _ in range(after):
        end = text.index("\n", end) + 1
    return text[:end] + line + "\n" + text[end:]


def _a_body_statement(text: str) -> str:
    return _into_neg(text, "  unused_by_an_edit = 1")


def _a_comment_after_a_body(text: str) -> str:
    return _into_neg(text, "  # a comment after the body's last line", after=2)


def _an_unread_statement_after_a_body(text: str) -> str:
    return _into_neg(text, "  unused_by_an_edit = 1", after=2)


def _a_body_call(text: str) -> str:
    return _into_neg(text, "  unused_by_an_edit = abs(x)")


def _a_docstring(text: str) -> str:
    return _into_neg(text, '  """Negation, as an edit documents it."""')


def _module_docstring_reworded(text: str) -> str:
    first = text.index('"""') + 3
    return text[:first] + "Reworded by an edit: " + text[first:]


# name -> (file, edit, what it leaves alone: "code" (it only moves code), "outline"
# (it changes only a body the first phase does not read), or "" (neither)); the body
# statement assigns a name nothing reads: the call graph stands (moves.unread_moves)
EDITS = {
    "comment on top of parallel": (PARALLEL, _comment_on_top, "code"),
    "comment inside a body of parallel": (PARALLEL, _comment_inside_a_body, "code"),
    "blank lines in lax": (LAX, _blank_lines_at_the_middle, "code"),
    "trailing spaces in lax": (LAX, _trailing_spaces, "code"),
    "a new def in parallel": (PARALLEL, _a_new_def, ""),
    # the call graph stands, a definition more (moves.added_functions)
    "a def nothing names in parallel": (PARALLEL, _a_def_nothing_names, ""),
    "a def nothing names above neg": (LAX, _a_def_nothing_names_above_neg, ""),
    "a body statement in lax": (LAX, _a_body_statement, "outline"),
    "a body call in lax": (LAX, _a_body_call, "outline"),
    "a comment after a body in lax": (LAX, _a_comment_after_a_body, "code"),
    "a statement after a body in lax": (LAX, _an_unread_statement_after_a_body, "outline"),
    "a docstring in lax": (LAX, _a_docstring, "outline"),  # but its summary changes
    "the module docstring of parallel reworded": (PARALLEL, _module_docstring_reworded,
                                                  "code"),  # but its summary changes
}


def _tables(path: str, *, facts: bool) -> dict[str, list]:
    with sqlite3.connect(path) as conn:
        names = [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {name: conn.execute(f"SELECT * FROM {name}").fetchall()
                for name in names if facts or name != "facts"}


def _cold(tree: Path, cache: Path, monkeypatch, graph: bool) -> str:
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(cache))
    shutil.rmtree(cache, ignore_errors=True)
    report = indexer.build_index(tree, graph=graph)
    return report.path


def _graph_state(path: str) -> str:
    return dict(_tables(path, facts=False)["meta"])["graph"]


def _same_as_cold(path: str, tree: Path, cache: Path, monkeypatch, name: str = "") -> None:
    """The index at `path` is the cold index of `tree`: every table, with a current call
    graph; with a stale one, every table of the first phase (the facts kept for the call
    graph and its own tables differ, and meta says it is stale)."""
    state = _graph_state(path)
    tables = _tables(path, facts=state == "1")
    expected = _tables(_cold(tree, cache, monkeypatch, graph=state == "1"), facts=state == "1")
    if state == STALE:
        assert tables["stale"], name
        for table in (*SECOND_PHASE, "stale", "meta"):
            tables.pop(table), expected.pop(table)
    elif state == DROPPED:  # a cold index of the first phase alone, but for meta's word
        expected["meta"] = [(key, DROPPED if key == "graph" else value)
                            for key, value in expected["meta"]]
    assert tables == expected, name


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_edits_leave_the_index_a_cold_index_would_be(seed, tmp_path, monkeypatch):
    """A random sequence of edits from a fixed list, each followed by a plain or a graph
    question; after each, every table equals a cold index's (after a plain question,
    those of the first phase: the call graph is stale); and after a last graph
    question, all."""
    tree = Path(shutil.copytree(MINIJAX, tmp_path / "minijax"))
    warm, cold = tmp_path / "warm", tmp_path / "cold"
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(warm))
    indexer.build_index(tree)
    chooser = random.Random(seed)
    for name in chooser.sample(sorted(EDITS), 5):
        file, edit, left_alone = EDITS[name]
        source = tree / file
        source.write_text(edit(source.read_text()))
        graph = chooser.random() < 0.5
        monkeypatch.setenv("JAXMAP_CACHE_DIR", str(warm))
        path, report = indexer.ensure_index(tree, graph=graph)
        # the edited file; a graph question also reads the files left stale
        assert report is not None and (report.parsed == 1 or graph and report.parsed > 1), name
        assert _graph_state(path) == "1" or not graph, name
        _same_as_cold(path, tree, cold, monkeypatch, name)
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(warm))
    path, _ = indexer.ensure_index(tree, graph=True)
    assert _graph_state(path) == "1"
    _same_as_cold(path, tree, cold, monkeypatch)


def _edited_then_asked(tmp_path, monkeypatch, file: str, *edits) -> tuple[str, dict]:
    """A cold index of a copy of the fixture, then each of `edits` made to `file`, each
    followed by a plain question: the index's path and its tables."""
    tree = Path(shutil.copytree(MINIJAX, tmp_path / "minijax"))
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    indexer.build_index(tree)
    source = tree / file
    for edit in edits:
        source.write_text(edit(source.read_text()))
        path, report = indexer.ensure_index(tree)
        assert report is not None and report.parsed == 1 and not report.rebuilt
    return path, _tables(path, facts=True)


def _graph_asked(tmp_path, monkeypatch, *, solves: bool, tree: Path | None = None) -> str:
    """A graph question on the copy `_edited_then_asked` left in `tmp_path` (or on
    `tree`): it builds the call graph again, or (not `solves`) moves its rows without
    solving anything; the index then equals a cold one."""
    from jaxmap.flow import graph

    tree = tree or tmp_path / "minijax"
    solved = []
    call_graph = graph.call_graph
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    monkeypatch.setattr(graph, "call_graph",
                        lambda *a, **k: solved.append(1) or call_graph(*a, **k))
    path, report = indexer.ensure_index(tree, graph=True)
    monkeypatch.setattr(graph, "call_graph", call_graph)
    assert report is not None and bool(solved) is solves
    assert report.changed  # it read the stale files again: not "up to date"
    _same_as_cold(path, tree, tmp_path / "cold", monkeypatch)
    return path


def test_a_comment_leaves_the_call_graph_stale_and_then_moves_its_lines(tmp_path, monkeypatch):
    path, tables = _edited_then_asked(tmp_path, monkeypatch, PARALLEL, _comment_on_top)
    assert ("graph", STALE) in tables["meta"]
    assert [row[0] for row in tables["stale"]] == [PARALLEL]
    _same_as_cold(path, tmp_path / "minijax", tmp_path / "cold", monkeypatch)
    _graph_asked(tmp_path, monkeypatch, solves=False)


def test_edits_in_a_row_are_compared_with_the_facts_the_call_graph_was_read_from(
        tmp_path, monkeypatch):
    """Two edits, each followed by `locate`: the facts kept are those before the
    first, from which the call graph was read, so the graph question moves its rows
    by both."""
    _, tables = _edited_then_asked(tmp_path, monkeypatch, PARALLEL, _comment_on_top,
                                   _blank_lines_at_the_middle)
    _, once = _edited_then_asked(tmp_path / "once", monkeypatch, PARALLEL, _comment_on_top)
    assert tables["stale"] == once["stale"]
    _graph_asked(tmp_path, monkeypatch, solves=False)


def test_a_stale_file_not_edited_again_is_read_by_the_next_graph_question(
        tmp_path, monkeypatch):
    _edited_then_asked(tmp_path, monkeypatch, PARALLEL, _comment_on_top)
    source = tmp_path / "minijax" / LAX
    source.write_text(_trailing_spaces(source.read_text()))
    path = _graph_asked(tmp_path, monkeypatch, solves=False)
    assert _tables(path, facts=False)["stale"] == []


_GUARDED_LIB = """\
from jax._src import core
p_p = core.Primitive('p')

def nonzero(c):
  return p_p.bind(c)

def where(c, x=None, y=None):
  if x is None and y is None:
    return nonzero(c)
  return c
"""
_TWO_CALLS = """\
from lib import where

def either(c):
  if c:
    return where(c, 1, 2)
  return where(c)
"""


def test_a_comment_between_two_calls_moves_the_second_ones_line(tmp_path, monkeypatch):
    """Each different call of a guarded callee keeps its own line (calls.fill_lines):
    a comment between two moves the second's alone, as a cold index has it."""
    from jaxmap.flow import graph

    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "lib.py").write_text(_GUARDED_LIB)
    (tree / "users.py").write_text(_TWO_CALLS)
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    indexer.build_index(tree)
    (tree / "users.py").write_text(_TWO_CALLS.replace("2)\n", "2)\n  # a comment\n"))
    solved = []
    call_graph = graph.call_graph
    monkeypatch.setattr(graph, "call_graph",
                        lambda *a, **k: solved.append(1) or call_graph(*a, **k))
    path, _ = indexer.ensure_index(tree, graph=True)
    monkeypatch.setattr(graph, "call_graph", call_graph)
    assert not solved  # moved, not solved again
    assert [row[-1] for row in _tables(path, facts=False)["calls"] if row[-1]] == ["5|7"]
    _same_as_cold(path, tree, tmp_path / "cold", monkeypatch)


def test_a_stale_call_graph_reads_as_none(tmp_path, monkeypatch, capsys):
    """Its rows were read from older code: a first-phase question shows none of them,
    and says the call graph is not current."""
    from jaxmap.cli import main
    from jaxmap.store.read import open_file

    path, tables = _edited_then_asked(tmp_path, monkeypatch, PARALLEL, _comment_on_top)
    assert tables["calls"] and tables["tests"]
    with open_file(path) as index:
        assert not index.graph_built and index.call_counts() == {}
    assert main(["locate", "psum", "--root", str(tmp_path / "minijax")]) == 0
    out = capsys.readouterr().out
    assert "not current since an edit" in out and "reaches" not in out


@pytest.mark.parametrize("name", sorted(EDITS))
def test_the_fingerprints_tell_moved_code_from_changed_code(name):
    file, edit, left_alone = EDITS[name]
    text = (MINIJAX / file).read_text()
    module = file.removesuffix(".py").replace("/", ".")
    before, after = (extract.extract(t.encode(), module) for t in (text, edit(text)))
    assert (before["code"] == after["code"]) is (left_alone == "code")
    assert (before["outline"] == after["outline"]) is (left_alone in ("code", "outline"))


def test_a_docstring_in_an_unread_body_moves_the_rows_and_sets_its_summary():
    """The outline leaves the body out, docstring and all; the facts differ in the
    summary the first phase keeps of it alone, so the rows move and it is set."""
    text = (MINIJAX / LAX).read_text()
    module = "jax._src.lax.lax"
    before, after = (extract.extract(t.encode(), module) for t in (text, _a_docstring(text)))
    assert moves.line_moves(moves.first_phase(before), moves.first_phase(after)) is None
    assert moves.outline_moves(before, after) is not None
    line = text[:text.index("\ndef neg(")].count("\n") + 2
    assert moves.summaries(before, after) == [
        (f"{module}.neg", "function", line, "Negation, as an edit documents it.")]


def test_a_reworded_docstring_keeps_the_call_graph(tmp_path, monkeypatch):
    """What a docstring says is no code: the rows move, the summary is set, and the
    next graph question solves nothing; every table equals a cold index's."""
    path, _ = _edited_then_asked(tmp_path, monkeypatch, PARALLEL, _module_docstring_reworded)
    _same_as_cold(path, tmp_path / "minijax", tmp_path / "cold", monkeypatch)
    _graph_asked(tmp_path, monkeypatch, solves=False)


def test_a_comment_among_a_defs_parameters_keeps_the_call_graph(tmp_path, monkeypatch):
    """A comment written among a signature's parameters (a quote and a bracket in it)
    is no code: a locate moves the rows, the next graph question solves nothing, and
    every table equals a cold index's."""
    tree = tmp_path / "lib"
    (tree / "lib").mkdir(parents=True)
    (tree / "lib" / "__init__.py").write_text("")
    ops = tree / "lib" / "ops.py"
    ops.write_text("import math\n\n\ndef helper(x):\n  return x\n\n\n"
                   "def scale(x,\n          factor=2):\n  return helper(x) * factor\n")
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    indexer.build_index(tree)
    ops.write_text(ops.read_text().replace(
        "def scale(x,\n", "def scale(x,\n          # it's the (scalar) factor\n"))
    indexer.ensure_index(tree)  # a plain question: the call graph left stale
    _graph_asked(tmp_path, monkeypatch, solves=False, tree=tree)


def test_an_assignment_nothing_reads_keeps_the_call_graph(tmp_path, monkeypatch):
    _, tables = _edited_then_asked(tmp_path, monkeypatch, LAX, _a_body_statement)
    assert ("graph", STALE) in tables["meta"] and tables["calls"]
    _graph_asked(tmp_path, monkeypatch, solves=False)


@pytest.mark.parametrize("statement, unread", [
    ("unused_by_an_edit = 1", True),
    ("unused_by_an_edit = x", True),
    ("x = 1", False),  # the parameter, which the body reads
    ("unused_by_an_edit = abs(x)", False),  # a call
    ("unused_by_an_edit = lambda: x", False),
    ("def inner(y):\n    return y\n  unused_by_an_edit = 1", False),  # below a nested def
    ("unused_by_an_edit = 1\n  def inner(y):\n    return y", False),  # the def is new
])
def test_only_assignments_nothing_reads_leave_the_call_graph(statement, unread):
    text = (MINIJAX / LAX).read_text()
    edited = _into_neg(text, f"  {statement}")
    before, after = (extract.extract(t.encode(), "jax._src.lax.lax") for t in (text, edited))
    assert (moves.unread_moves(before, after) is not None) is unread


@pytest.mark.parametrize("edit", [_a_def_nothing_names, _a_def_nothing_names_above_neg])
def test_a_def_nothing_names_keeps_the_call_graph(edit, tmp_path, monkeypatch):
    """The first phase is resolved again (a definition more, the ids after it moved);
    the call graph is carried over, stale, and the graph question moves it."""
    path, tables = _edited_then_asked(tmp_path, monkeypatch, LAX, edit)
    assert ("graph", STALE) in tables["meta"] and tables["calls"]
    assert any(row[2].endswith("._added_by_an_edit") for row in tables["definitions"])
    _graph_asked(tmp_path, monkeypatch, solves=False)


def test_a_def_nothing_names_asked_of_by_a_graph_question_solves_nothing(tmp_path, monkeypatch):
    tree = Path(shutil.copytree(MINIJAX, tmp_path / "minijax"))
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    indexer.build_index(tree)
    source = tree / LAX
    source.write_text(_a_def_nothing_names_above_neg(source.read_text()))
    _graph_asked(tmp_path, monkeypatch, solves=False)


def test_a_def_another_file_names_solves_the_call_graph_again(tmp_path, monkeypatch):
    """`parallel` named `_added_by_an_edit` of lax before lax had it: now it resolves."""
    tree = Path(shutil.copytree(MINIJAX, tmp_path / "minijax"))
    parallel = tree / PARALLEL
    parallel.write_text(parallel.read_text() + "\n\ndef _asks():\n"
                        "  from jax._src.lax.lax import _added_by_an_edit\n"
                        "  return _added_by_an_edit(1)\n")
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    indexer.build_index(tree)
    source = tree / LAX
    source.write_text(_a_def_nothing_names(source.read_text()))
    _graph_asked(tmp_path, monkeypatch, solves=True)


@pytest.mark.parametrize("body, kept", [
    ("def _added_by_an_edit(x):\n  return x", True),
    ("def _added_by_an_edit(x):\n  return abs(x)", False),  # a call
    ("def _added_by_an_edit(x):\n  return x + 1", False),  # an operator: `__add__`
    ("def _added_by_an_edit(x):\n  return (x, neg)", True),  # read only when asked
    ("def _added_by_an_edit(x=neg):\n  return x", True),  # a default: read when asked
    ("def _added_by_an_edit(x):\n  return lambda: x", False),
    ("def _added_by_an_edit(x):\n  for y in x:\n    return y", False),  # a loop
    ("def _added_by_an_edit(x):\n  def inner():\n    return x\n  return inner", False),
    ("@partial(jit)\ndef _added_by_an_edit(x):\n  return x", False),  # decorated
    ("def __getattr__(name):\n  return name", False),  # Python calls it
    ("def _added_by_an_edit(x):\n  x.field = 1", False),  # a store the flow indexes
    ("def _added_by_an_edit(x):\n  return x\n\n\ndef _b(y):\n  return _added_by_an_edit",
     False),  # named in its own file
])
def test_only_defs_that_nothing_names_and_read_nothing_keep_the_call_graph(body, kept):
    text = (MINIJAX / LAX).read_text()
    before, after = (extract.extract(t.encode(), "jax._src.lax.lax")
                     for t in (text, text + "\n\n" + body + "\n"))
    found = moves.added_functions(before, after)
    assert (found is not None) is kept
    if kept:
        assert found[1] == {"_added_by_an_edit"}


def test_a_body_edit_moves_the_first_phase_and_the_graph_question_solves_again(
        tmp_path, monkeypatch):
    path, _ = _edited_then_asked(tmp_path, monkeypatch, LAX, _a_body_call)
    _same_as_cold(path, tmp_path / "minijax", tmp_path / "cold", monkeypatch)
    _graph_asked(tmp_path, monkeypatch, solves=True)


def _code_digest(source: bytes) -> str:
    return moves.fingerprints(source)[0]


def test_the_fingerprint_reads_strings_as_strings():
    assert _code_digest(b"x = '#'  # note\n") == _code_digest(b"x = '#'\n")
    assert _code_digest(b"x = '#'\n") != _code_digest(b"x = '#1'\n")
    assert _code_digest(b"x = 1\n") != _code_digest(b"x = 2\n")
    assert _code_digest(b"if a:\n    b\n") != _code_digest(b"if a:\nb\n")


def test_what_a_docstring_says_past_its_first_line_only_moves_code():
    """The fingerprint leaves out what triple-quoted strings say; the facts keep a
    docstring's first line alone, so lines added below it only move the code."""
    module = "jax._src.example"
    before = b'def f(x):\n    """One."""\n    return psum(x, "i")\n'
    after = b'def f(x):\n    """One.\n\n    Two."""\n    return psum(x, "i")\n'
    facts = [extract.extract(text, module) for text in (before, after)]
    assert facts[0]["code"] == facts[1]["code"]
    assert moves.graph_moves(*facts)[3] == 5 and moves.summaries(*facts) == []
    reworded = extract.extract(after.replace(b"One.", b"Uno."), module)
    assert moves.line_moves(facts[1], reworded) is None  # its summary differs
    assert moves.graph_moves(facts[1], reworded) is not None
    assert moves.summaries(facts[1], reworded) == [(f"{module}.f", "function", 1, "Uno.")]


def test_line_moves_read_off_the_facts():
    text = (MINIJAX / PARALLEL).read_text()
    module = "jax._src.lax.parallel"
    before = extract.extract(text.encode(), module)
    after = extract.extract(_comment_on_top(text).encode(), module)
    lines = moves.line_moves(before, after)
    assert lines is not None
    assert {new - old for old, new in lines.items() if new != old} == {2}
    changed = extract.extract(_a_new_def(text).encode(), module)
    assert moves.line_moves(before, changed) is None


def test_the_fixture_indexes_the_same_on_one_worker_on_several_and_in_any_file_order(
        tmp_path, monkeypatch):
    """A cold index of the fixture on one worker, on three (helpers forced even for a
    tree this small), and with its files handed to the resolver shuffled: one index.
    (benchmarks/bench_order.py measures the same of the installed jax.)"""
    import marshal

    from jaxmap.flow.graph import call_graph
    from jaxmap.indexing import discover, resolve, worker

    tree = Path(shutil.copytree(MINIJAX, tmp_path / "minijax"))
    one = _tables(_cold(tree, tmp_path / "one", monkeypatch, graph=True), facts=True)
    monkeypatch.setattr(worker, "_PARALLEL_MIN_FILES", 1)
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "three"))
    several = _tables(indexer.build_index(tree, jobs=3).path, facts=True)
    assert several == one
    files = discover.list_files(tree).files
    blobs = {s.path: blob for s, (_, _, blob) in zip(files, worker.extract_files(
        tree, files, flow=True))}

    def resolved(order: list[str]):
        found = resolve.resolve({path: marshal.loads(blobs[path]) for path in order},
                                graph=call_graph)
        return [list(map(repr, table)) for table in (
            found.primitives, found.definitions, found.calls, found.binds, found.tests,
            found.rule_calls, found.imports, found.diagnostics, found.messages)]

    expected = resolved(sorted(blobs))
    for seed in range(3):
        order = sorted(blobs)
        random.Random(seed).shuffle(order)
        assert resolved(order) == expected, seed


@pytest.mark.parametrize("edit", [_a_comment_after_a_body, _an_unread_statement_after_a_body])
def test_a_line_added_after_a_body_leaves_its_last_line_unmapped(edit):
    """The function's end line is its last statement's: the one moves, the other does
    not, so that line is left out of the map (a row there makes the index resolve)."""
    text = (MINIJAX / LAX).read_text()
    before, after = (extract.extract(t.encode(), "jax._src.lax.lax") for t in (text, edit(text)))
    definition = text[:text.index("\ndef neg(") + 1].count("\n") + 1
    last = definition + 1  # its one statement
    lines = moves.line_moves(before, after) or moves.unread_moves(before, after)
    assert lines is not None and last not in lines


@pytest.mark.parametrize("edit", [_a_comment_after_a_body, _an_unread_statement_after_a_body])
def test_a_line_added_after_a_body_leaves_the_index_a_cold_index(edit, tmp_path, monkeypatch):
    tree = Path(shutil.copytree(MINIJAX, tmp_path / "minijax"))
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    indexer.build_index(tree)
    source = tree / LAX
    source.write_text(edit(source.read_text()))
    path, _ = indexer.ensure_index(tree, graph=True)
    expected = _cold(tree, tmp_path / "cold", monkeypatch, graph=True)
    assert _tables(path, facts=True) == _tables(expected, facts=True)


def test_a_comment_on_top_of_a_first_line_import_leaves_the_module_at_line_one(
        tmp_path, monkeypatch):
    """A module's own row is at line 1 whatever moved, though the import there moves."""
    tree = Path(shutil.copytree(MINIJAX, tmp_path / "minijax"))
    source = tree / "jax/_src/dispatch.py"
    source.write_text("import functools\n" + source.read_text())
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    indexer.build_index(tree)
    source.write_text(_comment_on_top(source.read_text()))
    path, report = indexer.ensure_index(tree, graph=True)
    assert report is not None and report.parsed == 1
    tables = _tables(path, facts=True)
    assert ("graph", "1") in tables["meta"]
    assert tables == _tables(_cold(tree, tmp_path / "cold", monkeypatch, graph=True), facts=True)


def test_a_line_the_map_lacks_moves_nothing(tmp_path, monkeypatch):
    """The index holds a line of the file that its map lacks: nothing is written, and
    the caller resolves the tree instead."""
    from jaxmap.store import write

    tree = Path(shutil.copytree(MINIJAX, tmp_path / "minijax"))
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "cache"))
    path = indexer.build_index(tree).path
    before = _tables(path, facts=True)
    assert not write.move_lines(path, [], {PARALLEL: {}}, {PARALLEL: {}}, {}, ({}, "1"))
    assert _tables(path, facts=True) == before


def test_an_assignment_above_a_nested_def_leaves_the_call_graph_and_below_it_not():
    """Below a nested def, a statement's indent may end that def for the statements
    after it, and so tell whose returns they are: only above one is it left out."""
    text = (MINIJAX / LAX).read_text()
    nested = "  def inner(y):\n    return y\n"

    def edited(above: str, below: str) -> dict:
        return extract.extract(_into_neg(text, above + nested + below).encode(),
                               "jax._src.lax.lax")

    before = edited("", "")
    assert moves.unread_moves(before, edited("  unused_by_an_edit = 1\n", "")) is not None
    assert moves.unread_moves(before, edited("", "  unused_by_an_edit = 1\n")) is None


@pytest.mark.parametrize("graph", [False, True])
def test_a_second_writer_of_the_same_moves_moves_nothing(graph, tmp_path, monkeypatch):
    """Two processes answering after the same edit read the same maps; the one that
    writes second finds the files no longer as it read them: it moves nothing (which
    would move every line twice) and the tree is resolved again, to a cold index."""
    written = []
    move_lines = indexer.store.move_lines

    def first_another_process(*args):
        written.append(move_lines(*args))
        written.append(move_lines(*args))
        return written[-1]

    path, _ = _edited_then_asked(tmp_path, monkeypatch, PARALLEL, _comment_on_top)
    source = tmp_path / "minijax" / PARALLEL
    source.write_text(_comment_on_top(source.read_text()))
    monkeypatch.setattr(indexer.store, "move_lines", first_another_process)
    path, report = indexer.ensure_index(tmp_path / "minijax", graph=graph)
    assert written == [True, False] and report is not None
    _same_as_cold(path, tmp_path / "minijax", tmp_path / "cold", monkeypatch)


def _a_public_def(text: str) -> str:
    return text + "\n\ndef added_by_an_edit(x):\n  return x\n"


@pytest.mark.parametrize("graph", [False, True])
@pytest.mark.parametrize("writer, file, edit", [
    ("add_in_place", LAX, _a_def_nothing_names_above_neg),  # put in, unresolved
    ("carry_in_place", "jax/lax/__init__.py", _a_public_def),  # exported: resolved
])
def test_a_second_writer_of_the_same_carry_carries_nothing(writer, file, edit, graph, tmp_path,
                                                           monkeypatch):
    """Two processes answering after the same new def read the same ids; the one that
    writes second finds the edited file no longer as it read it: it renumbers nothing
    (which would shift ids twice) and writes the index whole, a cold index's."""
    written = []
    carrying = getattr(write_carry, writer)

    def first_another_process(*args):
        results = [carrying(*args), carrying(*args)]
        written.extend(result not in (None, False) for result in results)
        return results[-1]

    tree = Path(shutil.copytree(MINIJAX, tmp_path / "minijax"))
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "warm"))
    indexer.build_index(tree)
    source = tree / file
    source.write_text(edit(source.read_text()))
    monkeypatch.setattr(write_carry, writer, first_another_process)
    path, report = indexer.ensure_index(tree, graph=graph)
    assert written == [True, False] and report is not None
    assert _graph_state(path) == ("1" if graph else DROPPED)
    _same_as_cold(path, tree, tmp_path / "cold", monkeypatch)

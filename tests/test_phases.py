"""The index in two phases: what `locate PRIM` needs first, the call graph on the first
question that reads it, kept from then on; an interrupted second phase leaves the
first intact."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from jaxmap.cli import main
from jaxmap.indexing import indexer
from jaxmap.session import open_index

MINIJAX = Path(__file__).parent / "fixtures" / "minijax"


@pytest.fixture
def tree(tmp_path) -> Path:
    return Path(shutil.copytree(MINIJAX, tmp_path / "minijax"))


def _graph_built(root: Path) -> bool:
    with open_index(root) as index:
        return index.graph_built and bool(index.call_counts())


def test_locate_builds_no_call_graph_and_says_so(tree, capsys):
    assert main(["locate", "psum", "--root", str(tree)]) == 0
    assert "no call graph in this index yet" in capsys.readouterr().out
    assert not _graph_built(tree)
    assert main(["locate", "psum", "--root", str(tree), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["call_graph"] is False


def test_a_graph_question_builds_the_graph_once_and_keeps_it(tree, capsys):
    assert main(["locate", "psum", "--root", str(tree)]) == 0
    assert main(["binds", "psum", "--root", str(tree)]) == 0
    assert _graph_built(tree)
    assert indexer.ensure_index(tree, graph=True)[1] is None  # nothing left to do
    capsys.readouterr()
    assert main(["locate", "psum", "--root", str(tree)]) == 0
    assert "no call graph" not in capsys.readouterr().out


def test_messages_come_with_the_second_phase(tree, capsys):
    """Only `explain` reads the messages a tree raises: a plain question does not
    read them, the first that needs the second phase does."""
    (tree / "jax" / "_src" / "checks.py").write_text(
        "def check(x):\n    raise ValueError(f'the axis {x} is not bound here at all')\n")
    assert main(["locate", "psum", "--root", str(tree)]) == 0
    with open_index(tree) as index:
        assert index.messages() == []
    assert main(["explain", "the axis 3 is not bound here at all", "--root", str(tree)]) == 0
    assert "jax/_src/checks.py:2" in capsys.readouterr().out
    with open_index(tree) as index:
        assert [m[:4] for m in index.messages()] == [
            ("jax/_src/checks.py", 2, "jax._src.checks.check", "ValueError")]


def test_jaxmap_index_builds_both_phases(tree):
    assert main(["index", "--root", str(tree)]) == 0
    assert _graph_built(tree)


def test_a_plain_question_after_an_edit_does_not_wait_for_the_graph(tree, capsys):
    """A changed definition: the first phase is refreshed at once, the call graph by
    the next question that reads it, from facts the first phase kept for it."""
    assert main(["index", "--root", str(tree)]) == 0
    module = tree / "jax" / "_src" / "lax" / "parallel.py"
    module.write_text(module.read_text() + "\n\ndef _added():\n  return psum(1, 'i')\n")
    report = indexer.ensure_index(tree)[1]  # a plain question: the first phase is enough
    assert report is not None and report.parsed == 1 and not report.solved
    assert not _graph_built(tree)
    capsys.readouterr()
    assert main(["locate", "psum", "--root", str(tree)]) == 0  # dropped, not "none yet"
    assert "(the call graph is not current since an edit" in capsys.readouterr().out
    # from the facts kept; the edited file's, kept without what the call graph reads,
    # read again for it
    report = indexer.ensure_index(tree, graph=True)[1]
    assert report is not None and report.parsed == 1 and report.solved
    assert _graph_built(tree)
    capsys.readouterr()
    assert main(["callers", "psum", "--root", str(tree)]) == 0
    assert "parallel._added" in capsys.readouterr().out


def test_a_comment_leaves_the_graph_stale_until_a_graph_question(tree):
    assert main(["index", "--root", str(tree)]) == 0
    module = tree / "jax" / "_src" / "lax" / "parallel.py"
    module.write_text("# a comment on top\n\n" + module.read_text())
    report = indexer.ensure_index(tree)[1]
    assert report is not None and report.parsed == 1 and not report.rebuilt
    assert not _graph_built(tree)
    report = indexer.ensure_index(tree, graph=True)[1]  # reads it whole again
    assert report is not None and report.parsed == 1 and not report.rebuilt
    assert _graph_built(tree)


def test_an_index_of_another_jaxmap_holds_no_call_graph_not_a_stale_one(tree, monkeypatch,
                                                                       capsys):
    """A first-phase question after an upgrade of jaxmap (another schema) rebuilds from
    nothing: it said "the call graph is not current since an edit", though no file was
    edited."""
    from jaxmap.store import write

    assert main(["index", "--root", str(tree)]) == 0
    monkeypatch.setattr(write, "SCHEMA_VERSION", write.SCHEMA_VERSION + 1)
    capsys.readouterr()
    assert main(["locate", "psum", "--root", str(tree)]) == 0
    out = capsys.readouterr().out
    assert "no call graph in this index yet" in out and "since an edit" not in out


def test_an_interrupted_second_phase_leaves_the_first(tree, monkeypatch):
    from jaxmap.flow import calls

    assert main(["locate", "psum", "--root", str(tree)]) == 0

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    call_edges = calls.call_edges
    monkeypatch.setattr(calls, "call_edges", interrupted)
    assert main(["binds", "psum", "--root", str(tree)]) == 130
    monkeypatch.setattr(calls, "call_edges", call_edges)
    with open_index(tree) as index:
        assert not index.graph_built
        assert [p.name for p in index.primitives_named("psum", "psum")] == ["psum"]


def test_a_call_graph_built_later_counts_the_files_it_read_again(tree):
    """The first phase skips bodies; the call graph reads every file again, and the
    report says so (it said `0 parsed` after stderr's `N files parsed`)."""
    first = indexer.build_index(tree, graph=False)
    report = indexer.build_index(tree, graph=True)
    assert first.parsed == report.parsed == report.files > 0


@pytest.mark.parametrize("tree", ["fixture", "installed"])
def test_graph_facts_added_later_are_those_read_at_once(tree):
    """Extracted without the call graph's facts and given them from its source
    afterwards, a file's facts are those of one extraction: every file of the fixture,
    and the first 150 of the installed jax."""
    from jaxmap import roots
    from jaxmap.indexing import discover, extract

    root = Path(roots.resolve_root(None)) if tree == "installed" else MINIJAX
    for source in discover.list_files(str(root)).files[:150]:
        data = (root / source.path).read_bytes()
        module, package = source.module, source.is_package
        later = extract.extract(data, module, package, flow=False)
        assert "callee_spans" in later and not later["callees"] and not later["messages"]
        extract.add_graph_facts(later, data)
        assert later == extract.extract(data, module, package), source.path


def test_an_index_left_unfinished_is_not_written(tmp_path):
    """The index is written in two steps (the files' facts are stored before resolving,
    so they can be let go of); without the second, nothing is left."""
    from jaxmap.errors import StoreError
    from jaxmap.store import write

    with pytest.raises(StoreError, match="unfinished"), \
            write.writing(str(tmp_path / "index.sqlite")) as index:
        index.files([("a.py", "a", 1, 2, "digest", b"")], [])
    assert list(tmp_path.iterdir()) == []


def test_the_index_is_keyed_by_the_installed_grammar():
    """Read from the modules (cheaper than their metadata), the versions the index
    records are those the packages were installed as."""
    from importlib.metadata import version

    from jaxmap.indexing import parse

    assert parse.grammar_version() == (f"tree-sitter {version('tree-sitter')}, "
                                       f"tree-sitter-python {version('tree-sitter-python')}")


def _stages(told: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """The reports of each stage after nought of nought: a count from nought again, or
    to another total, begins the next."""
    stages: list[list[tuple[int, int]]] = []
    for done, total in told[told.index((0, 0)) + 1:]:
        if not stages or done < stages[-1][-1][0] or total != stages[-1][-1][1]:
            stages.append([])
        stages[-1].append((done, total))
    return stages


def test_the_call_graph_reports_progress_as_stages_after_the_parse(tree):
    told: list[tuple[int, int]] = []
    indexer.build_index(tree, progress=lambda done, total, _working: told.append((done, total)))
    files = len(list(tree.rglob("*.py")))
    second = told.index((0, 0))  # nought of nought ends the first stage
    assert told[second - 1] == (files, files)  # every file parsed first
    sites, modules = _stages(told)  # the call sites read twice each, then the modules
    assert sites[0][0] == 0 and sites[-1][0] == sites[-1][1] > 0 and sites[0][1] % 2 == 0
    assert modules[0] == (0, files) and modules[-1] == (files, files)
    for stage in (sites, modules):
        assert [done for done, _ in stage] == sorted(done for done, _ in stage)


def test_a_call_graph_built_later_is_its_own_stage(tree):
    """The call graph added to a first phase: its files read for it, then nought of
    nought ends that stage, then the modules counted from nought."""
    indexer.build_index(tree, graph=False)
    told: list[tuple[int, int]] = []
    indexer.build_index(tree, progress=lambda done, total, _working: told.append((done, total)))
    modules = told[-1][1]
    end = told.index((0, 0))
    assert end > 0 and told[end - 1][0] == told[end - 1][1] > 0  # the files read, all
    sites, counted = _stages(told)
    assert sites[0][0] == 0 and counted[0] == (0, modules) and modules > 0


def _told_a_server(root: Path) -> list:
    """The progress the build process tells a server of one update with the call
    graph, every count sent."""
    from jaxmap.indexing import builder, stages

    sent: list[dict] = []
    builder.answer(str(root), {"graph": True}, sent.append)
    return [stages.Progress(*message["progress"]) for message in sent if "progress" in message]


def test_a_servers_update_is_one_rising_percentage_that_names_its_stage(tree, monkeypatch):
    """A build from nothing, then a save's refresh (a call added: its first phase
    written, then the call graph solved again): each count starts again from nought,
    the percentage of the update never goes down, and ends at 100."""
    from jaxmap.indexing import builder, stages

    monkeypatch.setattr(builder, "_PROGRESS_EVERY_S", 0.0)
    built = _told_a_server(tree)
    path = tree / "jax" / "_src" / "lax" / "parallel.py"
    path.write_text(path.read_text().replace(
        "def _psum_transpose_rule(cts, *args, axes):\n",
        "def _psum_transpose_rule(cts, *args, axes):\n  _psum_abstract_eval(cts, axes=axes)\n"))
    saved = _told_a_server(tree)
    assert [p.stage for p in built[:1]] == [stages.PARSING]
    for told in (built, saved):
        assert [p.percent for p in told] == sorted(p.percent for p in told), told
        assert told[-1].percent == 100 and told[-1].stage == stages.CALL_GRAPH
        assert [p.stage for p in told] == sorted(p.stage for p in told)
    assert {stages.CALL_SITES, stages.CALL_GRAPH} <= {p.stage for p in saved}


@pytest.mark.parametrize("graph, counts, expected", [
    # a save: the parse over at once, then the call sites and the modules
    (True, [(0, 0), (0, 10), (10, 10), (0, 4), (2, 4), (4, 4)],
     [(1, 33), (1, 33), (1, 66), (2, 66), (2, 83), (2, 100)]),
    # files parsed, then read again for the call graph: one stage, held
    (True, [(0, 2), (2, 2), (0, 4), (4, 4), (0, 0), (0, 0), (0, 3), (3, 3)],
     [(0, 0), (0, 33), (0, 33), (0, 33), (1, 33), (1, 33), (2, 66), (2, 100)]),
    (False, [(0, 4), (2, 4), (4, 4)], [(0, 0), (0, 50), (0, 100)]),
])
def test_stages_read_off_the_counts(graph, counts, expected):
    from jaxmap.indexing.stages import Stages

    stages = Stages(graph)
    assert [(p.stage, p.percent) for p in (stages.read(*c) for c in counts)] == expected


def test_a_stage_with_nothing_to_count_says_nothing(monkeypatch, capsys):
    from jaxmap import cli

    monkeypatch.delenv("JAXMAP_QUIET", raising=False)
    clock = iter(range(0, 1000, 2))
    monkeypatch.setattr(cli.time, "perf_counter", lambda: next(clock))
    with cli._progress("indexing", str(MINIJAX)) as progress:
        progress(0, 0)
        for done in range(5):
            progress(done, 4)
        for done in range(6):
            progress(done, 5)
    err = capsys.readouterr().err.splitlines()
    assert [line.split(": ", 2)[-1].partition(" in ")[0] for line in err] == [
        "the call sites, 2 calls read twice...", "done, 2 call sites read",
        "the call graph of 5 modules...", "done, the call graph of 5 modules"]


def test_a_slow_build_names_each_stage_on_stderr(monkeypatch, capsys):
    from jaxmap import cli

    monkeypatch.delenv("JAXMAP_QUIET", raising=False)
    clock = iter(range(0, 1000, 2))  # every reading two seconds after the last
    monkeypatch.setattr(cli.time, "perf_counter", lambda: next(clock))
    with cli._progress("indexing", str(MINIJAX)) as progress:
        for done in range(4):
            progress(done, 3)
        progress(0, 0)
        for done in range(5):
            progress(done, 4)
        for done in range(6):
            progress(done, 5)
    err = capsys.readouterr().err.splitlines()
    assert [line.split(": ", 2)[-1].partition(" in ")[0] for line in err] == [
        "parsing 3 files...", "done, 3 files parsed",
        "the call sites, 2 calls read twice...", "done, 2 call sites read",
        "the call graph of 5 modules...", "done, the call graph of 5 modules"]


def test_files_read_again_for_the_call_graph_are_still_the_parse_stage(monkeypatch, capsys):
    """An update parses the changed files, then reads the others' call-graph facts (a
    second count, before nought of nought): both are parsing, each said on its own."""
    from jaxmap import cli

    monkeypatch.delenv("JAXMAP_QUIET", raising=False)
    clock = iter(range(0, 1000, 2))
    monkeypatch.setattr(cli.time, "perf_counter", lambda: next(clock))
    with cli._progress("indexing", str(MINIJAX)) as progress:
        for counts in ([(d, 3) for d in range(4)] + [(d, 2) for d in range(3)] + [(0, 0)]
                       + [(d, 4) for d in range(5)] + [(d, 5) for d in range(6)]):
            progress(*counts)
    err = capsys.readouterr().err.splitlines()
    assert [line.split(": ", 2)[-1].partition(" in ")[0] for line in err] == [
        "parsing 3 files...", "done, 3 files parsed", "parsing 2 files...",
        "done, 2 files parsed", "the call sites, 2 calls read twice...",
        "done, 2 call sites read", "the call graph of 5 modules...",
        "done, the call graph of 5 modules"]


def test_progress_can_name_the_file_and_the_module_in_work(tree, monkeypatch):
    """Asked while a file is parsed, or a module's calls read, progress's `working()`
    names that file: the parse stage's files in work, then each module's file."""
    from jaxmap.indexing import worker

    told: list = []  # the latest `working`, and what it named at each report
    asked_in_work: list[list[str]] = []
    extract_task = worker._extract_task

    def extracting(task):
        if told:
            asked_in_work.append(told[-1][0]())
        return extract_task(task)

    monkeypatch.setattr(worker, "_extract_task", extracting)
    indexer.build_index(tree, jobs=1, progress=lambda done, total, working: told.append(
        (working, working(), done, total)))
    files = sorted(str(p.relative_to(tree)) for p in tree.rglob("*.py"))
    parsed = [named for named in asked_in_work if named]  # told before the first file
    assert len(parsed) == len(files) and all(len(n) == 1 for n in parsed)
    assert sorted(n[0] for n in parsed) == files
    counts = [(done, total) for _, _, done, total in told]
    end = counts.index((0, 0))  # the stages meet
    began = len(counts) - 1 - counts[::-1].index((0, counts[-1][1]))  # the modules' stage
    sites = [named for _, named, done, total in told[end + 1:began] if done < total and named]
    assert sites and all(len(n) == 1 and n[0] in files for n in sites)  # each call's file
    modules = [named for _, named, done, total in told[began:] if done < total and named]
    assert sorted(n[0] for n in modules) == files and all(len(n) == 1 for n in modules)


def test_a_file_in_work_too_long_is_named(monkeypatch, capsys):
    from jaxmap import cli

    monkeypatch.delenv("JAXMAP_QUIET", raising=False)
    monkeypatch.setattr(cli._progress, "SLOW_S", 0.2)
    monkeypatch.setattr(cli._progress, "AGAIN_S", 60.0)
    with cli._progress("indexing", str(MINIJAX)) as progress:
        progress(0, 0, list)
        progress(2, 2, list)  # the call sites, read
        progress(3, 7, lambda: ["jax/_src/big.py"])
        time.sleep(1.6)  # seen at the first look (0.5 s), named at the next (1.0 s)
    err = capsys.readouterr().err
    assert err.count("still on") == 1, err
    assert "indexing: still on jax/_src/big.py after" in err
    assert "(the call graph, 3 of 7 modules done)" in err


def test_a_progress_bar_says_jaxmap_and_the_file_in_work():
    from jaxmap.render.text import build_in_work, build_stage

    assert build_stage("indexing", 0) == "jaxmap: indexing (parsing)"
    assert build_stage("indexing", 1) == "jaxmap: indexing (the call sites)"
    assert build_stage("indexing", 2) == "jaxmap: indexing (the call graph)"
    assert build_in_work("jax/_src/lax/lax.py") == "jax/_src/lax/lax.py"
    long = "jax/_src/pallas/triton/pallas_call_registration.py"
    assert build_in_work(long) == "...as/triton/pallas_call_registration.py"
    assert len(build_in_work(long)) == 40 and build_in_work(None) is None


def test_locate_says_when_a_file_it_shows_does_not_parse(tree, capsys, monkeypatch):
    """An edit that leaves a file Python cannot parse (mid-edit): its facts are read as
    far as tree-sitter parses it, and `locate` says so beside what it shows from it."""
    module = tree / "jax" / "_src" / "lax" / "parallel.py"
    module.write_text(module.read_text() + "\ndef broken(:\n    pass\n")
    line = module.read_text().count("\n") - 1
    assert main(["locate", "psum", "--root", str(tree)]) == 0
    out = capsys.readouterr().out
    assert f"jax/_src/lax/parallel.py:{line}: does not parse (invalid syntax)" in out
    assert main(["locate", "psum", "--root", str(tree), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unparsed"]
    assert main(["locate", "apply_primitive", "--root", str(tree), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unparsed"] == []
    assert main(["locate", "broken_away", "--root", str(tree)]) == 1  # maybe behind it
    assert capsys.readouterr().err == (
        f"jaxmap: nothing named 'broken_away' in the index of {tree} (the index may lack "
        f"what follows a line Python cannot parse: jax/_src/lax/parallel.py:{line})\n")
    monkeypatch.delenv("JAXMAP_QUIET")
    for command in (["callers", "apply_primitive"], ["binds", "psum_p"]):  # anywhere
        assert main([*command, "--root", str(tree)]) == 0
        assert capsys.readouterr().err.startswith(
            f"jaxmap: jax/_src/lax/parallel.py:{line}: does not parse (invalid syntax); "
            "read as far as it parses, so the answer may lack what follows it\n")
        assert main([*command, "--root", str(tree), "--json", "-q"]) == 0  # and in JSON
        assert json.loads(capsys.readouterr().out)["unparsed"] == [
            f"jax/_src/lax/parallel.py:{line}: does not parse (invalid syntax); "
            "read as far as it parses"]

"""Inputs a new user tries in the first minute: each gets a one-line answer, a
non-zero exit where nothing useful was done, and never a traceback."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxmap.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
MINIJAX = FIXTURES / "minijax"


def _one_line_error(argv, capsys, code=2) -> str:
    assert main(argv) == code
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("jaxmap: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("argv", [["locate", "jax."], ["locate", "."],
                                  ["locate", "jnp.sum."], ["binds", "jax."],
                                  ["callers", "lax..psum"]])
def test_a_name_with_an_empty_part_is_refused(argv, capsys):
    argv += ["--root", str(MINIJAX)]
    assert "is not a name" in _one_line_error(argv, capsys)


@pytest.mark.parametrize("argv", [["locate", ""], ["locate", " "], ["binds", ""],
                                  ["callers", " "]])
def test_no_name_is_a_usage_error_for_every_command(argv, capsys):
    _one_line_error(argv + ["--root", str(MINIJAX)], capsys)


@pytest.fixture
def plain_tree(tmp_path) -> Path:
    """Python code with no JAX in it."""
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "tool.py").write_text("def helper(x):\n    return x + 1\n")
    return tmp_path / "plain"


def test_a_tree_without_primitives_warns_and_answers_empty(plain_tree, capsys):
    assert main(["primitives", "--root", str(plain_tree)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == ""
    assert err.startswith("jaxmap: warning: no JAX primitives in") and err.count("\n") == 1


def test_coverage_of_a_tree_without_primitives_is_its_header_and_totals(plain_tree, capsys):
    assert main(["coverage", "--root", str(plain_tree)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ["primitive  module", "total      0 primitives"]
    assert "no JAX primitives" in err


def test_a_diff_against_a_tree_without_primitives_warns(plain_tree, capsys):
    assert main(["diff", str(MINIJAX), str(plain_tree)]) == 0
    out, err = capsys.readouterr()
    assert "removed" in out and f"no JAX primitives in {plain_tree}" in err


def test_an_unwritable_cache_fails_before_parsing_and_names_the_variable(
        plain_tree, tmp_path, monkeypatch, capsys):
    from jaxmap.indexing import discover

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(blocker / "cache"))

    def never(root):
        raise AssertionError("listed files before checking the cache")

    monkeypatch.setattr(discover, "list_files", never)
    assert "JAXMAP_CACHE_DIR" in _one_line_error(["locate", "x", "--root", str(plain_tree)],
                                                 capsys)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
@pytest.mark.parametrize("argv", [["new-primitive", "jm_nowhere", "--out", "/proc/x"],
                                  ["new", "custom-jvp", "jm_nowhere", "--out", "/proc/x"],
                                  ["skill", "--out", "/proc/x"]])
def test_an_output_that_cannot_be_written_is_refused_before_any_output(argv, capsys):
    err = _one_line_error(argv, capsys)
    assert "/proc" in err and ".jaxmap-" not in err


def test_jaxmap_alone_prints_its_help(capsys):
    assert main([]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("Usage: jaxmap") and err == "" and "jaxmap: error" not in out


def test_explain_dash_on_a_terminal_says_what_it_reads(monkeypatch, capsys):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Terminal("nothing like this is ever raised anywhere"))
    assert main(["explain", "-", "--root", str(MINIJAX)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("jaxmap: reading the text from stdin")


def test_coverage_csv_holds_only_primitive_rows(capsys):
    assert main(["coverage", "--format", "csv", "--root", str(MINIJAX)]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].startswith("primitive,module,")
    assert not any(row.startswith("total,") for row in rows)


def test_the_skill_locator_answers_from_its_own_folder(tmp_path, monkeypatch):
    """Without jaxmap importable (python -I -S), the folder's own snapshot answers."""
    out = tmp_path / "skill"
    assert main(["skill", "--out", str(out), "--root", str(MINIJAX)]) == 0
    done = subprocess.run([sys.executable, "-I", "-S", str(out / "scripts" /
                                                         "jax_repo_locator.py"), "psum"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("primitive psum")


@pytest.fixture
def slow_build(monkeypatch):
    """Builds that take over a second, with their progress lines allowed."""
    import time

    from jaxmap.indexing import worker

    monkeypatch.delenv("JAXMAP_QUIET")
    extract = worker.extract_files

    def slow(root, sources, *, progress=None, jobs=None, **options):
        time.sleep(1.1)
        return extract(root, sources, progress=progress, jobs=1, **options)

    monkeypatch.setattr(worker, "extract_files", slow)


def test_a_build_past_a_second_says_so_on_a_pipe(slow_build, capsys):
    """Two lines on stderr when it is no terminal: when the second passes, and at the end."""
    assert main(["primitives", "--root", str(MINIJAX)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith(f"jaxmap: indexing {MINIJAX}: parsing ")
    assert err[1].startswith("jaxmap: indexing: done, ") and err[1].endswith(" s")


def test_quiet_silences_the_build(slow_build, capsys):
    assert main(["--quiet", "primitives", "--root", str(MINIJAX)]) == 0
    assert capsys.readouterr().err == ""


def test_the_command_starts_with_its_imports_frozen(monkeypatch):
    """What the start-up imports build lives until exit: the collector leaves it alone
    (frozen), and is on again when the command runs."""
    import gc

    from jaxmap import cli, entry

    seen = []
    monkeypatch.setattr(cli, "main", lambda: seen.append(
        (gc.get_freeze_count(), gc.isenabled())) or 0)
    try:
        with pytest.raises(SystemExit) as exited:
            entry.run()
    finally:
        gc.unfreeze()
    assert exited.value.code == 0
    assert seen[0][0] > 0 and seen[0][1]


@pytest.mark.parametrize("command, module", [("mcp", "server"), ("lsp", "lsp")])
def test_a_server_hands_what_the_start_up_froze_back_to_the_collector(
        command, module, monkeypatch):
    """A server indexes again and again: what indexing leaves in reference cycles must
    be collected, which it is not while anything is frozen (indexer._gc_paused)."""
    import gc
    import importlib

    served = importlib.import_module(f"jaxmap.{module}")
    seen = []
    monkeypatch.setattr(served, "require_sdk", lambda: None)
    monkeypatch.setattr(served, "serve_stdio", lambda root: seen.append(gc.get_freeze_count()))
    gc.freeze()
    try:
        assert main([command]) == 0
    finally:
        gc.unfreeze()
    assert seen == [0]


@pytest.mark.parametrize(("argv", "folder"), [
    (["new", "custom-jvp", "jm_made", "--out", "{tmp}/new/a"], "new/a"),
    (["new-primitive", "jm_made", "--root", str(MINIJAX), "--out", "{tmp}/new/b"], "new/b"),
    (["graph", "psum", "--root", str(MINIJAX), "-o", "{tmp}/pictures/psum.dot"], "pictures"),
    (["repo-map", "--root", str(MINIJAX), "-o", "{tmp}/docs/REPO-MAP.md"], "docs"),
    (["skill", "--root", str(MINIJAX), "--out", "{tmp}/skills/jax"], "skills"),
    (["index", "--root", str(MINIJAX), "--snapshot", "{tmp}/snaps/jax.json.gz"], "snaps"),
])
def test_a_folder_an_output_needs_is_created_and_said_once(argv, folder, tmp_path, capsys):
    argv = [arg.format(tmp=tmp_path) for arg in argv]
    said = f"created the folder {tmp_path / folder} (it did not exist)\n"
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert (tmp_path / folder).is_dir() and (out + err).count(said) == 1
    if argv[0] != "skill":  # a skill folder is replaced whole, the folder it goes in kept
        assert main([*argv, "--force"]) == 0
        assert "created the folder" not in "".join(capsys.readouterr())

"""Bad roots, bad files, bad or stale indexes, changes between runs, concurrent runs."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from jaxmap.cli import main
from jaxmap.commands.locate import locate
from jaxmap.errors import JaxmapError, RootError
from jaxmap.indexing.indexer import build_index
from jaxmap.roots import resolve_root
from jaxmap.session import open_index
from jaxmap.store import write as store

GOOD = """\
from jax._src import core


def _good_impl(x):
  return x


good_p = core.Primitive('good')
good_p.def_impl(_good_impl)
"""


def write(root: Path, relative: str, text: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def tree(tmp_path) -> Path:
    """A small valid tree: one primitive with one rule."""
    root = tmp_path / "tree"
    write(root, "pkg/__init__.py", "")
    write(root, "pkg/good.py", GOOD)
    return root


def names(root: Path) -> list[str]:
    with open_index(root) as idx:
        return sorted(p.name for p in idx.primitives())


def cli_error(argv: list[str], capsys) -> str:
    """Run the CLI, assert it failed with one `jaxmap:` line and no traceback."""
    code = main(argv)
    out, err = capsys.readouterr()
    assert code != 0
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jaxmap: "), err
    return lines[0]


def index_file(root: Path) -> Path:
    return Path(store.index_path(root.resolve()))


# -- roots ----------------------------------------------------------------------------


def test_root_that_does_not_exist(tmp_path, capsys):
    with pytest.raises(RootError, match="does not exist"):
        open_index(tmp_path / "missing")
    for command in (["index"], ["locate", "psum"], ["primitives"]):
        line = cli_error([*command, "--root", str(tmp_path / "missing")], capsys)
        assert "does not exist" in line


def test_root_without_python_files(tmp_path, capsys):
    empty = tmp_path / "empty"
    write(empty, "README.md", "# nothing here\n")
    write(empty, "data/table.csv", "a,b\n")
    with pytest.raises(RootError, match="no Python files"):
        build_index(empty)
    line = cli_error(["locate", "psum", "--root", str(empty)], capsys)
    assert "no Python files" in line


def test_root_that_is_a_package_names_the_directory_to_give(tree, capsys):
    write(tree, "pkg/user.py", "from pkg.good import p\n")  # it imports itself by name
    line = cli_error(["locate", "psum", "--root", str(tree / "pkg")], capsys)
    assert "is a package" in line and line.endswith(str(tree.resolve()))


def test_a_folder_with_an_init_that_never_imports_itself_is_a_root(tmp_path):
    root = tmp_path / "snippet"
    write(root, "__init__.py", "")
    write(root, "main.py", "from nested import to_import\n")
    write(root, "nested/__init__.py", "")
    write(root, "nested/to_import.py", "from .relative import f\n")
    write(root, "nested/relative.py", "def f(): pass\n")
    assert resolve_root(root) == str(root.resolve())


def test_root_that_is_a_file(tree):
    with pytest.raises(RootError, match="not a directory"):
        open_index(tree / "pkg" / "good.py")


def test_cache_dir_that_is_a_file(tree, tmp_path, monkeypatch, capsys):
    blocker = write(tmp_path, "blocker", "not a directory")
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(blocker))
    cli_error(["index", "--root", str(tree)], capsys)


# -- bad files beside a good one ---------------------------------------------------------


@pytest.fixture
def messy(tree) -> Path:
    write(tree, "pkg/latin1.py",
          "# caf\xe9 au lait\nfrom jax._src import core\nlatin_p = core.Primitive('latin')\n"
          "name = 'na\xefve'\n".encode("latin-1"))
    write(tree, "pkg/broken.py", "from jax._src import core\n\n"
          "early_p = core.Primitive('early')\n\ndef oops(:\n  return )\n  ]]]\n")
    write(tree, "pkg/empty.py", "")
    write(tree, "pkg/only_comment.py", "# nothing\n")
    os.symlink(tree / "pkg", tree / "pkg" / "loop")  # pkg/loop -> pkg: a cycle
    os.symlink(tree, tree / "pkg" / "up")  # pkg/up -> the root: a cycle too
    return tree


def test_messy_tree_still_indexes(messy):
    report = build_index(messy)
    assert report.files == 6  # no file reached twice through the symlink loops
    with open_index(messy) as idx:
        (good,) = locate(idx, "good_p").primitives
        assert good.loc.file == "pkg/good.py"
        assert [(r.kind.value, r.function.name) for r in good.rules] == [
            ("impl", "_good_impl")]
        assert len([p for p in idx.primitives() if p.name == "good"]) == 1


def test_huge_and_deeply_nested_files_do_not_stop_the_index(tree):
    from jaxmap.indexing.discover import MAX_FILE_BYTES

    filler = "x = 1\n" * (MAX_FILE_BYTES // 6 + 1)
    write(tree, "pkg/huge.py", "from jax._src import core\nhuge_p = core.Primitive('huge')\n"
          + filler)
    write(tree, "pkg/deep.py", "from jax._src import core\ndeep_p = core.Primitive('deep')\n"
          "y = " + "(" * 3000 + "1" + ")" * 3000 + "\n"
          "core.f(" * 400 + "deep_p" + ")" * 400 + "\n")
    report = build_index(tree)
    assert report.files == 3  # huge.py is generated-size: skipped
    with open_index(tree) as idx:
        assert sorted(p.name for p in idx.primitives()) == ["deep", "good"]


def test_latin1_file_is_read_not_fatal(messy):
    with open_index(messy) as idx:
        (latin,) = locate(idx, "latin").primitives
    assert latin.loc.file == "pkg/latin1.py"


def test_syntax_error_keeps_what_parses(messy):
    with open_index(messy) as idx:
        (early,) = locate(idx, "early").primitives
    assert early.loc.file == "pkg/broken.py"


def test_messy_tree_cli_locates(messy, capsys):
    assert main(["locate", "good", "--root", str(messy)]) == 0
    out, err = capsys.readouterr()
    assert "pkg/good.py:" in out and "Traceback" not in err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root can read any file")
def test_unreadable_file_is_skipped(tree):
    secret = write(tree, "pkg/secret.py", GOOD.replace("good", "secret"))
    secret.chmod(0)
    try:
        assert "good" in names(tree)
    finally:
        secret.chmod(0o644)


def test_file_that_vanishes_after_discovery_is_a_diagnostic(tree, monkeypatch, capsys):
    """A file listed by discovery but gone when read is reported, not fatal (runs as
    root too, unlike the chmod test above)."""
    from jaxmap.indexing import discover

    gone = write(tree, "pkg/gone.py", GOOD.replace("good", "gone"))
    list_files = discover.list_files

    def list_then_delete(root):
        listed = list_files(root)
        gone.unlink()
        return listed

    monkeypatch.setattr(discover, "list_files", list_then_delete)
    assert main(["index", "--json", "--root", str(tree)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["diagnostic_messages"] == ["pkg/gone.py: not indexed (unreadable)"]
    monkeypatch.setattr(discover, "list_files", list_files)  # undo() would drop the cache dir
    assert "good" in names(tree)


# -- the index file itself ---------------------------------------------------------------


@pytest.mark.parametrize("damage", ["garbage", "empty", "truncated"])
def test_corrupt_index_is_rebuilt_silently(tree, damage, capsys):
    build_index(tree)
    path = index_file(tree)
    assert path.is_file()
    data = path.read_bytes()
    path.write_bytes({"garbage": b"\x00not sqlite at all\xff" * 500, "empty": b"",
                      "truncated": data[:len(data) // 3]}[damage])
    assert names(tree) == ["good"]
    assert main(["locate", "good", "--root", str(tree)]) == 0
    out, err = capsys.readouterr()
    assert "pkg/good.py:" in out and err == ""
    again = build_index(tree)
    # the rebuilt index is whole: the call graph only reads again the bodies its first
    # phase skipped, in both files
    assert (again.rebuilt, again.parsed) == (False, 2)


def test_corrupt_index_report_says_rebuilt(tree):
    build_index(tree)
    index_file(tree).write_bytes(b"garbage" * 100)
    report = build_index(tree)
    assert report.rebuilt and report.primitives == 1


def test_index_of_an_older_schema_is_rebuilt(tree):
    build_index(tree)
    path = index_file(tree)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    conn.close()
    report = build_index(tree)
    assert report.rebuilt and report.parsed == 2 and report.primitives == 1
    with sqlite3.connect(path) as conn:
        (schema,) = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    conn.close()
    assert schema == str(store.SCHEMA_VERSION)


def test_index_of_an_older_schema_is_rebuilt_on_open(tree):
    build_index(tree)
    path = index_file(tree)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
        conn.execute("DELETE FROM primitives")
    conn.close()
    assert names(tree) == ["good"]


def test_index_missing_a_table_is_rebuilt(tree):
    build_index(tree)
    with sqlite3.connect(index_file(tree)) as conn:
        conn.execute("DROP TABLE files")
    conn.close()
    assert names(tree) == ["good"]


# -- changes between runs ---------------------------------------------------------------


def test_edit_adds_a_rule(tree):
    with open_index(tree) as idx:
        assert [r.kind.value for r in locate(idx, "good").primitives[0].rules] == ["impl"]
    write(tree, "pkg/good.py", GOOD + "good_p.def_abstract_eval(_good_impl)\n")
    with open_index(tree) as idx:
        rules = locate(idx, "good").primitives[0].rules
    assert [r.kind.value for r in rules] == ["impl", "abstract_eval"]
    assert rules[1].loc.line == GOOD.count("\n") + 1


RULES_FILE = ("from pkg.good import good_p\n"
              "from jax._src.interpreters import ad\n\n"
              "def _good_jvp(primals, tangents):\n  return primals, tangents\n\n"
              "ad.primitive_jvps[good_p] = _good_jvp  # line 7\n")


def _jvp_rules(root: Path) -> list[tuple]:
    with open_index(root) as idx:
        (good,) = locate(idx, "good").primitives
    return [(r.loc.file, r.loc.line, r.function.name) for r in good.rules
            if r.kind.value == "jvp"]


def test_new_file_registers_rule_after_index_command(tree, capsys):
    assert names(tree) == ["good"]
    write(tree, "pkg/rules.py", RULES_FILE)
    assert main(["index", "--root", str(tree)]) == 0
    # the new file, and the bodies the first phase skipped: every file's
    assert "3 files (3 parsed" in capsys.readouterr().out
    assert _jvp_rules(tree) == [("pkg/rules.py", 7, "_good_jvp")]


def test_new_file_registers_rule_on_next_open(tree):
    assert names(tree) == ["good"]
    write(tree, "pkg/rules.py", RULES_FILE)
    assert _jvp_rules(tree) == [("pkg/rules.py", 7, "_good_jvp")]


def test_deleted_file_drops_its_primitive(tree):
    write(tree, "pkg/other.py", GOOD.replace("good", "other"))
    assert names(tree) == ["good", "other"]
    (tree / "pkg" / "other.py").unlink()
    assert names(tree) == ["good"]
    report = build_index(tree)
    # open_index caught the first phase up; the call graph reads the bodies it skipped
    assert report.removed == 0 and report.parsed == 2


def test_removed_count_reported(tree):
    write(tree, "pkg/other.py", GOOD.replace("good", "other"))
    build_index(tree)
    (tree / "pkg" / "other.py").unlink()
    report = build_index(tree)
    assert (report.removed, report.parsed, report.primitives) == (1, 0, 1)


# -- incremental ---------------------------------------------------------------------------


def test_second_run_parses_nothing(tree):
    first = build_index(tree)
    assert first.rebuilt and first.parsed == 2
    second = build_index(tree)
    assert (second.rebuilt, second.parsed, second.removed, second.changed) == \
        (False, 0, 0, False)
    assert second.primitives == 1 and second.rules == 1


def test_only_changed_file_is_parsed(tree):
    write(tree, "pkg/other.py", GOOD.replace("good", "other"))
    build_index(tree)
    write(tree, "pkg/other.py", GOOD.replace("good", "other2"))
    report = build_index(tree)
    assert (report.rebuilt, report.parsed) == (False, 1)
    assert names(tree) == ["good", "other2"]


def test_touch_without_change_parses_nothing(tree):
    build_index(tree)
    path = tree / "pkg" / "good.py"
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    assert build_index(tree).parsed == 0
    assert names(tree) == ["good"]


def test_rebuild_flag_parses_everything(tree):
    build_index(tree)
    report = build_index(tree, rebuild=True)
    assert report.rebuilt and report.parsed == 2


# -- concurrent runs --------------------------------------------------------------------


@pytest.fixture
def wide(tree) -> Path:
    for i in range(12):
        write(tree, f"pkg/mod{i}.py", GOOD.replace("good", f"prim{i}"))
    return tree


def _check_whole(root: Path) -> None:
    with open_index(root) as idx:
        prims = idx.primitives()
    assert len(prims) == 13
    assert all(len(p.rules) == 1 for p in prims)
    again = build_index(root)
    assert (again.rebuilt, again.parsed, again.primitives, again.rules) == (False, 0, 13, 13)


def test_two_threads_build_at_once(wide):
    results, errors = [], []

    def work():
        try:
            results.append(build_index(wide, rebuild=True))
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert [r.primitives for r in results] == [13, 13]
    _check_whole(wide)


def test_two_processes_build_at_once(wide):
    code = ("import sys; from jaxmap.indexing.indexer import build_index; "
            "r = build_index(sys.argv[1], rebuild=True); print(r.primitives)")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(wide)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err
        assert out.strip() == "13"
    _check_whole(wide)
    leftovers = [p for p in index_file(wide).parent.iterdir() if p.suffix == ".tmp"]
    assert leftovers == []


def test_errors_are_jaxmap_errors(tmp_path):
    """Library errors for bad roots share one base class the CLI maps to exit codes."""
    with pytest.raises(JaxmapError):
        open_index(tmp_path / "missing")


def test_ctrl_c_at_any_moment_is_one_message_and_exit_130(tmp_path):
    """SIGINT while the CLI imports, while helpers extract, while it resolves: never a
    traceback from any process, and the index built before stays whole."""
    import signal
    import subprocess
    import sys
    import time

    env = {**os.environ, "JAXMAP_CACHE_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "jaxmap"]
    subprocess.run(command + ["index"], env=env, check=True, capture_output=True)
    [before] = [(p, p.stat().st_mtime_ns) for p in tmp_path.glob("*.sqlite")]
    for delay in (0.2, 0.5, 1.0, 1.5):
        run = subprocess.Popen(command + ["index", "--rebuild"], env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(delay)
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=120)
        if run.returncode == 0 or "init_import_site" in err:
            continue  # finished before the signal came, or came while Python itself started
        assert run.returncode == 130, err
        assert err.strip() == "jaxmap: aborted"
        assert [(p, p.stat().st_mtime_ns) for p in tmp_path.glob("*.sqlite")] == [before]
    found = subprocess.run(command + ["locate", "psum"], env=env, capture_output=True,
                           text=True)
    assert found.returncode == 0 and "psum_p" in found.stdout


def test_lsp_with_a_bad_root_or_no_pygls_is_one_line_and_an_exit_code(monkeypatch, capsys):
    assert main(["lsp", "--root", "/no/such/tree"]) != 0
    assert capsys.readouterr().err.strip() == "jaxmap: error: root /no/such/tree does not exist"
    monkeypatch.setitem(sys.modules, "pygls.lsp.server", None)  # as if not installed
    assert main(["lsp"]) != 0
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "pip install 'jaxmap[lsp]'" in err


@pytest.mark.parametrize("argv", [
    ["repo-map", "-o", "{out}", "--force"], ["repo-map", "-o", "{out}"],
    ["graph", "good", "-o", "{out}", "--force"], ["index", "--snapshot", "{out}", "--force"],
])
def test_an_output_file_that_is_a_directory_is_one_line(argv, tree, tmp_path, capsys):
    """`-o EXISTING_DIR` was a raw `[Errno 21] Is a directory`; the folder is kept."""
    out = tmp_path / "out"
    write(out, "mine.txt", "keep\n")
    argv = [arg.format(out=out) for arg in argv]
    assert main(argv + ["--root", str(tree)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"jaxmap: error: {out} is a directory, not a file to write; give a " \
                  f"file's path (nothing was written)"
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]
    assert (out / "mine.txt").read_text() == "keep\n"

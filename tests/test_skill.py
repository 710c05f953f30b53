"""`jaxmap skill`: the folder's layout and contents follow the index and the ladder,
its starters' tests pass where it is written, and it is written whole or not at all."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jaxmap.cli import main
from jaxmap.knowledge import rungs
from jaxmap.scaffold import kinds, skill

LOCATOR = Path(__file__).resolve().parent.parent / "scripts" / "jax_repo_locator.py"


def test_the_locator_is_found_where_importlib_cannot_list_its_package(monkeypatch):
    """An editable install maps `jaxmap_scripts` to scripts/ in a way that
    importlib.resources answers with NotADirectoryError; the checkout's copy serves."""
    from importlib import resources

    def cannot_list(package):
        raise NotADirectoryError("MultiplexedPath only supports directories")

    monkeypatch.setattr(resources, "files", cannot_list)
    assert skill.locator_source() == LOCATOR.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def folder(installed_index, tmp_path_factory):
    """The skill folder for the installed jax, written once with the CLI."""
    out = tmp_path_factory.mktemp("skill") / "jax-skill"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JAXMAP_CACHE_DIR", os.path.dirname(installed_index.path))
        assert main(["skill", "--out", str(out)]) == 0
    return out


@pytest.fixture
def shared_index(installed_index, monkeypatch):
    monkeypatch.setenv("JAXMAP_CACHE_DIR", os.path.dirname(installed_index.path))


def _tree(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def test_skill_md_has_front_matter_ladder_checklist_and_commands(folder, installed_index):
    text = (folder / "SKILL.md").read_text()
    front = re.match(r"---\nname: (\S+)\ndescription: (.+)\n---\n", text)
    assert front and front.group(1) == skill.SKILL_NAME and ": " not in front.group(2)
    assert installed_index.jax_version in front.group(2)
    for rung in rungs.RUNGS:
        assert f"### {rung.number}. {rung.title}" in text
    for item in rungs.CHECKLIST:
        assert f"- [ ] {item}" in text
    for _, command in skill.COMMANDS:
        assert f"`{command}`" in text
    assert "`jax.custom_vjp` at `jax/_src/custom_derivatives.py:" in text


def test_references_are_the_fresh_map(folder, shared_index, capsys):
    assert main(["repo-map", "-o", "-"]) == 0
    assert (folder / "references" / "REPO-MAP.md").read_text() == capsys.readouterr().out
    assert (folder / "references" / "REPO-MAP-PRIMITIVES.md").stat().st_size > 0


def test_scripts_hold_the_standalone_locator(folder):
    assert (folder / "scripts" / "jax_repo_locator.py").read_text() == LOCATOR.read_text()


def test_every_rung_has_a_starter_whose_tests_pass_there(folder):
    starters = sorted(p.name for p in (folder / "assets").iterdir())
    assert starters == sorted(kind.replace("-", "_") for kind in kinds.NAMES)
    for starter in starters:
        assert list((folder / "assets" / starter).glob("test_*.py")), starter
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
         "-p", "no:asyncio", "-W", "error::DeprecationWarning", "assets"],
        capture_output=True, text=True, cwd=folder, timeout=600, check=False,
        # no __pycache__ left in the folder the determinism test compares
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert "passed" in summary and "failed" not in summary and "warning" not in summary


def test_output_is_deterministic_and_force_replaces(folder, shared_index, tmp_path):
    again = tmp_path / "again"
    (again / "references").mkdir(parents=True)
    (again / "SKILL.md").write_text(f"{skill.SIGNATURE} from an older jax")
    (again / "references" / "REPO-MAP.md").write_text("from before")
    (again / "references" / "__pycache__").mkdir()  # what running its files leaves
    assert main(["skill", "--out", str(again), "--force"]) == 0
    first, second = _tree(folder), _tree(again)
    assert first.keys() == second.keys()
    # Starters hold no absolute paths, so the two folders are the same byte for byte.
    assert first == second


def test_json_lists_the_files_written(shared_index, tmp_path, capsys):
    out = tmp_path / "listed"
    assert main(["skill", "--out", str(out), "--budget", "3000", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["out"] == str(out) and document["jax_version"]
    assert document["files"] == sorted(_tree(out))
    # A budget fits the map and leaves out the per-primitive page.
    assert sorted(p.name for p in (out / "references").iterdir()) == ["REPO-MAP.md"]
    assert "(fitted to 3000 tokens)" in (out / "SKILL.md").read_text()


def test_an_existing_folder_needs_force(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep")
    assert main(["skill", "--out", str(out)]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--force" in err
    assert _tree(out) == {"notes.txt": b"keep"}


def test_force_replaces_no_folder_it_did_not_write(tmp_path, capsys, monkeypatch):
    # a project, a user's own skill folder (its SKILL.md not written by jaxmap), or the
    # working directory is never replaced
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.py").write_text("print(1)\n")
    own = tmp_path / "own"
    own.mkdir()
    (own / "SKILL.md").write_text("# my own skill\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    for out in (str(project), str(own), ".", str(tmp_path)):
        assert main(["skill", "--out", out, "--force"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--force does not replace" in err
    assert _tree(project) == {"src/main.py": b"print(1)\n"}
    assert _tree(own) == {"SKILL.md": b"# my own skill\n"}


def test_force_keeps_what_the_user_added_to_a_skill_folder(folder, shared_index, tmp_path,
                                                           capsys):
    """Files jaxmap does not write, put in a folder it wrote, are not deleted."""
    import shutil

    mine = tmp_path / "mine"
    shutil.copytree(folder, mine)
    (mine / "notes.txt").write_text("keep")
    (mine / ".git").mkdir()
    assert main(["skill", "--out", str(mine), "--force"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ".git/" in err and "notes.txt" in err
    assert (mine / "notes.txt").read_text() == "keep" and (mine / ".git").is_dir()

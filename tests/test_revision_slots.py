"""The cached trees of a repository's revisions (revisions/materialise.py): a run
never gives up a tree of its own range, whatever an interrupted run left behind."""

from __future__ import annotations

import json
import os

import pytest
from revision_trees import commit, git

from jaxmap.revisions import git as revisions_git
from jaxmap.revisions import materialise


class _Opened:
    def close(self):
        pass


def _commits(tmp_path, count: int) -> tuple[revisions_git.Repo, list[str]]:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    shas = [commit(path, {"m.py": f"X = {n}\n"}, f"commit {n}") for n in range(count)]
    return revisions_git.open_repo(str(path)), shas


def _run(repo, shas: list[str], interrupt_at: str | None = None) -> dict[str, str]:
    """Each commit's tree, as `indexes` opens them; Ctrl-C while the index of the tree
    holding `interrupt_at` builds."""
    opened: dict[str, str] = {}

    def open_tree(root):
        with open(os.path.join(root, "m.py")) as handle:
            held = handle.read()
        if interrupt_at and held == _text(repo, interrupt_at):
            raise KeyboardInterrupt
        opened[held] = os.path.basename(root)
        return _Opened()

    materialise.indexes(repo, shas, open_tree)
    return {sha: opened[_text(repo, sha)] for sha in shas}


def _text(repo, sha: str) -> str:
    return git(os.path.dirname(repo.git_dir), "show", f"{sha}:m.py")


def test_a_range_keeps_its_own_trees_after_an_interrupted_run(tmp_path):
    repo, (a, head, b, c, d) = _commits(tmp_path, 5)
    first = _run(repo, [a, head])
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C while HEAD's index of b..c builds
        _run(repo, [b, c], interrupt_at=c)
    home = materialise.repo_cache(repo)
    with open(os.path.join(home, "slots.json")) as handle:
        assert len(json.load(handle)) == materialise.SLOTS  # every slot held: one must go
    # d is new, and `head` the tree used longest ago: d must take another
    trees = _run(repo, [d, head])
    assert trees[head] == first[head] and trees[d] != first[head]
    with open(os.path.join(home, "slots.json")) as handle:
        assert json.load(handle)[first[head].removeprefix("tree-")]["commit"] == head

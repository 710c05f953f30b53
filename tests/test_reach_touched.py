"""commands/reach_touched.py: the definitions a change reaches (own lines edited, or
calls changed by it), read from a diff's lines (revisions/git.py), and which reach
findings that makes the change's."""

from __future__ import annotations

from pathlib import Path

import pytest
from revision_trees import base_files, commit, git, make_repo

from jaxmap.commands import reach
from jaxmap.commands.reach_touched import _innermost
from jaxmap.revisions import git as revisions_git
from jaxmap.session import open_index

SPANS = [("C", 1, 10), ("C.m", 2, 4), ("C.n", 6, 9), ("C.n.inner", 7, 8), ("f", 12, 14)]


@pytest.mark.parametrize("lines, names", [
    ([3], {"C.m"}),
    ([5], {"C"}),  # a class body's own line, between its methods
    ([7, 9], {"C.n.inner", "C.n"}),
    ([11, 15], set()),  # module level
    ([1, 13], {"C", "f"}),
    (range(1, 15), {"C", "C.m", "C.n", "C.n.inner", "f"}),
])
def test_a_line_is_its_innermost_definitions(lines, names):
    assert {name for name, _line in _innermost(SPANS, list(lines))} == names


def test_changed_lines_are_numbered_as_each_side_has_them(tmp_path):
    repo = make_repo(tmp_path / "repo")
    core = base_files()["jax/_src/core.py"]
    commit(repo, {"jax/_src/core.py": "# a first line\n" + core.replace(
        "    return args\n", "    return tuple(args)\n", 1), "jax/_src/new.py": "x = 1\n"},
        "edit core, add a module")
    git(repo, "rm", "-q", "jax/_src/dispatch.py")
    commit(repo, {}, "remove dispatch")
    found = revisions_git.changed_lines(revisions_git.open_repo(str(repo)), "HEAD~2", "HEAD")
    assert found == {
        "jax/_src/core.py": ((6,), (1, 7)),  # `bind`'s return: line 6, then 7
        "jax/_src/new.py": ((), (1,)),
        "jax/_src/dispatch.py": ((1, 2), ())}


PICK = "from jax._src.lax.steps import step\n\n\ndef pick(x):\n  {call}\n  return step(x)\n"
STEPS = "from jax._src.lax.ops import {name}\n\n\ndef step(x):\n  return {name}(x)\n"
EDITED = "def edited():\n  return {value}\n"


def _tree(root: Path, name: str, value: int) -> str:
    files = base_files()
    files["jax/lax/__init__.py"] += "from jax._src.lax.pick import pick as pick\n"
    files["jax/_src/lax/pick.py"] = "from jax._src.lax.edited import edited\n" + \
        PICK.format(call="edited()")
    files["jax/_src/lax/steps.py"] = STEPS.format(name=name)
    files["jax/_src/lax/edited.py"] = EDITED.format(value=value)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return str(root)


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    """Two trees whose `step` calls neg, then sin, and whose `edited` changed: `pick`
    calls both, and calls the same functions on both sides."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JAXMAP_CACHE_DIR", str(tmp_path_factory.mktemp("touched-cache")))
        before = open_index(_tree(tmp_path_factory.mktemp("base"), "neg", 1), graph=True)
        after = open_index(_tree(tmp_path_factory.mktemp("head"), "sin", 2), graph=True)
    yield before, after
    before.close()
    after.close()


def _findings(sides, edits) -> dict[tuple[str, str, str], bool]:
    return {(c.function, c.primitive, c.change): c.touched
            for c in reach.compare(*sides, sorted(edits), {"neg", "sin"}, edits=edits)}


def test_an_untouched_files_difference_stays_untouched(sides):
    """`steps.py` differs but the change is told it did not (as where the solve cut a
    cycle elsewhere): `pick` calls the edited function, yet its calls are the same on
    both sides, so its chain through `step` is not the change's."""
    assert _findings(sides, {"jax/_src/lax/edited.py": ((2,), (2,))}) == {
        ("jax.lax.pick", "neg", "stopped"): False, ("jax.lax.pick", "sin", "started"): False}


def test_the_same_difference_edited_is_the_change(sides):
    assert _findings(sides, {"jax/_src/lax/steps.py": ((5,), (5,))}) == {
        ("jax.lax.pick", "neg", "stopped"): True, ("jax.lax.pick", "sin", "started"): True}

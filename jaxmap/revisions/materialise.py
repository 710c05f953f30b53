"""A tree on disk for each revision to index, kept in the cache between runs.

A repository gets a few slots (directories under the cache). A revision already in a
slot is used as it is, so a warm BASE costs a stat check. Else the least recently used
slot that holds neither end of the range is brought to it: from the other end's tree
where that is laid (the two differ by the change reviewed, so one that only moves
lines only moves the index's rows), as hard links, the other end's index copied for
it, then the files that differ written; else from the revision the slot holds, by
writing the Python files the two differ in; else the same way from the tree used
last. The indexer then parses only the files written (their stat changed), whatever
the slot held. Files are replaced, never written in place, so a tree's links never
change another slot's files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import zlib
from contextlib import contextmanager
from typing import TYPE_CHECKING

from jaxmap.revisions import git
from jaxmap.store import atomic
from jaxmap.store import write as store

if TYPE_CHECKING:
    from jaxmap.store.read import Index

SLOTS = 3  # two sides of a review, and the one before: `A..B`, then `B..C`, is warm


def indexes(repo: git.Repo, commits: list[str], open_tree=None) -> list[Index]:
    """The index of each commit (at most SLOTS), with the call graph, open for reading:
    `open_tree(root)` (default: session.open_index with the graph) builds and opens one.
    The commits a slot holds come first, and each is built before the next tree is
    laid, so a new slot can start from the other end's tree and index."""
    if open_tree is None:
        open_tree = _open_with_graph
    opened: dict[str, Index] = {}
    with locked(repo):
        home = repo_cache(repo)
        state = _read_state(home)
        kept = _holding(home, state, commits)  # never brought to another commit
        held = {state[slot]["commit"] for slot in kept}
        chosen: dict[str, str] = {}
        try:
            for sha in sorted(commits, key=lambda sha: sha not in held):
                if sha not in chosen:
                    chosen[sha] = _slot_for(repo, home, state, sha, kept | set(chosen.values()))
                    opened[sha] = open_tree(_tree(home, chosen[sha]))
        except BaseException:
            for index in opened.values():
                index.close()
            raise
    return [opened[sha] for sha in commits]


def _open_with_graph(root: str):
    from jaxmap.session import open_index

    return open_index(root, graph=True)


def _slot_for(repo: git.Repo, home: str, state: dict, sha: str, taken: set[str]) -> str:
    """The slot that holds `sha`, brought to it if none did."""
    slot = next((s for s, held in state.items()
                 if held["commit"] == sha and os.path.isdir(_tree(home, s))), None)
    if slot is None:
        slot = _least_used(state, taken)
        _bring(repo, home, state, slot, sha, taken)
    state[slot] = {"commit": sha, "used": time.time()}
    _write_state(home, state)
    return slot


@contextmanager
def locked(repo: git.Repo):
    """Hold the repository's slots for this run (a second run waits its turn)."""
    home = repo_cache(repo)
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, "lock"), "w") as handle:
        try:
            import fcntl
        except ImportError:  # no advisory locks on this system: run unguarded
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def repo_cache(repo: git.Repo) -> str:
    """The cache directory of one repository's trees."""
    top = os.path.dirname(repo.git_dir) if os.path.basename(repo.git_dir) == ".git" \
        else repo.git_dir
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(top) or "repo")
    return os.path.join(store.cache_dir(), "revisions",
                        f"{stem}-{zlib.crc32(repo.git_dir.encode()):08x}")


def _bring(repo: git.Repo, home: str, state: dict, slot: str, sha: str,
           ends: set[str]) -> None:
    """Make `slot` hold commit `sha`: from the tree of `ends` (the slots of the range's
    other end) where one is laid, since the two differ by the change reviewed (one that
    only moves lines then moves its index's rows, and solves nothing); else from the
    revision the slot holds; else from the tree used last."""
    held = state.pop(slot, None)
    _write_state(home, state)  # a run that stops half way leaves the slot unclaimed
    tree = _tree(home, slot)
    near = _newest(home, state, ends)
    if near is None and held and os.path.isdir(tree):
        _apply(repo, tree, git.changed_python_files(repo, held["commit"], sha))
        return
    shutil.rmtree(tree, ignore_errors=True)
    sibling = near or _newest(home, state, set(state))
    if sibling is None:
        _apply(repo, tree, git.python_files(repo, sha))
        return
    _link_tree(_tree(home, sibling), tree)
    source = store.index_path(os.path.realpath(_tree(home, sibling)))
    if os.path.isfile(source):
        real = os.path.realpath(tree)
        store.copy_for_root(source, store.index_path(real), real)
    _apply(repo, tree, git.changed_python_files(repo, state[sibling]["commit"], sha))


def _newest(home: str, state: dict, slots: set[str]) -> str | None:
    """Of `slots`, the one used last whose tree is laid."""
    return max((s for s in slots if s in state and os.path.isdir(_tree(home, s))),
               key=lambda s: state[s]["used"], default=None)


def _apply(repo: git.Repo, tree: str, blobs: list[git.Blob]) -> None:
    """Write each blob's file under `tree`, and remove those whose blob is ""."""
    os.makedirs(tree, exist_ok=True)
    kept = [blob for blob in blobs if blob.sha]
    for blob in blobs:
        if not blob.sha:
            _remove(os.path.join(tree, blob.path))
    for blob, data in zip(kept, git.read_blobs(repo, [blob.sha for blob in kept])):
        target = os.path.join(tree, blob.path)
        if os.path.isdir(target):  # a package became a module of that name
            shutil.rmtree(target)
        atomic.write(target, data)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _link_tree(source: str, target: str) -> None:
    """`target` as a copy of `source` made of hard links (copies where links fail)."""
    for directory, _dirs, files in os.walk(source):
        there = os.path.join(target, os.path.relpath(directory, source))
        os.makedirs(there, exist_ok=True)
        for name in files:
            try:
                os.link(os.path.join(directory, name), os.path.join(there, name))
            except OSError:
                shutil.copy2(os.path.join(directory, name), os.path.join(there, name))


def _holding(home: str, state: dict, commits: list[str]) -> set[str]:
    """The slots whose trees hold one of `commits`: none may be brought to another
    (with HEAD cached and BASE new, BASE must not take HEAD's slot)."""
    return {slot for slot, held in state.items()
            if held["commit"] in commits and os.path.isdir(_tree(home, slot))}


def _least_used(state: dict, taken: set[str]) -> str:
    free = [str(n) for n in range(SLOTS) if str(n) not in state and str(n) not in taken]
    if free:
        return free[0]
    return min((s for s in state if s not in taken), key=lambda s: state[s]["used"])


def _tree(home: str, slot: str) -> str:
    return os.path.join(home, f"tree-{slot}")


def _read_state(home: str) -> dict:
    """slot -> {"commit", "used"}; empty when missing or unreadable (slots then start
    over, which costs time, never a wrong tree)."""
    try:
        with open(os.path.join(home, "slots.json"), encoding="utf-8") as handle:
            state = json.load(handle)
        return {slot: held for slot, held in state.items()
                if isinstance(held, dict) and isinstance(held.get("commit"), str)
                and isinstance(held.get("used"), (int, float))}
    except (OSError, ValueError, AttributeError):
        return {}


def _write_state(home: str, state: dict) -> None:
    atomic.write(os.path.join(home, "slots.json"), json.dumps(state, sort_keys=True))

"""What jaxmap asks git: the commit a ref names, a range's two ends, the Python files
of a commit and the ones two commits differ in, and blob contents. Every call is the
`git` command, run on the repository's git directory, so a bare clone works too."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import threading
from typing import Iterator, NamedTuple

from jaxmap.errors import JaxmapError

_SYMLINK, _SUBMODULE = "120000", "160000"  # modes that are not files to index


class RevisionError(JaxmapError):
    """A repository or a ref that git cannot read."""


class Repo(NamedTuple):
    git_dir: str  # absolute


class Range(NamedTuple):
    """A `BASE..HEAD` or `BASE...HEAD` range, as commits (BASE is the merge base for
    the three-dot form), with the refs as written."""

    base: str
    head: str
    base_ref: str
    head_ref: str


class Lines(NamedTuple):
    """The lines a change removed from one file (numbered as BASE has them) and added
    to it (as HEAD has them); a changed line is both."""

    removed: tuple[int, ...]
    added: tuple[int, ...]


class Blob(NamedTuple):
    path: str  # POSIX, relative to the repository's top
    sha: str  # "" when the path was deleted


def open_repo(path: str) -> Repo:
    """The repository at or above `path` (a work tree or a bare git directory)."""
    if not os.path.isdir(path):
        raise RevisionError(f"{path} is not a directory; pass --repo PATH of a git "
                            f"repository")
    try:
        found = _git(["-C", path, "rev-parse", "--absolute-git-dir"]).strip()
    except RevisionError:
        raise RevisionError(f"{path} is not in a git repository; pass --repo PATH of "
                            f"one") from None
    return Repo(found)


def is_range(text: str) -> bool:
    return ".." in text


def parse_range(repo: Repo, text: str) -> Range:
    """`A..B` compares A with B; `A...B` compares B with where it left A (their merge
    base); an end left empty is HEAD, as for git; one commit, `C`, is `C~1..C`: what
    it changed."""
    if ".." not in text:
        head = commit(repo, text)
        base = _run(repo, ["rev-parse", "--verify", "--quiet", "--end-of-options",
                           f"{head}~1^{{commit}}"],
                    f"{text} has no parent to compare it with").strip()
        return Range(base, head, f"{text}~1", text)
    three = "..." in text
    base_ref, _, head_ref = text.partition("..." if three else "..")
    base_ref, head_ref = base_ref or "HEAD", head_ref or "HEAD"
    base, head = commit(repo, base_ref), commit(repo, head_ref)
    if three:
        base = _run(repo, ["merge-base", base, head], f"{base_ref} and {head_ref} share "
                    f"no history; compare them with {base_ref}..{head_ref}").strip()
    return Range(base, head, base_ref, head_ref)


def commit(repo: Repo, ref: str) -> str:
    """The full hash of the commit `ref` names."""
    if ref.startswith("-"):
        raise RevisionError(f"{ref!r} is not a ref")
    return _run(repo, ["rev-parse", "--verify", "--quiet", "--end-of-options",
                       f"{ref}^{{commit}}"],
                f"no commit named {ref!r} in {repo.git_dir}").strip()


def python_files(repo: Repo, sha: str) -> list[Blob]:
    """Every Python file of commit `sha` (symbolic links and submodules left out)."""
    listing = _run(repo, ["ls-tree", "-r", "-z", "--full-tree", sha],
                   f"cannot list the files of {sha}")
    blobs = []
    for entry in filter(None, listing.split("\0")):
        meta, _, path = entry.partition("\t")
        mode, _kind, blob = meta.split()
        if path.endswith(".py") and mode not in (_SYMLINK, _SUBMODULE):
            blobs.append(Blob(path, blob))
    return blobs


def changed_python_files(repo: Repo, old: str, new: str) -> list[Blob]:
    """The Python files that differ between commits `old` and `new`: each with its
    blob in `new`, or "" where `new` has no such file (or only a link)."""
    raw = _run(repo, ["diff", "--raw", "-z", "--no-renames", "--no-abbrev", old, new],
               f"cannot compare {old} with {new}")
    fields = raw.split("\0")
    changed = []
    for meta, path in zip(fields[::2], fields[1::2]):
        if not path.endswith(".py"):
            continue
        _old_mode, new_mode, _old_blob, new_blob, status = meta.lstrip(":").split()
        gone = status == "D" or new_mode in (_SYMLINK, _SUBMODULE)
        changed.append(Blob(path, "" if gone else new_blob))
    return changed


_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def changed_lines(repo: Repo, old: str, new: str) -> dict[str, Lines]:
    """Python file -> the lines of it that differ between commits `old` and `new`, as
    `git diff` pairs their blobs (no context; every line of a file added or deleted)."""
    text = _run(repo, ["diff", "-U0", "--no-renames", "--no-color", "--no-ext-diff",
                       "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", old, new,
                       "--", "*.py"], f"cannot compare {old} with {new}")
    found: dict[str, tuple[list[int], list[int]]] = {}
    paths: list[str] = []  # this file's `---` and `+++` paths, until its first hunk
    lines: tuple[list[int], list[int]] | None = None
    for line in text.splitlines():
        if line.startswith("diff --git "):
            paths, lines = [], None
        elif lines is None and line.startswith(("--- ", "+++ ")):
            paths.append(_diff_path(line[4:]))
        elif line.startswith("@@") and (hunk := _HUNK.match(line)):
            if lines is None:
                path = paths[-1] if paths and paths[-1] else paths[0]
                lines = found.setdefault(path, ([], []))
            start, count, new_start, new_count = hunk.groups()
            lines[0].extend(_span(start, count))
            lines[1].extend(_span(new_start, new_count))
    return {path: Lines(tuple(removed), tuple(added))
            for path, (removed, added) in found.items() if path.endswith(".py")}


def _diff_path(text: str) -> str:
    """`a/jax/x.py` -> `jax/x.py`; `/dev/null` -> "" (git quotes odd names C-style)."""
    text = text.rstrip("\t")
    if text.startswith('"'):
        text = ast.literal_eval("b" + text).decode("utf-8", "surrogateescape")
    return "" if text == "/dev/null" else text[2:]


def _span(start: str, count: str | None) -> range:
    """A hunk side's lines: `12,3` is 12-14, `12` is 12, `12,0` none."""
    first = int(start)
    return range(first, first + (1 if count is None else int(count)))


def read_blobs(repo: Repo, shas: list[str]) -> Iterator[bytes]:
    """The contents of the blobs `shas`, in order, through one `git cat-file --batch`."""
    if not shas:
        return
    with subprocess.Popen(["git", "--git-dir", repo.git_dir, "cat-file", "--batch"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL) as process:
        assert process.stdin is not None and process.stdout is not None
        # Written from a thread: git answers while it reads, and a full pipe each way
        # would block both.
        feeder = threading.Thread(target=_feed, args=(process.stdin, shas), daemon=True)
        feeder.start()
        for sha in shas:
            header = process.stdout.readline().split()
            if len(header) != 3:
                raise RevisionError(f"git cannot read blob {sha} of {repo.git_dir}")
            data = process.stdout.read(int(header[2]))
            process.stdout.read(1)  # the newline after each object
            yield data
        feeder.join()


def _feed(stdin, shas: list[str]) -> None:
    try:
        with stdin:
            stdin.write("".join(f"{sha}\n" for sha in shas).encode())
    except OSError:  # git stopped early; the reader says why
        pass


def _run(repo: Repo, args: list[str], failure: str) -> str:
    try:
        return _git(["--git-dir", repo.git_dir, *args])
    except RevisionError:
        raise RevisionError(failure) from None


def _git(args: list[str]) -> str:
    try:
        done = subprocess.run(["git", *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise RevisionError("git is not installed, or not on PATH") from None
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        raise RevisionError(lines[-1] if lines else "git failed")
    return done.stdout.decode("utf-8", errors="surrogateescape")

"""The contributor's loop: an edit, then a question, timed against jaxmap as it was.

    python benchmarks/bench_edits.py [--root PATH] [--rounds N] [--before REF] [--now REF]

Copies the tree (default: the installed jax) to a scratch directory and indexes it
cold, with call graph, twice: with jaxmap at the git commit REF of this repository
("before", default HEAD~1) and as installed, or at `--now REF` ("now"); a commit is
run from a `git archive` of it, and each keeps its own cache. Then, per round, it
makes the issue's edits one after another and asks each question after each edit,
before and now interleaved, in new processes. Prints the median wall seconds and
peak memory of each, their ratio, and the issue's target; with `ty` on PATH, `ty
check` of the copy as the yardstick for the cold build. Nothing here asserts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARALLEL = "jax/_src/lax/parallel.py"
CORE = "jax/_src/core.py"


def _comment(path: str) -> None:
    with open(path) as handle:
        lines = handle.read().split("\n")
    middle = len(lines) // 2
    while not lines[middle].startswith("def "):
        middle += 1
    lines[middle:middle] = ["# a comment an edit added", ""]
    _write(path, "\n".join(lines))


def _body_statement(path: str) -> None:
    with open(path) as handle:
        text = handle.read()
    at = text.index("def _psum_transpose_rule")
    end = text.index("\n", at) + 1
    _write(path, text[:end] + "  unused_by_an_edit = 1\n" + text[end:])


def _docstring_reworded(path: str) -> None:
    with open(path) as handle:
        text = handle.read()
    at = text.index('"""', text.index("def psum(")) + 3
    _write(path, text[:at] + "Reworded by an edit: " + text[at:])


def _appended_comment(path: str) -> None:
    with open(path) as handle:
        text = handle.read()
    _write(path, text + "\n# a comment an edit appended\n")


def _new_def(path: str) -> None:
    with open(path) as handle:
        text = handle.read()
    count = text.count("def _added_by_an_edit")
    _write(path, text + f"\n\ndef _added_by_an_edit{count}(x):\n  return x\n")


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


# (edit, file, question, target seconds); the table, in its order, with a
# docstring's first line reworded (an edit the issue counts with comments).
STEPS = [
    ("a comment", PARALLEL, ["locate", "psum"], 0.3),
    ("a comment", PARALLEL, ["callers", "psum"], 1.0),
    ("a body statement", PARALLEL, ["locate", "psum"], 0.3),
    ("a body statement", PARALLEL, ["callers", "psum"], 1.0),
    ("a docstring's first line", PARALLEL, ["locate", "psum"], 0.3),
    ("a docstring's first line", PARALLEL, ["callers", "psum"], 1.0),
    ("an appended comment", CORE, ["binds", "psum_p"], 2.0),
    ("a new def", CORE, ["callers", "psum"], 2.0),
    ("nothing", None, ["callers", "psum"], None),
]
EDITS = {"a comment": _comment, "a body statement": _body_statement,
         "a docstring's first line": _docstring_reworded,
         "an appended comment": _appended_comment, "a new def": _new_def}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=None, help="tree to copy (default: installed jax)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--before", default="HEAD~1", help="git commit of jaxmap to compare")
    parser.add_argument("--now", default=None, help="git commit to run instead of the "
                        "installed jaxmap")
    args = parser.parse_args()
    from jaxmap import roots

    scratch = tempfile.mkdtemp(prefix="jaxmap-edits-")
    tree = os.path.join(scratch, "tree")
    shutil.copytree(os.path.join(roots.resolve_root(args.root), "jax"),
                    os.path.join(tree, "jax"))
    before = _archive(args.before, os.path.join(scratch, "before"))
    now = _archive(args.now, os.path.join(scratch, "now")) if args.now else None
    runs = {"before": _runner(before, os.path.join(scratch, "cache-before"), tree),
            "now": _runner(now, os.path.join(scratch, "cache-now"), tree)}
    print(f"tree: a copy of {roots.resolve_root(args.root)}; {os.cpu_count()} cores; "
          f"before: jaxmap at {args.before}; now: jaxmap at {args.now or 'installed'}; "
          f"{args.rounds} rounds")
    cold = {name: run(["index"]) for name, run in runs.items()}
    ty = shutil.which("ty")
    anchor = _timed([ty, "check", "--exit-zero", "jax"], cwd=tree)[0] if ty else None
    print("\ncold index with call graph (s, MB):")
    for name, (seconds, peak) in cold.items():
        ratio = f"  {seconds / anchor:.1f}x ty check ({anchor:.1f} s)" if anchor else ""
        print(f"  {name:6} {seconds:7.2f} s  {peak:5.0f} MB{ratio}")
    times: dict[tuple, dict[str, list]] = {}
    for _ in range(args.rounds):
        for step, (edit, file, question, _) in enumerate(STEPS):
            if file is not None and (step == 0 or STEPS[step - 1][:2] != (edit, file)):
                EDITS[edit](os.path.join(tree, file))
            for name, run in runs.items():
                times.setdefault((step,), {}).setdefault(name, []).append(run(question))
    print(f"\n{'after':42} {'question':16} {'before s':>9} {'now s':>8} {'now/before':>10} "
          f"{'target':>7} {'now MB':>7}")
    for step, (edit, file, question, target) in enumerate(STEPS):
        found = times[(step,)]
        old = statistics.median(s for s, _ in found["before"])
        new = statistics.median(s for s, _ in found["now"])
        peak = max(m for _, m in found["now"])
        where = f"{edit} in {os.path.basename(file)}" if file else edit
        goal = f"<= {target}" if target else ""
        print(f"{where:42} {' '.join(question):16} {old:9.2f} {new:8.2f} {new / old:10.2f} "
              f"{goal:>7} {peak:7.0f}")
    shutil.rmtree(scratch, ignore_errors=True)


def _archive(ref: str, into: str) -> str:
    os.makedirs(into)
    archive = subprocess.run(["git", "-C", REPO, "archive", ref, "jaxmap", "scripts",
                              "indexes"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return into


def _runner(code: str | None, cache: str, tree: str):
    env = {**os.environ, "JAXMAP_CACHE_DIR": cache, "JAXMAP_QUIET": "1"}
    if code is not None:
        env["PYTHONPATH"] = code

    def run(arguments: list[str]) -> tuple[float, float]:
        # Run from the scratch directory: `-m` puts the working directory first on the
        # path, and this repository's own jaxmap would shadow the archived one.
        return _timed([sys.executable, "-m", "jaxmap", *arguments, "--root", tree], env=env,
                      cwd=os.path.dirname(tree))
    return run


def _timed(command: list, *, env=None, cwd=None) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one command."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(command)}")
    return seconds, usage.ru_maxrss / 1024


if __name__ == "__main__":
    main()

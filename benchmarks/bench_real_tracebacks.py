"""How `jaxmap explain` places held-out tracebacks as users paste them
(benchmarks/data/real_tracebacks.json: plain, unfiltered, pytest, IPython with colours,
logs, a message alone; jax 0.10.2 runs, older releases' wordings, issue threads).

Batch 1 (46) was the set the first figure came from (37 right, 1 listed, 2 wrong, 6
missing), and explain was then corrected on it; batch 2 (14 more runs) was added
after, unseen (13 right, 1 missing); batch 3 (7 pastes from jax-ml/jax issues, 0.1.55
to 0.4.34) after that, unseen (3 right, 1 wrong, 3 missing), then corrected on; batch 4
(30 from other jax-ml/jax issue and pull-request threads, 0.1.36 to 0.7.0, the release
by the thread's date where it names none) after that, unseen (9 right, 6 wrong, 15
missing; 2 of the wrong were expected sites put wrong: an old `vmap in_axes` wording is
raised by `api_util.flatten_axes`, an invalid argument by `dispatch.check_arg`), then
20 right, 1 wrong, 9 missing once those were corrected and Colab's linked IPython
frames (and ones whose file a paste cut), a checkout's own scripts, a paste cut above
the raise, jax 0.2's `FilteredStackTrace` and a Markdown quote were read; 20 right, 0
wrong, 10 missing once an older wording whose line goes on past what a placeholder
took was placed only where the paste says it ran that release, then 21 right, 0 wrong,
9 missing once an exception whose class line a paste cut was read from JAX's copy. Each
is scored against where JAX raised it: `right` (the answer's first place), `listed`
(among its places, not first), `wrong` (placed elsewhere, or a JAX error called not
JAX's, or a non-JAX one placed), `missing` (not placed). Needs the installed jax's
index (built on first use).

    python benchmarks/bench_real_tracebacks.py [--verbose]
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

from jaxmap.commands import explain
from jaxmap.commands.explain import Status
from jaxmap.session import open_index

DATA = Path(__file__).with_name("data") / "real_tracebacks.json"
_SITE_STATUSES = (Status.MATCHED, Status.FRAME, Status.FRAME_SHOWN, Status.RUNTIME)


def places(answer) -> list:
    """(file, line, function) where an answer says JAX raised it, first first."""
    if answer.status == Status.OLDER:
        return [(s.file, s.line, s.function) for s in (answer.older.site,
                                                       *answer.older.successors)]
    if answer.status not in _SITE_STATUSES:
        return []
    raised = [s for s in answer.sites if not (s.returned or s.function.endswith("__init__"))]
    return [(s.file, s.line, s.function) for s in (*answer.raised_by, *raised)]


def _at(place, expect) -> bool:
    file, line, function = place
    if file != expect["file"]:
        return False
    if "line" in expect:
        return line == expect["line"]
    return expect["function"] in function.split(".")


def verdict(answers, expect) -> str:
    placed = [a for a in answers if a.placed]
    if expect.get("not_jax"):
        return "right" if not placed else "wrong"
    if "user_code" in expect:
        if any(a.status == Status.USER_CODE and a.called.frame.function == expect["user_code"]
               for a in answers):
            return "right"
        return "wrong" if placed else "missing"
    if not placed:
        return "missing"
    for answer in reversed(placed):
        found = places(answer)
        if found:
            return "right" if _at(found[0], expect) else \
                "listed" if any(_at(p, expect) for p in found) else "wrong"
    return "wrong" if any(a.status == Status.NOT_JAX for a in answers) else "missing"


def main(argv: list[str]) -> int:
    entries = json.loads(DATA.read_text())["tracebacks"]
    index = open_index(graph=True)  # explain reads the messages, built with the call graph
    verdicts, started = {}, time.perf_counter()
    for entry in entries:
        verdicts[entry["id"]] = verdict(explain.explain_all(index, entry["paste"]),
                                        entry["expect"])
    seconds = time.perf_counter() - started
    counts = Counter(verdicts.values())
    releases = sorted({e["release"] for e in entries}, key=lambda v: tuple(map(int, v.split("."))))
    formats = Counter(e["format"] for e in entries)
    print(f"{len(entries)} tracebacks, jax {', '.join(releases)}; formats: "
          + ", ".join(f"{name} {n}" for name, n in sorted(formats.items())))
    print(f"right {counts['right']}  listed {counts['listed']}  wrong {counts['wrong']}  "
          f"missing {counts['missing']}  ({seconds / len(entries) * 1000:.0f} ms each)")
    for batch in sorted({e.get("batch", 1) for e in entries}):
        of = Counter(verdicts[e["id"]] for e in entries if e.get("batch", 1) == batch)
        print(f"  batch {batch}: " + "  ".join(f"{k} {of[k]}" for k in
                                                ("right", "listed", "wrong", "missing")))
    for ident, found in verdicts.items():
        if found != "right" or "--verbose" in argv:
            print(f"  {found:<8} {ident}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

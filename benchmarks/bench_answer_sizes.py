"""How large agent-facing answers are: each MCP tool called with its default arguments,
beside the whole (unpaged) document, and the tool list, in one run.

    python benchmarks/bench_answer_sizes.py [--root PATH ...]

Tokens are estimated as characters / 4. Prints, per root and tool: the default
answer's characters and tokens, how many items of how many it shows, and the whole
document's size; the target (a default answer under 8,000 tokens) is printed beside.
Nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_TOKENS = 8000
# (tool, arguments): the calls whose answers grow with the tree; the heaviest names.
CALLS = (("primitives", {}), ("coverage", {}), ("binds", {"name": "add"}),
         ("callers", {"name": "bind"}), ("calls", {"name": "trace_to_jaxpr"}),
         ("locate", {"name": "add"}))
LISTS = {"primitives": "primitives", "coverage": "rows", "binds": "found",
         "callers": "found", "calls": "found", "locate": "definitions"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", action="append", default=None,
                        help="a tree to index (repeatable); default: the installed jax")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from jaxmap import tools

    schemas = json.dumps(tools.schemas())
    print(f"tool list: {len(tools.schemas())} tools, {len(schemas):,} characters, "
          f"about {len(schemas) // 4:,} tokens")
    for root in args.root or [None]:
        measure(root)


def measure(root: str | None) -> None:
    from jaxmap import dispatch, tools
    from jaxmap.session import Session

    with Session(root) as session:
        print(f"\n{session.root} (target: a default answer under {TARGET_TOKENS:,} tokens)")
        print(f"  {'call':<30} {'chars':>8} {'tokens':>7} {'shown':>11} {'whole doc':>10}")
        for name, arguments in CALLS:
            text = tools.call(session, name, arguments)
            whole = dispatch.answer(tools.BY_NAME[name].command,
                                    session.index(graph=tools.BY_NAME[name].command.graph),
                                    arguments)
            document = json.loads(text)
            shown = f"{len(document[LISTS[name]])}/{document['total']}"
            call = f"{name} {json.dumps(arguments)}"
            print(f"  {call:<30} {len(text):>8,} {len(text) // 4:>7,} {shown:>11} "
                  f"{len(whole):>10,}")


if __name__ == "__main__":
    main()

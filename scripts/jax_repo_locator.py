#!/usr/bin/env python3
"""Where is NAME defined in JAX? For agents and shells.

    python scripts/jax_repo_locator.py NAME [--root PATH] [--jax VERSION] [--json]

With the jaxmap package importable this is `jaxmap locate`. Without it, the answer
comes from a committed snapshot in indexes/ (primitives with every rule, and public
definitions), read with the standard library only; --root then needs the package.
The JSON has the `jaxmap locate --json` schema.
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import json
import os
import re
import sys

# The rule kind a Trace class's method stands for (`trace (jvp)`): a copy of
# jaxmap/knowledge/traces.py's TRACE_CLASS_KINDS, which a test holds this to.
TRACE_CLASS_KINDS = {
    "EvalTrace": "impl", "JVPTrace": "jvp", "LinearizeTrace": "linearization",
    "BatchTrace": "batching", "SPMDBatchTrace": "batching", "JaxprTrace": "partial_eval",
    "DynamicJaxprTrace": "staging", "JetTrace": "jet"}
INDEXES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "indexes")
SNAPSHOT = re.compile(r"jax-(\d+(?:\.\d+)*)\.json\.gz\Z")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name")
    parser.add_argument("--root", help="a JAX checkout or any tree (needs the jaxmap package)")
    parser.add_argument("--jax", help="answer for this released version, from indexes/")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    try:
        from jaxmap.cli import main as jaxmap_main
    except ImportError:
        return from_snapshot(args)
    command = ["locate", args.name]
    for flag, value in (("--root", args.root), ("--jax", args.jax)):
        if value:
            command += [flag, value]
    return jaxmap_main(command + (["--json"] if args.json else []))


def from_snapshot(args) -> int:
    if args.root:
        return _fail("--root needs the jaxmap package (pip install .); without it only the "
                     "snapshots in indexes/ can be read")
    versions = _snapshots()
    if not versions:
        return _fail(f"no snapshots in {INDEXES}: install jaxmap (pip install jaxmap) to "
                     f"index the installed jax")
    version = args.jax or max(versions, key=_version_key)
    if version not in versions:
        return _fail(f"no snapshot for jax {version} in {INDEXES}; there are: "
                     f"{', '.join(sorted(versions, key=_version_key))}")
    with gzip.open(versions[version], "rt", encoding="utf-8") as handle:
        snapshot = json.load(handle)
    primitives, definitions = _match(snapshot, args.name.strip())
    if not primitives and not definitions:
        names = {p["name"] for p in snapshot["primitives"]} | {
            p["variable"] for p in snapshot["primitives"]} | {
            d["name"] for d in snapshot["definitions"]}
        close = difflib.get_close_matches(args.name.rpartition(".")[2], sorted(names), n=5,
                                          cutoff=0.75)
        hint = f"; did you mean: {', '.join(close)}?" if close else ""
        print(f"jax_repo_locator: nothing named {args.name!r} in jax {version}{hint}",
              file=sys.stderr)
        return 1
    root = f"jax {snapshot['jax_version']} (snapshot)"
    if args.json:
        # A snapshot has no call graph: what a function reaches is not known there.
        definitions = [{**d, "reaches_total": None, "reaches": None} for d in definitions]
        # Everything, as `jaxmap locate --json` prints by default: one page of all.
        print(json.dumps({"root": root, "jax_version": snapshot["jax_version"],
                          "query": args.name.strip(), "call_graph": False,
                          "unparsed": [], "config_options": [], "primitives": primitives,
                          "definitions": definitions, "total": len(definitions),
                          "offset": 0, "truncated": False, "next_offset": None}, indent=1))
    else:
        print(_text(primitives, definitions))
    return 0


def _match(snapshot: dict, query: str) -> tuple[list, list]:
    """The same rules as `jaxmap locate`: a primitive by name string, variable or alias
    (of the last dotted part); a definition by name, or by qualified or public path
    (suffix)."""
    leaf = query.rpartition(".")[2]
    stem = leaf[:-2] if leaf.endswith("_p") else leaf
    # A snapshot has no call graph: which tests reach a primitive is not known there.
    primitives = [{**p, "tests_total": None, "tests": None,
                   "switched_off": p.get("switched_off", []),  # only where there are any
                   # a snapshot written before jaxmap knew overrides says none
                   "rules": [{"overridden_by": None, **r, "stands_for": _stands_for(r)}
                             for r in p["rules"]]}
                  for p in snapshot["primitives"]
                  if p["name"] in (leaf, stem) or p["variable"] == leaf
                  or leaf in p.get("aliases", ())]

    def named(d: dict) -> bool:
        if "." not in query:
            return d["name"] == query
        paths = [d["qualname"], *d["public_paths"]]
        return any(p == query or p.endswith("." + query) for p in paths)

    definitions = [d for d in snapshot["definitions"] if named(d)]
    order = lambda entry: (entry["file"], entry["line"])  # noqa: E731
    return sorted(primitives, key=order), sorted(definitions, key=order)


def _text(primitives: list, definitions: list) -> str:
    blocks = []
    for p in primitives:
        lines = [f"{'hijax primitive' if p['style'] == 'hijax' else 'primitive'} {p['name']}",
                 f"  defined    {p['file']}:{p['line']}"]
        for r in p["rules"]:
            stands = f" ({r['stands_for']})" if r["stands_for"] else ""
            kind = r["kind"] + _platform_label(r) + stands
            line = f"  {kind:<22} {r['file']}:{r['line']}  via {r['via']}"
            functions = r.get("functions", [r["function"]] if r["function"] else [])
            bound = f"({r['keywords']})" if r.get("keywords") else ""  # the partial's
            if functions:
                line += "  -> " + ", ".join(f"{f['name']}{bound if i == 0 else ''} "
                                            f"{f['file']}:{f['line']}"
                                            for i, f in enumerate(functions))
            if r.get("condition"):
                line += f"  (only if {r['condition']})"
            if r.get("overridden_by"):
                line += f"  (overridden by {r['file']}:{r['overridden_by']['line']})"
            lines.append(line)
        blocks.append("\n".join(lines))
    if definitions:
        blocks.append("\n".join(
            f"{d['kind']} {d['qualname']}  {d['file']}:{d['line']}"
            + (f"  (public: {', '.join(d['public_paths'])})" if d["public_paths"] else "")
            for d in definitions))
    return "\n\n".join(blocks)


def _stands_for(rule: dict) -> str | None:
    """For a Trace method's rule, the kind its class stands for, by the class its `via`
    names (`JVPTrace.process_call`, `ad.JVPTrace.process_shard_map =`); else None."""
    parts = (rule["via"] or "").removesuffix(" =").split(".")
    if rule["kind"] != "trace" or len(parts) < 2:
        return None
    return TRACE_CLASS_KINDS.get(parts[-2])


def _platform_label(rule: dict) -> str:
    """`[tpu]`, or `[gpu: cuda, rocm]` where the registered platform is an alias."""
    platform, platforms = rule["platform"], rule.get("platforms", [])
    if not platform:
        return ""
    if platforms and platforms != [platform]:
        return f"[{platform}: {', '.join(platforms)}]"
    return f"[{platform}]"


def _snapshots() -> dict[str, str]:
    if not os.path.isdir(INDEXES):
        return {}
    return {m.group(1): os.path.join(INDEXES, name) for name in os.listdir(INDEXES)
            if (m := SNAPSHOT.match(name))}


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _fail(message: str) -> int:
    print(f"jax_repo_locator: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())

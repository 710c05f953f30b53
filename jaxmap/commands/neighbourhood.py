"""`graph NAME`: the neighbourhood of a primitive, function or module over every edge
kind, read from the index a level at a time (no whole graph is built).

Nodes are strings with a kind prefix, as in graph.py: `module:jax._src.lax.parallel`,
`function:jax._src.lax.parallel.psum`, `class:...`, `primitive:psum@FILE:LINE`,
`rule:psum:transpose@FILE:LINE`. Edge kinds: defines (module -> function, class or
primitive), imports (module -> module), has_rule (primitive -> rule), implemented_by
(rule -> function), binds (function -> primitive), calls (function, class body or
module top level -> function or class). A `through` call (one of what a dispatch or a
parameter may hold) is no neighbour: as `binds` and `path` do, the walk leaves it out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from jaxmap.errors import NotFound
from jaxmap.models import THROUGH

if TYPE_CHECKING:
    from jaxmap.store.read import Index

MODULE, DEFINITION, PRIMITIVE, RULE = "module", "definition", "primitive", "rule"


class Neighbourhood(NamedTuple):
    roots: tuple[str, ...]
    nodes: dict[str, dict]  # label -> {kind, file, line}
    edges: tuple[tuple[str, str, str], ...]  # (source, kind, target), sorted


def neighbourhood(index: Index, name: str, depth: int = 1) -> Neighbourhood:
    """Every edge within `depth` steps of what `name` means, either direction."""
    start = _start(index, name)
    seen, frontier, edges = set(start), set(start), set()
    for _ in range(depth):
        found = _edges(index, frontier)
        edges |= found
        frontier = {key for edge in found for key in (edge[0], edge[2])} - seen
        seen |= frontier
    labels = _labels(index, seen)
    return Neighbourhood(tuple(sorted(labels[k][0] for k in start)),
                         {label: info for label, info in labels.values()},
                         tuple(sorted((labels[u][0], kind, labels[v][0])
                                      for u, kind, v in edges)))


def _start(index: Index, name: str) -> set[tuple]:
    """The nodes `name` means: primitives, then definitions (modules included)."""
    from jaxmap.commands.lookup import definition_ids, spellings, suggest

    keys = {(PRIMITIVE, pid) for pid, _n, _v in index.primitive_ids(*spellings(name))}
    keys |= {_node_key(i, node) for i, node in index.nodes(definition_ids(index, name)).items()}
    if not keys:
        raise NotFound(f"no node named {name!r} in the index of {index.root}",
                       suggest(index, name))
    return keys


def _node_key(definition: int, node) -> tuple:
    """The node of a definition: a module's is the module node."""
    return (MODULE, node.qualname) if node.kind == "module" else (DEFINITION, definition)


def _edges(index: Index, frontier: set[tuple]) -> set[tuple]:
    """Every edge touching a node of `frontier`, as (key, kind, key)."""
    modules = [k[1] for k in frontier if k[0] == MODULE]
    defs = [k[1] for k in frontier if k[0] == DEFINITION]
    prims = [k[1] for k in frontier if k[0] == PRIMITIVE]
    rules = [k[1] for k in frontier if k[0] == RULE]
    edges: set[tuple] = set()
    if modules:
        edges |= {((MODULE, m), "defines", (kind, i)) for m, kind, i
                  in index.module_members(modules)}
        edges |= {((MODULE, m), "imports", (MODULE, t)) for m, t
                  in index.imports_touching(modules)}
        tops = index.module_definitions(modules)
        edges |= {((MODULE, tops[a]), "calls", (DEFINITION, b))
                  for a, b, _t, status, _l in index.callees(tops)
                  if b is not None and status != THROUGH}
    if defs:
        edges |= {((MODULE, m), "defines", (DEFINITION, i))
                  for i, m in index.definition_modules(defs).items()}
        calling = index.callers(defs, through=False)
        outside = index.nodes({a for a, _b, _l, function in calling if not function})
        edges |= {(_node_key(a, outside[a]) if a in outside else (DEFINITION, a), "calls",
                   (DEFINITION, b)) for a, b, _l, _f in calling}
        edges |= {((DEFINITION, a), "calls", (DEFINITION, b))
                  for a, b, _t, status, _l in index.callees(defs)
                  if b is not None and status != THROUGH}
        edges |= {((DEFINITION, d), "binds", (PRIMITIVE, p))
                  for d, p, _l, _v in index.bound_by(defs)}
        edges |= {((RULE, p, seq), "implemented_by", (DEFINITION, d))
                  for p, seq, d in index.rules_implemented_by(defs)}
    if prims:
        edges |= {((MODULE, module), "defines", (PRIMITIVE, p))
                  for p, (_n, module, _f, _l) in index.primitive_places(prims).items()}
        edges |= {((DEFINITION, d), "binds", (PRIMITIVE, p))
                  for d, p, _l, _v in index.binders(prims)}
    if prims or rules:
        for p, seq, _kind, _file, _line, function in index.rules_with_functions(prims + rules):
            edges.add(((PRIMITIVE, p), "has_rule", (RULE, p, seq)))
            if function is not None:
                edges.add(((RULE, p, seq), "implemented_by", (DEFINITION, function)))
    return {e for e in edges if e[0] in frontier or e[2] in frontier}


def _labels(index: Index, keys: set[tuple]) -> dict[tuple, tuple[str, dict]]:
    """key -> (label, {kind, file, line})."""
    labels = {}
    nodes = index.nodes(k[1] for k in keys if k[0] == DEFINITION)
    for key in keys:
        if key[0] == DEFINITION and key[1] in nodes:
            n = nodes[key[1]]
            kind = n.kind if n.kind in ("function", "class") else "definition"
            labels[key] = (f"{kind}:{n.qualname}", {"kind": kind, "file": n.file,
                                                     "line": n.line})
    places = index.primitive_places({k[1] for k in keys if k[0] in (PRIMITIVE, RULE)})
    rules = {(p, seq): (kind, file, line) for p, seq, kind, file, line, _f
             in index.rules_with_functions({k[1] for k in keys if k[0] == RULE})}
    for key in keys:
        if key[0] == PRIMITIVE:
            name, _m, file, line = places[key[1]]
            labels[key] = (f"primitive:{name}@{file}:{line}",
                           {"kind": "primitive", "file": file, "line": line})
        elif key[0] == RULE:
            kind, file, line = rules[key[1], key[2]]
            labels[key] = (f"rule:{places[key[1]][0]}:{kind}@{file}:{line}",
                           {"kind": "rule", "file": file, "line": line})
        elif key[0] == MODULE:
            labels[key] = (f"module:{key[1]}", {"kind": "module", "file": None, "line": 1})
    return labels

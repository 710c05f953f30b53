"""The only networkx user: a graph built from the index, for graph questions.

Nodes are strings with a kind prefix: `module:jax._src.lax.parallel`,
`function:jax._src.lax.parallel.psum`, `primitive:psum@jax/_src/lax/parallel.py:1049`,
`rule:psum:transpose@jax/_src/lax/parallel.py:1054`. Edges carry a `kind`:
defines (module -> function/primitive), imports (module -> module), has_rule
(primitive -> rule), implemented_by (rule -> function), binds (function -> primitive).
"""

from __future__ import annotations

import networkx as nx


def build(index) -> nx.MultiDiGraph:
    """The graph of an open index.Index."""
    graph = nx.MultiDiGraph()
    definitions = index.definition_rows()
    for d in definitions:
        if d.kind == "module":
            graph.add_node(f"module:{d.qualname}", kind="module", file=d.file, line=d.line)
        elif d.kind == "function":
            node = f"function:{d.qualname}"
            graph.add_node(node, kind="function", file=d.file, line=d.line)
            graph.add_edge(f"module:{d.module}", node, kind="defines")
    for module, target in index.imports():
        graph.add_edge(f"module:{module}", f"module:{target}", kind="imports")
    prims, names = {}, {}
    for p in index.primitive_rows():
        prims[p.id], names[p.id] = f"primitive:{p.name}@{p.file}:{p.line}", p.name
        graph.add_node(prims[p.id], kind="primitive", file=p.file, line=p.line)
        graph.add_edge(f"module:{p.module}", prims[p.id], kind="defines")
    functions = {(d.file, d.line): f"function:{d.qualname}" for d in definitions
                 if d.kind == "function"}
    for r in index.rule_rows():
        rule = f"rule:{names[r.primitive_id]}:{r.kind}@{r.file}:{r.line}"
        graph.add_node(rule, kind="rule", file=r.file, line=r.line)
        graph.add_edge(prims[r.primitive_id], rule, kind="has_rule")
        target = functions.get((r.function_file, r.function_line))
        if target is not None:
            graph.add_edge(rule, target, kind="implemented_by")
    for b in index.binds():
        graph.add_edge(f"function:{b.module}.{b.function}", prims[b.primitive_id], kind="binds")
    return graph


def central_modules(graph: nx.MultiDiGraph, count: int = 20) -> list[tuple[str, float]]:
    """Modules ranked by PageRank over the import graph."""
    modules = graph.subgraph(n for n, d in graph.nodes(data=True) if d.get("kind") == "module")
    return _top(modules, "module:", count)


def central_functions(graph: nx.MultiDiGraph, count: int = 20) -> list[tuple[str, float]]:
    """Functions ranked by PageRank over the whole graph: those that implement many
    rules, or that rules and bound primitives lead to, come first."""
    return _top(graph, "function:", count)


def _top(graph, prefix: str, count: int) -> list[tuple[str, float]]:
    ranks = nx.pagerank(nx.DiGraph(graph)) if graph.number_of_nodes() else {}
    # Rounded, so that the order does not depend on the last bits of a float.
    ranked = sorted(((node, round(score, 6)) for node, score in ranks.items()
                     if node.startswith(prefix)), key=lambda item: (-item[1], item[0]))
    return [(node[len(prefix):], score) for node, score in ranked[:count]]

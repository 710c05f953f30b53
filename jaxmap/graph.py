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
    """The graph of an open locate.Index."""
    graph = nx.MultiDiGraph()
    conn = index.conn
    for qualname, kind, module, file, line in conn.execute(
            "SELECT qualname, kind, module, file, line FROM definitions"):
        if kind == "module":
            graph.add_node(f"module:{qualname}", kind="module", file=file, line=line)
        elif kind == "function":
            node = f"function:{qualname}"
            graph.add_node(node, kind="function", file=file, line=line)
            graph.add_edge(f"module:{module}", node, kind="defines")
    for module, target in conn.execute("SELECT module, target FROM imports"):
        graph.add_edge(f"module:{module}", f"module:{target}", kind="imports")
    prims, names = {}, {}
    for pid, name, module, file, line in conn.execute(
            "SELECT id, name, module, file, line FROM primitives"):
        prims[pid], names[pid] = f"primitive:{name}@{file}:{line}", name
        graph.add_node(prims[pid], kind="primitive", file=file, line=line)
        graph.add_edge(f"module:{module}", prims[pid], kind="defines")
    functions = _functions_by_location(conn)
    for pid, kind, file, line, f_file, f_line in conn.execute(
            "SELECT primitive_id, kind, file, line, function_file, function_line FROM rules"):
        rule = f"rule:{names[pid]}:{kind}@{file}:{line}"
        graph.add_node(rule, kind="rule", file=file, line=line)
        graph.add_edge(prims[pid], rule, kind="has_rule")
        target = functions.get((f_file, f_line))
        if target is not None:
            graph.add_edge(rule, target, kind="implemented_by")
    for module, function, pid, _line in conn.execute(
            "SELECT module, function, primitive_id, line FROM binds"):
        graph.add_edge(f"function:{module}.{function}", prims[pid], kind="binds")
    return graph


def _functions_by_location(conn) -> dict[tuple[str, int], str]:
    return {(file, line): f"function:{qualname}" for qualname, file, line in conn.execute(
        "SELECT qualname, file, line FROM definitions WHERE kind = 'function'")}


def matching_nodes(graph: nx.MultiDiGraph, name: str) -> list[str]:
    """Nodes whose name (the part after the kind prefix, before any `@`) is `name` or
    ends with `.name`; `psum_p` also finds the primitive `psum`."""
    wanted = {name, name[:-2]} if name.endswith("_p") else {name}
    found = []
    for node in graph.nodes:
        kind, _, label = node.partition(":")
        label = label.split("@", 1)[0]
        if label in wanted and kind == "primitive" or label == name or \
                label.endswith("." + name):
            found.append(node)
    return sorted(found)


def neighbourhood(graph: nx.MultiDiGraph, node: str, depth: int = 1) -> list[tuple[str, str, str]]:
    """Edges (source, kind, target) within `depth` steps of `node`, either direction."""
    near = nx.ego_graph(graph, node, radius=depth, undirected=True)
    return sorted((u, data["kind"], v) for u, v, data in near.edges(data=True))


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

"""The only networkx user: PageRank over the import graph of the index's modules
(`graph --central`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import networkx as nx

if TYPE_CHECKING:
    from jaxmap.store.read import Index


def central_modules(index: Index, count: int = 20) -> list[tuple[str, float]]:
    """Modules ranked by PageRank over the imports between them."""
    modules = [d.qualname for d in index.definition_rows() if d.kind == "module"]
    known = set(modules)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    graph.add_edges_from(edge for edge in index.imports() if set(edge) <= known)
    ranks = nx.pagerank(graph) if modules else {}
    # Rounded, so that the order does not depend on the last bits of a float.
    ranked = sorted(((module, round(score, 6)) for module, score in ranks.items()),
                    key=lambda item: (-item[1], item[0]))
    return ranked[:count]

"""Resolve a few small sources given inline: the resolver's one-line test harness.

    res = resolve_sources({"pkg/a.py": "from jax._src import core\\np = core.Primitive('p')"})
    rules(res, "p") == [("impl", None, "_impl")]

Sources are dedented; module names come from their paths, as in a real tree.
`indexed_tree` writes them to a tree and opens its index, call graph and all.
"""

from __future__ import annotations

import os
import textwrap

from jaxmap.flow.graph import call_graph
from jaxmap.indexing import discover, extract
from jaxmap.indexing.resolve import Resolution, resolve
from jaxmap.session import open_index
from jaxmap.store.records import PrimitiveRecord

# A `jax/_src/core.py` whose primitives bind through a Trace's method: what the trace
# rules' fixtures share (each adds its own Trace classes).
TRACE_CORE = """
class Primitive:
  def __init__(self, name):
    self.name = name
  def bind(self, *args, **params):
    return self.bind_with_trace(None, args, params)
class Trace:
  pass
"""


def resolve_sources(sources: dict[str, str]) -> Resolution:
    files = {}
    for path, text in sources.items():
        module, is_package = discover.module_name(path)
        files[path] = extract.extract(textwrap.dedent(text).encode(), module, is_package)
    return resolve(files, graph=call_graph)


def primitive(resolution: Resolution, name: str) -> PrimitiveRecord:
    """The one primitive named `name`."""
    (found,) = [p for p in resolution.primitives if p.name == name]
    return found


def rules(resolution: Resolution, name: str) -> list[tuple[str, str | None, str | None]]:
    """(kind, platform, rule function name) of each rule of primitive `name`."""
    return [(r.kind, r.platform, r.function and r.function.name)
            for r in primitive(resolution, name).rules]


def written_tree(tmp_path_factory, sources: dict[str, str], name: str = "tree") -> str:
    """A new tree of `sources` (path -> text, dedented): its root."""
    root = tmp_path_factory.mktemp(name)
    for path, text in sources.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    return str(root)


def indexed_tree(tmp_path_factory, sources: dict[str, str]):
    """The open index, with its call graph, of a new tree of `sources` (path -> text,
    dedented), built in a cache of its own."""
    root = written_tree(tmp_path_factory, sources)
    old = os.environ.get("JAXMAP_CACHE_DIR")
    os.environ["JAXMAP_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    try:
        return open_index(root, graph=True)
    finally:
        os.environ.pop("JAXMAP_CACHE_DIR") if old is None else \
            os.environ.__setitem__("JAXMAP_CACHE_DIR", old)

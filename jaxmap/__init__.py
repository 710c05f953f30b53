"""jaxmap: a static index of JAX's internals (primitives, rules, definitions).

Library API (imports stay lazy, so `import jaxmap` is cheap and has no side effects):
  build_index(root=None, rebuild=False) -> IndexReport
  ensure_index(root=None) -> (index path, IndexReport | None)
  open_index(root=None) -> Index, for locate() / primitives() queries
"""

__version__ = "0.1.0"

__all__ = ["build_index", "ensure_index", "open_index", "__version__"]


def __getattr__(name):
    if name in ("build_index", "ensure_index"):
        from jaxmap.indexing import indexer

        return getattr(indexer, name)
    if name == "open_index":
        from jaxmap.session import open_index

        return open_index
    raise AttributeError(f"module 'jaxmap' has no attribute {name!r}")

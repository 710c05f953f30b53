"""What a name may mean: `jaxmap locate psum` accepts `psum`, `psum_p`, `lax.psum`,
`jax.lax.psum` and the name string; answers are primitives and definitions,
optionally of one kind, with near-miss suggestions when there are none.

The rows come from index.py, the one module that queries the index.
"""

from __future__ import annotations

from typing import NamedTuple

from jaxmap.errors import JaxmapError, NotFound
from jaxmap.index import open_index  # noqa: F401 - scaffold opens the index through here
from jaxmap.models import Definition, DefKind, Primitive, RuleKind

RULE_KINDS = tuple(k.value for k in RuleKind)
RESULT_KINDS = ("primitive",) + tuple(k.value for k in DefKind)


class Found(NamedTuple):
    """What `locate` found for one query."""

    query: str
    primitives: tuple[Primitive, ...]
    definitions: tuple[Definition, ...]


def locate(index, name: str, kind: str | None = None) -> Found:
    """Primitives and definitions that `name` may mean in an open index.Index,
    optionally only one `kind` (a rule kind: primitives with such rules, only those
    shown; or a result kind); NotFound with suggestions when there are none."""
    query = name.strip()
    if not query:
        raise NotFound("give a name to locate, e.g. `jaxmap locate psum`")
    if kind is not None and kind not in RULE_KINDS + RESULT_KINDS:
        raise JaxmapError(f"unknown kind {kind!r}; one of {', '.join(RULE_KINDS + RESULT_KINDS)}")
    rule_kind = kind if kind in RULE_KINDS else None
    want = {"primitive"} if rule_kind else {kind} if kind else set(RESULT_KINDS)
    prims = index.primitives_named(*_spellings(query)) if "primitive" in want else []
    if rule_kind:
        prims = [p for p in (_only_kind(p, rule_kind) for p in prims) if p.rules]
    defs = [d for d in index.definitions_named(query) if d.kind.value in want]
    if not prims and not defs:
        raise NotFound(f"nothing named {query!r} in the index of {index.root}",
                       suggest(index, query))
    return Found(query, tuple(prims), tuple(defs))


def suggest(index, query: str, limit: int = 5) -> tuple[str, ...]:
    """Names close to `query`, for 'did you mean'."""
    import difflib

    leaf = query.rpartition(".")[2]
    return tuple(difflib.get_close_matches(leaf, sorted(index.names()), n=limit, cutoff=0.75))


def _spellings(query: str) -> tuple[str, str]:
    """The last dotted part, and that part without a `_p` suffix."""
    leaf = query.rpartition(".")[2]
    return leaf, leaf[:-2] if leaf.endswith("_p") else leaf


def _only_kind(prim: Primitive, kind: str) -> Primitive:
    return prim._replace(rules=tuple(r for r in prim.rules if r.kind.value == kind))

"""What a name may mean: `jaxmap locate psum` accepts `psum`, `psum_p`, `lax.psum`,
`jax.lax.psum` and the name string; answers are primitives and definitions,
optionally of one kind, with near-miss suggestions when there are none.

The rows come from index.py, the one module that queries the index.
"""

from __future__ import annotations

from typing import NamedTuple

from jaxmap.errors import JaxmapError, NotFound
from jaxmap.models import Definition, DefKind, Primitive, RuleKind

RULE_KINDS = tuple(k.value for k in RuleKind)
RESULT_KINDS = ("primitive",) + tuple(k.value for k in DefKind)
_REACH_FOR = 5  # most functions of one name whose reached primitives `locate` lists


class Found(NamedTuple):
    """What `locate` found for one query."""

    query: str
    primitives: tuple[Primitive, ...]
    definitions: tuple[Definition, ...]
    reaches: tuple  # per definition: the callgraph.Reached primitives a function reaches


def locate(index, name: str, kind: str | None = None, platform: str | None = None) -> Found:
    """Primitives and definitions that `name` may mean in an open index.Index,
    optionally only one `kind` (a rule kind: primitives with such rules, only those
    shown; or a result kind) and only the lowerings that serve `platform`; NotFound
    with suggestions when there are none, or with the kinds a primitive does have."""
    query = name.strip()
    if not query:
        raise NotFound("give a name to locate, e.g. `jaxmap locate psum`")
    if kind is not None and kind not in RULE_KINDS + RESULT_KINDS:
        raise JaxmapError(f"unknown kind {kind!r}; one of {', '.join(RULE_KINDS + RESULT_KINDS)}")
    if platform:
        check_platform(platform)
    rule_kind = kind if kind in RULE_KINDS else None
    want = {"primitive"} if rule_kind else {kind} if kind else set(RESULT_KINDS)
    named = index.primitives_named(*spellings(query)) if "primitive" in want else []
    prims = [for_platform(p, platform) for p in named] if platform else named
    if rule_kind:
        prims = [p for p in (_only_kind(p, rule_kind) for p in prims) if p.rules]
        if named and not prims:
            raise NotFound(_lacks(named, rule_kind, platform))
    defs = definitions(index, query, want)
    if not prims and not defs and kind in RESULT_KINDS:
        kinds = {"primitive"} if index.primitive_ids(*spellings(query)) else set()
        kinds |= {d.kind.value for d in definitions(index, query)}
        if kinds:
            raise NotFound(f"{query!r} is no {kind}: it names a "
                           f"{' and a '.join(sorted(kinds))}")
    if not prims and not defs:
        raise NotFound(f"nothing named {query!r} in the index of {index.root}",
                       suggest(index, query))
    return Found(query, tuple(prims), tuple(defs), _reaches(index, defs))


def _reaches(index, defs: list[Definition]) -> tuple:
    """For each definition, the primitives a function reaches (none for the rest, and
    none where more than a few functions share the name)."""
    from jaxmap import callgraph

    functions = [d for d in defs if d.kind == DefKind.FUNCTION]
    if len(functions) > _REACH_FOR:
        return tuple(() for _ in defs)
    return tuple(callgraph.reaches(index, index.definition_id(d))
                 if d.kind == DefKind.FUNCTION else () for d in defs)


def check_platform(platform: str) -> None:
    """A JaxmapError unless `platform` is one JAX lowers for (or a Pallas backend)."""
    from jaxmap.registrars import PALLAS_LOWERING_TABLES, XLA_PLATFORMS

    known = XLA_PLATFORMS | set(PALLAS_LOWERING_TABLES.values())
    if platform.lower() not in known:
        raise JaxmapError(f"unknown platform {platform!r}; one of {', '.join(sorted(known))}")


def definitions(index, query: str, want=RESULT_KINDS) -> list[Definition]:
    """Definitions of the kinds in `want` named `query`, reading a conventional alias
    (`jnp.einsum`) as the module it stands for, then as written."""
    for spelling in alias_spellings(query):
        defs = [d for d in index.definitions_named(spelling) if d.kind.value in want]
        if defs:
            return defs
    return []


def definition_ids(index, name: str) -> list[int]:
    """Ids of the definitions `name` means: those of its first spelling (a conventional
    alias read as its module, then as written) that names any."""
    for spelling in alias_spellings(name.strip()):
        ids = index.definition_ids(spelling)
        if ids:
            return ids
    return []


def alias_spellings(query: str) -> list[str]:
    """`query` with a conventional alias read as each module it stands for
    (`jnp.einsum` -> `jax.numpy.einsum`), then as written."""
    head, dot, rest = query.partition(".")
    if not dot:
        return [query]
    from jaxmap.registrars import USER_ALIASES  # only dotted names need the table

    return [f"{module}.{rest}" for module in USER_ALIASES.get(head, ())] + [query]


def _lacks(prims: list[Primitive], kind: str, platform: str | None) -> str:
    """`primitive while has no dce rule; it has: impl, jvp, ...`."""
    where = f" for {platform}" if platform else ""
    return "; ".join(
        f"primitive {p.name} has no {kind} rule{where}; it has: "
        f"{', '.join(sorted({r.kind.value for r in p.rules})) or 'no rules at all'}"
        for p in prims)


def for_platform(prim: Primitive, platform: str) -> Primitive:
    """`prim` with only the lowerings that serve `platform`: those registered for it,
    else its default lowering. Rules of other kinds stay."""
    lowerings = [r for r in prim.rules if r.kind == RuleKind.LOWERING]
    wanted = platform.lower()
    specific = [r for r in lowerings if r.platform and wanted in
                {p.lower() for p in (r.platform, *r.platforms)}]
    keep = specific or [r for r in lowerings if r.platform is None]
    return prim._replace(rules=tuple(r for r in prim.rules
                                     if r.kind != RuleKind.LOWERING or r in keep))


def check_rule_kinds(**kinds_by_option: tuple[str, ...]) -> None:
    """JaxmapError naming the option and value if any given kind is not a rule kind
    (`check_rule_kinds(missing=("jvp",), has=())`)."""
    for option, kinds in kinds_by_option.items():
        for kind in kinds:
            if kind not in RULE_KINDS:
                raise JaxmapError(f"--{option}: {kind!r} is not one of: {', '.join(RULE_KINDS)}")


def select(prims: list[Primitive], missing: tuple[str, ...] = (), has: tuple[str, ...] = (),
           platform: str | None = None) -> list[Primitive]:
    """The primitives lacking every kind in `missing` and having every kind in `has`
    (lowerings counted for `platform` only, when given); a JaxmapError when the two
    ask for the same kind, which no primitive can satisfy."""
    both = sorted(set(missing) & set(has))
    if both:
        raise JaxmapError(f"--missing and --has both name {', '.join(both)}: no primitive "
                          f"can lack and have a rule")
    if platform:
        check_platform(platform)
    chosen = []
    for prim in prims:
        if platform:
            prim = for_platform(prim, platform)
        kinds = {r.kind.value for r in prim.rules}
        if not kinds & set(missing) and set(has) <= kinds:
            chosen.append(prim)
    return chosen


def suggest(index, query: str, limit: int = 5) -> tuple[str, ...]:
    """Names close to `query`, for 'did you mean'."""
    import difflib

    leaf = query.rpartition(".")[2]
    return tuple(difflib.get_close_matches(leaf, sorted(index.names()), n=limit, cutoff=0.75))


def spellings(query: str) -> tuple[str, str]:
    """The last dotted part, and that part without a `_p` suffix."""
    leaf = query.rpartition(".")[2]
    return leaf, leaf[:-2] if leaf.endswith("_p") else leaf


def _only_kind(prim: Primitive, kind: str) -> Primitive:
    return prim._replace(rules=tuple(r for r in prim.rules if r.kind.value == kind))

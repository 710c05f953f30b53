"""Name lookup shared by every command: what a name may mean (`psum`, `psum_p`,
`lax.psum`, `jax.lax.psum`, `jnp.einsum`, the name string), near-miss suggestions, and
the rule-kind and platform filters that commands take.

The rows come from store/read.py, the one module that queries the index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jaxmap.errors import ArgumentError, JaxmapError, NotFound
from jaxmap.knowledge.traces import rule_kinds
from jaxmap.models import Definition, DefKind, Primitive, RuleKind

if TYPE_CHECKING:
    from jaxmap.store.read import Index

RULE_KINDS = tuple(k.value for k in RuleKind)
# How the kinds a helper receives are listed where kinds are (`shape_rule`, ...).
RECEIVED_KINDS_NOTE = "or a helper's parameter ending in _rule (shape_rule, dtype_rule, ...)"


def is_rule_kind(kind: str) -> bool:
    """One of RULE_KINDS, or a rule a helper receives (`shape_rule`: see RuleKind)."""
    try:
        RuleKind(kind)
    except ValueError:
        return False
    return True
RESULT_KINDS = ("primitive",) + tuple(k.value for k in DefKind)


def check_platform(platform: str) -> None:
    """A JaxmapError unless `platform` is one JAX lowers for (or a Pallas backend)."""
    from jaxmap.knowledge.registrars import PALLAS_LOWERING_TABLES, XLA_PLATFORMS

    known = XLA_PLATFORMS | set(PALLAS_LOWERING_TABLES.values())
    if platform.lower() not in known:
        raise JaxmapError(f"unknown platform {platform!r}; one of {', '.join(sorted(known))}")


def definitions(index: Index, query: str, want=RESULT_KINDS, hops: int = 0) -> list[Definition]:
    """Definitions of the kinds in `want` named `query`, reading a conventional alias
    (`jnp.einsum`) as the module it stands for, then as written; else what a module of
    the tree imports under that name (`mylib.twice` of `from mylib.ops import twice`
    in `mylib/__init__.py`)."""
    for spelling in alias_spellings(query):
        defs = [d for d in index.definitions_named(spelling) if d.kind.value in want]
        if defs:
            return defs
    target = _imported_by_spelling(index, query) if hops < _IMPORT_HOPS else None
    return definitions(index, target, want, hops + 1) if target else []


def definition_ids(index: Index, name: str, hops: int = 0) -> list[int]:
    """Ids of the definitions `name` means: those of its first spelling (a conventional
    alias read as its module, then as written) that names any; else those of what a
    module imports under that name."""
    for spelling in alias_spellings(name.strip()):
        ids = index.definition_ids(spelling)
        if ids:
            return ids
    target = _imported_by_spelling(index, name.strip()) if hops < _IMPORT_HOPS else None
    return definition_ids(index, target, hops + 1) if target else []


_IMPORT_HOPS = 4  # re-exports followed from package to package


def _imported_by_spelling(index: Index, dotted: str) -> str | None:
    """What `_imported_as` finds for the first of `dotted`'s spellings that has an
    import of that name (`lax.psum`: what jax.lax imports as psum)."""
    return next(filter(None, (_imported_as(index, spelling)
                              for spelling in alias_spellings(dotted))), None)


def _imported_as(index: Index, dotted: str) -> str | None:
    """What the module `dotted`'s prefix names imports at its top level as its last
    part, if the tree has that module."""
    module, _, name = dotted.rpartition(".")
    files = [d.loc.file for d in index.definitions_named(module)
             if d.kind.value == "module" and d.qualname == module] if module else []
    facts = index.stored_facts(files[:1]).get(files[0]) if files else None
    for scope, alias, target, *_rest in (facts or {}).get("imports", ()):
        if not scope and alias == name and target != dotted:
            return target
    return None


def check_name(query: str) -> None:
    """ArgumentError unless `query` can name something: dotted parts that are words
    (`jax.`, `.` and `jnp.sum.` cannot)."""
    if not all(part.strip() for part in query.split(".")):
        raise ArgumentError(f"{query!r} is not a name: every part between dots must be "
                            f"a word (e.g. jax.lax.psum)")


def alias_spellings(query: str) -> list[str]:
    """`query` with a conventional alias read as each module it stands for
    (`jnp.einsum` -> `jax.numpy.einsum`), then as written."""
    check_name(query)
    head, dot, rest = query.partition(".")
    if not dot:
        return [query]
    from jaxmap.knowledge.registrars import (
        USER_ALIASES,  # only dotted names need the table
    )

    return [f"{module}.{rest}" for module in USER_ALIASES.get(head, ())] + [query]


def for_platform(prim: Primitive, platform: str) -> Primitive:
    """`prim` with only the lowerings that serve `platform`: those registered for it
    (for `gpu`, JAX's name for both GPU backends: cuda's and rocm's too), else its
    default lowering. Rules of other kinds stay."""
    from jaxmap.knowledge.registrars import GPU_PLATFORMS

    lowerings = [r for r in prim.rules if r.kind == RuleKind.LOWERING]
    wanted = GPU_PLATFORMS if platform.lower() == "gpu" else {platform.lower()}
    specific = [r for r in lowerings if r.platform and
                wanted & {p.lower() for p in (r.platform, *r.platforms)}]
    keep = specific or [r for r in lowerings if r.platform is None]
    return prim._replace(rules=tuple(r for r in prim.rules
                                     if r.kind != RuleKind.LOWERING or r in keep))


def check_rule_kinds(**kinds_by_option: tuple[str, ...]) -> None:
    """JaxmapError naming the option and value if any given kind is not a rule kind
    (`check_rule_kinds(missing=("jvp",), has=())`)."""
    for option, kinds in kinds_by_option.items():
        for kind in kinds:
            if not is_rule_kind(kind):
                raise JaxmapError(f"--{option}: {kind!r} is not one of: {', '.join(RULE_KINDS)}, "
                                  f"{RECEIVED_KINDS_NOTE}")


def select(prims: list[Primitive], missing: tuple[str, ...] = (), has: tuple[str, ...] = (),
           platform: str | None = None) -> list[Primitive]:
    """The primitives lacking every kind in `missing` and having every kind in `has`
    (lowerings counted for `platform` only, when given; a Trace method handling the
    primitive counts as the kind its class stands for: TRACE_CLASS_KINDS); a
    JaxmapError when the two ask for the same kind, which no primitive can satisfy."""
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
        kinds = {kind for r in prim.rules for kind in rule_kinds(r)}
        if not kinds & set(missing) and set(has) <= kinds:
            chosen.append(prim)
    return chosen


def primitives(index: Index, missing: tuple[str, ...] = (), has: tuple[str, ...] = (),
               platform: str | None = None) -> list[Primitive]:
    """`jaxmap primitives`: the index's primitives that pass `select`'s filters."""
    check_rule_kinds(missing=missing, has=has)
    return select(index.primitives(), tuple(missing), tuple(has), platform)


def suggest(index: Index, query: str, limit: int = 5, primitives: bool = False
            ) -> tuple[str, ...]:
    """Names close to `query`, for 'did you mean' (`primitives`: only theirs); for a
    dotted `query`, the definitions of its last part come first (public ones first),
    each by its first public path, else its qualified name (`jax.lax.approx_max_k` ->
    `jax._src.lax.ann2.approx_max_k` once ann.py is moved there)."""
    head, _dot, leaf = query.rpartition(".")
    names = index.primitive_names() if primitives else index.names()
    found = close_names(leaf, names, limit)
    if head and not primitives:
        defs = sorted(index.definitions_named(leaf), key=lambda d: not d.public_paths)
        defined = [(d.public_paths or (d.qualname,))[0] for d in defs]
        found = tuple(dict.fromkeys(defined + list(found)))
    return found[:limit]


_CLOSE, _CLOSE_ANY_START = 0.75, 0.85  # ratios of `close_names`


def close_names(query: str, names, limit: int = 5) -> tuple[str, ...]:
    """Up to `limit` of `names` close to `query`, compared without a `_p` suffix: alike
    (the name itself in another case first: `Psum` -> `psum`; then difflib's ratio at
    least _CLOSE with the same first letter, else _CLOSE_ANY_START: `psun` -> `psum`,
    not `nosuch_p` -> `touch_p`), then those starting with it, then
    those where it starts or ends a `_`-separated part (three letters or more: `sum`
    -> `psum`, `reduce_sum`, not `consume`); of `x` and `x_p`, the one written as
    `query` is."""
    import difflib

    stem = query.lower().removesuffix("_p")
    by_stem: dict[str, str] = {}
    for name in sorted(names):
        key = name.lower().removesuffix("_p")
        if key not in by_stem or name.endswith("_p") == query.lower().endswith("_p"):
            by_stem[key] = name
    matcher = difflib.SequenceMatcher(b=stem)
    alike = []
    for key in by_stem:
        matcher.set_seq1(key)
        ratio = matcher.ratio() if matcher.quick_ratio() >= _CLOSE else 0.0
        if key != stem and ratio >= (_CLOSE if key[:1] == stem[:1] else _CLOSE_ANY_START):
            alike.append((-ratio, key))
    keys = [stem] if by_stem.get(stem, query) != query else []
    keys += [key for _r, key in sorted(alike)]
    if len(stem) >= 3:
        keys += sorted(k for k in by_stem if k.startswith(stem) and k != stem)
        keys += sorted(k for k in by_stem if k != stem and any(
            part.startswith(stem) or part.endswith(stem) for part in k.split("_")))
    return tuple(dict.fromkeys(by_stem[k] for k in keys))[:limit]


def no_primitive(index: Index, name: str) -> NotFound:
    """The error for a primitive name the index holds no primitive of, with the
    primitives named most like it."""
    return NotFound(f"no primitive named {name!r} in the index of {index.root}",
                    suggest(index, name, primitives=True))


def spellings(query: str) -> tuple[str, str]:
    """The last dotted part, and that part without a `_p` suffix."""
    check_name(query)
    leaf = query.rpartition(".")[2]
    return leaf, leaf[:-2] if leaf.endswith("_p") else leaf

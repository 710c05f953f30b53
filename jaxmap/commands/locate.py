"""`jaxmap locate NAME`: the primitives and definitions a name may mean (lookup.py),
optionally of one kind, with near-miss suggestions when there are none; for a
function, the primitives it reaches."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from jaxmap.commands.lookup import (
    RECEIVED_KINDS_NOTE,
    RESULT_KINDS,
    RULE_KINDS,
    alias_spellings,
    check_platform,
    definitions,
    for_platform,
    is_rule_kind,
    spellings,
    suggest,
)
from jaxmap.commands.test_links import ranked_tests
from jaxmap.errors import ArgumentError, JaxmapError, NotFound
from jaxmap.knowledge.traces import rule_kinds
from jaxmap.models import Definition, DefKind, Primitive

if TYPE_CHECKING:
    from jaxmap.store.read import Index

_REACH_FOR = 5  # most functions of one name whose reached primitives `locate` lists


class Found(NamedTuple):
    """What `locate` found for one query."""

    query: str
    primitives: tuple[Primitive, ...]
    definitions: tuple[Definition, ...]
    reaches: tuple  # per definition: the callgraph.Reached primitives a function reaches
    tests: tuple = ()  # per primitive: its test_links.TestLink tests, most direct first
    graph: bool = True  # whether the index held the call graph that reaches and tests need
    stale: bool = False  # whether it held one that is not current since an edit
    unparsed: tuple[str, ...] = ()  # diagnostics of the files shown that do not parse
    # public_names.ConfigOption: an option defined by a call no variable holds
    options: tuple = ()


def _config_option(index: Index, query: str, want: set[str]) -> list[Definition]:
    """The variable holding a config option's state, for the option's name
    (`jax_enable_x64`, or `JAX_ENABLE_X64` as the environment spells it), which
    jax.config.update takes: one of the config module's, or one of another module
    named as the option without `jax_` whose statement names it (xla_bridge's
    `num_cpu_devices`, `MOCK_GPU_TOPOLOGY`)."""
    from jaxmap.commands.public_names import CONFIG_MODULE, config_options, names_option

    option = _option_name(query)
    if not option:
        return []
    variables = [f"{CONFIG_MODULE}.{o.variable}" for o in config_options(index)
                 if o.name == option]
    found = [d for variable in variables for d in definitions(index, variable, want)]
    return found or [d for name in dict.fromkeys((option[4:], option[4:].upper()))
                     for d in definitions(index, name, want & {"variable"})
                     if names_option(index, d, option)]


def _unheld_option(index: Index, query: str) -> tuple:
    """The config option `query` names (as `_config_option` reads it) where the config
    module defines it by a call whose result no variable holds (`jax_logging_level`)."""
    from jaxmap.commands.public_names import unheld_options

    option = _option_name(query)
    return tuple(o for o in unheld_options(index) if o.name == option) if option else ()


def _option_name(query: str) -> str | None:
    """The config option `query` spells (`jax_enable_x64`, or `JAX_ENABLE_X64` as the
    environment does), if it spells one."""
    option = query.lower()
    return option if option.startswith("jax_") and query in (option, option.upper()) \
        else None


_NAMESPACES = {DefKind.MODULE.value, DefKind.CLASS.value}  # what a prefix may name


def _prefix_known(index: Index, query: str) -> bool:
    """Whether a dotted query's prefix names a module, class or alias of the tree
    (`jax.lax` of `jax.lax.psum_p`; not `totally.bogus` of `totally.bogus.cumsum`, nor
    `np` of `np.cumsum`, a module outside the tree that at most a variable holds)."""
    from jaxmap.knowledge.registrars import USER_ALIASES

    prefix = query.rpartition(".")[0]
    return not prefix or prefix.partition(".")[0] in USER_ALIASES \
        or bool(definitions(index, prefix, _NAMESPACES))


def _prefix_holds(index: Index, query: str, prims: list[Primitive]) -> bool:
    """Whether a dotted query's prefix names where one of `prims` lives: its module
    (`jax._src.lax.parallel.psum`), or a namespace with a definition of the query's
    last part, the primitive's variable or a function named as it (`lax.psum`,
    `lax.scatter-add` by jax.lax.scatter_add_p): only then is the primitive its last
    part names the one meant, not for `jnp.psum` nor `jax.random.psum`."""
    prefix, _, leaf = query.rpartition(".")
    if not prefix or {p.module for p in prims} & set(alias_spellings(prefix)):
        return True
    # a variable's spelling (`lax.add_p`) is held only as itself; a primitive's name
    # (`lax.psum`) also as its variable or a function named as it
    names = {leaf} if any(leaf == p.variable for p in prims) else \
        {leaf, *(n for p in prims for n in (p.name, p.variable,
                                            p.variable.removesuffix("_p")))}
    return any(definitions(index, f"{prefix}.{name}")
               for name in sorted(names) if name.isidentifier())


def locate(index: Index, name: str, kind: str | None = None, platform: str | None = None) -> Found:
    """Primitives and definitions that `name` may mean in an open index.Index,
    optionally only one `kind` (a rule kind: primitives with such rules, only those
    shown; or a result kind) and only the lowerings that serve `platform`; NotFound
    with suggestions when there are none, or with the kinds a primitive does have."""
    query = name.strip()
    if not query:
        raise ArgumentError("give a name to locate, e.g. `jaxmap locate psum`")
    if kind is not None and kind not in RESULT_KINDS and not is_rule_kind(kind):
        raise JaxmapError(f"unknown kind {kind!r}; one of {', '.join(RULE_KINDS + RESULT_KINDS)}, "
                          f"{RECEIVED_KINDS_NOTE}")
    if platform:
        check_platform(platform)
    rule_kind = kind if kind is not None and kind not in RESULT_KINDS else None
    want = {"primitive"} if rule_kind else {kind} if kind else set(RESULT_KINDS)
    named = index.primitives_named(*spellings(query)) if "primitive" in want else []
    prims = [for_platform(p, platform) for p in named] if platform else named
    if rule_kind:
        prims = [p for p in (_only_kind(p, rule_kind) for p in prims) if p.rules]
        if named and not prims:
            raise NotFound(_lacks(named, rule_kind, platform))
    defs = definitions(index, query, want) or _config_option(index, query, want)
    options = _unheld_option(index, query) if not defs and kind is None else ()
    if rule_kind and not named:
        kinds = {d.kind.value for d in definitions(index, query)}
        if kinds:  # `--kind jvp` of a function: rules are a primitive's
            raise NotFound(f"{query!r} names no primitive, so no {rule_kind} rule: it "
                           f"names a {' and a '.join(sorted(kinds))}; `jaxmap locate "
                           f"{query}` lists the primitives it reaches")
    if not prims and not defs and kind in RESULT_KINDS:
        kinds = {"primitive"} if index.primitive_ids(*spellings(query)) else set()
        kinds |= {d.kind.value for d in definitions(index, query)}
        if kinds:
            raise NotFound(f"{query!r} is no {kind}: it names a "
                           f"{' and a '.join(sorted(kinds))}")
    if prims and not defs and not _prefix_holds(index, query, prims):
        raise _no_such_member(index, query, prims)
    if not prims and not defs and not options:
        raise NotFound(f"nothing named {query!r} in the index of {index.root}",
                       suggest(index, query))
    files = [p.loc.file for p in prims] + [d.loc.file for d in defs] + \
        [o.file for o in options]
    return Found(query, tuple(prims), tuple(defs), _reaches(index, defs),
                 tuple(ranked_tests(index, p) for p in prims), index.graph_built,
                 index.graph_stale, tuple(index.unparsed(files)), options)


_CALLERS = (DefKind.FUNCTION, DefKind.VARIABLE)  # what may reach a primitive


def _reaches(index: Index, defs: list[Definition]) -> tuple:
    """For each definition, the primitives a function reaches, or a variable naming one
    (`swish = silu`: an alias calls what it names); none for the rest, and none where
    more than a few share the name."""
    from jaxmap.commands import callgraph

    callers = [d for d in defs if d.kind in _CALLERS]
    if len(callers) > _REACH_FOR:
        return tuple(() for _ in defs)
    return tuple(callgraph.reaches(index, index.definition_id(d))
                 if d.kind in _CALLERS else () for d in defs)


def _lacks(prims: list[Primitive], kind: str, platform: str | None) -> str:
    """`primitive while has no dce rule; it has: impl, jvp, ...`."""
    where = f" for {platform}" if platform else ""
    return "; ".join(
        f"primitive {p.name} has no {kind} rule{where}; it has: "
        f"{', '.join(sorted({k for r in p.rules for k in rule_kinds(r)})) or 'no rules at all'}"
        for p in prims)


def _only_kind(prim: Primitive, kind: str) -> Primitive:
    return prim._replace(rules=tuple(r for r in prim.rules if kind in rule_kinds(r)))


def _no_such_member(index: Index, query: str, prims: list[Primitive]) -> NotFound:
    """NotFound for a dotted query whose prefix names no place its primitive lives:
    why (the prefix names nothing, or a namespace without that name), where the
    primitive is, and the names close to the query."""
    prefix, _, leaf = query.rpartition(".")
    why = f"{prefix} holds no {leaf}" if _prefix_known(index, query) else \
        f"no module, class or alias is named {prefix!r}"
    where = ", ".join(sorted({f"{p.variable or p.name} of {p.module}" for p in prims}))
    return NotFound(f"nothing named {query!r} in the index of {index.root}: {why} (the "
                    f"primitive {where}: `jaxmap locate {leaf}`)", suggest(index, query))

"""When one registration of a rule overrides another. JAX's rule tables are dicts keyed
by the primitive (a lowering's by platform too), and `def_impl` or `def_abstract_eval`
set one attribute of it, so of two registrations of one rule the one that runs last
takes effect. Two registrations write the same entry where they register the same
way: the same registrar (the last step of how each registers), into a table keyed
by the primitive alone, not Pallas's tables of one entry per kernel type
(`mosaic_lowering_rules[...][...] =`), nor `primitive_batchers` beside
`fancy_primitive_batchers`, which JAX reads first whatever ran last; `ad.defjvp` and
`ad.defbilinear` register differently but both write a jvp's entry (_KIND_TABLE)."""

from __future__ import annotations

# Registrars that write their kind's one table of the interpreters (`ad.primitive_jvps`
# for a jvp, `ad.primitive_transposes` for a transpose, `batching.primitive_batchers`
# for a batching rule), by their last name: two of them for one kind write one entry.
_KIND_TABLE = frozenset({
    "defjvp", "defjvp2", "defjvp_zero", "deflinear", "deflinear2", "defbilinear",
    "primitive_jvps[...] =", "primitive_transposes[...] =",
    "defvectorized", "defbroadcasting", "defreducer", "primitive_batchers[...] ="})


def table(via: str | None) -> str:
    """What a registration writes, as far as telling two apart goes: its kind's table
    of the interpreters for a registrar in _KIND_TABLE (`ad.defjvp` and `ad.defbilinear`
    both write a jvp's), else its `registrar`."""
    way = registrar(via)
    name = way.replace("[...]", "[]").rpartition(".")[2].replace("[]", "[...]")
    return "the kind's table" if name in _KIND_TABLE else way


def registrar(via: str | None) -> str:
    """The last step of how a rule registers (`batching.defbroadcasting` of `naryop >
    batching.defbroadcasting`); a primitive's method by its name alone (`def_impl` of
    `neg_p.def_impl` and of `standard_primitive > prim.def_impl`)."""
    last = (via or "").rpartition(" > ")[2]
    method = last.rpartition(".")[2]
    return method if method.startswith("def_") else last


def keyed_by_primitive(way: str) -> bool:
    """Whether registering this way (a `registrar`) writes an entry of the primitive
    alone: not `table[...][...] =` nor `table[...].update`, one entry per kernel type."""
    return "][" not in way and "]." not in way

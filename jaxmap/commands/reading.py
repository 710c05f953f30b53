"""What a primitive query (`binds PRIM`) was read as: the primitives it names, and
whether it names them exactly, so that a reading the user may not have meant (`psum`,
also the function `jax.lax.psum`; `jnp.cumsum`, read by its last part) is said."""

from __future__ import annotations

from typing import NamedTuple


class PrimitiveRef(NamedTuple):
    name: str
    variable: str
    module: str
    file: str
    line: int


class Reading(NamedTuple):
    """`primitives`, what `query` named; `functions`, the functions it names too;
    `exact`, whether it is one primitive's own name or variable (undotted, or under
    its module) and no function's."""

    query: str
    primitives: tuple[PrimitiveRef, ...]
    functions: tuple[str, ...]
    exact: bool


def read_primitive(index, query: str) -> Reading:
    """How `binds` reads `query` (lookup.spellings: its last part, `_p` or not)."""
    from jaxmap.commands.lookup import definition_ids, spellings

    refs = tuple(PrimitiveRef(*row) for row in index.primitive_refs(*spellings(query)))
    nodes = index.nodes(definition_ids(index, query)).values()
    functions = tuple(sorted({(not node.public, node.label) for node in nodes
                              if node.kind == "function"}))
    written = query.strip()
    exact = len(refs) == 1 and not functions and written in (
        refs[0].name, refs[0].variable, f"{refs[0].module}.{refs[0].variable}")
    return Reading(query, refs, tuple(label for _private, label in functions), exact)

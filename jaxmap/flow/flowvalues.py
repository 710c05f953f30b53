"""The flow's values (flow.py), and the resolver's names (imports, module-level values)
read as them.

Values are small tuples: `(FN, owner, name)` a function (`owner` the qualified name of
the definition that holds its text: a nested function or lambda is its enclosing
definition's; `name` the function's own), `(BOUND, owner, name)` the same bound to an
instance, `(KLASS, qualname)` a class of the tree, `(INSTANCE, qualname)` an instance of one,
`(MOD, module)` a module, `(BOX, place)` a list, tuple, set or dict written at
`place`, `(PARTIAL_OF, value, n)` a `functools.partial` of a callable value with `n`
positional arguments bound, `(TREEDEF, instance)` the pytree structure of an instance,
`(OUTSIDE, value)` an object a call of code outside the tree made, handed the callable
`value` (`functools.wraps(f)(g)`, a native `jit` handed its callback): calling it may
call what it was handed.
Everything else (constants, what lies outside the tree) is no value: a call through it
stays unresolved.
"""

from __future__ import annotations

from functools import lru_cache

from jaxmap.indexing.facts import APPLIED, CLASS, FUNC, MODULE, PARTIAL, SYM
from jaxmap.indexing.resolve.names import Names

# The flow's values (see the docstring above).
FN, BOUND, KLASS, INSTANCE, MOD, BOX, SUPER = "fn", "bound", "klass", "instance", "mod", "box", \
    "super"
# A closure a call made, with the functions that call handed its maker's parameters:
# (APPLIED_CLOSURE, owner, name, ((parameter, functions), ...)).
APPLIED_CLOSURE = "applied closure"
PARTIAL_OF = "partial of"
OUTSIDE = "made outside"
TREEDEF = "treedef"


def from_names(names: Names, value: tuple, depth: int = 0) -> set:
    """A value of the resolver's names (imports, module-level values) as a flow value."""
    tag = value[0]
    if tag == FUNC:
        return {(FN, f"{value[1]}.{value[2]}", value[2].rpartition(".")[2])}
    if tag == CLASS:
        return {(KLASS, f"{value[1]}.{value[2]}")}
    if tag == MODULE:
        return {(MOD, value[1])}
    if tag == PARTIAL and depth < 4:
        return from_names(names, value[1], depth + 1)
    if tag == APPLIED and depth < 4 and value[1][0] == CLASS:
        return {(INSTANCE, f"{value[1][1]}.{value[1][2]}")}
    if tag == SYM and names.in_tree(value[1]):
        module = names.module_of(value[1]) or ""
        qualname = value[1][len(module) + 1:]
        facts = names.facts(module)
        if qualname in facts.funcs:
            return {(FN, value[1], qualname.rpartition(".")[2])}
        if qualname in facts.classes:
            return {(KLASS, value[1])}
    return set()


def ordered(values) -> list:
    """`values` in an order that does not depend on the hash seed: what is asked for
    first while a cycle is cut decides what the memo keeps, so the answers would."""
    return sorted(values, key=ordered_key) if len(values) > 1 else list(values)


# Bounded: at 65536 its texts held 5 MB of the call graph's peak on jax, for no time.
@lru_cache(maxsize=4096)
def ordered_key(value) -> str:
    """A value's text with its sets in sorted order, at any depth."""
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(map(ordered_key, value))) + "}"
    if isinstance(value, tuple):
        return "(" + ", ".join(map(ordered_key, value)) + ")"
    return repr(value)

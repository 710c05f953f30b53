"""After resolution: the rows of definitions (with the public paths they are exported
under), module import edges, the tests that exercise each primitive, and the messages
raised (the call graph itself is calls.py's)."""

from __future__ import annotations

import json

from jaxmap.indexing.facts import APPLIED, CLASS, FUNC, MADE, MODULE, PRIM, STR, SYM, TUPLE
from jaxmap.indexing.resolve.findings import Findings
from jaxmap.indexing.resolve.names import Names
from jaxmap.indexing.resolve.values import MAX_HOPS
from jaxmap.store.records import DefinitionRecord

# Methods a user calls through the class's instances or constructor.
_PUBLIC_DUNDERS = frozenset({"__call__", "__init__"})
# Directories of a checkout whose modules are not part of any public API.
_NOT_API = frozenset({"tests", "test", "docs", "benchmarks", "examples"})


def definitions(names: Names, findings: Findings) -> list[DefinitionRecord]:
    """Every module and every definition of the tree, as the store writes them."""
    exports = _public_paths(names, findings)
    rows = []
    for module, (path, facts) in names.modules.items():
        rows.append(DefinitionRecord(module.rpartition(".")[2], module, "module", module, path,
                                     1, None, facts.doc, exports.get((module, ""), [])))
        for d in facts.defs:
            rows.append(DefinitionRecord(d.name, f"{module}.{d.qualname}", d.kind, module, path,
                                         d.line, d.end_line, d.doc,
                                         _public_of(exports, module, d),
                                         _alias_of(names, module, d)))
    return rows


def _alias_of(names: Names, module: str, d) -> str | None:
    """The qualified name of the function or class a module's variable only names."""
    target = alias_target(names, module, d.name) \
        if d.kind == "variable" and d.qualname == d.name else None
    return f"{target[0]}.{target[1]}" if target is not None else None


def _public_of(exports: dict, module: str, d) -> list[str]:
    """A definition's public paths; a public method's are its public class's paths
    with its name (`jax.custom_vjp.__call__`)."""
    if d.kind != "function" or d.qualname.count(".") != 1:
        return exports.get((module, d.qualname), [])
    owner, _, method = d.qualname.partition(".")
    if method.startswith("_") and method not in _PUBLIC_DUNDERS:
        return []
    return [f"{path}.{method}" for path in exports.get((module, owner), [])]


def _public_paths(names: Names, findings: Findings) -> dict[tuple[str, str], list[str]]:
    """Public dotted paths (`jax.lax.psum`) each definition is exported under: the
    names a user can import from a public module. A module with a literal `__all__`
    exports those names; otherwise its public definitions and the imports it writes
    as re-exports (`from m import f as f`) or star-imports; a name its top level
    deletes anywhere (`del jax_api`) is not exported."""
    exports: dict[tuple[str, str], list[str]] = {}
    for module in names.modules:
        if not public_module(module):
            continue
        for name, key in sorted(_exported(names, findings, module).items()):
            exports.setdefault(key, []).append(f"{module}.{name}")
    return exports


def _exported(names: Names, findings: Findings, module: str, depth: int = 0
              ) -> dict[str, tuple[str, str]]:
    """name -> (module, qualname) of the definition, for what `module` exports."""
    listed = _all(names, module)
    found: dict[str, tuple[str, str]] = {}
    for star in names.stars.get(module, ()) if depth < MAX_HOPS else ():
        if star in names.modules:
            found.update(_exported(names, findings, star, depth + 1))
    for d in names.facts(module).defs:
        if "." not in d.qualname and (d.name in listed if listed is not None
                                      else not d.name.startswith("_")):
            found[d.name] = _unaliased(names, (module, d.name))
    reexports = names.reexports.get(module, set())
    for alias, target in names.imports.get((module, ""), {}).items():
        if "." in alias or (alias not in listed if listed is not None
                            else alias.startswith("_") or alias not in reexports):
            continue
        defined = _defined_at(names, target)
        key = _unaliased(names, defined) if defined else _definition_key(
            names, findings, names.qualified(target), target.rpartition(".")[2])
        if key is not None:
            found[alias] = key
    for name in names.facts(module).deleted:
        found.pop(name, None)
    return found if listed is None else {n: k for n, k in found.items() if n in listed}


def _all(names: Names, module: str) -> set[str] | None:
    """The names of a module's literal `__all__`, if it has one."""
    value = names.env_of(module).get("__all__")
    if value is None or value[0] != TUPLE or any(item[0] != STR for item in value[1]):
        return None
    return {item[1] for item in value[1]}


def _unaliased(names: Names, key: tuple[str, str]) -> tuple[str, str]:
    """The definition a module-level name stands for: the function or class it is an
    alias of (`swish = silu`, `ref = kernel.ref`: exported as that function, whose
    public paths are then all in one place), else the name's own."""
    target = alias_target(names, *key)
    return target if target is not None else key


def alias_target(names: Names, module: str, name: str) -> tuple[str, str] | None:
    """(module, qualname) of the function or class of the tree that a module-level
    variable only names (`swish = silu`, `ref = kernel.ref`), or None: a call or a
    partial (`gmm = custom_vjp(gmm)`) makes another callable."""
    value = names.env_of(module).get(name) if module in names.modules else None
    if value is None or value[0] not in (FUNC, CLASS) or value[1:3] == (module, name) \
            or name in names.facts(module).funcs or name in names.facts(module).classes:
        return None
    return value[1], value[2]


def _defined_at(names: Names, target: str) -> tuple[str, str] | None:
    """(module, name) where an imported dotted name is a module-level definition of a
    module of the tree (`ad_checkpoint.checkpoint_policies`, a variable), or None."""
    module, _, name = target.rpartition(".")
    if module in names.modules and name in names.defined(module):
        return module, name
    return None


def _definition_key(names: Names, findings: Findings, value: tuple, leaf: str
                    ) -> tuple[str, str] | None:
    """(module, qualname) of the definition a value is, if it is one in the tree. A
    wrapped function (`jit = api_boundary(jit)`) is the function of that name."""
    tag = value[0]
    if tag in (FUNC, CLASS):
        return value[1], value[2]
    if tag == MODULE:
        return value[1], ""
    if tag == PRIM:
        prim = findings.primitives[value[1]]
        return (prim.module, prim.variable) if prim.variable else None
    if tag == SYM:
        module, _, attr = value[1].rpartition(".")
        if module in names.modules:
            return module, attr
    if tag in (APPLIED, MADE):
        wrapped = [a for a in value[2] if a[0] in (FUNC, CLASS) and a[2] == leaf]
        return (wrapped[0][1], wrapped[0][2]) if wrapped else None
    return None


def import_edges(names: Names) -> list[tuple[str, str]]:
    """(module, module it imports), both in the tree."""
    edges = set()
    tables = [(module, table.values()) for (module, _scope), table in names.imports.items()]
    for module, targets in tables + list(names.stars.items()):
        for target in targets:
            imported = names.module_of(target)
            if imported and imported != module:
                edges.add((module, imported))
    return sorted(edges)


def messages(names: Names) -> list[tuple[str, int, str, str, str, bool]]:
    """Every message raised, warned or returned as an exception: (file, line, function
    or module, exception, literal pieces as JSON, whether it is returned)."""
    return [(path, m.line, f"{module}.{m.scope}" if m.scope else module, m.exception,
             json.dumps(m.pieces), m.returned) for module, (path, facts) in names.modules.items()
            for m in facts.messages]


def public_module(module: str) -> bool:
    """Not private, not in a checkout's tests/docs/benchmarks/examples, not a test."""
    return not any(part.startswith("_") for part in module.split(".")) \
        and module.partition(".")[0] not in _NOT_API and "test" not in module.rpartition(".")[2]

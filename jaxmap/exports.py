"""After resolution: the rows of definitions (with the public paths they are exported
under), module import edges, the functions that bind each primitive, and the tests
that exercise it."""

from __future__ import annotations

# Directories of a checkout whose modules are not part of any public API.
_NOT_API = frozenset({"tests", "test", "docs", "benchmarks", "examples"})


def definitions(resolver) -> list[dict]:
    """Every module and every definition of the tree, as store rows."""
    exports = _public_paths(resolver)
    rows = []
    for module, (path, facts) in resolver.modules.items():
        rows.append({"name": module.rpartition(".")[2], "qualname": module, "kind": "module",
                     "module": module, "file": path, "line": 1, "end_line": None,
                     "public": exports.get((module, ""), []), "summary": facts["doc"]})
        for name, qualname, kind, line, end_line in facts["defs"]:
            rows.append({"name": name, "qualname": f"{module}.{qualname}", "kind": kind,
                         "module": module, "file": path, "line": line, "end_line": end_line,
                         "public": exports.get((module, qualname), []), "summary": None})
    return rows


def _public_paths(resolver) -> dict[tuple[str, str], list[str]]:
    """Public dotted paths (`jax.lax.psum`) each definition is exported under."""
    exports: dict[tuple[str, str], list[str]] = {}
    for module in resolver.modules:
        if _private(module) or module.partition(".")[0] in _NOT_API \
                or "test" in module.rpartition(".")[2]:
            continue
        for name, qualname, *_ in resolver.modules[module][1]["defs"]:
            if "." not in qualname and not name.startswith("_"):
                exports.setdefault((module, name), []).append(f"{module}.{name}")
        for alias, target in resolver.imports.get((module, ""), {}).items():
            if alias.startswith("_") or "." in alias:
                continue
            key = _definition_key(resolver, resolver.qualified(target))
            if key is not None:
                exports.setdefault(key, []).append(f"{module}.{alias}")
    return exports


def _definition_key(resolver, value: tuple) -> tuple[str, str] | None:
    """(module, qualname) of the definition a value is, if it is one in the tree."""
    if value[0] in ("func", "class"):
        return value[1], value[2]
    if value[0] == "module":
        return value[1], ""
    if value[0] == "prim":
        prim = resolver.primitives[value[1]]
        return (prim["module"], prim["variable"]) if prim["variable"] else None
    if value[0] == "sym":
        module, _, attr = value[1].rpartition(".")
        if module in resolver.modules:
            return module, attr
    return None


def import_edges(resolver) -> list[tuple[str, str]]:
    """(module, module it imports), both in the tree."""
    edges = set()
    for (module, _scope), table in resolver.imports.items():
        for target in table.values():
            parts = target.split(".")
            for n in range(len(parts), 0, -1):
                imported = ".".join(parts[:n])
                if imported in resolver.modules:
                    if imported != module:
                        edges.add((module, imported))
                    break
    return sorted(edges)


def binds(resolver) -> list[tuple[str, str, int, int]]:
    """Functions that bind a primitive (`x_p.bind(...)`): (module, function, primitive
    index, line)."""
    rows = []
    for module, (_, facts) in resolver.modules.items():
        for scope, _loop, tag, name, line in (e for e in facts["events"] if e[2] == "binds"):
            value = resolver.lookup_in(module, scope, name)
            if value[0] == "prim":
                rows.append((module, scope, value[1], line))
    return rows


def tests(resolver, binds: list[tuple[str, str, int, int]]) -> list[tuple[int, str, str, int]]:
    """Tests that exercise a primitive: (primitive index, test qualname, file, line) for
    each `test*` function that uses the primitive or calls a function binding it (or
    calling, in its own module, one that does)."""
    if not any(facts["tests"] for _, facts in resolver.modules.values()):
        return []
    binders = _binders(resolver, binds)
    rows = set()
    for module, (path, facts) in resolver.modules.items():
        exercised: dict[str, tuple[int, ...]] = {}  # name -> primitives, per module
        for qualname, (line, names) in facts["tests"].items():
            for name in names:
                if name not in exercised:
                    exercised[name] = _primitives_of(resolver.lookup_in(module, "", name),
                                                     binders)
                rows.update((pid, qualname, path, line) for pid in exercised[name])
    return sorted(rows)


def _binders(resolver, binds: list[tuple[str, str, int, int]]) -> dict[tuple, set[int]]:
    """(module, function) -> primitives it binds, itself or through functions of its
    module that it calls."""
    binders: dict[tuple[str, str], set[int]] = {}
    for module, function, pid, _line in binds:
        binders.setdefault((module, function), set()).add(pid)
    changed = True
    while changed:  # chains of helpers are short; each pass adds one link
        changed = False
        for module, (_, facts) in resolver.modules.items():
            for caller, callees in facts["calls"].items():
                bound = set().union(*(binders.get((module, c), ()) for c in callees))
                known = binders.setdefault((module, caller), set())
                if not bound <= known:
                    known |= bound
                    changed = True
    return binders


def _primitives_of(value: tuple, binders: dict) -> tuple[int, ...]:
    """The primitive a used name is (or whose method it is), or those it binds."""
    if value[0] == "method":
        value = value[1]
    if value[0] == "prim":
        return (value[1],)
    if value[0] == "func":
        return tuple(binders.get((value[1], value[2]), ()))
    return ()


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))

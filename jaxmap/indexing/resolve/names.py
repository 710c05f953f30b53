"""The name tables of a tree: its modules, their imports and top-level definitions,
and what a dotted name means in a module or function, following re-exports."""

from __future__ import annotations

from collections.abc import Callable

from jaxmap.indexing.facts import (
    CLASS,
    DICT,
    FUNC,
    INSTANCE,
    METHOD,
    MODULE,
    NEW,
    PARAM,
    PRIM,
    STAR,
    STR,
    SUPER,
    SYM,
    UNKNOWN,
    FileFacts,
)
from jaxmap.indexing.resolve.values import MAX_HOPS
from jaxmap.store.records import Place

_OBJECTS = frozenset({INSTANCE, CLASS, FUNC, SUPER})  # their attributes: see member_of


class Names:
    """Modules by name, import tables by (module, scope), and name lookup. Lookup reads
    two sources given at construction (the interpreter's, which makes this object):
    `env_of(module)`, the values of a module's top-level names (running the module when
    first asked), and `member_of(value, attr)`, `value.attr` for objects, classes and
    functions where it is known (None where it is not)."""

    def __init__(self, files: dict[str, FileFacts], env_of: Callable[[str], dict],
                 member_of: Callable[[tuple, str], tuple | None]):
        self.modules: dict[str, tuple[str, FileFacts]] = {
            facts.module: (path, facts) for path, facts in sorted(files.items())}
        self.imports: dict[tuple[str, str], dict[str, str]] = {}
        self.reexports: dict[str, set[str]] = {}  # module -> aliases written as re-exports
        self.stars: dict[str, list[str]] = {}  # module -> modules it star-imports
        self.top_names: dict[str, dict[str, tuple]] = {}
        self._defined: dict[str, set[str]] = {}
        self.env_of = env_of
        self.member_of = member_of
        self._module_of: dict[str, str | None] = {}
        for module, (_, facts) in self.modules.items():
            for imported in facts.imports:
                if imported.alias == STAR:
                    self.stars.setdefault(module, []).append(imported.target)
                    continue
                self.imports.setdefault((module, imported.scope), {})[imported.alias] = \
                    imported.target
                if imported.reexport and not imported.scope:
                    self.reexports.setdefault(module, set()).add(imported.alias)
            self.top_names[module] = {
                d.name: (FUNC if d.kind == "function" else CLASS, module, d.name)
                for d in facts.defs
                if d.qualname == d.name and d.kind in ("function", "class")}

    def path(self, module: str) -> str:
        return self.modules[module][0]

    def facts(self, module: str) -> FileFacts:
        return self.modules[module][1]

    def lookup(self, dotted: str, module: str, scope: str = "", local: dict | None = None
               ) -> tuple:
        """What `dotted` means in function `scope` of `module` (its top level when
        scope is ''), given the function's local values."""
        head, _, rest = dotted.partition(".")
        if local and head in local:
            return self.attribute(local[head], rest)
        if scope:
            enclosing = scope
            while enclosing:  # a nested function sees the imports of those around it
                found = self._via_imports(module, enclosing, dotted)
                if found is not None:
                    return found
                enclosing = enclosing.rpartition(".")[0]
            env = self.env_of(module)
            if head in env:
                return self.attribute(env[head], rest)
        found = self._via_imports(module, "", dotted)
        if found is not None:
            return found
        return (SYM, dotted)

    def _via_imports(self, module: str, scope: str, dotted: str) -> tuple | None:
        table = self.imports.get((module, scope))
        if not table:
            return None
        if "." not in dotted:  # most names: one look-up
            target = table.get(dotted)
            return None if target is None else self.qualified(target)
        end = len(dotted)
        while end > 0:  # the longest leading part that is imported
            target = table.get(dotted[:end])
            if target is not None:
                return self.qualified(target + dotted[end:])
            end = dotted.rfind(".", 0, end)
        return None

    def attribute(self, value: tuple, rest: str) -> tuple:
        """`value.rest`, for a dotted `rest` ('' is the value itself)."""
        if not rest:
            return value
        tag = value[0]
        if tag in _OBJECTS:
            head, _, tail = rest.partition(".")
            found = self.member_of(value, head)
            if found is not None:
                return self.attribute(found, tail)
        if tag == MODULE:
            return self.qualified(f"{value[1]}.{rest}")
        if tag == SYM:
            return (SYM, f"{value[1]}.{rest}")
        if tag in (PRIM, PARAM, NEW, DICT) and "." not in rest:
            return (METHOD, value, rest)
        if tag in (FUNC, CLASS):
            return (SYM, f"{value[1]}.{value[2]}.{rest}")
        return UNKNOWN

    def qualified(self, name: str, hops: int = 0) -> tuple:
        """A fully qualified dotted name -> its value, following re-exports."""
        module = self.module_of(name)
        if module is None:
            return (SYM, name)
        if module == name:
            return (MODULE, module)
        attr, _, rest = name[len(module) + 1:].partition(".")
        target = self.imports.get((module, ""), {}).get(attr)
        if target is not None and hops < MAX_HOPS:
            return self.attribute(self.qualified(target, hops + 1), rest)
        value = self.env_of(module).get(attr)
        if value is None or value[0] == STR:
            value = (SYM, f"{module}.{attr}")
        return self.attribute(value, rest)

    def defined(self, module: str) -> set[str]:
        """The names a module defines at its top level (functions, classes, variables)."""
        found = self._defined.get(module)
        if found is None:
            found = self._defined[module] = {d.name for d in self.facts(module).defs
                                             if d.qualname == d.name}
        return found

    def import_target(self, name: str, module: str, scope: str = "") -> str | None:
        """The dotted name an import binds `name` to in function `scope` of `module`, or
        in a scope around it (the module's top level last), if any."""
        while True:
            target = self.imports.get((module, scope), {}).get(name)
            if target is not None or not scope:
                return target
            scope = scope.rpartition(".")[0]

    def module_of(self, dotted: str) -> str | None:
        """The longest leading part of a qualified name that is a module of the tree, if
        any (memoised: the resolver asks about the same names many times)."""
        if dotted in self._module_of:
            return self._module_of[dotted]
        end = len(dotted)
        while end > 0 and dotted[:end] not in self.modules:
            end = dotted.rfind(".", 0, end)
        found = self._module_of[dotted] = dotted[:end] if end > 0 else None
        return found

    def in_tree(self, dotted: str) -> bool:
        """Whether a qualified name lies in a module of the tree."""
        return self.module_of(dotted) is not None

    def def_location(self, module: str, qualname: str) -> Place | None:
        """A function's name, file and line, as a rule's `function`."""
        spec = self.facts(module).funcs.get(qualname)
        if spec is None:
            return None
        return Place(qualname.rpartition(".")[2], self.path(module), spec.line)

"""What REPO-MAP.md says, gathered from an index: JAX's subsystems and how a jit call
flows through them, core classes, alternate paths, entry points, contributor paths,
where to add each kind of rule, gaps, hubs, the package layout and per-primitive
coverage; and what its linked pages list: public names and configuration options, the
primitives each public function binds, and the user-facing messages.

Every location comes from the index; the JAX knowledge used is the tables of
orientation.py and registrars.py. render/markdown.py turns the result into text.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import NamedTuple

from jaxmap.commands.alternate_paths import alternate_paths
from jaxmap.commands.core_classes import core_classes
from jaxmap.commands.message_sites import message_sites
from jaxmap.commands.public_binds import public_binds
from jaxmap.commands.public_names import config_options, public_names
from jaxmap.commands.whole_graph import WholeGraph
from jaxmap.knowledge import orientation as O
from jaxmap.knowledge import registrars as R
from jaxmap.knowledge.traces import rule_kinds
from jaxmap.models import RuleKind
from jaxmap.store.rows import shown_path


class Place(NamedTuple):
    name: str
    file: str
    line: int


class Module(NamedTuple):
    name: str
    file: str
    purpose: str
    documented: bool  # the purpose is the module docstring's first line


class Package(NamedTuple):
    name: str
    modules: tuple[str, ...]  # member modules' last names
    purpose: str | None  # its docstring's first line


class SubsystemRow(NamedTuple):
    name: str
    does: str
    modules: tuple[Place, ...]  # its key modules (line 1)
    module_count: int
    primitive_count: int
    entries: tuple[Place, ...]
    uses: tuple[str, ...]  # other subsystems it imports most
    used_by: tuple[str, ...]


class Stage(NamedTuple):
    heading: str
    places: tuple[Place, ...]


class Contributing(NamedTuple):
    test_modules: int
    test_examples: tuple[str, ...]  # files of a few test modules
    docs: tuple[tuple[str, str], ...]  # (path, why)
    jaxlib: Place | None  # where jax imports jaxlib
    ladder: tuple[tuple[str, Place], ...]


class Family(NamedTuple):
    name: str
    description: str
    members: tuple[str, ...]


class Gap(NamedTuple):
    title: str
    surprises: tuple[str, ...]
    by_design: tuple[tuple[str, int], ...]  # (family, how many of it lack the rule)
    # Those outside the families whose rule the call that makes them switches off
    # (`linalg_primitive(..., supports_batching=False)`): by design too, named.
    switched_off: tuple[str, ...] = ()


class Registry(NamedTuple):
    kind: str  # a rule kind; `lowering[BACKEND]` for a Pallas backend's table
    registrars: tuple[tuple[str, str, int], ...]  # (name, file, line of its definition)
    example: tuple | None  # (primitive, file, line, via, function, its file, its line)
    error: str | None  # what JAX raises when a primitive lacks this kind
    title: str | None = None  # what the registry is for, when the kind does not say


class Reading(NamedTuple):
    module: str
    file: str
    why: str


class SubsystemTests(NamedTuple):
    subsystem: str
    files: tuple[str, ...]
    in_tree: bool  # found in this tree's tests/, not only the names a checkout uses


class RepoMap(NamedTuple):
    jax_version: str | None
    files: int
    links: bool  # relative GitHub-style links (a checkout) or plain path:line
    subsystems: tuple[SubsystemRow, ...]
    reading: tuple[Reading, ...]  # the core modules in reading order
    flow: tuple[Stage, ...]  # a jax.jit(f)(x) call
    export: tuple[Stage, ...]  # an exported function to bytes and back
    tests: tuple[SubsystemTests, ...]
    stages: tuple[Stage, ...]  # the pipeline, stage by stage
    entry_points: tuple[Place, ...]
    contributing: Contributing
    packages: tuple[Package, ...]
    modules: tuple[Module, ...]
    primitives: tuple  # models.Primitive, sorted by module, name
    families: tuple[Family, ...]
    gaps: tuple[Gap, ...]
    hubs: tuple[tuple[str, int, int], ...]  # (module, imported by, imports)
    infrastructure: tuple[tuple[str, int], ...]  # (module, imported by)
    helpers: tuple[tuple[Place, int], ...]  # (rule function, primitives it serves)
    registries: tuple[Registry, ...]
    core_classes: tuple = ()  # core_classes.CoreClass
    alternate_paths: tuple = ()  # alternate_paths.AlternatePath
    public_names: tuple = ()  # (public module, its public_names.PublicName rows)
    config_options: tuple = ()  # public_names.ConfigOption
    public_binds: tuple = ()  # public_binds.PublicBinds
    common_primitives: tuple[str, ...] = ()  # counted, not listed, in public_binds
    messages: tuple = ()  # message_sites.MessageSite


def gather(index, *, links: bool | None = None, rank: int = 15) -> RepoMap:
    """Everything REPO-MAP.md shows, from an open index.Index; by default with links
    to files for a checkout and plain path:line for installed packages."""
    if links is None:
        from jaxmap import roots

        links = not roots.is_installed_packages_dir(index.root)
    prims = sorted((p for p in index.primitives() if not p.loc.file.startswith(O.OUTSIDE_JAX)),
                   key=lambda p: (p.module, p.name, p.loc.line))
    definitions = index.definition_rows()
    imports = [(m, t) for m, t in index.imports() if m != t]
    modules = _modules(definitions, imports, prims)
    families = _families(prims)
    hubs, infrastructure = _ranking(imports, rank)
    graph = WholeGraph(index)
    binds, common = public_binds(index, graph)
    return RepoMap(index.jax_version, index.file_count(), links,
                   _subsystems(index, modules, imports, prims), _reading(modules),
                   _stages(index, O.JIT_FLOW), _stages(index, O.EXPORT_FLOW), _tests(modules),
                   _stages(index, R.PIPELINE), _entry_points(index),
                   _contributing(index, modules), _packages(modules), tuple(modules),
                   tuple(prims), families, _gaps(prims, families), hubs, infrastructure,
                   _helpers(prims, rank), _registries(index, prims), core_classes(index),
                   alternate_paths(index), public_names(index),
                   config_options(index), binds, common,
                   message_sites(index, graph))



def _place(index, suffix: str) -> Place | None:
    found = index.definition_ending(suffix)
    return Place(*found) if found else None


def _places(index, suffixes) -> tuple[Place, ...]:
    return tuple(p for p in (_chosen(index, s) if isinstance(s, O.CalledFrom)
                             else _place(index, s) for s in suffixes) if p)


def _chosen(index, choice: O.CalledFrom) -> Place | None:
    """The first of the choice's definitions that a function of its file calls."""
    for suffix in choice.names:
        place = _place(index, suffix)
        if place and any(file.endswith("/" + choice.file)
                         for file in index.caller_files(place.name)):
            return place
    return None


def _entry_points(index) -> tuple[Place, ...]:
    """Entry points under the public path they are shown by when they have one."""
    points = []
    for place in _places(index, O.ENTRY_POINTS):
        public = [path for d in index.definitions_named(place.name)
                  if d.qualname == place.name for path in d.public_paths]
        name = shown_path(place.name, public)
        points.append(place._replace(name=name))
    return tuple(points)


def _stages(index, table) -> tuple[Stage, ...]:
    stages = (Stage(heading, _places(index, names)) for heading, names in table)
    return tuple(s for s in stages if s.places)


# -- modules and packages ----------------------------------------------------------------


def _modules(definitions, imports, prims) -> list[Module]:
    defined: dict[str, list[str]] = defaultdict(list)
    for prim in prims:
        defined[prim.module].append(prim.name)
    registered: dict[str, Counter] = defaultdict(Counter)
    for prim in prims:
        for rule in prim.rules:
            registered[rule.loc.file][rule.kind.value] += 1
    names: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for d in definitions:
        leaf = d.qualname[len(d.module) + 1:]
        if d.kind != "module" and "." not in leaf and not leaf.startswith("_"):
            names[d.module][d.kind].append(leaf)
    targets: dict[str, list[str]] = defaultdict(list)
    for module, target in sorted(imports, key=lambda edge: edge[1]):
        if target not in targets[module]:
            targets[module].append(target)
    rows = sorted((d for d in definitions if d.kind == "module"), key=lambda d: d.qualname)
    return [Module(d.qualname, d.file, d.summary or _derived_purpose(
                defined[d.qualname], registered[d.file], names[d.qualname],
                targets[d.qualname]), bool(d.summary))
            for d in rows]


def _derived_purpose(primitives: list[str], rules: Counter, definitions: dict,
                     imports: list[str]) -> str:
    """What a module without a docstring is for, by name: 'primitives sin, cos;
    lowering and batching rules', 'functions f, g', 're-exports `jax._src.api`'."""
    parts = []
    if primitives:
        parts.append("primitives " + _some(sorted(set(primitives))))
    if rules:
        kinds = [kind for kind, _ in sorted(rules.items(), key=lambda kv: (-kv[1], kv[0]))]
        parts.append(" and ".join(kinds[:3]) + " rules")
    if not parts:
        for kind in ("class", "function", "variable"):
            if definitions.get(kind):
                label = "classes" if kind == "class" else f"{kind}s"
                parts.append(f"{label} " + _some(sorted(definitions[kind])))
                break
        else:
            parts.append("re-exports " + _some([f"`{m}`" for m in imports]) if imports
                         else "empty")
    return "; ".join(parts)


def _some(names: list[str], shown: int = 3) -> str:
    return ", ".join(names[:shown]) + (", …" if len(names) > shown else "")


def _package_of(module: Module) -> str:
    return module.name if module.file.endswith("/__init__.py") \
        else module.name.rpartition(".")[0]


def _packages(modules: list[Module]) -> tuple[Package, ...]:
    """One row per package: its modules' last names, and its docstring's first line."""
    members: dict[str, list[Module]] = defaultdict(list)
    for module in modules:
        members[_package_of(module)].append(module)
    by_name = {m.name: m for m in modules}
    rows = []
    for name, group in sorted(members.items()):
        own = by_name.get(name)
        rows.append(Package(name or "(top level)",
                            tuple(m.name.rpartition(".")[2] for m in group if m.name != name),
                            own.purpose if own is not None and own.documented else None))
    return tuple(rows)


# -- subsystems ------------------------------------------------------------------------


def _owner(module: str) -> str | None:
    """The subsystem a module belongs to: the one with the longest matching prefix."""
    best, length = None, 0
    for subsystem in O.SUBSYSTEMS:
        for prefix in subsystem.modules:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = subsystem.name, len(prefix)
    return best


def _subsystems(index, modules, imports, prims) -> tuple[SubsystemRow, ...]:
    owners = {m.name: _owner(m.name) for m in modules}
    files = {m.name: m.file for m in modules}
    uses: dict[str, Counter] = defaultdict(Counter)
    for module, target in imports:
        a, b = owners.get(module), owners.get(target)
        if a and b and a != b:
            uses[a][b] += 1
    used_by: dict[str, Counter] = defaultdict(Counter)
    for a, counts in uses.items():
        for b, n in counts.items():
            used_by[b][a] += n
    rows = []
    for s in O.SUBSYSTEMS:
        members = [m for m, owner in owners.items() if owner == s.name]
        if not members:
            continue
        key = tuple(Place(m, files[m], 1) for m in s.modules if m in files)
        rows.append(SubsystemRow(
            s.name, s.does, key, len(members), sum(owners.get(p.module) == s.name for p in prims),
            _places(index, s.entries), _top(uses[s.name]), _top(used_by[s.name])))
    return tuple(rows)


def _top(counts: Counter, shown: int = 3) -> tuple[str, ...]:
    return tuple(name for name, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
                 [:shown])


def _reading(modules) -> tuple[Reading, ...]:
    files = {m.name: m.file for m in modules}
    return tuple(Reading(name, files[name], why) for name, why in O.READING_ORDER
                 if name in files)


def _tests(modules) -> tuple[SubsystemTests, ...]:
    """Each subsystem's test files: those of this tree's tests/, or, in a tree without
    tests (an installed package), the names a JAX checkout uses."""
    present = {m.file for m in modules if m.file.startswith("tests/")}
    rows = []
    for s in O.SUBSYSTEMS:
        files = tuple(f for f in s.tests if f in present) if present else s.tests
        if files:
            rows.append(SubsystemTests(s.name, files, bool(present)))
    return tuple(rows)


# -- contributor paths -------------------------------------------------------------------


def _contributing(index, modules) -> Contributing:
    tests = sorted(m.file for m in modules if m.file.startswith("tests/")
                   and m.file.endswith("_test.py"))
    present = {m.file for m in modules}
    jaxlib = next((Place(m.name, m.file, 1) for m in modules if m.name == "jax._src.lib"), None)
    ladder = tuple((label, place) for label, name in O.LADDER
                   if (place := _place(index, name)) is not None)
    examples = tuple(t for t in ("tests/lax_test.py", "tests/api_test.py") if t in present)
    return Contributing(len(tests), examples or tuple(tests[:2]), O.DOCS_FIRST, jaxlib, ladder)


# -- gaps ------------------------------------------------------------------------------


def _family(prim) -> str | None:
    if any(prim.module == m or prim.module.startswith(m + ".") for m in O.KERNEL_MODULES):
        return "kernel language"
    if prim.name.endswith(("_start", "_done")):
        return "async halves"
    if prim.name in O.CALL_PRIMITIVES or prim.name.startswith("call") \
            or "_call" in prim.name:
        return "internal calls"
    return None


def _families(prims) -> tuple[Family, ...]:
    members: dict[str, list[str]] = defaultdict(list)
    for prim in prims:
        if prim.style == "classic" and (family := _family(prim)):
            members[family].append(prim.name)
    return tuple(Family(name, description, tuple(sorted(set(members[name]))))
                 for name, description in O.GAP_FAMILIES if members[name])


def _gaps(prims, families) -> tuple[Gap, ...]:
    labels = Counter(p.name for p in prims)

    def label(p):
        return p.name if labels[p.name] == 1 else f"{p.name} ({p.module})"

    classic = [p for p in prims if p.style == "classic"]
    kinds = {id(p): {k for r in p.rules for k in rule_kinds(r)} for p in classic}
    xla_lowered = {id(p) for p in classic for r in p.rules if r.kind.value == "lowering"
                   and R.lowers_for_xla(r.platform)}
    linear = {id(p) for p in classic for r in p.rules
              if "deflinear" in r.via or "defbilinear" in r.via}
    checks = (  # (title, the kind lacking, whether a primitive lacks it)
        ("without an abstract eval rule", "abstract_eval",
         lambda p: "abstract_eval" not in kinds[id(p)]),
        ("without a JVP rule", "jvp", lambda p: "jvp" not in kinds[id(p)]),
        ("linear (deflinear) but without a transpose rule", "transpose",
         lambda p: id(p) in linear and "transpose" not in kinds[id(p)]),
        ("without a batching rule", "batching", lambda p: "batching" not in kinds[id(p)]),
        ("without an XLA lowering (default or per platform)", "lowering",
         lambda p: id(p) not in xla_lowered),
        ("with no rules at all", None, lambda p: not p.rules),
    )
    gaps = []
    for title, kind, test in checks:
        lacking = [p for p in classic if test(p) and not _family(p)]
        by_family = Counter(_family(p) for p in classic if test(p))
        off = {id(p) for p in lacking if _switched_off(p, kind)}
        gaps.append(Gap(title, tuple(sorted(label(p) for p in lacking if id(p) not in off)),
                        tuple((f.name, by_family[f.name]) for f in families
                              if by_family[f.name]),
                        tuple(sorted(label(p) for p in lacking if id(p) in off))))
    return tuple(gaps)


def _switched_off(prim, kind: str | None) -> bool:
    """Whether the call that makes `prim` switches off its rule of `kind` (a lowering:
    the default one, or one for an XLA platform)."""
    return any(o.kind.value == kind and (kind != "lowering" or R.lowers_for_xla(o.platform))
               for o in prim.switched_off)


# -- ranking ---------------------------------------------------------------------------


def _ranking(imports, rank: int):
    """Hubs: implementation modules ranked by the geometric mean of how many modules
    import them and how many they import, so that layers many others build on and that
    build on many come first; infrastructure: modules imported most that import almost
    nothing themselves (utilities, config, typing)."""
    importers: dict[str, set] = defaultdict(set)
    imported: dict[str, set] = defaultdict(set)
    for module, target in imports:
        importers[target].add(module)
        imported[module].add(target)
    names = set(importers) | set(imported)
    private = {m for m in names if any(part.startswith("_") for part in m.split("."))}
    pool = private or names
    hubs = sorted(pool, key=lambda m: (-math.sqrt(len(importers[m]) * len(imported[m])), m))
    infra = sorted((m for m in names if len(imported[m]) <= 3),
                   key=lambda m: (-len(importers[m]), m))
    return (tuple((m, len(importers[m]), len(imported[m])) for m in hubs[:rank]
                  if imported[m] and importers[m]),
            tuple((m, len(importers[m])) for m in infra[:rank // 2] if importers[m]))


def _helpers(prims, rank: int) -> tuple[tuple[Place, int], ...]:
    """Rule functions shared by the most primitives."""
    served: dict[tuple, set] = defaultdict(set)
    for i, prim in enumerate(prims):
        for rule in prim.rules:
            for function in rule.functions:
                served[function.name, function.loc.file, function.loc.line].add(i)
    ranked = sorted(served.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return tuple((Place(*key), len(users)) for key, users in ranked[:rank] if len(users) > 1)


# -- where to add things ---------------------------------------------------------------


def _preference(module: str) -> int:
    """0 for modules REPO-MAP prefers its examples from, in order; then the rest."""
    for rank, prefix in enumerate(R.EXAMPLE_MODULES):
        if module == prefix or module.startswith(prefix):
            return rank
    return len(R.EXAMPLE_MODULES)


def _registries(index, prims) -> tuple[Registry, ...]:
    by_kind: dict[str, list[str]] = defaultdict(list)
    for short, kind in R.REGISTRIES.items():
        by_kind[kind.value].append(short)
    for short, registrar in R.CALLS.items():
        for kind in registrar.kinds:
            by_kind[kind.value].append(short)
    for method, kind in R.METHODS.items():
        by_kind[kind.value].append(f"core.Primitive.{method}")
    coverage = {id(p): len({r.kind for r in p.rules}) for p in prims}
    result = []
    for kind_name in (k.value for k in RuleKind):
        places = []
        for short in by_kind.get(kind_name, ()):
            leaf, _, attr = short.partition(".")
            place = index.place(f"{R.MODULES[leaf][0]}.{attr}")
            if place:
                places.append((short, *place))
        example = _example(prims, coverage, lambda p, r, k=kind_name: r.kind.value == k
                           and ">" not in r.via)
        if places or example:
            result.append(Registry(kind_name, tuple(places), example,
                                   O.MISSING_RULE_ERRORS.get(kind_name)))
        if kind_name == RuleKind.LOWERING.value:
            result += _pallas_registries(index, prims, coverage)
    return tuple(result)


def _pallas_registries(index, prims, coverage) -> list[Registry]:
    """A Pallas backend's lowering table, the helpers its rules are registered with
    (read off the registrations), and one real registration."""
    rows = []
    for table, backend in R.PALLAS_LOWERING_TABLES.items():
        module = table.rpartition(".")[0]
        helpers = sorted({r.via.split(" > ")[0].lstrip("@") for p in prims for r in p.rules
                          if r.platform == backend and " > " in r.via})
        places = [(name, *place) for name in (table, *(f"{module}.{h}" for h in helpers))
                  if (place := index.place(name))]
        example = _example(prims, coverage, lambda p, r, b=backend: r.platform == b)
        if places or example:
            kind = f"lowering[{backend}]"
            rows.append(Registry(kind, tuple(places), example, O.MISSING_RULE_ERRORS.get(kind),
                                 O.PALLAS_BACKENDS.get(backend)))
    return rows


def _example(prims, coverage, chosen) -> tuple | None:
    """The registration to copy among those `chosen(prim, rule)` accepts: with a named
    function, from the modules REPO-MAP prefers, of the primitive with most rule kinds."""
    candidates = [(_preference(p.module), -coverage[id(p)], p.name, r.loc.file, r.loc.line,
                   p, r) for p in prims for r in p.rules
                  if r.function is not None and p.style == "classic" and chosen(p, r)]
    if not candidates:
        return None
    *_, prim, rule = min(candidates, key=lambda c: c[:5])
    function = rule.function
    return (prim.name, rule.loc.file, rule.loc.line, rule.via, function.name,
            function.loc.file, function.loc.line)

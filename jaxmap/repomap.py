"""What REPO-MAP.md says, gathered from an index: layout, pipeline, primitive coverage,
gaps, central modules and functions, where to add each kind of rule.

Everything here comes from the index; the only JAX knowledge used is the tables in
registrars.py (pipeline stage lookups, registries). render/markdown.py turns the
result into text.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import NamedTuple

from jaxmap import registrars as R
from jaxmap.models import RuleKind

# Columns of the coverage matrix, in order; lowering is split by platform.
COVERAGE_KINDS = ("impl", "abstract_eval", "jvp", "transpose", "batching", "lowering",
                  "partial_eval", "dce")


class Module(NamedTuple):
    name: str
    file: str
    purpose: str
    documented: bool  # the purpose is the module docstring's first line


class Stage(NamedTuple):
    heading: str
    places: tuple[tuple[str, str, int], ...]  # (qualname, file, line)


class Registry(NamedTuple):
    kind: str
    registrars: tuple[tuple[str, str, int], ...]  # (short name, file, line)
    example: tuple | None  # (primitive, file, line, via, function name)


class RepoMap(NamedTuple):
    jax_version: str | None
    files: int
    links: bool  # relative GitHub-style links (a checkout) or plain path:line
    top_level: tuple[tuple[str, str], ...]  # (directory, purpose)
    modules: dict[str, tuple[Module, ...]]  # area -> modules
    stages: tuple[Stage, ...]
    primitives: tuple  # models.Primitive, sorted by module, name
    gaps: tuple[tuple[str, tuple[str, ...]], ...]  # (title, primitive labels)
    central_modules: tuple[tuple[str, float], ...]
    central_functions: tuple[tuple[str, float], ...]
    registries: tuple[Registry, ...]


def gather(index, *, links: bool, rank: int = 25) -> RepoMap:
    """Everything REPO-MAP.md shows, from an open index.Index."""
    from jaxmap import graph

    prims = sorted(index.primitives(), key=lambda p: (p.module, p.name, p.loc.line))
    modules = _modules(index, prims)
    g = graph.build(index)
    return RepoMap(index.jax_version, index.file_count(), links, _top_level(modules), _areas(modules),
                   _stages(index), tuple(prims), _gaps(prims),
                   tuple(graph.central_modules(g, rank)), tuple(graph.central_functions(g, rank)),
                   _registries(index, prims))


def _modules(index, prims) -> list[Module]:
    defined = Counter(p.module for p in prims)
    registered: dict[str, Counter] = defaultdict(Counter)
    for prim in prims:
        for rule in prim.rules:
            registered[rule.loc.file][rule.kind.value] += 1
    definitions = index.definition_rows()
    counts: dict[str, Counter] = defaultdict(Counter)
    for d in definitions:
        if d.kind != "module":
            counts[d.module][d.kind] += 1
    imports: dict[str, list[str]] = defaultdict(list)
    for module, target in sorted(index.imports(), key=lambda edge: edge[1]):
        imports[module].append(target)
    rows = sorted((d for d in definitions if d.kind == "module"), key=lambda d: d.qualname)
    return [Module(d.qualname, d.file, d.summary or _derived_purpose(
                defined[d.qualname], registered[d.file], counts[d.qualname],
                imports[d.qualname]), bool(d.summary))
            for d in rows]


def _derived_purpose(primitives: int, rules: Counter, definitions: Counter,
                     imports: list[str]) -> str:
    """'defines 35 primitives; registers 120 rules (lowering, batching, jvp)'."""
    parts = []
    if primitives:
        parts.append(f"defines {primitives} primitive{'s' * (primitives != 1)}")
    if rules:
        kinds = ", ".join(kind for kind, _ in sorted(rules.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
        total = sum(rules.values())
        parts.append(f"registers {total} rule{'s' * (total != 1)} ({kinds})")
    if not parts:
        shown = [f"{n} {kind}{'es' if kind == 'class' and n != 1 else 's' * (n != 1)}"
                 for kind, n in sorted(definitions.items()) if kind != "variable"]
        if shown:
            parts.append("defines " + ", ".join(shown))
        elif imports:
            more = f" and {len(imports) - 2} more" if len(imports) > 2 else ""
            parts.append("re-exports from " + ", ".join(f"`{m}`" for m in imports[:2]) + more)
        else:
            variables = definitions.get("variable", 0)
            parts.append(f"defines {variables} variable{'s' * (variables != 1)}"
                         if variables else "empty")
    return "; ".join(parts)


def _top_level(modules: list[Module]) -> tuple[tuple[str, str], ...]:
    by_directory: dict[str, list[Module]] = defaultdict(list)
    for module in modules:
        by_directory[module.file.split("/")[0] if "/" in module.file else "."].append(module)
    rows = []
    for directory, members in sorted(by_directory.items()):
        package = next((m for m in members if m.file == f"{directory}/__init__.py"), None)
        purpose = package.purpose if package and package.documented \
            else f"{len(members)} modules"
        rows.append((directory, purpose))
    return tuple(rows)


def _areas(modules: list[Module]) -> dict[str, tuple[Module, ...]]:
    """Modules grouped for the layout tables: public jax, jax/_src, everything else."""
    areas: dict[str, list[Module]] = defaultdict(list)
    for module in modules:
        if module.name.startswith("jax._src.") or module.name == "jax._src":
            areas["jax/_src"].append(module)
        elif module.name == "jax" or module.name.startswith("jax."):
            areas["jax (public modules)"].append(module)
        else:
            areas[module.file.split("/")[0] if "/" in module.file else "."].append(module)
    return {area: tuple(members) for area, members in sorted(areas.items())}


def _stages(index) -> tuple[Stage, ...]:
    stages = []
    for heading, names in R.PIPELINE:
        places = []
        for name in names:
            place = index.definition_ending(name)
            if place:
                places.append(place)
        if places:
            stages.append(Stage(heading, tuple(places)))
    return tuple(stages)


def _gaps(prims) -> tuple[tuple[str, tuple[str, ...]], ...]:
    labels = Counter(p.name for p in prims)

    def label(p):
        return p.name if labels[p.name] == 1 else f"{p.name} ({p.module})"

    classic = [p for p in prims if p.style == "classic"]
    kinds = {id(p): {r.kind.value for r in p.rules} for p in classic}
    xla_lowered = {id(p) for p in classic for r in p.rules
                   if r.kind.value == "lowering" and (r.platform is None or r.platform in R.XLA_PLATFORMS)}
    linear = {id(p) for p in classic for r in p.rules if "deflinear" in r.via or "defbilinear" in r.via}
    checks = (
        ("without an abstract eval rule", lambda p: "abstract_eval" not in kinds[id(p)]),
        ("without a JVP rule", lambda p: "jvp" not in kinds[id(p)]),
        ("linear (deflinear) but without a transpose rule",
         lambda p: id(p) in linear and "transpose" not in kinds[id(p)]),
        ("without a batching rule", lambda p: "batching" not in kinds[id(p)]),
        ("without an XLA lowering (default or per platform)", lambda p: id(p) not in xla_lowered),
        ("with no rules at all", lambda p: not p.rules),
    )
    return tuple((title, tuple(sorted(label(p) for p in classic if test(p))))
                 for title, test in checks)


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
    for kind in (k.value for k in RuleKind):
        places = []
        for short in by_kind.get(kind, ()):
            leaf, _, attr = short.partition(".")
            place = index.place(f"{R.MODULES[leaf][0]}.{attr}")
            if place:
                places.append((short, *place))
        candidates = [(_preference(p.module), -coverage[id(p)], p.name, r.loc.file, r.loc.line,
                       p, r) for p in prims
                      for r in p.rules if r.kind.value == kind and r.function is not None
                      and ">" not in r.via and p.style == "classic"]
        example = None
        if candidates:
            *_, prim, rule = min(candidates, key=lambda c: c[:5])
            example = (prim.name, rule.loc.file, rule.loc.line, rule.via, rule.function.name)
        if places or example:
            result.append(Registry(kind, tuple(places), example))
    return tuple(result)

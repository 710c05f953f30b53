"""Out-of-tree: a primitive in the user's own package, OUT/<name>.py and its tests."""

from __future__ import annotations

from jaxmap.knowledge.versions import Release
from jaxmap.scaffold import imports
from jaxmap.scaffold.context import context, feature_text
from jaxmap.scaffold.imports import Import
from jaxmap.scaffold.spec import PrimitiveSpec
from jaxmap.scaffold.templating import fill_module


def files(spec: PrimitiveSpec, release: Release) -> dict[str, str]:
    """{relative path: text}: `<name>.py` and, unless `spec.tests` is off, its tests,
    written for `release`; UnsupportedRelease if it lacks what `spec` needs."""
    hijax = spec.style == "hijax"
    table = _hijax_imports(spec, release) if hijax else _classic_imports(release)
    ctx = context(spec, release)
    result = {f"{spec.name}.py": fill_module(f"{spec.style}.py.j2", ctx, table)}
    if spec.tests:
        table = imports.OUT_OF_TREE + (
            Import(feature_text(release.get("shard_map_module")), "shard_map"),
            Import(spec.name, spec.name, section=imports.LOCAL))
        result[f"test_{spec.name}.py"] = fill_module("test_pytest.py.j2", ctx, table)
    return result


def _classic_imports(release: Release) -> tuple[Import, ...]:
    """What a classic module may import: the out-of-tree table and, where shard_map
    checks replication, the module whose functions register its rules."""
    replication = release.get("shard_map_replication")
    if replication is None:
        return imports.OUT_OF_TREE
    assert isinstance(replication, tuple)  # (module, registrar names)
    return imports.OUT_OF_TREE + (Import(*replication[0].rsplit(".", 1)),)


def _hijax_imports(spec: PrimitiveSpec, release: Release) -> tuple[Import, ...]:
    """What a hijax module may import; UnsupportedRelease if the release lacks it."""
    base = feature_text(release.require("hijax_base", "--style hijax"))
    if spec.linear:
        release.require("hijax_accum_check", "--style hijax --linear")
    return imports.OUT_OF_TREE + tuple(Import("jax.experimental.hijax", name)
                                       for name in (base, "instantiate_zeros", "GradAccum"))

"""`jaxmap new-primitive`: generate a JAX primitive, its rules and its tests.

  generate(spec, out=..., or in_tree_root=...) -> list[FileChange]   (writes nothing)
  unified_diff(changes) -> str
  apply(changes, force=False) -> list[str]                            (the paths written)
  notes(in_tree_root=..., release=...) -> list[str]                   (one line each)

Generators return file changes; only `apply` touches the disk. Beside new-primitive
(in_tree, out_of_tree, anchors, replication, imports, spec, context, placeholder):
`kinds` for `jaxmap new KIND`, `skill` for the agent skill folder; templates/ holds
every template.

May import: session (to open the index it checks names against), commands, render,
store (atomic writes), knowledge, models, roots, errors; never the front ends.
"""

from __future__ import annotations

import os

from jaxmap.errors import AnchorError, NameTaken, SpecError, TargetError
from jaxmap.knowledge import versions
from jaxmap.knowledge.versions import Release, UnsupportedRelease
from jaxmap.scaffold.files import (
    FileChange,
    apply,
    check,
    file_diffs,
    new_file,
    unified_diff,
)
from jaxmap.scaffold.spec import PrimitiveSpec, parse_params

__all__ = ["AnchorError", "FileChange", "NameTaken", "PrimitiveSpec", "SpecError",
           "TargetError", "UnsupportedRelease", "apply", "check", "file_diffs", "generate",
           "new_primitive", "new_primitive_notes", "notes", "parse_params", "unified_diff"]


def generate(spec: PrimitiveSpec, *, out: str | None = None,
             in_tree_root: str | None = None, module: str | None = None,
             tests_dir: str | None = None, index_root: str | None = None,
             release: Release | None = None) -> list[FileChange]:
    """The file changes that add `spec`'s primitive; nothing is written.

    Out of tree (default): `<out>/<name>.py` and `<out>/test_<name>.py`, out
    defaulting to the working directory; the name must not be a primitive of
    `index_root` (default: the installed jax). In tree (`in_tree_root` given):
    the module (`module`, default a new `jax/_src/lax/<name>.py`), its export
    from `jax/lax/__init__.py` and `<tests_dir>/<name>_test.py` (default
    `<root>/tests`); the name must not be a primitive of that root.
    The code targets `release`, by default the installed jax's, or in tree the
    checkout's; a release that lacks what the spec needs is UnsupportedRelease.
    """
    spec.validate()
    if in_tree_root is not None:
        from jaxmap.roots import resolve_root
        from jaxmap.scaffold import in_tree

        root = resolve_root(in_tree_root)
        result = in_tree.changes(spec, root, release or versions.of_checkout(root),
                                 module, tests_dir)
        check_name_free(spec, root)
        return result
    given = [flag for flag, value in (("--module", module), ("--tests-dir", tests_dir))
             if value]
    if given:
        raise SpecError(f"{', '.join(given)} applies only with --in-tree")
    result = _out_of_tree(spec, release or versions.installed(),
                          os.path.abspath(out or os.curdir))
    check_name_free(spec, index_root)
    return result


def new_primitive(name: str, *, out: str | None = None, in_tree: bool = False,
                  root: str | None = None, module: str | None = None,
                  tests_dir: str | None = None, style: str = "classic", arity: int = 1,
                  linear: bool = False, multiple_results: bool = False,
                  params: str | None = None, platforms: tuple[str, ...] = (),
                  lowering: str = "lower_fun", no_tests: bool = False) -> list[FileChange]:
    """`jaxmap new-primitive`'s arguments -> `generate`'s file changes: in the JAX tree
    at `root` with `in_tree`, else in `out`, checked against `root`'s primitives."""
    spec = PrimitiveSpec(name=name, arity=arity, linear=linear,
                         multiple_results=multiple_results, params=parse_params(params),
                         platforms=tuple(platforms), style=style, lowering=lowering,
                         tests=not no_tests)
    if in_tree:
        return generate(spec, in_tree_root=root or os.curdir, module=module,
                        tests_dir=tests_dir)
    return generate(spec, out=out, index_root=root, module=module, tests_dir=tests_dir)


def new_primitive_notes(name: str, *, in_tree: bool = False, root: str | None = None,
                        **options) -> list[str]:
    """`notes` for the target of `new_primitive(name, ...)`, given the same arguments."""
    del name, options  # The notes depend on the target release alone.
    return notes(in_tree_root=(root or os.curdir) if in_tree else None)


def notes(*, in_tree_root: str | None = None, release: Release | None = None) -> list[str]:
    """One line for each way the target release (as `generate` picks it) keeps a
    generated primitive from working as users call it, and what to pass instead."""
    if release is None:
        from jaxmap.roots import resolve_root

        release = (versions.of_checkout(resolve_root(in_tree_root))
                   if in_tree_root is not None else versions.installed())
    argument = release.get("shard_map_grad_argument")
    if argument is None:
        return []
    return [(f"jax {release.text} fails jax.grad inside shard_map for any result that "
             f"varies across the mesh, jax's own primitives' too; pass {argument} to "
             f"shard_map there")]


def _out_of_tree(spec: PrimitiveSpec, release: Release, out: str) -> list[FileChange]:
    from jaxmap.scaffold import out_of_tree

    if os.path.exists(out) and not os.path.isdir(out):
        raise TargetError(f"--out {out} is a file; give a directory")
    return [new_file(os.path.join(out, path), path, text)
            for path, text in out_of_tree.files(spec, release).items()]


def check_name_free(spec: PrimitiveSpec, root: str | None) -> None:
    """NameTaken if a primitive of `root`'s index (default: the installed jax)
    already has the name (or, for hijax, the class name)."""
    from jaxmap.session import open_index

    wanted = {spec.name, spec.class_name} if spec.style == "hijax" else {spec.name}
    with open_index(root) as index:
        clash = next((p for p in index.primitives() if p.name in wanted), None)
    if clash is not None:
        raise NameTaken(f"a primitive named {clash.name!r} already exists at "
                        f"{clash.loc.file}:{clash.loc.line}; choose another name")

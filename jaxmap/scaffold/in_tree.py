"""In-tree: a primitive inside a JAX tree, added the way a JAX commit adds one.

The implementation goes to a new module (default `jax/_src/lax/<name>.py`, with
JAX's license header) or is appended to an existing one; the export into
`jax/lax/__init__.py` (into the import block from that module when it has one);
the name into `docs/jax.lax.rst`; an entry into `CHANGELOG.md` under the
unreleased version; an absltest `tests/<name>_test.py` and its target in
`tests/BUILD`; where shard_map checks replication, the primitive's rules into
its module (see replication.py). Edits to existing files are insertions after an
anchor; a missing anchor is an AnchorError and changes nothing.
"""

from __future__ import annotations

import ast
import os

from jaxmap.errors import AnchorError, NameTaken, SpecError, TargetError
from jaxmap.knowledge.versions import Release
from jaxmap.scaffold import anchors, imports, replication
from jaxmap.scaffold.context import context, feature_text
from jaxmap.scaffold.files import FileChange, new_file, read
from jaxmap.scaffold.spec import PrimitiveSpec
from jaxmap.scaffold.templating import fill_block, fill_module

EXPORT_MODULE = "jax/lax/__init__.py"
DOCS_PAGE = "docs/jax.lax.rst"
CHANGELOG = "CHANGELOG.md"
# The module that defines lax's math functions itself: there they need no `lax.`.
LAX_MODULE = "jax/_src/lax/lax.py"


def default_module(spec: PrimitiveSpec) -> str:
    """A new module beside lax's own, so `jax.lax` can export it like the rest."""
    return f"jax/_src/lax/{spec.name}.py"


def changes(spec: PrimitiveSpec, root: str, release: Release, module: str | None = None,
            tests_dir: str | None = None) -> list[FileChange]:
    """Every file change that adds `spec` to the JAX tree at `root` (jax `release`)."""
    if spec.style != "classic":
        raise SpecError("--in-tree generates a classic primitive; --style hijax is "
                        "for out-of-tree modules")
    if not os.path.isfile(os.path.join(root, "jax", "__init__.py")):
        raise TargetError(f"{root} holds no jax/ package; --in-tree wants a JAX "
                          f"checkout (or a directory holding jax/)")
    relative = _module_path(module or default_module(spec), root)
    result = [_implementation(spec, root, relative, release),
              _export(spec, root, _dotted(relative)),
              _edit(root, DOCS_PAGE, lambda text: anchors.docs_entry(
                  text, DOCS_PAGE, "Operators", spec.name)),
              _edit(root, CHANGELOG, lambda text: anchors.changelog_entry(
                  text, CHANGELOG, f"Added {{func}}`jax.lax.{spec.name}`."))]
    result += _replication_rules(spec, root, _dotted(relative), release)
    if spec.tests:
        result += _tests(spec, root, tests_dir, release)
    return result


def _replication_rules(spec, root, dotted, release) -> list[FileChange]:
    """Where the release's shard_map checks replication, its module registering the
    primitive's rules; nothing where its loop over lax's modules does already."""
    rules = release.get("shard_map_replication")
    if rules is None:
        return []
    module, registrars = rules
    label = module.replace(".", "/") + ".py"
    change = _edit(root, label, lambda text: replication.register(
        text, label, dotted, f"{spec.name}_p", registrars))
    return [change] if change.new != change.old else []


def _module_path(module: str, root: str) -> str:
    """`jax/_src/x.py` or `jax._src.x` -> a POSIX path relative to root, under jax/."""
    path = module if module.endswith(".py") else module.replace(".", "/") + ".py"
    path = os.path.relpath(os.path.abspath(os.path.join(root, path)), root)
    path = path.replace(os.sep, "/")
    if not path.startswith("jax/") or path.startswith("jax/../"):
        raise SpecError(f"--module {module} is not under {root}/jax/; give a module "
                        f"such as jax/_src/lax/lax.py")
    if os.path.isdir(os.path.join(root, path[:-3])):
        raise SpecError(f"--module {module} names a package; give a .py module")
    return path


def _dotted(relative: str) -> str:
    return relative[:-3].replace("/", ".")


def _implementation(spec, root, relative, release) -> FileChange:
    path = os.path.join(root, relative)
    ctx = context(spec, release, in_tree=True, ns="" if relative == LAX_MODULE else None)
    if not os.path.exists(path):
        return new_file(path, relative, fill_module("classic.py.j2", ctx,
                                                    imports.IN_TREE_MODULE, sort=False))
    old = read(path)
    tree = _parse(old, relative)
    bound = _top_level_names(tree)
    taken = {spec.name, f"{spec.name}_p"} & bound
    if taken:
        raise NameTaken(f"{relative} already defines {', '.join(sorted(taken))}; "
                        f"choose another name or module")
    ctx = {**ctx, "lax_helper": _lax_helper(spec, bound)}
    body = fill_block("classic.py.j2", "body", ctx)
    lines = imports.missing(imports.IN_TREE_MODULE, body, bound)
    new = anchors.insert(old, _last_import_end(tree, relative, lambda node: True), lines)
    return FileChange(path, relative, old, new.rstrip("\n") + "\n\n\n" + body)


def _lax_helper(spec: PrimitiveSpec, bound: set[str]) -> str | None:
    """The factory lax's own elementwise primitives use, where the module binds it
    (and `_float`) and the primitive fits it: one result, float operands."""
    helper = "standard_unop" if spec.arity == 1 else "standard_naryop"
    if spec.multiple_results or not {helper, "_float"} <= bound:
        return None
    return helper


def _export(spec, root, dotted) -> FileChange:
    path = os.path.join(root, EXPORT_MODULE)
    if not os.path.isfile(path):
        raise AnchorError(f"{EXPORT_MODULE} not found under {root}; add the export of "
                          f"{spec.name} by hand")
    old = read(path)
    tree = _parse(old, EXPORT_MODULE)
    if {spec.name, f"{spec.name}_p"} & _top_level_names(tree):
        raise NameTaken(f"{EXPORT_MODULE} already exports {spec.name}; choose another "
                        f"name")
    names = [spec.name, f"{spec.name}_p"]
    block = _import_block(tree, dotted)
    if block is None:
        anchor = _last_import_end(tree, EXPORT_MODULE, _imports_from_src)
        lines = [f"from {dotted} import (", *(f"  {n} as {n}," for n in names), ")"]
        return FileChange(path, EXPORT_MODULE, old, anchors.insert(old, anchor, lines))
    later = [a.lineno for a in block.names if a.name > spec.name]
    index = (later[0] if later else block.names[-1].lineno + 1) - 1
    indent = " " * block.names[0].col_offset
    return FileChange(path, EXPORT_MODULE, old, anchors.insert(
        old, index, [f"{indent}{n} as {n}," for n in names]))


def _import_block(tree: ast.Module, dotted: str) -> ast.ImportFrom | None:
    """The `from <dotted> import (...)` statement with one name per line, if any."""
    for node in tree.body:
        if (isinstance(node, ast.ImportFrom) and node.module == dotted
                and len({a.lineno for a in node.names}) == len(node.names)
                and node.names[0].lineno > node.lineno):
            return node
    return None


def _edit(root: str, label: str, edit) -> FileChange:
    """The change `edit` (text -> text, raising AnchorError) makes to `root/label`
    (`label` may be absolute)."""
    path = os.path.join(root, label)
    if not os.path.isfile(path):
        raise AnchorError(f"{label} not found under {root}; --in-tree edits it as a "
                          f"JAX commit would, so it wants a full checkout")
    old = read(path)
    return FileChange(path, label, old, edit(old))


def _tests(spec, root, tests_dir, release) -> list[FileChange]:
    """The absltest module and its target in the tests directory's BUILD."""
    directory = tests_dir or os.path.join(root, "tests")
    if not os.path.isdir(directory):
        raise TargetError(f"no tests directory {directory}; give one, or generate "
                          f"without tests")
    path = os.path.join(directory, f"{spec.name}_test.py")
    ctx = context(spec, release, in_tree=True)
    test = new_file(path, _label(path, root), fill_module(
        "test_absltest.py.j2", ctx, _test_imports(release), sort=False))
    build = _label(os.path.join(directory, "BUILD"), root)
    return [test, _edit(root, build, lambda text: anchors.build_target(
        text, build, f"{spec.name}_test"))]


def _test_imports(release: Release) -> tuple[imports.Import, ...]:
    module = feature_text(release.get("shard_map_module"))
    if module == "jax":
        return imports.IN_TREE_TEST
    return imports.IN_TREE_TEST + (imports.Import(module, "shard_map", section=imports.LOCAL),)


def _label(path: str, root: str) -> str:
    label = os.path.relpath(path, root).replace(os.sep, "/")
    return path if label.startswith("../") else label


def _parse(text: str, label: str) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError as error:
        raise AnchorError(f"{label} does not parse ({error.msg}, line {error.lineno}); "
                          f"fix it first") from error


def _top_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _imports_from_src(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and (node.module or "").startswith("jax._src")


def _last_import_end(tree: ast.Module, label: str, wanted) -> int:
    """The line after the last top-level import statement that `wanted` accepts."""
    ends = [anchors.end_line(node) for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom)) and wanted(node)]
    if not ends:
        raise AnchorError(f"{label} has no top-level import to insert after; add the "
                          f"code by hand or choose another module")
    return ends[-1]

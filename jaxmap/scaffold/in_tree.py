"""In-tree: a primitive inside a JAX tree, where a contributor would add it.

The implementation goes to a new module (default `jax/_src/lax/<name>.py`) or is
appended to an existing one, the export into `jax/lax/__init__.py`, the tests to
`tests/<name>_test.py`. Edits to existing files are insertions after an anchor
statement found with `ast`; a missing anchor is an AnchorError and changes nothing.
"""

from __future__ import annotations

import ast
import os

from jaxmap.scaffold.context import context
from jaxmap.errors import AnchorError, NameTaken, SpecError, TargetError
from jaxmap.scaffold.files import FileChange, new_file, read
from jaxmap.scaffold.templating import fill, fill_block
from jaxmap.scaffold.spec import PrimitiveSpec

EXPORT_MODULE = "jax/lax/__init__.py"


def default_module(spec: PrimitiveSpec) -> str:
    """A new module beside lax's own, so `jax.lax` can export it like the rest."""
    return f"jax/_src/lax/{spec.name}.py"


def changes(spec: PrimitiveSpec, root: str, module: str | None = None,
            tests_dir: str | None = None) -> list[FileChange]:
    """Every file change that adds `spec` to the JAX tree at `root`."""
    if spec.style != "classic":
        raise SpecError("--in-tree generates a classic primitive; --style hijax is "
                        "for out-of-tree modules")
    if not os.path.isfile(os.path.join(root, "jax", "__init__.py")):
        raise TargetError(f"{root} holds no jax/ package; --in-tree wants a JAX "
                          f"checkout (or a directory holding jax/)")
    relative = _module_path(module or default_module(spec), root)
    ctx = context(spec, in_tree=True)
    result = [_implementation(spec, root, relative, ctx),
              _export(spec, root, EXPORT_MODULE, _dotted(relative))]
    if spec.tests:
        result.append(_tests(spec, root, tests_dir, ctx))
    return result


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


def _implementation(spec, root, relative, ctx) -> FileChange:
    path = os.path.join(root, relative)
    if not os.path.exists(path):
        return new_file(path, relative, fill("classic.py.j2", ctx))
    old = read(path)
    tree = _parse(old, relative)
    taken = {spec.name, f"{spec.name}_p"} & _top_level_names(tree)
    if taken:
        raise NameTaken(f"{relative} already defines {', '.join(sorted(taken))}; "
                        f"choose another name or module")
    lines = old.splitlines(keepends=True)
    present = {line.strip() for line in lines}
    imports = [line for line in fill_block("classic.py.j2", "imports", ctx).splitlines()
               if line.strip() and line.strip() not in present]
    anchor = _last_import_end(tree, relative, lambda node: True)
    body = fill_block("classic.py.j2", "body", ctx)
    new = "".join(lines[:anchor] + [line + "\n" for line in imports] + lines[anchor:])
    new = new.rstrip("\n") + "\n\n" + body
    return FileChange(path, relative, old, new)


def _export(spec, root, export_module, dotted) -> FileChange:
    path = os.path.join(root, export_module)
    if not os.path.isfile(path):
        raise AnchorError(f"{export_module} not found under {root}; pass the module "
                          f"that should export {spec.name}")
    old = read(path)
    tree = _parse(old, export_module)
    if {spec.name, f"{spec.name}_p"} & _top_level_names(tree):
        raise NameTaken(f"{export_module} already exports {spec.name}; choose another "
                        f"name")
    anchor = _last_import_end(tree, export_module, _imports_from_src)
    block = (f"from {dotted} import (\n  {spec.name} as {spec.name},\n"
             f"  {spec.name}_p as {spec.name}_p,\n)\n")
    lines = old.splitlines(keepends=True)
    return FileChange(path, export_module, old,
                      "".join(lines[:anchor] + [block] + lines[anchor:]))


def _tests(spec, root, tests_dir, ctx) -> FileChange:
    directory = tests_dir or os.path.join(root, "tests")
    if not os.path.isdir(directory):
        raise TargetError(f"no tests directory {directory}; give one, or generate "
                          f"without tests")
    path = os.path.join(directory, f"{spec.name}_test.py")
    label = os.path.relpath(path, root).replace(os.sep, "/")
    if label.startswith("../"):
        label = path
    return new_file(path, label, fill("test.py.j2", ctx))


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
    ends = [node.end_lineno for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom)) and wanted(node)]
    if not ends:
        raise AnchorError(f"{label} has no top-level import to insert after; add the "
                          f"code by hand or choose another module")
    return ends[-1]

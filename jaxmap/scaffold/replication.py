"""In tree: shard_map's replication rules for a new primitive, registered in JAX's
shard_map module beside those of lax's own primitives.

Releases whose shard_map checks replication (`check_rep`) register the standard
rules for lax's primitives in a loop over the `__dict__` of lax's modules; a
primitive in another module gets them by name after that loop, as JAX registers
the rules of `ffi_call_p` or `linear_solve_p`. `register` returns the module's
new text, unchanged when the loop already covers the primitive's module, or
raises AnchorError (one line) so that the caller changes nothing.
"""

from __future__ import annotations

import ast

from jaxmap.errors import AnchorError, NameTaken
from jaxmap.scaffold.anchors import end_line, insert


def register(text: str, label: str, module: str, var: str,
             registrars: tuple[str, ...]) -> str:
    """`text` (shard_map's module) with `registrars` called on `var`, the primitive
    defined in `module` (dotted), after the loop that registers lax's primitives."""
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        raise AnchorError(f"{label} does not parse ({error.msg}, line {error.lineno}); "
                          f"register {var}'s replication rules by hand") from None
    loop = _registering_loop(tree, registrars[0])
    if loop is None:
        raise AnchorError(f"{label} has no loop calling {registrars[0]} on lax's "
                          f"primitives; register {var}'s replication rules by hand")
    bound = _imported(tree)
    if module in {bound.get(name) for name in _modules_iterated(loop)}:
        return text
    if var in bound:
        raise NameTaken(f"{label} already imports {var}; choose another name")
    text = insert(text, end_line(loop), ["", *(f"{r}({var})" for r in registrars)])
    before = tree.body[:tree.body.index(loop)]
    last_import = max((end_line(node) for node in before
                       if isinstance(node, (ast.Import, ast.ImportFrom))), default=0)
    return insert(text, last_import, [f"from {module} import {var}"])


def _registering_loop(tree: ast.Module, registrar: str) -> ast.For | None:
    """The first top-level `for` whose body calls `registrar`."""
    for node in tree.body:
        if isinstance(node, ast.For) and any(
                isinstance(call, ast.Call) and getattr(call.func, "id", None) == registrar
                for call in ast.walk(node)):
            return node
    return None


def _modules_iterated(loop: ast.For) -> set[str]:
    """The names `X` of the `X.__dict__` values the loop runs over."""
    return {node.value.id for node in ast.walk(loop.iter)
            if isinstance(node, ast.Attribute) and node.attr == "__dict__"
            and isinstance(node.value, ast.Name)}


def _imported(tree: ast.Module) -> dict[str, str]:
    """{name bound by a top-level `from M import N [as A]`: 'M.N'}."""
    return {alias.asname or alias.name: f"{node.module}.{alias.name}"
            for node in tree.body if isinstance(node, ast.ImportFrom)
            for alias in node.names}

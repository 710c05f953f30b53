"""The import statements a generated module needs: those whose name its code reads.

A table lists candidate imports, each with the name it binds and its section
(standard library, third party, the generated package). `needed` keeps those
the code uses, so no generated file imports what it does not use, and prints them
either sorted and merged as ruff's default isort rules want (out of tree), or one
per line in table order, as JAX's own modules are written (in tree). `missing`
also drops the names a module being edited binds already.
"""

from __future__ import annotations

import io
import tokenize
from typing import NamedTuple

# Sections, printed in this order with a blank line between them.
STDLIB, THIRD_PARTY, LOCAL = 0, 1, 2


class Import(NamedTuple):
    """`import module [as asname]` (name None) or `from module import name [as asname]`."""

    module: str
    name: str | None = None
    asname: str | None = None
    section: int = THIRD_PARTY

    @property
    def binds(self) -> str:
        return self.asname or self.name or self.module.split(".")[0]

    @property
    def line(self) -> str:
        alias = f" as {self.asname}" if self.asname else ""
        if self.name is None:
            return f"import {self.module}{alias}"
        return f"from {self.module} import {self.name}{alias}"


OUT_OF_TREE = (
    Import("importlib", section=STDLIB), Import("os", section=STDLIB), Import("re", section=STDLIB),
    Import("subprocess", section=STDLIB), Import("sys", section=STDLIB),
    Import("jax"), Import("jax", "export"), Import("jax.extend", "core"),
    Import("jax.extend.mlir.dialects", "stablehlo", "hlo"),
    Import("jax.interpreters", "ad"), Import("jax.interpreters", "batching"),
    Import("jax.interpreters", "mlir"), Import("jax.numpy", asname="jnp"),
    Import("jax.sharding", "Mesh"), Import("jax.sharding", "NamedSharding"),
    Import("jax.sharding", "PartitionSpec", "P"), Import("jax.test_util", "check_grads"),
    Import("numpy", asname="np"), Import("pytest"),
)

IN_TREE_MODULE = (
    Import("functools", "partial", section=STDLIB),
    Import("numpy", asname="np"),
    Import("jax._src", "core", section=LOCAL), Import("jax._src", "dispatch", section=LOCAL),
    Import("jax._src.interpreters", "ad", section=LOCAL),
    Import("jax._src.interpreters", "batching", section=LOCAL),
    Import("jax._src.interpreters", "mlir", section=LOCAL),
    Import("jax._src.lax", "lax", section=LOCAL),
    Import("jax._src.lib.mlir.dialects", "hlo", section=LOCAL),
)

IN_TREE_TEST = (
    Import("contextlib", section=STDLIB),
    Import("absl.testing", "absltest"), Import("absl.testing", "parameterized"),
    Import("numpy", asname="np"),
    Import("jax", section=LOCAL), Import("jax", "export", section=LOCAL),
    Import("jax", "lax", section=LOCAL), Import("jax.numpy", asname="jnp", section=LOCAL),
    Import("jax._src", "test_util", "jtu", section=LOCAL),
    Import("jax.sharding", "Mesh", section=LOCAL),
    Import("jax.sharding", "NamedSharding", section=LOCAL),
    Import("jax.sharding", "PartitionSpec", "P", section=LOCAL),
)


def used_names(code: str) -> set[str]:
    """The names `code` reads: NAME tokens not after a `.`, outside strings and comments."""
    names, previous = set(), None
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.NAME and previous != ".":
            names.add(token.string)
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            previous = token.string
    return names


def needed(table: tuple[Import, ...], code: str, *, sort: bool = True) -> str:
    """The import block for `code`: the table's imports whose name it reads,
    isort-sorted (`sort`) or one per line in table order."""
    used = used_names(code)
    chosen = [imp for imp in table if imp.binds in used]
    sections = sorted({imp.section for imp in chosen})
    return "\n\n".join(
        "\n".join(_sorted_lines(part) if sort else [imp.line for imp in part])
        for part in ([imp for imp in chosen if imp.section == s] for s in sections))


def missing(table: tuple[Import, ...], code: str, bound: set[str]) -> list[str]:
    """One line per import `code` needs that a module binding `bound` lacks."""
    used = used_names(code) - bound
    return [imp.line for imp in table if imp.binds in used]


def _sorted_lines(section: list[Import]) -> list[str]:
    """ruff's default isort order: `import` statements, then `from` statements by
    module, a module's plain names merged into one statement (constants, classes,
    then the rest) and each aliased name in its own."""
    straight = sorted((imp for imp in section if imp.name is None),
                      key=lambda imp: imp.module.lower())
    lines = [imp.line for imp in straight]
    froms = [(imp, imp.name) for imp in section if imp.name is not None]
    for module in sorted({imp.module for imp, _ in froms}, key=str.lower):
        names = sorted((name for imp, name in froms if imp.module == module and not imp.asname),
                       key=_member_order)
        if names:
            lines.append(f"from {module} import {', '.join(names)}")
        lines += sorted(imp.line for imp, _ in froms if imp.module == module and imp.asname)
    return lines


def _member_order(name: str) -> tuple[int, str]:
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name

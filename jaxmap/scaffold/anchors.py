"""Insertions into JAX's own non-Python files, each after an anchor it finds.

  docs_entry:      the name into the first autosummary list under a heading
  changelog_entry: an item under "New features" of the unreleased version
  build_target:    a jax_multiplatform_test target after the last one

Each returns the new text, or raises AnchorError (one line, naming the file and
the anchor) so that the caller changes nothing.
"""

from __future__ import annotations

import ast
import re

from jaxmap.errors import AnchorError, NameTaken


def insert(text: str, index: int, new_lines: list[str]) -> str:
    """`text` with `new_lines` (each without its newline) before line `index` (0-based)."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n") and index >= len(lines):
        lines[-1] += "\n"
    return "".join(lines[:index] + [line + "\n" for line in new_lines] + lines[index:])


def end_line(node: ast.stmt) -> int:
    """The last line of a parsed statement (ast.parse gives every node its position)."""
    assert node.end_lineno is not None
    return node.end_lineno


def docs_entry(text: str, label: str, heading: str, name: str) -> str:
    """`name` after the last entry that sorts before it in the first
    `.. autosummary::` list of the section titled `heading`."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines[:-1]) if line.strip() == heading
                  and set(lines[i + 1].strip()) <= set("-=~^") and lines[i + 1].strip()),
                 None)
    if start is None:
        raise AnchorError(f"{label} has no {heading!r} section; list {name} in its "
                          f"documentation by hand")
    entries = _autosummary_entries(lines, start + 2)
    if not entries:
        raise AnchorError(f"{label} has no autosummary list under {heading!r}; list "
                          f"{name} in its documentation by hand")
    if name in (lines[i].strip() for i in entries):
        raise NameTaken(f"{label} already lists {name}; choose another name")
    before = [i for i in entries if lines[i].strip() < name]
    index = before[-1] + 1 if before else entries[0]
    indent = lines[entries[0]][:len(lines[entries[0]]) - len(lines[entries[0]].lstrip())]
    return insert(text, index, [indent + name])


def _autosummary_entries(lines: list[str], start: int) -> list[int]:
    """The line numbers of the entries of the first autosummary block from `start`."""
    block = next((i for i in range(start, len(lines))
                  if lines[i].startswith(".. autosummary::")), None)
    entries = []
    for i in range(block + 1, len(lines)) if block is not None else ():
        stripped = lines[i].strip()
        if stripped and not lines[i][0].isspace():
            break
        if stripped and not stripped.startswith(":"):
            entries.append(i)
    return entries


_UNRELEASED = re.compile(r"^## .*unreleased", re.IGNORECASE)


def changelog_entry(text: str, label: str, item: str) -> str:
    """`item` (one markdown list item) under "New features" of the unreleased
    version's section, adding that sub-heading if the section lacks it."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _UNRELEASED.match(line)), None)
    if start is None:
        raise AnchorError(f"{label} has no '## Unreleased' section; add the entry "
                          f"by hand")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
               len(lines))
    features = next((i for i in range(start + 1, end)
                     if lines[i].strip() == "* New features"), None)
    if features is not None:
        return insert(text, features + 1, [f"  * {item}"])
    return insert(text, start + 1, ["", "* New features", f"  * {item}"])


def build_target(text: str, label: str, name: str) -> str:
    """A `jax_multiplatform_test` target for `<name>.py` after the last one."""
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        raise AnchorError(f"{label} does not parse ({error.msg}, line {error.lineno}); "
                          f"add the test target by hand") from None
    targets = [node for node in tree.body if isinstance(node, ast.Expr)
               and isinstance(node.value, ast.Call)
               and getattr(node.value.func, "id", None) == "jax_multiplatform_test"]
    if not targets:
        raise AnchorError(f"{label} has no jax_multiplatform_test target to add "
                          f"{name} after; add it by hand")
    if f'name = "{name}"' in text:
        raise NameTaken(f"{label} already has a target {name}; choose another name")
    return insert(text, end_line(targets[-1]), [
        "", "jax_multiplatform_test(", f'    name = "{name}",', f'    srcs = ["{name}.py"],',
        '    deps = py_deps([', '        "absl/testing",', '        "numpy",', "    ]),", ")"])

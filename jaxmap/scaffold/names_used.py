"""The names generated Python uses, read off the generated text itself.

  names_used(text) -> frozenset[str]

A name the user picks must not be one its module also uses for something else:
`def x(x):` shadows the function inside itself, `def jnp(...)` the import.
Generating once under a placeholder name and reading the result keeps the list
true as the templates change.
"""

from __future__ import annotations

import ast


def names_used(text: str) -> frozenset[str]:
    """Every name the module `text` binds or reads: imports, functions, classes (not
    methods), parameters, locals, globals and the builtins it calls."""
    tree = ast.parse(text)
    methods = {id(item) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
               for item in node.body}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.alias):
            found.add(node.asname or node.name.partition(".")[0])
        elif isinstance(node, ast.Global | ast.Nonlocal):
            found.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef) and id(node) not in methods:
            found.add(node.name)
    return frozenset(found)

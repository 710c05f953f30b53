"""Out-of-tree: a primitive in the user's own package, OUT/<name>.py and its tests."""

from __future__ import annotations

from jaxmap.scaffold.context import context
from jaxmap.scaffold.templating import fill
from jaxmap.scaffold.spec import PrimitiveSpec


def files(spec: PrimitiveSpec) -> dict[str, str]:
    """{relative path: text}: `<name>.py` and, unless `spec.tests` is off, its tests."""
    ctx = context(spec)
    template = "hijax.py.j2" if spec.style == "hijax" else "classic.py.j2"
    result = {f"{spec.name}.py": fill(template, ctx)}
    if spec.tests:
        result[f"test_{spec.name}.py"] = fill("test.py.j2", ctx)
    return result

"""JSON documents; other tools depend on these shapes (documented in the README)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from jaxmap.models import Definition, Primitive, Rule

if TYPE_CHECKING:
    from typing import Callable

    PathFn = Callable[[str], str]


def _same(path: str) -> str:
    return path


def primitive(prim: Primitive, path: PathFn = _same) -> dict:
    return {"name": prim.name, "variable": prim.variable, "module": prim.module,
            "style": prim.style, "file": path(prim.loc.file), "line": prim.loc.line,
            "end_line": prim.loc.end_line, "rules": [rule(r, path) for r in prim.rules]}


def rule(r: Rule, path: PathFn = _same) -> dict:
    function = None
    if r.function is not None:
        function = {"name": r.function.name, "file": path(r.function.loc.file),
                    "line": r.function.loc.line}
    return {"kind": r.kind.value, "file": path(r.loc.file), "line": r.loc.line,
            "end_line": r.loc.end_line, "via": r.via, "platform": r.platform,
            "function": function}


def definition(d: Definition, path: PathFn = _same) -> dict:
    return {"name": d.name, "qualname": d.qualname, "kind": d.kind.value,
            "file": path(d.loc.file), "line": d.loc.line, "end_line": d.loc.end_line,
            "public_paths": list(d.public_paths), "summary": d.summary}


def primitives_document(root: str, jax_version, prims, path: PathFn = _same) -> str:
    return _dump({"root": str(root), "jax_version": jax_version,
                  "primitives": [primitive(p, path) for p in prims]})


def located_document(root: str, jax_version, found, path: PathFn = _same) -> str:
    return _dump({"root": str(root), "jax_version": jax_version, "query": found.query,
                  "primitives": [{**primitive(p, path), "tests": [
                      {"name": t.name, "file": path(t.loc.file), "line": t.loc.line}
                      for t in p.tests]} for p in found.primitives],
                  "definitions": [definition(d, path) for d in found.definitions]})


def _dump(document: dict) -> str:
    return json.dumps(document, indent=1)

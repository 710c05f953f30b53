"""Output of `jaxmap explain`: an explain.Explanation as text or JSON."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    PathFn = Callable[[str], str]

_RAISED_BY = 8  # places that raise the exception, in text


def text(found, path: PathFn) -> str:
    lines = [found.message]
    # An exception class's __init__, or a helper that returns the exception, builds the
    # message; where it is raised follows.
    first = "built in" if found.raised_by or found.sites[0].returned else "raised at"
    for i, site in enumerate(found.sites):
        label = first if i == 0 else ""
        lines.append(f"  {label:<14} {path(site.file)}:{site.line}  {site.exception} in "
                     f"{site.function}")
    for i, site in enumerate(found.raised_by[:_RAISED_BY]):
        label = "raised by" if i == 0 else ""
        lines.append(f"  {label:<14} {path(site.file)}:{site.line}  {site.function}")
    if len(found.raised_by) > _RAISED_BY:
        lines.append(f"  {'':<14} ({len(found.raised_by) - _RAISED_BY} more; --json has all)")
    missing = found.missing
    if missing is None:
        return "\n".join(lines)
    prim = missing.primitive
    platforms = f" for {', '.join(missing.platforms)}" if missing.platforms else ""
    lines.append(f"missing rule: {missing.kind}{platforms} of {missing.style} primitive "
                 f"{missing.name}")
    if prim is not None:
        lines.append(f"  {'primitive':<14} {prim.name}  {path(prim.loc.file)}:{prim.loc.line}")
        kinds = sorted({r.kind.value for r in prim.rules})
        lines.append(f"  {'has rules':<14} {', '.join(kinds) or 'none'}")
    else:
        lines.append(f"  {'primitive':<14} {missing.name}  (not defined in the indexed tree)")
    for i, (name, file, line) in enumerate(missing.register_with):
        label = "register with" if i == 0 else ""
        lines.append(f"  {label:<14} {name}  {path(file)}:{line}")
    for i, s in enumerate(missing.siblings):
        label = "examples" if i == 0 else ""
        rule = f"  -> {s.function}" if s.function else ""
        lines.append(f"  {label:<14} {s.name}: its {missing.kind} rule  "
                     f"{path(s.file)}:{s.line}{rule}")
    if missing.flag:
        lines.append(f"  {'generate':<14} jaxmap new-primitive NAME {missing.flag}")
    return "\n".join(lines)


def document(root: str, found, path: PathFn) -> str:
    missing = found.missing
    return json.dumps({
        "root": str(root), "message": found.message,
        "sites": [{"file": path(s.file), "line": s.line, "function": s.function,
                   "exception": s.exception, "returned": s.returned} for s in found.sites],
        "raised_by": [{"file": path(s.file), "line": s.line, "function": s.function,
                       "exception": s.exception, "returned": s.returned}
                      for s in found.raised_by],
        "missing_rule": None if missing is None else {
            "kind": missing.kind, "style": missing.style, "name": missing.name,
            "platforms": list(missing.platforms),
            "primitive": None if missing.primitive is None else {
                "name": missing.primitive.name, "file": path(missing.primitive.loc.file),
                "line": missing.primitive.loc.line,
                "rules": sorted({r.kind.value for r in missing.primitive.rules})},
            "register_with": [{"name": n, "file": path(f), "line": li}
                              for n, f, li in missing.register_with],
            "siblings": [{"name": s.name, "file": path(s.file), "line": s.line,
                          "function": s.function} for s in missing.siblings],
            "new_primitive_flag": missing.flag}}, indent=1)

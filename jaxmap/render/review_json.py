"""`jaxmap diff BASE..HEAD --json`: a commands.review.Review as one document (schema in
the README)."""

from __future__ import annotations

from jaxmap.render.paging import dump


def review_document(result, checks: tuple[str, ...] = (),
                    tripped: list[tuple[str, int]] | None = None) -> str:
    """The review as JSON; `checks`: those --fail-on asked for, `tripped`: (check, how
    many findings trip it) of each that did."""
    prims = result.primitives
    return dump({
        "base": result.base._asdict(), "head": result.head._asdict(),
        "files": list(result.files),
        "primitives": {"added": list(prims.added), "removed": list(prims.removed),
                       "renamed": [{"old": old, "new": new} for old, new in prims.renamed]},
        "rules": [change._asdict() for change in prims.rules],
        "rule_functions_edited": [edited._asdict() for edited in result.edited_rules],
        "reach": [change._asdict() for change in result.reach],
        "messages": [{"change": c.change, "old": _message(c.old), "new": _message(c.new)}
                     for c in result.messages],
        "gaps": [gap._asdict() for gap in result.gaps],
        "tests": [{"primitive": c.primitive, "files": list(c.files)} for c in result.coverage],
        "uncovered": list(result.uncovered),
        "left_out": dict(zip(("primitives", "rules"), prims.left_out)),
        "fail_on": {"checks": list(checks),
                    "tripped": [{"check": check, "findings": count}
                                for check, count in tripped or ()]},
    })


def _message(message) -> dict | None:
    return None if message is None else message._asdict()

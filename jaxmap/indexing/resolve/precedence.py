"""Which registrations of a rule another overrides, where the order they run in is
certain: both in one file (one module, run top to bottom once when imported), the
later one a statement of the module's own top level that no loop, branch, `try`,
`with` or class holds (facts' `straight` lines), under no `if` nothing decides, and
serving every platform the earlier one does. Registrations in two modules run in
import order, which the index does not know, so neither is said to override the
other; nor is a trace rule (a Trace class's method, one per class) or a hijax
primitive's method."""

from __future__ import annotations

from collections import defaultdict

from jaxmap.knowledge.precedence import keyed_by_primitive, table
from jaxmap.models import RuleKind
from jaxmap.store.records import PrimitiveRecord, RuleRecord


def mark_overridden(primitives: list[PrimitiveRecord],
                    straight: dict[str, frozenset[int]]) -> None:
    """Give each rule that a later registration certainly overrides `overridden_by`:
    the line of the last such registration (in its file). `straight`: file -> the
    lines of its top level's straight statements."""
    for prim in primitives:
        if prim.style == "hijax":
            continue
        same: dict[tuple[str, str, str], list[RuleRecord]] = defaultdict(list)
        for rule in prim.rules:
            way = table(rule.via)
            if rule.kind != RuleKind.TRACE.value and keyed_by_primitive(way):
                same[rule.kind, rule.file, way].append(rule)
        for rules in same.values():
            for rule in rules:
                later = [other.line for other in rules if other.line > rule.line
                         and other.condition is None
                         and other.line in straight.get(other.file, ())
                         and _serves(rule) <= _serves(other)]
                rule.overridden_by = max(later, default=None)


def _serves(rule: RuleRecord) -> frozenset[str | None]:
    """The platforms a registration fills an entry of (None: the default rule)."""
    return frozenset(rule.platforms) if rule.platforms else frozenset([rule.platform])

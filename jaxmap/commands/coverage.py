"""The matrix of primitives x rule kinds: how many rules of each kind each primitive
has, lowerings also per platform (`lowering:cpu`, `lowering:default` for a rule
registered for none), and per column how many primitives have one. A Trace method
that handles a call-like primitive counts in its own column, `trace`, and in the
column of the kind its class stands for (`JVPTrace.process_call`: closed_call's jvp),
as `primitives --has/--missing` count it; each row says how many of a column's rules
are such methods. It reads the same primitives as `primitives --json`, so its totals
agree with counts made there."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from jaxmap.commands.lookup import check_rule_kinds, select
from jaxmap.knowledge.traces import by_trace, rule_kinds
from jaxmap.models import Primitive, RuleKind

if TYPE_CHECKING:
    from jaxmap.store.read import Index


class Coverage(NamedTuple):
    kinds: tuple[str, ...]  # the columns
    # (primitive, module, column -> rules, column -> those of them that are Trace methods)
    rows: list[tuple[str, str, dict[str, int], dict[str, int]]]
    totals: dict[str, int]  # column -> primitives with at least one such rule


def run(index: Index, kinds: tuple[str, ...] = (), missing: tuple[str, ...] = (),
        platform: str | None = None) -> Coverage:
    """`jaxmap coverage`: the matrix of the index's primitives (see `coverage`)."""
    check_rule_kinds(kind=kinds, missing=missing)
    return coverage(index.primitives(), tuple(kinds), tuple(missing), platform)


def coverage(prims: list[Primitive], kinds: tuple[str, ...] = (),
             missing: tuple[str, ...] = (), platform: str | None = None) -> Coverage:
    """The matrix of `prims`, only the columns of `kinds` (all when empty; `lowering`
    keeps its platform columns), only primitives lacking every kind in `missing`, and
    only the lowerings that serve `platform` when given."""
    rows = []
    for prim in select(prims, missing, (), platform):
        counts: dict[str, int] = {}
        for rule in prim.rules:
            for column in _columns(rule):
                counts[column] = counts.get(column, 0) + 1
        rows.append((prim.name or prim.variable, prim.module, counts, by_trace(prim.rules)))
    # A kind asked for, or filtered on, keeps its column even where no row has it.
    present = {column for _, _, counts, _ in rows for column in counts} | set(kinds) \
        | set(missing)
    order = [k.value for k in RuleKind]  # received kinds (shape_rule, ...) after these
    columns = sorted(present, key=lambda c: (_position(order, c.partition(":")[0]), c))
    if kinds:
        columns = [c for c in columns if c.partition(":")[0] in kinds]
    totals = {c: sum(1 for _, _, counts, _ in rows if counts.get(c)) for c in columns}
    # Each row's counts of the columns only (the JSON gave every kind's, whatever --kind).
    rows = [(name, module, {c: counts[c] for c in columns if c in counts},
             {c: traced[c] for c in columns if c in traced})
            for name, module, counts, traced in rows]
    return Coverage(tuple(columns), rows, totals)


def _columns(rule) -> list[str]:
    """The columns a rule counts in: its kinds (a Trace method's class's too), and for
    a lowering each platform."""
    if rule.kind != RuleKind.LOWERING:
        return list(rule_kinds(rule))
    platforms = rule.platforms or ((rule.platform,) if rule.platform else ("default",))
    return [rule.kind.value] + [f"lowering:{p}" for p in platforms]


def _position(order: list[str], kind: str) -> int:
    return order.index(kind) if kind in order else len(order)

"""What changed between two indexes (two jax versions, or two trees).

Primitives are matched by name, module and variable, then by name and module, then by
name alone (a primitive that moved module); within one key, in source order. A primitive
left over on each side is paired as renamed when they share a module and the variable
that holds them, or at least two, and half, of the old one's own rule functions (`pjit`
-> `jit`; functions that register rules for at most three primitives, not helpers such
as `standard_rule`), or a module and a name one extends with a `_` suffix, no other
leftover name doing so (`ragged_dot` -> `ragged_dot_general`). Rules are matched by
(kind, platform), platforms expanded (a `gpu` lowering is its cuda and rocm ones, so a
release that registers them one by one removes nothing), and a trace rule also by its
Trace class (`JVPTrace.process_call` and `BatchTrace.process_call` are call's JVP and
batching: one class's dropped or added is that rule's change alone, the others'
unchanged methods are not listed). Line numbers drift between
versions, so a rule counts as changed only when its file or one of its functions changed
(`ad.defjvp` names one per operand): moved where its files differ, retargeted where they
stay and a function is another (renamed, or another way of registering one without a
function of its own); where every old registration stays and another is added, or some
stay and another goes, the registration is added or removed; each registration is
described with the one of its side it overrides or is overridden by, where that is
certain (resolve/precedence.py). A registration without a
function of its own is told by its registrar (`batching.defbroadcasting`, which builds
the rule): one whose registrar stays while the helper calling it changes
(`standard_naryop` -> `naryop`) registers the same rule through another helper. Primitives and rules
defined in a checkout's tests, docs, examples or benchmarks are left out (counted): a
release holds none, so they are not changes."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import NamedTuple

from jaxmap.knowledge.orientation import OUTSIDE_JAX
from jaxmap.knowledge.precedence import registrar
from jaxmap.knowledge.traces import trace_class
from jaxmap.models import Primitive

MOVED = "moved"  # a rule registered in another file
RETARGETED = "retargeted"  # a rule kept in its files, registered with another function
# The same registrar, reached through another helper (`standard_naryop > batching.
# defbroadcasting` -> `naryop > batching.defbroadcasting`), for a rule with no function.
HELPER_CHANGED = "helper-changed"
# Every old registration kept and another added (`swap`'s mosaic_tpu lowering, kept in
# lowering.py, registered in sc_lowering.py too), or some kept and another dropped.
REGISTRATION_ADDED, REGISTRATION_REMOVED = "registration-added", "registration-removed"


class RuleChange(NamedTuple):
    primitive: str
    kind: str
    platform: str | None
    change: str  # added, removed, moved, retargeted, helper-changed, registration-added or -removed
    old: tuple[str, ...]  # "file:line (function, ...)" of each registration before
    new: tuple[str, ...]
    trace: str | None = None  # a trace rule's Trace class (`JVPTrace`)


class IndexDiff(NamedTuple):
    old: str
    new: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    rules: tuple[RuleChange, ...]
    left_out: tuple[int, int]  # primitives, rules: defined outside the package, both sides
    renamed: tuple[tuple[str, str], ...] = ()  # (old label, new label)


# A rule function shared by more primitives than this is a helper (`standard_rule`),
# which tells nothing of a rename.
_OWN_FUNCTION_MAX = 3


def compare(old_label: str, old: list[Primitive], new_label: str,
            new: list[Primitive], whole: bool = False) -> IndexDiff:
    """The difference from `old` to `new`; with `whole`, the rules of each primitive
    added or removed are listed too, as added (at their new places) or removed (at
    their old ones)."""
    (old, old_left), (new, new_left) = _shipped(old), _shipped(new)
    pairs, added, removed = _match(old, new)
    renamed = _renamed(removed, added, old, new)
    label, old_label_of = labeller(new), labeller(old)
    gone = {id(before) for before, _ in renamed} | {id(after) for _, after in renamed}
    added = [p for p in added if id(p) not in gone]
    removed = [p for p in removed if id(p) not in gone]
    compared = [(label(after), before, after) for before, after in pairs + renamed]
    if whole:
        compared += [(label(p), p._replace(rules=()), p) for p in added]
        compared += [(old_label_of(p), p, p._replace(rules=())) for p in removed]
    changes = []
    for key, before, after in sorted(compared, key=lambda entry: entry[0]):
        changes += _rule_changes(key, before, after)
    return IndexDiff(old_label, new_label, tuple(sorted(map(label, added))),
                     tuple(sorted(map(old_label_of, removed))),
                     tuple(changes), (old_left[0] + new_left[0], old_left[1] + new_left[1]),
                     tuple(sorted((old_label_of(b), label(a)) for b, a in renamed)))


def _renamed(removed: list[Primitive], added: list[Primitive], old: list[Primitive],
             new: list[Primitive]) -> list[tuple[Primitive, Primitive]]:
    """(old, new) pairs of a removed and an added primitive of one module held by one
    variable (`neg_p = Primitive("neg")` -> `Primitive("negate")`), or that share at
    least two of their own rule functions, and at least half of the old one's, or whose
    names alone differ by a `_` suffix (`ragged_dot` -> `ragged_dot_general`); those of
    one variable first, then the pair sharing the most functions."""
    own_old, own_new = _own_functions(old), _own_functions(new)
    extended = _extended_names(removed, added)
    candidates = []
    for before in removed:
        mine = own_old(before)
        for after in added:
            shared = len(mine & own_new(after))
            held = bool(before.variable) and before.variable == after.variable
            if before.module == after.module and (
                    held or shared >= 2 and 2 * shared >= len(mine)
                    or (before.name, after.name) in extended):
                candidates.append((not held, -shared, before.name, after.name, before,
                                   after))
    pairs, taken = [], set()
    for *_, before, after in sorted(candidates, key=lambda c: c[:4]):
        if id(before) not in taken and id(after) not in taken:
            taken |= {id(before), id(after)}
            pairs.append((before, after))
    return pairs


def _extended_names(removed: list[Primitive], added: list[Primitive]) -> set[tuple]:
    """(old, new) names of one module where one is the other with a `_` suffix, and
    neither name has another such partner (`foo` with `foo_start` and `foo_done` is
    no rename)."""
    pairs = [(b.name, a.name) for b in removed for a in added if b.module == a.module
             and (a.name.startswith(b.name + "_") or b.name.startswith(a.name + "_"))]
    olds, news = Counter(old for old, _ in pairs), Counter(new for _, new in pairs)
    return {(old, new) for old, new in pairs if olds[old] == news[new] == 1}


def _own_functions(prims: list[Primitive]):
    """prim -> the names of its rule functions that few primitives share."""
    def functions(prim: Primitive) -> set[str]:
        return {f.name for r in prim.rules for f in r.functions}

    users = Counter(name for prim in prims for name in functions(prim))
    return lambda prim: {name for name in functions(prim) if users[name] <= _OWN_FUNCTION_MAX}


def _shipped(prims: list[Primitive]) -> tuple[list[Primitive], tuple[int, int]]:
    """The primitives and rules a package holds, and how many primitives and rules
    (of the primitives kept) were defined in tests, docs, examples or benchmarks."""
    kept, rules_left = [], 0
    for prim in prims:
        if prim.loc.file.startswith(OUTSIDE_JAX):
            continue
        rules = tuple(r for r in prim.rules if not r.loc.file.startswith(OUTSIDE_JAX))
        rules_left += len(prim.rules) - len(rules)
        kept.append(prim._replace(rules=rules) if len(rules) < len(prim.rules) else prim)
    return kept, (len(prims) - len(kept), rules_left)


_MATCH_KEYS = (lambda p: (p.name, p.module, p.variable), lambda p: (p.name, p.module),
               lambda p: p.name)


def _match(old: list[Primitive], new: list[Primitive]):
    """(old, new) pairs, then the new ones left unmatched, then the old ones."""
    pairs = []
    for key in _MATCH_KEYS:
        waiting = defaultdict(list)
        for prim in old:
            waiting[key(prim)].append(prim)
        unmatched = []
        for prim in new:
            group = waiting.get(key(prim))
            (pairs.append((group.pop(0), prim)) if group else unmatched.append(prim))
        old, new = [p for group in waiting.values() for p in group], unmatched
    return pairs, new, old


def labeller(prims: list[Primitive]):
    """`name`; `name@module` for a name several primitives share; `name@module:line`
    where that is still not unique."""
    names = Counter(p.name for p in prims)
    places = Counter((p.name, p.module) for p in prims)

    def label(p: Primitive) -> str:
        if names[p.name] == 1:
            return p.name
        if places[p.name, p.module] == 1:
            return f"{p.name}@{p.module}"
        return f"{p.name}@{p.module}:{p.loc.line}"
    return label


def _rule_changes(key: str, old: Primitive, new: Primitive) -> list[RuleChange]:
    before, after = _by_kind(old), _by_kind(new)
    changes = []
    for slot in sorted(before.keys() | after.keys(), key=lambda k: (k[0], k[1] or "", k[2] or "")):
        was, now = before.get(slot), after.get(slot)
        change = "added" if was is None else "removed" if now is None else _changed(was, now)
        if change is None:
            continue
        kind, platform, trace = slot
        changes.append(RuleChange(key, kind, platform, change,
                                  tuple(_describe(r, was or []) for r in was or ()),
                                  tuple(_describe(r, now or []) for r in now or ()), trace))
    return changes


def _changed(was: list, now: list) -> str | None:
    """How a rule registered both before and after changed, if it did."""
    before, after = {_where(r) for r in was}, {_where(r) for r in now}
    if before == after:
        return None if _helpers(was) == _helpers(now) else HELPER_CHANGED
    if before < after:
        return REGISTRATION_ADDED
    if after < before:
        return REGISTRATION_REMOVED
    return RETARGETED if {r.loc.file for r in was} == {r.loc.file for r in now} else MOVED


def _by_kind(prim: Primitive) -> dict[tuple[str, str | None, str | None], list]:
    """Registrations by (kind, platform, Trace class): a `gpu` lowering under cuda and
    rocm, a trace rule under its class."""
    grouped: dict[tuple[str, str | None, str | None], list] = {}
    for rule in prim.rules:
        owner = trace_class(rule.kind, rule.via)
        for platform in rule.platforms or (rule.platform,):
            grouped.setdefault((rule.kind.value, platform, owner), []).append(rule)
    return grouped


def _where(rule) -> tuple[str, tuple[str, ...]]:
    """The file and every function of a registration (each operand's JVP of
    `ad.defjvp`, both transposes of `ad.defbilinear`): another name for any is a move.
    One with no function of its own (`batching.defvectorized(p)`, a lambda) is told by
    its registrar: `primitive_batchers[p] = lambda ...` for it is a move too."""
    return rule.loc.file, tuple(f.name for f in rule.functions) or (registrar(rule.via),)


def _helpers(rules: list) -> set[tuple[str, str]]:
    """(file, helpers) of each registration with no function of its own: the steps
    before its registrar (`standard_naryop` of `standard_naryop > batching.
    defbroadcasting`)."""
    return {(r.loc.file, (r.via or "").rpartition(" > ")[0]) for r in rules if not r.functions}


def _describe(rule, side: list) -> str:
    """`file:line (function, ...)`; for a registration with no function of its own,
    how it registers: `file:line (via naryop > batching.defbroadcasting)`; then
    `[overridden by line N]` where a later one of `side` (its rule's registrations)
    certainly replaces it, `[overrides line N]` where it replaces one."""
    text = f"{rule.loc.file}:{rule.loc.line}"
    names = ", ".join(f.name for f in rule.functions)
    text = f"{text} ({names})" if names else f"{text} (via {rule.via})" if rule.via else text
    replaced = sorted(r.loc.line for r in side if r.overridden_by == rule.loc.line
                      and r.loc.file == rule.loc.file)
    if replaced:
        text += f" [overrides line {', '.join(map(str, replaced))}]"
    return text + (f" [overridden by line {rule.overridden_by}]"
                   if rule.overridden_by is not None else "")

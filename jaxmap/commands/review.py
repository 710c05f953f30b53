"""What a change between two revisions does to the primitives: `jaxmap diff BASE..HEAD`.

Given the indexes of both sides and the Python files the change touched, a review
gathers primitives added, removed and renamed and rules added, removed, moved,
retargeted or otherwise changed (diff.py); public functions that start or stop
reaching a primitive, or reach it by another chain (reach.py); rules whose function,
or a helper only rule functions call, it edits (edited_rules.py); messages added,
removed and reworded (message_diff.py); rule kinds and platforms a changed primitive
lacks though its siblings have them (rule_gaps.py); and the test files exercising
each changed primitive. `failures` says which of the CI checks (`--fail-on`) the review trips.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from jaxmap.commands import diff, message_diff, reach, rule_gaps, test_links
from jaxmap.commands.edited_rules import EditedRule, edited_rules

if TYPE_CHECKING:
    from jaxmap.models import Primitive
    from jaxmap.store.read import Index

# What `--fail-on` may name, each with what trips it.
FAIL_ON = ("removed-rule", "removed-primitive", "uncovered", "gap", "reach", "message")


class Side(NamedTuple):
    ref: str  # as written
    commit: str

    @property
    def label(self) -> str:
        return f"{self.ref} ({self.commit[:10]})"


class SiblingGap(NamedTuple):
    """A changed primitive that lacks a rule kind (or a platform's lowering) that most
    primitives of its file have."""

    primitive: str
    file: str
    line: int
    what: str  # the rule kind, or the platform
    code: str  # rule_gaps.MISSING_RULE or MISSING_PLATFORM
    having: int
    siblings: int


class Coverage(NamedTuple):
    primitive: str
    files: tuple[str, ...]  # test files exercising it at HEAD, nearest first


class Review(NamedTuple):
    base: Side
    head: Side
    files: tuple[str, ...]  # the Python files the change touched
    primitives: diff.IndexDiff  # primitives and rules changed, as diff.py tells them
    reach: tuple[reach.ReachChange, ...]
    messages: tuple[message_diff.MessageChange, ...]
    gaps: tuple[SiblingGap, ...]
    coverage: tuple[Coverage, ...]
    edited_rules: tuple[EditedRule, ...] = ()

    @property
    def uncovered(self) -> tuple[str, ...]:
        return tuple(c.primitive for c in self.coverage if not c.files)


def review(base: Side, before: Index, head: Side, after: Index,
           files: list[str], moved_only: bool = False, edits: reach.Edits | None = None
           ) -> Review:
    """The review of the change from `before` (BASE's index) to `after` (HEAD's);
    `moved_only`: the two hold the same rows but for their lines (session.only_moved),
    so no public reach can have changed, and none is walked; `edits`: file -> the lines
    the change removed (BASE's numbers) and added (HEAD's), which tell the reach
    findings it makes from the rest."""
    old_prims, new_prims = before.primitives(), after.primitives()
    primitives = diff.compare(base.label, old_prims, head.label, new_prims, whole=True)
    edited = () if moved_only or edits is None else edited_rules(
        after, new_prims, {file: lines[1] for file, lines in edits.items()}, primitives)
    changed = sorted({*_changed(primitives), *(rule.primitive for rule in edited)})
    named = {_name(label) for label in [*changed, *primitives.removed]}
    return Review(base, head, tuple(files), primitives,
                  () if moved_only else tuple(reach.compare(
                      before, after, files, named,
                      {_name(new): _name(old) for old, new in primitives.renamed},
                      edits)),
                  tuple(message_diff.compare(before, after, files)),
                  tuple(_gaps(before, after, changed)),
                  tuple(Coverage(label, _test_files(after, label)) for label in changed),
                  edited)


def unchanged(base: Side, head: Side) -> Review:
    """The review of a change that touches no Python file: nothing the index reads."""
    return Review(base, head, (), diff.compare(base.label, [], head.label, []),
                  (), (), (), ())


def failures(result: Review, checks: tuple[str, ...]) -> list[tuple[str, int]]:
    """(check, how many findings trip it) of each of `checks` the review trips."""
    counts = {
        "removed-rule": sum(1 for c in result.primitives.rules if c.change == "removed"),
        # a rename removes the old name for every user of it
        "removed-primitive": len(result.primitives.removed) + len(result.primitives.renamed),
        "uncovered": len(result.uncovered),
        "gap": len(result.gaps),
        "reach": sum(1 for change in result.reach if change.touched),
        "message": len(result.messages),
    }
    return [(check, counts[check]) for check in checks if counts[check]]


def _changed(primitives: diff.IndexDiff) -> list[str]:
    """HEAD's labels of the primitives added, renamed or with a rule changed (the
    rules of a removed primitive are changed too, but it has no label at HEAD)."""
    labels = dict.fromkeys(primitives.added)
    labels.update(dict.fromkeys(new for _old, new in primitives.renamed))
    labels.update(dict.fromkeys(c.primitive for c in primitives.rules))
    return sorted(set(labels) - set(primitives.removed))


def _name(label: str) -> str:
    """`name@module:line` -> name."""
    return label.partition("@")[0]


def _find(index: Index, label: str) -> Primitive | None:
    """The primitive a diff label names (`name`, `name@module`, `name@module:line`)."""
    name, _, place = label.partition("@")
    module, _, line = place.partition(":")
    for prim in index.primitives_named(name, name):
        if (prim.name or prim.variable) == name and (not module or prim.module == module) \
                and (not line or prim.loc.line == int(line)):
            return prim
    return None


def _test_files(index: Index, label: str) -> tuple[str, ...]:
    """The files of the primitive's tests, each ranked by its most direct test
    (test_links: one naming or binding the primitive, then by the fewest calls to a
    bind), then by name; after them, by name, test files whose top level lists what
    binds it for a parameterised test to run."""
    prim = _find(index, label)
    if prim is None:
        return ()
    ranked = [link.file for link in test_links.ranked_tests(index, prim)]
    return tuple(dict.fromkeys([*ranked, *test_links.listing_files(index, prim)]))


def _gaps(before: Index, after: Index, changed: list[str]) -> list[SiblingGap]:
    """The gaps of each changed primitive at HEAD that it did not have at BASE."""
    found = []
    for label in changed:
        prim = _find(after, label)
        if prim is None:
            continue
        was = _find(before, label)
        old = {(g.code, g.what) for g in _file_gaps(before, was)} if was else set()
        found += [SiblingGap(label, prim.loc.file, prim.loc.line, g.what, g.code,
                             g.having, g.siblings)
                  for g in _file_gaps(after, prim) if (g.code, g.what) not in old]
    return found


def _file_gaps(index: Index, prim: Primitive) -> list[rule_gaps.Gap]:
    siblings = [p for p in index.primitives_in_file(prim.loc.file)
                if (p.name, p.variable, p.loc.line) != (prim.name, prim.variable, prim.loc.line)]
    return rule_gaps.missing(prim, siblings)

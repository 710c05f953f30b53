"""`jaxmap diff BASE..HEAD` on a terminal: a commands.review.Review, one finding a
line, places as `path:line`."""

from __future__ import annotations

import os.path

from jaxmap.render.text import RULE_CHANGES, rule_change_kind

_SHOWN = 20  # findings of one section shown before a count of the rest
_TEST_FILES_SHOWN = 5
_CHAIN_SHOWN = 6  # steps of a chain shown, the middle cut
_GROUP_SHOWN = 3  # reach findings of one primitive and change shown (nearest first)
_MESSAGE_CHARS = 100  # of a message's text, whitespace runs read as one space
_LEAD = 30  # of two texts' shared start shown before their first difference


def review(result) -> str:
    """The report: each section with findings, then one line naming those without (a
    reviewer reads what changed, not a dozen empty headings)."""
    sections, empty = [summary(result)], []

    def add(title: str, lines: list[str], heading: str | None = None) -> None:
        if lines:
            sections.append(_section(heading or title, lines, count=heading is None))
        else:
            empty.append(title)

    prims = result.primitives
    named = []  # primitives added, removed, renamed: a line each that has any
    for title, names in (("primitives added", prims.added), ("primitives removed", prims.removed),
                         ("primitives renamed", [f"{old} -> {new}" for old, new in prims.renamed])):
        if names:
            named.append(f"{title} ({len(names)}): {', '.join(names)}")
        else:
            empty.append(title)
    if named:
        sections.append("\n".join(named))
    for change, title in RULE_CHANGES.items():
        add(f"rules {title}", [f"  {c.primitive} {rule_change_kind(c)}: {rule_places(c)}"
                               for c in prims.rules if c.change == change])
    add("rule functions edited", [f"  {edited_rule(e)}" for e in result.edited_rules])
    touched, elsewhere = split_reach(result.reach)
    add("reach changed", _reach_lines(touched),
        f"reach changed ({_findings(len(touched))})")
    if elsewhere:
        add("reach changed through untouched code only", [f"  ({ELSEWHERE})",
                                                          *_reach_lines(elsewhere)],
            f"reach changed through untouched code only ({_findings(len(elsewhere))})")
    add("messages changed", [f"  {message_line(c)}" for c in result.messages])
    add("rules siblings have", [f"  {gap_line(g)}" for g in result.gaps])
    add("tests of changed primitives", [
        f"  {c.primitive}: {test_files(c.files) or 'no test'}" for c in result.coverage])
    if empty:
        sections.append(f"nothing in: {', '.join(empty)}")
    return "\n\n".join(sections)


ELSEWHERE = ("no step of these chains is a definition the change edits, or one whose calls "
             "it moved: an edit moving where the call graph's solve cuts a cycle (#33) can "
             "do this, and so can a function that only hands on what a changed one returns; "
             "check them by hand, they trip no --fail-on check")


def split_reach(changes) -> tuple[list, list]:
    """The reach findings whose chain steps through the change, then the rest."""
    return [c for c in changes if c.touched], [c for c in changes if not c.touched]


def _findings(count: int) -> str:
    return f"{count} finding{'s' if count != 1 else ''}"


def _reach_lines(changes) -> list[str]:
    lines = []
    for primitive, change, size, shown in shown_groups(changes):
        if size > len(shown):
            lines.append(f"  {group_line(primitive, change, size)}; the nearest:")
        lines += [f"  {'  ' if size > len(shown) else ''}{reach_line(c)}" for c in shown]
    return lines


def summary(result) -> str:
    """One line: the two sides, then a count of each kind of finding."""
    prims = result.primitives
    touched, elsewhere = split_reach(result.reach)
    counts = [("primitives added", len(prims.added)), ("removed", len(prims.removed)),
              ("renamed", len(prims.renamed)), ("rules changed", len(prims.rules)),
              ("rule functions edited", len(result.edited_rules)),
              ("reach changes", len(touched)),
              ("reach changes through untouched code", len(elsewhere)),
              ("messages changed", len(result.messages)),
              ("sibling gaps", len(result.gaps)), ("uncovered", len(result.uncovered))]
    said = ", ".join(f"{what} {n}" for what, n in counts if n) or "no change to the primitives"
    return (f"{result.base.label} -> {result.head.label}: {len(result.files)} Python files "
            f"changed; {said}")


def test_files(files: tuple[str, ...], quote: str = "") -> str:
    """The first few test files, then how many more."""
    shown = ", ".join(f"{quote}{file}{quote}" for file in files[:_TEST_FILES_SHOWN])
    more = len(files) - _TEST_FILES_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def failed_checks(tripped: list[tuple[str, int]]) -> str:
    """The line `--fail-on` ends with: each check tripped, with its count."""
    return "jaxmap: review fails on " + ", ".join(f"{check} ({n})" for check, n in tripped)




def rule_places(change) -> str:
    if change.change == "added":
        return ", ".join(change.new)
    if change.change == "removed":
        return ", ".join(change.old)
    return f"{', '.join(change.old)} -> {', '.join(change.new)}"


def shown_groups(changes) -> list[tuple[str, str, int, list]]:
    """Reach findings by primitive and change: (primitive, change, the group's size, its
    first few findings, nearest (shortest chain) first)."""
    groups: dict[tuple[str, str], list] = {}
    for change in changes:
        groups.setdefault((change.primitive, change.change), []).append(change)
    return [(primitive, change, len(group),
             sorted(group, key=lambda c: (len(c.chain), c.function))[:_GROUP_SHOWN])
            for (primitive, change), group in groups.items()]


def group_line(primitive: str, change: str, count: int) -> str:
    if change == "chain":
        return f"{count} public functions reach {primitive} by another chain"
    return f"{count} public functions {change} reaching {primitive}"


def short_chain(chain: tuple[str, ...]) -> tuple[str, ...]:
    """A long chain's first and last steps, the middle as `…` (--json has it whole)."""
    if len(chain) <= _CHAIN_SHOWN + 1:
        return chain
    return (*chain[:_CHAIN_SHOWN - 2], "…", *chain[-2:])


def reach_line(change) -> str:
    chain = " -> ".join(short_chain(change.chain))
    if change.change == "chain":
        return (f"{change.function} reaches {change.primitive} by another chain: {chain} "
                f"(was {' -> '.join(short_chain(change.old_chain))})")
    return f"{change.function} {change.change} reaching {change.primitive}: {chain}"


def message_line(change) -> str:
    if change.change == "reworded":
        was, now = short_pair(change.old.text, change.new.text)
        where = f"{change.old.file}:{change.old.line}"
        if moved_message(change):
            where += " -> " + (f"{change.new.line}" if change.new.file == change.old.file
                               else f"{change.new.file}:{change.new.line}")
        if change.new.function:
            where += f" ({change.new.function})"
        return f"reworded {where} {change.new.exception}: {was!r} -> {now!r}"
    message = change.new or change.old
    return f"{change.change} {_place(message)} {message.exception}: {short(message.text)!r}"


def moved_message(change) -> bool:
    """Whether a reworded message is raised at another line (or file) than before."""
    return (change.old.file, change.old.line) != (change.new.file, change.new.line)


def short(message_text: str) -> str:
    """A message on one line, cut to _MESSAGE_CHARS."""
    flat = " ".join(message_text.split())
    return flat if len(flat) <= _MESSAGE_CHARS else flat[:_MESSAGE_CHARS - 1] + "…"


def short_pair(old: str, new: str) -> tuple[str, str]:
    """Both texts of a reworded message, each cut to _MESSAGE_CHARS where the first
    difference still shows: after a long shared start, from the word a little before it."""
    old, new = " ".join(old.split()), " ".join(new.split())
    same = len(os.path.commonprefix([old, new]))
    if same < _MESSAGE_CHARS - _LEAD or max(len(old), len(new)) <= _MESSAGE_CHARS:
        return short(old), short(new)
    start = old.rfind(" ", 0, same - _LEAD) + 1
    return short("…" + old[start:]), short("…" + new[start:])


def edited_rule(edited) -> str:
    """An edited_rules.EditedRule: `psum transpose: _psum_transpose_rule
    parallel.py:1031`; a helper's, `cumsum lowering[gpu]: _cumred_chlo_lowering
    loops.py:2976 via _cumred_gpu_lowering`."""
    via = f" via {edited.via}" if edited.via else ""
    return (f"{edited.primitive} {rule_change_kind(edited)}: {edited.function} "
            f"{edited.file}:{edited.line}{via}")


def gap_line(gap) -> str:
    what = f"{gap.what} rule" if gap.code == "missing-rule" else f"{gap.what} lowering"
    return (f"{gap.primitive} ({gap.file}:{gap.line}) lacks a {what}; {gap.having} of its "
            f"{gap.siblings} siblings have one")


def _place(message) -> str:
    where = f"{message.file}:{message.line}"
    return f"{where} ({message.function})" if message.function else where


def _section(title: str, lines: list[str], count: bool = True) -> str:
    """A titled list (with its length unless `count` is off), cut to _SHOWN lines."""
    shown = lines[:_SHOWN]
    if len(lines) > _SHOWN:
        shown.append(f"  ... and {len(lines) - _SHOWN} more (--json lists all)")
    heading = f"{title} ({len(lines)}):" if count else f"{title}:"
    return "\n".join([heading + ("" if lines else " -"), *shown])

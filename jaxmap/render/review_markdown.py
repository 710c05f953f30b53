"""`jaxmap diff BASE..HEAD --format markdown`: a commands.review.Review as one
pull-request comment. A summary line, then a collapsible section per kind of finding
(only those with findings); with a link base, every `path:line` links to its line at
the commit it was read from (BASE's places at BASE, HEAD's at HEAD)."""

from __future__ import annotations

import re

from jaxmap.render import review_text as text
from jaxmap.render.text import rule_change_kind

MARKER = "<!-- jaxmap review -->"  # lets a CI job find and update its own comment
_PLACE = re.compile(r"(?P<file>[\w./-]+\.py):(?P<line>\d+)")
_BACKTICKS = re.compile(r"`+")
_ROWS = 100  # rows of one section before a count of the rest


def review_comment(result, link_base: str | None = None) -> str:
    link = _linker(link_base)
    prims = result.primitives
    parts = [MARKER, f"**jaxmap review** · {_cell(text.summary(result))}", ""]
    rows = [f"| added | {_names(prims.added)} |", f"| removed | {_names(prims.removed)} |",
            f"| renamed | {_names(f'{old} → {new}' for old, new in prims.renamed)} |"]
    if prims.added or prims.removed or prims.renamed:
        parts += _details("Primitives", rows, ("| change | primitives |", "| --- | --- |"))
    rules = [f"| `{c.primitive}` | {rule_change_kind(c, platform=False)} | "
             f"{c.platform or ''} | {c.change} | "
             f"{_linked(c.old, link, result.base.commit)} | "
             f"{_linked(c.new, link, result.head.commit)} |" for c in prims.rules]
    parts += _details(f"Rules ({len(rules)})", rules, (
        "| primitive | kind | platform | change | BASE | HEAD |",
        "| --- | --- | --- | --- | --- | --- |"))
    parts += _details(f"Rule functions edited ({len(result.edited_rules)})", [
        f"- `{e.primitive}` {rule_change_kind(e)}: "
        f"`{e.function}` {link(result.head.commit, e.file, e.line)}"
        + (f" via `{e.via}`" if e.via else "") for e in result.edited_rules])
    touched, elsewhere = text.split_reach(result.reach)
    parts += _details(f"Reach ({len(touched)})", _reach_items(touched))
    if elsewhere:
        parts += _details(f"Reach through untouched code only ({len(elsewhere)})",
                          [f"_{text.ELSEWHERE}._", "", *_reach_items(elsewhere)])
    parts += _details(f"Messages ({len(result.messages)})", [
        f"- {_message(c, link, result)}" for c in result.messages])
    parts += _details(f"Rules its siblings have ({len(result.gaps)})", [
        f"- {_gap(g, link, result.head.commit)}" for g in result.gaps])
    parts += _details(f"Tests ({len(result.coverage)} changed primitives, "
                      f"{len(result.uncovered)} uncovered)", [
        f"- `{c.primitive}`: " + (text.test_files(c.files, "`") or "**no test**")
        for c in result.coverage])
    return "\n".join(parts).rstrip() + "\n"


def _details(title: str, items: list[str], head: tuple[str, ...] = ()) -> list[str]:
    """A collapsed section of `items` (a table's rows under `head`); none when empty."""
    if not items:
        return []
    if len(items) > _ROWS:
        items = items[:_ROWS] + [f"\n… and {len(items) - _ROWS} more (`--json` lists all)"]
    return ["<details>", f"<summary>{title}</summary>", "", *head, *items, "", "</details>",
            ""]


def _linker(link_base: str | None):
    """(commit, file, line) -> the Markdown for that place."""
    if not link_base:
        return lambda commit, file, line: f"`{file}:{line}`"
    base = link_base.rstrip("/")
    return lambda commit, file, line: f"[`{file}:{line}`]({base}/{commit}/{file}#L{line})"


def _linked(places, link, commit: str) -> str:
    """Each `file:line (function)` of a rule, its place linked."""
    return "<br>".join(_PLACE.sub(lambda m: link(commit, m["file"], m["line"]), _cell(place))
                       for place in places)


def _message(change, link, result) -> str:
    if change.change == "reworded":
        where = link(result.head.commit, change.new.file, change.new.line)
        if text.moved_message(change):
            where = f"{link(result.base.commit, change.old.file, change.old.line)} → {where}"
        was, now = text.short_pair(change.old.text, change.new.text)
        return (f"reworded at {where} ({change.new.exception}): {_code(was)} → "
                f"{_code(now)}")
    message, commit = (change.new, result.head.commit) if change.new else \
        (change.old, result.base.commit)
    return (f"{change.change} at {link(commit, message.file, message.line)} "
            f"({message.exception}): {_quote(message.text)}")


def _reach_items(changes) -> list[str]:
    items = []
    for primitive, change, size, shown in text.shown_groups(changes):
        if size > len(shown):
            items.append(f"- {text.group_line(f'`{primitive}`', change, size)}; the nearest:")
        items += [f"{'  ' if size > len(shown) else ''}- {_reach(c)}" for c in shown]
    return items


def _reach(change) -> str:
    chain = f"`{' → '.join(text.short_chain(change.chain))}`"
    if change.change == "chain":
        return (f"`{change.function}` reaches `{change.primitive}` by another chain: {chain} "
                f"(was `{' → '.join(text.short_chain(change.old_chain))}`)")
    return f"`{change.function}` {change.change} reaching `{change.primitive}`: {chain}"


def _gap(gap, link, commit: str) -> str:
    what = f"{gap.what} rule" if gap.code == "missing-rule" else f"{gap.what} lowering"
    return (f"`{gap.primitive}` ({link(commit, gap.file, gap.line)}) lacks a {what}; "
            f"{gap.having} of its {gap.siblings} siblings have one")


def _names(names) -> str:
    return ", ".join(f"`{name}`" for name in names) or "–"


def _quote(message_text: str) -> str:
    return _code(text.short(message_text))


def _code(shown: str) -> str:
    """`shown` as a code span that reads as written, backticks too (CommonMark): fenced
    by a run of backticks longer than any inside, padded with a space on each side
    (which the span drops) where it starts or ends with a backtick."""
    fence = "`" * (max(map(len, _BACKTICKS.findall(shown)), default=0) + 1)
    pad = " " if shown[:1] == "`" or shown[-1:] == "`" else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def _cell(value: str) -> str:
    """Text safe inside a table cell or a list item."""
    return value.replace("|", "\\|").replace("\n", " ")

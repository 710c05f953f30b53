"""`jaxmap ladder` as text and as JSON; pure functions of a ladder.Ladder."""

from __future__ import annotations

import json
import textwrap

WIDTH = 88


def text(ladder) -> str:
    """The ladder as a short guide: each rung, how to start it, where it lives."""
    version = f"jax {ladder.jax_version}" if ladder.jax_version else "this tree"
    lines = [f"The escalation ladder for {version} ({ladder.root}).",
             "Climb only as far as the problem needs; each rung costs more to keep.", ""]
    for step in ladder.steps:
        rung = step.rung
        lines.append(f"{rung.number}. {rung.title}")
        lines += _items("use when", rung.use_when)
        lines += _items("not when", rung.avoid_when)
        lines += _items("ask", rung.ask)
        lines += _items("start", step.commands, wrap=False)
        lines += _items("lives in", [_place(p) for p in step.places], wrap=False)
        lines.append("")
    lines.append("Before climbing a rung, check:")
    lines += [f"  [ ] {item}" for item in ladder.checklist]
    return "\n".join(lines)


def _items(label: str, items, wrap: bool = True) -> list[str]:
    """`label:` then one item a line; prose wrapped at WIDTH under its own start."""
    head = f"   {label + ':':<10}"
    pad = " " * len(head)
    width = WIDTH if wrap else 10_000
    return [line for i, item in enumerate(items) for line in textwrap.wrap(
        item, width, initial_indent=head if i == 0 else pad, subsequent_indent=pad + "  ",
        break_on_hyphens=False)]


def _place(place) -> str:
    where = f"{place.file}:{place.line}" if place.file else "(not in this tree)"
    return f"{place.name}  {where}"


def document(ladder) -> str:
    """The ladder as one JSON document (schema in the README)."""
    return json.dumps({
        "root": str(ladder.root), "jax_version": ladder.jax_version,
        "rungs": [{"number": s.rung.number, "title": s.rung.title,
                   "use_when": list(s.rung.use_when), "avoid_when": list(s.rung.avoid_when),
                   "ask": list(s.rung.ask), "kinds": list(s.rung.kinds),
                   "commands": list(s.commands),
                   "machinery": [p._asdict() for p in s.places]} for s in ladder.steps],
        "checklist": list(ladder.checklist)}, indent=1)

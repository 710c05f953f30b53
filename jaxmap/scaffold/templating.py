"""Templates (files under templates/) -> text; the one place that sets up Jinja2."""

from __future__ import annotations

import functools
import os
import re

from jaxmap.knowledge import backends

TEMPLATES = os.path.join(os.path.dirname(__file__), "templates")


@functools.cache
def _environment():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        autoescape=False)
    env.filters["add_suffix"] = lambda text, suffix: f"{text}{suffix}"
    env.filters["typeof"] = lambda name: f"jax.typeof({name})"
    env.filters["fit"] = fit
    env.filters["fit_line"] = fit_line
    env.filters["call"] = call
    env.filters["repr"] = repr
    # What generated tests compare with, per backend (tolerances.j2).
    env.globals.update(tolerances=backends.TOLERANCES, grad_checks=backends.GRAD_CHECKS)
    return env


def fill(template: str, context: dict) -> str:
    """The whole template rendered with `context`."""
    return _tidy(_environment().get_template(template).render(context))


def fill_module(template: str, context: dict, table, *, sort: bool = True) -> str:
    """The whole template, its `imports` those of `table` its code uses (see
    imports.needed for `sort`)."""
    from jaxmap.scaffold import imports

    draft = fill(template, {**context, "imports": ""})
    return fill(template, {**context, "imports": imports.needed(table, draft, sort=sort)})


def fill_block(template: str, block: str, context: dict) -> str:
    """One `{% block %}` of a template, rendered with `context`."""
    tmpl = _environment().get_template(template)
    return _tidy("".join(tmpl.blocks[block](tmpl.new_context(context))))


def _tidy(text: str) -> str:
    """No trailing blanks, at most two blank lines in a row (where a template left
    out a section), exactly one final newline."""
    text = "\n".join(line.rstrip() for line in text.strip("\n").splitlines())
    return re.sub(r"\n{4,}", "\n\n\n", text) + "\n"


def fit(expr: str, indent: int, suffix: str = "", lead: str = "") -> str:
    """`lead + expr + suffix` for a line indented by `indent`, its top-level sums
    broken over lines (operator first) where it would pass 80 columns. The result
    omits the first line's indentation, which the template supplies."""
    if indent + len(lead) + len(expr) + len(suffix) <= 80:
        return lead + expr + suffix
    terms = _top_level_terms(expr)
    pad = "\n" + " " * (indent + len(lead) + 1)
    return f"{lead}({terms[0]}" + "".join(pad + "+ " + t for t in terms[1:]) + ")" + suffix


def _top_level_terms(expr: str) -> list[str]:
    terms, depth, start = [], 0, 0
    for i, char in enumerate(expr):
        depth += char in "([" and 1 or (char in ")]" and -1 or 0)
        if depth == 0 and expr.startswith(" + ", i):
            terms.append(expr[start:i])
            start = i + 3
    return terms + [expr[start:]]


def fit_line(line: str, indent: int) -> str:
    """A statement indented by `indent`, broken after `= ` or its first `(` when it
    would pass 80 columns (continuation indented 4 more)."""
    if indent + len(line) <= 80:
        return line
    pad = "\n" + " " * (indent + 4)
    target, eq, value = line.partition(" = ")
    if eq:
        return f"{target} = ({pad}{value})"
    head, _, rest = line.partition("(")
    return f"{head}({pad}{rest}"


def call(function: str, args: list[str], indent: int = 0) -> str:
    """`function(args...)` as a statement indented by `indent`, its arguments
    wrapped under the opening parenthesis past 80 columns."""
    pad = " " * (indent + len(function) + 1)
    lines, line = [], f"{function}("
    for i, arg in enumerate(args):
        piece = arg + (")" if i == len(args) - 1 else ",")
        if len(line) > len(pad) and indent + len(line) + 1 + len(piece) > 80:
            lines.append(line)
            line = pad + piece
        else:
            line += ("" if line.endswith("(") else " ") + piece
    return "\n".join(lines + [line])

"""`explain`'s answers as terminal text: for each traceback of the paste, each
exception's place in JAX (or why it is not JAX's), the user's line that led there,
the user's function JAX called on the way, and what usually fixes the message."""

from __future__ import annotations

import textwrap
from itertools import groupby
from typing import TYPE_CHECKING

from jaxmap.render.text import SWITCHED_OFF, kind_labels, switched_off, switched_off_heading
from jaxmap.render.view import View

if TYPE_CHECKING:
    from typing import Callable

    PathFn = Callable[[str], str]

_RAISED_BY = 8  # places that raise the exception, in text
_FIRST_LINE = 160  # characters of an unplaced message shown
_ROUTE = 6  # JAX frames of a route shown
_LABEL = 14  # width of the labels
_WIDTH = 100  # prose wrapped at this width
# What the template line's command shows, for a primitive that exists already too.
TEMPLATE_NOTE = "a new primitive with this rule wired in, to copy from; writes nothing"


def explanation(answers, view: View) -> str:
    """`explain`: each traceback of the paste under a heading when there are several
    (one line for one that is not JAX's), each exception under its class when its
    chain has several; a lone message no site raises under its own first line, as in a
    paste of several, where there is more to say than stderr's error line (the
    closest messages, an older wording, what usually fixes it), else nothing."""
    path = view.path
    segments = [list(group) for _n, group in groupby(answers, key=lambda a: a.segment)]
    if len(segments) == 1:
        return _segment(segments[0], path, alone=True)
    blocks = []
    for answers_of in segments:
        label = f" ({answers_of[0].label})" if answers_of[0].label else ""
        heading = f"== traceback {answers_of[0].segment} of {len(segments)}{label}"
        if all(a.status.value == "not-jax" for a in answers_of):
            blocks.append(f"{heading}: not from JAX: {_not_jax(answers_of[-1])}")
        else:
            blocks.append(f"{heading} ==\n{_segment(answers_of, path, alone=False)}")
    return "\n\n".join(blocks)


def _not_jax(found) -> str:
    return f"{found.exception or 'an exception'}: {found.why_not_jax}"


def _segment(answers, path: PathFn, alone: bool) -> str:
    """One traceback's answers; nothing for the paste's lone unplaced message when
    stderr's error line says all there is."""
    if len(answers) == 1:
        found = answers[0]
        if found.status.value == "unmatched" and alone and not (
                found.closest or found.fix or found.older):
            return ""
        return "" if found.status.value == "not-jax" else _explained(found, path)
    blocks = []
    for i, found in enumerate(answers, 1):
        cause = " (root cause)" if i == 1 else ""
        blocks.append(f"[{i}/{len(answers)}] {found.exception or 'exception'}{cause}\n"
                      + _explained(found, path))
    return "\n\n".join(blocks)


def _explained(found, path: PathFn) -> str:
    status = found.status.value
    body = _placed(found, path)
    if status in ("not-jax", "unmatched"):
        return body
    return "\n".join([body, *_user_side(found, path)])


def _user_side(found, path: PathFn) -> list[str]:
    """The transformations the user called, their function JAX called, their line, and
    what usually fixes it."""
    lines = []
    for i, step in enumerate(found.transformed):
        label = "transformed by" if i == 0 else ""
        lines.append(f"  {label:<{_LABEL}} {', '.join(step.names)}  {step.at.path}:"
                     f"{step.at.line}  {step.at.code}")
    called = found.called
    if called is not None:
        frame = called.frame
        lines.append(f"  {'called by JAX':<{_LABEL}} {frame.function}  {frame.path}:{frame.line}"
                     f"  as {called.via}" + ("" if called.route else " (JAX's frames removed)"))
        if len(called.route) > _ROUTE:
            lines.append(f"  {'route':<{_LABEL}} ({len(called.route) - _ROUTE} outer frames "
                         f"left out; --json has more)")
        for i, step in enumerate(called.route[-_ROUTE:]):
            label = "route" if i == 0 and len(called.route) <= _ROUTE else ""
            lines.append(f"  {label:<{_LABEL}} {path(step.jax_file)}:{step.line}  {step.function}")
    if found.ran and found.wording and found.ran != found.wording:
        lines.append(f"  {'wording':<{_LABEL}} as jax {found.wording} words it; the paste "
                     f"says it ran jax {found.ran}")
    user = found.user
    if user is not None and found.status.value != "user-code":
        code = f"  {user.code}" if user.code else ""
        lines.append(f"  {'your line':<{_LABEL}} {user.path}:{user.line}{code}")
    return lines + _fix(found)


def _fix(found) -> list[str]:
    """What usually fixes the message's family, if one fits."""
    if found.fix is None:
        return []
    return textwrap.wrap(found.fix.fix, _WIDTH, initial_indent=f"  {'usually fixes':<{_LABEL}} ",
                         subsequent_indent=" " * (_LABEL + 3))


def _placed(found, path: PathFn) -> str:
    status = found.status.value
    if status == "matched":
        return _matched(found, path)
    head = _first_line(found.message)
    if status in ("frame", "frame-shown"):
        site = found.sites[0]
        label = "raised here" if status == "frame" else "last JAX frame"
        note = "message not matched" if status == "frame" else \
            "message not matched; JAX removed its frames below this one: " \
            "JAX_TRACEBACK_FILTERING=off shows the raise"
        return f"{head}\n  {label:<14} {path(site.file)}:{site.line}  in {site.function}  " \
               f"({note})"
    if status == "runtime":
        site = found.sites[0]
        return f"{head}\n  {'runtime call':<14} {path(site.file)}:{site.line}  in " \
               f"{site.function}  (raised by the runtime this frame called, which ran the " \
               f"callback whose traceback the message carries)"
    if status == "older":
        return "\n".join([_older(head, found.older, path), *_diagnosis(found, path)])
    if status == "user-code":
        frame = found.called.frame
        code = f"  {frame.code}" if frame.code else ""
        return f"{head}\n  {'root cause':<{_LABEL}} your function {frame.function} raised it " \
               f"at {frame.path}:{frame.line}{code}"
    if status == "not-jax":
        return f"{head}\n  not from JAX: no JAX frame in the traceback, and " \
               f"{found.exception} is not JAX's"
    return "\n".join([_first_line(found.message), "  not an error message raised in this tree",
                      *_unconfirmed(found.older), *_fix(found), *_closest(found, path)])


def _unconfirmed(older) -> list[str]:
    """An older release's wording the message starts like, that the paste does not
    confirm (the wording goes on past the message's end)."""
    if older is None:
        return []
    old = older.site
    return [f"  starts like jax {older.version}'s wording (raised there at {old.file}:"
            f"{old.line} in {old.function}), which goes on past the pasted end; the "
            f"paste does not say it ran jax {older.version}, so it is not placed there"]


def _closest(found, path: PathFn) -> list[str]:
    """The messages of the tree closest to one no site raises, under their own heading,
    apart from the answer (which says what usually fixes its family, if one fits)."""
    if not found.closest:
        return []
    return ["closest messages in this tree (similarity; not an answer):", *(
        f"  {near.similarity:.2f}  {path(near.site.file)}:{near.site.line}  "
        f"{_first_line(near.template)}" for near in found.closest)]


def _first_line(message: str) -> str:
    line = message.strip().split("\n", 1)[0]
    return line if len(line) <= _FIRST_LINE else line[:_FIRST_LINE] + "..."


def _older(head: str, older, path: PathFn) -> str:
    old = older.site
    lines = [head, (f"  worded as in jax {older.version} (raised there at "
                    f"{old.file}:{old.line} in {old.function})")]
    if older.successors:
        for i, site in enumerate(older.successors):
            label = "in this tree" if i == 0 else ""
            lines.append(f"  {label:<14} {path(site.file)}:{site.line}  {site.exception} in "
                         f"{site.function}")
    else:
        lines.append("  not raised in this tree")
    return "\n".join(lines)


def _matched(found, path: PathFn) -> str:
    lines = [found.message, *_entry(found, path)]
    # An exception class's __init__, or a helper that returns the exception, builds the
    # message; where it is raised follows.
    first = "built in" if found.raised_by or found.sites[0].returned else "raised at"
    for i, site in enumerate(found.sites):
        label = first if i == 0 else ""
        lines.append(f"  {label:<14} {path(site.file)}:{site.line}  {site.exception} in "
                     f"{site.function}")
    for i, site in enumerate(found.raised_by[:_RAISED_BY]):
        label = "raised by" if i == 0 else ""
        on_path = f"  (on {found.entry.spelled}'s path)" if i < found.on_path else ""
        lines.append(f"  {label:<14} {path(site.file)}:{site.line}  {site.function}{on_path}")
    if len(found.raised_by) > _RAISED_BY:
        lines.append(f"  {'':<14} ({len(found.raised_by) - _RAISED_BY} more; --json has all)")
    return "\n".join(lines + _diagnosis(found, path))


def _diagnosis(found, path: PathFn) -> list[str]:
    """A rule-missing message's answer in this tree: why the rule should not exist,
    where the tree registers it, or how to add it."""
    if found.not_linear is not None:
        return _not_linear(found.not_linear, path)
    if found.has_rule is not None:
        return _has_rule(found.has_rule, path)
    return _missing(found.missing, path) if found.missing is not None else []


def _entry(found, path: PathFn) -> list[str]:
    """The public JAX function the user called, first: what the error is about."""
    entry = found.entry
    if entry is None:
        return []
    needs = f": {found.fix.needs}" if found.fix is not None and found.fix.needs else ""
    at = entry.called_at
    how = "" if entry.shown else " (read off your line; JAX removed its frames)"
    return [f"  {'raised from':<{_LABEL}} {entry.spelled}(...){needs}",
            f"  {'':<{_LABEL}} {entry.public}  {path(entry.file)}:{entry.line}, called at "
            f"{at.path}:{at.line}{how}"]


def _not_linear(diagnosis, path: PathFn) -> list[str]:
    prim = diagnosis.primitive
    lines = [(f"not linear: the function being transposed is not linear in its input: it "
              f"applies {prim.name}, which has a JVP rule and no transpose rule, as a "
              f"primitive that is not linear does"),
             f"  {'primitive':<14} {prim.name}  {path(prim.loc.file)}:{prim.loc.line}"]
    for i, (file, line, code) in enumerate(diagnosis.called_at):
        label = "transposed at" if i == 0 else ""
        lines.append(f"  {label:<14} {file}:{line}  {code}")
    lines.append(f"  {'instead':<14} transpose only linear functions (jax.linear_transpose);"
                 f" differentiate others with jax.vjp or jax.grad")
    return lines


def _has_rule(diagnosis, path: PathFn) -> list[str]:
    prim = diagnosis.primitive
    lines = [f"not missing: the index's {prim.name} has a {diagnosis.kind} rule, so the "
             f"primitive bound was not this one, or the rule's registration did not run",
             f"  {'primitive':<14} {prim.name}  {path(prim.loc.file)}:{prim.loc.line}"]
    for i, rule in enumerate(diagnosis.rules):
        label = f"its {diagnosis.kind}" if i == 0 else ""
        where = f" ({rule.platform})" if rule.platform else ""
        names = ", ".join(f.name for f in rule.functions)
        function = f"  -> {names}" if names else ""
        condition = f"  if {rule.condition}" if rule.condition else ""
        lines.append(f"  {label:<14} {path(rule.loc.file)}:{rule.loc.line}  via "
                     f"{rule.via}{where}{function}{condition}")
    for i, other in enumerate(diagnosis.namesakes):
        label = "same name" if i == 0 else ""
        lines.append(f"  {label:<14} {other.variable}  {path(other.loc.file)}:{other.loc.line}")
    lines.append(f"  {'check':<14} a primitive of your own (or another library's) named "
                 f"'{prim.name}'; that the module registering the rule is imported; that "
                 f"the jax that ran is the indexed release")
    return lines


def _missing(missing, path: PathFn) -> list[str]:
    prim = missing.primitive
    platforms = f" for {', '.join(missing.platforms)}" if missing.platforms else ""
    lines = [switched_off_heading(missing.kind, platforms, missing.name)
             if missing.switched_off else
             (f"missing rule: {missing.kind}{platforms} of {missing.style} primitive "
              f"{missing.name}")]
    if prim is not None:
        lines.append(f"  {'primitive':<14} {prim.name}  {path(prim.loc.file)}:{prim.loc.line}")
        lines += [f"  {SWITCHED_OFF:<14} {switched_off(o, path)}"
                  for o in missing.switched_off]
        lines.append(f"  {'has rules':<14} {', '.join(kind_labels(prim.rules)) or 'none'}")
    else:
        lines.append(f"  {'primitive':<14} {missing.name}  (not defined in the indexed tree)")
    lines += _registrations(missing)
    for i, s in enumerate(missing.siblings):
        label = "examples" if i == 0 else ""
        rule = f"  -> {s.function}" if s.function else ""
        lines.append(f"  {label:<14} {s.name}: its {missing.kind} rule  "
                     f"{path(s.file)}:{s.line}{rule}")
    if missing.flag is not None:  # a new primitive's files show every rule wired in
        command = f"jaxmap new-primitive NAME {missing.flag}".rstrip()
        lines.append(f"  {'template':<14} {command} --dry-run  ({TEMPLATE_NOTE})")
    return lines


def _registrations(missing) -> list[str]:
    """The public registrations, each with its import; the private ones JAX's own
    modules use only as that, never as the advice."""
    lines = []
    for i, reg in enumerate(missing.register_with):
        label = "register with" if i == 0 else ""
        lines.append(f"  {label:<14} {reg.call or reg.name}  ({reg.imports})")
    if missing.register_with and missing.registrars_of:
        lines.append(f"  {'':<14} (the public registrars of jax {missing.registrars_of}, "
                     f"from its snapshot: the indexed tree is not jax)")
    elif not missing.of_jax and not missing.registrars_of:
        lines.append(f"  {'register with':<14} (the indexed tree is not jax, and no jax "
                     f"release's snapshot is here to read its registrars from; `jaxmap "
                     f"explain` without --root shows the installed jax's)")
    elif not missing.register_with:
        lines.append(f"  {'register with':<14} (this jax exports no public registrar of "
                     f"{missing.kind} rules)")
    if missing.internal:
        names = ", ".join(reg.name for reg in missing.internal)
        lines.append(f"  {'JAX internally':<14} {names}  (private to JAX's own modules; "
                     f"not for your code)")
    return lines


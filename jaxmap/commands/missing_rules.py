"""What a rule-missing message is about (explain's diagnoses): the primitive, the kind of
rule, the public registrars that take it (registrations.py) and the nearest sibling
primitives whose rule of that kind is a working example (rule_examples.py); where
the rule is missing because it should not exist (a transpose rule of a primitive
that is not linear), what the user's program did wrong; and where the index has the
rule the message says is missing, where it is, and that the primitive bound was not
this one."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from jaxmap.commands import explain_user
from jaxmap.commands.lookup import spellings
from jaxmap.commands.registrations import SHOWN, Registration, jax_release, registrations
from jaxmap.commands.rule_examples import Sibling, siblings
from jaxmap.knowledge import registrars as R
from jaxmap.knowledge.traces import rule_kinds
from jaxmap.models import Primitive, Rule, SwitchedOff
from jaxmap.models import RuleKind as K

if TYPE_CHECKING:
    from jaxmap.store.read import Index

# What a rule-missing message says, in its own words -> the kind; first match wins
# ("Transpose rule (for reverse-mode differentiation)" is a transpose rule).
_RULE_WORDS = (("transpose rule", K.TRANSPOSE), ("differentiation rule", K.JVP),
               ("batching rule", K.BATCHING), ("translation rule", K.LOWERING),
               ("abstract evaluation", K.ABSTRACT_EVAL), ("evaluation rule", K.IMPL))
_MISSING = ("not implemented", "not found", "must implement")
_METHOD = re.compile(r"`(\w+)`")
_CLASS = re.compile(r"<class '([^']+)'>")
# `jaxmap new-primitive` options that generate the rule a message says is missing ("":
# it generates it by default).
_FLAGS = {K.TRANSPOSE: "--linear", K.LOWERING: "--platform {platform}", K.JVP: "",
          K.BATCHING: "", K.ABSTRACT_EVAL: "", K.IMPL: ""}
# The user's calls that transpose a function (in a traceback's source lines).
_TRANSPOSING = re.compile(r"\b(?:linear_transpose|vjp|grad|value_and_grad|jacrev|hessian)\b")


class MissingRule(NamedTuple):
    kind: str
    style: str  # classic or hijax
    name: str  # the primitive (or hijax class) as the message names it
    platforms: tuple[str, ...]
    primitive: Primitive | None  # None: not defined in the indexed tree
    register_with: tuple[Registration, ...]  # the public registrars and registries
    siblings: tuple[Sibling, ...]
    flag: str | None
    internal: tuple[Registration, ...] = ()  # the private ones JAX's own modules use
    of_jax: bool = True  # whether the indexed tree is jax (else it has no registrars)
    # Of a tree that is not jax: the jax release whose registrars `register_with` are
    # (registrations.jax_release); None for the indexed tree's own, or none found.
    registrars_of: str | None = None
    # The primitive's registrations of that kind switched off where it is made (the
    # call made it with a helper's switch off): missing by design, not by omission.
    switched_off: tuple[SwitchedOff, ...] = ()


class NotLinear(NamedTuple):
    """A transpose rule missing because the primitive is not linear: it has a JVP rule
    and no transpose, as JAX's non-linear primitives do; the function the user
    transposed is not linear."""
    primitive: Primitive
    called_at: tuple[tuple[str, int, str], ...]  # (path, line, source) of the user's call


class HasRule(NamedTuple):
    """The message says a rule is missing that the index has: the primitive bound was
    another one of that name (the user's own `Primitive('cumsum')`, another library's),
    or the module that registers the rule was not imported, or the jax that ran is not
    the indexed release. Registering a rule is not the fix."""
    kind: str
    primitive: Primitive
    rules: tuple[Rule, ...]  # its rules of that kind (for the platform the message names)
    namesakes: tuple[Primitive, ...]  # other primitives of the tree with the same name


def has_rule(index: Index, missing: MissingRule | None) -> HasRule | None:
    """The diagnosis for a message that a rule is missing from a primitive of the
    index that has it (a lowering: for each platform named, or for all)."""
    if missing is None or missing.style != "classic" or missing.primitive is None:
        return None
    prim = missing.primitive
    rules = tuple(r for r in prim.rules if r.kind.value == missing.kind and (
        not missing.platforms or not (r.platforms or r.platform)
        or set(missing.platforms) & set(r.platforms or (r.platform,))))
    covered = {p for r in rules for p in (r.platforms or (r.platform,))}
    if not rules or None not in covered and not set(missing.platforms) <= covered:
        return None
    others = tuple(p for p in index.primitives_named(*spellings(missing.name))
                   if (p.module, p.variable) != (prim.module, prim.variable))
    return HasRule(missing.kind, prim, rules, others)


def not_linear(missing: MissingRule | None, frames) -> NotLinear | None:
    """The diagnosis for a transpose rule missing from a primitive that has a JVP rule
    (so is differentiated by linearizing, not transposing, it), with the traceback's
    frames (path, line, code) whose source transposes, each line once (a chain shows
    the user's call in the operation's source and again in the exception's frames)."""
    if missing is None or missing.kind != K.TRANSPOSE.value or missing.primitive is None:
        return None
    kinds = {kind for r in missing.primitive.rules for kind in rule_kinds(r)}
    if K.JVP.value not in kinds or K.TRANSPOSE.value in kinds:
        return None
    called: dict[tuple[str, int], tuple[str, int, str]] = {}
    for f in frames:
        if f.code and _TRANSPOSING.search(f.code):
            called.setdefault((f.path, f.line), (f.path, f.line, f.code))
    return NotLinear(missing.primitive, tuple(called.values()))


def missing_rule(index: Index, pieces: tuple[str, ...], groups: tuple[str, ...],
                 frames: tuple = (), release: str | None = None) -> MissingRule | None:
    """What a rule-missing message is about; None for any other message. A primitive
    the index does not hold is named by the variable the user's files in `frames`
    make it in, where one does. Where the indexed tree is not jax, the registrars are
    those of jax `release` (the one the paste ran), else of the installed jax."""
    wording = " ".join(pieces).lower()
    if not any(word in wording for word in _MISSING):
        return None
    methods = [m for m in _METHOD.findall(" ".join(pieces)) if m in R.HIJAX_METHODS]
    if methods and "subclass" in wording:
        kind, style = R.HIJAX_METHODS[methods[0]], "hijax"
    else:
        kinds = [k for words, k in _RULE_WORDS if words in wording]
        if not kinds:
            return None
        kind, style = kinds[0], "classic"
    name, prim = _primitive(index, groups)
    platforms = _platforms(pieces, groups) if kind == K.LOWERING else ()
    lowered = _lowered(prim)
    flag = "--style hijax" if style == "hijax" else _FLAGS.get(kind)
    if flag and "{platform}" in flag:  # (for every platform by default)
        flag = flag.format(platform=platforms[0]) if platforms and lowered is not False else ""
    variable = prim.variable if prim else explain_user.primitive_variable(frames, name)
    of_jax = index.jax_version is not None
    jax = None if of_jax else jax_release(release)
    public, internal = registrations(jax[1] if jax else index, kind, style, methods, name,
                                     variable, platforms, lowered)
    examples = siblings(index, prim, kind, platforms, style,
                        frozenset(r.name for r in public))
    return MissingRule(kind.value, style, name, platforms, prim, public[:SHOWN], examples,
                       flag, internal, of_jax,
                       switched_off=_switched_off(prim, kind.value, platforms),
                       registrars_of=jax[0] if jax else None)


def _lowered(prim: Primitive | None) -> bool | None:
    """Whether the primitive has an XLA lowering, for some platform (a Pallas kernel's
    is not one); None where the tree does not define it."""
    if prim is None:
        return None
    return any(r.kind == K.LOWERING and R.lowers_for_xla(r.platform) for r in prim.rules)


def _switched_off(prim: Primitive | None, kind: str,
                  platforms: tuple[str, ...]) -> tuple[SwitchedOff, ...]:
    """The primitive's registrations of `kind` switched off where it is made; of a
    lowering, those for a platform the message names (or any, where it names none or
    the registration is the default)."""
    if prim is None:
        return ()
    return tuple(o for o in prim.switched_off if o.kind.value == kind and (
        not platforms or not o.platforms or set(platforms) & set(o.platforms)))


def _primitive(index: Index, groups: tuple[str, ...]) -> tuple[str, Primitive | None]:
    """The primitive a message names: a quoted name, or a hijax class."""
    names = []
    for group in groups:
        cls = _CLASS.search(group)
        names.append(cls.group(1).rpartition(".")[2] if cls else group.strip(" '\"`"))
    for name in names:
        if name and re.fullmatch(r"[\w\-.]+", name):
            found = index.primitives_named(*spellings(name))
            if found:
                return name, found[0]
    return next((n for n in names if n), ""), None


def _platforms(pieces: tuple[str, ...], groups: tuple[str, ...]) -> tuple[str, ...]:
    """The platforms a lowering message names (the field after `platform`)."""
    for piece, group in zip(pieces, groups):
        if "platform" in piece:
            return tuple(re.findall(r"[a-z_]+", group))
    return ()

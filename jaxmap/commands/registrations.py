"""Where to register a rule a message says is missing: the registrars and registries of
its kind (knowledge/registrars.py) that the indexed jax exports publicly, each with the
public path to import it from and the call that registers the rule for the primitive;
apart, the private ones JAX's own modules use (`mlir._lowerings`), which are never the
advice: a private name may change in any release. A tree that is not jax (a library of
primitives, which imports jax) is advised jax's, from a committed snapshot
(`jax_release`)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from jaxmap.errors import JaxmapError
from jaxmap.knowledge import registrars as R

if TYPE_CHECKING:
    from jaxmap.models import RuleKind
    from jaxmap.store.read import Index

SHOWN = 4  # public registrations listed


class Registration(NamedTuple):
    name: str  # as JAX's code writes it: `mlir.register_lowering`
    file: str  # where it is defined
    line: int
    public: str | None  # the public path to import it from; None: private to JAX
    call: str | None  # how to register the primitive's rule with it; None for hijax
    imports: str | None  # the import that makes `name` its public path; None: private


def registrations(index: Index, kind: RuleKind, style: str, methods: list[str],
                  name: str, variable: str | None, platforms: tuple[str, ...],
                  lowered: bool | None = True
                  ) -> tuple[tuple[Registration, ...], tuple[Registration, ...]]:
    """(the public registrations of `kind`; the private ones) for the
    primitive `name` (held in `variable`, if known). A lowering for one platform is
    registered for it where the primitive has another platform's (`lowered`); where it
    has none, a default one, with no platform, first (mlir falls back to it for every
    platform), then that platform's; where that is not known (None), the platform's
    first. For several platforms, one rule with no platform serves them all."""
    holder = variable or _variable(name)
    found = []
    for short, call in _candidates(kind, style, methods, holder,
                                   _platform_choices(platforms, lowered)):
        for qualified in R.expand(short):
            place = index.place(qualified)
            if place:
                public = _public_path(index, qualified)
                found.append(Registration(short, *place, public, call,
                                          _import_line(short, public)))
                break
    return tuple(r for r in found if r.public), tuple(r for r in found if not r.public)


def jax_release(release: str | None) -> tuple[str, Index] | None:
    """(version, index) of the jax whose public registrars a tree that is not jax is
    advised: the committed snapshot of the release the paste says ran, else of the
    installed jax, else the newest snapshot older than that release (the oldest where
    it is older than all); None where no snapshot is there."""
    from jaxmap.store import snapshot

    available = snapshot.available()
    wanted = release or _installed()
    if wanted not in available:
        nearest = snapshot.older_than(wanted) or snapshot.older_than(None)[::-1]
        if not nearest:
            return None
        wanted = nearest[0][0]
    return wanted, _snapshot(available[wanted])


@lru_cache(maxsize=2)
def _snapshot(path: str) -> Index:
    from jaxmap.store import snapshot

    return snapshot.load(path)


def _installed() -> str | None:
    """The installed jax's release, if one is (read without importing it)."""
    from jaxmap.knowledge import versions

    try:
        return versions.installed().text
    except JaxmapError:
        return None


def _platform_choices(platforms: tuple[str, ...], lowered: bool | None
                      ) -> tuple[str | None, ...]:
    """The `platform=` of each call to offer, in order (None: no platform)."""
    if len(platforms) != 1:
        return (None,)
    one = f"'{platforms[0]}'"
    return (None, one) if lowered is False else (one, None) if lowered is None else (one,)


def _candidates(kind: RuleKind, style: str, methods: list[str], holder: str,
                choices: tuple[str | None, ...]) -> list[tuple[str, str | None]]:
    """(registrar or registry as JAX writes it, the call for `holder`) of `kind`; a
    registrar that takes a platform once for each of `choices`."""
    if style == "hijax":
        return [(f"{base}.{m}", None) for base in R.HI_PRIMITIVE_BASES + R.HIJAX_CLASS_BASES
                for m in methods]
    found: list[tuple[str, str | None]] = [
        (short, _call(short, entry, holder, platform))
        for short, entry in R.CALLS.items() if kind in entry.kinds
        for platform in (choices if entry.platform_arg is not None else (None,))]
    found += [(f"core.Primitive.{m}", f"{holder}.{m}(rule)")
              for m, k in R.METHODS.items() if k == kind]
    found += [(short, f"{short}[{holder}] = rule") for short, k in R.REGISTRIES.items()
              if k == kind]
    return found


def _call(short: str, entry: R.Registrar, holder: str, platform: str | None) -> str:
    """`ad.defbilinear(foo_p, rule_1, rule_2)`, `mlir.register_lowering(foo_p, rule,
    platform='cpu')`: the primitive first, the rule functions where the registrar
    takes them, the platform by keyword."""
    args = [holder]
    if entry.rule_arg is not None:  # one rule per operand (`ad.defjvp`): shown as one
        args += ["rule"] if entry.rule_count in (1, None) else \
            [f"rule_{i}" for i in range(1, entry.rule_count + 1)]
    if entry.platform_arg is not None and platform:
        args.append(f"platform={platform}")
    return f"{short}({', '.join(args)})"


def _public_path(index: Index, qualified: str) -> str | None:
    """The shortest public path the definition `qualified` is exported under."""
    return next(iter(index.public_paths_of(qualified)), None)


def _variable(name: str) -> str:
    """The variable JAX's house style holds a primitive named `name` in: `foo_p`."""
    return re.sub(r"\W", "_", name or "my_primitive") + "_p"


def _import_line(name: str, public: str | None) -> str | None:
    """`from jax.interpreters import mlir`: the import that makes `name`
    (`mlir.register_lowering`) refer to its public path."""
    if public is None:
        return None
    leaf, _, attr = name.partition(".")
    module = public[:-len(attr) - 1] if public.endswith("." + attr) else \
        public.rpartition(".")[0]
    parent, _, last = module.rpartition(".")
    return f"from {parent} import {leaf}" if last == leaf and parent else \
        f"import {module} as {leaf}"

"""Whether an exception class printed in a traceback can come from a raise site.

A site that raises a class by name gives exactly that class; a message a class builds
in its `__init__` comes with that class or a subclass. Python's own classes are known
with their hierarchy; a class of the tree is known by name only, so a subclass of it is
'maybe'."""

from __future__ import annotations

import builtins
import enum

from jaxmap.store.message_patterns import INIT_KIND, WARNING_KIND


class Agreement(enum.IntEnum):
    CONFLICT = -1
    UNKNOWN = 0
    AGREES = 1


def agreement(printed: str | None, exception: str, function: str) -> Agreement:
    """How the class `printed` (None: not said) agrees with a site that raises
    `exception` (its name as written, 'warning' or INIT_KIND) in `function`."""
    if printed is None:
        return Agreement.UNKNOWN
    shown = printed.rpartition(".")[2]
    if exception == WARNING_KIND:
        return Agreement.UNKNOWN if shown.endswith("Warning") else Agreement.CONFLICT
    if exception == INIT_KIND:
        return _subclass(shown, function.rpartition(".")[0].rpartition(".")[2])
    raised = exception.rpartition(".")[2]
    if raised == shown:
        return Agreement.AGREES
    if not raised[:1].isupper():  # `raise _error(...)`, `raise err_cls(...)`: not told
        return Agreement.UNKNOWN
    return Agreement.CONFLICT


def _subclass(shown: str, base: str) -> Agreement:
    """Whether `shown` may be `base` or a subclass of it."""
    if shown == base:
        return Agreement.AGREES
    shown_class, base_class = _builtin(shown), _builtin(base)
    if shown_class is not None and base_class is not None:
        return Agreement.AGREES if issubclass(shown_class, base_class) else Agreement.CONFLICT
    if shown_class is not None:  # a class of Python's own is no subclass of the tree's
        return Agreement.CONFLICT
    return Agreement.UNKNOWN


def _builtin(name: str) -> type | None:
    found = getattr(builtins, name, None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def builtin(name: str) -> bool:
    """Whether a printed class is one of Python's own (`TypeError`, not `jax.errors.X`)."""
    return "." not in name and _builtin(name) is not None

"""JAX's transformations as a user calls them, and words of the qualified names of the
functions that carry each one out (its machinery, lowercase): `jax.grad` runs the
linearize trace and the backward pass, `jax.jvp` the JVP trace, `jax.vmap` the
batching interpreter. explain reads the user's calls from a traceback's source lines
and, among sites nothing else tells apart, puts those of the machinery the user ran
first (`Differentiation rule for 'p' not implemented` is raised by both the JVP trace
and the fallback linearize rule; under `jax.grad` it is the second)."""

from __future__ import annotations

import re

_REVERSE = ("linearize", "backward_pass", "transpose", "vjp")
_FORWARD = ("jvptrace", "jvp")

MACHINERY: dict[str, tuple[str, ...]] = {
    "grad": _REVERSE,
    "value_and_grad": _REVERSE,
    "vjp": _REVERSE,
    "jacrev": _REVERSE,
    "linearize": _REVERSE,
    "linear_transpose": ("transpose", "backward_pass"),
    "jvp": _FORWARD,
    "jacfwd": _FORWARD,
    "hessian": _FORWARD + _REVERSE,
    "vmap": ("batching",),
    "jit": ("pjit",),
    "pmap": ("pmap", "pxla"),
    "shard_map": ("shard_map",),
    "checkify": ("checkify",),
    "checkpoint": ("remat", "checkpoint"),
    "remat": ("remat", "checkpoint"),
}

# The public functions that take the user's function and call it (the
# transformations above, control flow, custom rules, callbacks): on a line that also
# defines that function (`jax.jit(lambda n: int(n))(3)`), an error is the function's,
# not theirs.
TAKE_FUNCTIONS = frozenset(MACHINERY) | {
    "cond", "switch", "scan", "while_loop", "fori_loop", "map", "associative_scan",
    "custom_jvp", "custom_vjp", "custom_vmap", "pure_callback", "io_callback", "callback"}

# A call of one of them in a line of source: `jax.grad(`, `grad(`, `jax.jit(jax.vmap(f))`.
_CALL = re.compile(r"(?<![\w])(" + "|".join(sorted(MACHINERY, key=len, reverse=True))
                   + r")\s*\(")
# Any call in a line of source, its name as written: `jax.vmap(`, `nn.jit(`.
_SPELLED = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\s*\(")
# A name in a decorator's text that is not a keyword argument's: `jax.jit` of
# `partial(jax.jit, static_argnums=1)`.
_NAMED = re.compile(r"(?<![\w.='\"])([A-Za-z_][\w.]*)(?![\w.]|\s*=)")


def called_in(lines) -> frozenset[str]:
    """The machinery words of the transformations called in `lines` of source."""
    return frozenset(word for line in lines for name in _CALL.findall(line)
                     for word in MACHINERY[name])


def decorating(decorator: str) -> tuple[str, ...]:
    """The transformations a decorator applies, as it writes them: `jax.jit` of
    `@jax.jit`, `@jax.jit(donate_argnums=0)` or `@partial(jax.jit, static_argnums=1)`
    (a name it passes as a keyword's value, or a string, is no decorator's)."""
    return tuple(name for name in _NAMED.findall(decorator)
                 if name.rpartition(".")[2] in MACHINERY)


def spelled_in(line: str) -> tuple[str, ...]:
    """The transformations `line` calls, as it writes them, in its order
    (`jax.jit(jax.vmap(f))(x)`: `jax.jit`, `jax.vmap`)."""
    return tuple(name for name in _SPELLED.findall(line)
                 if name.rpartition(".")[2] in MACHINERY)

"""The user's side of a traceback: their frame nearest the failure (the innermost one
outside JAX, other installed packages and Python's own library), and, when JAX called
a function of theirs on the way (a callback, a custom rule, a `cond` branch, a scanned
body, a traced function), that function, how JAX called it, and JAX's frames between
(the route). When the innermost frame is that function's, the user's code raised:
it is the root cause and JAX's frames are only the route. The user's lines that
called a transformation on the way (`jax.vmap(lambda x: ...)(a)`, `jax.grad(f)(x)`)
are read off the frames JAX keeps: the user's own."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import NamedTuple

from jaxmap.commands.tracebacks import Frame
from jaxmap.knowledge import transformations

# Installed packages, Python's own library, frozen and generated code: not the user's.
_NOT_USER = re.compile(r"(?:^|/)(?:site-packages|dist-packages)/|(?:^|/)lib/python\d[\d.]*/|"
                       r"^<frozen |^<string>$|^<__array_function__")

CALLBACK = "a callback (pure_callback, io_callback, debug.callback)"
CUSTOM_RULE = "a custom rule (custom_jvp/custom_vjp/custom_vmap)"
BRANCH = "a branch of lax.cond/lax.switch"
BODY = "the body of lax.scan/while_loop/fori_loop"
TRACED = "a function JAX traced"
# How JAX called the user's function, by the file of the JAX frame that called it ...
_BY_FILE = (("callback.py", CALLBACK), ("debugging.py", CALLBACK),
            ("custom_derivatives.py", CUSTOM_RULE), ("custom_batching.py", CUSTOM_RULE),
            ("conditionals.py", BRANCH), ("loops.py", BODY))
# ... or, where JAX removed its frames, by what the user's calling line calls.
_BY_CALL = ((re.compile(r"\b(?:pure_callback|io_callback|callback|id_tap)\("), CALLBACK),
            (re.compile(r"\b(?:custom_jvp|custom_vjp|defvjp|defjvp|custom_vmap)\b"),
             CUSTOM_RULE),
            (re.compile(r"\b(?:cond|switch)\("), BRANCH),
            (re.compile(r"\b(?:scan|while_loop|fori_loop|associative_scan|map)\("), BODY))


class CalledByJax(NamedTuple):
    frame: Frame  # the innermost frame of the user's function that JAX called
    via: str  # how JAX called it (CALLBACK, BRANCH, ...)
    route: tuple[Frame, ...]  # JAX's frames from the user's call to it; () if removed
    # the innermost frame is that function's: its code raised, or, where JAX removed
    # its frames, called the JAX code that did
    raised: bool


class Transformed(NamedTuple):
    names: tuple[str, ...]  # the transformations the line calls, as it writes them
    at: Frame  # the user's line that calls them


def is_user(frame: Frame) -> bool:
    return frame.jax_file is None and not _NOT_USER.search(frame.path)


def primitive_variable(frames: tuple[Frame, ...], name: str) -> str | None:
    """The variable that one of the user's files in the traceback, the innermost first,
    makes the primitive `name` in at its top level (`my_p = Primitive("my_double")`);
    None where none is on disk or none does."""
    made = re.compile(rf"^(\w+)\s*(?::[^=\n]*)?=\s*[\w.]*Primitive\(\s*['\"]"
                      rf"{re.escape(name)}['\"]", re.M)
    for path in dict.fromkeys(f.path for f in reversed(frames) if is_user(f)):
        try:
            found = made.search(Path(path).read_text())
        except (OSError, UnicodeDecodeError):
            continue
        if found:
            return found.group(1)
    return None


def is_library(frame: Frame) -> bool:
    """A frame of another installed package or of Python's own library."""
    return frame.jax_file is None and bool(_NOT_USER.search(frame.path))


def user_frame(frames: tuple[Frame, ...]) -> Frame | None:
    """The user's frame nearest the failure (innermost), if any."""
    return next((f for f in reversed(frames) if is_user(f)), None)


def nearest(frames: tuple[Frame, ...], source: tuple[Frame, ...]) -> Frame | None:
    """The user's frame nearest the failure: the innermost of `frames`, unless that line
    calls a transformation (`jax.jit(f)(x)`: its machinery failed on what tracing made)
    and `source`, the frames where JAX traced the failing operation (a
    JaxStackTraceBeforeTransformation's), holds one of theirs: then the innermost of
    those, the user's code that binds it, as under grad, where no such chain comes
    between."""
    user, bound = user_frame(frames), user_frame(source)
    if bound is not None and (user is None or transformations.spelled_in(user.code)):
        return bound
    return user


def called_by_jax(frames: tuple[Frame, ...]) -> CalledByJax | None:
    """The user's function nearest the failure that JAX called (its caller a JAX frame,
    or, where JAX removed its frames, a user line that does not call it), if any."""
    inner = next((i for i in range(len(frames) - 1, -1, -1) if is_user(frames[i])), None)
    if inner is None:
        return None
    start = inner
    while start > 0 and is_user(frames[start - 1]) and _calls(frames[start - 1], frames[start]):
        start -= 1
    if start == 0 or is_library(frames[start - 1]):  # the program's entry, or pytest's
        return None
    outer = next((i for i in range(start - 1, -1, -1) if is_user(frames[i])), None)
    route = tuple(f for f in frames[(outer if outer is not None else -1) + 1:start]
                  if f.jax_file)
    raised = inner == len(frames) - 1
    return CalledByJax(frames[inner], _via(route, frames[outer] if outer is not None else None),
                       route, raised)


def transformed(frames: tuple[Frame, ...]) -> tuple[Transformed, ...]:
    """The user's lines on the way to the failure that call a transformation, outermost
    first: each one whose next user frame inward runs a function the line handed it
    (a lambda it defines, one it names without calling: `jax.grad(loss)(p)`; a
    function it does not name came some other way), or the innermost user line (the
    transformation's own machinery raised: a lowering under `jax.jit(f)(x)`); and,
    before a frame's own line, a decorator of the function it runs in that applies one
    (`@jax.jit`, read from the file where it is on disk: the frame's line does not
    show it). A line is named once: a lambda it defines runs on it too."""
    users = [f for f in frames if is_user(f)]
    found: dict[tuple[str, int], Transformed] = {}
    sources: dict[str, tuple[ast.Module, list[str]] | None] = {}
    for i, frame in enumerate(users):
        for decorator in _decorators(frame, sources):
            found.setdefault((decorator.path, decorator.line), Transformed(
                transformations.decorating(decorator.code), decorator))
        names = transformations.spelled_in(frame.code)
        if names and (i + 1 == len(users) or _handed(frame, users[i + 1])):
            found.setdefault((frame.path, frame.line), Transformed(names, frame))
    return tuple(found.values())


def _decorators(frame: Frame, sources: dict[str, tuple[ast.Module, list[str]] | None]
                ) -> list[Frame]:
    """The decorators that apply a transformation to the function `frame` runs in, as
    frames at their lines (`@jax.jit`), outermost first; none where its file is not on
    disk or does not parse (`sources` holds each file's tree and lines, read once)."""
    if frame.path not in sources:
        try:
            text = Path(frame.path).read_text()
            sources[frame.path] = (ast.parse(text), text.splitlines())
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            sources[frame.path] = None
    source = sources[frame.path]
    if source is None:
        return []
    tree, lines = source
    name = frame.function.rpartition(".")[2]
    defs = [node for node in ast.walk(tree) if isinstance(
        node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
        and node.lineno <= frame.line <= (node.end_lineno or node.lineno)]
    if not defs:
        return []
    innermost = max(defs, key=lambda node: node.lineno)
    return [Frame(frame.path, node.lineno, frame.function, lines[node.lineno - 1].strip())
            for node in innermost.decorator_list
            if transformations.decorating(ast.unparse(node))]


def _handed(caller: Frame, callee: Frame) -> bool:
    """Whether the caller's line hands the callee on (names it, or defines it as a
    lambda) rather than calling it."""
    if callee.function == "<lambda>":
        return "lambda" in caller.code
    name = callee.function.rpartition(".")[2]  # a method's, where its class is printed
    return re.search(rf"\b{re.escape(name)}\b", caller.code) is not None \
        and not _calls(caller, callee)


def _calls(caller: Frame, callee: Frame) -> bool:
    """Whether the caller's line calls the callee itself, not hands it to JAX
    (`branch(x)`, not `lax.cond(p, branch, ...)`; unknown counts as a call)."""
    if not caller.code:
        return True
    if callee.function == "<lambda>":  # defined on the line: handed to JAX, or called
        return "lambda" in caller.code and not any(p.search(caller.code) for p, _ in _BY_CALL)
    if callee.function.startswith("<") or callee.function == "?":  # `?`: not printed
        return True
    return re.search(rf"\b{re.escape(callee.function)}\s*\(", caller.code) is not None


def _via(route: tuple[Frame, ...], caller: Frame | None) -> str:
    for frame in reversed(route):
        kind = next((kind for suffix, kind in _BY_FILE
                     if frame.jax_file and frame.jax_file.endswith(suffix)), None)
        if kind:
            return kind
    code = caller.code if caller is not None else ""
    return next((kind for pattern, kind in _BY_CALL if pattern.search(code)), TRACED)

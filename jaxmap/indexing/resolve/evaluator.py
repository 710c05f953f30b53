"""The interpreter's core, which its parts build on (interpreter.py puts them
together): the state they share and `eval`, which hands each kind of expression to its
handler through a table (`_EXPRESSIONS`). Each part is a mixin of `Evaluator`:
statements.py (a scope's statements, its blocks, each kind of statement), calling.py
(what calling a value does) and summaries.py (what calling a function of the tree does,
summarised once and applied at each call); what one asks of another is declared here,
for the type checker only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jaxmap.indexing.facts import (
    ATTRIBUTE,
    CALL,
    CONST,
    DICT,
    LAMBDA,
    NAME,
    NOT,
    SPLAT,
    STR,
    SUBSCRIPT,
    SYM,
    TUPLE,
    UNKNOWN,
)
from jaxmap.indexing.resolve.context import Context, Summary
from jaxmap.indexing.resolve.registrations import registry
from jaxmap.indexing.resolve.values import OPERATORS, negation, text

if TYPE_CHECKING:
    from jaxmap.indexing.resolve.classes import Classes
    from jaxmap.indexing.resolve.findings import Findings
    from jaxmap.indexing.resolve.names import Names
    from jaxmap.indexing.resolve.objects import Objects
    from jaxmap.indexing.resolve.registrations import Registrations

# The callee of a `zip(...)` value: calling.py makes one, statements.py iterates it.
ZIP = (SYM, "zip")


class Evaluator:
    """The evaluation of expressions, and the state the parts share."""

    # Set by interpreter.py, which makes the collaborators.
    names: Names
    findings: Findings
    classes: Classes
    objects: Objects
    registrations: Registrations
    summaries: dict[tuple[str, str], Summary | None]
    _specialising: set[tuple[str, str]]
    _inline_depth: int
    _running: set[tuple[str, str]]
    _by_scope: dict[str, dict[str, list]]

    def eval(self, expr: tuple, ctx: Context) -> tuple:
        handler = _EXPRESSIONS.get(expr[0])
        return UNKNOWN if handler is None else handler(self, expr, ctx)

    def _name(self, expr: tuple, ctx: Context) -> tuple:
        head, _, rest = expr[1].partition(".")
        if not ctx.scope and head in self.objects.attribute_names.get(ctx.module, ()):
            cls = self.objects.class_at(ctx.module, ctx.site[0])  # in a class body, its
            held = None if cls is None else \
                self.objects.class_attributes.get(cls[1:], {}).get(head)  # own names first
            if held is not None:
                return self.names.attribute(held, rest)
        return self.names.lookup(expr[1], ctx.module, ctx.scope, ctx.locals)

    def _call_expr(self, expr: tuple, ctx: Context) -> tuple:
        if expr[1][0] == CALL and len(expr[2]) == 1 and not expr[3]:
            # factory(p)(rule): a decorator factory applied by hand
            self._decorate(expr[1], self.eval(expr[2][0], ctx), ctx)
            return UNKNOWN
        callee = self.eval(expr[1], ctx)
        args, kwargs = self._args(expr[2], expr[3], ctx)
        return self.call(callee, args, kwargs, ctx, text(expr[1]))

    def _attribute(self, expr: tuple, ctx: Context) -> tuple:
        return self.names.attribute(self.eval(expr[1], ctx), expr[2])

    def _subscript(self, expr: tuple, ctx: Context) -> tuple:
        """A table inside a registry is the registry: `rules[kernel_type]`; a dict's
        item under a string key (`_PRIMS["loop_abs"]`)."""
        base = self.eval(expr[1], ctx)
        if base[0] == DICT:
            key = self.eval(expr[2], ctx)
            found = [item for k, item in base[1] if k == key] if key[0] == STR else ()
            return found[-1] if found else UNKNOWN
        return base if registry(base) is not None else UNKNOWN

    def _tuple(self, expr: tuple, ctx: Context) -> tuple:
        return (TUPLE, tuple(self.eval(item, ctx) for item in expr[1]))

    def _dict(self, expr: tuple, ctx: Context) -> tuple:
        return (DICT, tuple((self.eval(k, ctx), self.eval(v, ctx)) for k, v in expr[1]))

    def _not(self, expr: tuple, ctx: Context) -> tuple:
        return negation(self.eval(expr[1], ctx))

    def _operator(self, expr: tuple, ctx: Context) -> tuple:
        """`+`, `or`, `and`, `is`, `x if c else y`: made from their operands' values."""
        return OPERATORS[expr[0]](*(self.eval(operand, ctx) for operand in expr[1:]))

    def _args(self, args: tuple, kwargs: dict, ctx: Context) -> tuple[tuple, dict]:
        return (tuple(self.eval(a, ctx) for a in args),
                {k: self.eval(v, ctx) for k, v in kwargs.items()})

    if TYPE_CHECKING:  # what one part asks of another, by the module that defines it
        # interpreter.py
        def module_env(self, module: str) -> dict: ...
        # statements.py
        def _statements(self, module: str, scope: str) -> list: ...
        def _block(self, events: list, block: int, blocks: tuple, ctx: Context) -> None: ...
        def _decorate(self, decorator: tuple, func: tuple, ctx: Context) -> None: ...
        # calling.py
        def call(self, callee: tuple, args: tuple, kwargs: dict, ctx: Context, via: str,
                 decorated: tuple | None = None) -> tuple: ...
        def construct(self, name: tuple, ctx: Context) -> tuple: ...
        # summaries.py
        def apply(self, func: tuple, args, kwargs, ctx, via, decorated) -> tuple: ...


# Literals (STR, CONST, LAMBDA) and SPLAT evaluate to themselves; other tags are unknown.
_EXPRESSIONS = {NAME: Evaluator._name, CALL: Evaluator._call_expr,
                ATTRIBUTE: Evaluator._attribute, SUBSCRIPT: Evaluator._subscript,
                TUPLE: Evaluator._tuple, DICT: Evaluator._dict, NOT: Evaluator._not,
                **dict.fromkeys(OPERATORS, Evaluator._operator),
                **dict.fromkeys((STR, CONST, LAMBDA, SPLAT), lambda self, expr, ctx: expr)}

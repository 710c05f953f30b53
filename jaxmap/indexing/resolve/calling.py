"""The interpreter's part for calls (a mixin of evaluator.py's `Evaluator`): what
calling a value does, by what it is: a partial, a method, a registrar, a primitive's
constructor, a class of the tree, a function of the tree (its summary applied, or run
where it is called when handed an object or a class), a lambda or a nested function
(run where it is called, to a bounded depth).
"""

from __future__ import annotations

from contextlib import contextmanager

from jaxmap.indexing.facts import (
    APPLIED,
    CLASS,
    CLOSURE,
    CONST,
    DICT,
    FUNC,
    INSTANCE,
    ISA,
    LAMBDA,
    METHOD,
    NEW,
    PARTIAL,
    PRIM,
    STR,
    SUPER,
    SYM,
    UNKNOWN,
)
from jaxmap.indexing.resolve.context import Context
from jaxmap.indexing.resolve.evaluator import ZIP, Evaluator
from jaxmap.indexing.resolve.values import bind_params, canonical, depends_on_params, param_locals
from jaxmap.knowledge import registrars as R

_MAX_INLINE_DEPTH = 8  # lambdas and nested functions calling others (or themselves)


class Calling(Evaluator):
    """What a call gives, and what it registers on the way."""

    def call(self, callee: tuple, args: tuple, kwargs: dict, ctx: Context, via: str,
             decorated: tuple | None = None) -> tuple:
        tag = callee[0]
        if tag == PARTIAL:
            return self.call(callee[1], callee[2] + args, {**callee[3], **kwargs}, ctx, via,
                             decorated)
        if tag == METHOD:
            return self._method(callee[1], callee[2], args, kwargs, ctx, via, decorated)
        name = canonical(callee)
        if name == "super" and not args:
            return self.objects.super_in(ctx.module, ctx.scope, ctx.locals)
        if name == R.PARTIAL and args:
            return (PARTIAL, args[0], args[1:], kwargs)
        if name in R.ZIP_NAMES:
            return (APPLIED, ZIP, args)
        if name == "isinstance" and len(args) == 2:
            decided = self.objects.isinstance(*args)
            if decided is not None:
                return (CONST, decided)
            if depends_on_params(args[0]):  # decided where the summary is applied
                return (ISA, *args)
        if name and name.endswith(".update") and args and args[0][0] == DICT:
            self.registrations.update(name[:-len(".update")], args[0][1], ctx, via)
        registrar = R.CALLS_BY_NAME.get(name) if name else None
        if registrar is not None and not (registrar.read_in_tree and tag == FUNC):
            self.registrations.call_registrar(registrar, args, kwargs, ctx, via, decorated)
            return UNKNOWN
        if name in R.PRIMITIVE_CLASS_NAMES or tag == SYM and name in R.PRIMITIVE_SUBCLASS_NAMES:
            return self.construct(args[0] if args else kwargs.get("name", UNKNOWN), ctx)
        if tag == CLASS and self.classes.makes_primitives(callee):
            return self._primitive_instance(callee, args, kwargs, ctx, via)
        if tag == CLASS:
            return self._instantiate(callee, args, kwargs, ctx, via)
        if tag == FUNC and any(a[0] in (INSTANCE, CLASS) for a in args) and self._walked(callee):
            # a helper given an object or a class (`make(cls)`): what it does to them,
            # a summary could not carry back, so it runs where it is called
            return self.run(callee, args, kwargs, ctx, via)
        if tag == FUNC:
            return self.apply(callee, args, kwargs, ctx, via, decorated)
        if tag == LAMBDA and self._inline_depth < _MAX_INLINE_DEPTH:
            return self._call_lambda(callee, args, kwargs, ctx)
        if tag == CLOSURE and self._inline_depth < _MAX_INLINE_DEPTH:
            return self._call_closure(callee, args, kwargs, ctx, via)
        return (APPLIED, callee, args)

    def _call_closure(self, func: tuple, args: tuple, kwargs: dict, ctx: Context,
                      via: str) -> tuple:
        """A nested function's body, run where it is called (in the caller's summary, at
        the caller's site) with the locals it was defined with and its arguments; its
        value is what its first `return` gives."""
        _, module, qualname, env = func
        facts = self.names.facts(module)
        spec = facts.funcs[qualname]
        bound = bind_params(spec.params, args, kwargs, spec.defaults)
        local = {**env, **param_locals(spec.params, bound)}
        inner = Context(module, qualname, local, ctx.site, ctx.summary, ctx.guards,
                        ctx.conditions, returned=[], via=f"{ctx.via}{via} > ",
                        site_module=ctx.site_in)
        with self._inlined():
            self._block(self._statements(module, qualname), -1, facts.blocks, inner)
        return inner.returned[0] if inner.returned else (APPLIED, func, args)

    def _call_lambda(self, func: tuple, args: tuple, kwargs: dict, ctx: Context) -> tuple:
        """A lambda's body, evaluated where it is called, its parameters bound."""
        _, _, params, defaults, body = func
        bound = bind_params(params, args, kwargs, defaults)
        local = {**ctx.locals, **param_locals(params, bound)}
        inner = Context(ctx.module, ctx.scope, local, ctx.site, ctx.summary, ctx.guards,
                        ctx.conditions, ctx.returned, ctx.via, ctx.site_module)
        with self._inlined():
            return self.eval(body, inner)

    @contextmanager
    def _inlined(self):
        """While a lambda or nested function runs where it is called (bounded depth)."""
        self._inline_depth += 1
        try:
            yield
        finally:
            self._inline_depth -= 1

    def _method(self, target: tuple, method: str, args: tuple, kwargs: dict, ctx, via,
                decorated) -> tuple:
        """`target.method(...)`: a method of the tree's class run with `self` bound (an
        object's, a primitive subclass's, `super()`'s), else a registration method."""
        func = self.objects.method_of(target, method)
        if func is not None:
            this = target[2] if target[0] == SUPER else target
            return self.run(func, (this, *args), kwargs, ctx, via)
        if target[0] == SUPER and method == "__init__":
            self.classes.name_primitive(target[2], args[0] if args else
                                        kwargs.get("name", UNKNOWN), ctx)
            return UNKNOWN
        self.registrations.method(target, method, args, ctx, via, decorated)
        return (APPLIED, (METHOD, target, method), args)

    def _primitive_instance(self, cls: tuple, args: tuple, kwargs: dict, ctx, via) -> tuple:
        """`SomePrimitiveSubclass('name')`: a new primitive, the rules its __init__
        registers on `self`, and the rules its class defines as methods."""
        created = self.construct(args[0] if args else kwargs.get("name", UNKNOWN), ctx)
        if created[0] == PRIM:
            self.classes.made(created[1], cls)
        init = self.classes.initializer(cls)
        if init is not None:  # run with `self` the primitive: `super().__init__("tag")`
            self.run(init, (created, *args), kwargs, ctx, via)
        if created[0] == PRIM:
            self.classes.method_rules(created[1], cls)
        return created

    def _instantiate(self, cls: tuple, args: tuple, kwargs: dict, ctx, via) -> tuple:
        """`Kernel("spmv")` for a class of the tree whose `__init__` may register: an
        object, its `__init__` run with it; other classes' calls are not followed."""
        init = self.classes.initializer(cls)
        if init is None or not self._walked(init):
            return (APPLIED, cls, args)
        made = self.objects.new(cls)
        self.run(init, (made, *args), kwargs, ctx, via)
        return made

    def _walked(self, func: tuple) -> bool:
        spec = self.names.facts(func[1]).funcs.get(func[2])
        return spec is not None and spec.walked

    def run(self, func: tuple, args: tuple, kwargs: dict, ctx: Context, via: str) -> tuple:
        """A function of the tree run where it is called (as a nested function is): its
        parameters bound to the arguments, in the caller's summary and at its site; its
        value is what its first `return` gives. Bounded in depth, never re-entered."""
        key = (func[1], func[2])
        spec = self.names.facts(func[1]).funcs.get(func[2])
        if spec is None or key in self._running or self._inline_depth >= _MAX_INLINE_DEPTH:
            return (APPLIED, func, args)
        bound = bind_params(spec.params, args, kwargs, spec.defaults)
        inner = Context(func[1], func[2], param_locals(spec.params, bound), ctx.site,
                        ctx.summary, ctx.guards, ctx.conditions, returned=[],
                        via=f"{ctx.via}{via} > ", site_module=ctx.site_in)
        self._running.add(key)
        try:
            with self._inlined():
                self._block(self._statements(func[1], func[2]), -1,
                            self.names.facts(func[1]).blocks, inner)
        finally:
            self._running.discard(key)
        return inner.returned[0] if inner.returned else (APPLIED, func, args)

    def construct(self, name: tuple, ctx: Context) -> tuple:
        """A primitive made here: under summary, one the function creates."""
        if ctx.summary is not None:
            ctx.summary.created.append(name)
            return (NEW, name, len(ctx.summary.created) - 1)
        pid = self.findings.new_primitive(name[1] if name[0] == STR else None, None,
                                          ctx.site_in, ctx.site)
        return (PRIM, pid)

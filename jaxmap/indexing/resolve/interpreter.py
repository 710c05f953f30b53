"""A small abstract interpreter over a tree's facts.

Module-level statements run in source order; a function that builds or registers
primitives is summarised once (what it creates, what it registers on which parameter)
and the summary is applied at every call site; loops over literal sequences are
unrolled; branches whose condition is known are taken or skipped; `partial(f, ...)`
and decorator factories are followed. Registrations made through helpers are
reported at the module-level statement that triggered them. Statements and
expressions are evaluated through tables of handlers, one per record type or tag.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

from jaxmap.indexing.facts import (
    APPLIED,
    ATTRIBUTE,
    CALL,
    CLASS,
    CLOSURE,
    CONST,
    DICT,
    FUNC,
    INSTANCE,
    ISA,
    LAMBDA,
    MADE,
    METHOD,
    MODULE,
    NAME,
    NEW,
    NOT,
    PARAM,
    PARTIAL,
    PRIM,
    SPLAT,
    STR,
    SUBSCRIPT,
    SUPER,
    SYM,
    TUPLE,
    UNKNOWN,
    Assign,
    Branch,
    Call,
    Decorate,
    Define,
    FileFacts,
    Loop,
    Return,
    SetItem,
    Unpack,
)
from jaxmap.indexing.resolve.classes import Classes
from jaxmap.indexing.resolve.context import Context, Summary
from jaxmap.indexing.resolve.findings import Findings
from jaxmap.indexing.resolve.names import Names
from jaxmap.indexing.resolve.objects import Objects
from jaxmap.indexing.resolve.registrations import Registrations, registry
from jaxmap.indexing.resolve.values import (
    KNOWN_KINDS,
    OPERATORS,
    Rewrite,
    bind_params,
    canonical,
    condition_text,
    depends_on_params,
    is_callable,
    items_of,
    mentions_new,
    mentions_param,
    negation,
    news_in,
    param_locals,
    text,
    truth_of,
)
from jaxmap.knowledge import registrars as R

_KEPT_AT_MODULE_LEVEL = frozenset({PRIM, FUNC, CLASS, MODULE, TUPLE, PARTIAL, STR, DICT, INSTANCE,
                                   APPLIED, MADE, LAMBDA, SYM, CLOSURE})
_MODULE_VALUES = ".__dict__.values"
_ZIP = (SYM, "zip")
_MAX_INLINE_DEPTH = 8  # lambdas and nested functions calling others (or themselves)


class Interpreter:
    """Runs modules and summarises functions. It makes its collaborators: `names` (its
    lookups read the module envs this runs and the members `objects` knows), `findings`,
    `classes` (whose base expressions this evaluates), `objects` and `registrations`
    (which record rules into `findings`).

    Running a module looks names up, and looking a name up runs the module that defines
    it or evaluates a class's bases: `names` and `classes` hold this interpreter's
    methods, and it holds them, a reference cycle. `close()` breaks it; call it once the
    resolution is done with them (`with contextlib.closing(Interpreter(files))`)."""

    def __init__(self, files: dict[str, FileFacts]):
        self.names = Names(files, self.module_env, self._member)
        self.findings = Findings(self.names)
        self.classes = Classes(self.names, self.findings, self.evaluate_at_module)
        self.objects = Objects(self.names, self.classes)
        self.registrations = Registrations(self.names, self.findings, self.classes,
                                           self.objects)
        self.envs: dict[str, dict] = {}
        self.summaries: dict[tuple[str, str], Summary | None] = {}
        self._specialising: set[tuple[str, str]] = set()
        self._inline_depth = 0  # lambdas and nested functions being run where called
        self._running: set[tuple[str, str]] = set()  # functions run where called, now
        self._by_scope: dict[str, dict[str, list]] = {}  # module -> scope -> statements

    def close(self) -> None:
        """Let go of the collaborators, which hold this interpreter's methods: the end of
        the reference cycle (see the class), so all of it is freed by reference counting
        once the caller lets go of it too. Nothing can run after."""
        del self.names, self.findings, self.classes, self.objects, self.registrations

    def module_env(self, module: str) -> dict:
        """Run a module's top level once; the env of its names (partial while running)."""
        env = self.envs.get(module)
        if env is not None:
            return env
        env = dict(self.names.top_names[module])
        self.envs[module] = env
        facts = self.names.facts(module)
        self._block(self._statements(module, ""), -1, facts.blocks, Context(module, "", env))
        return env

    def _statements(self, module: str, scope: str) -> list:
        """The statements of one scope of `module` (its top level: ''), in order;
        the module's events are grouped once, not scanned again for each scope."""
        grouped = self._by_scope.get(module)
        if grouped is None:
            grouped = self._by_scope[module] = {}
            for event in self.names.facts(module).events:
                if type(event) in _STATEMENTS:
                    grouped.setdefault(event.scope, []).append(event)
        return grouped.get(scope, [])

    def evaluate_at_module(self, module: str, expr: tuple) -> tuple:
        """An expression's value at the top level of `module`."""
        return self.eval(expr, Context(module, "", self.module_env(module)))

    def _member(self, value: tuple, attr: str) -> tuple | None:
        """`value.attr`, where `objects` knows it: the member source of `names`."""
        return self.objects.member(value, attr)

    # -- blocks -------------------------------------------------------------------

    def _block(self, events: list, block: int, blocks: tuple, ctx: Context) -> None:
        """Evaluate events whose innermost block is `block`, entering nested ones."""
        i = 0
        while i < len(events):
            event = events[i]
            child = -1 if event.block == block else _child(event.block, block, blocks)
            if child == -1:  # in `block` itself (or not nested in it after all)
                if ctx.returned is None:
                    ctx.site = (event.line, event.end_line)
                _STATEMENTS[type(event)](self, event, ctx)
                i += 1
                continue
            j = i
            while j < len(events) and _child(events[j].block, block, blocks) == child:
                j += 1
            if isinstance(blocks[child], Loop):
                self._unroll(events[i:j], child, blocks, ctx)
            else:
                self._branch(events[i:j], child, blocks, ctx)
            i = j

    def _unroll(self, events: list, index: int, blocks: tuple, ctx: Context) -> None:
        loop = blocks[index]
        iterable = self.eval(loop.iterable, ctx)
        if ctx.summary is not None and depends_on_params(iterable):
            ctx.summary.per_call = True
        for item in self._iterate(iterable):
            _bind(loop.target, item, ctx.locals)
            self._block(events, index, blocks, ctx)

    def _branch(self, events: list, index: int, blocks: tuple, ctx: Context) -> None:
        """An if/else body: skipped when its condition is known to go the other way;
        under summary, a condition on parameters guards the registrations inside."""
        branch: Branch = blocks[index]
        condition = self.eval(branch.condition, ctx)
        truth = truth_of(condition)
        if truth is not None:
            if truth == branch.taken:
                self._block(events, index, blocks, ctx)
            return
        guarded = ctx.summary is not None and mentions_param(condition)
        if guarded and ctx.summary is not None \
                and any(type(event) in _BINDINGS for event in events):
            ctx.summary.per_call = True  # which value a name gets, each call's arguments say
        opened = ctx.guards if guarded else ctx.conditions
        opened.append((condition, branch.taken) if guarded else
                      condition_text(branch.condition, branch.taken))
        try:
            self._block(events, index, blocks, ctx)
        finally:
            opened.pop()

    def _iterate(self, value: tuple) -> list:
        items = items_of(value)
        if items is not None:
            return list(items)
        if value[0] == APPLIED and value[1] == _ZIP:
            seqs = [self._iterate(a) for a in value[2]]
            if seqs and all(s != [UNKNOWN] for s in seqs):
                return [(TUPLE, tuple(items)) for items in zip(*seqs)]
        if value[0] == APPLIED and value[1][0] == METHOD and value[1][1][0] == DICT:
            pairs = value[1][1][1]  # `table.items()`, `hooks.values()`, `table.keys()`
            if value[1][2] == "items":
                return [(TUPLE, pair) for pair in pairs]
            if value[1][2] in ("values", "keys"):
                return [pair[value[1][2] == "values"] for pair in pairs]
        if value[0] == APPLIED and value[1] == (SYM, "itertools.chain"):
            return [item for arg in value[2] for item in self._iterate(arg)]
        if value[0] == APPLIED and value[1][0] == SYM and value[1][1].endswith(_MODULE_VALUES):
            module = value[1][1][:-len(_MODULE_VALUES)]
            if module in self.names.modules:  # `lax.__dict__.values()`
                imported = self.names.imports.get((module, ""), {}).values()
                values = [*self.module_env(module).values(),
                          *map(self.names.qualified, imported)]
                return _module_values([v for v in values if v[0] != SYM
                                       or self.names.in_tree(v[1])])
        return [UNKNOWN]

    # -- statements ---------------------------------------------------------------

    def _call_statement(self, event: Call, ctx: Context) -> None:
        self.eval(event.call, ctx)

    def _assign(self, event: Assign, ctx: Context) -> None:
        value = self.eval(event.value, ctx)
        owner, _, attr = event.name.rpartition(".")
        if owner:  # `self.primitive = ...`, `cls.outer_primitive = p`
            self.objects.set(self._name((NAME, owner), ctx), attr, value)
            return
        in_class = None if ctx.scope else self.objects.class_at(ctx.module, event.line)
        if in_class is not None:  # a class body's `name = "my_op"`: the class's own
            self.objects.set(in_class, event.name, value)
            return
        if not ctx.scope:
            value = self._module_value(event.name, value, ctx)
        ctx.locals[event.name] = value

    def _unpack(self, event: Unpack, ctx: Context) -> None:
        items: dict = {}
        _bind(event.targets, self.eval(event.value, ctx), items)
        for name, value in items.items():
            ctx.locals[name] = self._module_value(name, value, ctx) if not ctx.scope else value

    def _setitem(self, event: SetItem, ctx: Context) -> None:
        base = event.table
        via = text(base) + "[...] ="
        while base[0] == SUBSCRIPT:
            base = base[1]
        table = self.eval(base, ctx)
        if registry(table) is not None:
            self.registrations.into_table(table, self.eval(event.key, ctx),
                                          self.eval(event.value, ctx), ctx, via)

    def _decorate_statement(self, event: Decorate, ctx: Context) -> None:
        facts = self.names.facts(ctx.module)
        kind = CLASS if event.qualname in facts.classes else FUNC
        self._decorate(event.decorator, (kind, ctx.module, event.qualname), ctx)

    def _define(self, event: Define, ctx: Context) -> None:
        ctx.locals[event.name] = (CLOSURE, ctx.module, event.qualname, ctx.locals)

    def _return(self, event: Return, ctx: Context) -> None:
        if ctx.returned is not None:
            ctx.returned.append(self.eval(event.value, ctx))
            return
        if ctx.summary is None:
            return
        value = self.eval(event.value, ctx)
        if value[0] in (NEW, PRIM, PARAM) or ctx.summary.returns == UNKNOWN:
            ctx.summary.returns = value

    def _module_value(self, name: str, value: tuple, ctx: Context) -> tuple:
        """What a module-level name holds: primitives, functions, literals are kept;
        anything else is known by its qualified name (registries are found that way)."""
        if value[0] == PRIM:
            self.findings.name_variable(value[1], name)
        if value[0] == INSTANCE:  # `spmv_p = Kernel("spmv")` keeps it in `self.primitive`
            for attr, held in self.objects.attributes[value[2]].items():
                if held[0] == PRIM:
                    self.findings.name_variable(held[1], f"{name}.{attr}")
        if name.endswith("_p") and value[0] == APPLIED and value[1][0] == FUNC:
            self._unread_factory(name, value[1], ctx)
        if value[0] == PARTIAL and len(value) == 4:  # the name a rule may be written as
            value = (*value, (ctx.module, name, ctx.site[0]))
        qualified = f"{ctx.module}.{name}"
        if value[0] in _KEPT_AT_MODULE_LEVEL and registry((SYM, qualified)) is None:
            return value
        return (SYM, qualified)

    def _unread_factory(self, name: str, func: tuple, ctx: Context) -> None:
        """`x_p = helper(...)` where extraction skipped helper's body (it mentions no
        primitive or registration word): say so, as x_p may be a primitive we miss."""
        spec = self.names.facts(func[1]).funcs.get(func[2])
        if spec is not None and not spec.walked:
            self.findings.diagnose(
                ctx.site_in, ctx.site[0],
                f"{name} = {func[2]}(...): the body of {func[1]}.{func[2]} was not read (it "
                f"mentions no primitive or registration), so a primitive it may build is "
                f"not indexed")

    def _decorate(self, decorator: tuple, func: tuple, ctx: Context) -> None:
        applied = decorator[0] == CALL
        via = "@" + text(decorator[1] if applied else decorator)
        if applied:
            factory = self.eval(decorator[1], ctx)
            if factory[0] != SYM or factory[1] != R.PARTIAL:
                args, kwargs = self._args(decorator[2], decorator[3], ctx)
                made = self.call(factory, args, kwargs, ctx, via, decorated=func)
                if made[0] == CLOSURE:  # `def deco(f): ...; return deco`: apply it
                    self.call(made, (func,), {}, ctx, via)
                return
        self.call(self.eval(decorator, ctx), (func,), {}, ctx, via)

    # -- expressions --------------------------------------------------------------

    def eval(self, expr: tuple, ctx: Context) -> tuple:
        handler = _EXPRESSIONS.get(expr[0])
        return UNKNOWN if handler is None else handler(self, expr, ctx)

    def _name(self, expr: tuple, ctx: Context) -> tuple:
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
        """A table inside a registry is the registry: `rules[kernel_type]`."""
        base = self.eval(expr[1], ctx)
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

    # -- calls ----------------------------------------------------------------------

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
            return (APPLIED, _ZIP, args)
        if name == "isinstance" and len(args) == 2:
            decided = self.objects.isinstance(*args)
            if decided is not None:
                return (CONST, decided)
            if depends_on_params(args[0]):  # decided where the summary is applied
                return (ISA, *args)
        if name and name.endswith(".update") and args and args[0][0] == DICT:
            self.registrations.update(name[:-len(".update")], args[0][1], ctx, via)
        registrar = R.CALLS_BY_NAME.get(name) if name else None
        if registrar is not None:
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

    def apply(self, func: tuple, args, kwargs, ctx, via, decorated) -> tuple:
        """A call of a function of the tree: its summary, applied to the arguments."""
        summary = self.summary(func[1], func[2])
        if summary is None:
            return (APPLIED, func, args)
        spec = self.names.facts(func[1]).funcs[func[2]]
        bound = bind_params(spec.params, args, kwargs, spec.defaults)
        specialised = self._specialise(func, spec.params, bound) \
            if summary.per_call else None
        if specialised is not None:  # its parameters are the arguments already
            summary = specialised
        if ctx.summary is not None and summary.per_call:
            ctx.summary.per_call = True
        with_args = Rewrite(bound=None if specialised is not None else bound,
                            isinstance_of=self.objects.isinstance)
        created = {k: self.construct(with_args(summary.created[k]), ctx)
                   for k in _created_used(summary)}
        with_new = Rewrite(created=created)

        def subst(value):
            return with_new(with_args(value))

        for target, kind, inner_via, platform, rule, guards, conditions in summary.regs:
            guards = tuple((subst(condition), branch) for condition, branch in guards)
            if any(truth_of(condition) not in (None, branch) for condition, branch in guards):
                continue  # registered in a branch this call does not take
            rule = subst(rule)
            if decorated is not None and not is_callable(rule):
                rule = decorated
            self.registrations.register(subst(target), kind, f"{via} > {inner_via}",
                                        subst(platform), rule, ctx,
                                        tuple(g for g in guards if truth_of(g[0]) is None),
                                        conditions)
        if summary.returns[0] == LAMBDA:  # a rule factory (`_argnum_weak_type(0)`)
            returned = (MADE, func, args)
        else:
            returned = subst(summary.returns) if summary.returns != UNKNOWN \
                else (APPLIED, func, args)
        if with_args.exceeded or with_new.exceeded:
            self.findings.diagnose(ctx.site_in, ctx.site[0], f"a value passed to or returned "
                                   f"by {func[1]}.{func[2]} nests too deep to follow: parts "
                                   f"of it are unknown")
        return returned

    def summary(self, module: str, qualname: str) -> Summary | None:
        """What calling a function does, with PARAM values for its parameters."""
        key = (module, qualname)
        if key in self.summaries:
            return self.summaries[key]
        facts = self.names.facts(module)
        if qualname not in facts.funcs:
            return None
        self.summaries[key] = None  # recursion guard
        params = facts.funcs[qualname].params
        summary = self._summarise(module, qualname, {p: (PARAM, i) for i, p in
                                                      enumerate(params) if p != "*"})
        self.summaries[key] = summary
        return summary

    def _specialise(self, func: tuple, params: tuple, bound: dict) -> Summary | None:
        """The summary of one call, its body run with the arguments themselves (None
        under recursion, or where an argument is a primitive an outer summary creates)."""
        key = (func[1], func[2])
        if key in self._specialising or any(mentions_new(v) for v in bound.values()):
            return None
        self._specialising.add(key)
        try:
            return self._summarise(func[1], func[2], param_locals(params, bound))
        finally:
            self._specialising.discard(key)

    def _summarise(self, module: str, qualname: str, locals_: dict) -> Summary:
        summary = Summary()
        ctx = Context(module, qualname, locals_, summary=summary)
        facts = self.names.facts(module)
        events = self._statements(module, qualname)
        self._block(events, -1, facts.blocks, ctx)
        return summary


def _created_used(summary: Summary) -> list[int]:
    """The primitives a summary creates that a call makes: those it returns or
    registers rules on, in the order it creates them."""
    used = {value[2] for value in news_in(summary.returns)}
    used.update(target[2] for target, *_ in summary.regs if target[0] == NEW)
    return sorted(used)


def _module_values(values: list) -> list:
    """What iterating a module's `__dict__.values()` gives, as far as it matters: its
    values (defined or imported; names from outside the tree left out) of known kinds,
    and one UNKNOWN standing for all the others (a primitive the resolver did not find
    would be one of those)."""
    known = [value for value in values if value[0] in KNOWN_KINDS]
    return known + [UNKNOWN] if len(known) < len(values) else known


def _child(inner: int, outer: int, blocks: tuple) -> int:
    """The block directly inside `outer` that encloses block `inner` (-1: none)."""
    while inner != -1 and blocks[inner].parent != outer:
        inner = blocks[inner].parent
    return inner


def _bind(target: tuple, value: tuple, env: dict) -> None:
    """Assign a loop item to the loop's target names."""
    if target[0] == NAME and "." not in target[1]:
        env[target[1]] = value
    elif target[0] == TUPLE:
        items = value[1] if value[0] == TUPLE and len(value[1]) == len(target[1]) \
            else [UNKNOWN] * len(target[1])
        for sub, item in zip(target[1], items):
            _bind(sub, item, env)


_BINDINGS = (Assign, Unpack)  # statements that give a name a value
_STATEMENTS: dict[type, Callable[..., None]] = {
    Call: Interpreter._call_statement, Assign: Interpreter._assign,
    Unpack: Interpreter._unpack, Define: Interpreter._define,
    SetItem: Interpreter._setitem, Decorate: Interpreter._decorate_statement,
    Return: Interpreter._return}
# Literals (STR, CONST, LAMBDA) and SPLAT evaluate to themselves; other tags are unknown.
_EXPRESSIONS = {NAME: Interpreter._name, CALL: Interpreter._call_expr,
                ATTRIBUTE: Interpreter._attribute, SUBSCRIPT: Interpreter._subscript,
                TUPLE: Interpreter._tuple, DICT: Interpreter._dict, NOT: Interpreter._not,
                **dict.fromkeys(OPERATORS, Interpreter._operator),
                **dict.fromkeys((STR, CONST, LAMBDA, SPLAT), lambda self, expr, ctx: expr)}

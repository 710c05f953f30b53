"""How a registration becomes a rule: registries, registrar calls and rule methods,
kept in the summary of a function under summary, else added to the primitive's rules
with the function the rule is."""

from __future__ import annotations

from jaxmap.indexing.facts import (
    APPLIED,
    CLASS,
    CLOSURE,
    CONST,
    FUNC,
    INSTANCE,
    MADE,
    METHOD,
    NEW,
    PARAM,
    PARTIAL,
    PRIM,
    RULES,
    STR,
    SYM,
    UNKNOWN,
)
from jaxmap.indexing.resolve.context import Context, Guard
from jaxmap.indexing.resolve.findings import Findings
from jaxmap.indexing.resolve.names import Names
from jaxmap.indexing.resolve.values import bind_params, is_callable
from jaxmap.knowledge import registrars as R
from jaxmap.models import RECEIVED_RULE_SUFFIX, RuleKind
from jaxmap.store.records import Place

# Primitive methods that give the function binding it runs (jax 0.4's, then later).
_CUSTOM_BINDS = frozenset({"def_custom_bind", "def_bind_with_trace"})
_SUMMARY_TARGETS = frozenset({PARAM, NEW, PRIM})  # what a summary can register on
_MACHINERY = "jax._src.interpreters."
_SHORT = 24  # characters of a keyword argument's value shown


def registry(value: tuple) -> tuple[RuleKind, str | None] | None:
    """(kind, platform) of a registry value, if it is one."""
    if value[0] != SYM:
        return None
    name = value[1]
    if name in R.REGISTRIES_BY_NAME:
        return R.REGISTRIES_BY_NAME[name], None
    if name in R.PALLAS_LOWERING_TABLES:
        return RuleKind.LOWERING, R.PALLAS_LOWERING_TABLES[name]
    return None


def platform_value(platform: str | None) -> tuple:
    return (STR, platform) if platform else UNKNOWN


class Registrations:
    """Records registrations into `findings`; `classes` names rules that are methods."""

    def __init__(self, names: Names, findings: Findings, classes, objects):
        self.names = names
        self.findings = findings
        self.classes = classes
        self.objects = objects

    def into_table(self, table: tuple, key: tuple, rule: tuple, ctx: Context, via: str) -> None:
        """`table[key] = rule`, where table may be a registry."""
        kind_platform = registry(table)
        if kind_platform is not None:
            kind, platform = kind_platform
            self.register(key, kind, via, platform_value(platform), rule, ctx)

    def update(self, table: str, pairs: tuple, ctx: Context, via: str) -> None:
        """`registry.update({p: rule, ...})`."""
        for key, rule in pairs:
            self.into_table((SYM, table), key, rule, ctx, via)

    def method(self, target: tuple, method: str, args: tuple, ctx: Context, via: str,
               decorated: tuple | None) -> None:
        """`p.def_impl(rule)` or `@p.def_impl`."""
        kind = R.METHODS.get(method)
        if method in _CUSTOM_BINDS and target[0] == PRIM and ctx.summary is None:
            binder = decorated or (args[0] if args else UNKNOWN)
            if binder[0] in (FUNC, CLOSURE):
                self.classes.custom_binder(target[1], binder)
        if kind is not None:
            rule = decorated or (args[0] if args else UNKNOWN)
            self.register(target, kind, via, UNKNOWN, rule, ctx)

    def trace_method(self, cls: tuple, method: str, rule: tuple, ctx: Context,
                     via: str) -> None:
        """`pe.JaxprTrace.process_shard_map = rule` at a module's top level: a Trace
        method that handles the primitives whose bind calls it (see
        `Classes.trace_rules`)."""
        _, functions = self._functions(rule)
        self.classes.assigned_handler(method, cls, ctx.site_in, ctx.site, via, functions,
                                      " and ".join(ctx.conditions) or None)

    def call_registrar(self, registrar: R.Registrar, args: tuple, kwargs: dict, ctx: Context,
                       via: str, decorated: tuple | None) -> None:
        """`ad.deflinear2(p, rule)`, `mlir.register_lowering(p, rule, platform)`, ..."""
        if not args:
            return
        platform = kwargs.get("platform", UNKNOWN)
        if registrar.platform_arg is not None and len(args) > registrar.platform_arg:
            platform = args[registrar.platform_arg]
        rule = decorated or UNKNOWN
        first, count = registrar.rule_arg, registrar.rule_count
        if first is not None and count != 1:
            rule = (RULES, args[first:] if count is None else args[first:first + count])
        elif first is not None and len(args) > first:
            rule = next((a for a in args[first:] if is_callable(a)), args[first])
        for kind in registrar.kinds:
            kind_rule = UNKNOWN if kind == RuleKind.JVP and len(registrar.kinds) > 1 else rule
            self.register(args[0], kind, via, platform, kind_rule, ctx)

    def register(self, target, kind, via, platform, rule, ctx: Context,
                 guards: tuple = (), conditions: tuple = ()) -> None:
        """A rule registration: kept in the summary of the function being summarised,
        else added to the primitive it names (with the conditions nothing decided)."""
        conditions = (*ctx.conditions, *conditions)
        via = ctx.via + via
        if ctx.summary is not None:
            if target[0] in _SUMMARY_TARGETS:
                ctx.summary.regs.append((target, kind, via, platform, rule,
                                         (*ctx.guards, *guards), conditions))
            return
        if target[0] != PRIM:
            self.findings.diagnose(ctx.site_in, ctx.site[0], f"{kind} rule registered via {via} "
                                   f"on a value that is not a known primitive")
            return
        lead, functions = self._functions(rule)
        platform_name = platform[1] if platform[0] == STR else None
        condition = " and ".join(conditions) or None
        self.findings.add_rule(target[1], kind, ctx.site_in, ctx.site, via, platform_name,
                               functions, condition, self._written(lead), self._handed(lead),
                               self._keywords(lead))
        for param, received in self._received_rules(lead):
            self.findings.add_rule(target[1], param, ctx.site_in, ctx.site, f"{via} > {param}",
                                   platform_name, [f for f in (self._function_ref(received),)
                                                   if f is not None], condition)

    def switched_off(self, target, kind, via, platform, guard: Guard, ctx: Context) -> None:
        """A registration the arguments of a call switch off (`guard` goes the other
        way): kept in the summary of the function being summarised, else recorded for
        the primitive it names, at the call."""
        via = ctx.via + via
        if ctx.summary is not None:
            if target[0] in _SUMMARY_TARGETS:
                ctx.summary.offs.append((target, kind, via, platform, guard))
            return
        if target[0] == PRIM:
            self.findings.switched_off(target[1], kind, ctx.site_in, ctx.site, via,
                                       platform[1] if platform[0] == STR else None,
                                       f"`{guard.text}` is {not guard.taken}",
                                       (guard.module, guard.line))

    def _functions(self, rule: tuple) -> tuple[tuple, list[Place]]:
        """The value the rule's first function comes from (which `written` and `handed`
        read), and the functions it names, each once, in order: one registration may
        give several (`ad.defjvp(p, jvp_x, None, jvp_y)`), where `None` and lambdas
        name none."""
        values = rule[1] if rule[0] == RULES else (rule,)
        named = [(v, f) for v, f in zip(values, map(self._function_ref, values)) if f]
        return (named[0][0] if named else rule), list(dict.fromkeys(f for _, f in named))

    def _written(self, rule: tuple) -> Place | None:
        """The name a rule was written as, where it names a partial at module level
        (`_dot_general_batch_rule = partial(_dot_batch_rule, ...)`): name, file, line."""
        if rule[0] != PARTIAL or len(rule) < 5:
            return None
        module, name, line = rule[4]
        return Place(name, self.names.path(module), line)

    def _keywords(self, rule: tuple, depth: int = 0) -> str | None:
        """The keyword arguments of the `partial` a rule is made of, as text
        (`use_rolled_loops=False`; a value the facts do not keep, a number, as `...`):
        what tells apart two rules of one function; None where it has none."""
        if depth > 4:
            return None
        if rule[0] == APPLIED:  # the argument `_function_ref` names the rule by
            arg = next((a for a in rule[2] if self._function_ref(a, depth + 1)), None)
            return self._keywords(arg, depth + 1) if arg is not None else None
        if rule[0] != PARTIAL:
            return None
        inner = self._keywords(rule[1], depth + 1)  # `partial(partial(f, a=1), b=2)`
        own = ", ".join(f"{name}={_short(value)}" for name, value in rule[3].items())
        return ", ".join(filter(None, (inner, own))) or None

    def _received_rules(self, rule: tuple) -> list[tuple[str, tuple]]:
        """What a rule that is a partial of a function of the tree was given for its
        parameters named `..._rule` (`partial(standard_abstract_eval, prim, shape_rule,
        dtype_rule, ...)`): (parameter, the function it holds), each a rule of its own
        whose kind is the parameter's name, as the tree's own signature writes it."""
        return [(param, value) for param, value in self._partial_functions(rule)
                if param.endswith(RECEIVED_RULE_SUFFIX)]

    def _handed(self, rule: tuple, depth: int = 0) -> list[tuple[str, Place]]:
        """(parameter, function of the tree) of what the partial a rule is made from
        hands its function's parameters, other than received rules
        (`mlir.lower_fun(partial(cumred_reduce_window_impl, _reduce_window_sum))`)."""
        if depth > 4:
            return []
        if rule[0] == APPLIED:  # the argument `_function_ref` names the rule by
            arg = next((a for a in rule[2] if self._function_ref(a, depth + 1)), None)
            return self._handed(arg, depth + 1) if arg is not None else []
        found = []
        for param, value in self._partial_functions(rule):
            place = self._function_ref(value, depth + 1) \
                if not param.endswith(RECEIVED_RULE_SUFFIX) else None
            if place is not None:
                found.append((param, place))
        return found

    def _partial_functions(self, rule: tuple) -> list[tuple[str, tuple]]:
        """(parameter, value) of the callables a partial of a function of the tree
        binds, by its function's parameter names."""
        if rule[0] != PARTIAL or rule[1][0] != FUNC:
            return []
        spec = self.names.facts(rule[1][1]).funcs.get(rule[1][2])
        if spec is None:
            return []
        bound = bind_params(spec.params, rule[2], rule[3])
        return [(param, bound[i]) for i, param in enumerate(spec.params)
                if i in bound and is_callable(bound[i])]

    def _function_ref(self, rule: tuple, depth: int = 0) -> Place | None:
        """The named function a rule value is, or is made from."""
        if depth > 4:
            return None
        tag = rule[0]
        if tag == CLOSURE and rule[1].startswith(_MACHINERY):
            # `mlir.cache_lowering(f)` returns its own nested function: name `f`.
            return next(filter(None, (self._function_ref(v, depth + 1) for v in
                                      rule[3].values() if v[0] != CLOSURE)), None)
        if tag in (FUNC, CLOSURE):
            return self.names.def_location(rule[1], rule[2])
        if tag == PARTIAL:
            return self._function_ref(rule[1], depth + 1)
        if tag == METHOD and rule[1][0] == PRIM:
            return self.classes.instance_member(rule[1][1], rule[2])
        if tag == METHOD and rule[1][0] == INSTANCE:  # `self._abstract_eval` of an object
            method = self.objects.method(rule[1][1], rule[2])
            return self._function_ref(method, depth + 1) if method is not None else None
        if tag in (APPLIED, MADE):
            for arg in rule[2]:
                found = self._function_ref(arg, depth + 1)
                if found is not None:
                    return found
            # A rule factory (`_unary_rule(jnp.negative)`, `_argnum_weak_type(0)`: the
            # lambda it makes, folded into it) names the rule; JAX's own wrappers
            # (`mlir.lower_fun`, `mlir.cache_lowering`) do not.
            callee = rule[1]
            if callee[0] == FUNC and not callee[1].startswith(_MACHINERY):
                return self._function_ref(callee, depth + 1)
        return None


def _short(value: tuple) -> str:
    """A keyword argument's value as the source writes it, where the facts keep it:
    a string, True/False/None, the name of a function or class; else `...`."""
    tag = value[0]
    if tag == STR:
        text = repr(value[1])
        return text if len(text) <= _SHORT else text[:_SHORT - 4] + "...'"
    if tag == CONST:
        return str(value[1])
    if tag in (FUNC, CLASS, CLOSURE):
        return value[2].rpartition(".")[2]
    if tag == SYM:
        return value[1].rpartition(".")[2]
    return "..."

"""Cross-file resolution: FileFacts of a whole tree -> primitives, their rules, definitions.

A small abstract interpreter over the events extract.py records, on the values of
values.py. Module-level statements run in source order; names resolve through each
module's imports and re-exports; a function that builds or registers primitives is
summarised once (what it creates, what it registers on which parameter) and the
summary is applied at every call site; loops over literal sequences are unrolled;
`partial(f, ...)` and decorator factories are followed. Registrations made through
helpers are reported at the module-level statement that triggered them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from jaxmap import exports
from jaxmap import registrars as R
from jaxmap.classes import PrimitiveClasses
from jaxmap.models import Resolution, RuleKind
from jaxmap.values import (MAX_HOPS, UNKNOWN, bind_params, canonical, is_callable,
                           mentions_param, rule_row, substitute, text, truth_of)

_MACHINERY = "jax._src.interpreters."
_KEPT_AT_MODULE_LEVEL = frozenset({"prim", "func", "class", "module", "tuple", "partial", "str",
                                   "dict", "applied", "lambda", "sym"})


@dataclass
class Summary:
    """What calling a function does: registrations on its parameters or on the
    primitive it creates, and what it returns."""

    # (target, kind, via, platform, rule, guards); guards: ((condition, branch), ...) on
    # parameters, decided where the summary is applied.
    regs: list[tuple] = field(default_factory=list)
    returns: tuple = UNKNOWN


@dataclass
class _Context:
    """Where evaluation happens: a module's top level, or a function under summary."""

    module: str
    scope: str
    locals: dict
    site: tuple = (0, 0)
    summary: Summary | None = None
    guards: list = field(default_factory=list)  # open `if` branches on parameters


class Resolver(PrimitiveClasses):
    """Runs every module's top level once and collects primitives and rules."""

    def __init__(self, files: dict[str, dict]):
        self.modules: dict[str, tuple[str, dict]] = {
            facts["module"]: (path, facts) for path, facts in sorted(files.items())}
        self.imports: dict[tuple[str, str], dict[str, str]] = {}
        self.top_names: dict[str, dict[str, tuple]] = {}
        for module, (_, facts) in self.modules.items():
            if "error" in facts:
                self.diagnostics.append(facts["error"])
            for scope, alias, target, _line in facts["imports"]:
                self.imports.setdefault((module, scope), {})[alias] = target
            names = {}
            for name, qualname, kind, *_ in facts["defs"]:
                if qualname == name and kind in ("function", "class"):
                    names[name] = ("func" if kind == "function" else "class", module, name)
            self.top_names[module] = names
        self.envs: dict[str, dict] = {}
        self.primitives: list[dict] = []
        self.summaries: dict[tuple[str, str], Summary | None] = {}
        self.class_kinds: dict[tuple[str, str], str | None] = {}
        self.instance_class: dict[int, tuple] = {}  # primitive index -> its class
        self.base_values: dict[tuple[str, str], tuple] = {}  # class -> its bases' values
        self.diagnostics: list[str] = []

    # -- driver -----------------------------------------------------------------

    def run(self) -> Resolution:
        for module in self.modules:
            self.module_env(module)
        for module in self.modules:
            self._hijax_classes(module)
        binds = exports.binds(self)
        return Resolution(self.primitives, exports.definitions(self),
                          exports.import_edges(self), binds, exports.tests(self, binds),
                          self.diagnostics, self._jax_version())

    def lookup_in(self, module: str, scope: str, dotted: str) -> tuple:
        """What `dotted` means in a function (`scope`) or at the top of `module`."""
        return self.lookup(dotted, _Context(module, scope, {}))

    def evaluate_at_module(self, module: str, expr: tuple) -> tuple:
        """An expression's value at the top level of `module`."""
        return self.eval(expr, _Context(module, "", self.module_env(module)))

    def module_env(self, module: str) -> dict:
        """Run a module's top level once; the env of its names (partial while running)."""
        env = self.envs.get(module)
        if env is not None:
            return env
        env = dict(self.top_names[module])
        self.envs[module] = env
        _, facts = self.modules[module]
        events = [e for e in facts["events"] if e[0] == ""]
        ctx = _Context(module, "", env)
        self._block(events, -1, facts["loops"], ctx)
        return env

    # -- statements ---------------------------------------------------------------

    def _block(self, events: list, loop: int, loops: list, ctx: _Context) -> None:
        """Evaluate events whose innermost loop is `loop`, unrolling nested loops."""
        i = 0
        while i < len(events):
            event = events[i]
            if event[1] == loop:
                self._event(event, ctx)
                i += 1
                continue
            child = self._child_loop(event[1], loop, loops)
            if child == -1:  # not nested in `loop` after all: evaluate as is
                self._event(event, ctx)
                i += 1
                continue
            j = i
            while j < len(events) and self._child_loop(events[j][1], loop, loops) == child:
                j += 1
            self._unroll(events[i:j], child, loops, ctx)
            i = j

    @staticmethod
    def _child_loop(inner: int, outer: int, loops: list) -> int:
        """The loop directly inside `outer` that encloses loop `inner`."""
        while inner != -1 and loops[inner][1] != outer:
            inner = loops[inner][1]
        return inner

    def _unroll(self, events: list, loop: int, loops: list, ctx: _Context) -> None:
        _, _, target, iterable, _line = loops[loop]
        if iterable[0] == "g":
            self._branch(events, loop, loops, ctx, iterable)
            return
        for item in self._iterate(self.eval(iterable, ctx)):
            self._bind(target, item, ctx.locals)
            self._block(events, loop, loops, ctx)

    def _branch(self, events: list, loop: int, loops: list, ctx: _Context, guard: tuple):
        """An if/else branch: skipped when its condition is known to go the other way;
        under summary, a condition on parameters guards the registrations inside."""
        condition = self.eval(guard[1], ctx)
        truth = truth_of(condition)
        if truth is not None:
            if truth == guard[2]:
                self._block(events, loop, loops, ctx)
            return
        guarded = ctx.summary is not None and mentions_param(condition)
        if guarded:
            ctx.guards.append((condition, guard[2]))
        try:
            self._block(events, loop, loops, ctx)
        finally:
            if guarded:
                ctx.guards.pop()

    def _iterate(self, value: tuple) -> list:
        if value[0] == "tuple":
            return list(value[1])
        if value[0] == "dict":
            return [k for k, _ in value[1]]
        if value[0] == "applied" and value[1] == ("sym", "zip"):
            seqs = [self._iterate(a) for a in value[2]]
            if seqs and all(s != [UNKNOWN] for s in seqs):
                return [("tuple", tuple(items)) for items in zip(*seqs)]
        if value[0] == "applied" and value[1][0] == "method" and value[1][2] == "items" \
                and value[1][1][0] == "dict":
            return [("tuple", pair) for pair in value[1][1][1]]
        return [UNKNOWN]

    @staticmethod
    def _bind(target: tuple, value: tuple, env: dict) -> None:
        if target[0] == "n" and "." not in target[1]:
            env[target[1]] = value
        elif target[0] == "t":
            items = value[1] if value[0] == "tuple" and len(value[1]) == len(target[1]) \
                else [UNKNOWN] * len(target[1])
            for sub, item in zip(target[1], items):
                Resolver._bind(sub, item, env)

    def _event(self, event: tuple, ctx: _Context) -> None:
        tag = event[2]
        ctx.site = event[-2:]
        if tag == "call":
            self.eval(event[3], ctx)
        elif tag == "assign":
            value = self.eval(event[4], ctx)
            if not ctx.scope:
                value = self._module_value(event[3], value, ctx)
            ctx.locals[event[3]] = value
        elif tag == "setitem":
            self._setitem(event[3], event[4], event[5], ctx)
        elif tag == "dec":
            self._decorate(event[3], self._decorated_value(ctx.module, event[4]), ctx)
        elif tag == "return" and ctx.summary is not None:
            value = self.eval(event[3], ctx)
            if value[0] in ("new", "prim", "param") or ctx.summary.returns == UNKNOWN:
                ctx.summary.returns = value

    def _module_value(self, name: str, value: tuple, ctx: _Context) -> tuple:
        """What a module-level name holds: primitives, functions, literals are kept;
        anything else is known by its qualified name (registries are found that way)."""
        if value[0] == "prim":
            prim = self.primitives[value[1]]
            if prim["variable"] is None:
                prim["variable"] = name
        if name.endswith("_p") and value[0] == "applied" and value[1][0] == "func":
            self._unread_factory(name, value[1], ctx)
        qualified = f"{ctx.module}.{name}"
        if value[0] in _KEPT_AT_MODULE_LEVEL and self._registry(("sym", qualified)) is None:
            return value
        return ("sym", qualified)

    def _unread_factory(self, name: str, func: tuple, ctx: _Context) -> None:
        """`x_p = helper(...)` where extraction skipped helper's body (it mentions no
        primitive or registration word): say so, as x_p may be a primitive we miss."""
        spec = self.modules[func[1]][1]["funcs"].get(func[2])
        if spec is not None and not spec[3]:
            path, _ = self.modules[ctx.module]
            self.diagnostics.append(
                f"{path}:{ctx.site[0]}: {name} = {func[2]}(...): the body of {func[1]}."
                f"{func[2]} was not read (it mentions no primitive or registration), so a "
                f"primitive it may build is not indexed")

    def _setitem(self, base: tuple, key: tuple, rule: tuple, ctx: _Context) -> None:
        via = text(base) + "[...] ="
        while base[0] == "sub":
            base = base[1]
        table = self.eval(base, ctx)
        kind_platform = self._registry(table)
        if kind_platform is not None:
            kind, platform = kind_platform
            self._register(self.eval(key, ctx), kind, via, ("str", platform) if platform
                           else UNKNOWN, self.eval(rule, ctx), ctx)

    def _update_registry(self, table: str, pairs: tuple, ctx: _Context, via: str) -> None:
        """`registry.update({p: rule, ...})`."""
        kind_platform = self._registry(("sym", table))
        if kind_platform is not None:
            kind, platform = kind_platform
            for key, rule in pairs:
                self._register(key, kind, via, ("str", platform) if platform else UNKNOWN,
                               rule, ctx)

    def _registry(self, value: tuple) -> tuple[RuleKind, str | None] | None:
        if value[0] != "sym":
            return None
        name = value[1]
        if name in R.REGISTRIES_BY_NAME:
            return R.REGISTRIES_BY_NAME[name], None
        if name in R.PALLAS_LOWERING_TABLES:
            return RuleKind.LOWERING, R.PALLAS_LOWERING_TABLES[name]
        return None

    def _decorated_value(self, module: str, qualname: str) -> tuple:
        kind = "class" if qualname in self.modules[module][1]["classes"] else "func"
        return (kind, module, qualname)

    def _decorate(self, decorator: tuple, func: tuple, ctx: _Context) -> None:
        via = "@" + text(decorator[1] if decorator[0] == "c" else decorator)
        if decorator[0] == "c":
            factory = self.eval(decorator[1], ctx)
            if factory[0] != "sym" or factory[1] != R.PARTIAL:
                args, kwargs = self._args(decorator[2], decorator[3], ctx)
                self.call(factory, args, kwargs, ctx, via, decorated=func)
                return
        self.call(self.eval(decorator, ctx), (func,), {}, ctx, via)

    # -- expressions --------------------------------------------------------------

    def eval(self, expr: tuple, ctx: _Context) -> tuple:
        tag = expr[0]
        if tag == "n":
            return self.lookup(expr[1], ctx)
        if tag == "c":
            if expr[1][0] == "c" and len(expr[2]) == 1 and not expr[3]:
                # factory(p)(rule): a decorator factory applied by hand
                self._decorate(expr[1], self.eval(expr[2][0], ctx), ctx)
                return UNKNOWN
            callee = self.eval(expr[1], ctx)
            args, kwargs = self._args(expr[2], expr[3], ctx)
            return self.call(callee, args, kwargs, ctx, text(expr[1]))
        if tag == "a":
            return self.attribute(self.eval(expr[1], ctx), expr[2])
        if tag == "sub":  # a table inside a registry is the registry: rules[kernel_type]
            base = self.eval(expr[1], ctx)
            return base if self._registry(base) is not None else UNKNOWN
        if tag == "s":
            return ("str", expr[1])
        if tag == "t":
            return ("tuple", tuple(self.eval(item, ctx) for item in expr[1]))
        if tag == "d":
            return ("dict", tuple((self.eval(k, ctx), self.eval(v, ctx)) for k, v in expr[1]))
        if tag == "l":
            return ("lambda", expr[1])
        if tag == "k":
            return ("const", expr[1])
        if tag == "not":
            operand = self.eval(expr[1], ctx)
            truth = truth_of(operand)
            return ("const", not truth) if truth is not None else ("not", operand)
        return UNKNOWN

    def _args(self, args: tuple, kwargs: dict, ctx: _Context) -> tuple[tuple, dict]:
        return (tuple(self.eval(a, ctx) for a in args),
                {k: self.eval(v, ctx) for k, v in kwargs.items()})

    def lookup(self, dotted: str, ctx: _Context) -> tuple:
        head, _, rest = dotted.partition(".")
        if head in ctx.locals:
            return self.attribute(ctx.locals[head], rest)
        if ctx.scope:
            found = self._via_imports(ctx.module, ctx.scope, dotted)
            if found is not None:
                return found
            env = self.module_env(ctx.module)
            if head in env:
                return self.attribute(env[head], rest)
        found = self._via_imports(ctx.module, "", dotted)
        if found is not None:
            return found
        return ("sym", dotted)

    def _via_imports(self, module: str, scope: str, dotted: str) -> tuple | None:
        table = self.imports.get((module, scope))
        if not table:
            return None
        parts = dotted.split(".")
        for n in range(len(parts), 0, -1):
            alias = ".".join(parts[:n])
            if alias in table:
                return self.qualified(".".join([table[alias], *parts[n:]]))
        return None

    def attribute(self, value: tuple, rest: str) -> tuple:
        if not rest:
            return value
        if value[0] == "module":
            return self.qualified(f"{value[1]}.{rest}")
        if value[0] == "sym":
            return ("sym", f"{value[1]}.{rest}")
        if value[0] in ("prim", "param", "new", "dict") and "." not in rest:
            return ("method", value, rest)
        if value[0] in ("func", "class"):
            return ("sym", f"{value[1]}.{value[2]}.{rest}")
        return UNKNOWN

    def qualified(self, name: str, hops: int = 0) -> tuple:
        """A fully qualified dotted name -> its value, following re-exports."""
        parts = name.split(".")
        for n in range(len(parts), 0, -1):
            module = ".".join(parts[:n])
            if module not in self.modules:
                continue
            if n == len(parts):
                return ("module", module)
            attr, rest = parts[n], ".".join(parts[n + 1:])
            target = self.imports.get((module, ""), {}).get(attr)
            if target is not None and hops < MAX_HOPS:
                return self.attribute(self.qualified(target, hops + 1), rest)
            env = self.module_env(module)
            value = env.get(attr)
            if value is None or value[0] == "str":
                value = ("sym", f"{module}.{attr}")
            return self.attribute(value, rest)
        return ("sym", name)

    # -- calls ----------------------------------------------------------------------

    def call(self, callee: tuple, args: tuple, kwargs: dict, ctx: _Context, via: str,
             decorated: tuple | None = None) -> tuple:
        tag = callee[0]
        if tag == "partial":
            return self.call(callee[1], callee[2] + args, {**callee[3], **kwargs}, ctx, via,
                             decorated)
        if tag == "method":
            return self._method(callee[1], callee[2], args, ctx, via, decorated)
        name = canonical(callee)
        if name == R.PARTIAL and args:
            return ("partial", args[0], args[1:], kwargs)
        if name and name.endswith(".update") and args and args[0][0] == "dict":
            self._update_registry(name[:-len(".update")], args[0][1], ctx, via)
        registrar = R.CALLS_BY_NAME.get(name)
        if registrar is not None:
            self._call_registrar(registrar, args, kwargs, ctx, via, decorated)
            return UNKNOWN
        if name in R.PRIMITIVE_CLASS_NAMES:
            return self._construct(args[0] if args else kwargs.get("name", UNKNOWN), ctx)
        if tag == "class" and self._class_kind(callee) in ("primitive", "hiprimitive"):
            return self._instantiate(callee, args, kwargs, ctx, via)
        if tag == "func":
            return self._apply(callee, args, kwargs, ctx, via, decorated)
        return ("applied", callee, args)

    def _method(self, target: tuple, method: str, args: tuple, ctx, via, decorated) -> tuple:
        kind = R.METHODS.get(method)
        if kind is not None:
            rule = decorated or (args[0] if args else UNKNOWN)
            self._register(target, kind, via, UNKNOWN, rule, ctx)
        return ("applied", ("method", target, method), args)

    def _call_registrar(self, registrar, args, kwargs, ctx, via, decorated) -> None:
        if not args:
            return
        platform = kwargs.get("platform", UNKNOWN)
        if registrar.platform_arg is not None and len(args) > registrar.platform_arg:
            platform = args[registrar.platform_arg]
        rule = decorated or UNKNOWN
        if registrar.rule_arg is not None and len(args) > registrar.rule_arg:
            rule = next((a for a in args[registrar.rule_arg:] if is_callable(a)),
                        args[registrar.rule_arg])
        for kind in registrar.kinds:
            kind_rule = UNKNOWN if kind == RuleKind.JVP and len(registrar.kinds) > 1 else rule
            self._register(args[0], kind, via, platform, kind_rule, ctx)

    def _construct(self, name: tuple, ctx: _Context) -> tuple:
        if ctx.summary is not None:
            return ("new", name)
        return self._new_primitive(name[1] if name[0] == "str" else None, None, ctx.module,
                                   ctx.site)

    def _new_primitive(self, name, variable, module: str, site: tuple, style="classic"):
        line, end_line = site
        self.primitives.append({
            "name": name, "variable": variable, "module": module,
            "file": self.modules[module][0], "line": line, "end_line": end_line,
            "style": style, "rules": []})
        return ("prim", len(self.primitives) - 1)

    def _apply(self, func: tuple, args, kwargs, ctx, via, decorated) -> tuple:
        summary = self.summary(func[1], func[2])
        if summary is None:
            return ("applied", func, args)
        params, _, _, _, defaults = self.modules[func[1]][1]["funcs"][func[2]]
        bound = bind_params(params, args, kwargs, defaults)
        created = None
        if summary.returns[0] == "new" or any(r[0][0] == "new" for r in summary.regs):
            created = self._construct(substitute(summary.returns[1], bound)
                                      if summary.returns[0] == "new" else UNKNOWN, ctx)

        def subst(value):
            if value[0] == "new":
                return created
            return substitute(value, bound)

        for target, kind, inner_via, platform, rule, guards in summary.regs:
            guards = tuple((subst(condition), branch) for condition, branch in guards)
            if any(truth_of(condition) not in (None, branch) for condition, branch in guards):
                continue  # registered in a branch this call does not take
            rule = subst(rule)
            if decorated is not None and not is_callable(rule):
                rule = decorated
            self._register(subst(target), kind, f"{via} > {inner_via}", subst(platform),
                           rule, ctx, tuple(g for g in guards if truth_of(g[0]) is None))
        returned = summary.returns
        if returned[0] == "new":
            return created
        return subst(returned) if returned != UNKNOWN else ("applied", func, args)

    def summary(self, module: str, qualname: str) -> Summary | None:
        key = (module, qualname)
        if key in self.summaries:
            return self.summaries[key]
        _, facts = self.modules[module]
        if qualname not in facts["funcs"]:
            return None
        self.summaries[key] = None  # recursion guard
        params = facts["funcs"][qualname][0]
        locals_ = {p: ("param", i) for i, p in enumerate(params) if p != "*"}
        summary = Summary()
        ctx = _Context(module, qualname, locals_, summary=summary)
        events = [e for e in facts["events"] if e[0] == qualname and e[2] != "binds"]
        self._block(events, -1, facts["loops"], ctx)
        self.summaries[key] = summary
        return summary

    # -- registrations --------------------------------------------------------------

    def _register(self, target, kind, via, platform, rule, ctx: _Context,
                  guards: tuple = ()) -> None:
        if ctx.summary is not None:
            if target[0] in ("param", "new", "prim"):
                ctx.summary.regs.append((target, kind, via, platform, rule,
                                         (*ctx.guards, *guards)))
            return
        if target[0] != "prim":
            path, _ = self.modules[ctx.module]
            self.diagnostics.append(
                f"{path}:{ctx.site[0]}: {kind} rule registered via {via} on a value "
                f"that is not a known primitive")
            return
        self.primitives[target[1]]["rules"].append(rule_row(
            kind, self.modules[ctx.module][0], ctx.site[0], ctx.site[1], via,
            platform[1] if platform[0] == "str" else None, self._function_ref(rule)))

    def _function_ref(self, rule: tuple, depth: int = 0) -> dict | None:
        if depth > 4:
            return None
        tag = rule[0]
        if tag == "func":
            return self._def_location(rule[1], rule[2])
        if tag == "partial":
            return self._function_ref(rule[1], depth + 1)
        if tag == "method" and rule[1][0] == "prim" and rule[1][1] in self.instance_class:
            member = self._members(self.instance_class[rule[1][1]]).get(rule[2])
            if member is not None:
                module, _, line, _ = member
                return {"name": rule[2], "file": self.modules[module][0], "line": line}
            return None
        if tag == "applied":
            for arg in rule[2]:
                found = self._function_ref(arg, depth + 1)
                if found is not None:
                    return found
            # A rule factory (`_unary_rule(jnp.negative)`) names the rule; JAX's own
            # wrappers (`mlir.lower_fun`, `mlir.cache_lowering`) do not.
            callee = rule[1]
            if callee[0] == "func" and not callee[1].startswith(_MACHINERY):
                return self._function_ref(callee, depth + 1)
            return None
        return None

    def _def_location(self, module: str, qualname: str) -> dict | None:
        path, facts = self.modules[module]
        spec = facts["funcs"].get(qualname)
        if spec is None:
            return None
        return {"name": qualname.rpartition(".")[2], "file": path, "line": spec[1]}

    def _jax_version(self) -> str | None:
        if "jax.version" not in self.modules:
            return None
        value = self.module_env("jax.version").get("_version")
        return value[1] if value and value[0] == "str" else None


def resolve(files: dict[str, dict]) -> Resolution:
    """Resolve the facts of every file of a tree (path -> FileFacts)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))  # import chains nest module runs
    try:
        return Resolver(files).run()
    finally:
        sys.setrecursionlimit(limit)

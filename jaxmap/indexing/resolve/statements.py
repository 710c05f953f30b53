"""The interpreter's part for statements (a mixin of evaluator.py's `Evaluator`): the
statements of a scope in source order, through a table of handlers, one per record
type; loops over known sequences unrolled, and branches whose condition is known taken
or skipped (under summary, a condition on parameters guards what is inside).
"""

from __future__ import annotations

from collections.abc import Callable

from jaxmap.indexing.facts import (
    APPLIED,
    CALL,
    CLASS,
    CLOSURE,
    DICT,
    FUNC,
    INSTANCE,
    LAMBDA,
    MADE,
    METHOD,
    MODULE,
    NAME,
    NEW,
    PARAM,
    PARTIAL,
    PRIM,
    STR,
    SUBSCRIPT,
    SYM,
    TUPLE,
    UNKNOWN,
    Assign,
    Branch,
    Call,
    Decorate,
    Define,
    Loop,
    Return,
    SetItem,
    Unpack,
)
from jaxmap.indexing.resolve.context import Context, Guard
from jaxmap.indexing.resolve.evaluator import ZIP, Evaluator
from jaxmap.indexing.resolve.registrations import registry
from jaxmap.indexing.resolve.values import (
    KNOWN_KINDS,
    condition_text,
    depends_on_params,
    items_of,
    mentions_param,
    text,
    truth_of,
)
from jaxmap.knowledge import registrars as R

_KEPT_AT_MODULE_LEVEL = frozenset({PRIM, FUNC, CLASS, MODULE, TUPLE, PARTIAL, STR, DICT, INSTANCE,
                                   APPLIED, MADE, LAMBDA, SYM, CLOSURE})
_MODULE_VALUES = ".__dict__.values"


class Statements(Evaluator):
    """A scope's statements, its blocks, and what each kind of statement does."""

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
        ctx.loops += 1
        try:
            for item in self._iterate(iterable):
                _bind(loop.target, item, ctx.locals)
                self._block(events, index, blocks, ctx)
        finally:
            ctx.loops -= 1

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
        opened.append(Guard(condition, branch.taken, branch.text, ctx.module, branch.line)
                      if guarded else condition_text(branch))
        try:
            self._block(events, index, blocks, ctx)
        finally:
            opened.pop()

    def _iterate(self, value: tuple) -> list:
        items = items_of(value)
        if items is not None:
            return list(items)
        if value[0] == APPLIED and value[1] == ZIP:
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
            target = self._name((NAME, owner), ctx)
            if target[0] == CLASS and attr.startswith("process_") and not ctx.scope:
                self.registrations.trace_method(target, attr, value, ctx, f"{event.name} =")
            self.objects.set(target, attr, value)
            return
        in_class = None if ctx.scope else self.objects.class_at(ctx.module, event.line)
        if in_class is not None:  # a class body's `name = "my_op"`: the class's own
            self.objects.set(in_class, event.name, value)
            if value[0] == PRIM:
                self.findings.name_variable(value[1], f"{in_class[2]}.{event.name}")
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
        elif table[0] == DICT and base is event.table and base[0] == NAME \
                and base[1] in ctx.locals:  # `_PRIMS[name] = p`: the dict a name holds
            key = self.eval(event.key, ctx)
            if key[0] == STR:
                items = tuple(item for item in table[1] if item[0] != key)
                ctx.locals[base[1]] = (DICT, (*items, (key, self.eval(event.value, ctx))))

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
        if value[0] == PRIM and not ctx.loops:  # a loop's name holds each only a while
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
    Call: Statements._call_statement, Assign: Statements._assign,
    Unpack: Statements._unpack, Define: Statements._define,
    SetItem: Statements._setitem, Decorate: Statements._decorate_statement,
    Return: Statements._return}

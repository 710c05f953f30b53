"""The call graph: function -> function call edges and function -> primitive binds
edges, from what each function's text calls or names (`facts.Callee`); the code
outside functions is a caller too: a module's top level, and each class body.

A call resolves through imports, re-exports, aliases, `partial(...)`, wrappers
assigned at module level (`jit_f = jit(_f)`), methods on `self`/`cls` of a class of
the tree, and module attributes. A call that resolves outside the tree (numpy, a
builtin) is `external`; one that cannot be named (a method of a local value, a
parameter) is kept as `unresolved` with its text, never dropped. A name that is only
handed on (`partial(lax.dot_general, ...)`, `jit(_einsum)`, a default
`=lax.dot_general`) is an edge when it names a function of the tree, and otherwise
nothing: it was not a call (a class named as a base or in an annotation is not). A
decorator is a call, with or without arguments. A call through a module-level
variable (`_zeros(x)`, `_zeros = partial(full_like, ...)`; `swish(x)`, `swish =
silu`) is an edge to the function and one to the variable, whose callers are so the
calls of its name; a variable holding a lambda is the callee itself, the lambda's
calls its own (extract.py).
"""

from __future__ import annotations

import ast
import builtins
import re
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from jaxmap.flow import forked
from jaxmap.flow.flow import (
    APPLIED_CLOSURE,
    BOUND,
    FN,
    INSTANCE,
    KLASS,
    OUTSIDE,
    PARTIAL_OF,
    Flow,
)
from jaxmap.flow.guardtext import (
    EQUALS,
    FORWARD,
    KEYWORDS,
    MAYBE,
    NONE,
    SPREAD,
    SURELY,
    VALUE,
    WORD,
)
from jaxmap.flow.heap import release_freed
from jaxmap.flow.parsing import parameters
from jaxmap.flow.recording import FINAL
from jaxmap.indexing.facts import (
    APPLIED,
    CLASS,
    FUNC,
    LAMBDA,
    MADE,
    METHOD,
    MODULE,
    NAME,
    PARTIAL,
    PRIM,
    SYM,
    Binds,
)
from jaxmap.indexing.resolve.names import Names
from jaxmap.indexing.resolve.values import MAX_HOPS
from jaxmap.knowledge.orientation import is_test_module
from jaxmap.models import EXTERNAL, HANDED, RESOLVED, THROUGH, UNRESOLVED
from jaxmap.store.records import DefinitionRecord, PrimitiveRecord

if TYPE_CHECKING:
    from typing import Callable

    from jaxmap.flow.hicalls import HiCalls

    Progress = Callable[[int, int, Callable[[], list[str]]], None]

# A call that may be to more functions than MAX_CERTAIN is a dispatch: its edges are
# `through` (listed, not followed by reachability, or jax.grad would reach every
# primitive through the transpose rules' registry). JAX's own dispatches run to a few
# hundred (every abstract eval rule, every function traced); past MAX_LISTED, a call
# names nothing worth listing and is unresolved.
MAX_CERTAIN, MAX_LISTED = 12, 1000
_BUILTINS = frozenset(dir(builtins))
_HEAD = re.compile(r"[A-Za-z_]\w*")
_BIND_METHODS = frozenset({"bind", "bind_with_trace"})
# A primitive's other methods (`p.def_impl`, `shard_map_p.get_bind_params`): those its
# class defines; not what each primitive sets on itself (`p.abstract_eval = ...`), which
# the flow, one instance for all of a class, would list for every primitive.
_PRIMITIVE_METHOD = "primitive method"


class CallRow(NamedTuple):
    """One edge as stored: caller and callee definition ids (callee None unless
    resolved), the text as written, its status, and its line in the caller (its first
    call there, or its first use if it is only handed on)."""

    caller: int
    callee: int | None
    text: str
    status: str
    line: int
    # The caller's parameters that every use of `text` there requires None (`if x is
    # None:`), comma-separated; and, where the callee has such a guard, its parameters
    # that every call here passes a value surely not None (guardtext.py), for each
    # different call `|`-separated, with the line of the first call of each.
    guard: str | None = None
    fills: str | None = None
    fill_lines: str | None = None


class BindRow(NamedTuple):
    """A function that binds a primitive, itself or through the helper `via` (a helper
    that binds a parameter or a local, called with the primitive)."""

    module: str
    function: str
    primitive: int
    line: int
    caller: int | None
    via: str | None


def call_edges(names: Names, ids: dict[str, int], flow: Flow,
               progress: Progress | None = None, hijax: HiCalls | None = None,
               jobs: int = 1) -> list[CallRow]:
    """Every call edge of the tree; `ids`: qualified name -> definition id. A call the
    names cannot resolve is asked of the value flow; a call of a class is also a call
    of the `__init__` it runs. `progress` is told of the call sites read (a stage of
    their own: flow.sites), then of each module done, and can ask which module's file
    is in work; `hijax` of each call the flow was asked of (hicalls.py).
    With `jobs` above one, modules are read in forked helpers too (forked.py): the
    flow's answers do not depend on which questions a process asked before, so the
    rows are the same. `flow` is closed once its answers are read."""
    flow.sites(progress, jobs)  # every call site first: no question is answered from a part of them
    modules = _Modules(names, ids, flow, hijax)
    if flow._recording is not None or flow._plan is not None:  # (in this process)
        jobs = 1
    if flow._plan is not None:
        flow._plan.same_tree(ids, modules.classes | modules.variables | modules.packages)
    if flow._recording is not None:
        flow._recording.tree = (ids, modules.classes | modules.variables | modules.packages)
    rows: list[CallRow] = []
    for found, noted in forked.each(len(modules.order), modules.read, jobs, progress,
                                    modules.path, modules.sizes()):
        rows += found
        if hijax is not None:
            hijax.add(noted)
    if progress is not None:
        progress(len(names.modules), len(names.modules), list)
    flow.close()  # its memos, let go before the fills: they read only its signatures
    release_freed()
    rows = _library_calls_no_test(names, ids, rows)
    _fill(rows, _passed(names, ids), _signatures(names, ids), flow)
    return rows


class _Modules:
    """Each module's call rows, read by its place in the tree's order."""

    def __init__(self, names: Names, ids: dict[str, int], flow: Flow, hijax: HiCalls | None):
        if flow._recording is not None:  # its reads recorded as the flow's
            names = flow.names
        self.names, self.ids, self.flow, self.hijax = names, ids, flow, hijax
        self.order = list(names.modules)
        self.packages = {module.partition(".")[0] for module in names.modules}
        # A class only named (a base, an annotation `x: core.AbstractValue`) is not called.
        self.classes = {f"{module}.{cls}" for module, (_, facts) in names.modules.items()
                        for cls in facts.classes}
        self.variables = {f"{module}.{d.name}" for module, (_, facts) in names.modules.items()
                          for d in facts.defs if d.kind == "variable" and d.qualname == d.name}

    def path(self, place: int) -> str:
        return self.names.modules[self.order[place]][0]

    def sizes(self) -> list[int]:
        """How many calls each module's text writes: how long it takes to read."""
        return [sum(len(callees) for callees in self.names.modules[module][1].callees.values())
                for module in self.order]

    def read(self, place: int) -> tuple[list[CallRow], list]:
        """The call rows of the module at `place`, and the hijax binds noted reading it."""
        hijax, recording, plan = self.hijax, self.flow._recording, self.flow._plan
        module = self.order[place]
        if plan is not None and plan.green(FINAL, ("rows", module)):
            rows, found = plan.old.rows[module]
        else:
            noted = hijax.noted() if hijax is not None else 0
            if recording is not None:
                recording.start_root(("rows", module))
                recording.read(("names", "module", module))
            rows = self._rows(module)
            found = hijax.since(noted) if hijax is not None else []
            if recording is not None:
                recording.end_root()
        if recording is not None:
            recording.rows[module] = (rows, found)
        return rows, found

    def _rows(self, module: str) -> list[CallRow]:
        names, ids, flow, hijax = self.names, self.ids, self.flow, self.hijax
        classes, variables = self.classes, self.variables
        facts = names.modules[module][1]
        rows: list[CallRow] = []
        known: dict[tuple[str, str], tuple] = {}  # (scope, text) -> answer, per module
        module_heads = _import_heads(names, module, "") | names.env_of(module).keys() \
            | self.packages | {"self", "cls"}
        for qualname, callees in facts.callees.items():
            caller = ids.get(f"{module}.{qualname}" if qualname else module)
            if caller is None:
                continue
            # Names mean the same in every function without imports of its own.
            scope = qualname if (module, qualname) in names.imports else ""
            heads = module_heads | _import_heads(names, module, qualname) if scope \
                else module_heads
            spec = facts.funcs.get(qualname)
            params = frozenset(spec.params) - {"*"} if spec is not None else frozenset()
            for name, line, called, guard, _sites, _lines in callees:  # unpacked: 56k
                before, guarded = len(rows), ",".join(sorted(
                    g for g in guard if g.partition(EQUALS)[0] in params))
                head = name.partition(".")[0]
                if head not in heads or qualname and flow.shadows(module, qualname, head):
                    # A local or a builtin: it names nothing of the tree, but may hold it.
                    if called:
                        rows += _through_values(flow, ids, module, qualname, caller, name,
                                                line, _unnamed(flow, module, qualname, name),
                                                hijax=hijax)
                        _guard(rows, before, guarded)
                    continue
                key = (qualname if name[:5] in ("self.", "cls.") else scope, name)
                if key not in known:
                    known[key] = _resolve(names, module, qualname, name, variables)
                status, target, alias = known[key]
                if status is None or not called and (status != RESOLVED or target in classes):
                    continue  # a `.bind` (a binds edge), or a name handed on: no call
                if not called:
                    rows += [CallRow(caller, ids.get(each), name, HANDED, line)
                             for each in (target, alias) if each is not None]
                elif status == _PRIMITIVE_METHOD:
                    found = _targets(flow, ids, flow.class_methods(module, qualname, name))
                    rows += [CallRow(caller, callee, name, RESOLVED, line)
                             for callee in sorted(found)] \
                        or [CallRow(caller, None, name, UNRESOLVED, line)]
                elif status == UNRESOLVED:
                    rows += _through_values(flow, ids, module, qualname, caller, name, line,
                                            status, hijax=hijax)
                else:
                    rows.append(CallRow(caller, ids.get(target) if target else None, name,
                                        status, line))
                    if alias in ids:  # `_zeros(x)`, `_zeros = partial(full_like, ...)`
                        rows.append(CallRow(caller, ids[alias], name, status, line))
                    if target in classes:
                        rows += _through_values(flow, ids, module, qualname, caller, name,
                                                line, status, ids.get(target), hijax)
                _guard(rows, before, guarded)
        rows += _implicit_calls(flow, ids, module, hijax)
        rows += _decorated_calls(flow, ids, module)
        rows += _alias_edges(names, ids, module, facts)
        return rows


def _library_calls_no_test(names: Names, ids: dict[str, int], rows: list[CallRow]
                           ) -> list[CallRow]:
    """The rows but those of library code calling a test module's definition where it
    does not import that module: only a value a test stored into a library registry
    (`handlers[T] = lambda x: ...`) can make one, and what the library calls does not
    depend on what its tests register. (Test support imports test utilities:
    `lax_test_util` hands `test_util.rand_default` on.)"""
    module_of = {i: names.module_of(qualname) or qualname for qualname, i in ids.items()}
    tests = {i for i, module in module_of.items() if is_test_module(module)}
    if not tests:
        return rows
    imported: dict[str, set[str]] = {}
    for (module, _scope), table in names.imports.items():
        imported.setdefault(module, set()).update(
            names.module_of(target) or target for target in table.values())
    return [row for row in rows if row.callee not in tests or row.caller in tests
            or module_of[row.callee] in imported.get(module_of[row.caller], ())]


def _passed(names: Names, ids: dict[str, int]) -> dict[tuple[int, str], tuple]:
    """(caller, text) -> (what each different call passes (guardtext.py's
    `arguments`), the line of the first call passing it), read from the facts once the
    flow is closed (55k of them on jax)."""
    passed = {}
    for module, (_, facts) in names.modules.items():
        for qualname, callees in facts.callees.items():
            caller = ids.get(f"{module}.{qualname}" if qualname else module)
            if caller is not None:
                for name, _line, called, _guard, sites, lines in callees:
                    if called and sites:
                        passed[caller, name] = tuple(zip(sites, lines))
    return passed


def _guard(rows: list[CallRow], start: int, guard: str) -> None:
    """The rows from `start` on (one name's), guarded by `guard` where it names any."""
    if guard:
        rows[start:] = [row._replace(guard=guard) for row in rows[start:]]


def _signatures(names: Names, ids: dict[str, int]) -> dict[int, tuple[str, str, tuple]]:
    """id -> (qualified name, name, parameters) of each function."""
    found = {}
    for module, (_, facts) in names.modules.items():
        for qualname, spec in facts.funcs.items():
            did = ids.get(f"{module}.{qualname}")
            if did is not None:
                found[did] = (f"{module}.{qualname}", qualname.rpartition(".")[2], spec.params)
    return found


def _defaulted(flow: Flow, full: str, name: str) -> dict[str, str]:
    """The parameters of function `full` whose default is a literal, each as a call
    would pass it: `'word'` for a word, `None`, else `.` (read from its signature's
    text, which the flow keeps by the def's own owner)."""
    signature = flow._signatures.get((full, name))
    return {param: value for param, default, _annotation in parameters(signature[2])
            if default is not None and (value := _literal_value(default))} \
        if signature else {}


@lru_cache(maxsize=1024)
def _literal_value(text: str) -> str:
    """A default's text as a call passing it would (`'edge'` for a word, `None`, `.` for
    any other literal: `0`, `()`), or "" if it is no such literal."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return ""
    if isinstance(value, str) and WORD.fullmatch(value):
        return f"'{value}'"
    return NONE if value is None else VALUE


def _fill(rows: list[CallRow], passed: dict, signatures: dict, flow: Flow) -> None:
    """Each resolved call of a function with a guarded call, or that forwards a
    parameter to such a call (and so on up), with the parameters that a call of it
    there passes a value surely not None (`P`, and `P:word` for a word), None (`P:`),
    and those it passes a parameter of the caller's own (`P=Q`): `filled` of each call,
    the different ones `|`-separated, each with the line of its first call (so a chain
    that needs one of them shows a call that has it, not the first call)."""
    calling: dict[int, list[int]] = {}  # callee -> its resolved rows with arguments
    for k, row in enumerate(rows):
        if row.callee is not None and row.status == RESOLVED \
                and (row.caller, row.text) in passed:
            calling.setdefault(row.callee, []).append(k)
    guarded = {row.caller for row in rows if row.guard}
    work = list(guarded)
    while work:
        callee = work.pop()
        if callee not in signatures or callee not in calling:
            continue
        full, name, params = signatures[callee]
        defaulted = _defaulted(flow, full, name)
        for k in calling[callee]:
            row = rows[k]
            first: dict[str, int] = {}  # what a call fills -> the first line of one
            for site, line in passed[row.caller, row.text]:
                each = ",".join(sorted(filled(site, row.text, name, params, defaulted)))
                first[each] = min(line, first.get(each, line))
            fills = "|".join(sorted(first))
            if fills:
                rows[k] = row._replace(fills=fills, fill_lines="|".join(
                    str(first[each]) for each in sorted(first)))
            if "=" in fills and row.caller not in guarded:
                guarded.add(row.caller)
                work.append(row.caller)


def filled(site: tuple, text: str, name: str, params: tuple[str, ...],
           defaulted: dict[str, str] | None = None) -> set[str]:
    """The parameters of function `name` (`params`, `*` where positional ones end) that
    the call `site` (guardtext.py's `arguments`), written `text`, passes a value surely
    not None (neither `None` nor a value that may be None) or leaves to a default of
    `defaulted` (a literal, as passed); and, as `P:word`, those it so passes a word
    (`'edge'`); as `P:`, those it so passes None, which equals no word; as `P=Q`, those
    it passes the caller's own parameter `Q` (`@Q`).
    Only where `text` names the function itself (not an alias or a partial, which may
    move its arguments); a method's arguments by keyword only."""
    if text.rpartition(".")[2] != name:
        return set()
    positional = params[:params.index("*")] if "*" in params else params
    if positional[:1] in (("self",), ("cls",)):
        positional = ()
    keyword_only = frozenset(params[params.index("*") + 1:]) if "*" in params else frozenset()
    here: dict[str, str] = {}  # parameter -> what it is passed: `.`, `'word'` or `@Q`
    given: set[str | None] = set()
    at, star, keywords = 0, False, False  # star: a positional argument went unplaced
    for argument in site:
        key, keyword, value = argument.partition("=")
        if argument in (SPREAD, KEYWORDS):
            star, keywords = star or argument == SPREAD, keywords or argument == KEYWORDS
            continue
        if keyword:
            param = key
        else:
            param, value = positional[at] if at < len(positional) and not star else None, key
            at += 1
        given.add(param)
        star = star or param is None
        if param is not None and value != MAYBE:
            here[param] = value
    if not keywords:  # (`**kwargs` may pass any; an unplaced positional, all but these)
        here.update((param, value) for param, value in (defaulted or {}).items()
                    if param not in given and (not star or param in keyword_only))
    found = set()
    for param, value in here.items():
        if value == NONE:
            found.add(f"{param}:")
            continue
        if value.startswith((FORWARD, SURELY)):
            found.add(f"{param}={value[1:]}")
        if not value.startswith(FORWARD):
            found.add(param)
            if value.startswith("'"):
                found.add(f"{param}:{value[1:-1]}")
    return found


def _alias_edges(names: Names, ids: dict[str, int], module: str, facts) -> list[CallRow]:
    """A module-level variable that names a function or class of the tree (`swish =
    silu`, `logsumexp = _logsumexp`) calls it: calling the alias is calling it, so its
    callees and what it binds are the function's."""
    rows, env = [], names.env_of(module)
    for d in facts.defs:
        if d.kind != "variable" or d.qualname != d.name or d.name not in env:
            continue
        alias = ids.get(f"{module}.{d.name}")
        target = _definition(names, env[d.name])
        if alias is not None and target in ids and ids[target] != alias:
            rows.append(CallRow(alias, ids[target], d.name, RESOLVED, d.line))
    return rows


def _through_values(flow: Flow, ids: dict[str, int], module: str, owner: str, caller: int,
                    text: str, line: int, status: str, known: int | None = None,
                    hijax: HiCalls | None = None) -> list[CallRow]:
    """The edges of a call from what its callee may hold (besides `known`, the edge the
    names resolved); if it holds nothing the flow knows, the call as it was (unresolved
    or external) unless the names resolved it. `hijax` is told what it holds itself."""
    named = flow.may_name(text)
    through = _targets(flow, ids, flow.callees(module, owner, text)) if named else set()
    held = flow.callees(module, owner, text, through=False) if named else frozenset()
    if hijax is not None:
        hijax.note(module, owner, line, held)
    direct = _targets(flow, ids, held)
    through |= direct  # (where a cycle was cut, one mode may have seen less than the other)
    direct.discard(known)
    through.discard(known)
    inner = _folded_into(caller, owner, text, through)
    if inner:
        direct.discard(caller)
        through.discard(caller)
    rows = _candidates(caller, text, line, direct, through - direct)
    if not rows and inner:
        return []
    if not rows and known is None:
        if status == UNRESOLVED and flow.of_a_container(module, owner, text):
            status = EXTERNAL  # `xs.append(x)` of a list written here
        return [CallRow(caller, None, text, status, line)]
    return rows


def _candidates(caller: int, text: str, line: int, direct: set[int], through: set[int]
                ) -> list[CallRow]:
    """The edges of one call to what its callee may be: `resolved` to what it holds
    itself; `through` to what only parameters hand it, and to all of them where it may
    be more than MAX_CERTAIN functions (a dispatch: `rule = registry[prim]; rule(...)`,
    a wrapper's `fun(...)`), which reachability does not follow; where it may be more
    than MAX_LISTED, one unresolved call."""
    if len(direct) + len(through) > MAX_LISTED:
        return [CallRow(caller, None, text, UNRESOLVED, line)]
    if len(direct) + len(through) > MAX_CERTAIN:
        direct, through = set(), direct | through
    return [CallRow(caller, target, text, RESOLVED, line) for target in sorted(direct)] \
        + [CallRow(caller, target, text, THROUGH, line) for target in sorted(through)]


def _targets(flow: Flow, ids: dict[str, int], values) -> set[int]:
    """Definition ids of the functions of values: classes with their `__init__`,
    instances with their `__call__`."""
    found: set[int] = set()
    modules = flow.names.modules
    for value in values:
        if value[0] in (FN, BOUND, APPLIED_CLOSURE) and value[1] in modules:
            continue  # a lambda of a module's top level: no definition of its own to call
        if value[0] == APPLIED_CLOSURE:  # the closure, and what its maker was handed
            if value[1] in ids:
                found.add(ids[value[1]])
            found |= _targets(flow, ids, (v for _param, held in value[3] for v in held))
        elif value[0] in (FN, BOUND) and value[1] in ids:
            found.add(ids[value[1]])
        elif value[0] in (PARTIAL_OF, OUTSIDE):  # `partial(f, ...)`, `wraps(f)(g)` call f
            found |= _targets(flow, ids, (value[1],))
        elif value[0] == KLASS and value[1] in ids:
            found.add(ids[value[1]])
            init = flow.constructor(value[1])
            if init in ids:
                found.add(ids[init])
        elif value[0] == INSTANCE:  # calling an instance runs its class's `__call__`
            found |= _targets(flow, ids, (v for v in flow.attribute(value, "__call__")
                                          if v[0] == BOUND))
    return found


def _decorated_calls(flow: Flow, ids: dict[str, int], module: str) -> list[CallRow]:
    """What calling a decorated def's name calls besides the def: what its decorators
    made of it (`@jit def f`: the callback the native jit object runs), an edge of the
    def itself, since the def is what the name means (each edge at its first
    decorator's line)."""
    rows = []
    for owner, name, line in flow.decorated_defs(module):
        caller = ids.get(f"{module}.{owner}.{name}" if owner else f"{module}.{name}")
        if caller is None:
            continue
        direct = _targets(flow, ids, flow.callees(module, owner, name, through=False))
        through = _targets(flow, ids, flow.callees(module, owner, name)) | direct
        direct.discard(caller)
        through.discard(caller)
        rows += _candidates(caller, name, line, direct, through - direct)
    return rows


def _implicit_calls(flow: Flow, ids: dict[str, int], module: str,
                    hijax: HiCalls | None = None) -> list[CallRow]:
    """Calls the text shows no dotted callee for (see `Flow.implicit_calls`); `hijax` is
    told what each callee holds itself."""
    rows = []
    for owner, text, line, direct, through in flow.implicit_calls(module):
        caller = ids.get(f"{module}.{owner}" if owner else module)
        if caller is None:
            continue
        if hijax is not None:
            hijax.note(module, owner, line, direct)
        found = _targets(flow, ids, direct)
        held = _targets(flow, ids, through) - found
        if _folded_into(caller, owner, text, found | held):
            found.discard(caller)
            held.discard(caller)
            if not found and not held:
                continue
        edges = _candidates(caller, text, line, found, held)
        if edges or not flow.is_operator(text):  # an operator names no call when unknown
            rows += edges or [CallRow(caller, None, text,
                                      _unnamed_implicit(flow, module, owner, text), line)]
    return rows


def _folded_into(caller: int, owner: str, text: str, targets: set[int]) -> bool:
    """Whether a call may be of its caller's own nested def or lambda, not by the
    caller's own name (a recursion): a call within one definition, as the index folds
    them into it, which is no edge."""
    return caller in targets and text.rpartition(".")[2] != owner.rpartition(".")[2]


def _unnamed_implicit(flow: Flow, module: str, owner: str, text: str) -> str:
    """The status of an implicit call that names nothing of the tree. Outside the tree:
    `super().m(...)` in a method of a known class, where no class of the tree after it
    in its MRO defines m (`RuntimeError.__init__`); a builtin class raised (`raise
    NotImplementedError`); a call on what a module outside the tree gives
    (`np.ones(n).astype(int)`, `math.prod(s).bit_length()`). Anything else is
    unresolved."""
    if text.startswith("super().") and flow.callees(module, owner, "super()"):
        return EXTERNAL
    if text in _BUILTINS and not flow.shadows(module, owner, text):
        return EXTERNAL
    head = _HEAD.match(text)
    name = head.group() if head and head.end() < len(text) and text[head.end()] in ".([" \
        else None
    if name and name not in _BUILTINS and _known_head(flow.names, module, owner, name) \
            and not flow.shadows(module, owner, name):
        value = flow.names.lookup(name, module, owner)
        if value[0] == MODULE and value[1] not in flow.names.modules \
                or value[0] == SYM and not flow.names.in_tree(value[1]):
            return EXTERNAL
    return UNRESOLVED


def _import_heads(names: Names, module: str, scope: str) -> set[str]:
    """The first names that imports bind in `scope` and the functions around it."""
    heads: set[str] = set()
    while True:
        heads.update(alias.partition(".")[0] for alias in names.imports.get((module, scope), ()))
        if not scope:
            return heads
        scope = scope.rpartition(".")[0]


def _unnamed(flow: Flow, module: str, owner: str, text: str) -> str:
    """The status of a call whose first name is neither imported nor defined in its
    module: a builtin (not a local of `owner` named like one: `callable = make()`) is
    outside the tree; anything else is a local value."""
    head = text.partition(".")[0]
    return EXTERNAL if head in _BUILTINS and not flow.shadows(module, owner, head) \
        else UNRESOLVED


def _resolve(names: Names, module: str, qualname: str, text: str, variables: set[str]
             ) -> tuple[str | None, str | None, str | None]:
    """(status, qualified name of the callee definition, the module-level variable of
    `variables` it is called through, if any: `swish = silu`, `_zeros =
    partial(full_like, ...)`) of a name in a function; no status for a primitive's
    `.bind` (a binds edge, from the Binds facts). A variable holding a lambda is the
    callee itself (its text's calls are its own)."""
    head = text.partition(".")[0]
    if head in ("self", "cls") and "." in qualname:
        found = _member(names, module, qualname.rpartition(".")[0], text.partition(".")[2])
        return (RESOLVED, found, None) if found else (UNRESOLVED, None, None)
    # At the top level (qualname ''), names are the module's own before its imports.
    value = names.lookup(text, module, qualname, None if qualname else names.env_of(module))
    target = _definition(names, value)
    if target is not None:
        alias = _variable(names, module, qualname, text, variables)
        return RESOLVED, target, alias if alias != target else None
    if value[0] == LAMBDA:
        alias = _variable(names, module, qualname, text, variables)
        if alias is not None:
            return RESOLVED, alias, None
    if value[0] == SYM and not names.in_tree(value[1]) and _known_head(names, module,
                                                                       qualname, head):
        return EXTERNAL, None, None
    if value[0] == METHOD and value[1][0] == PRIM:  # `p.bind(...)`: a binds edge
        return (None, None, None) if value[2] in _BIND_METHODS \
            else (_PRIMITIVE_METHOD, None, None)
    return UNRESOLVED, None, None


def _variable(names: Names, module: str, scope: str, text: str, variables: set[str]
              ) -> str | None:
    """The module-level variable of `variables` that `text` names in function `scope`
    of `module` (its top level: ''), through imports and re-exports, if any."""
    head, _, rest = text.partition(".")
    target = None
    while scope and target is None:  # a function's own imports, then its enclosing ones'
        target = names.imports.get((module, scope), {}).get(head)
        scope = scope.rpartition(".")[0]
    if target is None and head in names.defined(module):
        target = f"{module}.{head}"
    target = target or names.imports.get((module, ""), {}).get(head)
    qualified = f"{target}.{rest}" if target and rest else target
    for _ in range(MAX_HOPS):
        if qualified is None or qualified in variables:
            return qualified
        owner = names.module_of(qualified)
        if owner is None or owner == qualified:
            return None
        attr, _, tail = qualified[len(owner) + 1:].partition(".")
        target = names.imports.get((owner, ""), {}).get(attr)  # a re-export
        qualified = f"{target}.{tail}" if target and tail else target
    return None


def _definition(names: Names, value: tuple, depth: int = 0) -> str | None:
    """The qualified name of the function or class a value calls, if in the tree."""
    tag = value[0]
    if tag in (FUNC, CLASS):
        return f"{value[1]}.{value[2]}"
    if tag == PARTIAL and depth < MAX_HOPS:
        return _definition(names, value[1], depth + 1)
    if tag in (APPLIED, MADE) and depth < MAX_HOPS:  # `jit(f)`, `api_boundary(f)`: f is called
        for arg in value[2]:
            found = _definition(names, arg, depth + 1)
            if found:
                return found
    if tag == SYM and names.in_tree(value[1]):  # a method, `Class.f` of another module
        module, qualname = _split(names, value[1])
        facts = names.facts(module) if module in names.modules else None
        if facts and (qualname in facts.funcs or qualname in facts.classes):
            return value[1]
    return None


def _member(names: Names, module: str, cls: str, attr: str, depth: int = 0) -> str | None:
    """`module.cls.attr` for a member of a class of the tree, looked up through its
    bases (`self._f` in a method of `cls`)."""
    spec = names.facts(module).classes.get(cls)
    if spec is None or "." in attr or depth > MAX_HOPS:
        return None
    if attr in spec.members and cls + "." + attr in names.facts(module).funcs:
        return f"{module}.{cls}.{attr}"
    for base in spec.bases:
        if base[0] != NAME:
            continue
        value = names.lookup(base[1], module, "", names.env_of(module))
        if value[0] == CLASS:
            found = _member(names, value[1], value[2], attr, depth + 1)
            if found:
                return found
    return None


def _known_head(names: Names, module: str, scope: str, head: str) -> bool:
    """Whether a name's head is imported, a builtin or a module-level name: then what it
    leads to outside the tree is known to be outside, not a local left unresolved."""
    return head in _BUILTINS or head in names.imports.get((module, scope), ()) \
        or head in names.imports.get((module, ""), ()) or head in names.env_of(module)


def bind_edges(names: Names, ids: dict[str, int], calls: list[CallRow],
               primitives: list[PrimitiveRecord]) -> list[BindRow]:
    """Functions that bind a primitive: `x_p.bind(...)` where x_p is a primitive (or,
    imported inside an unread body, the one primitive of the tree held by a variable of
    that name); and, for a helper that binds something it cannot name (a parameter,
    `prim = a_p if c else b_p`), the primitives it names itself, and where what it binds
    is a parameter, those its callers name when calling it (not where it is a local of
    its own: a caller's `prim` is not the helper's)."""
    rows: list[BindRow] = []
    helpers: dict[int, tuple[str, str, int]] = {}
    held: dict[str, list[int]] = {}
    for pid, prim in enumerate(primitives):
        if prim.variable is not None:
            held.setdefault(prim.variable, []).append(pid)
    handed: set[int] = set()  # helpers whose bound name is a parameter
    for module, (_, facts) in names.modules.items():
        for event in facts.events:
            if not isinstance(event, Binds):
                continue
            caller = ids.get(f"{module}.{event.scope}")
            value = names.lookup(event.name, module, event.scope)
            if value[0] != PRIM and len(held.get(event.name, ())) == 1:
                value = (PRIM, held[event.name][0])
            if value[0] == PRIM:
                rows.append(BindRow(module, event.scope, value[1], event.line, caller, None))
            elif caller is not None:
                helpers.setdefault(caller, (module, event.scope, event.line))
                spec = facts.funcs.get(event.scope)
                if spec is not None and event.name.partition(".")[0] in spec.params:
                    handed.add(caller)
    named = _named_primitives(names, ids)
    for caller, (module, function, line) in helpers.items():
        rows += [BindRow(module, function, pid, line, caller, None)
                 for pid in named.get(caller, ())]
    owners = {i: q for q, i in ids.items()}
    for edge in calls:
        if edge.callee in handed and edge.caller in named and edge.caller != edge.callee:
            module, function = _split(names, owners[edge.caller])
            helper = helpers[edge.callee][1]
            rows += [BindRow(module, function, pid, edge.line, edge.caller, helper)
                     for pid in named[edge.caller]]
    return rows


def rule_calls(names: Names, definitions: list[DefinitionRecord],
               primitives: list[PrimitiveRecord]) -> list[tuple[int, str, str | None, int, int]]:
    """(primitive, rule kind, platform, rule function id, handed function id) for each
    function the partial a rule is made from hands its function, where that function
    calls the parameter that holds it (`window_reduce(x, ...)` in
    `cumred_reduce_window_impl`): binding the primitive runs it there, which a call
    edge of the rule function cannot say (its other partials hand it others)."""
    places = {(d.file, d.line): i for i, d in enumerate(definitions) if d.kind == "function"}
    rows = []
    for pid, primitive in enumerate(primitives):
        for rule in primitive.rules:
            owner = places.get((rule.function.file, rule.function.line)) \
                if rule.handed and rule.function else None
            if owner is None:
                continue
            definition = definitions[owner]
            qualname = definition.qualname[len(definition.module) + 1:]
            called = {name for name, _line, call, *_ in
                      names.facts(definition.module).callees.get(qualname, ()) if call}
            for param, place in rule.handed:
                callee = places.get((place.file, place.line))
                if param in called and callee is not None:
                    rows.append((pid, rule.kind, rule.platform, owner, callee))
    return rows


def _named_primitives(names: Names, ids: dict[str, int]) -> dict[int, tuple[int, ...]]:
    """definition id -> the primitives its text names (`add_p`, not `add_p.bind`)."""
    named = {}
    for module, (_, facts) in names.modules.items():
        for qualname, callees in facts.callees.items():
            owner = ids.get(f"{module}.{qualname}")
            if owner is None:  # a module's top level: it has no id of this form
                continue
            found = []
            for name, _line, called, *_ in callees:
                if not called and name.endswith("_p"):
                    value = names.lookup(name, module, qualname)
                    if value[0] == PRIM:
                        found.append(value[1])
            if found:
                named[owner] = tuple(found)
    return named


def _split(names: Names, qualified: str) -> tuple[str, str]:
    """(module, qualname) of a qualified definition name."""
    module = names.module_of(qualified.rpartition(".")[0])
    return (module, qualified[len(module) + 1:]) if module else (qualified, "")


class Reach:
    """The primitives each function reaches through resolved call edges (a test reaches
    what anything it calls binds, through any module), computed on demand, memoised.
    Functions that call each other in a cycle reach the same primitives: the strongly
    connected components met from the function asked are found (Tarjan's algorithm,
    without recursion) and each is answered whole, so no answer depends on which
    function was asked first. What module and class bodies call (`bodies`: ids of
    definitions that are not functions) is not followed: calling a class does not run
    its body."""

    def __init__(self, calls: list[CallRow], binds: list[BindRow], bodies: set[int]):
        self._out: dict[int, list[int]] = {}
        for edge in calls:
            if edge.callee is not None and edge.callee != edge.caller \
                    and edge.caller not in bodies and edge.status != THROUGH:
                self._out.setdefault(edge.caller, []).append(edge.callee)
        self._bound: dict[int, set[int]] = {}
        for row in binds:
            if row.caller is not None:
                self._bound.setdefault(row.caller, set()).add(row.primitive)
        self._memo: dict[int, frozenset[int]] = {}

    def __call__(self, node: int) -> frozenset[int]:
        if node not in self._memo:
            self._components(node)
        return self._memo[node]

    def _components(self, start: int) -> None:
        """Memoise what each function reachable from `start`, and not yet answered,
        reaches: one strongly connected component at a time, callees' first."""
        order, low = {start: 0}, {start: 0}  # when each was met; the earliest it reaches
        stack, on_stack = [start], {start}
        work = [(start, iter(self._out.get(start, ())))]
        while work:
            node, callees = work[-1]
            for callee in callees:
                if callee in self._memo:
                    continue
                if callee not in order:
                    order[callee] = low[callee] = len(order)
                    stack.append(callee)
                    on_stack.add(callee)
                    work.append((callee, iter(self._out.get(callee, ()))))
                    break
                if callee in on_stack:
                    low[node] = min(low[node], order[callee])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == order[node]:
                    component = set()
                    while node not in component:
                        component.add(stack.pop())
                    on_stack -= component
                    self._answer(component)

    def _answer(self, component: set[int]) -> None:
        """Memoise what a component reaches: what its functions bind, and what the
        functions they call outside it reach (each answered already)."""
        found: set[int] = set()
        for member in component:
            found |= self._bound.get(member, set())
            for callee in self._out.get(member, ()):
                if callee not in component:
                    found |= self._memo[callee]
        reached = frozenset(found)
        for member in component:
            self._memo[member] = reached

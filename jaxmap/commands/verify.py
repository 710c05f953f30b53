"""How far the static index agrees with the live registries of the installed jax.

The only module that imports jax: the runtime is the point here. It imports jax and
every importable submodule, reads each rule registry, and compares (primitive name,
rule kind) pairs with the index, restricted to the files the runtime loaded.
"""

from __future__ import annotations

import importlib
import io
import os
import pkgutil
import warnings
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from jaxmap.errors import VerifyError
from jaxmap.knowledge import registrars as R
from jaxmap.models import RECEIVED_RULE_SUFFIX, RuleKind

if TYPE_CHECKING:
    from jaxmap.models import Rule
    from jaxmap.store.read import Index

# Runtime registries (module, attribute, rule kind), from the same table the index uses;
# the per-platform lowerings, a dict of dicts, are read on their own.
REGISTRIES = tuple(
    (R.MODULES[short.partition(".")[0]][0], short.partition(".")[2], kind.value)
    for short, kind in R.REGISTRIES.items() if short != "mlir._platform_specific_lowerings")
# Submodules that are test helpers, need a GPU toolchain, or start services on import.
_SKIP_MODULES = (".tests", "_test", "test_util", "jax_cuda", "mosaic.gpu.examples",
                 "collect_profile", "test_loader", "test_multiprocess")
# Public entry points imported before the walk: some private modules only import
# cleanly after them (jax 0.4.38's Pallas lowering has a circular import otherwise).
_ENTRY_MODULES = ("jax.experimental.pallas", "jax.experimental.pallas.tpu",
                  "jax.experimental.pallas.triton", "jax.experimental.pallas.mosaic_gpu")


@dataclass
class Runtime:
    """What the running jax registers: name -> kinds, the functions each (name, kind)
    reaches as (root-relative file, function name), and the files it loaded."""

    version: str
    root: Path
    pairs: dict[str, set[str]]
    loaded_files: set[str]
    functions: dict[tuple[str, str], set[tuple[str, str]]] = field(default_factory=dict)
    # (primitive name, platform) of each live lowering; "default" for mlir._lowerings
    lowerings: set[tuple[str, str]] = field(default_factory=set)
    # name -> the rules its abstract_eval's partial holds (`shape_rule`, `dtype_rule`, ...)
    received: dict[str, set[str]] = field(default_factory=dict)

    def add(self, name: str, kind: str, rule) -> None:
        self.pairs.setdefault(name, set()).add(kind)
        self._reach(name, kind, rule)

    def add_received(self, name: str, kind: str, rule) -> None:
        self.received.setdefault(name, set()).add(kind)
        self._reach(name, kind, rule)

    def _reach(self, name: str, kind: str, rule) -> None:
        reached = self.functions.setdefault((name, kind), set())
        for file, function in rule_functions(rule):
            if file.startswith(str(self.root) + os.sep):
                reached.add((Path(file).relative_to(self.root).as_posix(), function))


@dataclass
class Report:
    """Agreement figures between index and runtime, with what differs, by name."""

    jax_version: str
    primitives: tuple[int, int]  # (found, runtime total)
    pairs: tuple[int, int]
    extra_rules: tuple[int, int]  # (static rules the runtime lacks, static rules checked)
    functions: tuple[int, int] = (0, 0)  # (rule functions the runtime reaches, checked)
    platform_recall: tuple[int, int] = (0, 0)  # (live lowering pairs found, live pairs)
    platform_precision: tuple[int, int] = (0, 0)  # (static pairs confirmed, checked)
    # Rules registered under an `if` the index cannot decide (an installed CUDA plugin):
    # (those the runtime here has, those in files it loaded); not counted as extra.
    conditional: tuple[int, int] = (0, 0)
    missing_primitives: list[str] = field(default_factory=list)
    missing_pairs: list[str] = field(default_factory=list)
    extra_pairs: list[str] = field(default_factory=list)
    unconfirmed_functions: list[str] = field(default_factory=list)
    missing_platforms: list[str] = field(default_factory=list)
    extra_platforms: list[str] = field(default_factory=list)
    # Rules a helper receives (shape_rule, dtype_rule, ...), against the arguments of the
    # partial in each live abstract_eval: found, extra, functions, as for the pairs.
    received: tuple[int, int] = (0, 0)  # (found, runtime total)
    received_extra: tuple[int, int] = (0, 0)  # (static ones the runtime lacks, checked)
    received_functions: tuple[int, int] = (0, 0)  # (confirmed, checked)
    missing_received: list[str] = field(default_factory=list)
    extra_received: list[str] = field(default_factory=list)
    unconfirmed_received: list[str] = field(default_factory=list)

    @property
    def primitive_recall(self) -> float:
        return _ratio(*self.primitives)

    @property
    def pair_recall(self) -> float:
        return _ratio(*self.pairs)

    @property
    def function_agreement(self) -> float:
        return _ratio(*self.functions)

    @property
    def platform_pair_recall(self) -> float:
        return _ratio(*self.platform_recall)

    @property
    def platform_pair_precision(self) -> float:
        return _ratio(*self.platform_precision)

    @property
    def extra_rate(self) -> float:
        return self.extra_rules[0] / self.extra_rules[1] if self.extra_rules[1] else 0.0

    @property
    def received_recall(self) -> float:
        return _ratio(*self.received)

    @property
    def received_extra_rate(self) -> float:
        extra, checked = self.received_extra
        return extra / checked if checked else 0.0

    @property
    def received_agreement(self) -> float:
        return _ratio(*self.received_functions)


def check_root(root) -> None:
    """VerifyError unless `root` (None: the default) is where the installed jax lives:
    the runtime can only vouch for its own source."""
    from jaxmap import roots

    installed, given = roots.resolve_root(None), roots.resolve_root(root)
    if given != installed:
        raise VerifyError(f"verify compares the index of the installed jax ({installed}) "
                          f"with its runtime; {given} is another tree")


def verify(index: Index) -> Report:
    """Compare an open index.Index of the installed jax with its live registries."""
    check_root(index.root)
    return compare(index.primitives(), read_runtime())


def compare(static_primitives, runtime: Runtime) -> Report:
    kinds = {kind for _, _, kind in REGISTRIES} | {"impl", "abstract_eval"}
    static_names = {p.name for p in static_primitives}
    static_pairs: dict[str, set[str]] = {}
    checked = extra = functions_checked = confirmed = conditional = conditional_live = 0
    extra_pairs, unconfirmed = set(), set()
    for prim in static_primitives:
        overridden = _overridden(prim.rules)
        for rule in prim.rules:
            kind = rule.kind.value
            if kind not in kinds or not _xla(rule):
                continue
            static_pairs.setdefault(prim.name, set()).add(kind)
            if prim.style != "classic" or rule.loc.file not in runtime.loaded_files \
                    or prim.name not in runtime.pairs:
                continue
            if rule.condition:
                conditional += 1
                conditional_live += kind in runtime.pairs[prim.name]
                continue
            checked += 1
            if kind not in runtime.pairs[prim.name]:
                extra += 1
                extra_pairs.add(f"{prim.name}:{kind}")
            elif rule not in overridden:  # each function (defjvp: one per operand)
                reached = runtime.functions.get((prim.name, kind), set())
                for function in rule.functions:
                    functions_checked += 1
                    if (function.loc.file, function.name) in reached:
                        confirmed += 1
                    else:
                        unconfirmed.add(f"{prim.name}:{kind}:{function.name}")
    runtime_pairs = {(n, k) for n, ks in runtime.pairs.items() for k in ks}
    found_pairs = {(n, k) for n, k in runtime_pairs if k in static_pairs.get(n, ())}
    missing = sorted(set(runtime.pairs) - static_names)
    static_lowerings, checked_lowerings = _lowering_pairs(static_primitives, runtime)
    confirmed_lowerings = checked_lowerings & runtime.lowerings
    found_lowerings = runtime.lowerings & static_lowerings
    report = Report(runtime.version, (len(runtime.pairs) - len(missing), len(runtime.pairs)),
                  (len(found_pairs), len(runtime_pairs)), (extra, checked),
                  (confirmed, functions_checked),
                  (len(found_lowerings), len(runtime.lowerings)),
                  (len(confirmed_lowerings), len(checked_lowerings)),
                  (conditional_live, conditional), missing,
                  sorted(f"{n}:{k}" for n, k in runtime_pairs - found_pairs),
                  sorted(extra_pairs), sorted(unconfirmed),
                  sorted(f"{n}:{p}" for n, p in runtime.lowerings - static_lowerings),
                  sorted(f"{n}:{p}" for n, p in checked_lowerings - runtime.lowerings))
    return _compare_received(static_primitives, runtime, report)


def _compare_received(static_primitives, runtime: Runtime, report: Report) -> Report:
    """`report` with the rules helpers receive compared: each static one on a primitive
    the runtime has, in a file it loaded, checked against that primitive's partial
    (unless a later abstract_eval replaced the one that received it)."""
    static: set[tuple[str, str]] = set()
    checked, extra, unconfirmed = 0, set(), set()
    functions_checked = confirmed = 0
    for prim in static_primitives:
        replaced = {rule.loc for rule in _overridden(prim.rules)
                    if rule.kind == RuleKind.ABSTRACT_EVAL}
        for rule in prim.rules:
            if not rule.kind.received:
                continue
            kind = rule.kind.value
            static.add((prim.name, kind))
            if prim.style != "classic" or rule.condition or prim.name not in runtime.pairs \
                    or rule.loc.file not in runtime.loaded_files or rule.loc in replaced:
                continue
            checked += 1
            if kind not in runtime.received.get(prim.name, ()):
                extra.add(f"{prim.name}:{kind}")
            elif rule.function is not None:
                functions_checked += 1
                if (rule.function.loc.file, rule.function.name) in \
                        runtime.functions.get((prim.name, kind), set()):
                    confirmed += 1
                else:
                    unconfirmed.add(f"{prim.name}:{kind}:{rule.function.name}")
    live = {(n, k) for n, ks in runtime.received.items() for k in ks}
    return replace(report, received=(len(live & static), len(live)),
                   received_extra=(len(extra), checked),
                   received_functions=(confirmed, functions_checked),
                   missing_received=sorted(f"{n}:{k}" for n, k in live - static),
                   extra_received=sorted(extra), unconfirmed_received=sorted(unconfirmed))


def _xla(rule) -> bool:
    """A default rule, or one for an XLA platform (not a Pallas backend's table)."""
    return not rule.platform or rule.platform.lower() in R.XLA_PLATFORMS


def _overridden(rules) -> list:
    """Rules a later registration of the same kind and platform in the same file
    replaces (a standard rule for every primitive, then specific ones): the runtime
    holds only the last, so only the last one's function can be confirmed."""
    last: dict[tuple, Rule] = {}
    for rule in rules:
        key = (rule.kind, rule.platform, rule.loc.file)
        if key not in last or rule.loc.line > last[key].loc.line:
            last[key] = rule
    return [rule for rule in rules if last[(rule.kind, rule.platform, rule.loc.file)]
            is not rule]


def _lowering_pairs(static_primitives, runtime: Runtime) -> tuple[set, set]:
    """(primitive, platform) of every static XLA lowering, its platform expanded
    ("default" for a rule registered without one); and those the runtime could have
    (in a file it loaded, for a primitive it has, under no undecided condition)."""
    names = {n for n, _ in runtime.lowerings} | set(runtime.pairs)
    pairs, checked = set(), set()
    for prim in static_primitives:
        for rule in prim.rules:
            if rule.kind.value != "lowering" or not _xla(rule):
                continue
            for platform in rule.platforms or ("default",):
                pairs.add((prim.name, platform))
                if prim.style == "classic" and prim.name in names and not rule.condition \
                        and rule.loc.file in runtime.loaded_files:
                    checked.add((prim.name, platform))
    return pairs, checked


def read_runtime() -> Runtime:
    """Import jax and its submodules; read every rule registry."""
    try:
        import jax
    except Exception as error:  # noqa: BLE001 - any import failure is the same to a user
        raise VerifyError(f"cannot import jax ({error}); verify needs an installed jax") \
            from error
    _import_submodules(jax)
    from jax._src import core

    jax_dir = Path(jax.__file__).resolve().parent
    runtime = Runtime(jax.__version__, jax_dir.parent, {}, _loaded_files(jax_dir))
    for module_name, attr, kind in REGISTRIES:
        table = getattr(_module(module_name), attr, None)
        for prim, rule in _items(table):
            runtime.add(prim.name, kind, rule)
    mlir = importlib.import_module("jax._src.interpreters.mlir")
    runtime.lowerings = {(prim.name, "default") for prim, _ in _items(mlir._lowerings)}
    for platform, table in getattr(mlir, "_platform_specific_lowerings", {}).items():
        for prim, rule in _items(table):
            runtime.add(prim.name, "lowering", rule)
            runtime.lowerings.add((prim.name, platform))
    for prim in _live_primitives(core.Primitive):
        runtime.pairs.setdefault(prim.name, set())
        # def_impl / def_abstract_eval set instance attributes; a subclass may define
        # them as methods instead (HiPrimitive's, with `to_lojax` standing for the impl).
        for kind, names in (("impl", ("impl", "to_lojax")), ("abstract_eval", ("abstract_eval",))):
            for name in names:
                method = getattr(type(prim), name, None)
                if name in vars(prim) and name != "to_lojax":
                    runtime.add(prim.name, kind, vars(prim)[name])
                elif method is not None and method is not getattr(core.Primitive, name, None):
                    runtime.add(prim.name, kind, method)
        for kind, rule in received_rules(vars(prim).get("abstract_eval")):
            runtime.add_received(prim.name, kind, rule)
    return runtime


def received_rules(rule, depth: int = 0) -> list[tuple[str, object]]:
    """(parameter, function) for each parameter named `..._rule` of the partial a live
    abstract_eval is or wraps (`partial(standard_abstract_eval, prim, shape_rule, ...)`,
    kept in a closure cell by def_abstract_eval), where it holds a function."""
    import functools
    import inspect

    if depth > 3 or rule is None:
        return []
    if isinstance(rule, functools.partial):
        try:
            params = list(inspect.signature(rule.func).parameters)
        except (TypeError, ValueError):
            return []
        given = {**dict(zip(params, rule.args)), **rule.keywords}
        return [(name, value) for name, value in given.items()
                if name.endswith(RECEIVED_RULE_SUFFIX) and callable(value)]
    for cell in getattr(rule, "__closure__", None) or ():
        try:
            found = received_rules(cell.cell_contents, depth + 1)
        except ValueError:  # an empty cell
            continue
        if found:
            return found
    return []


def _module(name: str):
    """An imported module, or None where this jax has no such module."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _items(table) -> list:
    if table is None:
        return []
    try:
        return [(k, v) for k, v in dict(table).items() if hasattr(k, "name")]
    except TypeError:
        return []


def rule_functions(rule, depth: int = 0) -> set[tuple[str, str]]:
    """(source file, function name) of every function a stored rule object reaches:
    through partial's function and arguments, closure cells, `__wrapped__`, `.rule`; a
    nested function or lambda also as the definition that made it."""
    import functools

    found: set[tuple[str, str]] = set()
    if depth > 4 or rule is None:
        return found
    code = getattr(rule, "__code__", None)
    if code is not None:
        found.add((os.path.realpath(code.co_filename), rule.__name__))
        maker = getattr(rule, "__qualname__", "").partition(".<locals>.")[0]
        if maker != rule.__qualname__:  # a lambda or closure: the index folds it into its maker
            found.add((os.path.realpath(code.co_filename), maker.rpartition(".")[2]))
        for cell in getattr(rule, "__closure__", None) or ():
            try:
                contents = cell.cell_contents
            except ValueError:
                continue
            if callable(contents):
                found |= rule_functions(contents, depth + 1)
    if isinstance(rule, functools.partial):
        for part in (rule.func, *rule.args, *rule.keywords.values()):
            for item in part if isinstance(part, (list, tuple)) else (part,):
                if callable(item):
                    found |= rule_functions(item, depth + 1)
    for attr in ("__wrapped__", "__func__", "rule"):
        inner = getattr(rule, attr, None)
        if inner is not None and inner is not rule and callable(inner):
            found |= rule_functions(inner, depth + 1)
    return found


def _import_submodules(jax) -> None:
    sink = io.StringIO()
    with warnings.catch_warnings(), redirect_stdout(sink), redirect_stderr(sink):
        warnings.simplefilter("ignore")
        for name in _ENTRY_MODULES:
            _try_import(name)
        for info in pkgutil.walk_packages(jax.__path__, "jax.", onerror=lambda name: None):
            if not any(skip in info.name for skip in _SKIP_MODULES):
                _try_import(info.name)


def _try_import(name: str) -> None:
    try:
        importlib.import_module(name)
    except BaseException:  # noqa: BLE001 - optional backends fail in many ways
        pass


def _live_primitives(primitive_type) -> list:
    import sys

    seen, found = set(), []
    for name, module in list(sys.modules.items()):
        if not (name == "jax" or name.startswith("jax.")):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, primitive_type) and id(value) not in seen:
                seen.add(id(value))
                found.append(value)
    return found


def _loaded_files(jax_dir: Path) -> set[str]:
    import sys

    root = jax_dir.parent
    files = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and os.path.realpath(path).startswith(str(jax_dir)):
            files.add(Path(os.path.realpath(path)).relative_to(root).as_posix())
    return files


def _ratio(found: int, total: int) -> float:
    return found / total if total else 1.0

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
from dataclasses import dataclass, field
from pathlib import Path

from jaxmap.errors import VerifyError

# Runtime registries, by module and attribute, and the rule kind each holds.
REGISTRIES = (
    ("jax._src.interpreters.ad", "primitive_jvps", "jvp"),
    ("jax._src.interpreters.ad", "primitive_transposes", "transpose"),
    ("jax._src.interpreters.ad", "fancy_transposes", "transpose"),
    ("jax._src.interpreters.ad", "primitive_linearizations", "linearization"),
    ("jax._src.interpreters.batching", "fancy_primitive_batchers", "batching"),
    ("jax._src.interpreters.batching", "primitive_batchers", "batching"),
    ("jax._src.interpreters.partial_eval", "custom_partial_eval_rules", "partial_eval"),
    ("jax._src.interpreters.partial_eval", "partial_eval_jaxpr_custom_rules", "partial_eval"),
    ("jax._src.interpreters.partial_eval", "dce_rules", "dce"),
    ("jax._src.interpreters.partial_eval", "forwarding_rules", "forwarding"),
    ("jax._src.interpreters.partial_eval", "const_fold_rules", "const_fold"),
    ("jax._src.interpreters.partial_eval", "custom_staging_rules", "staging"),
    ("jax._src.interpreters.mlir", "_lowerings", "lowering"),
)
# Submodules that are test helpers, need a GPU toolchain, or start services on import.
_SKIP_MODULES = (".tests", "_test", "test_util", "jax_cuda", "mosaic.gpu.examples",
                 "collect_profile", "test_loader", "test_multiprocess")


@dataclass
class Runtime:
    """What the running jax registers: name -> kinds, and the files it loaded."""

    version: str
    root: Path
    pairs: dict[str, set[str]]
    loaded_files: set[str]


@dataclass
class Report:
    """Agreement figures between index and runtime, with what differs, by name."""

    jax_version: str
    primitives: tuple[int, int]  # (found, runtime total)
    pairs: tuple[int, int]
    extra_rules: tuple[int, int]  # (static rules the runtime lacks, static rules checked)
    missing_primitives: list[str] = field(default_factory=list)
    missing_pairs: list[str] = field(default_factory=list)
    extra_pairs: list[str] = field(default_factory=list)

    @property
    def primitive_recall(self) -> float:
        return _ratio(*self.primitives)

    @property
    def pair_recall(self) -> float:
        return _ratio(*self.pairs)

    @property
    def extra_rate(self) -> float:
        return self.extra_rules[0] / self.extra_rules[1] if self.extra_rules[1] else 0.0

    def to_dict(self) -> dict:
        return {"jax_version": self.jax_version,
                "primitives": {"found": self.primitives[0], "total": self.primitives[1],
                               "recall": round(self.primitive_recall, 4)},
                "pairs": {"found": self.pairs[0], "total": self.pairs[1],
                          "recall": round(self.pair_recall, 4)},
                "extra_rules": {"extra": self.extra_rules[0], "checked": self.extra_rules[1],
                                "rate": round(self.extra_rate, 4)},
                "missing_primitives": self.missing_primitives,
                "missing_pairs": self.missing_pairs, "extra_pairs": self.extra_pairs}

    def summary(self, show: int = 20) -> str:
        lines = [
            f"jax {self.jax_version}: static index vs live registries",
            f"  primitives found          {self.primitives[0]}/{self.primitives[1]} "
            f"({self.primitive_recall:.1%})",
            f"  (primitive, kind) found   {self.pairs[0]}/{self.pairs[1]} "
            f"({self.pair_recall:.1%})",
            f"  rules the runtime lacks   {self.extra_rules[0]}/{self.extra_rules[1]} "
            f"({self.extra_rate:.1%})"]
        for title, items in (("missing primitives", self.missing_primitives),
                             ("missing (primitive, kind)", self.missing_pairs),
                             ("extra (primitive, kind)", self.extra_pairs)):
            if items:
                shown = ", ".join(items[:show]) + (" ..." if len(items) > show else "")
                lines.append(f"  {title}: {shown}")
        return "\n".join(lines)


def verify(index) -> Report:
    """Compare an open locate.Index of the installed jax with its live registries."""
    runtime = read_runtime()
    if Path(index.root).resolve() != runtime.root.resolve():
        raise VerifyError(f"verify compares the index of the installed jax ({runtime.root}) "
                          f"with its runtime; this index is of {index.root}")
    return compare(index.primitives(), runtime)


def compare(static_primitives, runtime: Runtime) -> Report:
    kinds = {kind for _, _, kind in REGISTRIES} | {"impl", "abstract_eval"}
    static_names = {p.name for p in static_primitives}
    static_pairs: dict[str, set[str]] = {}
    checked = extra = 0
    extra_pairs = set()
    for prim in static_primitives:
        for rule in prim.rules:
            if rule.kind.value not in kinds or (rule.platform and rule.platform not in _XLA):
                continue
            static_pairs.setdefault(prim.name, set()).add(rule.kind.value)
            if prim.style == "classic" and rule.loc.file in runtime.loaded_files \
                    and prim.name in runtime.pairs:
                checked += 1
                if rule.kind.value not in runtime.pairs[prim.name]:
                    extra += 1
                    extra_pairs.add(f"{prim.name}:{rule.kind.value}")
    runtime_pairs = {(n, k) for n, ks in runtime.pairs.items() for k in ks}
    found_pairs = {(n, k) for n, k in runtime_pairs if k in static_pairs.get(n, ())}
    missing = sorted(set(runtime.pairs) - static_names)
    return Report(runtime.version, (len(runtime.pairs) - len(missing), len(runtime.pairs)),
                  (len(found_pairs), len(runtime_pairs)), (extra, checked), missing,
                  sorted(f"{n}:{k}" for n, k in runtime_pairs - found_pairs),
                  sorted(extra_pairs))


_XLA = {"cpu", "cuda", "rocm", "tpu", "gpu", "oneapi", "metal", "iree"}


def read_runtime() -> Runtime:
    """Import jax and its submodules; read every rule registry."""
    try:
        import jax
    except Exception as error:  # noqa: BLE001 - any import failure is the same to a user
        raise VerifyError(f"cannot import jax ({error}); verify needs an installed jax") \
            from error
    _import_submodules(jax)
    from jax._src import core

    pairs: dict[str, set[str]] = {}
    for module_name, attr, kind in REGISTRIES:
        table = getattr(importlib.import_module(module_name), attr, None)
        for prim in _keys(table):
            pairs.setdefault(prim.name, set()).add(kind)
    mlir = importlib.import_module("jax._src.interpreters.mlir")
    for table in getattr(mlir, "_platform_specific_lowerings", {}).values():
        for prim in _keys(table):
            pairs.setdefault(prim.name, set()).add("lowering")
    for prim in _live_primitives(core.Primitive):
        kinds = pairs.setdefault(prim.name, set())
        # def_impl / def_abstract_eval set instance attributes; a subclass (HiPrimitive's)
        # may define them as methods instead, `to_lojax` standing for the impl.
        overrides = {name for name in ("impl", "abstract_eval", "to_lojax")
                     if getattr(type(prim), name, None) is not getattr(core.Primitive, name, None)}
        if "impl" in vars(prim) or overrides & {"impl", "to_lojax"}:
            kinds.add("impl")
        if "abstract_eval" in vars(prim) or "abstract_eval" in overrides:
            kinds.add("abstract_eval")
    jax_dir = Path(jax.__file__).resolve().parent
    return Runtime(jax.__version__, jax_dir.parent, pairs, _loaded_files(jax_dir))


def _keys(table) -> list:
    if table is None:
        return []
    try:
        return [k for k in dict(table) if hasattr(k, "name")]
    except TypeError:
        return []


def _import_submodules(jax) -> None:
    sink = io.StringIO()
    with warnings.catch_warnings(), redirect_stdout(sink), redirect_stderr(sink):
        warnings.simplefilter("ignore")
        for info in pkgutil.walk_packages(jax.__path__, "jax.", onerror=lambda name: None):
            if any(skip in info.name for skip in _SKIP_MODULES):
                continue
            try:
                importlib.import_module(info.name)
            except BaseException:  # noqa: BLE001 - optional backends fail in many ways
                continue


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

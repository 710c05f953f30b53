"""What to generate: a frozen PrimitiveSpec, its validation, and `--params` parsing."""

from __future__ import annotations

import keyword
import re
import sys
from dataclasses import dataclass

from jaxmap.errors import SpecError
from jaxmap.knowledge.rungs import KINDS

STYLES = tuple(KINDS["primitive"].styles)
LOWERINGS = ("lower_fun", "hlo")
PLATFORMS = ("cpu", "cuda", "rocm", "tpu")
PARAM_TYPES = ("float", "int", "bool", "str")
MAX_ARITY = 8

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Names the generated modules and tests define or import at top level; a primitive
# so named would shadow them.
_MODULE_NAMES = frozenset({
    "jax", "jnp", "np", "numpy", "lax", "core", "ad", "batching", "mlir", "hlo",
    "dispatch", "partial", "functools", "pytest", "jtu", "Primitive", "VJPHiPrimitive",
    "HiPrim", "GradAccum", "instantiate_zeros", "check_grads", "export", "importlib",
    "os", "re", "subprocess", "sys", "Mesh", "NamedSharding", "P", "shard_map",
    "absltest", "parameterized",
})
# Names the generated rules use for their own arguments and locals, and attributes
# of a hijax primitive (its parameters become attributes too).
_RULE_NAMES = frozenset({
    "ctx", "args", "dims", "axis_data", "size", "primals", "tangents", "ct", "cts",
    "g", "gs", "res", "params", "aval", "out", "out_aval", "nzs_in", "accums", "self",
    "platform", "value", "prod", "term", "out0", "out1", "g0", "g1", "accum", "ir_type",
    "operand", "operands", "scalar", "batch", "batched", "in_avals", "expand", "jvp",
    "vjp_fwd", "vjp_bwd_retval", "transpose", "effects",
})


def class_name(name: str) -> str:
    """The class name a generated primitive or rung gets: `my_op` -> `MyOp`."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


@dataclass(frozen=True, slots=True)
class PrimitiveSpec:
    """One primitive to generate.

    `params` are static parameters as (name, type) pairs, type one of PARAM_TYPES;
    `platforms` get a platform-specific lowering besides the default one.
    """

    name: str
    arity: int = 1
    linear: bool = False
    multiple_results: bool = False
    params: tuple[tuple[str, str], ...] = ()
    platforms: tuple[str, ...] = ()
    style: str = "classic"
    lowering: str = "lower_fun"
    tests: bool = True

    @property
    def operands(self) -> tuple[str, ...]:
        """The operand names the generated code uses: x, y, z, then x0, x1, ..."""
        if self.arity <= 3:
            return ("x", "y", "z")[:self.arity]
        return tuple(f"x{i}" for i in range(self.arity))

    @property
    def class_name(self) -> str:
        return class_name(self.name)

    def validate(self) -> PrimitiveSpec:
        """Raise SpecError (one line) for anything that cannot be generated."""
        _check_name(self.name)
        if not isinstance(self.arity, int) or not 1 <= self.arity <= MAX_ARITY:
            raise SpecError(f"--arity must be between 1 and {MAX_ARITY}, got {self.arity}")
        if self.linear and self.multiple_results:
            raise SpecError("--linear with --multiple-results is not supported; "
                            "generate two linear primitives instead")
        _check_choice("--style", self.style, STYLES)
        _check_choice("--lowering", self.lowering, LOWERINGS)
        for platform in self.platforms:
            _check_choice("--platform", platform, PLATFORMS)
        if len(set(self.platforms)) != len(self.platforms):
            raise SpecError("--platform repeats a platform; give each once")
        if self.style == "hijax" and (self.platforms or self.lowering != "lower_fun"):
            raise SpecError("--platform and --lowering hlo need --style classic: a hijax "
                            "primitive lowers through its `expand` method")
        if self.style == "hijax":
            check_not_its_class(self.name)
        self._check_params()
        return self

    def _check_params(self) -> None:
        seen = set()
        for pname, ptype in self.params:
            _check_identifier(pname, "parameter")
            if pname in seen:
                raise SpecError(f"--params gives parameter {pname!r} twice; give each "
                                f"parameter once")
            reserved = self._reserved(pname)
            if reserved:
                raise SpecError(f"parameter name {pname!r} is reserved: the generated "
                                f"code uses it for {reserved}; choose another")
            if ptype not in PARAM_TYPES:
                raise SpecError(f"parameter {pname!r} has unknown type {ptype!r}; "
                                f"types are {', '.join(PARAM_TYPES)}")
            seen.add(pname)

    def _reserved(self, pname: str) -> str | None:
        """What the generated code uses `pname` for, if anything."""
        if pname == self.name:
            return "the primitive's function"
        if pname in self.operands or pname in (f"t{x}" for x in self.operands):
            return "an operand or its tangent"
        if pname in _MODULE_NAMES:
            return "a module-level name"
        if pname in _RULE_NAMES:
            return "a rule's argument or local"
        return None


def parse_params(text: str | None) -> tuple[tuple[str, str], ...]:
    """`'scale=float,n=int'` -> (('scale', 'float'), ('n', 'int')); SpecError if malformed."""
    if not text or not text.strip():
        return ()
    pairs = []
    for item in text.split(","):
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or not key or not value:
            raise SpecError(f"--params wants key=type pairs separated by commas "
                            f"(e.g. scale=float,n=int), got {item.strip()!r}")
        pairs.append((key, value))
    return tuple(pairs)


def check_not_its_class(name: str) -> None:
    """SpecError if `name` is already the class name generated code gives it (`Foo`,
    `MyOp`): the function of that name would replace the class in its module."""
    if class_name(name) == name:
        lower = "_".join(part.lower() for part in re.findall(r"[A-Z]?[a-z0-9]*", name) if part)
        raise SpecError(f"name {name!r} is also the class the generated code defines for "
                        f"it, which the function of that name would replace; give the "
                        f"function's name ({lower!r}), the class is {name!r}")


def _check_name(name: str) -> None:
    _check_identifier(name, "primitive")
    if name.startswith("_"):
        raise SpecError(f"primitive name {name!r} starts with '_'; the public function "
                        f"needs a public name")
    if name in _MODULE_NAMES or name in _RULE_NAMES:
        raise SpecError(f"primitive name {name!r} would shadow a name the generated code "
                        f"uses; choose another")
    if name.endswith("_p"):
        raise SpecError(f"primitive name {name!r} ends with '_p', the suffix of the "
                        f"variable that holds it: give {name[:-2]!r} (its variable is "
                        f"{name!r})")
    check_module_name(name, "primitive name")


def check_module_name(name: str, what: str) -> None:
    """SpecError if generated code named `name` breaks where it runs: its module would
    shadow a standard-library or installed module (jax imports `scipy`, `ml_dtypes`,
    ...), or pytest would collect its function imported into the tests as a test."""
    if name in sys.stdlib_module_names:
        raise SpecError(f"{what} {name!r} is a standard-library module; the generated "
                        f"module would shadow it")
    from importlib import metadata

    installed = metadata.packages_distributions().get(name)
    if installed:
        raise SpecError(f"{what} {name!r} is a module that {installed[0]} installs; the "
                        f"generated module would shadow it")
    if name == "conftest":
        raise SpecError(f"{what} {name!r} is pytest's plugin module: pytest would load "
                        f"the generated module as one; choose another")
    if name.lower().startswith("test"):
        raise SpecError(f"{what} {name!r} starts with 'test': pytest would collect the "
                        f"generated function as a test; choose another")


def _check_identifier(name: str, what: str) -> None:
    if isinstance(name, str) and name.isidentifier() and not name.isascii():
        raise SpecError(f"{what} name {name!r} is not ASCII: generated names are ASCII "
                        f"letters, digits and '_', not starting with a digit")
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise SpecError(f"{what} name {name!r} is not a valid Python identifier "
                        f"(letters, digits, '_'; not starting with a digit)")
    if keyword.iskeyword(name):
        raise SpecError(f"{what} name {name!r} is a Python keyword; choose another")


def _check_choice(option: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise SpecError(f"{option} must be one of {', '.join(choices)}, got {value!r}")

"""What usually fixes each family of JAX error messages, beside the message catalogue
(the tree's own raise sites): a family is recognised by its class and the words of
its message, and answered with a short fix written for it. Facts from JAX's docs and
source (its errors page, the sharp bits, the API docs), in jaxmap's own words. The
first family that matches answers; a new family is a row."""

from __future__ import annotations

import re
from typing import NamedTuple

# The function a ConcretizationTypeError names as the one a tracer met (`int`, `bool`,
# `__index__`): JAX's `concretization_function_error` writes it into the message.
ARISEN_WITH = re.compile(r"The problem arose with the `([\w.]+)` function")


class Family(NamedTuple):
    name: str
    pattern: re.Pattern  # searched in `Class: message`
    fix: str
    # what the JAX function the user called needs of its arguments, said after its name
    needs: str = ""


def _family(name: str, pattern: str, fix: str, needs: str = "") -> Family:
    return Family(name, re.compile(pattern, re.IGNORECASE | re.DOTALL), fix, needs)


FAMILIES: tuple[Family, ...] = (
    _family("callback raised",
            r"callback error calling callback|error calling callback|"
            r"pure_callback failed|io_callback failed",
            "the Python function handed to the callback raised: fix that function (its own "
            "traceback is the root cause); call it once outside jit on NumPy arrays of the "
            "shapes and dtypes declared in result_shape_dtypes to reproduce it"),
    _family("callback under vmap",
            r"vmap is only supported for the \w+ primitive when vmap_method",
            "the callback was vmapped without saying how to batch it: pass vmap_method= "
            "to jax.pure_callback (or jax.ffi.ffi_call): 'sequential' calls it once per "
            "element of the batch; 'expand_dims' and 'broadcast_all' call it once on the "
            "whole batch, as a leading axis the function must then handle"),
    _family("tracer used as a Python bool",
            r"TracerBoolConversionError|truth value of an array with more than one|"
            r"Attempted boolean conversion of traced array",
            "a Python `if`/`while`/`and`/`or` saw a traced value: use jnp.where or "
            "lax.cond/lax.while_loop for value-dependent choices, or make the argument "
            "static (static_argnums/static_argnames) if it is a configuration value"),
    _family("tracer used as a Python int or index",
            r"TracerIntegerConversionError|TracerIndexError|"
            r"Shapes must be 1D sequences of concrete values|"
            r"Array slice indices must have static start/stop/step|NonConcreteBooleanIndexError|"
            r"Array boolean indices must be concrete",
            "a shape, size, slice bound or Python int came from a traced value: pass it as a "
            "static argument (static_argnums), use lax.dynamic_slice for a traced start "
            "with a fixed size, or give jnp.nonzero/jnp.where a static `size=`",
            "its shape, size and index arguments must be concrete (known while tracing), "
            "not traced values"),
    _family("tracer converted to NumPy",
            r"TracerArrayConversionError|__array__\(\) method was called on traced array",
            "numpy (np.*) or a library built on it was handed a traced array: use the "
            "jax.numpy function instead, or run the NumPy code through jax.pure_callback"),
    _family("concrete value needed",
            r"ConcretizationTypeError|Abstract tracer value encountered where concrete value "
            r"is expected",
            "JAX needed a concrete value but had a tracer: make the value static "
            "(static_argnums/static_argnames, or compute it outside jit), or replace the "
            "Python control flow over it with lax.cond/jnp.where",
            "its argument must be concrete (a Python or NumPy value known while tracing), "
            "not a traced value"),
    _family("tracer leaked from a transform",
            r"UnexpectedTracerError|escaped tracer|leaked|Encountered an unexpected tracer",
            "a traced value outlived the transform that made it (stored in a global, an "
            "attribute, a closure or a list): return it from the transformed function "
            "instead of saving it; jax.checking_leaks() shows where it escaped"),
    _family("gradient of a non-scalar",
            r"Gradient only defined for scalar-output functions",
            "jax.grad needs a function returning one scalar: reduce the output (sum, mean), "
            "or use jax.jacrev/jax.vjp for a vector output"),
    _family("gradient of integer input",
            r"grad requires real- or complex-valued inputs|"
            r"differentiation with respect to integer|requires real-valued outputs",
            "differentiate with respect to floating inputs (1.0, not 1; or .astype(float)), "
            "or pass allow_int=True if an integer input must stay"),
    _family("missing lowering",
            r"MLIR translation rule for primitive '[^']*' not found",
            "the primitive has no lowering for the platform it was compiled for (under "
            "jit, or a transformation that compiles): register it, one with no platform= "
            "unless a platform needs its own (mlir.lower_fun(impl, multiple_results=...) "
            "lowers an impl written with jax.numpy), or call the function outside jit, "
            "where its impl runs"),
    _family("missing abstract evaluation",
            r"Abstract evaluation for '[^']*' not implemented",
            "the primitive has no abstract evaluation rule, which jit, vmap, grad and every "
            "other trace need for the shapes and dtypes of its outputs: register it, a "
            "function of the inputs' avals and the parameters that returns a "
            "jax.core.ShapedArray for each output (a list where multiple_results)"),
    _family("missing rule",
            r"(?:Differentiation|Transpose|Batching|JVP|MLIR translation|Abstract evaluation|"
            r"Evaluation) rule for '[^']*' not implemented|"
            r"for grad support .* must implement",
            "the primitive lacks the rule this transform needs: register it, or wrap the "
            "function in jax.custom_jvp/custom_vjp (or custom_vmap) so JAX never asks the "
            "primitive for it"),
    _family("forward mode of a custom_vjp",
            r"forward-mode autodiff \(jvp\) to a custom_vjp",
            "a custom_vjp function has only a reverse-mode rule: differentiate it with "
            "jax.grad, jax.vjp or jax.jacrev, or define it with jax.custom_jvp instead "
            "(JAX derives its reverse mode) where forward mode (jvp, jacfwd, hessian) is "
            "needed"),
    _family("custom rule output",
            r"custom_vjp|custom_jvp|custom_vmap|bwd rule|fwd rule",
            "a custom rule returned the wrong structure: bwd returns one cotangent per "
            "primal input, as a tuple, each with its input's shape and dtype; a jvp rule "
            "returns (primal_out, tangent_out) with matching shapes and dtypes"),
    _family("branches or carries disagree",
            r"must have (?:equal|identical|the same) types|output must have identical types|"
            r"carry (?:input and carry output|output)|branch outputs must have|"
            r"body_fun output and input must have",
            "every branch of cond/switch, and a loop's carry in and out, must have the same "
            "pytree structure, shapes and dtypes: start the carry with the dtype it will "
            "have (0.0, not 0; jnp.zeros(shape, dtype)), and make branches return alike"),
    _family("vmap axes",
            r"vmap got inconsistent sizes|vmap was requested to map its argument|"
            r"vmap in_axes|out_axes specification|vmap must have at least one non-None",
            "vmap maps one axis of every mapped argument, all of one size: give in_axes a "
            "None for arguments not mapped, and check each mapped argument's size on its axis"),
    _family("pytree structures differ",
            r"pytree|tree structure|Custom node type mismatch|Tuple arity mismatch|"
            r"Dict key mismatch|treedef",
            "two pytrees that should have the same structure do not (tree_map over several "
            "trees, in_axes/in_specs prefixes, a custom rule's outputs): print "
            "jax.tree_util.tree_structure of each and make them agree"),
    _family("immutable arrays",
            r"JAX arrays are immutable|does not support item assignment|"
            r"object does not support item assignment",
            "JAX arrays cannot be updated in place: write x = x.at[idx].set(value) (or "
            ".add, .multiply) and use the returned array"),
    _family("unhashable static argument",
            r"Non-hashable static arguments|unhashable type",
            "static arguments are cache keys and must be hashable: pass a tuple instead of a "
            "list or array, or make the argument a regular (traced) one"),
    _family("shardings do not agree",
            r"ShardingTypeError|consistent sharding|dimensions are sharded|out_sharding",
            "under explicit sharding the operands' shardings must agree for this operation: "
            "print jax.typeof(x) of each to see them, then move one with "
            "jax.sharding.reshard(x, P(...)) or say how the result is sharded with "
            "out_sharding=P(...) where the operation takes it"),
    _family("shapes do not match",
            r"[Ii]ncompatible shapes|cannot reshape|must have (?:the )?same shape|shapes? "
            r"mismatch|dot_general requires|matmul input operand|must have equal|"
            r"ndim|rank|size|dimension",
            "two operands' shapes do not fit the operation: print x.shape (or "
            "jax.eval_shape of the function) just before it and fix the one off; under vmap "
            "the mapped axis is not part of the shape the function sees"),
    _family("axis name not bound",
            r"unbound axis name|axis name .* not (?:found|bound)|Unbound axis",
            "collectives (psum, all_gather, ...) name an axis that only exists inside "
            "pmap/shard_map/vmap(axis_name=...): call them inside one binding that name, "
            "spelled the same"),
    _family("device memory",
            r"RESOURCE_EXHAUSTED|Out of memory|OOM",
            "the computation needs more device memory than is free: use a smaller batch, "
            "jax.checkpoint (remat) to trade compute for memory, donate_argnums for buffers "
            "not needed after the call, or set XLA_PYTHON_CLIENT_MEM_FRACTION"),
    _family("PRNG keys",
            r"PRNG key|random key|key data|KeyArray|typed key",
            "jax.random functions take a key from jax.random.key(seed) (or PRNGKey), split "
            "with jax.random.split, never a plain integer or float array"),
    _family("dtype",
            r"dtype|float64|x64",
            "an operand has a dtype the operation does not take: cast it (x.astype(...)); "
            "for 64-bit types enable jax_enable_x64 before creating arrays"),
)


def family(exception: str | None, message: str) -> Family | None:
    """The family of a message (with its class as printed), if one fits."""
    text = f"{(exception or '').rpartition('.')[2]}: {message}"
    return next((f for f in FAMILIES if f.pattern.search(text)), None)


# `module 'jax.core' has no attribute 'Primitive'`: a name this release does not have
# where the user's code looked for it (JAX moves names out of `jax.core`,
# `jax.interpreters` and `jax.lib` between releases).
NO_ATTRIBUTE = re.compile(r"module '(jax(?:\.\w+)*)' has no attribute '(\w+)'")


def moved(module: str, name: str, public: list[str]) -> Family:
    """The fix for `module.name` missing, where the tree defines `name` under the
    public paths `public` (none: private to JAX, or not defined at all)."""
    where = ", ".join(f"`{path}`" for path in public[:3])
    fix = f"this jax has no `{module}.{name}`: " + (
        f"import it as {where}" if public else
        f"it is not public here; `jaxmap locate {name}` says where it is defined, and "
        "what is private may change in any release")
    return Family("a name moved out of a jax module", re.compile(r"(?!)"), fix)


# For an exception the user's own function raised when JAX called it.
CALLBACK_RAISED = FAMILIES[0]
USER_CODE = Family(
    "your function raised", re.compile(r"(?!)"),
    "your function raised this itself while JAX ran it: fix it where it raised (the "
    "frames above it are only JAX's route to it); to debug, call it outside the "
    "transform on concrete arrays, or use jax.debug.print inside it")


# A rule-missing message, as the tree answers it (commands/missing_rules.py): the
# families of each kind of rule, each fix saying `register it,`.
MISSING_RULE = next(f for f in FAMILIES if f.name == "missing rule")
RULE_FAMILIES = frozenset({MISSING_RULE.name, "missing lowering", "missing abstract evaluation"})
_REGISTERED = (
    "the tree registers this rule (above), so the registration did not run for the "
    "primitive JAX was given: import the module that registers it before the transform "
    "runs, and check that the primitive bound is that one and the jax that ran is the "
    "indexed release")
_SWITCHED_OFF = (
    "the primitive is made with this rule switched off on purpose (where, above), so "
    "this release does not support that transformation of it: leave it out of the "
    "transformation (for vmap, a Python loop or lax.map over the batch), or, for a "
    "primitive of your own, make it with the rule on or register one")


def missing_rule(shown: bool, registered: bool, not_linear: bool,
                 switched_off: bool = False, family: Family = MISSING_RULE) -> Family | None:
    """The fix for a rule-missing message of `family` (one of RULE_FAMILIES): none where
    the rule should not exist (the answer says what to do instead); where the tree
    registers it, why it did not run; where the call that makes the primitive switches
    it off, that it is so by design; else register it, pointing at the registrars shown
    where they are."""
    if not_linear:
        return None
    if registered:
        return family._replace(fix=_REGISTERED)
    if switched_off:
        return family._replace(fix=_SWITCHED_OFF)
    return family._replace(fix=family.fix.replace(
        "register it,", "register it (jaxmap shows where and how above),")) if shown else family

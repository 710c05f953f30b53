"""`binds` against what tracing binds: a trace-time oracle of public functions.

    python benchmarks/bench_trace_oracle.py [--traces FILE] [--show N]

For every public function of jax.numpy, jax.lax, jax.nn and jax.random, tries a few
small argument lists in turn (a float vector, a square matrix, an int vector, two of
them, a PRNG key and a shape, ...); the primitives of the jaxpr of every list under
which `jax.make_jaxpr` traces it, sub-jaxprs included (a jit's, a cond's branches, a
custom_jvp's function), are what the function binds at trace time (more lists take
more of its branches). Functions
no list traces are left out, and counted. Then it opens this jaxmap's index of the
same jax and asks `binds PRIM` for every primitive of the index (its default answer:
the public functions that bind PRIM when traced), and prints:

- recall: of the (function, primitive) pairs the traces show, whose primitive the
  index knows, the share that `binds` lists by default;
- precision: of the pairs `binds` lists by default for the traced functions, the
  share the traces show. A branch the chosen inputs did not take (a dtype, an
  option left at its default, an error path) counts against it: `--show N` prints
  N pairs of each kind, and the steps most unseen pairs go through, to check by hand;
  it is printed again counting as right the pairs through a step of UNTAKEN, the
  steps checked by hand to be branches these inputs do not take.

While it traces, it notes which functions of jax run (a profile hook; jax's caches
cleared before each public function, so a jitted helper's body runs again; only under
the argument lists that trace: a list that fails may run code no jaxpr shows), and for
each listed pair no trace shows, finds the step where its chain leaves the code that
ran: the caller ran, the callee (or the bind) did not. That step is the one to blame:
a branch the inputs did not take, or a false edge. A pair counts as right through
UNTAKEN where any step of its chain is one of UNTAKEN, and, stricter, where the step
it leaves at is (printed beside it; an entry that names the call into a function
whose branch is inside, `_reduction -> lax.reduce`, counts only in the first); the
steps the others leave at are ranked. A bind may run and leave no equation (a jit with
inline=True is inlined by its staging rule): a pair ending at such a bind counts as
right in both figures where the function's profile ran the code of INLINED that
shows it. A traces file of an older run has no profile.

A function and a `binds` answer meet at the definition a public name means (its
file and line). `--traces FILE` keeps the traces (JSON) and reads them back on the
next run. Nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections import Counter

MODULES = ("jax.numpy", "jax.lax", "jax.nn", "jax.random")
# Steps checked by hand in jax 0.10.2's source: each is a branch these small inputs do
# not take, so a listed pair whose chain goes through one is a path the code has, not
# a false edge. Precision is printed both ways.
UNTAKEN = (
    ("jax._src.numpy.error._set_error_if_nan", "jax._src.error_check.set_error_if",
     "returns first unless jax_error_checking_behavior_nan is set"),
    ("jax._src.numpy.error._set_error_if_divide_by_zero", "jax._src.error_check.set_error_if",
     "returns first unless jax_error_checking_behavior_divide is set"),
    ("jax._src.numpy.indexing._gather", "jax._src.numpy.error._check_precondition_oob_gather",
     "its body returns first unless jax_error_checking_behavior_oob is set"),
    ("jax.numpy.where", "jax.numpy.nonzero", "only the one-argument form: where(c)"),
    ("jax._src.lax.lax._iter", "jax.lax.dynamic_index_in_dim",
     "iterating an Array: only where a dimension of its shape is a tracer"),
    ("jax._src.numpy.reductions._reduction", "jax.lax.reduce",
     "lax.reduce binds only the reducer of the op it is handed (reduce_sum for add)"),
    ("jax._src.numpy.reductions._reduce_sum", "jax.lax.psum",
     "handed as parallel_reduce=, which _reduction calls only for named axes"),
    ("jax._src.numpy.reductions._reduce_max", "jax.lax.pmax", "the same, for max"),
    ("jax._src.numpy.reductions._reduce_min", "jax.lax.pmin", "the same, for min"),
    ("jax._src.numpy.indexing.rewriting_take", "jax._src.numpy.indexing._gather",
     "only for an index that is neither a static nor a dynamic slice"),
    ("jax._src.lax.lax._convert_element_type", "to_edtype_p.bind",
     "only to an extended dtype (a PRNG key's)"),
    ("jax._src.lax.lax._convert_element_type", "from_edtype_p.bind",
     "only from an extended dtype"),
    ("jax._src.lax.lax._convert_element_type", "jax.lax.stage",
     "only for a Python or NumPy scalar operand"),
    ("jax._src.core.auto_insert_reshard", "jax._src.core.pvary",
     "only for values varying over manual axes (inside shard_map)"),
    ("jax._src.core.auto_insert_reshard", "jax._src.core.reduced_vary_cast",
     "only for values varying over manual axes (inside shard_map)"),
    ("jax._src.core.insert_reduced_reshard", "jax.reshard",
     "only under a mesh whose axes are all explicit, for reduced axes"),
    ("jax.lax.full", "jax.make_array_from_callback", "only with a concrete sharding"),
    # Checked where the profile shows chains leave the code that ran (the caller ran,
    # the callee did not):
    ("jax._src.numpy.util.promote_shapes", "jax.lax.broadcast_to_rank",
     "only for two or more arguments of different ranks, not all scalars"),
    ("jax.numpy.array", "jax.device_put",
     "only for a NumPy array with copy=False (a traced value returns first)"),
    ("jax.numpy.array", "jax._src.lax.lax._array_copy",
     "only with copy=True (jnp.asarray passes copy=False) or for a concrete Array"),
    ("jax.numpy.array", "jax.lax.concatenate", "only for a list or tuple holding an Array"),
    ("jax.numpy.array", "jax.lax.expand_dims",
     "only for a list or tuple holding an Array, or with ndmin"),
    ("jax.numpy.array", "jax.lax.stage",
     "only for a Python or NumPy scalar or a NumPy array, with no dtype"),
    ("jax._src.lax.lax._convert_element_type", "convert_element_type_p.bind",
     "returns the operand first when its dtype and weak type already match"),
    ("jax._src.numpy.reductions._reduction", "jax._src.numpy.util._where",
     "only with where="),
    ("jax._src.numpy.error._set_error_if_nan", "jax.numpy.isnan",
     "returns first unless jax_error_checking_behavior_nan is set"),
    ("jax.lax.broadcast_in_dim", "jax.reshard",
     "only with an out_sharding other than the operand's, at the same shape"),
    ("jax._src.numpy.util._where", "jax.lax.ne", "only for a condition that is not bool"),
    ("jax.numpy.multiply", "jax.lax.bitwise_and", "only for bool operands"),
    ("jax.numpy.add", "jax.lax.bitwise_or", "only for bool operands"),
    ("jax.numpy.right_shift", "jax.lax.shift_right_logical",
     "only for unsigned integer operands"),
    *(("jax._src.numpy.indexing._index_to_gather", callee,
       "only for a slice whose step is not 1")
      for callee in ("jax._src.numpy.array_methods._operator_add",
                     "jax._src.numpy.array_methods._operator_mul", "jax.lax.iota")),
    *(("jax._src.numpy.indexing.NDIndexer.normalize_indices", callee,
       "only for an integer Array index")
      for callee in ("jax._src.numpy.array_methods._operator_lt", "jax.lax.select")),
    ("jax._src.ops.scatter._scatter_impl", "jax.lax.expand_dims",
     "only for a scalar bool index"),
    ("jax._src.numpy.indexing._static_slice", "jax.lax.expand_dims",
     "only for an index holding None"),
    *(("jax.lax.reduce", f"jax.lax.reduce_{op}", "binds only the reducer of the op it is "
       "handed") for op in ("sum", "prod", "max", "min", "and", "or", "xor")),
    ("jax.lax.reduce", "reduce_p.bind", "only for an op with no monoid reducer"),
    ("jax.nn.softmax", "jax._src.nn.functions._softmax",
     "only with jax_softmax_custom_jvp set (off by default)"),
    # Checked this session, the steps the profile blamed most (each callee did not run
    # for the functions blamed):
    ("jax._src.lax.lax.asarray", "jax._src.lax.lax._convert_element_type",
     "only for an operand that is not an Array (a Python or NumPy value); a traced one "
     "returns first"),
    ("jax.numpy.nonzero", "jax._src.numpy.array_methods._sum",
     "only with size=None or with fill_value= (tril/triu_indices pass size=)"),
    ("jax.numpy.nonzero", "jax.numpy.arange", "only with fill_value="),
    ("jax.numpy.nonzero", "jax._src.numpy.array_methods._operator_floordiv",
     "reached only with a static size: size= or a concrete input"),
    ("jax.numpy.reshape", "jax.numpy.asarray",
     "only with out_sharding=, or for an operand with no reshape method"),
    ("jax._src.numpy.indexing.rewriting_take", "jax._src.numpy.indexing._dynamic_slice",
     "only for an index that is not a static slice but a dynamic one (a traced scalar)"),
    ("jax._src.numpy.indexing.rewriting_take",
     "jax._src.numpy.indexing.NDIndexer.to_dynamic_slice",
     "tried only when the index is not a static slice"),
    ("jax._src.numpy.indexing.rewriting_take", "jax._src.numpy.indexing._static_slice",
     "only for an index of static ints, slices, None or Ellipsis"),
    ("jax._src.numpy.indexing._static_slice", "jax.lax.rev",
     "only for a slice with a negative step"),
    ("jax._src.numpy.indexing._static_slice", "jax.lax.squeeze",
     "only for an integer index"),
    ("jax._src.numpy.indexing._static_slice", "jax.lax.slice",
     "only when the index does not take the whole array (x[:], x[None] do)"),
    ("jax._src.ops.scatter._scatter_impl", "jax.lax.rev",
     "only for a slice index with a negative step"),
    ("jax._src.numpy.reductions._quantile", "jax.numpy.sum",
     "only for the nan* forms (squash_nans) or with method='inverted_cdf'"),
    ("jax._src.numpy.reductions._quantile", "jax.numpy.take_along_axis",
     "only with method='inverted_cdf'"),
    ("jax._src.numpy.reductions._quantile", "jax.lax.full_like",
     "only with method='inverted_cdf'"),
    ("jax._src.random.core._check_prng_key", "jax._src.random.prng.random_wrap",
     "only for a legacy uint32 key; a typed key (jax.random.key) passes through"),
    ("jax.numpy.linalg.norm", "jax.numpy.linalg.svd",
     "only for a matrix norm with ord 2, -2 or 'nuc'"),
    ("jax.numpy.polymul", "jax.numpy.trim_zeros", "only with trim_leading_zeros=True"),
    ("jax.numpy.polydiv", "jax._src.numpy.lax_numpy.trim_zeros_tol",
     "only with trim_leading_zeros=True"),
    *(("jax._src.numpy.lax_numpy._arange", f"jax._src.numpy.array_methods._operator_{op}",
       "only for a start, stop or step given as a jax Array; numbers compute as numbers")
      for op in ("sub", "truediv")),
    ("jax._src.numpy.lax_numpy._arange", "jax._src.numpy.lax_numpy._arange_dynamic",
     "only for a symbolic dimension (shape polymorphism)"),
    ("jax.numpy.arange", "jax.device_put", "only with a concrete sharding (device=)"),
    ("jax.numpy.astype", "jax._src.lax.lax._array_copy", "only with copy=True"),
    ("jax.numpy.astype", "jax._src.numpy.array_methods._operator_ne",
     "only for a complex operand cast to bool"),
    ("jax.numpy.histogram", "jax._src.numpy.array_methods._sum", "only with density=True"),
    ("jax.numpy.histogramdd", "jax._src.numpy.array_methods._sum", "only with density=True"),
    ("jax._src.numpy.util.promote_dtypes", "jax._src.lax.lax._convert_element_type",
     "only for two or more arguments (one goes through lax.asarray)"),
    ("jax._src.numpy.setops._in1d", "jax.numpy.unique",
     "only with method='sort' and not assume_unique"),
    ("jax._src.numpy.setops._in1d", "jax._src.numpy.array_methods._max",
     "only with method='sort' and not assume_unique"),
    ("jax._src.numpy.util._where", "jax._src.lax.lax._zero",
     "only for a condition that is not bool"),
    ("jax._src.numpy.reductions._cumulative_reduction", "jax._src.numpy.util._where",
     "only for the nan* forms (fill_nan)"),
    *(("jax._src.numpy.error._check_precondition_oob_gather", callee,
       "returns first unless jax_error_checking_behavior_oob is set")
      for callee in ("jax.numpy.min", "jax.numpy.max", "jax._src.error_check.set_error_if",
                     "jax._src.numpy.array_methods._operator_ge",
                     "jax._src.numpy.array_methods._operator_lt", "jax.numpy.array",
                     "jax.numpy.logical_or", "jax.numpy.ufunc.__call__")),
    *(("jax._src.numpy.error._set_error_if_divide_by_zero", callee,
       "returns first unless jax_error_checking_behavior_divide is set")
      for callee in ("jax._src.numpy.array_methods._operator_eq", "jax.numpy.zeros_like")),
    ("jax.lax.transpose", "transpose_p.bind",
     "returns the operand first for the identity permutation (any on a vector)"),
    ("jax.lax.squeeze", "squeeze_p.bind", "returns the operand first for no dimensions"),
    ("jax.lax.reshape", "reshape_p.bind",
     "returns the operand first at the same shape, dimensions and sharding"),
    ("jax.lax.sort", "jax._src.core.auto_insert_reshard",
     "only for a sequence of operands"),
    ("jax.lax.concatenate", "jax._src.core.auto_insert_reshard",
     "only for two or more operands (a single Array returns first)"),
    ("jax._src.numpy.reductions._nan_reduction", "jax.numpy.all",
     "only for nanmin and nanmax without initial= (nan_if_all_nan)"),
    ("jax._src.numpy.reductions._reduction", "jax.lax.expand_dims",
     "only with keepdims=True"),
    *((f"jax._src.numpy.reductions._reduce_{name}", f"jax.lax.{op}",
       "handed as op= (or bool_op=), which _reduction calls itself only with initial=; "
       "else lax.reduce takes it")
      for name, op in (("sum", "add"), ("sum", "bitwise_or"), ("max", "max"),
                       ("min", "min"), ("prod", "mul"), ("prod", "bitwise_and"))),
    *((f"jax._src.numpy.reductions._reduce_{name}", f"jax.lax.bitwise_{op}",
       "handed as op=, which only lax.reduce takes (no initial= here)")
      for name, op in (("all", "and"), ("any", "or"))),
    ("jax._src.numpy.ufuncs._complex_comparison", "jax.lax.eq", "only for complex inputs"),
    *((f"jax.numpy.{name}", "jax._src.numpy.array_methods._operator_add",
       "only for unsigned integer input") for name in ("partition", "argpartition")),
    ("jax._src.random.core.maybe_auto_axes", "jax.sharding.auto_axes",
     "only with out_sharding="),
    ("jax._src.random.core._gumbel", "jax._src.numpy.array_methods._getitem",
     "only with mode='highest' for float32 (the default is 'low')"),
    ("jax._src.random.core._normal", "jax._src.numpy.array_methods._astype",
     "only for a complex dtype"),
    ("jax._src.lax.lax._full_like_insert_pvary", "jax._src.core.pvary",
     "only for a state ref (TransformedRef), under auto_pcast"),
    ("jax._src.numpy.ufuncs._power", "jax._src.numpy.ufuncs._pow_int_int",
     "only for an integer or bool base"),
    ("jax.numpy.power", "jax._src.numpy.ufuncs._power",
     "only for an exponent that is not a concrete integer (x ** 3 takes integer_pow)"),
    ("jax.numpy.isscalar", "jax.numpy.asarray",
     "only for a non-Array object with __jax_array__"),
    ("jax.numpy.roots", "jax._src.numpy.polynomial._roots_no_zeros",
     "only for a concrete p: with strip_zeros (the default) a traced p raises first"),
    ("jax.numpy.roots", "jax._src.numpy.array_methods._getitem",
     "only for a concrete p: with strip_zeros (the default) a traced p raises first"),
    ("jax.numpy.roots", "jax._src.numpy.polynomial._roots_with_zeros",
     "only with strip_zeros=False"),
    ("jax.numpy.take_along_axis", "jax.nn.one_hot", "only with mode='one_hot'"),
    ("jax.numpy.take_along_axis", "jax.numpy.einsum", "only with mode='one_hot'"),
    ("jax.numpy.take_along_axis", "jax.lax.full", "only for an axis of size 0"),
    ("jax._src.numpy.indexing._take", "jax.numpy.mod", "only with mode='wrap'"),
    ("jax.numpy.floor_divide", "jax._src.numpy.ufuncs._float_divmod",
     "only for floating inputs"),
    *(("jax._src.numpy.lax_numpy._repeat", callee,
       "only for per-element repeats (an array) with a nonzero total; a scalar returns "
       "first") for callee in ("jax._src.numpy.array_methods._operator_sub",
                                "jax.numpy.roll", "jax.numpy.take",
                                "jax._src.numpy.array_methods._IndexUpdateRef.set")),
    ("jax._src.numpy.hijax._searchsorted_impl", "jax._src.numpy.hijax._searchsorted_sort_impl",
     "only with method='sort' (the default is 'scan')"),
    ("jax.random.choice", "jax.numpy.log", "only with p= and replace=False"),
    ("jax.random.choice", "jax.random.gumbel", "only with p= and replace=False"),
    ("jax.random.choice", "jax.numpy.searchsorted", "only with p= and replace=True"),
    ("jax.numpy.rot90", "jax.numpy.asarray", "only for k a multiple of 4"),
    *(("jax._src.numpy.lax_numpy._pad", f"jax.numpy.{stat}",
       "handed in a table; only _pad_stats calls it, for that mode=")
      for stat in ("amax", "amin", "mean", "median")),
    ("jax._src.numpy.lax_numpy._pad", "jax._src.numpy.lax_numpy._pad_stats",
     "only for mode maximum, minimum, mean or median"),
    ("jax.numpy.pad", "jax._src.numpy.lax_numpy._pad_func", "only for a callable mode"),
    ("jax.numpy.concatenate", "jax.numpy.asarray", "only with dtype="),
    *(("jax.numpy.concatenate", callee,
       "only for a sequence of arrays (an Array goes to _concatenate_array)")
      for callee in ("jax.lax.concatenate", "jax._src.numpy.util.promote_dtypes")),
    ("jax.numpy.diff", "jax.numpy.concatenate", "only with prepend= or append="),
    *(("jax.numpy.arccosh", callee, "only for complex input")
      for callee in ("jax._src.numpy.util._where", "jax._src.numpy.array_methods._operator_lt",
                     "jax.lax.neg", "jax.numpy.real")),
    ("jax.numpy.conjugate", "jax.lax.conj", "only for complex input"),
    ("jax.numpy.log10", "jax.lax.complex", "only for complex input"),
    ("jax._src.lax.other.logaddexp", "jax._src.lax.other._wrap_between",
     "only for complex inputs"),
    ("jax.numpy.round", "jax.lax.convert_element_type",
     "only for float16 with decimals other than 0"),
    ("jax.numpy.argsort", "jax._src.numpy.array_methods._flatten", "only with axis=None"),
    *((f"jax.numpy.{name}", "jax.lax.full", "only for M <= 1")
      for name in ("bartlett", "blackman", "hamming", "hanning")),
    ("jax.numpy.cumulative_prod", "jax.lax.full", "only with include_initial=True"),
    ("jax.numpy.unravel_index", "jax.numpy.asarray", "only for unsigned integer indices"),
    ("jax.numpy.indices", "jax.numpy.array", "only for empty dimensions"),
    ("jax.numpy.delete", "jax.numpy.arange", "only for obj a static slice"),
    ("jax._src.ops.special.logsumexp", "jax.numpy.array", "only with b= (a real result)"),
    ("jax._src.nn.functions._dot_product_attention_core", "jax._src.ops.special.logsumexp",
     "only with return_residual"),
    ("jax.numpy.array", "jax._src.lax.lax._convert_element_type",
     "a traced value with no dtype, device, out_sharding or ndmin returns first"),
    ("jax._src.interpreters.batching._batch_inner", "jax._src.interpreters.batching.make_iota",
     "the index is built lazily, only for an input of a type in to_elt_handlers"),
    ("jax._src.numpy.einsum._einsum", "jax.lax.reduce",
     "only when an index is summed out of one operand"),
    ("jax._src.numpy.einsum._einsum", "jax._src.lax.lax._delta",
     "only for an index repeated within one operand"),
    ("jax.numpy.ix_", "jax.lax.full", "only for an empty input"),
    ("jax.numpy.nonzero", "jax.numpy.bincount",
     "reached only with a static size: size= or a concrete input"),
    *(("jax._src.numpy.lax_numpy._block", callee, "only for a list argument")
      for callee in ("jax.numpy.concatenate", "jax._src.numpy.lax_numpy._atleast_nd")),
    ("jax._src.numpy.array_creation._linspace", "jax.lax.floor", "only for an integer dtype"),
    ("jax._src.numpy.array_creation._linspace", "jax.numpy.full", "only for num=0"),
    ("jax._src.numpy.lax_numpy._interp", "jax.numpy.concatenate", "only with period="),
    ("jax.numpy.real", "jax.lax.real", "only for complex input"),
    *(("jax.numpy.isfinite", callee, "only for complex input")
      for callee in ("jax.lax.bitwise_and", "jax.numpy.real", "jax.numpy.imag")),
    ("jax.numpy.isfinite", "jax.lax.full_like", "only for integer or bool input"),
    ("jax._src.numpy.ufuncs._complex_comparison", "jax.lax.select", "only for complex inputs"),
    ("jax._src.nn.functions._one_hot", "jax.lax.axis_size", "only for a named axis"),
    *(("jax._src.numpy.lax_numpy._pad", f"jax._src.numpy.lax_numpy._pad_{mode}",
       "only for that mode= (the default is 'constant')")
      for mode in ("edge", "symmetric_or_reflect", "linear_ramp", "wrap", "empty")),
    ("jax._src.numpy.indexing._take", "jax.lax.full_like", "only for empty indices"),
    *(("jax._src.numpy.lax_numpy._arange", f"jax.lax.{op}",
       "only with a step, or a start other than 0")
      for op in ("add", "mul", "convert_element_type")),
    ("jax._src.numpy.lax_numpy._arange", "jax._src.numpy.array_methods._operator_eq",
     "only for a start given as a jax Array; numbers compare as numbers"),
    ("jax.numpy.digitize", "jax.numpy.zeros_like", "only for empty bins"),
    ("jax.numpy.power", "jax.lax.integer_pow", "only for a concrete integer exponent"),
    ("jax._src.nn.functions._dot_product_attention_xla",
     "jax._src.numpy.array_methods._getitem", "only for a bias or mask with one head"),
    *(("jax.numpy.cumulative_sum", callee, "only with include_initial=True")
      for callee in ("jax.lax.full", "jax.lax.concatenate")),
    ("jax.numpy.matmul", "jax.lax.expand_dims",
     "only for a batch dimension of size 1 in both operands"),
    ("jax.numpy.sort", "jax._src.numpy.array_methods._flatten", "only with axis=None"),
    ("jax.numpy.sort", "jax.lax.rev", "only with descending=True"),
    ("jax._src.numpy.setops._in1d", "jax.numpy.searchsorted",
     "only with method='binary_search'"),
    ("jax.numpy.floor_divide", "jax.lax.sign", "only for signed integer inputs"),
    ("jax.numpy.linalg.vector_norm", "jax.numpy.power",
     "only for an ord other than None, 2, inf, -inf, 0 or 1"),
    *(("jax._src.numpy.reductions._quantile", f"jax.lax.{op}",
       "only with method='inverted_cdf'")
      for op in ("eq", "bitwise_or", "index_in_dim", "squeeze", "transpose", "lt")),
    *(("jax._src.numpy.reductions._quantile", f"jax.lax.{op}",
       "only for the nan* forms (squash_nans) or with method='inverted_cdf'")
      for op in ("min", "max", "bitwise_not")),
    ("jax._src.numpy.reductions._quantile", "jax.lax.broadcasted_iota",
     "only for the nan* forms, and only where dimensions remain after the reduction"),
    ("jax._src.numpy.reductions._quantile", "jax.lax.le", "only with method='nearest'"),
    ("jax._src.numpy.reductions._quantile", "jax.lax.clamp",
     "only for the forms that are not nan* (no squash_nans)"),
    ("jax.lax.broadcast", "jax.lax.broadcast_in_dim",
     "an empty sizes with no out_sharding returns first"),
    ("jax.numpy.eye", "jax.device_put", "only with device="),
    ("jax._src.numpy.hijax._searchsorted_scan_impl", "jax._src.lax.lax._sort_lt_comparator",
     "only with side='right'"),
    ("jax._src.numpy.hijax._searchsorted_scan_impl", "jax._src.lax.lax._sort_le_comparator",
     "only with side='left'"),
    *(("jax._src.random.core._gumbel", callee,
       "only with mode='highest' for float32 (the default is 'low')")
      for callee in ("jax._src.random.core._safe_int_to_float", "jax.lax.bitwise_not",
                     "jax._src.numpy.array_methods._operator_add",
                     "jax._src.numpy.array_methods._operator_eq",
                     "jax._src.numpy.array_methods._operator_lt", "jax.numpy.ones_like",
                     "jax.numpy.array")),
    *(("jax._src.random.core._gumbel", callee,
       "only with mode 'high' or 'highest' (the default is 'low')")
      for callee in ("jax.numpy.where", "jax.numpy.log1p",
                     "jax._src.numpy.array_methods._operator_ge", "jax._src.lax.lax._iter")),
    ("jax.lax.shape_as_value", "jax.lax.full", "only for an empty shape"),
    ("jax.lax.concatenate", "concatenate_p.bind", "a single Array operand returns first"),
    *(("jax._src.lax.lax._operands_to_keys", f"jax.lax.{part}", "only for complex keys")
      for part in ("real", "imag")),
    ("jax.numpy.clip", "jax.numpy.minimum", "only with max="),
    ("jax._src.random.core._return_prng_keys", "jax._src.random.prng.random_unwrap",
     "only for a legacy uint32 key that was wrapped"),
    ("jax._src.numpy.setops._in1d", "jax.numpy.arange", "only with method='sort'"),
    ("jax.numpy.floor_divide", "jax.lax.rem", "only for signed integer inputs"),
    ("jax.numpy.polydiv", "jax.numpy.sqrt", "only with trim_leading_zeros=True"),
    ("jax._src.random.core.random_insert_pvary", "jax._src.core.pvary",
     "only for a key varying over more manual axes than the arguments (shard_map)"),
    ("jax.nn.dot_product_attention",
     "jax._src.cudnn.fused_attention_stablehlo.dot_product_attention",
     "only with implementation='cudnn'"),
    ("jax.numpy.log2", "jax.lax.complex", "only for complex input"),
    ("jax._src.lax.other.logaddexp", "jax.lax.imag", "only for complex inputs"),
    ("jax.numpy.imag", "jax.lax.imag", "only for complex input"),
    ("jax.numpy.isinf", "jax.lax.imag", "only for complex input"),
    ("jax.numpy.corrcoef", "jax.lax.complex", "only for complex input"),
    # Checked where the decorated defs' edges (`@jit def ravel`) gave pairs a chain
    # through a branch no step above covers:
    ("jax.numpy.concatenate", "jax.numpy.ravel", "only with axis=None"),
    ("jax._src.numpy.reductions._cumulative_reduction",
     "jax._src.numpy.array_methods._operator_ne", "only with dtype=bool"),
    *(("jax._src.random.core._normal", f"jax._src.numpy.array_methods._operator_{op}",
       "only for a complex dtype") for op in ("truediv", "rmul", "add")),
    ("jax._src.lax.special._up_and_broadcast", "jax.lax.convert_element_type",
     "only for bfloat16 or float16 operands"),
    ("jax._src.numpy.lax_numpy._split", "jax._src.lax.lax._iter",
     "only for indices_or_sections given as an Array of indices"),
    # Checked where a call of a call's result over several lines became an edge
    # (`maybe_auto_axes(_uniform, out_sharding,\n ...)(key)`: what calling the result
    # runs): `auto_axes`'s wrapper is what it calls only with out_sharding=.
    *((caller, "jax._src.pjit._auto_axes", "calls auto_axes's wrapper only with out_sharding=")
      for caller in ("jax._src.numpy.indexing.rewriting_take",
                     "jax._src.ops.scatter._scatter_update",
                     "jax._src.numpy.lax_numpy._auto_repeat", "jax.numpy.einsum",
                     "jax.numpy.percentile",
                     *(f"jax.random.{name}" for name in (
                         "ball", "bernoulli", "beta", "bits", "categorical", "cauchy",
                         "dirichlet", "exponential", "gamma", "generalized_normal",
                         "gumbel", "laplace", "loggamma", "logistic", "lognormal",
                         "normal", "orthogonal", "pareto", "permutation", "poisson",
                         "rayleigh", "t", "truncated_normal", "uniform", "wald")))),
    ("jax.numpy.repeat", "jax._src.numpy.lax_numpy._auto_repeat",
     "only under a mesh with explicit axes"),
    # A hijax primitive's bind (`Scan3(...)(args)`), behind a flag off by default.
    ("jax.lax.scan", "jax._src.lax.control_flow.loops.scan3", "only where jax_scan3 is set"),
)
# Binds that run at trace time and leave no equation of their primitive in the jaxpr,
# each with the profile key of the code that shows it happened (checked in jax
# 0.10.2's source): a listed pair of the function ending at the bind is right where
# its profile ran that code. `inline_jaxpr_into_trace` is called only by jit's staging
# rule, for a jit with inline=True (the ufuncs': `@partial(jit, inline=True)`).
INLINED = (
    ("jit_p.bind", "jax/_src/interpreters/partial_eval.py:inline_jaxpr_into_trace",
     "jit(inline=True): its staging rule inlines the jaxpr, no `jit` equation"),
)


def _arguments(module: str) -> list[tuple]:
    """The argument lists tried, in order."""
    import jax
    import jax.numpy as jnp

    x = jnp.array([0.5, 1.5, 2.5], jnp.float32)
    m = jnp.array([[2.0, 1.0], [1.0, 3.0]], jnp.float32)
    i = jnp.array([1, 2, 3], jnp.int32)
    b = jnp.array([True, False, True])
    if module == "jax.random":
        key = jax.random.key(0)
        return [(key,), (key, (3,)), (key, x), (key, 3), (key, x, x), (key, 3, (3,)),
                (key, x, (3,)), (key, m)]
    return [(x,), (m,), (i,), (x, x), (m, m), (i, i), (x, 1), (x, 0), (i, 1), (b,), (b, b),
            (x, x, x), (b, x, x), (m, 1), (x, (3,)), ((3,),), (3,), (x, [0]), (x, i)]


def _primitives(jaxpr, found: set[str]) -> None:
    """The names of the primitives of `jaxpr` and of every jaxpr its equations carry; of
    a hijax primitive's equation (`call_hi_primitive[_prim=Scan3]`), its class's name
    too, the primitive the index has for it."""
    for eqn in jaxpr.eqns:
        found.add(eqn.primitive.name)
        instance = eqn.params.get("_prim")
        if instance is not None and not hasattr(instance, "bind"):  # a class's instance
            found.add(type(instance).__name__)
        for value in eqn.params.values():
            for item in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(item, "jaxpr", item)
                if hasattr(inner, "eqns"):
                    _primitives(inner, found)


def _ran_key(code) -> str:
    """`jax/_src/x.py:f` for the code of a function of jax (a nested def or a lambda as
    its outermost function, as the index folds it), else ''."""
    path = code.co_filename.replace(os.sep, "/")
    at = path.rfind("/jax/")
    if at < 0:
        return ""
    return f"{path[at + 1:]}:{code.co_qualname.split('.<locals>')[0]}"


def _profiled(function, arguments: tuple, ran: set[str], keys: dict) -> set[str]:
    """`_trace`, adding to `ran` the key of each function of jax that runs."""
    def hook(frame, event, _arg):
        if event == "call":
            code = frame.f_code
            if code not in keys:
                keys[code] = _ran_key(code)
            ran.add(keys[code])

    sys.setprofile(hook)
    try:
        return _trace(function, arguments)
    finally:
        sys.setprofile(None)


def _trace(function, arguments: tuple) -> set[str]:
    """The primitives binding `function(*arguments)` binds, its arrays traced."""
    import jax

    arrays = [k for k, a in enumerate(arguments) if isinstance(a, jax.Array)]

    def call(*traced):
        given = list(arguments)
        for k, value in zip(arrays, traced):
            given[k] = value
        return function(*given)

    closed = jax.make_jaxpr(call)(*[arguments[k] for k in arrays])
    found: set[str] = set()
    _primitives(closed.jaxpr, found)
    return found


def trace_all() -> tuple[dict[str, list[str]], list[str], dict[str, list[str]]]:
    """public name -> the primitives its calls bind, over every argument list that
    traces; the names no argument list traced; and public name -> the functions of jax
    that ran while it was traced (`_ran_key`), under the argument lists that traced."""
    import importlib
    import inspect
    import warnings

    import jax

    traced: dict[str, list[str]] = {}
    failed: list[str] = []
    ran: dict[str, list[str]] = {}
    keys: dict = {}  # code -> its key, asked once
    warnings.simplefilter("ignore")
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        tries = _arguments(module_name)
        for name in sorted(getattr(module, "__all__", None) or dir(module)):
            function = getattr(module, name, None)
            if name.startswith("_") or not callable(function) or isinstance(function, type) \
                    or type(function).__module__ in ("typing", "types") \
                    and not inspect.isfunction(function):  # a class, an alias of a type
                continue
            found: set[str] = set()
            seen: set[str] = set()
            traces = 0
            jax.clear_caches()  # a jitted helper traced for another function runs again
            for arguments in tries:
                ran_now: set[str] = set()  # kept only where the list traces
                try:
                    found |= _profiled(function, arguments, ran_now, keys)
                except Exception:  # noqa: BLE001 - any failure: try the next list
                    continue
                seen |= ran_now
                traces += 1
            if traces:
                traced[f"{module_name}.{name}"] = sorted(found)
                ran[f"{module_name}.{name}"] = sorted(seen - {""})
            else:
                failed.append(f"{module_name}.{name}")
    return traced, failed, ran


def _places(index, names) -> dict[str, tuple[str, int]]:
    """public name -> (file, line) of the definition it means, where the index has one."""
    from jaxmap.commands.lookup import definition_ids

    places = {}
    for name in names:
        ids = definition_ids(index, name)
        nodes = index.nodes(ids[:1])
        if nodes:
            node = next(iter(nodes.values()))
            places[name] = (node.file, node.line)
    return places


def _listed(index, everything: bool = False) -> dict[str, dict[tuple[str, int], tuple]]:
    """primitive name -> (file, line) of each public function `binds` lists for it ->
    its chain."""
    from jaxmap.commands.callgraph import binds

    listed: dict[str, dict[tuple[str, int], tuple]] = {}
    for prim in index.primitives():
        answer = binds(index, prim.variable or prim.name, everything=everything)
        listed.setdefault(prim.name or prim.variable, {}).update(
            ((r.file, r.line), r.chain) for r in answer.found if r.public)
    return listed


def _hubs(listed, pairs, most: int) -> list[tuple[int, tuple[str, str]]]:
    """The steps that the most chains of `pairs` go through: where a branch the inputs
    did not take (or a false edge) adds the most listed pairs that no trace shows."""
    steps: Counter = Counter()
    for place, prim in pairs:
        chain = listed[prim][place]
        steps.update(set(zip(chain, chain[1:])))
    return [(count, step) for step, count in steps.most_common(most)]


def _module_of(file: str) -> str:
    module = file[:-3].replace("/", ".") if file.endswith(".py") else file
    return module[:-len(".__init__")] if module.endswith(".__init__") else module


def label_keys(index, chains) -> dict[str, str]:
    """label -> `_ran_key` of the definition it means, for the labels of `chains`."""
    from jaxmap.commands.lookup import definition_ids

    found = {}
    for label in {label for chain in chains for label in chain}:
        nodes = index.nodes(definition_ids(index, label)[:1]) \
            if not label.endswith(".bind") else {}
        for node in nodes.values():
            module = _module_of(node.file)
            inner = node.qualname[len(module) + 1:] \
                if node.qualname.startswith(module + ".") else node.qualname
            found[label] = f"{node.file}:{inner}"
    return found


def leaves(chain: tuple[str, ...], ran: set[str], keys: dict[str, str]) -> tuple[str, str]:
    """The step where `chain` leaves the code that `ran`: its first callee that did not
    run, or its bind (a pair no trace shows: the last function ran and did not bind)."""
    for caller, callee in zip(chain, chain[1:]):
        if callee.endswith(".bind") or keys.get(callee) not in ran:
            return caller, callee
    return chain[-2], chain[-1]


def score(traced: dict[str, list[str]], places, listed, show: int,
          ran: dict[str, set[str]] | None = None,
          keys: dict[str, str] | None = None) -> dict[str, float]:
    """Recall and precision of `listed` against `traced`, printed, with examples and,
    for the listed pairs no trace shows, the steps where their chains leave the code
    that `ran` (public name -> `_ran_key`s; without it, the steps most of them go
    through)."""
    known = set(listed)
    seen = {(places[n], p) for n, prims in traced.items() if n in places
            for p in prims if p in known}
    unknown = Counter(p for n, prims in traced.items() for p in prims if p not in known)
    mine = {place for name, place in places.items() if name in traced}
    claimed = {(place, p) for p, where in listed.items() for place in where.keys() & mine}
    hit = seen & claimed
    recall, precision = len(hit) / max(len(seen), 1), len(hit) / max(len(claimed), 1)
    steps = {(a, b) for a, b, _why in UNTAKEN}
    names = {place: name for name, place in places.items()}
    blame = {(place, p): leaves(listed[p][place], ran.get(names[place], set()), keys or {})
             for place, p in claimed - seen} if ran is not None else {}
    inlined = {(place, p) for place, p in claimed - seen
               if any(listed[p][place][-1] == bind and key in ran.get(names[place], ())
                      for bind, key, _why in INLINED)} if ran is not None else set()
    untaken = {(place, p) for place, p in claimed - seen
               if steps & set(zip(listed[p][place], listed[p][place][1:]))} | inlined
    strict = {pair for pair, step in blame.items() if step in steps} | inlined
    print(f"pairs seen at trace time: {len(seen)} (primitives the index lacks, left out: "
          f"{dict(unknown.most_common(8))})")
    print(f"recall     {recall:6.1%}  ({len(hit)} of {len(seen)} seen pairs listed)")
    print(f"precision  {precision:6.1%}  ({len(hit)} of {len(claimed)} listed pairs seen)")
    print(f"precision, counting as right the {len(untaken)} pairs whose chain goes through a "
          f"step of UNTAKEN (checked by hand), or that bind where the trace ran code of "
          f"INLINED ({len(inlined)}): "
          f"{(len(hit) + len(untaken)) / max(len(claimed), 1):.1%}")
    if ran is not None:
        print(f"  stricter, the {len(strict)} whose chain leaves the code that ran at a step "
              f"of UNTAKEN: {(len(hit) + len(strict)) / max(len(claimed), 1):.1%}")
    shuffle = random.Random(0).sample
    for title, pairs in (("seen, not listed", seen - claimed),
                         ("listed, not seen", claimed - seen)):
        chosen = shuffle(sorted(pairs), min(show, len(pairs)))
        if chosen:
            print(f"{title} (a sample):")
            print("\n".join(f"  {names[place]}  {p}" for place, p in chosen))
    if show and ran is not None:
        print("steps where the other unseen pairs' chains leave the code that ran (the "
              "caller ran, the callee did not: a branch not taken, or a false edge; the "
              "next to check by hand):")
        counts = Counter(blame[pair] for pair in claimed - seen - strict)
        print("\n".join(f"  {count:5}  {a} -> {b}" for (a, b), count in counts.most_common(show)))
    elif show:
        print("steps most listed pairs no trace shows go through, but no step of UNTAKEN "
              "(the next to check by hand):")
        print("\n".join(f"  {count:5}  {a} -> {b}"
                        for count, (a, b) in _hubs(listed, claimed - seen - untaken, show)))
    return {"recall": recall, "precision": precision,
            "checked": (len(hit) + len(untaken)) / max(len(claimed), 1),
            "strict": (len(hit) + len(strict)) / max(len(claimed), 1) if ran else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", help="keep the traces in FILE (JSON), read them back")
    parser.add_argument("--show", type=int, default=10, help="pairs of each kind to print")
    args = parser.parse_args(argv)
    if args.traces and os.path.exists(args.traces):
        with open(args.traces, encoding="utf-8") as handle:
            traced, failed, *rest = json.load(handle)  # an older file has no profile
        ran_lists = rest[0] if rest else None
    else:
        traced, failed, ran_lists = trace_all()
        if args.traces:
            with open(args.traces, "w", encoding="utf-8") as handle:
                json.dump([traced, failed, ran_lists], handle)
    ran = {name: set(keys) for name, keys in ran_lists.items()} if ran_lists else None
    print(f"{len(traced)} public functions traced, {len(failed)} no argument list traced")
    from jaxmap.session import open_index

    with open_index(graph=True) as index:
        places = _places(index, traced)
        print(f"{len(places)} of them found in the index")
        listed = _listed(index)
        keys = label_keys(index, (chain for where in listed.values()
                                  for chain in where.values())) if ran else None
        default = score(traced, places, listed, args.show, ran, keys)
        print("with --all, for comparison:")
        everything = score(traced, places, _listed(index, everything=True), 0)
    print(f"closing: recall {default['recall']:.1%} / precision {default['precision']:.1%}, "
          f"{default['checked']:.1%} with the branches checked by hand"
          + (f" ({default['strict']:.1%} where the chain leaves the code that ran there)"
             if default["strict"] is not None else "") + " (--all: "
          f"{everything['recall']:.1%} / {everything['precision']:.1%}); targets "
          ">= 99% / >= 90%")
    return 0


if __name__ == "__main__":
    sys.exit(main())

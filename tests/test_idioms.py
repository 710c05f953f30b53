"""Every registration idiom of the minijax fixture, one table row each.

A row says: this primitive has a rule of this kind (and platform) registered at the
statement marked KEY, implemented by this function. Lines come from `# mark:` comments
in the fixture, never from literals here.
"""

from __future__ import annotations

import ast
import textwrap

import pytest
from markers import ROOT, mark, source_lines

from jaxmap.commands.locate import locate
from jaxmap.indexing.indexer import build_index
from jaxmap.models import RuleKind as K
from jaxmap.session import open_index


@pytest.fixture(scope="module")
def prims(tmp_path_factory):
    """Every primitive of the fixture, read once with a private cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JAXMAP_CACHE_DIR", str(tmp_path_factory.mktemp("idioms-cache")))
        with open_index(ROOT) as idx:
            assert idx.jax_version == "0.0.1"
            return idx.primitives()


def find(prims, selector: str):
    """`name` or `name@module` -> the one primitive it names."""
    name, _, module = selector.partition("@")
    hits = [p for p in prims if p.name == name and (not module or p.module == module)]
    assert len(hits) == 1, f"{selector}: {len(hits)} primitives"
    return hits[0]


# (primitive, kind, platform, marker of the registration statement, function name,
#  text the `via` must contain)
RULES = [
    # core.Primitive, methods, partial(...) rules
    ("psum", K.IMPL, None, "psum-impl", "apply_primitive", "psum_p.def_impl"),
    ("psum", K.ABSTRACT_EVAL, None, "psum-aeval", "_psum_abstract_eval",
     "def_effectful_abstract_eval"),
    ("psum", K.LOWERING, None, "psum-lowering", "_allreduce_lowering",
     "mlir.register_lowering"),
    ("psum", K.JVP, None, "psum-deflinear2", None, "ad.deflinear2"),
    ("psum", K.TRANSPOSE, None, "psum-deflinear2", "_psum_transpose_rule", "ad.deflinear2"),
    ("psum", K.BATCHING, None, "psum-batcher", "_batched_reduction_collective",
     "batching.fancy_primitive_batchers"),
    # a helper that receives the primitive, applied at two call sites
    ("pmax", K.JVP, None, "pmax-helper", None, "_register_collective"),
    ("pmax", K.TRANSPOSE, None, "pmax-helper", "_pmax_transpose", "_register_collective"),
    ("pmax", K.LOWERING, None, "pmax-helper", "_collective_lowering", "_register_collective"),
    ("pmin", K.TRANSPOSE, None, "pmin-helper", "_pmin_transpose", "_register_collective"),
    ("pmin", K.LOWERING, None, "pmin-helper", "_collective_lowering", "_register_collective"),
    # loops: a literal list, zip(...), platforms
    ("all_gather_start", K.ABSTRACT_EVAL, None, "all-gather-loop-aeval",
     "_all_gather_abstract_eval", "def_abstract_eval"),
    ("all_gather_done", K.ABSTRACT_EVAL, None, "all-gather-loop-aeval",
     "_all_gather_abstract_eval", "def_abstract_eval"),
    ("all_gather_start", K.LOWERING, None, "all-gather-loop-lowering",
     "_all_gather_lowering", "mlir.register_lowering"),
    ("all_gather_done", K.LOWERING, None, "all-gather-loop-lowering",
     "_all_gather_lowering", "mlir.register_lowering"),
    ("ragged_all_to_all", K.LOWERING, "cuda", "ragged-gpu-loop", "_ragged_gpu_lowering",
     "mlir.register_lowering"),
    ("ragged_all_to_all", K.LOWERING, "rocm", "ragged-gpu-loop", "_ragged_gpu_lowering",
     "mlir.register_lowering"),
    ("reduce_max", K.BATCHING, None, "reduce-maxmin-defreducer", None, "batching.defreducer"),
    ("reduce_min", K.BATCHING, None, "reduce-maxmin-defreducer", None, "batching.defreducer"),
    ("reduce_max", K.LOWERING, None, "reduce-maxmin-lowering", "_reduce_lowering",
     "mlir.register_lowering"),
    ("reduce_min", K.LOWERING, None, "reduce-maxmin-lowering", "_reduce_lowering",
     "mlir.register_lowering"),
    ("floor", K.LOWERING, None, "rounding-loop-lowering", "_rounding_lowering",
     "mlir.register_lowering"),
    ("ceil", K.LOWERING, None, "rounding-loop-lowering", "_rounding_lowering",
     "mlir.register_lowering"),
    # helper factories: rules reported at the module-level call site
    ("neg", K.IMPL, None, "neg-create", "apply_primitive", "standard_unop"),
    ("neg", K.ABSTRACT_EVAL, None, "neg-create", "standard_abstract_eval", "standard_unop"),
    ("neg", K.BATCHING, None, "neg-create", None, "batching.defvectorized"),
    ("add", K.IMPL, None, "add-create", "apply_primitive", "naryop"),
    ("add", K.ABSTRACT_EVAL, None, "add-create", "standard_abstract_eval", "naryop"),
    ("add", K.BATCHING, None, "add-create", None, "batching.defbroadcasting"),
    ("reduce_sum", K.IMPL, None, "reduce-sum-create", "apply_primitive", "standard_primitive"),
    ("reduce_sum", K.ABSTRACT_EVAL, None, "reduce-sum-create", "standard_abstract_eval",
     "standard_primitive"),
    # ad.*
    ("neg", K.JVP, None, "neg-deflinear2", None, "ad.deflinear2"),
    ("neg", K.TRANSPOSE, None, "neg-deflinear2", "_neg_transpose_rule", "ad.deflinear2"),
    ("sin", K.JVP, None, "sin-defjvp-lambda", None, "ad.defjvp"),
    ("exp", K.JVP, None, "exp-defjvp2", "_exp_jvp", "ad.defjvp2"),
    ("sign", K.JVP, None, "sign-defjvp-zero", None, "ad.defjvp_zero"),
    ("sub", K.JVP, None, "sub-defjvp", "_sub_jvp_lhs", "ad.defjvp"),
    ("mul", K.JVP, None, "mul-defbilinear", None, "ad.defbilinear"),
    ("mul", K.TRANSPOSE, None, "mul-defbilinear", "_mul_transpose_lhs", "ad.defbilinear"),
    ("reduce_precision", K.JVP, None, "reduce-precision-deflinear", None, "ad.deflinear"),
    ("reduce_precision", K.TRANSPOSE, None, "reduce-precision-deflinear",
     "_reduce_precision_transpose", "ad.deflinear"),
    ("add", K.JVP, None, "add-jvp-dict", "_add_jvp", "ad.primitive_jvps"),
    ("add", K.TRANSPOSE, None, "add-transpose-dict", "_add_transpose",
     "ad.primitive_transposes"),
    ("sin", K.LINEARIZATION, None, "sin-linearization", "_sin_lin",
     "ad.primitive_linearizations"),
    ("compute_on", K.TRANSPOSE, None, "compute-on-fancy-transpose", "_compute_on_transpose",
     "ad.fancy_transposes"),
    # batching tables
    ("reduce_sum", K.BATCHING, None, "reduce-sum-defreducer", None, "batching.defreducer"),
    ("gather", K.BATCHING, None, "gather-batcher", "_gather_batching_rule",
     "batching.primitive_batchers"),
    ("scatter-add", K.BATCHING, None, "scatter-add-batcher", "_scatter_add_batching_rule",
     "batching.fancy_primitive_batchers"),
    # partial eval, DCE, forwarding, const folding, staging
    ("compute_on", K.PARTIAL_EVAL, None, "compute-on-pe", "_compute_on_partial_eval",
     "pe.custom_partial_eval_rules"),
    ("compute_on", K.PARTIAL_EVAL, None, "compute-on-pe-custom", "_compute_on_pe_custom",
     "pe.partial_eval_jaxpr_custom_rules"),
    ("compute_on", K.DCE, None, "compute-on-dce", "_compute_on_dce", "pe.dce_rules"),
    ("compute_on", K.FORWARDING, None, "compute-on-forwarding", "_compute_on_forwarding",
     "pe.forwarding_rules"),
    ("compute_on", K.STAGING, None, "compute-on-staging", "_compute_on_staging",
     "pe.custom_staging_rules"),
    ("add", K.CONST_FOLD, None, "add-const-fold", "_add_const_fold", "pe.const_fold_rules"),
    # lowerings
    ("neg", K.LOWERING, None, "neg-lowering", "_nary_lower", "mlir.register_lowering"),
    ("sin", K.LOWERING, None, "sin-lowering", "_sin_lowering", "mlir.register_lowering"),
    ("sin", K.LOWERING, "cpu", "sin-lowering-cpu", "_sin_cpu_lowering",
     "mlir.register_lowering"),
    ("exp", K.LOWERING, "gpu", "exp-gpu-lowering", "_exp_gpu_lowering",
     "mlir.register_lowering"),
    ("compute_on", K.LOWERING, None, "compute-on-lowering", "_compute_on_lowering",
     "@partial"),
    ("fused_call", K.LOWERING, None, "fused-lowering", "_fused_impl",
     "mlir.register_lowering"),
    ("add", K.LOWERING, "triton", "triton-add", "_add_lowering_rule", "@register_lowering"),
    ("neg", K.LOWERING, "triton", "triton-neg", "_neg_lowering_rule",
     "triton_lowering_rules"),
    # impl / abstract eval forms
    ("compute_on", K.IMPL, None, "compute-on-simple-impl", "apply_primitive",
     "dispatch.simple_impl"),
    ("add_any", K.IMPL, None, "add-any-impl", "_add_jaxvals_impl", "def_impl"),
    ("add_any", K.ABSTRACT_EVAL, None, "add-any-aeval", None, "def_abstract_eval"),
    ("fused_call", K.IMPL, None, "fused-impl", "_fused_impl", "fused_p.def_impl"),
    ("fused_call", K.ABSTRACT_EVAL, None, "fused-aeval", "_fused_abstract_eval",
     "@fused_p.def_abstract_eval"),
    ("scatter-add", K.ABSTRACT_EVAL, None, "scatter-add-aeval", "_scatter_add_abstract_eval",
     "@scatter_add_p.def_abstract_eval"),
    # Primitive subclasses
    ("closed_call", K.BATCHING, None, "closed-call-create", "_call_batcher", "CallPrimitive"),
    ("closed_call", K.JVP, None, "closed-call-create", "jvp", "CallPrimitive"),
    ("closed_call", K.IMPL, None, "closed-call-impl", "_closed_call_impl", "def_impl"),
    ("pallas_call", K.IMPL, None, "pallas-call-impl", "_pallas_call_impl", "def_impl"),
    # hijax: one rule per method, at the method
    ("SearchSorted", K.IMPL, None, "searchsorted-expand", "expand", "SearchSorted.expand"),
    ("SearchSorted", K.TRANSPOSE, None, "searchsorted-vjp-fwd", "vjp_fwd",
     "SearchSorted.vjp_fwd"),
    ("SearchSorted", K.TRANSPOSE, None, "searchsorted-vjp-bwd-retval", "vjp_bwd_retval",
     "SearchSorted.vjp_bwd_retval"),
    ("SearchSorted", K.JVP, None, "searchsorted-jvp", "jvp", "SearchSorted.jvp"),
    ("SearchSorted", K.BATCHING, None, "searchsorted-batch", "batch_dim_rule",
     "SearchSorted.batch_dim_rule"),
    ("SearchSorted", K.DCE, None, "searchsorted-dce", "dce", "SearchSorted.dce"),
    # same name string, two primitives
    ("convert@jax._src.lax.lax", K.ABSTRACT_EVAL, None, "convert-aeval-lax",
     "_convert_abstract_eval", "def_abstract_eval"),
    ("convert@jax._src.lax.old_convert", K.IMPL, None, "convert-impl-old", "_convert_impl",
     "def_impl"),
]


def _row_id(row) -> str:
    return f"{row[0]}-{row[1].value}{'-' + row[2] if row[2] else ''}-{row[3]}"


@pytest.mark.parametrize("selector, kind, platform, key, function, via", [
    pytest.param(*row, id=_row_id(row)) for row in RULES])
def test_rule(prims, selector, kind, platform, key, function, via):
    file, line = mark(key)
    prim = find(prims, selector)
    hits = [r for r in prim.rules if r.kind == kind and r.platform == platform
            and r.loc.file == file and r.loc.line == line]
    assert len(hits) == 1, (
        f"{selector}: no single {kind.value}[{platform}] rule at {file}:{line}; "
        f"rules: {[(r.kind.value, r.platform, str(r.loc)) for r in prim.rules]}")
    rule = hits[0]
    assert via in rule.via
    if function is None:
        assert rule.function is None
    else:
        assert rule.function is not None, f"{selector} {kind.value}: no function"
        assert rule.function.name == function
        text = source_lines(rule.function.loc.file)[rule.function.loc.line - 1]
        assert text.strip().startswith(f"def {function}("), text


# What standard_primitive's partial of standard_abstract_eval receives.
SHAPE_DTYPE = {(K("shape_rule"), None), (K("dtype_rule"), None)}
# Primitive -> every (kind, platform) it has: nothing missing, nothing extra.
KINDS = {
    "psum": {(K.IMPL, None), (K.ABSTRACT_EVAL, None), (K.LOWERING, None), (K.JVP, None),
             (K.TRANSPOSE, None), (K.BATCHING, None)},
    "pmax": {(K.ABSTRACT_EVAL, None), (K.JVP, None), (K.TRANSPOSE, None),
             (K.LOWERING, None)},
    "ragged_all_to_all": {(K.LOWERING, "cuda"), (K.LOWERING, "rocm")},
    "neg": {(K.IMPL, None), (K.ABSTRACT_EVAL, None), (K.BATCHING, None), (K.JVP, None),
            (K.TRANSPOSE, None), (K.LOWERING, None), (K.LOWERING, "triton"), (K.JET, None),
            *SHAPE_DTYPE},
    "sin": {(K.IMPL, None), (K.ABSTRACT_EVAL, None), (K.BATCHING, None), (K.JVP, None),
            (K.LINEARIZATION, None), (K.LOWERING, None), (K.LOWERING, "cpu"), *SHAPE_DTYPE},
    "add": {(K.IMPL, None), (K.ABSTRACT_EVAL, None), (K.BATCHING, None), (K.JVP, None),
            (K.TRANSPOSE, None), (K.CONST_FOLD, None), (K.LOWERING, "triton"), *SHAPE_DTYPE},
    "reduce_sum": {(K.IMPL, None), (K.ABSTRACT_EVAL, None), (K.BATCHING, None), *SHAPE_DTYPE},
    "compute_on": {(K.IMPL, None), (K.ABSTRACT_EVAL, None), (K.JVP, None),
                   (K.TRANSPOSE, None), (K.PARTIAL_EVAL, None), (K.DCE, None),
                   (K.FORWARDING, None), (K.STAGING, None), (K.LOWERING, None)},
    "scatter-add": {(K.IMPL, None), (K.ABSTRACT_EVAL, None), (K.BATCHING, None)},
    "closed_call": {(K.IMPL, None), (K.JVP, None), (K.BATCHING, None)},
    "pallas_call": {(K.IMPL, None)},
    "SearchSorted": {(K.IMPL, None), (K.TRANSPOSE, None), (K.JVP, None), (K.BATCHING, None),
                     (K.DCE, None)},
    "homonym": {(K.JET, None)},  # jet's own deflinear: a jet rule, not a JVP
}


@pytest.mark.parametrize("selector", sorted(KINDS))
def test_rule_kinds(prims, selector):
    prim = find(prims, selector)
    assert {(r.kind, r.platform) for r in prim.rules} == KINDS[selector]


# Primitive -> (variable, marker of its creation, style).
CREATED = {
    "psum": ("psum_p", "psum-create", "classic"),
    "scatter-add": ("scatter_add_p", "scatter-add-create", "classic"),
    "add_any": ("add_jaxvals_p", "add-any-create", "classic"),
    "fused_call": ("fused_p", "fused-create", "classic"),
    "neg": ("neg_p", "neg-create", "classic"),
    "add": ("add_p", "add-create", "classic"),
    "reduce_sum": ("reduce_sum_p", "reduce-sum-create", "classic"),
    "closed_call": ("closed_call_p", "closed-call-create", "classic"),
    "pallas_call": ("pallas_call_p", "pallas-call-create", "classic"),
    "SearchSorted": ("SearchSorted", "searchsorted-class", "hijax"),
    "homonym": ("homonym_p", "homonym-create", "classic"),
    "bare": ("bare_p", "bare-create", "classic"),
    "convert@jax._src.lax.lax": ("convert_p", "convert-create-lax", "classic"),
    "convert@jax._src.lax.old_convert": ("convert_p", "convert-create-old", "classic"),
}


@pytest.mark.parametrize("selector", sorted(CREATED))
def test_creation_site(prims, selector):
    variable, key, style = CREATED[selector]
    prim = find(prims, selector)
    assert (prim.variable, (prim.loc.file, prim.loc.line), prim.style) == \
        (variable, mark(key), style)


def test_exactly_the_fixture_primitives(prims):
    """No primitive for classes, homonyms or helpers; none missing."""
    names = sorted(p.name for p in prims)
    assert names == sorted([
        "SearchSorted", "add", "add_any", "all_gather_done", "all_gather_start", "ceil",
        "closed_call", "compute_on", "convert", "convert", "exp", "floor", "fused_call",
        "bare", "gather", "homonym", "mul", "neg", "pallas_call", "pmax", "pmin", "psum",
        "ragged_all_to_all", "reduce_max", "reduce_min", "reduce_precision", "reduce_sum",
        "scatter-add", "sign", "sin", "sub"])


def test_no_diagnostics_on_the_fixture():
    """Every registration in the fixture is understood: none becomes a diagnostic."""
    report = build_index(ROOT)
    assert report.diagnostics == 0
    assert report.primitives == 31


# -- invariants ------------------------------------------------------------------------


def _all_rules(prims):
    return [(p, r) for p in prims for r in p.rules]


def test_rule_spans_hold_the_registration_statement(prims):
    for prim, rule in _all_rules(prims):
        assert 1 <= rule.loc.line <= rule.loc.end_line, (prim.name, rule)
        lines = source_lines(rule.loc.file)
        span = "\n".join(lines[rule.loc.line - 1:rule.loc.end_line])
        # The span is whole statements: it parses on its own.
        ast.parse(textwrap.dedent(span))
        if prim.style == "hijax":
            method = rule.via.rpartition(".")[2]
            assert span.lstrip().startswith(f"def {method}("), (rule, span)
        else:
            head = rule.via.split(" > ")[0].lstrip("@").removesuffix("[...] =").strip()
            assert head in span, (rule.via, span)


def test_rule_spans_hold_the_marker_of_their_row(prims):
    for row in RULES:
        selector, kind, platform, key = row[:4]
        file, line = mark(key)
        prim = find(prims, selector)
        assert any(r.loc.file == file and r.loc.line <= line <= r.loc.end_line
                   for r in prim.rules if r.kind == kind), row


def test_multiline_statement_spans_every_line(prims):
    psum = find(prims, "psum")
    (batcher,) = [r for r in psum.rules if r.kind == K.BATCHING]
    file, line = mark("psum-batcher")
    assert (batcher.loc.line, batcher.loc.end_line) == (line, line + 2)
    (lowering,) = [r for r in psum.rules if r.kind == K.LOWERING]
    assert lowering.loc.end_line == mark("psum-lowering")[1] + 1


@pytest.mark.parametrize("selector, key, via", [
    ("psum", "psum-deflinear2", "ad.deflinear2"),
    ("neg", "neg-deflinear2", "ad.deflinear2"),
    ("pmax", "pmax-helper", "_register_collective > ad.deflinear2"),
    ("reduce_precision", "reduce-precision-deflinear", "ad.deflinear"),
    ("mul", "mul-defbilinear", "ad.defbilinear"),
])
def test_linear_registrars_give_a_jvp_and_a_transpose(prims, selector, key, via):
    file, line = mark(key)
    prim = find(prims, selector)
    from_call = [r for r in prim.rules if (r.loc.file, r.loc.line) == (file, line)
                 and r.via == via]
    assert sorted(r.kind.value for r in from_call) == ["jvp", "transpose"]


def test_homonyms_register_nothing(prims):
    homonym = find(prims, "homonym")
    assert [rule.kind for rule in homonym.rules] == [K.JET]
    for prim, rule in _all_rules(prims):
        assert rule.loc.file != "jax/_src/homonyms.py", (prim.name, rule)
        assert rule.loc.file != "jax/experimental/jet.py" or rule.kind == K.JET, \
            (prim.name, rule)
    for key in ("homonym-register-lowering", "homonym-local-register-lowering",
                "homonym-custom-jvp", "jet-deflinear-homonym", "jet-deflinear-neg"):
        assert mark(key)  # the idiom is present in the fixture


def test_same_name_two_primitives(prims):
    converts = [p for p in prims if p.name == "convert"]
    assert len(converts) == 2
    assert {p.module for p in converts} == {"jax._src.lax.lax", "jax._src.lax.old_convert"}
    by_module = {p.module: {r.kind for r in p.rules} for p in converts}
    assert by_module == {"jax._src.lax.lax": {K.ABSTRACT_EVAL},
                         "jax._src.lax.old_convert": {K.IMPL}}


def test_locate_finds_both_same_name_primitives():
    with open_index(ROOT) as idx:
        found = locate(idx, "convert")
    assert sorted(p.loc.file for p in found.primitives) == [
        "jax/_src/lax/lax.py", "jax/_src/lax/old_convert.py"]


def test_hijax_helper_methods_are_not_rules(prims):
    search = find(prims, "SearchSorted")
    names = {r.function.name for r in search.rules}
    assert "_not_a_rule" not in names and "__init__" not in names
    assert len(search.rules) == 6
    assert all(p.style == "classic" for p in prims if p.name != "SearchSorted")


def test_paths_are_root_relative_posix(prims):
    for prim, rule in _all_rules(prims):
        for loc in (prim.loc, rule.loc) + ((rule.function.loc,) if rule.function else ()):
            assert not loc.file.startswith("/") and "\\" not in loc.file
            assert (ROOT / loc.file).is_file()


# -- helpers whose bodies mention no registration word -------------------------------

HELPERS = """\
from jax._src import core
from jax._src.interpreters import ad


def make_prim(n):
  return core.Primitive(n)


def unop(n):
  return make_prim(n)


def wrap(n, jvp):
  q = unop(n)
  ad.defjvp(q, jvp)
  return q


def elsewhere(n):
  return make_prim(n)


def _jvp(g, x):
  return g


a_p = unop('a')
b_p = wrap('b', _jvp)
"""


def test_factories_called_to_make_an_x_p_are_read(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helpers.py").write_text(HELPERS)
    (tmp_path / "pkg" / "other.py").write_text(
        "from pkg import helpers\n\nc_p = helpers.unop('c')\nd_p = helpers.elsewhere('d')\n")
    with open_index(tmp_path) as idx:
        prims = {p.name: p for p in idx.primitives()}
        assert set(prims) == {"a", "b", "c"}
        assert [r.kind.value for r in prims["b"].rules] == ["jvp"]
        # `elsewhere` is used only from another file, so its body was not read: said so.
        [message] = idx.diagnostics()
    assert message.startswith("pkg/other.py:4: d_p = elsewhere(...)")


# -- registrations under `if` in a helper ---------------------------------------------

GUARDED = """\
from jax._src import core
from jax._src.interpreters import ad, batching


def _one(x):
  return x


def _many(x):
  return [x]


def linalg_like(name, multiple_results=False, supports_batching=True):
  prim = core.Primitive(name)
  if multiple_results:
    prim.def_abstract_eval(_many)
  else:
    prim.def_abstract_eval(_one)
  if not supports_batching:
    return prim
  batching.primitive_batchers[prim] = _one
  if supports_batching:
    ad.primitive_jvps[prim] = _one
  return prim


plain_p = linalg_like('plain')
multi_p = linalg_like('multi', multiple_results=True, supports_batching=False)
if False:
  ad.primitive_jvps[plain_p] = _many
"""


def test_branches_a_call_does_not_take_register_nothing(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "m.py").write_text(GUARDED)
    with open_index(tmp_path) as idx:
        prims = {p.name: {(r.kind.value, r.function.name if r.function else None)
                          for r in p.rules} for p in idx.primitives()}
    assert prims["plain"] == {("abstract_eval", "_one"), ("batching", "_one"), ("jvp", "_one")}
    # multiple_results=True takes the `if`; supports_batching=False skips the batcher
    # and the jvp under `if supports_batching:`. (The early return is not followed.)
    assert prims["multi"] == {("abstract_eval", "_many"), ("batching", "_one")}


# -- primitives made by a comprehension over a literal ----------------------------------

COMPREHENDED = """\
from jax.extend.core import Primitive
from jax.interpreters import batching, mlir

BY_NAME = {n: Primitive(n) for n in ("u1", "u2")}
LISTED = [Primitive("w_" + n) for n in ["a", "b"]]
KEPT = [Primitive(n) for n in ("x1", "x2") if n]  # an `if`: not unrolled


def _lower(ctx, x):
  return [x]


for _p in BY_NAME.values():
  mlir.register_lowering(_p, _lower)
batching.defvectorized(BY_NAME["u1"])
for _q in LISTED:
  _q.def_impl(lambda x: x)
"""


def test_a_comprehension_over_a_literal_makes_a_primitive_for_each_element(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text("")
    (tmp_path / "lib" / "m.py").write_text(COMPREHENDED)
    with open_index(tmp_path) as idx:
        prims = {p.name: sorted(r.kind.value for r in p.rules) for p in idx.primitives()}
    assert prims == {"u1": ["batching", "lowering"], "u2": ["lowering"],
                     "w_a": ["impl"], "w_b": ["impl"]}

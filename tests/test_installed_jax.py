"""The real-world sweep: the installed jax, indexed from source and checked against
its own live registries (accuracy thresholds of the foundation issue) and against
invariants every entry must satisfy."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jaxmap.commands import verify
from jaxmap.commands.locate import locate
from jaxmap.models import RuleKind


@pytest.fixture(scope="module")
def report(installed_index):
    return verify.verify(installed_index)


def test_primitives_found(report):
    assert report.primitive_recall >= 0.99, report.missing_primitives


def test_primitive_kind_pairs_found(report):
    assert report.pair_recall >= 0.995, report.missing_pairs


def test_few_rules_the_runtime_lacks(report):
    assert report.extra_rules[1] > 1000  # the check really looked at the rules
    assert report.extra_rate <= 0.005, report.extra_pairs


def test_lowering_platforms_match_the_live_tables(report):
    assert report.platform_recall[1] > 300  # the live tables were read
    assert report.platform_pair_recall >= 0.99, report.missing_platforms
    assert report.platform_pair_precision >= 0.99, report.extra_platforms


def test_rule_functions_are_the_ones_the_runtime_holds(report):
    # Unreachable ones are rules from both branches of an `if` in a helper, or rules a
    # later registration overwrote; see `jaxmap verify`.
    assert report.functions[1] > 1000
    assert report.function_agreement >= 0.95, report.unconfirmed_functions


def test_rules_helpers_receive_are_the_ones_in_the_live_partials(report):
    assert report.received[1] > 500  # the live partials were read
    assert report.received_recall >= 0.99, report.missing_received
    assert report.received_extra_rate <= 0.005, report.extra_received
    assert report.received_agreement >= 0.99, report.unconfirmed_received


def test_psum_has_every_rule_kind_at_its_statement(installed_index):
    found = locate(installed_index, "psum", kind="primitive")
    [psum] = [p for p in found.primitives if p.variable == "psum_p"]
    kinds = {r.kind for r in psum.rules}
    assert {RuleKind.IMPL, RuleKind.ABSTRACT_EVAL, RuleKind.JVP, RuleKind.TRANSPOSE,
            RuleKind.BATCHING, RuleKind.LOWERING} <= kinds
    source = (Path(installed_index.root) / psum.loc.file).read_text().splitlines()
    assert "psum_p" in source[psum.loc.line - 1]
    for rule in psum.rules:
        statement = "\n".join(source[rule.loc.line - 1:rule.loc.end_line])
        if rule.loc.file == psum.loc.file:
            assert "psum_p" in statement, rule


def test_rule_functions_point_at_their_def(installed_index):
    checked = 0
    lines_of = {}
    for prim in installed_index.primitives():
        for rule in prim.rules:
            if rule.function is None:
                continue
            path = rule.function.loc.file
            if path not in lines_of:
                lines_of[path] = (Path(installed_index.root) / path).read_text().splitlines()
            text = lines_of[path][rule.function.loc.line - 1]
            assert re.match(rf"\s*(async\s+)?def\s+{re.escape(rule.function.name)}\b", text) \
                or re.match(rf"\s*{re.escape(rule.function.name)}\b", text), (rule, text)
            checked += 1
    assert checked > 1000


def test_every_entry_is_well_formed(installed_index):
    root = Path(installed_index.root)
    files = set()
    prims = installed_index.primitives()
    assert len(prims) > 300
    for prim in prims:
        assert prim.name, prim
        files.add(prim.loc.file)
        for rule in prim.rules:
            assert 1 <= rule.loc.line <= rule.loc.end_line, rule
            assert not rule.loc.file.startswith("/") and "\\" not in rule.loc.file
            files.add(rule.loc.file)
    assert all((root / f).is_file() for f in files)


def test_name_strings_that_differ_from_variables(installed_index):
    by_name = {p.name: p for p in installed_index.primitives()}
    assert by_name["scatter-add"].variable == "scatter_add_p"
    assert by_name["add_any"].variable == "add_jaxvals_p"


def test_helper_built_primitives_get_the_helpers_rules(installed_index):
    by_variable = {p.variable: p for p in installed_index.primitives()}
    neg = by_variable["neg_p"]  # standard_unop: impl, abstract eval, defvectorized
    assert {"impl", "abstract_eval", "batching"} <= {r.kind.value for r in neg.rules}
    cumsum = by_variable["cumsum_p"]  # _cumulative_reduction_primitive
    platforms = {r.platform for r in cumsum.rules if r.kind is RuleKind.LOWERING}
    assert None in platforms and len(platforms) > 1


def test_hijax_classes_are_primitives(installed_index):
    found = locate(installed_index, "SearchSorted", kind="primitive")
    [prim] = found.primitives
    assert prim.style == "hijax"
    assert {"impl", "jvp", "transpose", "batching"} <= {r.kind.value for r in prim.rules}


# -- answers a contributor can trust (#9) -------------------------------------------------


def test_eigh_lowers_per_platform_with_no_default(installed_index):
    [eigh] = locate(installed_index, "eigh", kind="lowering").primitives
    platforms = {p for r in eigh.rules for p in r.platforms}
    assert {"cpu", "cuda", "rocm", "tpu"} <= platforms
    assert all(r.platform is not None for r in eigh.rules)


def test_gpu_lowerings_name_the_platforms_the_release_expands_gpu_to(installed_index):
    gpu = [r for p in installed_index.primitives() for r in p.rules if r.platform == "gpu"]
    assert gpu and all({"cuda", "rocm"} <= set(r.platforms) for r in gpu)


def test_defbilinear_names_both_transposes(installed_index):
    [mul] = locate(installed_index, "mul_p", kind="transpose").primitives
    [transpose] = mul.rules
    assert [f.name for f in transpose.functions] == ["_mul_transpose_left",
                                                     "_mul_transpose_right"]


def test_defjvp_names_each_operands_rule(installed_index):
    [igamma] = locate(installed_index, "igamma_p", kind="jvp").primitives
    [jvp] = igamma.rules
    assert [f.name for f in jvp.functions] == ["igamma_grada", "igamma_gradx"]


@pytest.mark.parametrize("name, qualname", [
    ("jax.jit", "jax._src.api.jit"),
    ("jnp.einsum", "jax._src.numpy.einsum.einsum"),
    ("lax.psum", "jax._src.lax.parallel.psum"),
])
def test_names_as_users_write_them(installed_index, name, qualname):
    found = locate(installed_index, name, kind="function")
    assert [d.qualname for d in found.definitions] == [qualname]  # one: no overload stubs
    [definition] = found.definitions
    assert definition.summary  # its docstring's first line
    source = (Path(installed_index.root) / definition.loc.file).read_text().splitlines()
    assert source[definition.loc.line - 1].startswith("def ")


def test_an_internal_module_import_is_not_a_public_path(installed_index):
    [ad] = locate(installed_index, "jax._src.interpreters.ad", kind="module").definitions
    assert not any(path.startswith("jax.experimental.sparse") for path in ad.public_paths)


def test_call_like_primitives_show_the_trace_methods_that_handle_them(installed_index):
    [call] = locate(installed_index, "custom_jvp_call", kind="trace").primitives
    assert "JVPTrace.process_custom_jvp_call" in {r.via for r in call.rules}


def test_a_trace_method_counts_as_the_rule_its_class_stands_for(installed_index):
    from jaxmap.commands.lookup import primitives

    missing_jvp = {p.name for p in primitives(installed_index, missing=("jvp",))}
    # custom_jvp_call's JVP is JVPTrace.process_custom_jvp_call, call's JVPTrace.process_call
    assert "custom_jvp_call" not in missing_jvp and "call" not in missing_jvp
    has_jvp = {p.name for p in primitives(installed_index, has=("jvp",))}
    assert "custom_jvp_call" in has_jvp
    missing_batching = {p.name for p in primitives(installed_index, missing=("batching",))}
    assert "custom_jvp_call" not in missing_batching  # BatchTrace.process_custom_jvp_call


def test_assigned_trace_methods_are_what_the_live_trace_classes_hold(installed_index):
    """shard_map's rules given as `ad.JVPTrace.process_shard_map = _shard_map_jvp` (and
    so for impl, batching, partial eval, staging): each one's function is what the live
    class holds under that name, and `locate --kind jvp` finds it."""
    import inspect

    from jax._src import core
    from jax._src.interpreters import ad, batching
    from jax._src.interpreters import partial_eval as pe

    live = {cls.__name__: cls for cls in (core.EvalTrace, ad.JVPTrace, batching.BatchTrace,
                                          pe.JaxprTrace, pe.DynamicJaxprTrace)}
    [shard_map] = locate(installed_index, "shard_map", kind="trace").primitives
    assigned = {r.via.split(".")[-2]: r for r in shard_map.rules if r.via.endswith(" =")}
    assert set(live) <= set(assigned)
    for name, cls in live.items():
        function = inspect.unwrap(cls.process_shard_map)
        rule = assigned[name].function
        assert (rule.name, rule.loc.line) == (function.__name__, function.__code__.co_firstlineno)
        assert inspect.getsourcefile(function).endswith(rule.loc.file)
    [jvp] = locate(installed_index, "shard_map", kind="jvp").primitives
    assert [r.function.name for r in jvp.rules] == ["_shard_map_jvp"]


def test_platform_gpu_keeps_the_cuda_and_rocm_lowerings(installed_index):
    # eigh registers cpu, cuda, rocm and tpu lowerings and no default one: gpu, JAX's
    # name for both GPU backends, is served by cuda's and rocm's
    found = locate(installed_index, "eigh_p", kind="lowering", platform="gpu")
    [eigh] = [p for p in found.primitives if p.name == "eigh"]
    assert {r.platform for r in eigh.rules} == {"cuda", "rocm"}


def test_a_config_option_defined_outside_the_config_module_is_located(installed_index):
    [found] = locate(installed_index, "jax_num_cpu_devices").definitions
    assert (found.qualname, found.loc.file) == ("jax._src.xla_bridge.num_cpu_devices",
                                                "jax/_src/xla_bridge.py")


@pytest.mark.parametrize("option, call", [("jax_logging_level", "optional_enum_state("),
                                          ("jax_debug_log_modules", "string_state(")])
def test_a_config_option_no_variable_holds_is_located_at_its_call(installed_index, option,
                                                                   call):
    found = locate(installed_index, option)
    [where] = found.options
    assert (where.name, where.file, found.definitions) == (option, "jax/_src/config.py", ())
    source = (Path(installed_index.root) / where.file).read_text().splitlines()
    assert source[where.line - 1] == call

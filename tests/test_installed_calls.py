"""The call graph and explain on the installed jax: public functions that reach a
primitive, coverage against `primitives`, every text-search binder found, and
explain on messages jax itself raises in the test."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jaxmap.commands import callgraph, coverage, explain, lookup
from jaxmap.errors import NotFound
from jaxmap.models import RuleKind
from jaxmap.render import explain_text
from jaxmap.render import json as render_json
from jaxmap.render.view import View


def test_binds_reaches_the_public_api(installed_index):
    public = {f.label for f in callgraph.binds(installed_index, "dot_general").found}
    assert {"jax.numpy.einsum", "jax.lax.dot_general"} <= public
    psum = {f.label for f in callgraph.binds(installed_index, "psum").found}
    assert "jax.lax.psum" in psum


def test_a_wrapper_read_without_its_functions_lends_callers_none_of_them(installed_index):
    # `jit` is `api_boundary(jit)`: a jitted function calls what jit makes of it, not
    # every function api_boundary wraps (jax.grad had 469 callers, 214 of them jnp's).
    grad_callers = {f.label for f in callgraph.callers(installed_index, "jax.grad").found}
    assert "jax.experimental.sparse.grad" in grad_callers
    assert not {name for name in grad_callers if name.startswith("jax.numpy.")}


def test_coverage_totals_equal_primitive_counts(installed_index):
    """Each column counts what `primitives --has K` lists (a Trace method as its class's
    kind too: closed_call's JVPTrace.process_call), and by_trace says which."""
    prims = installed_index.primitives()
    matrix = coverage.coverage(prims)
    assert len(matrix.rows) == len(prims)
    for kind in RuleKind:
        have = len(lookup.select(prims, has=(kind.value,)))
        assert matrix.totals.get(kind.value, 0) == have, kind
    traced = {name: by for name, _module, _counts, by in matrix.rows if by}
    assert traced["closed_call"]["jvp"] == 1 and "jvp" in traced["shard_map"]


def test_binds_finds_every_binder_a_text_search_finds(installed_index):
    """For every primitive variable, each function whose text has `<var>.bind(` is a
    binder of a primitive of that variable."""
    ids = [p.id for p in installed_index.primitive_rows()]
    variables = {pid: variable for pid, _name, variable
                 in installed_index.primitive_labels(ids) if variable}
    bound = {(b.module, b.function, variables.get(b.primitive_id))
             for b in installed_index.binds()}
    functions = _functions_by_file(installed_index)
    missed = []
    for file, spans in functions.items():
        text = (Path(installed_index.root) / file).read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(text, 1):
            for var in re.findall(r"(?<![\w.])(\w+_p)\.bind(?:_with_trace)?\(", line):
                if line.lstrip().startswith("#") or var not in set(variables.values()):
                    continue
                owner = _owner(spans, number)
                if owner and (owner[0], owner[1], var) not in bound:
                    missed.append(f"{file}:{number} {var}")
    assert not missed, missed[:20]


def _functions_by_file(index) -> dict[str, list[tuple[int, int, str, str]]]:
    """file -> (line, end_line, module, qualname) of its outermost functions."""
    spans: dict[str, list] = {}
    for file, module, qualname, line, end_line in index._conn.execute(
            "SELECT file, module, qualname, line, end_line FROM definitions "
            "WHERE kind = 'function'"):
        spans.setdefault(file, []).append((line, end_line, module,
                                           qualname[len(module) + 1:]))
    return spans


def _owner(spans, number: int):
    """(module, qualname) of the outermost function around line `number`."""
    around = [s for s in spans if s[0] <= number <= (s[1] or s[0])]
    if not around:
        return None
    _line, _end, module, qualname = min(around, key=lambda s: s[0])
    return module, qualname


# -- explain on messages jax raises ----------------------------------------------------

# Run in a child process: jax is multithreaded, and the indexer forks afterwards.
_RAISE = """
import json, traceback
import jax
from jax._src import core
from jax.experimental import hijax

def raised(fn):
    try:
        fn()
    except Exception as error:
        return {"text": str(error), "type": type(error).__name__,
                "traceback": "".join(traceback.format_exception(error))}
    raise SystemExit("jax raised nothing")

prim = core.Primitive("frob_without_rules")
prim.def_impl(lambda x: x)
prim.def_abstract_eval(lambda x: x)

class Frob(hijax.VJPHiPrimitive):
    def __init__(self, aval):
        self.in_avals, self.out_aval, self.params = (aval,), aval, {}
        super().__init__()

    def expand(self, x):
        return x * 2

ones = jax.numpy.ones(3)
hi = lambda v: Frob(jax.typeof(v))(v)
print(json.dumps({
    "jvp": raised(lambda: jax.grad(lambda x: prim.bind(x))(1.0)),
    "batching": raised(lambda: jax.vmap(lambda x: prim.bind(x))(ones)),
    "lowering": raised(lambda: jax.jit(lambda x: prim.bind(x))(1.0)),
    "transpose": raised(lambda: jax.linear_transpose(lambda x: prim.bind(x), 1.0)(1.0)),
    "hijax transpose": raised(lambda: jax.grad(lambda v: hi(v).sum())(ones)),
    "hijax batching": raised(lambda: jax.vmap(hi)(jax.numpy.ones((2, 3)))),
    "reshape": raised(lambda: ones.reshape(4)),
    "scalar": raised(lambda: jax.grad(lambda x: x)(ones)),
    "bool": raised(lambda: jax.jit(lambda x: x if x > 0 else -x)(1.0)),
    "shape": raised(lambda: jax.jit(lambda n: jax.numpy.zeros((n,)))(3)),
}))
"""


@pytest.fixture(scope="module")
def errors():
    pytest.importorskip("jax")
    out = subprocess.run([sys.executable, "-c", _RAISE], capture_output=True, text=True,
                         check=True, env={**os.environ, "JAX_PLATFORMS": "cpu",
                                          "JAX_TRACEBACK_FILTERING": "off"}).stdout
    return json.loads(out)


@pytest.mark.parametrize("kind", ["jvp", "batching", "lowering", "transpose"])
def test_explain_classic_missing_rules(installed_index, errors, kind):
    found = explain.explain(installed_index, errors[kind]["text"])
    missing = found.missing
    assert missing.kind == kind and missing.style == "classic"
    assert missing.name == "frob_without_rules" and missing.primitive is None
    assert missing.register_with and missing.siblings
    assert all(r.public and not r.name.split(".")[-1].startswith("_")
               for r in missing.register_with)
    assert all(s.file and s.line for s in missing.siblings)
    expected_flag = {"transpose": "--linear", "lowering": "--platform cpu"}.get(kind, "")
    assert missing.flag == expected_flag  # "": new-primitive generates it by default
    assert found.sites and found.sites[0].exception == errors[kind]["type"]


@pytest.mark.parametrize("kind", ["transpose", "batching"])
def test_explain_hijax_missing_rules(installed_index, errors, kind):
    found = explain.explain(installed_index, errors[f"hijax {kind}"]["text"])
    missing = found.missing
    assert (missing.kind, missing.style, missing.name) == (kind, "hijax", "Frob")
    assert missing.flag == "--style hijax"
    assert missing.register_with
    assert all(r.name.startswith("hijax.") and r.public for r in missing.register_with)


def test_explain_reads_a_whole_traceback_from_stdin(installed_index, errors, capsys,
                                                    monkeypatch):
    from jaxmap.cli import main

    monkeypatch.setenv("JAXMAP_CACHE_DIR", os.path.dirname(installed_index.path))
    monkeypatch.setattr("sys.stdin", io.StringIO(errors["jvp"]["traceback"]))
    assert main(["explain", "-"]) == 0
    out = capsys.readouterr().out
    assert "missing rule: jvp of classic primitive frob_without_rules" in out
    assert "register with" in out and "examples" in out


def test_explain_places_a_non_rule_error(installed_index, errors):
    found = explain.explain(installed_index, errors["reshape"]["text"])
    assert found.missing is None and found.sites
    assert all(site.file.startswith("jax/") for site in found.sites)


def test_explain_puts_the_site_a_traceback_passes_through_first(installed_index, errors):
    """jax.grad of a non-scalar: one wording, formatted through a bound `.format`, raised
    at several lines; the traceback's last frame in jax names the one that raised."""
    traceback = errors["scalar"]["traceback"]
    frames = re.findall(r'File ".*/(jax/_src/[^"]+)", line (\d+)', traceback)
    found = explain.explain(installed_index, traceback)
    assert len(found.sites) > 1 and found.missing is None
    assert (found.sites[0].file, str(found.sites[0].line)) == frames[-1]
    assert explain.explain(installed_index, errors["scalar"]["text"]).sites  # alone too


def test_explain_places_a_message_its_exception_class_builds(installed_index, errors):
    """TracerBoolConversionError builds its message in __init__; the place that raises
    it is a call to the class, found through the call graph."""
    found = explain.explain(installed_index, errors["bool"]["traceback"])
    [site] = found.sites
    assert site.exception == errors["bool"]["type"] == "TracerBoolConversionError"
    assert site.function.endswith("TracerBoolConversionError.__init__")
    frames = re.findall(r'File ".*/(jax/_src/[^"]+)", line (\d+), in (\w+)',
                        errors["bool"]["traceback"])
    raising = (found.raised_by[0].file, str(found.raised_by[0].line))
    assert raising in {(file, line) for file, line, _function in frames}
    lines = explain_text.explanation((found,), View("")).splitlines()
    assert lines[1].split()[:2] == ["built", "in"] and "raised by" in lines[2]


def test_explain_places_a_message_a_helper_returns_as_an_exception(installed_index, errors):
    """A shape that is a tracer: a helper builds the TypeError and returns it (it is done
    before the raise: not in the traceback), its caller raises it."""
    found = explain.explain(installed_index, errors["shape"]["traceback"])
    [site] = found.sites
    assert site.returned and site.exception == errors["shape"]["type"] == "TypeError"
    frames = re.findall(r'File ".*/(jax/_src/[^"]+)", line (\d+), in (\w+)',
                        errors["shape"]["traceback"])
    functions = {function for _file, _line, function in frames}
    assert site.function.rpartition(".")[2] not in functions
    assert {s.function.rpartition(".")[2] for s in found.raised_by} & functions
    lines = explain_text.explanation((found,), View("")).splitlines()
    assert lines[1].split()[:2] == ["built", "in"]


def test_explain_places_the_first_line_of_a_longer_message(installed_index):
    """What people copy: the first line of a message that goes on; nothing to say of a
    missing rule from it."""
    found = explain.explain(
        installed_index,
        "scan body function carry input and carry output must have equal types")
    assert [s.file for s in found.sites] == ["jax/_src/lax/control_flow/loops.py"]
    assert found.missing is None


def test_explain_refuses_text_no_site_raises(installed_index):
    with pytest.raises(NotFound, match="not an error message raised in this tree"):
        explain.explain(installed_index, "the quick brown fox jumps over the lazy dog")


@pytest.mark.parametrize(("message", "kind"), [
    ("Batching rule for 'cumsum' not implemented", "batching"),
    ("Differentiation rule for 'sin' not implemented", "jvp"),
    ("Transpose rule (for reverse-mode differentiation) for 'cumsum' not implemented",
     "transpose"),
    ("MLIR translation rule for primitive 'sin' not found for platform cpu", "lowering"),
    ("MLIR translation rule for primitive 'pbroadcast' not found for platform cuda",
     "lowering"),
])
def test_explain_does_not_advise_registering_a_rule_the_index_has(installed_index, message,
                                                                   kind):
    found = explain.explain(installed_index, "NotImplementedError: " + message)
    assert found.missing is None and found.not_linear is None
    assert found.has_rule.kind == kind and found.has_rule.rules
    assert all(r.kind.value == kind for r in found.has_rule.rules)
    out = explain_text.explanation((found,), View(""))
    assert "not missing" in out and "register with" not in out
    assert json.loads(render_json.explanation_document((found,), View("")))[
        "has_rule"]["rules"]


def test_explain_names_every_jvp_of_the_rule_it_has(installed_index):
    """`ad.defjvp(igamma_p, igamma_grada, igamma_gradx)`: one JVP per operand."""
    found = explain.explain(installed_index, "NotImplementedError: Differentiation rule "
                            "for 'igamma' not implemented")
    assert "-> igamma_grada, igamma_gradx" in explain_text.explanation((found,), View(""))
    [rule] = json.loads(render_json.explanation_document((found,), View("")))[
        "has_rule"]["rules"]
    assert rule["functions"] == ["igamma_grada", "igamma_gradx"]


def test_explain_keeps_the_missing_rule_advice_for_a_platform_without_one(installed_index):
    """pbroadcast has lowerings for GPUs only."""
    found = explain.explain(installed_index, "NotImplementedError: MLIR translation rule "
                            "for primitive 'pbroadcast' not found for platform cpu")
    assert found.has_rule is None and found.missing.platforms == ("cpu",)
    both = explain.explain(installed_index, "NotImplementedError: MLIR translation rule for "
                           "primitive 'pbroadcast' not found for platforms ['cpu', 'cuda']")
    assert both.has_rule is None and both.missing.platforms == ("cpu", "cuda")

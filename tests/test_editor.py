"""The editor's questions without a server: what symbol a cursor is on, what it means
in the minijax index, and the texts of lenses and findings."""

from __future__ import annotations

import textwrap

import pytest
from inline import indexed_tree
from markers import ROOT, mark, source_lines

from jaxmap.commands import editor, rule_gaps
from jaxmap.models import Primitive, Rule, RuleKind, SourceLoc
from jaxmap.render import editor as render
from jaxmap.session import open_index

# (line, column of the cursor, the symbol's text, whether it is a string's contents)
SYMBOLS = [
    ("ad.deflinear2(psum_p, f)", 5, "ad.deflinear2", False),
    ("ad.deflinear2(psum_p, f)", 0, "ad", False),
    ("ad.deflinear2(psum_p, f)", 16, "psum_p", False),
    ("return psum_p.bind(x)", 15, "psum_p.bind", False),
    ("x = jnp.einsum('ij', a)", 10, "jnp.einsum", False),
    ("psum_p = core.Primitive('psum')", 26, "psum", True),
    ("psum_p = core.Primitive('psum')", 24, "psum", True),
    ("f(x).bind(y)", 6, "bind", False),
    ("x = a  +  b", 7, None, None),
]


@pytest.mark.parametrize("line, column, text, quoted", SYMBOLS)
def test_symbol_at(line, column, text, quoted):
    symbol = editor.symbol_at(line, column)
    assert (symbol and (symbol.text, symbol.quoted)) == ((text, quoted) if text else None)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:  # the autouse private cache is per test
        patch.setenv("JAXMAP_CACHE_DIR", str(tmp_path_factory.mktemp("editor-cache")))
        with open_index(ROOT) as opened:
            yield opened


def _meaning(index, key: str, word: str):
    file, line = mark(key)
    column = source_lines(file)[line - 1].index(word)
    return editor.meaning(index, file, line, editor.symbol_at(source_lines(file)[line - 1],
                                                              column))


def test_a_helper_call_means_the_helper_the_call_graph_resolved(index):
    found = _meaning(index, "psum-deflinear2", "deflinear2")
    assert [d.qualname for d in found.definitions] == ["jax._src.interpreters.ad.deflinear2"]
    assert found.primitives == ()


def test_a_rule_function_serves_its_primitive(index):
    found = _meaning(index, "psum-deflinear2", "_psum_transpose_rule")
    assert [(s.kind, s.primitive) for s in found.served[0]] == [("transpose", "psum")]
    assert render.rule_lens(found.served[0]) == "transpose rule of psum"


def test_references_of_a_rule_function_include_its_registration(index):
    found = _meaning(index, "psum-deflinear2", "_psum_transpose_rule")
    refs = editor.references(index, found)
    assert (SourceLoc(*mark("psum-deflinear2")), "registers") in [(r.loc, r.how) for r in refs]


@pytest.mark.parametrize("key, function, kind, primitive", [
    ("sub-defjvp", "_sub_jvp_rhs", "jvp", "sub"),  # the second operand's JVP
    ("mul-defbilinear", "_mul_transpose_rhs", "transpose", "mul"),
])
def test_a_rule_function_after_the_first_serves_its_primitive(index, key, function, kind,
                                                              primitive):
    found = _meaning(index, key, function)
    assert [(s.kind, s.primitive) for s in found.served[0]] == [(kind, primitive)]


def test_locations_put_the_definition_first_then_the_rules(index):
    found = _meaning(index, "psum-impl", "psum_p")
    places = editor.locations(found)
    assert places[0] == SourceLoc(*mark("psum-create"))
    assert SourceLoc(*mark("psum-batcher")) in places


def test_lens_titles():
    assert render.primitive_lens(editor.Counts(9, 128, 1978)) == \
        "9 rules · 128 binders · 1,978 tests"
    served = [editor.Served(kind, prim, SourceLoc("f.py", 1))
              for kind, prim in [("jvp", "a"), ("transpose", "a"), ("jvp", "b"), ("jvp", "c"),
                                 ("jvp", "d")]]
    assert render.rule_lens(served) == "jvp and transpose rules of a, b, c and 1 more"


class _Prims:
    """An index that knows only the primitives of one file (and no registrations)."""

    def __init__(self, prims):
        self.prims = prims

    def primitives_in_file(self, file):
        return self.prims

    def rules_registered_in(self, file):
        return []


def _prim(name: str, line: int, *lowerings: str | None) -> Primitive:
    rules = tuple(Rule(RuleKind.LOWERING, SourceLoc("m.py", line), "register_lowering",
                       platform) for platform in lowerings)
    return Primitive(name, f"{name}_p", "m", SourceLoc("m.py", line), rules=rules)


def test_a_platform_most_siblings_lower_on_is_missed_by_one_without_a_default():
    prims = [_prim("a", 1, "cpu", "tpu"), _prim("b", 2, "cpu", "tpu"),
             _prim("c", 3, "cpu", "tpu"), _prim("d", 4, "cpu"), _prim("e", 5, None)]
    found = rule_gaps.gaps(_Prims(prims), "m.py")
    assert [(g.line, g.code, g.what, g.having, g.siblings) for g in found] == [
        (4, rule_gaps.MISSING_PLATFORM, "tpu", 3, 4)]
    assert render.gap(found[0]) == ("d has no lowering for tpu, which 3 of its 4 sibling "
                                    "primitives in this module have")


def test_a_hijax_primitive_is_not_held_to_its_classic_siblings_rules():
    # its abstract eval, lowering and batching are its class's methods: no registration
    prims = [_prim("a", 1, "cpu"), _prim("b", 2, "cpu"), _prim("c", 3, "cpu"),
             _prim("d", 4)._replace(style="hijax")]
    assert rule_gaps.gaps(_Prims(prims), "m.py") == []
    prims[3] = prims[3]._replace(style="classic")  # a classic one would be named
    assert [g.primitive for g in rule_gaps.gaps(_Prims(prims), "m.py")] == ["d"]


def test_no_finding_among_fewer_than_four_primitives():
    prims = [_prim("a", 1, "cpu", "tpu"), _prim("b", 2, "cpu", "tpu"), _prim("d", 4, "cpu")]
    assert rule_gaps.gaps(_Prims(prims), "m.py") == []


def test_a_primitive_variable_means_the_primitive_not_also_its_variable(index):
    found = _meaning(index, "psum-impl", "psum_p")
    assert [p.name for p in found.primitives] == ["psum"]
    assert found.definitions == ()


# A primitive whose transpose binds it again (as psum's does), and the public
# function that binds it.
_SELF_TRANSPOSED = """\
from jax._src import core
from jax._src.interpreters import ad


def _total_transpose_rule(ct, x):
  return (total_p.bind(ct),)


def total(x):
  return total_p.bind(x)


total_p = core.Primitive('total')
ad.deflinear2(total_p, _total_transpose_rule)
"""
_TOTAL = "jax/_src/collective.py"


def _total_tree(tmp_path_factory, source: str):
    """An indexed tree whose `jax.total` is defined by `source`, closed after use."""
    found = indexed_tree(tmp_path_factory, {
        _TOTAL: source, "jax/_src/__init__.py": "",
        "jax/__init__.py": "from jax._src.collective import total as total\n"})
    yield found
    found.close()


@pytest.fixture(scope="module")
def self_transposed(tmp_path_factory):
    yield from _total_tree(tmp_path_factory, _SELF_TRANSPOSED)


def _written(source: str, text: str) -> tuple[int, int]:
    """The 1-based line and the column of the first `text` in `source`."""
    for number, line in enumerate(textwrap.dedent(source).splitlines(), 1):
        if text in line:
            return number, line.index(text)
    raise AssertionError(text)


def _meaning_in(index, file: str, source: str, line_text: str, word: str):
    line, _ = _written(source, line_text)
    text = textwrap.dedent(source).splitlines()[line - 1]
    return editor.meaning(index, file, line, editor.symbol_at(text, text.index(word)))


def test_definition_of_a_rule_function_is_its_def_alone(self_transposed):
    found = _meaning_in(self_transposed, _TOTAL, _SELF_TRANSPOSED, "ad.deflinear2(",
                        "_total_transpose_rule")
    assert [p.name for p in found.bound] == ["total"]  # known, for hover
    assert editor.locations(found) == [
        SourceLoc(_TOTAL, _written(_SELF_TRANSPOSED, "def _total_transpose_rule(")[0])]


def test_definition_of_a_public_function_offers_the_primitive_it_binds(self_transposed):
    found = _meaning_in(self_transposed, _TOTAL, _SELF_TRANSPOSED, "def total(", "total")
    lines = [loc.line for loc in editor.locations(found)]
    assert lines[:2] == [_written(_SELF_TRANSPOSED, text)[0]
                         for text in ("def total(", "total_p = ")]


def test_workspace_symbols_find_private_functions_by_part_of_their_name(self_transposed):
    rule = editor.SymbolRow("_total_transpose_rule", "function", "jax._src.collective",
                            SourceLoc(_TOTAL, _written(_SELF_TRANSPOSED, "def _total_tr")[0]))
    assert editor.symbols(self_transposed, "_total_transpose_rule") == [rule]
    assert editor.symbols(self_transposed, "transpose") == [rule]


def test_workspace_symbols_list_a_public_function_once_by_its_public_path(self_transposed):
    found = [(row.name, row.kind) for row in editor.symbols(self_transposed, "total")]
    assert found == [("total", "primitive"), ("jax.total", "function"),
                     ("_total_transpose_rule", "function")]


# -- a user's file outside the root: its own imports say what its names stand for -----

@pytest.mark.parametrize("source, expected", [
    ("import jax.numpy as jnp\n", {"jnp": "jax.numpy"}),
    ("import jax.numpy\n", {"jax": "jax"}),
    ("import jax, numpy as np  # both\n", {"jax": "jax", "np": "numpy"}),
    ("from jax import lax, numpy as xnp\n", {"lax": "jax.lax", "xnp": "jax.numpy"}),
    ("from jax.lax import (psum as ps,\n    pmax)\n", {"ps": "jax.lax.psum",
                                                     "pmax": "jax.lax.pmax"}),
    ("from jax import lax\nimport jax.numpy as lax\n", {"lax": "jax.numpy"}),  # the later
    ("from . import lax\nx = 'import os'\n", {}),
])
def test_imported_names(source, expected):
    assert editor.imported(source) == expected


def test_through_imports_reads_the_first_name_as_imported():
    names = editor.imported("from jax import lax\n")
    symbol = editor.symbol_at("  return lax.psum(y, 'i')", 14)
    assert editor.through_imports(symbol, names).text == "jax.lax.psum"
    assert editor.through_imports(editor.symbol_at("x = f(y)", 5), names) is None
    assert editor.through_imports(editor.symbol_at("lax.psum(y, 'i')", 13), names) is None


# A public function that reaches the primitive of its name through a helper, as
# jax.lax.psum reaches psum_p through _psum.
_THROUGH_A_HELPER = """\
from jax._src import core


def _total(x):
  return total_p.bind(x)


def total(x):
  return _total(x)


total_p = core.Primitive('total')
total_p.def_impl(_total)
"""


@pytest.fixture(scope="module")
def through_a_helper(tmp_path_factory):
    yield from _total_tree(tmp_path_factory, _THROUGH_A_HELPER)


def test_a_name_outside_the_root_means_the_public_function_and_the_primitive_it_reaches(
        through_a_helper):
    names = editor.imported("import jax as jx\n")
    symbol = editor.through_imports(editor.symbol_at("y = jx.total(x)", 8), names)
    found = editor.meaning(through_a_helper, None, 1, symbol)
    assert [d.public_paths for d in found.definitions] == [("jax.total",)]
    assert [p.name for p in found.bound] == ["total"]
    written = [_written(_THROUGH_A_HELPER, text)[0]
               for text in ("def total(", "total_p = ", "total_p.def_impl")]
    assert [loc.line for loc in editor.locations(found)] == written
    text = render.hover(found, lambda file, line: f"{file}#L{line}", {})
    assert f"binds **primitive `total`** (`total_p`, [{_TOTAL}:{written[1]}]" in text
    assert f"- impl: [{_TOTAL}:{written[2]}]" in text

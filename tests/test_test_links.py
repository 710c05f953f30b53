"""A primitive's tests ranked by how directly they reach it, each with its chain."""

from __future__ import annotations

import pytest

from jaxmap.commands.test_links import ranked_tests
from jaxmap.session import open_index

_LIBRARY = """\
from jax._src import core
p_p = core.Primitive('p')

def bind_p(x):
  return p_p.bind(x)

def twice(x):
  return bind_p(bind_p(x))

def reduce(x, parallel_reduce):
  return parallel_reduce(x)

def total(x):
  return reduce(x, parallel_reduce=bind_p)
"""
_TESTS = """\
import lib

def test_through_a_value():
  return lib.total(1)

def test_two_calls_away():
  return lib.twice(1)

def test_calls_the_binder():
  return lib.bind_p(1)

def test_names_the_primitive():
  return lib.p_p
"""


@pytest.fixture
def links(tmp_path):
    (tmp_path / "lib.py").write_text(_LIBRARY)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "lib_test.py").write_text(_TESTS)
    with open_index(str(tmp_path), graph=True) as index:
        [prim] = index.primitives_named("p", "p")
        return ranked_tests(index, prim)


def test_the_most_direct_tests_come_first_with_their_chains(links):
    assert [(t.name, t.depth, t.direct) for t in links] == [
        ("test_names_the_primitive", 0, True), ("test_calls_the_binder", 1, True),
        ("test_two_calls_away", 2, True), ("test_through_a_value", 2, False)]
    assert links[0].chain == ("test_names_the_primitive", "p_p")
    assert links[2].chain == ("test_two_calls_away", "lib.twice", "lib.bind_p", "p_p.bind")
    assert links[3].chain == ("test_through_a_value", "lib.total", "lib.bind_p", "p_p.bind")

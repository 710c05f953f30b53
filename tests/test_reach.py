"""commands/reach.py on the minijax fixture: the in-memory walk answers as `binds`
does by default (public functions, at trace time), and an edit's reach is looked for
where it can have changed."""

from __future__ import annotations

import pytest
from markers import ROOT

from jaxmap.commands import reach
from jaxmap.commands.callgraph import binds
from jaxmap.session import open_index


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JAXMAP_CACHE_DIR", str(tmp_path_factory.mktemp("reach-cache")))
        opened = open_index(ROOT, graph=True)
    yield opened
    opened.close()


@pytest.mark.parametrize("primitive", ["psum", "psum_p", "pmax", "mul"])
def test_public_reach_is_what_binds_public_answers(index, primitive):
    found = reach.Reach(index).public(primitive)
    answer = binds(index, primitive).found
    assert found.keys() == {r.label for r in answer}
    assert all(len(found[r.label]) == len(r.chain) for r in answer)  # shortest


def test_chains_run_from_the_public_function_to_the_bind(index):
    assert reach.Reach(index).public("psum")["jax.lax.pmean"] == (
        "jax.lax.pmean", "jax._src.lax.parallel._pmean", "jax._src.lax.parallel._psum_halved",
        "psum_p.bind")


def test_an_unknown_primitive_reaches_nothing(index):
    assert reach.Reach(index).public("no_such_primitive") == {}


def test_an_edit_touches_what_its_files_define_and_its_changed_definitions_reach(index):
    assert {"psum", "pmax"} <= reach.Reach(index).touched(["jax/_src/lax/parallel.py"])
    assert reach.Reach(index).touched(["jax/version.py"]) == set()
    # a definition whose calls, binds or public paths differ: what it reaches
    assert "psum" in reach.Reach(index).touched(
        ["jax/lax/__init__.py"], frozenset({"jax._src.lax.parallel.pmean"}))
    assert reach.Reach(index).touched(["jax/lax/__init__.py"]) == set()


def test_compare_of_an_index_with_itself_finds_nothing(index):
    assert reach.compare(index, index, ["jax/_src/lax/parallel.py"], {"mul"}) == []


def test_a_review_walks_no_primitive_where_nothing_it_walks_differs(index, monkeypatch):
    # jax/lax/__init__.py exports psum: an edit there that changes no export, call or
    # bind (a comment) cannot move any reach, so no primitive is walked
    walked = []
    marked = reach._marked
    monkeypatch.setattr(reach, "_marked",
                        lambda side, name, *where: walked.append(name) or marked(side, name, *where))
    assert reach.compare(index, index, ["jax/lax/__init__.py"], set()) == []
    assert walked == []
    assert reach.compare(index, index, ["jax/lax/__init__.py"], {"psum"}) == []
    assert walked == ["psum", "psum"]

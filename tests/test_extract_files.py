"""Parallel extraction: helpers share the files with this process and send theirs back;
the result must not depend on how many took part, nor on a helper dying."""

from __future__ import annotations

import os

import pytest

from jaxmap import roots
from jaxmap.indexing import discover, worker

pytestmark = pytest.mark.skipif(os.name != "posix", reason="helpers are forked")


@pytest.fixture(scope="module")
def jax_files():
    root = roots.resolve_root(None)
    return root, discover.list_files(root).files[:120]


def test_any_number_of_helpers_gives_the_same_results(jax_files):
    root, files = jax_files
    alone = worker.extract_files(root, files, jobs=1)
    assert worker.extract_files(root, files, jobs=3) == alone
    assert [facts["module"] for _, facts, _ in alone] == [f.module for f in files]


def test_files_a_dying_helper_took_are_extracted_here(jax_files, monkeypatch):
    root, files = jax_files
    alone = worker.extract_files(root, files, jobs=1)
    parent, extract_task = os.getpid(), worker._extract_task

    def dies_in_a_helper(task):  # on the first file it takes, which is then lost
        if os.getpid() != parent:
            os._exit(1)
        return extract_task(task)

    monkeypatch.setattr(worker, "_extract_task", dies_in_a_helper)
    seen = []
    results = worker.extract_files(root, files, jobs=2,
                                    progress=lambda done, total, _working: seen.append((done, total)))
    assert results == alone
    assert seen[-1] == (len(files), len(files))


def test_graph_facts_added_by_helpers_are_those_of_one_extraction(jax_files):
    """The second phase gives the first's facts what the call graph reads, on every
    core: each as if the file had been extracted with it at once."""
    root, files = jax_files
    first = worker.extract_files(root, files, jobs=1)
    facts = {f.path: raw for f, (_, raw, _) in zip(files, first)}
    added = worker.with_graph_facts(
        root, [(f.path, digest, f.size) for f, (digest, _, _) in zip(files, first)], facts,
        jobs=3)
    assert added == worker.extract_files(root, files, jobs=1, flow=True)


def test_graph_facts_added_to_a_file_that_does_not_parse_are_one_extractions(tmp_path):
    """A file Python's parser refuses keeps its diagnostic where one extraction puts
    it, after what the call graph reads: its stored facts are the same bytes whether
    the call graph's were read at once or added later (a server's first phase, then
    its graph)."""
    package = tmp_path / "jax"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "broken.py").write_text("def f(x):\n  return g(x)\n\ndef h(:\n  pass\n")
    files = discover.list_files(str(tmp_path)).files
    first = worker.extract_files(str(tmp_path), files, jobs=1)
    assert any("error" in facts for _, facts, _ in first)
    added = worker.with_graph_facts(
        str(tmp_path), [(f.path, digest, f.size) for f, (digest, _, _) in zip(files, first)],
        {f.path: facts for f, (_, facts, _) in zip(files, first)}, jobs=1)
    assert [blob for _, _, blob in added] == \
        [blob for _, _, blob in worker.extract_files(str(tmp_path), files, jobs=1, flow=True)]

"""Shared test set-up: every test gets its own index cache, never the user's."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
# The fixture trees are source to index, not tests to run (minijax has a `*_test.py`).
collect_ignore = ["fixtures"]


# Where jaxmap would cache without JAXMAP_CACHE_DIR: a folder no test may write in.
_USER_CACHE = os.path.join(tempfile.mkdtemp(prefix="jaxmap-user-cache-"), "jaxmap")


def pytest_configure(config):
    os.environ["XDG_CACHE_HOME"] = os.path.dirname(_USER_CACHE)
    os.environ["JAXMAP_QUIET"] = "1"  # a slow build's progress lines; tests that want them unset it


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch, request):
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("JAXMAP_ROOT", raising=False)
    yield
    assert not os.path.exists(_USER_CACHE), \
        f"{request.node.name} wrote into the user's cache ({_USER_CACHE})"


@pytest.fixture(scope="session")
def installed_index(tmp_path_factory):
    """The index of the installed jax, built once per test session."""
    import os

    from jaxmap.session import open_index

    cache = tmp_path_factory.mktemp("installed-cache")
    old = os.environ.get("JAXMAP_CACHE_DIR")
    os.environ["JAXMAP_CACHE_DIR"] = str(cache)
    try:
        index = open_index(graph=True)  # the tests that share it ask call-graph questions too
    finally:
        if old is None:
            os.environ.pop("JAXMAP_CACHE_DIR", None)
        else:
            os.environ["JAXMAP_CACHE_DIR"] = old
    yield index
    index.close()

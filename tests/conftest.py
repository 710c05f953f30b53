"""Shared test set-up: every test gets its own index cache, never the user's."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
# The fixture trees are source to index, not tests to run (minijax has a `*_test.py`).
collect_ignore = ["fixtures"]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("JAXMAP_ROOT", raising=False)


@pytest.fixture(scope="session")
def installed_index(tmp_path_factory):
    """The index of the installed jax, built once per test session."""
    import os

    from jaxmap.session import open_index

    cache = tmp_path_factory.mktemp("installed-cache")
    old = os.environ.get("JAXMAP_CACHE_DIR")
    os.environ["JAXMAP_CACHE_DIR"] = str(cache)
    try:
        index = open_index()
    finally:
        if old is None:
            os.environ.pop("JAXMAP_CACHE_DIR", None)
        else:
            os.environ["JAXMAP_CACHE_DIR"] = old
    yield index
    index.close()

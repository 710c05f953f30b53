"""Indexing pauses the cyclic garbage collector; it must leave it as it found it."""

from __future__ import annotations

import gc

import pytest
from conftest import FIXTURES

from jaxmap import indexer


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_left_on_or_off_as_it_was(enabled):
    (gc.enable if enabled else gc.disable)()
    try:
        indexer.build_index(FIXTURES / "minijax", rebuild=True)
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_objects_a_caller_froze_stay_frozen():
    kept = [[index] for index in range(100)]
    gc.freeze()  # frozen objects are in no generation: get_objects leaves them out
    try:
        indexer.build_index(FIXTURES / "minijax", rebuild=True)
        tracked = {id(found) for found in gc.get_objects()}
        assert not any(id(item) in tracked for item in kept)
    finally:
        gc.unfreeze()

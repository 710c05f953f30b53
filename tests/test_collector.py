"""Indexing pauses the cyclic garbage collector; it must leave it as it found it, and
leave nothing for it to collect: a long-lived process (the MCP server) indexes again and
again, and what the collector has to find stays in memory until it runs."""

from __future__ import annotations

import gc
import weakref

import pytest
from conftest import FIXTURES

from jaxmap.build import indexer
from jaxmap.build.resolve import interpreter as interpreter_module


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


def test_the_resolver_is_freed_when_the_index_is_written(monkeypatch):
    made = []
    original = interpreter_module.Interpreter.__init__

    def remembered(self, *args):
        original(self, *args)
        made.append(weakref.ref(self))

    monkeypatch.setattr(interpreter_module.Interpreter, "__init__", remembered)
    gc.disable()  # so only reference counting can free it
    try:
        indexer.build_index(FIXTURES / "minijax", rebuild=True)
        assert made and all(ref() is None for ref in made)
    finally:
        gc.enable()

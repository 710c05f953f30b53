"""Indexing pauses the cyclic garbage collector; it must leave it as it found it, and
leave nothing for it to collect: a long-lived process (the MCP server) indexes again and
again, and what the collector has to find stays in memory until it runs."""

from __future__ import annotations

import dataclasses
import gc
import importlib
import sys
import weakref
from pathlib import Path

import pytest
from conftest import FIXTURES
from inline import primitive, resolve_sources

import jaxmap.indexing.resolve as resolve_package
from jaxmap.indexing import indexer
from jaxmap.indexing.resolve import interpreter as interpreter_module


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


# A small tree with what makes the resolver's objects refer to each other: an import
# chain (a lookup runs another module), a Primitive subclass (its bases are evaluated),
# an object's attribute, a nested function and a call graph.
_TREE = {
    "pkg/__init__.py": "",
    "pkg/base.py": """
        from jax._src import core
        class Base(core.Primitive):
            def impl(self, x):
                return x
    """,
    "pkg/ops.py": """
        from jax._src import core
        from pkg.base import Base
        class Sub(Base):
            pass
        class Holder:
            def __init__(self, name):
                self.primitive = core.Primitive(name)
        sub_p = Sub("sub")
        held = Holder("held")
        def outer(x):
            def inner(y):
                return y
            return inner(x)
        @held.primitive.def_impl
        def _held_impl(x):
            return outer(x)
    """,
}


def _resolver_classes() -> list[type]:
    """The classes of the resolver's objects (not its records: dataclasses, tuples)."""
    found = []
    for path in sorted((Path(resolve_package.__file__).parent).glob("*.py")):
        module = importlib.import_module(f"{resolve_package.__name__}.{path.stem}")
        found += [cls for cls in vars(module).values() if isinstance(cls, type)
                  and cls.__module__ == module.__name__ and not dataclasses.is_dataclass(cls)
                  and not issubclass(cls, tuple)]
    return found


def test_no_object_of_the_resolver_outlives_resolve():
    """With the collector paused (as indexing runs), reference counting alone frees every
    object of the resolver once `resolve` returns: none is left in a reference cycle."""
    classes = set(_resolver_classes())
    gc.collect()
    gc.disable()
    try:
        alive = {id(found) for found in gc.get_objects() if type(found) in classes}
        resolution = resolve_sources(_TREE)
        assert [p.name for p in resolution.primitives] == ["sub", "held"]
        assert primitive(resolution, "held").rules and resolution.calls  # both phases ran
        del resolution
        left = [type(found).__name__ for found in gc.get_objects()
                if type(found) in classes and id(found) not in alive]
        assert left == []
    finally:
        gc.enable()


def test_resolver_objects_set_only_their_own_attributes(monkeypatch):
    """Collaborators are given what they need when they are made: no object of the
    resolver sets an attribute of another (or is set from a function outside it)."""
    strangers = []

    def own_only(self, name, value):
        setter = sys._getframe(1).f_locals.get("self")
        if setter is not self:
            strangers.append(f"{type(setter).__name__} sets {type(self).__name__}.{name}")
        object.__setattr__(self, name, value)

    classes = _resolver_classes()
    assert {"Names", "Interpreter", "Classes", "Objects"} <= {c.__name__ for c in classes}
    for cls in classes:
        monkeypatch.setattr(cls, "__setattr__", own_only)
    resolve_sources(_TREE)
    assert strangers == []

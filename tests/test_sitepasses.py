"""The call sites' passes read in forked helpers: the flow they leave is one process's."""

from __future__ import annotations

import ast
import copy
import os
import textwrap

import pytest

from jaxmap.flow import sitepasses
from jaxmap.indexing.extract import extract

# What a pass leaves that later stages read: a registry stored into through a parameter
# (a holder the second pass finds), a private function's parameter one site hands a
# value (a direct value the second pass keeps), literals made while values are read, a
# dataclass's fields, a partial, classes whose MROs and subclasses are read.
_CORE = """
    import dataclasses
    from functools import partial
    REG = {}
    def put(table, k, fn):
      table[k] = fn
    def get(table, k):
      return table[k]
    def apply(fun, x):
      return fun(x)
    class Base:
      def run(self):
        return helper()
    class Child(Base):
      def run(self):
        return [Base.run, helper][0](self)
    @dataclasses.dataclass
    class Rule:
      impl: object
      name: str
    def helper():
      return 1
    def _work(cb=helper, extra=None):
      pending = []
      pending.append(cb)
      for f in pending:
        f()
      return extra
    """
_API = """
    from functools import partial
    from pkg.core import REG, Child, Rule, _work, apply, get, helper, put
    def f(cb):
      return cb()
    def each():
      for fn in REG.values():
        fn(helper)
    put(REG, 'f', f)
    def use(x):
      return get(REG, 'f')(x)
    RULES = [Rule(f, 'f'), Rule(helper, 'h')]
    def fire():
      for rule in RULES:
        rule.impl(helper)
      apply(_work, helper)
      apply(partial(f, helper), None)
      return Child().run()
    """


def _state(flow) -> dict:
    """What the flow holds once its call sites are read, as later stages read it."""
    return {
        "sites": dict(flow._sites),
        "direct": dict(flow._direct_memo),
        "holders": {box: set(names) for box, names in flow._holders.items() if names},
        "literals": {box: (m, o, ast.dump(node)) for box, (m, o, node) in flow._literals.items()},
        "mros": dict(flow.classes._mros),
        "subclasses": flow.classes._subclasses,
        "reads": dict(flow._bound._reads),
        "alias tags": dict(flow._alias_tags),
        "iteration": flow._iteration_functions,
    }


@pytest.mark.skipif(os.name != "posix", reason="helpers fork")
def test_passes_read_in_helpers_leave_the_flow_one_process_leaves(monkeypatch):
    from jaxmap.flow.flow import Flow
    from jaxmap.indexing import discover
    from jaxmap.indexing.resolve import resolve

    monkeypatch.setattr(sitepasses, "_LEAST_CALLS", 1)
    monkeypatch.setattr(sitepasses, "_LEAST_JOBS", 2)
    monkeypatch.setattr(sitepasses, "_READ_FIRST", 0.25)  # (some read here, some in helpers)
    states = {}

    def call_graph(names, findings, definitions, flows, progress=None):
        for jobs in (1, 3):
            flow = Flow(names, copy.deepcopy(flows))  # (a flow consumes what it reads)
            flow.sites(jobs=jobs)
            states[jobs] = _state(flow)
            flow.close()
        return [], [], [], ()

    files = {path: extract(textwrap.dedent(text).encode(), *discover.module_name(path))
             for path, text in (("pkg/core.py", _CORE), ("pkg/api.py", _API))}
    resolve(files, graph=call_graph)
    assert states[3] == states[1]
    one = states[1]
    assert any(names >= {"table"} for names in one["holders"].values())
    assert one["direct"] and one["literals"] and one["reads"]

"""Skimming: function bodies the parser leaves out must change nothing the index says.

Each case is a small source and the functions whose bodies skim.py may report; for
every case the facts extracted with those bodies left out must keep every definition,
line span and class of a full read, and the shortened parse must stay error-free.
"""

from __future__ import annotations

import textwrap

import pytest

from jaxmap import roots
from jaxmap.indexing import discover, extract, parse, skim
from jaxmap.indexing.facts import Binds, FileFacts

CASES = {
    "top-level function": ("""
        def f(x):
            y = x + 1
            return y
        """, {"f"}),
    "methods, nested classes, decorators, async": ("""
        class A(Base):
          '''Doc.'''

          @staticmethod
          def m(x):
            return x

          class B:
            async def n(self):
              await self.x

        async def g():
            pass
        """, {"m", "n", "g"}),
    "imports joined by `;` to other statements": ("""
        def f(x):
            import os; from m import g as h; h(x)
            y = 1; import a.b as c  # c; d
            return c.f(y)
        """, {"f"}),
    "comment at column 0 inside a body": ("""
        def f():
            a = 1
        # a comment does not end a block
            return a

        def g():
            pass
        """, {"f", "g"}),
    "trailing comments as deep as the body belong to it": ("""
        class A:
          def m(self):
            with x:
              y = 1
            # counted in: as deep as the body

              # deeper, after a blank line: counted in too
           # shallower than the body: not counted
          def n(self):
            pass
        """, {"m", "n"}),
    "a last line left of the body's indentation is left to the parser": ("""
        def f():
            return g(
          1)
        """, set()),
    "short last line": ("""
        def f():
            return g(
                1,
            )
        x = 1
        """, {"f"}),
    "multi-line header": ("""
        def f(a: int,
              b: dict[str, int] = {}) -> tuple[
                  int, int]:
            return a, b
        """, {"f"}),
    "body at the end of a file without a newline": ("x = 1\ndef f():\n    return 1", {"f"}),
    "nested function: only the outer body": ("""
        def outer():
            def inner():
                return 1
            return inner
        """, {"outer"}),
    "docstring with lines at column 0 is left to the parser": ('''
        def f():
            """Text
        at column 0.
            """
            return 1

        def g():
            return 2
        ''', {"g"}),
    "bracket continued at column 0 is left to the parser": ("""
        def f():
            return g(
        1)

        def h():
            return 2
        """, {"h"}),
    "backslash continuation is left to the parser": ("""
        def f():
            x = 1 + \\
        2
            return x
        """, set()),
    "one-line bodies and headers with `#` in a string are left to the parser": ("""
        def f(): return 1
        def g(sep="#"):
            return sep
        class C: pass
        """, set()),
    "functions under `if` are not module-level scopes": ("""
        if True:
            def f():
                return 1
        """, set()),
    "a `def` inside a string is text": ('''
        """Example:

        def fake():
            body
        """

        SCRIPT = """
        def main():
            print(1)
        """

        def real():
            return 1
        ''', {"real"}),
    "a file that opens with a header": ("def f():\n    return 1\n", set()),
    "tab indentation": ("def f():\n\treturn 1\n", set()),
    "CR line endings": ("def f():\r\n    return 1\r\n", set()),
}


def _source(text: str) -> bytes:
    """A case's text, dedented after a first comment line (a file that opens with a
    `def` is not skimmed); a text that does not start on a new line is kept as is."""
    if not text.startswith("\n"):
        return text.encode()
    return ("# case" + textwrap.dedent(text)).encode()


@pytest.mark.parametrize("name", CASES)
def test_skimmed_bodies(name):
    text, expected = CASES[name]
    source = _source(text)
    bodies = skim.function_bodies(source)
    assert {body.name.decode() for body in bodies} == expected
    assert not parse.parse(source, bodies).root_node.has_error
    assert extract.extract(source, "m") == extract.extract(source, "m", full_parse=True)


def test_unread_body_keeps_its_binds():
    source = _source("""
        def _f_impl(x):
            return other_p.bind(x)
        """)
    facts = FileFacts.wrap(extract.extract(source, "m"))
    assert [event.name for event in facts.events if isinstance(event, Binds)] == ["other_p"]
    assert not facts.funcs["_f_impl"].walked


def test_unread_body_keeps_its_imports_joined_by_semicolons():
    source = _source(CASES["imports joined by `;` to other statements"][0])
    assert [(i.alias, i.target, i.line) for i in FileFacts.wrap(extract.extract(
        source, "m")).imports] == [("os", "os", 3), ("h", "m.g", 3), ("c", "a.b", 4)]


def test_installed_jax_gives_the_same_facts_skimmed_and_fully_parsed():
    root = roots.resolve_root(None)
    left_out = 0
    for source in discover.list_files(root).files:
        with open(f"{root}/{source.path}", "rb") as handle:
            data = handle.read()
        skimmed = extract.extract(data, source.module, source.is_package)
        assert skimmed == extract.extract(data, source.module, source.is_package,
                                          full_parse=True), source.path
        left_out += len(skim.function_bodies(data))
    assert left_out > 5000  # skimming really happened

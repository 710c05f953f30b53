"""What a parameter holds where it is used, read statement by statement
(jaxmap/flow/narrowing.py): the binding forms it follows and those it leaves unknown."""

import textwrap

import pytest

from jaxmap.flow.narrowing import NO_ARRAY, operand_values


def _held_at_last_use(body: str) -> str | None:
    """What `x` holds at its last use in `def f(x): BODY`, or None if not told."""
    text = "def f(x):\n" + textwrap.indent(textwrap.dedent(body), "  ")
    found = operand_values(text.encode(), frozenset({"x"}))
    return found[max(found)] if found and max(found)[0] == text.count("\n") else None


@pytest.mark.parametrize("body, held", [
    ("x = g(x)\nreturn x[0]", "g(x)"),
    ("x: T = g(x)\nreturn x[0]", "g(x)"),
    ("if isinstance(x, tuple):\n  return x[0]", NO_ARRAY),
    ("if not isinstance(x, (list, Sequence)):\n  pass\nelse:\n  return x[0]", NO_ARRAY),
    ("if isinstance(x, jax.Array):\n  raise E\nreturn x[0]", NO_ARRAY),
    ("x = g(x)\nif c:\n  pass\nreturn x[0]", "g(x)"),
    ("x = g(x)\nfor i in y:\n  print(i)\nreturn x[0]", "g(x)"),
    ("if isinstance(x, tuple) and c:\n  return x[0]", NO_ARRAY),
    ("if c or not isinstance(x, list):\n  return 1\nreturn x[0]", NO_ARRAY),
    ("return isinstance(x, int) and c and x <= 3", NO_ARRAY),  # an `and` after the test
    ("return not isinstance(x, int) or x <= 3", NO_ARRAY),
    ("return x[0] if isinstance(x, tuple) else 0", NO_ARRAY),
    ("return 0 if not isinstance(x, list) else x[0]", NO_ARRAY),
    ("x = g(x)\nreturn c and x[0]", "g(x)"),
])
def test_what_a_parameter_holds_is_told(body, held):
    assert _held_at_last_use(body) == held


@pytest.mark.parametrize("body", [
    "return x[0]",  # the parameter's own value
    "if c:\n  x = g(x)\nreturn x[0]",
    "x = g(x)\nif c:\n  x = h(x)\nreturn x[0]",
    "x = g(x)\nwhile c:\n  x = h(x)\nreturn x[0]",
    "x = g(x)\nx, y = h(x)\nreturn x[0]",
    "x = g(x)\nx += 1\nreturn x[0]",
    "x = g(x)\nwith h() as x:\n  pass\nreturn x[0]",
    "x = g(x)\nif (x := h()):\n  pass\nreturn x[0]",
    "x = g(x)\ntry:\n  x = h()\nexcept E:\n  pass\nreturn x[0]",
    "x = g(x)\nfor x in y:\n  pass\nreturn x[0]",
    "x = g(x)\nimport x\nreturn x[0]",
    "x = g(x)\ndef x():\n  pass\nreturn x[0]",
    "x = g(x)\nmatch y:\n  case [x]:\n    pass\nreturn x[0]",
    "x = g(x)\nreturn lambda x: x[0]",  # the lambda's own x
    "x = g(x)\nreturn (x[0] for _ in y)",  # a generator runs later
    "if isinstance(x, (tuple, Array)):\n  return x[0]",  # maybe an Array
    "if isinstance(x, tuple) or c:\n  return x[0]",  # either may be true
    "return isinstance(x, int) or x <= 3",  # x <= 3 only where x is no int
    "return x <= 3 and isinstance(x, int)",  # the test comes after
    "return 0 if isinstance(x, tuple) else x[0]",
    "if isinstance(x, np.ndarray):\n  return 1\nreturn x[0]",  # a jax Array is none
    "x = g(x)\ny = ((x := h(x)), x[0])",  # a use after `:=` in the statement
    "x = g(x)\nif (x := h(x)) and x[0]:\n  pass",
    "x = g(x)\ndef inner():\n  nonlocal x\n  x = h()\ninner()\nreturn x[0]",
    "with suppress(E):\n  if isinstance(x, Array):\n    raise E\nreturn x[0]",
])
def test_what_a_parameter_holds_is_unknown_where_the_reading_cannot_tell(body):
    assert _held_at_last_use(body) is None


def test_a_method_indented_in_its_class_is_read():
    text = b"    def f(self, x):\n        x = g(x)\n        return x[0]\n"
    assert operand_values(text, frozenset({"x"})) == {(2, 15): "g(x)"}

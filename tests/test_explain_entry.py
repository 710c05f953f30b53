"""explain names the public JAX function the user called (from the traceback's frames,
or, where JAX removed them, the user's line) and puts the raise sites it reaches
first, on a small tree of its own: two helpers raise one class with one wording;
`zeros` reaches only the second, which source order would put last."""

from __future__ import annotations

import json

import pytest
from inline import indexed_tree

from jaxmap.commands import explain
from jaxmap.render import explain_text
from jaxmap.render import json as render_json
from jaxmap.render.view import View

_FILES = {
    "jax/_src/errors.py": '''
        class ConcretizationTypeError(TypeError):
          def __init__(self, tracer, context=""):
            super().__init__("Abstract tracer value encountered where concrete value is "
                             f"expected: {tracer}\\n{context}\\n")
        ''',
    "jax/_src/core.py": '''
        from jax._src.errors import ConcretizationTypeError


        def concrete_or_error(val, context=""):
          raise ConcretizationTypeError(val, context)


        def concrete_dim_or_error(val):
          raise ConcretizationTypeError(val)
        ''',
    "jax/_src/numpy/lax_numpy.py": '''
        from jax._src import core


        def _check_shape(shape):
          return core.concrete_dim_or_error(shape)


        def zeros(shape):
          return _check_shape(shape)


        def arange(stop):
          return core.concrete_or_error(stop)
        ''',
    "jax/_src/api.py": '''
        def jit(fun):
          return fun


        def typeof(x):
          return x
        ''',
    "jax/__init__.py": "from jax._src.api import jit as jit\nfrom jax._src.api import typeof as typeof\n",
    "jax/numpy/__init__.py": '''
        from jax._src.numpy.lax_numpy import arange as arange
        from jax._src.numpy.lax_numpy import zeros as zeros
        ''',
}
_MESSAGE = ("jax.errors.ConcretizationTypeError: Abstract tracer value encountered where "
            "concrete value is expected: traced array with shape int32[]\n")
_NOTE = ("--------------------\nFor simplicity, JAX has removed its internal frames from "
         "the traceback of the following exception.\n")
_USER = ('Traceback (most recent call last):\n'
         '  File "/home/me/train.py", line 9, in <module>\n'
         '    f(3)\n'
         '  File "/home/me/train.py", line 6, in f\n'
         '    return jnp.zeros(n) + 1\n')
_JAX = ('  File "/env/site-packages/jax/_src/numpy/lax_numpy.py", line 10, in zeros\n'
        '    return _check_shape(shape)\n'
        '  File "/env/site-packages/jax/_src/numpy/lax_numpy.py", line 6, in _check_shape\n'
        '    return core.concrete_dim_or_error(shape)\n'
        '  File "/env/site-packages/jax/_src/core.py", line 10, in concrete_dim_or_error\n'
        '    raise ConcretizationTypeError(val)\n')


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    files = {**_FILES, "jax/_src/__init__.py": "",
             "jax/_src/numpy/__init__.py": "", "jax/version.py": '_version = "0.9.0"\n'}
    found = indexed_tree(tmp_path_factory, files)
    yield found
    found.close()


@pytest.mark.parametrize(("paste", "shown"), [
    (_USER + _JAX + _MESSAGE, True),  # its frame shown
    (_USER + _MESSAGE + _NOTE, False),  # JAX removed its frames: read off the user's line
])
def test_the_user_s_call_is_named_and_its_raise_comes_first(index, paste, shown):
    found = explain.explain(index, paste)
    entry = found.entry
    assert (entry.spelled, entry.public, entry.shown) == ("jnp.zeros", "jax.numpy.zeros",
                                                          shown)
    assert (entry.called_at.path, entry.called_at.line) == ("/home/me/train.py", 6)
    assert [s.function.rpartition(".")[2] for s in found.raised_by][:2] == [
        "concrete_dim_or_error", "concrete_or_error"]
    assert found.on_path == 1
    lines = explain_text.explanation((found,), View("")).splitlines()
    assert lines[1].split()[:3] == ["raised", "from", "jnp.zeros(...):"]
    assert "its argument must be concrete" in lines[1]
    assert "(on jnp.zeros's path)" in next(line for line in lines if "raised by" in line)
    document = json.loads(render_json.explanation_document((found,), View("")))
    assert document["entry"]["public"] == "jax.numpy.zeros"


def test_a_line_with_two_jax_calls_names_none(index):
    paste = _USER.replace("jnp.zeros(n) + 1", "jnp.zeros(n) + jnp.arange(n)") + \
        _MESSAGE + _NOTE
    assert explain.explain(index, paste).entry is None


def test_a_transformation_of_the_user_s_function_is_not_the_call(index):
    paste = _USER.replace("jnp.zeros(n) + 1", "jax.jit(lambda n: int(n))(3)") + \
        _MESSAGE + _NOTE
    found = explain.explain(index, paste)
    assert found.entry is None and found.on_path == 0


def test_a_call_of_the_user_s_line_that_reaches_no_raise_is_not_named(index):
    paste = _USER.replace("jnp.zeros(n) + 1", "jnp.arange(n) + 1") + _MESSAGE + _NOTE
    assert explain.explain(index, paste).entry.spelled == "jnp.arange"
    unrelated = _USER.replace("jnp.zeros(n) + 1", "jax.typeof(n)") + _MESSAGE + _NOTE
    assert explain.explain(index, unrelated).entry is None


def test_no_user_frame_names_no_call(index):
    assert explain.explain(index, _MESSAGE).entry is None


def test_a_call_the_message_does_not_name_is_not_the_call(index):
    # `jax.jit(lambda n: int(n))(jnp.zeros(3))`: JAX's message names `int`, so the
    # error is the conversion's, not that of the line's one JAX call.
    line = "jax.jit(lambda n: int(n))(jnp.zeros(3))"
    named = _MESSAGE.rstrip("\n") + "\nThe problem arose with the `int` function.\n"
    paste = _USER.replace("jnp.zeros(n) + 1", line)
    found = explain.explain(index, paste + named + _NOTE)
    assert found.entry is None and found.on_path == 0
    assert explain.explain(index, paste + _MESSAGE + _NOTE).entry.spelled == "jnp.zeros"

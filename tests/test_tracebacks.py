"""Reading a pasted traceback: its chain of exceptions, each one's class, message and
frames, and JAX's note on the frames it removed."""

from __future__ import annotations

import textwrap

import pytest

from jaxmap.commands.tracebacks import read

_NOTE = ("--------------------\nFor simplicity, JAX has removed its internal frames from the "
         "traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to include "
         "these.\n")


def test_the_message_of_a_traceback_is_its_last_exception_line():
    traceback = textwrap.dedent("""\
        Traceback (most recent call last):
          File "p.py", line 3, in <module>
            lax.add(x, y)
          File "/site-packages/jax/_src/lax/lax.py", line 126, in _try_broadcast_shapes
            raise TypeError(f'{name} got incompatible shapes')
        TypeError: add got incompatible shapes for broadcasting: (2,), (3,).
        """)
    [raised] = read(traceback)
    assert raised.exception == "TypeError" and not raised.filtered
    assert raised.message == "add got incompatible shapes for broadcasting: (2,), (3,)."
    assert [f.jax_file for f in raised.frames] == [None, "jax/_src/lax/lax.py"]
    assert raised.frames[0].code == "lax.add(x, y)"
    [alone] = read("just a message")
    assert (alone.exception, alone.message, alone.traceback) == (None, "just a message", False)


def test_a_message_alone_names_its_class_only_when_it_reads_like_one():
    assert read("TypeError: bad")[0][:2] == ("TypeError", "bad")
    assert read("jax.errors.ConcretizationTypeError: x")[0][:2] == (
        "jax.errors.ConcretizationTypeError", "x")
    assert read("Resource axis: j is not found")[0][:2] == (None, "Resource axis: j is not found")


def test_the_note_jax_adds_to_a_filtered_traceback_is_not_the_message():
    traceback = textwrap.dedent("""\
        Traceback (most recent call last):
          File "p.py", line 2, in <module>
            jax.vmap(f)(x, y)
        ValueError: vmap got inconsistent sizes for array axes to be mapped:
          * one axis had size 3: axis 0 of argument a of type float32[3];
        """) + _NOTE
    [raised] = read(traceback)
    assert raised.message.startswith("vmap got") and "JAX_TRACEBACK" not in raised.message
    assert raised.filtered and raised.traceback and not raised.jax_frames
    divided = "Encountered an unexpected tracer.\n" + "-" * 30 + "\nThe leaked value"
    assert read(divided)[0].message == divided  # a message's own divider stays


def test_a_chain_is_read_root_cause_first():
    traceback = textwrap.dedent("""\
        Traceback (most recent call last):
          File "p.py", line 2, in <module>
            jax.jit(f)(1.0)
        jax.errors.ConcretizationTypeError: Abstract tracer value encountered
        """) + _NOTE + textwrap.dedent("""\

        The above exception was the direct cause of the following exception:

        Traceback (most recent call last):
          File "p.py", line 4, in <module>
            raise RuntimeError("step") from e
        RuntimeError: step

        During handling of the above exception, another exception occurred:

        Traceback (most recent call last):
          File "p.py", line 6, in <module>
            {}["k"]
        KeyError: 'k'
        """)
    chain = read(traceback)
    assert [r.exception for r in chain] == ["jax.errors.ConcretizationTypeError",
                                            "RuntimeError", "KeyError"]
    assert [r.filtered for r in chain] == [True, False, False]
    assert chain[2].message == "'k'"


@pytest.mark.parametrize(("first_file", "separator", "read_as"), [
    ("/env/site-packages/jax/_src/interpreters/ad.py",
     "During handling of the above exception, another exception occurred:",
     ["NotImplementedError"]),  # JAX's own lookup, replaced by the error it means
    ("/home/me/mine.py", "During handling of the above exception, another exception "
     "occurred:", ["KeyError", "NotImplementedError"]),  # the user's lookup: kept
    ("/env/site-packages/jax/_src/interpreters/ad.py",
     "The above exception was the direct cause of the following exception:",
     ["NotImplementedError"]),  # raised from it (jax 0.10): the same, said twice
])
def test_a_lookup_jax_handled_by_raising_what_it_means_is_left_out(first_file, separator,
                                                                  read_as):
    traceback = textwrap.dedent(f"""\
        Traceback (most recent call last):
          File "{first_file}", line 351, in get_primitive_transpose
            return primitive_transposes[p]
        KeyError: my_prim

        {separator}

        Traceback (most recent call last):
          File "/home/me/t.py", line 20, in <module>
            jax.grad(f)(1.0)
          File "/env/site-packages/jax/_src/interpreters/ad.py", line 354, in get_primitive_transpose
            raise NotImplementedError(
        NotImplementedError: Transpose rule (for reverse-mode differentiation) for 'my_prim' not implemented
        """)
    assert [r.exception for r in read(traceback)] == read_as


def test_a_traceback_a_message_carries_is_the_message_s_not_the_exception_s_frames():
    traceback = textwrap.dedent("""\
        Traceback (most recent call last):
          File "p.py", line 4, in <module>
            jax.jit(f)(x)
        jax.errors.JaxRuntimeError: INTERNAL: callback error: Traceback (most recent call last):
          File "p.py", line 4, in <module>
          File "/site-packages/jax/_src/interpreters/pxla.py", line 388, in __call__
          File "/site-packages/jax/_src/callback.py", line 825, in _wrapped_callback
        RuntimeError: Incorrect output shape
        """) + _NOTE
    [raised] = read(traceback)
    assert raised.exception == "jax.errors.JaxRuntimeError" and raised.filtered
    assert [f.path for f in raised.frames] == ["p.py"]
    assert raised.message.endswith("RuntimeError: Incorrect output shape")
    [carried] = raised.carried
    assert (carried.exception, carried.message) == ("RuntimeError", "Incorrect output shape")
    assert [f.jax_file for f in carried.frames] == [
        None, "jax/_src/interpreters/pxla.py", "jax/_src/callback.py"]
    assert read("TypeError: bad")[0].carried == ()

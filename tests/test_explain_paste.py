"""explain on pastes as users paste them (tests/fixtures/pastes/, written for these
tests): pytest's report of three failures, a log with a warning's traceback before
the error, an ANSI-coloured IPython traceback, a message whose filtering note is
missing, a callback that raised, a chained custom_vjp error, jax 0.10.2's own
traceback of `jnp.arange` on a traced value under jit, a primitive without a lowering
under `jax.jit(f)`. Each is cut into its tracebacks, each JAX one placed in JAX and
pointed back at the user's line and the transformations it called."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jaxmap.commands import explain, explain_paste
from jaxmap.commands.explain import Status
from jaxmap.commands.explain_user import BRANCH, CALLBACK
from jaxmap.commands.registry import BY_NAME
from jaxmap.dispatch import answer

PASTES = Path(__file__).parent / "fixtures" / "pastes"


def _paste(name: str) -> str:
    return (PASTES / f"{name}.txt").read_text()


def _explained(index, name: str):
    return explain.explain_all(index, _paste(name))


# -- cutting a paste (no index) ------------------------------------------------------------
@pytest.mark.parametrize(("name", "classes"), [
    ("pytest_three_failures", ["PytestDeprecationWarning", "json.decoder.JSONDecodeError",
                               "AssertionError", "jax.errors.ConcretizationTypeError"]),
    ("log_warning_then_error", ["FileNotFoundError", "TypeError"]),
    ("callback_raises", ["ValueError", "jax.errors.JaxRuntimeError"]),
    ("chained_custom_vjp", ["ValueError"]),
    ("ipython_ansi", ["TypeError"]),
    ("no_note", ["TypeError"]),
])
def test_a_paste_is_cut_into_its_tracebacks(name, classes):
    from jaxmap.commands import tracebacks

    segments = explain_paste.segments(_paste(name))
    assert [tracebacks.read(s.text)[-1].exception for s in segments] == classes


def test_pytest_failures_keep_their_test_names_and_user_lines():
    segments = explain_paste.segments(_paste("pytest_three_failures"))
    assert [s.label for s in segments] == [None, "test_config", "test_shapes", "test_step"]
    assert 'File "test_three.py", line 15, in test_step' in segments[-1].text
    assert "\nE " not in segments[-1].text and "\n>" not in segments[-1].text


def test_colours_and_ipython_frames_become_pythons_traceback():
    [segment] = explain_paste.segments(_paste("ipython_ansi"))
    assert "\x1b" not in segment.text and "skipping hidden" not in segment.text
    assert segment.text.startswith('Traceback (most recent call last):\n'
                                   '  File "<cell In[4]>", line 6, in <module>\n'
                                   '    jax.grad(loss)(jnp.ones(3))\n')


@pytest.mark.parametrize(("text", "release"), [
    ("jax.__version__ = '0.4.38'\nTypeError: x", "0.4.38"),
    ("jax:    0.6.2\njaxlib: 0.6.2\nnumpy:  2.0.0", "0.6.2"),
    ("pip install jax==0.4.38", "0.4.38"),
    ('  File "/env/jax-0.4.38/jax/_src/api.py", line 3, in f', "0.4.38"),
    ("jaxlib==0.4.38 only", None),
])
def test_the_release_a_paste_names(text, release):
    assert explain_paste.release(text) == release


# -- explaining them (the installed jax) -----------------------------------------------------
def test_pytest_output_with_three_failures_explains_the_jax_one(installed_index):
    answers = _explained(installed_index, "pytest_three_failures")
    assert [a.status for a in answers] == [Status.NOT_JAX] * 3 + [Status.MATCHED]
    assert "raised by the user's own code (test_three.py:11)" == answers[2].why_not_jax
    step = answers[-1]
    assert step.label == "test_step" and step.user.line == 15
    assert step.raised_by[0].function.endswith("concretization_function_error")
    assert step.fix.name == "concrete value needed"


def test_a_callback_that_raised_is_the_root_cause(installed_index):
    answers = _explained(installed_index, "callback_raises")
    logged, carried, runtime = answers
    for own in (logged, carried):
        assert own.status == Status.USER_CODE and own.exception == "ValueError"
        assert (own.called.frame.function, own.called.frame.line) == ("host", 3)
        assert own.called.via == CALLBACK and own.called.raised
        assert own.called.route[-1].jax_file == "jax/_src/callback.py"
        assert own.fix.name == "callback raised"
    assert runtime.status == Status.RUNTIME and runtime.user.code == "jax.jit(f)(jnp.ones(3))"


def test_a_message_without_its_note_is_still_jaxs(installed_index):
    [found] = _explained(installed_index, "no_note")
    assert found.status == Status.MATCHED
    assert found.sites[0].function.endswith("_compute_newshape")
    assert (found.user.function, found.user.line) == ("branch", 3)
    assert found.called.via == BRANCH and not found.called.route


def test_jnp_arange_of_a_traced_value_under_jit_names_the_user_s_call(installed_index):
    """jax 0.10.2's own traceback (its default filtering) of `jnp.arange(n)` in a jitted
    function: the answer starts from jnp.arange, and the raise it reaches comes first."""
    from jaxmap.render import explain_text
    from jaxmap.render.view import View

    [found] = _explained(installed_index, "jit_arange_traced")
    assert found.status == Status.MATCHED and found.fix.name == "concrete value needed"
    entry = found.entry
    assert (entry.spelled, entry.public, entry.shown) == ("jnp.arange", "jax.numpy.arange",
                                                          True)
    assert entry.file == "jax/_src/numpy/lax_numpy.py"
    assert (entry.called_at.path, entry.called_at.line) == ("/home/me/project/arange.py", 6)
    assert found.raised_by[0].function.endswith(".concrete_or_error")
    assert 1 <= found.on_path < len(found.raised_by)
    lines = explain_text.explanation((found,), View("")).splitlines()
    assert lines[1].startswith("  raised from    jnp.arange(...): its argument must be "
                               "concrete")


def test_an_ansi_coloured_ipython_traceback(installed_index):
    [found] = _explained(installed_index, "ipython_ansi")
    assert found.status == Status.MATCHED and found.sites[0].function.endswith("_check_scalar")
    assert found.user.path == "<cell In[4]>" and found.user.line == 6
    assert found.fix.name == "gradient of a non-scalar"


def test_a_log_with_a_warning_traceback_before_the_error(installed_index):
    warning, error = _explained(installed_index, "log_warning_then_error")
    assert warning.status == Status.NOT_JAX and warning.segment == 1
    assert error.status == Status.MATCHED and error.segment == 2
    assert error.user.code == "grads = jax.grad(loss)(params, batch)"


def test_a_chain_is_read_to_its_root(installed_index):
    [found] = _explained(installed_index, "chained_custom_vjp")
    assert found.sites[0].function.endswith("tensor_contractions.matmul")
    assert found.user.function == "f_bwd" and found.called.frame.function == "f_bwd"


def test_text_heads_each_traceback_and_says_why_the_others_are_not_jaxs(installed_index):
    text = answer(BY_NAME["explain"], installed_index, {"text": _paste("pytest_three_failures")},
                  "text")
    lines = text.split("\n")
    assert lines[0].startswith("== traceback 1 of 4: not from JAX: PytestDeprecationWarning")
    assert "== traceback 4 of 4 (test_step) ==" in lines
    assert any(line.startswith("  your line      test_three.py:15") for line in lines)
    assert any(line.startswith("  usually fixes  JAX needed a concrete value") for line in lines)


def test_json_carries_segments_user_frame_fix_and_route(installed_index):
    document = json.loads(answer(BY_NAME["explain"], installed_index,
                                 {"text": _paste("callback_raises")}, "json"))
    assert document["tracebacks"] == 2
    first = document["exceptions"][0]
    assert set(first) == {  # as the README's schema lists them
        "segment", "label", "wording", "ran", "why_not_jax", "user_frame", "called_by_jax",
        "transformed", "fix", "status", "exception", "message", "sites", "raised_by", "missing_rule",
        "not_linear", "has_rule", "older", "closest", "entry"}
    assert first["status"] == "user-code" and first["segment"] == 1
    assert first["called_by_jax"]["function"] == "host"
    assert first["called_by_jax"]["route"][-1]["file"] == "jax/_src/callback.py"
    assert first["fix"]["family"] == "callback raised"
    assert document["exceptions"][-1]["user_frame"]["line"] == 6


def test_ipython_7_frames_take_their_line_from_the_arrow():
    text = ("TypeError                                 Traceback (most recent call last)\n"
            "<ipython-input-3-5f2c> in <module>\n"
            "      1 x = jnp.ones(3)\n"
            "----> 2 jax.grad(f)(x)\n"
            "\n"
            "TypeError: Gradient only defined for scalar-output functions. Output had shape: (3,).")
    [segment] = explain_paste.segments(text)
    assert '  File "<ipython-input-3-5f2c>", line 2, in <module>\n    jax.grad(f)(x)\n' \
        in segment.text


def test_a_colab_cells_linked_frame_is_the_cells_top_level():
    text = ("TypeError                                 Traceback (most recent call last)\n"
            "[<ipython-input-3-c1e8>](https://localhost:8080/#) in <cell line: 21>()\n"
            "---> 21 loss_and_grad_fn(x)\n"
            "\n"
            "TypeError: Gradient only defined for scalar-output functions. Output had shape: (2, 2).")
    [segment] = explain_paste.segments(text)
    assert '  File "<ipython-input-3-c1e8>", line 21, in <module>\n    loss_and_grad_fn(x)\n' \
        in segment.text
    [cut] = explain_paste.segments(text.replace("[<ipython-input-3-c1e8>](https://localhost:8080/#) ",
                                                ""))
    assert '  File "<ipython-input>", line 21, in <module>\n' in cut.text


# -- releases, and what usually fixes it -----------------------------------------------------
def test_a_paste_that_names_its_release_is_matched_against_that_wording(installed_index):
    text = ("jax:    0.6.2\njaxlib: 0.6.2\n\nTraceback (most recent call last):\n"
            '  File "/home/me/proj/train.py", line 31, in <module>\n'
            "    state = step(state, batch)\n"
            "TypeError: dynamic_slice start_indices must have length equal to the number of "
            "dimensions of the operand, got indices (0, 0) for operand shape (3,).\n")
    [found] = explain.explain_all(installed_index, text)
    assert found.status == Status.OLDER and found.wording == found.ran == "0.6.2"
    assert found.older.site.function.endswith("_dynamic_slice_shape_rule")
    same = ("jax:    0.4.38\nTypeError: Gradient only defined for scalar-output functions. "
            "Output had shape: (3,).")
    [found] = explain.explain_all(installed_index, same)  # worded alike since: today's site
    assert found.status == Status.MATCHED and (found.wording, found.ran) == ("0.10.2", "0.4.38")


def test_the_release_whose_raise_site_is_a_pasted_frame_is_chosen(installed_index):
    """0.4.38 and 0.6.2 word it alike; the frame is 0.4.38's raise (lax_numpy.py)."""
    text = ("Traceback (most recent call last):\n"
            '  File "/env/site-packages/jax/_src/numpy/lax_numpy.py", line 9152, in matmul\n'
            "ValueError: Incompatible shapes for matmul arguments: (2, 3) and (4, 5)\n")
    [found] = explain.explain_all(installed_index, text)
    assert found.wording == "0.4.38" and found.older.site.file.endswith("lax_numpy.py")


def test_a_frame_of_another_release_moves_to_the_line_holding_its_source(installed_index):
    from jaxmap.commands import explain_releases
    from jaxmap.commands.tracebacks import Frame

    code = 'raise TypeError(msg(f"had shape: {aval.shape}"))'
    moved = Frame("/env/site-packages/jax/_src/api.py", 540, "_check_scalar", code)
    line = explain_releases.settled(installed_index.root, moved)
    assert line != 540
    source = (Path(installed_index.root) / "jax/_src/api.py").read_text().split("\n")
    assert source[line - 1].strip() == code
    assert explain_releases.settled(installed_index.root, moved._replace(code="")) == 540


@pytest.mark.parametrize(("exception", "message", "family"), [
    ("TracerBoolConversionError", "Attempted boolean conversion of traced array",
     "tracer used as a Python bool"),
    ("TypeError", "Gradient only defined for scalar-output functions. Output had shape: (3,).",
     "gradient of a non-scalar"),
    ("NotImplementedError", "Differentiation rule for 'frob' not implemented",
     "missing rule"),
    ("UnexpectedTracerError", "Encountered an unexpected tracer.",
     "tracer leaked from a transform"),
    ("JaxRuntimeError", "INTERNAL: CpuCallback error calling callback: Traceback",
     "callback raised"),
    ("TypeError", "add got incompatible shapes for broadcasting: (3,), (4,).",
     "shapes do not match"),
    ("ShardingTypeError", "dot_general requires lhs batch dimensions and rhs batch "
     "dimensions to have the consistent sharding, got P('x') and P('y').",
     "shardings do not agree"),
    ("ShardingTypeError", "Contracting dimensions are sharded and it is ambiguous how the "
     "output should be sharded. Please specify the output sharding via the `out_sharding` "
     "parameter.", "shardings do not agree"),
    ("TypeError", "can't apply forward-mode autodiff (jvp) to a custom_vjp function.",
     "forward mode of a custom_vjp"),
    ("NotImplementedError", "vmap is only supported for the pure_callback primitive when "
     "vmap_method is one of 'sequential', 'expand_dims'. Got vmap_method=None.",
     "callback under vmap"),
    ("ValueError", "my own words", None),
])
def test_each_message_family_has_its_fix(exception, message, family):
    from jaxmap.knowledge import fixes

    found = fixes.family(exception, message)
    assert (found.name if found else None) == family
    assert found is None or len(found.fix) > 40


def test_before_python_311_each_filtered_traceback_starts_with_jaxs_note():
    from jaxmap.commands import tracebacks

    segments = explain_paste.segments(_paste("python310_two_filtered"))
    assert [[r.exception for r in tracebacks.read(s.text)] for s in segments] == [
        ["jax.errors.SimplifiedTraceback", "jax.errors.TracerBoolConversionError"],
        ["jax.errors.SimplifiedTraceback", "TypeError"]]


def test_pytests_native_tracebacks_keep_their_test_names():
    native = ("=================================== FAILURES ===================================\n"
              "_________________________________ test_step __________________________________\n"
              "Traceback (most recent call last):\n"
              '  File "/home/me/proj/test_a.py", line 5, in test_step\n'
              "    jax.grad(f)(x)\n"
              "TypeError: Gradient only defined for scalar-output functions. Output had "
              "shape: (3,).\n")
    [segment] = explain_paste.segments(native)
    assert segment.label == "test_step" and segment.text.startswith("Traceback")


# -- what issue threads paste ----------------------------------------------------------------
def test_a_paste_cut_at_jaxs_unfiltered_copy_is_read_as_the_exception_it_copies():
    from jaxmap.commands import tracebacks

    [raised] = tracebacks.read('  File ".../jax/_src/api.py", line 1499, in _mapped_axis_size\n'
                               "    assert treedef_is_leaf(leaf)\n"
                               "jax._src.traceback_util.UnfilteredStackTrace: TypeError: bad\n")
    assert (raised.exception, raised.message) == ("TypeError", "bad")
    assert raised.frames[0].jax_file == "jax/_src/api.py"


def test_an_exception_whose_class_line_was_cut_is_the_one_jaxs_copy_above_holds():
    """Chained after JAX's copy ('the original exception, unmodified'), the filtered
    exception's own class line cut from the paste: it is the copy's."""
    from jaxmap.commands import tracebacks

    copy, raised = tracebacks.read(
        "UnfilteredStackTrace: jax.errors.TracerBoolConversionError: Attempted boolean "
        "conversion of a traced array\n\n"
        "The above exception was the direct cause of the following exception:\n\n"
        "Traceback (most recent call last):\n"
        '  File "/home/me/loop.py", line 8, in step\n'
        "    if x > 0:\n")
    assert copy.exception == "UnfilteredStackTrace"
    assert (raised.exception, raised.message) == (
        "jax.errors.TracerBoolConversionError", "Attempted boolean conversion of a traced array")
    assert raised.frames[0].path == "/home/me/loop.py"


def test_a_paste_cut_at_jax_0_2s_filtered_copy_is_read_without_its_note(installed_index):
    text = ("FilteredStackTrace                        Traceback (most recent call last)\n"
            "<ipython-input-10-7433> in <module>()\n"
            "----> 4 jax.grad(loss_with_aux)(x, y)\n\n"
            "FilteredStackTrace: TypeError: Gradient only defined for scalar-output functions."
            " Output was (1.0, 2.0).\n\n"
            "The stack trace above excludes JAX-internal frames.\n")
    [found] = explain.explain_all(installed_index, text)
    assert (found.exception, found.status) == ("TypeError", Status.MATCHED)
    assert found.sites[0].function.endswith("_check_scalar")


def test_a_traceback_quoted_in_markdown_is_read_without_its_markers(installed_index):
    text = ("> Traceback (most recent call last):\n"
            '>   File "/home/me/grad_complex.py", line 66, in <module>\n'
            ">     jax.jit(f)(x)\n"
            ">\n"
            "> TypeError: Shapes must be 1D sequences of concrete values of integer type,"
            " got ((3,), (3, 3)).\n")
    [found] = explain.explain_all(installed_index, text)
    assert found.status == Status.MATCHED
    assert (found.user.path, found.user.code) == ("/home/me/grad_complex.py", "jax.jit(f)(x)")


def test_words_before_a_pasted_message_are_left_out():
    [segment] = explain_paste.segments("Fails with:\nValueError: vmap got inconsistent sizes")
    assert segment.text == "ValueError: vmap got inconsistent sizes"


def test_a_checkouts_path_is_read_from_its_package():
    from jaxmap.commands.tracebacks import Frame

    frame = Frame("/home/me/packages/jax/jax/_src/core.py", 2024, "canonicalize_shape", "")
    assert frame.jax_file == "jax/_src/core.py"
    assert Frame("/home/me/packages/jax/repro.py", 16, "<module>", "").jax_file is None
    assert Frame("/venv/site-packages/jax/__init__.py", 37, "<module>", "").jax_file == \
        "jax/__init__.py"


def test_a_message_under_a_checkouts_own_script_is_placed_by_its_wording(installed_index):
    text = ('Traceback (most recent call last):\n'
            '  File "/home/me/packages/jax/repro.py", line 16, in <module>\n'
            '    jax.grad(f)(3.14)\n'
            'TypeError: Gradient only defined for scalar-output functions. Output had shape: (2,).\n')
    [answer] = explain.explain_all(installed_index, text)
    assert answer.status == Status.MATCHED
    assert {site.function.rpartition(".")[2] for site in answer.sites} == {"_check_scalar"}


def test_what_python_raised_on_a_jax_line_is_placed_there_not_at_a_lookalike(installed_index):
    """`x.shape` of an int, on a line of JAX's: Python's AttributeError, not one of the
    catalogue's `... object has no attribute ...` raises."""
    [found] = _explained(installed_index, "ipython7_python_raised")
    assert found.status == Status.FRAME
    assert (found.sites[0].file, found.sites[0].function) == ("jax/api.py", "<listcomp>")


def test_a_paste_cut_above_the_raise_keeps_jaxs_own_wording(installed_index):
    """The last frame shown calls on (einsum); the message, whole and JAX's alone, is
    placed at its raise, not on that line."""
    text = ('Traceback (most recent call last):\n'
            '  File "/venv/lib/python3.6/site-packages/jax/numpy/lax_numpy.py", line 2344, in einsum\n'
            '    return _einsum(operands, contractions, precision)\n'
            'TypeError: dot_general requires lhs batch dimensions and rhs batch dimensions to have'
            ' the same shape, got [2 4] and [2 1].\n')
    [found] = explain.explain_all(installed_index, text)
    assert found.status == Status.MATCHED
    assert found.sites[0].function.endswith("_dot_general_shape_rule")


def test_a_paste_of_many_tracebacks_is_answered_within_its_size():
    """MCP answers with the JSON document: 40 tracebacks, each raised at 30 places,
    keep their first answers whole and the rest short, under 30,000 characters."""
    from jaxmap.commands.explain import Explanation, Site
    from jaxmap.render import json as render_json
    from jaxmap.render.view import View

    sites = tuple(Site(f"jax/_src/m{i}.py", i, f"jax._src.m{i}.f", "TypeError")
                  for i in range(30))
    answers = [Explanation("cannot do that " * 10, sites[:1], None, raised_by=sites,
                           exception="TypeError", segment=n) for n in range(1, 41)]
    document = json.loads(render_json.explanation_document(answers, View("/r")))
    records = document["exceptions"]
    assert len(json.dumps(document, indent=1)) <= 30_000 and len(records) == 40
    assert not records[0].get("short") and records[-1]["short"]
    assert records[-1]["segment"] == 40 and records[-1]["at"] == "jax/_src/m0.py:0"


def test_warnings_in_pytests_summary_are_read_and_its_captures_keep_the_test_name():
    text = ("=================================== FAILURES ===================================\n"
            "_________________________________ test_a __________________________________\n"
            "E   TypeError: bad\n"
            "t.py:3: TypeError\n"
            "------------------------------ Captured log call -------------------------------\n"
            "ERROR    x:t.py:2 one\n"
            "----------------------------- Captured stderr call -----------------------------\n"
            "Traceback (most recent call last):\n"
            '  File "t.py", line 2, in test_a\n'
            "KeyError: 'k'\n"
            "=============================== warnings summary ===============================\n"
            "t.py::test_a\n"
            "  /env/site-packages/jax/_src/dtypes.py:9: UserWarning: Explicitly requested dtype\n"
            "    warnings.warn(msg)\n")
    labels = [(s.label, s.text.split("\n")[-1]) for s in explain_paste.segments(text)]
    assert labels == [("test_a", "TypeError: bad"),
                      ("test_a: Captured stderr call", "KeyError: 'k'"),
                      (None, "UserWarning: Explicitly requested dtype")]


# -- the transformations the user called (JAX removes its frames, keeps the user's) ---------
def _transformed(text: str):
    from jaxmap.commands import explain_user, tracebacks

    [raised] = tracebacks.read(text)
    return [(t.names, t.at.line) for t in explain_user.transformed(raised.frames)]


def _traceback(*frames: tuple[str, int, str, str]) -> str:
    lines = ["Traceback (most recent call last):"]
    for file, line, function, code in frames:
        lines += [f'  File "/home/me/{file}", line {line}, in {function}', f"    {code}"]
    return "\n".join([*lines, "NotImplementedError: Batching rule for 'blur' not implemented"])


@pytest.mark.parametrize(("frames", "expected"), [
    # a lambda the line defines and hands to vmap
    ((("run.py", 4, "<module>", "ys = jax.vmap(lambda x: blur(x) * 2)(xs)"),
      ("run.py", 4, "<lambda>", "ys = jax.vmap(lambda x: blur(x) * 2)(xs)"),
      ("ops.py", 7, "blur", "return blur_p.bind(x)")), [(("jax.vmap",), 4)]),
    # a function named, not called; the helper it calls is called, not handed
    ((("run.py", 9, "<module>", "g = grad(loss)(params)"),
      ("run.py", 5, "loss", "return jnp.sum(blur(p))"),
      ("ops.py", 7, "blur", "return blur_p.bind(x)")), [(("grad",), 9)]),
    # nested transformations, and one inside the function the outer one traced
    ((("train.py", 20, "<module>", "state = jax.jit(jax.vmap(step))(state)"),
      ("train.py", 14, "step", "g = jax.grad(loss)(s)"),
      ("train.py", 10, "loss", "return blur(s).sum()")),
     [(("jax.jit", "jax.vmap"), 20), (("jax.grad",), 14)]),
    # a method handed on; a library's own `grad` that reached the user's code some
    # other way (an alias the line does not name) is not taken for one
    ((("train.py", 30, "<module>", "out = jax.jit(model.apply)(params, x)"),
      ("model.py", 12, "apply", "return blur(x)")), [(("jax.jit",), 30)]),
    ((("run.py", 8, "<module>", "g = mylib.grad(loss, data)"),
      ("mylib/opt.py", 40, "_grad", "return loss(data)")), []),
    # the line calls the failing helper itself: the transformation is not on the way
    ((("run.py", 3, "<module>", "y = helper(x) + jax.grad(f)(x)"),
      ("run.py", 1, "helper", "return blur(x)")), []),
    # no user frame below: the transformation's own machinery raised
    ((("run.py", 6, "<module>", "jax.jit(f)(x)"),), [(("jax.jit",), 6)]),
    # ... where the innermost user frame is the lambda the line handed on: named once
    ((("run.py", 31, "<module>", "print(jax.grad(lambda x: f(x).sum())(xs))"),
      ("run.py", 31, "<lambda>", "print(jax.grad(lambda x: f(x).sum())(xs))")),
     [(("jax.grad",), 31)]),
    ((("run.py", 6, "<module>", "y = f(x)"), ("run.py", 2, "f", "return blur(x)")), []),
])
def test_the_transformations_on_the_way_are_read_off_the_users_lines(frames, expected):
    assert _transformed(_traceback(*frames)) == expected


_DECORATED = """\
import functools
import jax


@jax.jit
def step(x):
  return blur(x)


@functools.partial(jax.vmap, in_axes=0)
@jax.named_call
def rows(x):
  return step(x)
"""


def test_a_decorator_that_transforms_the_users_function_is_on_the_way(tmp_path):
    """`@jax.jit def step` shows in no frame's line: it is read from the file."""
    (tmp_path / "run.py").write_text(_DECORATED)
    frames = [("run.py", 20, "<module>", "y = step(x)"), ("run.py", 7, "step", "return blur(x)"),
              ("ops.py", 7, "blur", "return blur_p.bind(x)")]
    text = _traceback(*frames).replace("/home/me/", f"{tmp_path}/")
    from jaxmap.commands import explain_user, tracebacks

    [raised] = tracebacks.read(text)
    assert [(t.names, t.at.line, t.at.code) for t in explain_user.transformed(raised.frames)] \
        == [(("jax.jit",), 5, "@jax.jit")]
    nested = [("run.py", 20, "<module>", "y = jax.grad(rows)(x)"),
              ("run.py", 13, "rows", "return step(x)"), *frames[1:]]
    [raised] = tracebacks.read(_traceback(*nested).replace("/home/me/", f"{tmp_path}/"))
    assert [(t.names, t.at.line) for t in explain_user.transformed(raised.frames)] == [
        (("jax.grad",), 20), (("jax.vmap",), 10), (("jax.jit",), 5)]
    assert _transformed(_traceback(*frames)) == []  # not on disk: not known


def test_a_lowering_missing_under_jit_names_the_users_jit_call(installed_index):
    """JAX's pseudo-cause holds where the primitive was traced; the exception's own
    frames hold the `jax.jit(smooth)(grid)` line."""
    from jaxmap.render import explain_text
    from jaxmap.render.view import View

    [found] = _explained(installed_index, "jit_lowering_missing")
    assert found.missing is not None and found.missing.kind == "lowering"
    [step] = found.transformed
    assert (step.names, step.at.path, step.at.line) == (("jax.jit",), "/home/me/ops/blur.py", 15)
    text = explain_text.explanation((found,), View(""))
    assert "  transformed by jax.jit  /home/me/ops/blur.py:15  out = jax.jit(smooth)(grid)" \
        in text.splitlines()
    document = json.loads(answer(BY_NAME["explain"], installed_index,
                                 {"text": _paste("jit_lowering_missing")}, "json"))
    assert document["exceptions"][0]["transformed"] == [
        {"names": ["jax.jit"], "file": "/home/me/ops/blur.py", "line": 15,
         "function": "<module>", "code": "out = jax.jit(smooth)(grid)"}]

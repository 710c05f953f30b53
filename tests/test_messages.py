"""Messages read from raise sites."""

from __future__ import annotations

import textwrap

from jaxmap.indexing.extract import extract
from jaxmap.indexing.messages import sites
from jaxmap.store.message_patterns import (
    loose,
    matches_start,
    matches_whole,
    start_regex,
    template_regex,
)


def test_a_parenthesised_message_formatted_at_the_raise_site():
    source = textwrap.dedent('''
        def rule(lhs, rhs):
          msg = ("dot_general requires contracting dimensions to have the same "
                 "shape, got {} and {}.")
          raise TypeError(msg.format(lhs, rhs))
        ''').encode()
    [(_, kind, pieces, returned)] = sites(source)
    assert kind == "TypeError" and not returned
    found = template_regex(pieces).search(
        "dot_general requires contracting dimensions to have the same shape, got (3,) "
        "and (4,).")
    assert found and [group.strip() for group in found.groups()] == ["(3,)", "(4,)"]


def test_a_name_another_function_assigns_is_not_the_message_raised():
    """`raise E(msg)` of a parameter raises what its callers pass, not what a function
    above assigned to a name alike; a def nested above the raise does not hide the
    enclosing function's own assignment."""
    source = textwrap.dedent('''
        def shape_rule(lhs, rhs):
          msg = "dot_general requires contracting dimensions to have the same shape."
          raise TypeError(msg)

        def _check_specs_match(lhs, rhs, msg):
          if lhs != rhs:
            raise ShardingTypeError(msg)

        def outer(x):
            msg = "the outer function says {}"
            def helper():
                pass
            if x:
                raise ValueError(msg.format(x))
        ''').encode()
    assert [(kind, pieces) for _, kind, pieces, _ in sites(source)] == [
        ("TypeError", ("dot_general requires contracting dimensions to have the same "
                       "shape.",)),
        ("ValueError", ("the outer function says ", ""))]


def test_a_bound_format_method_formats_the_message_where_it_is_called():
    source = textwrap.dedent('''
        def _check_scalar(x):
          msg = "Gradient only defined for scalar-output functions. Output {}.".format
          raise TypeError(msg(f"had shape: {x.shape}"))
        ''').encode()
    [(_, _, pieces, _)] = sites(source)
    found = template_regex(pieces).search(
        "TypeError: Gradient only defined for scalar-output functions. Output had shape: (2,).")
    assert found and found.group(1) == "had shape: (2,)"


def test_an_exception_that_builds_its_message_in_init_raises_it():
    source = textwrap.dedent('''
        class NoBool(TypeError):
          def __init__(self, tracer):
            super().__init__(f"Attempted boolean conversion of {tracer}.")
        class NoInt(TypeError):
          def __init__(self, tracer):
            TypeError.__init__(self,
                f"The __index__() method was called on {tracer}")
          def again(self):
            super().__init__("not a message of this class at all")
        ''').encode()
    found = [(scope, line, exception) for scope, line, exception, _, _ in
             extract(source, "m")["messages"]]
    assert found == [("NoBool.__init__", 4, "NoBool"), ("NoInt.__init__", 7, "NoInt")]


def test_an_exception_a_helper_returns_is_its_message():
    source = textwrap.dedent('''
        def _shape_error(shape):
          msg = f"Shapes must be 1D sequences of integers, got {shape}."
          return TypeError(msg)
        def not_an_error(x):
          return ValueObject(f"a value object built from {x}")
        ''').encode()
    found = [(scope, line, exception, returned) for scope, line, exception, _, returned in
             extract(source, "m")["messages"]]
    assert found == [("_shape_error", 4, "TypeError", True)]


def test_the_start_of_a_message_matches_cut_after_any_word_or_inside_a_field():
    pieces = ("unbound axis name: ", ". The following axis names were found: ", "")
    assert start_regex(pieces).search("unbound axis name")  # `name:` cut before its `:`
    found = start_regex(pieces).search("NameError: unbound axis name: i. The following")
    assert found and found.group(1) == "i"
    cut_in_a_field = start_regex(("Output ", ".")).search("Output had shape: (2,)")
    assert cut_in_a_field and cut_in_a_field.group(1) == "had shape: (2,)"
    assert not start_regex(pieces).search("unbound axis nam")  # words whole
    assert not start_regex(pieces).search("unbound axis size: 3")  # the words as written


def test_a_message_joined_from_a_list_starts_with_its_first_string():
    source = textwrap.dedent('''
        def _mapped_axis_size(name, sizes):
          msg = [f"{name} got inconsistent sizes for array axes to be mapped:\\n"]
          for size in sizes:
            msg.append(f"  * one axis had size {size};\\n")
          raise ValueError(''.join(msg)[:-2])
        ''').encode()
    [(_, kind, pieces, _)] = sites(source)
    found = template_regex(pieces).search(
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * one axis had size 3;")
    assert kind == "ValueError" and found and found.group(1).strip() == "vmap"
    lines = b'lines = ["Pytree structures differ at the leaves:"]\nraise TypeError("\\n".join(lines))\n'
    [(_, _, pieces, _)] = sites(lines)
    assert pieces == ("Pytree structures differ at the leaves:",)
    appended = textwrap.dedent('''
        def _check(what1, what2):
          msg = []
          msg.append(f"{what1} must have same type structure as {what2}, but: ")
          raise TypeError("\\n".join(msg))
        ''').encode()
    [(_, _, pieces, _)] = sites(appended)
    assert pieces == ("", " must have same type structure as ", ", but: ")


def test_an_exception_a_generator_yields_in_a_lambda_is_its_message():
    """`yield lambda name: ValueError(...)`: built where yielded, raised by the caller."""
    source = textwrap.dedent('''
        def _prefix_error(key_path, prefix_tree, full_tree):
          yield lambda name: ValueError(
              "pytree structure error: different types at key path\\n"
              f"    {name}{key_path}\\n")
        ''').encode()
    [(_, kind, pieces, returned)] = sites(source)
    assert kind == "ValueError" and returned
    assert pieces[0].startswith("pytree structure error: different types")


def test_a_match_is_anchored_at_the_message_start():
    pieces = ("cannot reshape array of shape ", " into shape ", "")
    assert matches_whole(pieces, "cannot reshape array of shape (3,) into shape 4")
    assert not matches_whole(pieces, "oops: cannot reshape array of shape (3,) into shape 4")


def test_a_template_mostly_placeholders_needs_distinctive_fixed_text():
    short = ("", " does not support ", " arrays")  # leading field, a 17-character piece
    assert loose(short)
    assert matches_whole(short, "jnp.linalg.inv does not support int32 arrays")
    assert not matches_whole(short, "my own words and a long story\nthat does not support x arrays")
    vague = ("", " but ", "")  # nothing distinctive: never
    assert not matches_whole(vague, "while_loop got 1 but 2")
    assert not matches_start(("", " does not support ", " arrays"), "jnp.linalg.inv does not")


def test_a_match_ends_at_a_word_boundary():
    pieces = ("Incompatible shapes for matmul",)
    assert matches_whole(pieces, "Incompatible shapes for matmul\nmore")
    assert not matches_whole(pieces, "Incompatible shapes for matmulation")


def test_an_exception_kept_in_a_name_is_raised_where_the_name_is():
    source = textwrap.dedent('''
        functionalization_error = ValueError(
            "Cannot abstractly evaluate a checkify.check which was not functionalized.")

        def check_lowering_rule(ctx):
          if ctx:
            raise functionalization_error
        ''').encode()
    [(offset, kind, pieces, returned)] = sites(source)
    assert source[offset:].startswith(b"raise functionalization_error")
    assert kind == "ValueError" and not returned and pieces[0].startswith("Cannot abstractly")


def test_a_message_a_helper_of_the_file_returns_is_the_raise_sites():
    source = textwrap.dedent('''
        def _spec_rank_error(fun_name, prefix):
          msg = (f"shard_map applied to the function '{fun_name}' was given an "
                 f"{prefix}_specs entry which is too long")
          return msg

        def _check_specs(f):
          msg = _spec_rank_error(f, "in")
          raise ValueError(msg)
        ''').encode()
    [(_, kind, pieces, returned)] = sites(source)
    assert kind == "ValueError" and not returned
    assert pieces[:2] == ("shard_map applied to the function '", "' was given an ")


def test_a_self_documenting_field_keeps_the_text_it_prints():
    """`{bytes=}` prints `bytes=` before the value; `{x == y}` and `{f(a=1)}` print
    only their value."""
    source = textwrap.dedent('''
        def copy(bytes, size, x, y):
          raise NotImplementedError(
              "Only copies of whole warpgroups are supported."
              f" Got {bytes=} but warpgroup size is {size = !r}, {x == y}, {f(a=1)}")
        ''').encode()
    [(_, _, pieces, _)] = sites(source)
    assert pieces == ("Only copies of whole warpgroups are supported. Got bytes=",
                      " but warpgroup size is size = ", ", ", ", ", "")
    assert matches_whole(pieces, "Only copies of whole warpgroups are supported. Got "
                         "bytes=96 but warpgroup size is size = 128, True, 3")

"""explain on a small tree of its own: matching that can say no, ranking by what the
message quotes, the frame when no message matches, chains, older wordings."""

from __future__ import annotations

import io
import json
import os
import sys
import textwrap

import pytest
from inline import indexed_tree

from jaxmap.commands import explain
from jaxmap.commands.explain import Status
from jaxmap.errors import NotFound
from jaxmap.render import explain_text
from jaxmap.render.view import View
from jaxmap.session import open_index
from jaxmap.store import snapshot

_ERRORS = '''
class JAXTypeError(TypeError):
  def __init__(self, message):
    super().__init__(message)

class ConcretizationTypeError(JAXTypeError):
  def __init__(self, tracer, context=""):
    super().__init__("Abstract tracer value encountered where concrete value is "
                     f"expected: {tracer}\\n{context}\\n")
'''
_CORE = '''
from jax._src.errors import ConcretizationTypeError

class Tracer:
  def tolist(self):
    raise ConcretizationTypeError(self, f"The tolist() method was called on {self}.")

def concrete_or_error(force, val, context=""):
  raise ConcretizationTypeError(val, context)

def concretization_function_error(fun):
  fname_context = f"The problem arose with the `{fun}` function. "
  def error(self, arg):
    raise ConcretizationTypeError(arg, fname_context)
  return error

def arange(start):
  return concrete_or_error(None, start, "It arose in the jnp.arange argument 'stop'")

def check_dtype(x):
  raise NotImplementedError(f"{x} does not support {x} arrays")

def reshape(a, s):
  raise TypeError(f"cannot reshape array of shape {a} into shape {s}")

def check_scalar(x):
  msg = "Gradient only defined for scalar-output functions. Output {}.".format
  if x:
    raise TypeError(msg(f"had abstract value {x}"))
  raise TypeError(msg(f"had shape: {x}"))

def _prefix_error(tree):
  yield lambda name: ValueError("pytree structure error: different types at key path\\n"
                                f"    {name}\\n")

def tree_map(f, tree):
  for error in _prefix_error(tree):
    raise error("tree_map tree")

def scan(f):
  raise TypeError("scan body function carry input and carry output must have equal "
                  "types, but they differ")

class JVPTrace:
  def process_primitive(self, primitive):
    raise NotImplementedError(f"Differentiation rule for '{primitive}' not implemented")

def fallback_linearize_rule(prim):
  raise NotImplementedError(f"Differentiation rule for '{prim}' not implemented")

def execute(computation, args):
  return computation.execute_sharded(args)

def call(computation, args):
  return execute(computation, args)

def _wrapped_callback(out):
  raise RuntimeError(f"Incorrect output shape for return value #{out}: Expected: 3")

def _spec_error(prefix):
  msg = f"shard_map was given {prefix}_specs entries which are too long for the values"
  return msg

def check_out(out_specs, fails):
  msg = _spec_error("out")
  raise ValueError(msg)

def check_in(in_specs, fails):
  msg = _spec_error("in")
  raise ValueError(msg)
'''
_OLD_CORE = '''
def scan(f):
  raise TypeError("Scanned function carry input and carry output must have equal types "
                  "(e.g. shapes and dtypes of arrays), but they differ")

def xmap(f):
  raise ValueError("xmap argument has an in_axes specification that does not fit its rank")
'''


def _tree(root, files: dict[str, str], version: str):
    for path, text in {**files, "jax/__init__.py": "", "jax/_src/__init__.py": "",
                       "jax/version.py": f'_version = "{version}"\n'}.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    return root


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    found = indexed_tree(tmp_path_factory, {
        "jax/_src/errors.py": _ERRORS, "jax/_src/core.py": _CORE, "jax/__init__.py": "",
        "jax/_src/__init__.py": "", "jax/version.py": '_version = "0.9.0"\n'})
    yield found
    found.close()


def _line(text: str, source: str = _CORE) -> int:
    """The 1-based line of `text` in the written source (dedent keeps lines)."""
    return textwrap.dedent(source).split("\n").index(text) + 1


def _traceback(message: str, frames=(), note=False, code="main()") -> str:
    lines = ["Traceback (most recent call last):",
             '  File "/home/me/train.py", line 7, in <module>', f"    {code}"]
    for path, line, function in frames:
        lines += [f'  File "/env/site-packages/{path}", line {line}, in {function}', "    x"]
    note_text = ["-" * 20, ("For simplicity, JAX has removed its internal frames from the "
                            "traceback of the following exception.")] if note else []
    return "\n".join(lines + [message] + note_text) + "\n"


def test_a_match_must_start_where_the_message_does(index):
    assert explain.explain(index, "cannot reshape array of shape (3,) into shape 4").sites
    with pytest.raises(NotFound):
        explain.explain(index, "my words: cannot reshape array of shape (3,) into shape 4")


def test_a_placeholder_heavy_template_does_not_match_any_text(index):
    found = explain.explain(index, "jnp.inv does not support int32 arrays")
    assert found.sites[0].function.endswith("check_dtype")
    with pytest.raises(NotFound):
        explain.explain(index, "a long story of my own, over lines\nthat does not support x arrays")


def test_the_exception_class_must_agree(index):
    with pytest.raises(NotFound):
        explain.explain(index, "NotImplementedError: cannot reshape array of shape (3,) into 4")
    assert explain.explain(index, "TypeError: cannot reshape array of shape (3,) into 4").sites


def test_a_traceback_without_jax_is_not_from_jax(index):
    """No JAX frame, no note, and the user's own line raised it (or another package's
    frame did): not JAX's, even where JAX has a message like it."""
    text = _traceback("TypeError: cannot reshape array of shape (3,) into shape 4",
                      code="raise TypeError(msg)")
    [answer] = explain.explain_all(index, text)
    assert answer.status == Status.NOT_JAX
    with pytest.raises(NotFound, match="not from JAX"):
        explain.explain(index, text)
    other = _traceback("json.decoder.JSONDecodeError: Expecting value: line 1 column 1")
    assert explain.explain_all(index, other)[0].status == Status.NOT_JAX


def test_a_catalogued_message_without_its_note_is_jaxs(index):
    """JAX removed its frames and the note was cut (a log, or filtering off with only
    the user's frames pasted): the catalogue says it is JAX's."""
    text = _traceback("TypeError: cannot reshape array of shape (3,) into shape 4",
                      code="y = jnp.reshape(x, 4)")
    [answer] = explain.explain_all(index, text)
    assert answer.status == Status.MATCHED and answer.user.path == "/home/me/train.py"
    mine = _traceback("TypeError: cannot reshape array of shape (3,) into shape 4",
                      code="y = reshape(x, 4)")  # calls no JAX, and few of JAX's own words
    assert explain.explain_all(index, mine)[0].status == Status.NOT_JAX


def test_the_text_a_caller_passes_tells_which_raise_fired(index):
    """One message built in __init__, raised at two places: the message quotes the
    argument one was called with, or the text of the function around the other."""
    message = ("jax.errors.ConcretizationTypeError: Abstract tracer value encountered where "
               "concrete value is expected: traced array\n{}\n")
    arange = explain.explain(index, _traceback(
        message.format("It arose in the jnp.arange argument 'stop'"), note=True))
    assert arange.raised_by[0].line == _line("  raise ConcretizationTypeError(val, context)")
    conversion = explain.explain(index, _traceback(
        message.format("The problem arose with the `int` function. "), note=True))
    assert conversion.raised_by[0].line == _line(
        "    raise ConcretizationTypeError(arg, fname_context)")


def test_a_raise_with_words_of_its_own_the_message_lacks_comes_after_the_helpers(index):
    """Tracer.tolist raises the class with its own words, first in the source; the
    helpers pass on what they were handed."""
    head = ("jax.errors.ConcretizationTypeError: Abstract tracer value encountered where "
            "concrete value is expected: traced array")
    first_line = explain.explain(index, _traceback(head, note=True))
    assert [s.function.rpartition(".")[2] for s in first_line.raised_by] == [
        "concrete_or_error", "concretization_function_error", "tolist"]
    tolist = explain.explain(index, _traceback(
        head + "\nThe tolist() method was called on traced array.\n", note=True))
    assert tolist.raised_by[0].function.endswith("Tracer.tolist")


def test_arguments_of_a_bound_format_tell_its_raises_apart(index):
    found = explain.explain(index, "TypeError: Gradient only defined for scalar-output "
                                   "functions. Output had shape: (3,).")
    assert found.sites[0].line == _line('  raise TypeError(msg(f"had shape: {x}"))')
    assert len(found.sites) == 2


def test_names_near_a_raise_that_the_message_quotes_tell_its_raises_apart(index):
    """One helper builds both messages; 'in_specs' is a name only beside one raise."""
    found = explain.explain(index, "ValueError: shard_map was given in_specs entries which "
                                   "are too long for the values")
    assert [s.function.rpartition(".")[2] for s in found.sites] == ["check_in", "check_out"]


def test_the_transformation_the_user_called_puts_its_machinery_s_raise_first(index):
    """One wording raised by the JVP trace and by the linearize rule; the user's
    `jax.grad` runs the second, `jax.jvp` the first."""
    message = "NotImplementedError: Differentiation rule for 'frob' not implemented"
    under_grad = explain.explain(index, _traceback(message, note=True, code="jax.grad(f)(1.)"))
    assert [s.function.rpartition(".")[2] for s in under_grad.sites] == [
        "fallback_linearize_rule", "process_primitive"]
    under_jvp = explain.explain(index, _traceback(message, note=True,
                                                  code="jax.jvp(f, (1.,), (1.,))"))
    assert under_jvp.sites[0].function.endswith("JVPTrace.process_primitive")


def test_no_message_matched_names_the_innermost_jax_frame(index):
    text = _traceback("ValueError: safe_map() argument 2 is longer than argument 1",
                      [("jax/_src/core.py", 12, "arange")])
    found = explain.explain(index, text)
    assert found.status == Status.FRAME
    assert (found.sites[0].file, found.sites[0].line) == ("jax/_src/core.py", 12)
    filtered = _traceback("ValueError: safe_map() argument 2 is longer than argument 1",
                          [("jax/_src/core.py", 12, "arange")], note=True)
    assert explain.explain(index, filtered).status == Status.FRAME_SHOWN


def test_an_unmatched_raise_in_code_jax_called_is_not_placed_at_a_jax_frame(index):
    """The innermost frame is the user's function (a scan body, a callback): it raised."""
    text = _traceback("ValueError: my own check failed",
                      [("jax/_src/core.py", 12, "arange"), ("mylib/body.py", 3, "body")])
    [answer] = explain.explain_all(index, text, older=())
    assert answer.status == Status.UNMATCHED and not answer.sites


def test_a_message_a_generator_yields_is_raised_where_the_traceback_says(index):
    raise_line = _line('    raise error("tree_map tree")')
    text = _traceback("ValueError: pytree structure error: different types at key path\n"
                      "    tree_map tree\n", [("jax/_src/core.py", raise_line, "tree_map")])
    found = explain.explain(index, text)
    assert found.sites[0].returned and found.sites[0].function.endswith("_prefix_error")
    assert (found.raised_by[0].file, found.raised_by[0].line) == ("jax/_src/core.py",
                                                                  raise_line)


def test_each_exception_of_a_chain_is_answered_root_cause_first(index):
    text = (_traceback("TypeError: cannot reshape array of shape (3,) into shape 4",
                       [("jax/_src/core.py", _line("def reshape(a, s):") + 1, "reshape")])
            + "\nThe above exception was the direct cause of the following exception:\n\n"
            + _traceback("RuntimeError: could not load the model"))
    first, second = explain.explain_all(index, text)
    assert first.status == Status.MATCHED and first.sites[0].function.endswith("reshape")
    assert second.status == Status.NOT_JAX and second.exception == "RuntimeError"


def test_a_runtime_error_carrying_a_callback_s_traceback_surfaced_where_the_runtime_ran(
        index):
    """The carried traceback's last frames: call -> execute (a call the index sees) ->
    _wrapped_callback (run by the runtime execute called: no call the index sees)."""
    def frame(text, function):
        return (f'  File "/env/site-packages/jax/_src/core.py", line {_line(text)}, '
                f"in {function}\n")
    carried = ("INTERNAL: CpuCallback error calling callback: Traceback (most recent call "
               "last):\n" + frame("  return execute(computation, args)", "call")
               + frame("  return computation.execute_sharded(args)", "execute")
               + frame('  raise RuntimeError(f"Incorrect output shape for return value '
                       '#{out}: Expected: 3")', "_wrapped_callback")
               + "RuntimeError: Incorrect output shape for return value #0: Expected: 3")
    callback, runtime = explain.explain_all(
        index, _traceback("jax.errors.JaxRuntimeError: " + carried, note=True))
    assert callback.status == Status.MATCHED and callback.exception == "RuntimeError"
    assert callback.sites[0].function.endswith("_wrapped_callback")
    assert runtime.status == Status.RUNTIME and runtime.exception == "jax.errors.JaxRuntimeError"
    assert (runtime.sites[0].line, runtime.sites[0].function) == (
        _line("  return computation.execute_sharded(args)"), "execute")


def test_an_unplaced_message_gets_the_closest_ones_apart(index):
    [answer] = explain.explain_all(index, "cannot reshape the array of shape (3,) to shape 4",
                                   older=())
    assert answer.status == Status.UNMATCHED and not answer.sites
    assert answer.closest and answer.closest[0].site.function.endswith("reshape")
    assert 0.5 <= answer.closest[0].similarity < 1


def test_another_wording_of_a_messages_opening_is_among_the_closest(tmp_path_factory):
    """jaxlib's C++ words the first sentence as api_util.py does, then goes on otherwise:
    too unlike as a whole, alike in its opening."""
    tree = indexed_tree(tmp_path_factory, {"jax/__init__.py": "", "jax/_src/__init__.py": "",
                                           "jax/_src/api_util.py": """
        def argnums_partial(i, arg, name):
          raise ValueError(
              "Non-hashable static arguments are not supported, as each call would "
              "then miss the compilation cache and trace the function again. Argument "
              f"{i} of type {type(arg)} given to {name} cannot be hashed: pass a tuple "
              "rather than a list, or mark the argument as traced instead.")
        """})
    try:
        [answer] = explain.explain_all(tree, (
            "ValueError: Non-hashable static arguments are not supported. An error "
            "occurred during a call to 'loss_fn' while trying to hash an object of type "
            "<class 'list'>, [1, 2]. The error was:"), older=())
    finally:
        tree.close()
    assert answer.status == Status.UNMATCHED and not answer.sites
    [near] = answer.closest
    assert (near.site.file, near.site.function) == (
        "jax/_src/api_util.py", "jax._src.api_util.argnums_partial")
    # Placed nowhere, its family still says what usually fixes it.
    shown = explain_text.explanation([answer], View("/r"))
    assert "usually fixes  static arguments are cache keys" in shown


def test_a_message_worded_as_an_older_release_words_it(index, tmp_path, monkeypatch):
    old = _tree(tmp_path / "old", {"jax/_src/core.py": _OLD_CORE}, "0.8.0")
    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("JAXMAP_INDEXES", str(tmp_path / "snapshots"))
    (tmp_path / "snapshots").mkdir()
    with open_index(str(old), graph=True) as old_index:  # messages: the second phase
        (tmp_path / "snapshots" / "jax-0.8.0.json.gz").write_bytes(snapshot.export(old_index))
    renamed = explain.explain(index, "TypeError: Scanned function carry input and carry "
                                     "output must have equal types (e.g. shapes and dtypes "
                                     "of arrays), but they differ")
    assert renamed.status == Status.OLDER and renamed.older.version == "0.8.0"
    assert [s.function for s in renamed.older.successors] == ["jax._src.core.scan"]
    gone = explain.explain(index, "xmap argument has an in_axes specification that does "
                                  "not fit its rank")
    assert gone.status == Status.OLDER and gone.older.successors == ()
    shown = explain_text.explanation([gone], View(str(index.root)))
    assert "worded as in jax 0.8.0" in shown and "not raised in this tree" in shown


# Two older releases' wordings, newest first, as the messages table holds them: one whose
# line goes on past a field that ends the pastes below, one whose next line does.
_OLD_LONGER = [(version, [
    ("jax/_src/pad.py", line, "jax._src.pad._pad_to", "ValueError",
     ("Mismatched widths for padding: ", " against target width ", ""), False),
    ("jax/_src/pad.py", line + 5, "jax._src.pad._pad_to", "ValueError",
     ("Padding widths differ for the operands ", "\nPad the narrower operand first."), False),
]) for version, line in (("0.8.0", 40), ("0.7.0", 31))]
_GOES_ON = "ValueError: Mismatched widths for padding: (2, 4)"


@pytest.mark.parametrize(("text", "placed", "version"), [
    (_GOES_ON, False, "0.8.0"),  # nothing says which release: the newest wording named
    ("jax==0.7.0\n" + _GOES_ON, True, "0.7.0"),  # the paste ran a release whose wording matched
    ("jax==0.6.0\n" + _GOES_ON, False, "0.8.0"),  # another release
    (_GOES_ON + " against target", True, "0.8.0"),  # ends in its own text: the wording, cut
    ("ValueError: Padding widths differ for the operands (2, 4)", True, "0.8.0"),  # first line
])
def test_an_older_wording_whose_line_goes_on_is_placed_only_if_the_paste_says_so(
        index, text, placed, version):
    """A message whose end a field of an old wording took, where that wording's line goes
    on, may be another message: that site is given only where the paste says it ran that
    release; otherwise the answer is unplaced and names the release whose wording it
    starts like. One that ends in the wording's own text, or at its line break, is it."""
    [answer] = explain.explain_all(index, text, older=_OLD_LONGER)
    assert answer.older.version == answer.wording == version
    assert answer.status == (Status.OLDER if placed else Status.UNMATCHED)
    if not placed:
        assert not answer.sites and "jax 0.8.0's wording" in explain.unplaced_reason([answer])
        text = explain_text.explanation([answer, answer._replace(segment=2)], View("/r"))
        assert "starts like jax 0.8.0's wording" in text and "pad.py:40" in text


def test_the_cli_reads_a_file_given_by_its_path(index, tmp_path, monkeypatch, capsys):
    """`jaxmap explain pt.log` answers the log's text, as `explain - < pt.log` does."""
    from jaxmap.cli import main

    text = "cannot reshape array of shape (3,) into shape 4\n"
    log = tmp_path / "pt.log"
    log.write_text(text)
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    assert main(["explain", "-", "--root", str(index.root)]) == 0
    piped = capsys.readouterr().out
    assert "reshape" in piped
    assert main(["explain", str(log), "--root", str(index.root)]) == 0
    assert capsys.readouterr().out == piped
    assert main(["explain", "--help"]) == 0
    assert "the path of an existing file reads that file" in capsys.readouterr().out


def test_a_dash_with_nothing_on_stdin_says_stdin_was_empty(index, monkeypatch, capsys):
    from jaxmap.cli import main

    monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))
    assert main(["explain", "-", "--root", str(index.root)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "jaxmap: error: - reads the text from stdin, and stdin held nothing"


def test_a_path_naming_no_file_is_one_line_not_a_message(index, tmp_path, capsys):
    """A mistyped log's path, or a folder, says so; it is not read as a message."""
    from jaxmap.cli import main

    for given in (str(tmp_path / "nosuch.log"), str(tmp_path), "trace.txt"):
        assert main(["explain", given, "--root", str(index.root)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"jaxmap: error: {given} ") and len(err.splitlines()) == 1
        assert "names no file" in err or "is a directory" in err


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_one_line(index, tmp_path, capsys):
    from jaxmap.cli import main

    log = tmp_path / "pt.log"
    log.write_text("ValueError: x\n")
    log.chmod(0)
    assert main(["explain", str(log), "--root", str(index.root)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"jaxmap: error: cannot read {log}") and len(err.splitlines()) == 1


def test_a_lone_unplaced_message_keeps_its_heading_with_its_fix(index, capsys):
    """stdout reads whole without stderr: the message, that no site raises it, what
    usually fixes its family, then the closest messages; stderr the error line alone;
    exit 1 as with --json, whose answer carries the same fix."""
    from jaxmap.cli import main

    root, message = str(index.root), "cannot reshape the array of shape (3,) to 4"
    assert main(["explain", message, "--root", root]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[:2] == [message, "  not an error message raised in this tree"]
    assert lines[2].startswith("  usually fixes  two operands' shapes do not fit")
    assert lines.index("closest messages in this tree (similarity; not an answer):") > 2
    assert captured.err == "jaxmap: not an error message raised in this tree\n"
    assert main(["explain", message, "--root", root, "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["status"] == "unmatched"
    assert document["fix"]["text"].startswith("two operands' shapes do not fit")


def test_a_lone_message_with_nothing_more_to_say_leaves_stdout_empty(index, capsys):
    from jaxmap.cli import main

    assert main(["explain", "the widget frobnicated", "--root", str(index.root)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "jaxmap: not an error message raised in this tree\n"


def test_the_cli_shows_the_closest_messages_apart_and_exits_1(index, capsys):
    from jaxmap.cli import main

    root = str(index.root)
    assert main(["explain", "cannot reshape the array of shape (3,) to 4", "--root", root]) == 1
    captured = capsys.readouterr()
    assert "closest messages in this tree" in captured.out
    assert "not an error message raised in this tree" in captured.err
    assert main(["explain", "cannot reshape the array of shape (3,) to 4", "--root", root,
                 "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["exceptions"][0]["status"] == "unmatched"
    assert document["exceptions"][0]["closest"]
    assert main(["explain", "cannot reshape array of shape (3,) into shape 4", "--root",
                 root]) == 0

"""explain for the author of a library of primitives (a tree that is not jax, indexed
with --root): a missing rule is registered with jax's public registrars (those of the
jax the paste ran, else the installed one, from its snapshot); a primitive with no
lowering anywhere gets a default one first; the user's line is the code that binds,
under jit as under grad; every rule-missing family says what usually fixes it; and a
transposing call the chain shows twice is named once."""

from __future__ import annotations

import json

import pytest
from inline import indexed_tree

from jaxmap.commands import explain
from jaxmap.render import explain_text
from jaxmap.render import json as render_json
from jaxmap.render.view import View

_OPS = '''
    from jax.extend.core import Primitive
    from jax.interpreters import ad, mlir

    curl_p = Primitive("curl")  # differentiated, never transposed nor batched
    swap_p = Primitive("swap")  # no lowering on any platform
    swap_p.multiple_results = True
    edge_p = Primitive("edge")  # a lowering for cuda only
    bare_p = Primitive("bare")  # an impl alone


    def curl(x):
      return curl_p.bind(x)


    def _curl_jvp(g, x):
      return g


    curl_p.def_impl(lambda x: x)
    curl_p.def_abstract_eval(lambda x: x)
    ad.defjvp(curl_p, _curl_jvp)
    mlir.register_lowering(curl_p, lambda ctx, x: [x])


    def swap(x, y):
      return swap_p.bind(x, y)


    swap_p.def_impl(lambda x, y: [y, x])
    swap_p.def_abstract_eval(lambda x, y: [y, x])


    def edge(x):
      return edge_p.bind(x)


    edge_p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(edge_p, lambda ctx, x: [x], platform="cuda")


    def bare(x):
      return bare_p.bind(x)


    bare_p.def_impl(lambda x: x)
    '''
_NOTE = ("--------------------\nFor simplicity, JAX has removed its internal frames from "
         "the traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to "
         "include these.\n")
_CAUSE = ("\nThe preceding stack trace is the source of the JAX operation that, once "
          "transformed by JAX, triggered the following exception.\n\n--------------------\n\n"
          "The above exception was the direct cause of the following exception:\n\n")


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    index = indexed_tree(tmp_path_factory, {"spin/__init__.py": "", "spin/ops.py": _OPS})
    yield index
    index.close()


def _line(code: str) -> int:
    import textwrap

    return next(n for n, line in enumerate(textwrap.dedent(_OPS).splitlines(), 1)
                if code in line)


def _frame(path: str, line: int, function: str, code: str) -> str:
    return f'  File "{path}", line {line}, in {function}\n    {code}\n'


def _ops(library) -> str:
    return f"{library.root}/spin/ops.py"


def _jit(library, name: str, bind: str, call: str) -> str:
    """The traceback of `jax.jit(NAME)(...)` whose lowering is missing, as jax 0.10.2
    prints it: the operation's source, then the user's call."""
    message = f"MLIR translation rule for primitive '{name}' not found for platform cpu"
    return ("Traceback (most recent call last):\n"
            + _frame(_ops(library), _line(bind), name, bind)
            + "jax._src.source_info_util.JaxStackTraceBeforeTransformation: "
              f"NotImplementedError: {message}\n" + _CAUSE
            + "Traceback (most recent call last):\n"
            + _frame("/home/me/run.py", 5, "<module>", call)
            + f"NotImplementedError: {message}\n" + _NOTE)


def _answer(library, text: str):
    [answer] = explain.explain_all(library, text)
    return answer, explain_text.explanation([answer], View(library.root))


def _advice(text: str) -> list[str]:
    """The calls under `register with` (not the note on whose registrars they are)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  register with"))
    found = []
    for line in lines[start:]:
        if found and not line.startswith(" " * 17):
            break
        if not line[17:].startswith("("):
            found.append(line[17:].split("  (")[0])
    return found


def test_a_librarys_missing_rule_is_registered_with_jaxs_public_registrars(library):
    answer, text = _answer(library, "Batching rule for 'curl' not implemented")
    assert answer.missing is not None and not answer.missing.of_jax
    assert _advice(text)[0] == "batching.defvectorized(curl_p)"
    assert "  register with  batching.defvectorized(curl_p)  (from jax.interpreters " \
        "import batching)" in text.splitlines()
    assert "so it has no registrars" not in text
    assert answer.missing.registrars_of  # the jax release whose registrars these are
    assert f"(the public registrars of jax {answer.missing.registrars_of}" in text
    assert "register it (jaxmap shows where and how above)" in answer.fix.fix
    absolute = View(library.root, path=lambda file: f"{library.root}/{file}")
    document = json.loads(render_json.explanation_document((answer,), absolute))
    missing = document["missing_rule"]
    assert missing["registrars_of"] == answer.missing.registrars_of
    assert missing["register_with"][0]["call"] == "batching.defvectorized(curl_p)"
    # a file of that jax, not of the indexed tree
    assert missing["register_with"][0]["file"] == "jax/_src/interpreters/batching.py"


def test_a_library_with_no_jax_to_read_says_so(library, monkeypatch):
    from jaxmap.commands import missing_rules

    monkeypatch.setattr(missing_rules, "jax_release", lambda release: None)
    _answer_, text = _answer(library, "Batching rule for 'curl' not implemented")
    assert "(the indexed tree is not jax, and no jax release" in text


def test_no_lowering_anywhere_is_fixed_by_a_default_lowering_first(library):
    answer, text = _answer(library, _jit(library, "swap", "return swap_p.bind(x, y)",
                                         "jax.jit(swap)(1.0, 2.0)"))
    assert _advice(text) == ["mlir.register_lowering(swap_p, rule)",
                             "mlir.register_lowering(swap_p, rule, platform='cpu')"]
    assert answer.missing.flag == ""  # new-primitive's default lowering, for every platform


def test_a_lowering_other_platforms_have_keeps_the_platform_form(library):
    _answer_, text = _answer(library, _jit(library, "edge", "return edge_p.bind(x)",
                                           "jax.jit(edge)(1.0)"))
    assert _advice(text) == ["mlir.register_lowering(edge_p, rule, platform='cpu')"]
    assert "jaxmap new-primitive NAME --platform cpu --dry-run" in text


def test_under_jit_the_users_line_is_the_code_that_binds(library):
    bind = "return swap_p.bind(x, y)"
    answer, text = _answer(library, _jit(library, "swap", bind, "jax.jit(swap)(1.0, 2.0)"))
    assert (answer.user.path, answer.user.line) == (_ops(library), _line(bind))
    assert f"  your line      {_ops(library)}:{_line(bind)}  {bind}" in text.splitlines()
    assert "  transformed by jax.jit  /home/me/run.py:5  jax.jit(swap)(1.0, 2.0)" in text


@pytest.mark.parametrize(("text", "fix"), [
    ("MLIR translation rule for primitive 'swap' not found for platform cpu",
     "has no lowering for the platform"),
    ("Abstract evaluation for 'bare' not implemented", "has no abstract evaluation rule"),
])
def test_lowering_and_abstract_eval_say_what_usually_fixes_them(library, text, fix):
    answer, shown = _answer(library, text)
    assert answer.fix is not None and fix in answer.fix.fix
    assert "(jaxmap shows where and how above)" in answer.fix.fix
    assert "  usually fixes  " in shown


def test_a_transposing_call_the_chain_shows_twice_is_named_once(library):
    bind, call = "return curl_p.bind(x)", "jax.linear_transpose(curl, 1.0)(1.0)"
    message = "Transpose rule (for reverse-mode differentiation) for 'curl' not implemented"
    paste = ("Traceback (most recent call last):\n"
             + _frame("/home/me/run.py", 7, "<module>", call)
             + _frame(_ops(library), _line(bind), "curl", bind)
             + "jax._src.source_info_util.JaxStackTraceBeforeTransformation: "
               f"NotImplementedError: {message}\n" + _CAUSE
             + "Traceback (most recent call last):\n"
             + _frame("/home/me/run.py", 7, "<module>", call)
             + f"NotImplementedError: {message}\n" + _NOTE)
    answer, text = _answer(library, paste)
    assert answer.not_linear is not None
    assert answer.not_linear.called_at == (("/home/me/run.py", 7, call),)
    assert sum("/home/me/run.py:7" in line for line in text.splitlines()
               if not line.startswith(("  your line", "  transformed by"))) == 1


@pytest.mark.parametrize(("release", "chosen"), [
    ("0.4.38", "0.4.38"),  # the release the paste ran, where a snapshot holds it
    ("0.5.0", "0.4.38"),  # else the newest snapshot older than it
    ("0.1.0", "0.4.38"),  # older than all: the oldest
])
def test_the_registrars_are_those_of_the_release_that_ran(release, chosen):
    from jaxmap.commands.registrations import jax_release

    version, index = jax_release(release)
    assert version == chosen and index.jax_version == chosen
    assert index.public_paths_of("jax._src.interpreters.batching.defvectorized")

"""What `binds` and `path` say, as a reader can check it: one answer on every run, each
step saying how it happens, what binds at trace time first, and path agreeing with
binds."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from functools import partial

from jaxmap import tools
from jaxmap.cli import main
from jaxmap.commands.chains import handed_words
from jaxmap.session import Session
from jaxmap.knowledge.interpreters import is_interpreter, module_order
from jaxmap.store.read_graph import _run_order

_BOTH_RULES = 8  # primitives whose impl and lowering rule are one function


def _both_rules_tree(root) -> None:
    """A tree where binding each `q{i}_p` runs one function as its impl and its lowering
    rule, and that function binds `p_p`: each chain from `api{i}` may say either rule."""
    lines = ["from jax._src import core", "from jax._src.interpreters import mlir",
             "p_p = core.Primitive('p')"]
    for i in range(_BOTH_RULES):
        lines += [f"q{i}_p = core.Primitive('q{i}')",
                  f"def _both{i}(x):\n  return p_p.bind(x)",
                  f"q{i}_p.def_impl(_both{i})", f"mlir.register_lowering(q{i}_p, _both{i})",
                  f"def api{i}(x):\n  return q{i}_p.bind(x)"]
    (root / "m.py").write_text("\n".join(lines) + "\n")


def test_binds_answers_alike_whatever_the_hash_seed(tmp_path, capsys):
    _both_rules_tree(tmp_path)
    assert main(["index", "--root", str(tmp_path)]) == 0
    capsys.readouterr()
    answers = set()
    for seed in ("1", "2", "3"):
        done = subprocess.run([sys.executable, "-m", "jaxmap", "binds", "p", "--all", "--json",
                               "--root", str(tmp_path)], capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}, check=True)
        answers.add(done.stdout)
    assert len(answers) == 1
    steps = {f["name"]: f["steps"] for f in json.loads(answers.pop())["found"]}
    assert steps["m.api0"][0] == "binds `q0_p`, which runs its impl rule"  # the tie-break


def test_the_order_of_rules_run_at_binds_does_not_depend_on_the_rows_order():
    rows = [(binder, rule, line, True, "q_p", kind, platform, caller)
            for binder in (3, 1) for rule in (9, 7) for line in (5, 2)
            for kind in ("lowering", "impl") for platform in (None, "cuda")
            for caller in (None, "m._impl")]
    for by_function in (True, False):
        orders = set()
        for seed in range(5):
            shuffled = rows[:]
            random.Random(seed).shuffle(shuffled)
            orders.add(tuple(sorted(shuffled, key=partial(_run_order, by_function))))
        assert len(orders) == 1


_HANDING = {
    "lib.py": "from jax._src import core\np_p = core.Primitive('p')\n"
              "def psum(x):\n  return p_p.bind(x)\n",
    "m.py": "import lib\n"
            "def reduce(x, parallel_reduce=None):\n  return x\n"
            "def total(x):\n  return reduce(x, parallel_reduce=lib.psum)\n"
            "class Box:\n  def go(self, x):\n    return self.put(x)\n"
            "  def put(self, x):\n    return lib.psum(x)\n"
            "def direct(x):\n  return lib.psum(x)\n"
            "def defaulted(x, reduce_fn: object = lib.psum):\n  return x\n"
            "def spread(x):\n  return reduce(\n    x,\n    lib.psum)\n",
}


def _tree(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).write_text(text)


def _binds(capsys, root, *argv) -> dict:
    assert main(["binds", *argv, "--root", str(root), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_each_step_says_how_it_happens(tmp_path, capsys):
    _tree(tmp_path, _HANDING)
    steps = {f["name"]: f["steps"] for f in _binds(capsys, tmp_path, "p", "--all")["found"]}
    assert steps["m.total"] == ["hands `lib.psum` as `parallel_reduce=`", "binds"]
    assert steps["m.Box.go"] == ["dispatches through `self.put`", "calls", "binds"]
    assert steps["m.direct"] == ["calls", "binds"]
    assert steps["m.defaulted"][0] == "hands `lib.psum` as the default of `reduce_fn`"
    assert steps["m.spread"][0] == "hands `lib.psum` to `reduce`"  # lines below the call
    assert main(["binds", "p", "--root", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "[m.total -hands `lib.psum` as `parallel_reduce=`-> lib.psum -binds-> p_p.bind]" in text
    with Session(str(tmp_path)) as session:  # MCP answers the same words
        served = json.loads(tools.call(session, "binds", {"prim": "p", "everything": True}))
    assert {f["name"]: f["steps"] for f in served["found"]} == steps


_RULES = {
    "m.py": "from jax._src import core\nfrom jax._src.interpreters import mlir\n"
            "p_p = core.Primitive('p')\nq_p = core.Primitive('q')\n"
            "def _q_lowering(ctx, x):\n  return p_p.bind(x)\n"
            "mlir.register_lowering(q_p, _q_lowering)\n"
            "def through_rule(x):\n  return q_p.bind(x)\n"
            "def traced(x):\n  return p_p.bind(x)\n"
            "def longer(x):\n  return traced(x)\n",
}


def test_binds_answers_what_binds_when_traced_and_counts_the_rest(tmp_path, capsys):
    _tree(tmp_path, _RULES)
    default = _binds(capsys, tmp_path, "p")
    # m.traced binds it itself; m.longer through a helper: the most direct first
    assert [f["name"] for f in default["found"]] == ["m.traced", "m.longer"]
    assert all(f["trace_time"] and f["public"] for f in default["found"])
    everything = _binds(capsys, tmp_path, "p", "--all")
    assert default["others"] == everything["count"] - default["count"] == 2
    assert {f["name"]: f["trace_time"] for f in everything["found"]}["m.through_rule"] is False
    assert main(["binds", "p", "--root", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "2 public functions can call p_p.bind when traced"
    assert lines[-1] == "and 2 more reach it: 1 through other primitives' rules, 1 private; " \
                        "--all lists them"
    assert everything["others_why"] == {} and default["others_why"] == {
        "lowering_rule": 1, "private": 1}


def test_binds_lists_more_than_a_screen_of_binders_by_module(tmp_path, capsys):
    _tree(tmp_path, {"a.py": "from jax._src import core\np_p = core.Primitive('p')\n"
                             + "".join(f"def f{i:02}(x):\n  return p_p.bind(x)\n"
                                       for i in range(30)),
                     "b.py": "from a import f00\n"
                             + "".join(f"def g{i:02}(x):\n  return f00(x)\n"
                                       for i in range(20))})
    assert main(["binds", "p", "--root", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "50 public functions can call p_p.bind when traced"
    assert lines[1].startswith("  a (30): f00, f01,") and lines[-2].endswith(" g18, g19")
    assert [line.split(" (")[0] for line in lines[1:-1] if not line.startswith("   ")] \
        == ["  a", "  b"]
    assert lines[-1] == "  (most direct first; each one's chain: jaxmap path MODULE.NAME p_p; " \
                        "all here: --chains)"
    assert max(map(len, lines)) <= 100 and len(lines) < 10
    assert main(["binds", "p", "--root", str(tmp_path), "--chains"]) == 0
    chains = capsys.readouterr().out.splitlines()
    assert len(chains) == 51 and chains[1].endswith("[a.f00 -binds-> p_p.bind]")


def test_path_shows_first_the_chain_binds_gives(tmp_path, capsys):
    _tree(tmp_path, {**_HANDING, **{"n.py": _RULES["m.py"]}})
    for prim in ("p", "q"):
        for found in _binds(capsys, tmp_path, prim, "--all")["found"]:
            assert main(["path", found["name"], f"{prim}_p", "--root", str(tmp_path),
                         "--json"]) == 0
            first = json.loads(capsys.readouterr().out)["chains"][0]
            names = [first[0]["caller"]] + [step["callee"] for step in first]
            assert names == found["chain"] and [s["how"] for s in first] == found["steps"]


def test_path_and_binds_agree_on_the_installed_jax(installed_index):
    from jaxmap.commands.callgraph import binds
    from jaxmap.commands.path import path

    for prim in ("psum_p", "cumsum_p", "dot_general_p"):
        answer = binds(installed_index, prim)
        for found in answer.found[:: max(1, len(answer.found) // 4)]:
            first = path(installed_index, found.label, prim, most=1, depth=99).chains[0]
            assert (first[0].caller, *(step.callee for step in first)) == found.chain
            assert tuple(step.how for step in first) == found.steps
            assert found.depth == len(found.steps)  # the bind one of them


def test_interpreters_and_the_order_of_public_modules():
    assert is_interpreter("jax._src.core.eval_jaxpr")
    assert is_interpreter("jax._src.pallas.hlo_interpreter.eval_jaxpr_recursive")
    assert not is_interpreter("jax._src.core.eval_jaxpr_helper")
    names = ["jax.experimental.sparse.todense", "jax.random.normal", "jax.scipy.special.erf",
             "jax.nn.relu", "jax.lax.cumsum", "jax.numpy.sum", "jax.numpy.cumsum",
             "jax.nn.initializers.orthogonal", "jax.jit", "jax.scipy.fft.dct"]
    assert sorted(names, key=module_order) == [
        "jax.numpy.cumsum", "jax.numpy.sum", "jax.lax.cumsum", "jax.nn.relu",
        "jax.nn.initializers.orthogonal", "jax.random.normal", "jax.scipy.special.erf",
        "jax.scipy.fft.dct", "jax.jit", "jax.experimental.sparse.todense"]


HANDED = [  # (source lines, line of the call row, text handed, words)
    (["  return reduce(x, parallel_reduce=lib.psum)"], 1, "lib.psum",
     "hands `lib.psum` as `parallel_reduce=`"),
    (["def f(x, op: Callable = lax.add):"], 1, "lax.add",
     "hands `lax.add` as the default of `op`"),
    (["  return update(", "      x, idx(i), lax.scatter_add,", "      mode)"], 2,
     "lax.scatter_add", "hands `lax.scatter_add` to `update`"),
    (["  table = {", "      'mean': reductions.mean}"], 2, "reductions.mean",
     "hands `reductions.mean` in a dict or set"),
    (["  fns = [_a, _b]"], 1, "_b", "hands `_b` in a list"),
    (["  g = _helper"], 1, "_helper", "hands `_helper` as `g`"),
    (["def f(x,", "      op=lax.max):"], 2, "lax.max", "hands `lax.max` as the default of `op`"),
    (["  g(*fns, key=lambda k: k, fn=_h)"], 1, "_h", "hands `_h` as `fn=`"),
    (["  return x == other_fn"], 1, "other_fn", "hands `other_fn` on"),
    (["  nothing here"], 1, "lib.psum", "hands `lib.psum` on"),
]


def test_a_handed_function_names_where_it_goes():
    for lines, line, text, words in HANDED:
        assert handed_words(lines, line, text) == words, lines

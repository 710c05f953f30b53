"""What `binds` and `path` say that a reader can check: one answer on every run."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from jaxmap.cli import main

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

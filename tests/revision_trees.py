"""Small git repositories for the review tests: a tree shaped like JAX (a core with
`Primitive`, the rule registries, a lax module and its public face, a test file),
committed, then changed commit by commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

CORE = """\
class Primitive:
  def __init__(self, name):
    self.name = name

  def bind(self, *args):
    return args

  def def_impl(self, impl):
    return impl

  def def_abstract_eval(self, rule):
    return rule
"""
DISPATCH = """\
def apply_primitive(prim, *args):
  return prim, args
"""
AD = """\
primitive_jvps = {}
primitive_transposes = {}


def defjvp(prim, *jvps):
  primitive_jvps[prim] = jvps
"""
BATCHING = "primitive_batchers = {}\n"
MLIR = """\
def register_lowering(prim, rule, platform=None):
  return rule
"""


def primitive(name: str, transpose: bool = True, lowering: bool = True,
              batching: bool = True) -> str:
    """One primitive with its rules, as lax modules write them."""
    lines = [f"{name}_p = core.Primitive('{name}')",
             f"{name}_p.def_impl(partial(dispatch.apply_primitive, {name}_p))",
             f"{name}_p.def_abstract_eval(lambda x: x)",
             f"ad.defjvp({name}_p, lambda g, x: g)"]
    if transpose:
        lines.append(f"ad.primitive_transposes[{name}_p] = _{name}_transpose")
    if lowering:
        lines.append(f"mlir.register_lowering({name}_p, _{name}_lowering)")
    if batching:
        lines.append(f"batching.primitive_batchers[{name}_p] = _{name}_batcher")
    rules = "".join(f"\n\ndef _{name}_{rule}(*args):\n  return args\n"
                    for rule in ("transpose", "lowering", "batcher"))
    return rules + "\n\n" + "\n".join(lines) + "\n"


OPS_HEAD = """\
from functools import partial

from jax._src import core, dispatch
from jax._src.interpreters import ad, batching, mlir


def neg(x):
  return neg_p.bind(x)


def sin(x):
  if x is None:
    raise ValueError("sin needs an array, not None")
  return sin_p.bind(x)


def cos(x):
  return cos_p.bind(x)


def exp(x):
  return exp_p.bind(x)
"""
PUBLIC = "from jax._src.lax.ops import cos as cos, exp as exp, neg as neg, sin as sin\n"
TESTS = """\
from jax import lax


def test_neg():
  lax.neg(1.0)


def test_sin():
  lax.sin(1.0)
"""


def base_files() -> dict[str, str]:
    ops = OPS_HEAD + "".join(primitive(name) for name in ("neg", "sin", "cos", "exp"))
    return {"jax/__init__.py": "", "jax/lax/__init__.py": PUBLIC, "jax/_src/__init__.py": "",
            "jax/_src/core.py": CORE, "jax/_src/dispatch.py": DISPATCH,
            "jax/_src/interpreters/__init__.py": "", "jax/_src/interpreters/ad.py": AD,
            "jax/_src/interpreters/batching.py": BATCHING,
            "jax/_src/interpreters/mlir.py": MLIR, "jax/_src/lax/__init__.py": "",
            "jax/_src/lax/ops.py": ops, "tests/ops_test.py": TESTS,
            "README.md": "a tree shaped like jax\n"}


def changed_files() -> dict[str, str]:
    """The change a review looks at: a new primitive `tan` with no batching rule (its
    siblings all have one), public and untested; cos loses its lowering; sin's message
    is reworded; exp's public function binds it through a new helper."""
    ops = base_files()["jax/_src/lax/ops.py"]
    ops = ops.replace("sin needs an array, not None", "sin takes an array; got None")
    ops = ops.replace("def exp(x):\n  return exp_p.bind(x)\n",
                      "def exp(x):\n  return _exp(x)\n\n\ndef _exp(x):\n  return exp_p.bind(x)\n")
    ops = ops.replace("mlir.register_lowering(cos_p, _cos_lowering)\n", "")
    ops += "\n\ndef tan(x):\n  return tan_p.bind(x)\n" + primitive("tan", batching=False)
    return {"jax/_src/lax/ops.py": ops,
            "jax/lax/__init__.py": PUBLIC.replace("sin as sin", "sin as sin, tan as tan")}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    """Write `files` into the work tree, commit them all, and give the commit's hash."""
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m",
        message)
    return git(repo, "rev-parse", "HEAD").strip()


def make_repo(path: Path) -> Path:
    """A repository with two commits: the base tree, then `changed_files`."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    commit(path, base_files(), "base")
    commit(path, changed_files(), "change")
    return path




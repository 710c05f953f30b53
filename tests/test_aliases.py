"""A variable that only names a function (`ref = kernel.ref` in a package `__init__`,
`swish = silu`) and a re-export under another name (`from .util import helper as
assist`) are names of that function: one binder with its public paths merged, shown
by the path that keeps its own name, the others listed as aliases."""

from __future__ import annotations

import json

from test_callgraph import run_tree

_KERNEL = {  # `ref` aliased in the package's __init__, as ragged_paged_attention does
    "pkg/__init__.py": "",
    "pkg/core.py": "from jax._src import core\np_p = core.Primitive('p')\n",
    "pkg/kern/__init__.py": "from pkg.kern import kernel\n\nref = kernel.ref\n",
    "pkg/kern/kernel.py": "from pkg.core import p_p\n\n"
                          "def ref(x):\n  return p_p.bind(x)\n\n"
                          "def user(x):\n  return ref(x)\n",
    "pkg/kern/_priv.py": "from pkg.kern.kernel import ref\n_ref = ref\n",
}
_RENAMED = {
    "pkg/__init__.py": "from .util import helper as assist\n",
    "pkg/util.py": "def helper(x):\n  return x\n",
    "pkg/use.py": "from pkg.util import helper\n\ndef caller(x):\n  return helper(x)\n",
}


def _write(root, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def test_an_alias_in_a_package_init_is_the_function_it_names(capsys, tmp_path):
    _write(tmp_path, _KERNEL)
    binds = json.loads(run_tree(capsys, tmp_path, "binds", "p", "--all", "--json"))
    assert [(f["name"], f["kind"], f["file"]) for f in binds["found"]] == [
        ("pkg.kern.ref", "function", "pkg/kern/kernel.py"),
        ("pkg.kern.kernel.user", "function", "pkg/kern/kernel.py")]
    assert binds["others"] == 0  # the aliases are no private binders either
    text = run_tree(capsys, tmp_path, "binds", "p").splitlines()
    assert text[0] == "2 public functions can call p_p.bind when traced"
    located = json.loads(run_tree(capsys, tmp_path, "locate", "pkg.kern.kernel.ref", "--json"))
    assert sorted(located["definitions"][0]["public_paths"]) == \
        ["pkg.kern.kernel.ref", "pkg.kern.ref"]
    assert run_tree(capsys, tmp_path, "locate", "pkg.kern._priv._ref").splitlines()[0] == \
        "variable pkg.kern._priv._ref  pkg/kern/_priv.py:2  (an alias of pkg.kern.kernel.ref: " \
        "its public paths are that function's)"
    mapped = json.loads(run_tree(capsys, tmp_path, "repo-map", "--json"))
    assert [(b["path"], b["file"]) for b in mapped["public_binds"]] == [
        ("pkg.kern.kernel.user", "pkg/kern/kernel.py"), ("pkg.kern.ref", "pkg/kern/kernel.py")]


def test_callers_lists_an_alias_as_one_not_as_a_caller(capsys, tmp_path):
    _write(tmp_path, _KERNEL)
    callers = json.loads(run_tree(capsys, tmp_path, "callers", "ref", "--json"))
    assert callers["targets"] == ["pkg.kern.ref"]  # the variable is the function
    assert [f["name"] for f in callers["found"]] == ["pkg.kern.kernel.user"]
    assert callers["also_named"] == [{"name": "pkg.kern.ref", "aliases": ["pkg.kern._priv._ref"]}]


def test_a_function_is_shown_by_its_own_name_its_renames_as_aliases(capsys, tmp_path):
    _write(tmp_path, _RENAMED)
    text = run_tree(capsys, tmp_path, "callers", "pkg.util.helper").splitlines()
    assert text == ["1 caller of pkg.util.helper, at its first call",
                    "  (pkg.util.helper is also named pkg.assist: aliases of it)",
                    "  pkg.use.caller  pkg/use.py:4  [pkg.use.caller -> pkg.util.helper]"]
    calls = json.loads(run_tree(capsys, tmp_path, "calls", "caller", "--json"))
    assert [f["name"] for f in calls["found"]] == ["pkg.util.helper"]

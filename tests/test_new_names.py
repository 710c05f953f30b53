"""`jaxmap new KIND NAME` refuses a NAME its generated code already uses."""

from __future__ import annotations

import ast

import pytest

from jaxmap.errors import SpecError
from jaxmap.knowledge import rungs
from jaxmap.scaffold import kinds
from jaxmap.scaffold.names_used import names_used

# Each kind whose module defines a function named NAME (pallas names its `NAME_add`).
CASES = [case for case in rungs.examples("jm_", every_style=True)
         if case[0] not in ("primitive", "pallas")]


def test_names_used_reads_imports_parameters_locals_and_builtins():
    text = ("import numpy as np\nfrom a.b import c\nimport os.path\n\n"
            "def own(x, *rest, k=1):\n  y = len(x)\n  return np, c, y\n\n"
            "class Own:\n  def method(self):\n    pass\n")
    assert names_used(text) == {"np", "c", "os", "own", "x", "rest", "k", "y", "len",
                                "Own", "self"}


@pytest.mark.parametrize("kind, name, style", CASES, ids=str)
def test_each_parameter_of_the_generated_function_is_refused(kind, name, style, tmp_path):
    """`def x(x):` would shadow the function inside its own body and tests."""
    files = {c.label: c.new for c in kinds.generate(kind, name, out=str(tmp_path), style=style)}
    function = next(node for node in ast.parse(files[f"{name}.py"]).body
                    if isinstance(node, ast.FunctionDef) and node.name == name)
    params = [arg.arg for arg in function.args.args]
    assert params
    for param in params:
        with pytest.raises(SpecError, match="would shadow a name the code"):
            kinds.generate(kind, param, out=str(tmp_path), style=style)


@pytest.mark.parametrize("kind, name", [("custom-jvp", "x"), ("custom-vjp", "x"),
                                        ("custom-partitioning", "x"),
                                        ("custom-partitioning", "mesh"), ("ffi", "register"),
                                        ("export", "print")])
def test_a_name_the_code_uses_is_one_line_and_writes_nothing(kind, name, tmp_path, capsys):
    from jaxmap.cli import main

    assert main(["new", kind, name, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"name {name!r} would shadow" in err, err
    assert list(tmp_path.iterdir()) == []


def test_a_class_name_the_code_uses_is_refused(tmp_path):
    """hijax custom-vjp defines class `VJPHiPrimitive`-subclass `ClassName(name)`."""
    with pytest.raises(SpecError, match="class 'VJPHiPrimitive'"):
        kinds.generate("custom-vjp", "v_j_p_hi_primitive", out=str(tmp_path),
                       style="hijax", jax_version="0.10.2")


@pytest.mark.parametrize("kind, name", [("custom-jvp", "mesh"), ("pallas", "x")])
def test_a_name_only_another_kind_or_a_derived_name_uses_is_accepted(kind, name, tmp_path):
    """pallas's module uses `x` only inside `NAME_add`, never NAME itself."""
    assert kinds.generate(kind, name, out=str(tmp_path))

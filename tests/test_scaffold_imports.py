"""Generated modules import exactly the names their code reads."""

from __future__ import annotations

import pytest

from jaxmap.scaffold import imports
from jaxmap.scaffold.imports import LOCAL, STDLIB, Import

TABLE = (Import("os", section=STDLIB), Import("jax"), Import("jax.numpy", asname="jnp"),
         Import("jax.sharding", "PartitionSpec", "P"), Import("jax.sharding", "Mesh"),
         Import("jax.sharding", "NamedSharding"), Import("numpy", asname="np"),
         Import("jax.interpreters", "mlir"), Import("jax.interpreters", "ad"),
         Import("my_op", "my_op", section=LOCAL))


@pytest.mark.parametrize("code, block", [
    ("x = jnp.sin(1)\n", "import jax.numpy as jnp"),
    ('"""jax.numpy and np."""\n# os.path\ny = a.jax\n', ""),
    ("ad.defjvp(mlir.x, my_op)\nos.sep\n",
     "import os\n\nfrom jax.interpreters import ad, mlir\n\nfrom my_op import my_op"),
    ("jax.jit(np.sin, Mesh, NamedSharding, P)\n",
     ("import jax\nimport numpy as np\nfrom jax.sharding import Mesh, NamedSharding\n"
      "from jax.sharding import PartitionSpec as P")),
])
def test_needed_keeps_what_the_code_reads_sorted_as_ruff_wants(code, block):
    assert imports.needed(TABLE, code) == block


def test_in_table_order_one_per_line():
    code = "P(Mesh, ad, jnp)\n"
    assert imports.needed(TABLE, code, sort=False) == (
        "import jax.numpy as jnp\nfrom jax.sharding import PartitionSpec as P\n"
        "from jax.sharding import Mesh\nfrom jax.interpreters import ad")


def test_missing_leaves_out_what_the_module_binds():
    assert imports.missing(TABLE, "ad.x(jnp.y, np.z)\n", {"np", "ad"}) == [
        "import jax.numpy as jnp"]

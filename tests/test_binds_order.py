"""The order `binds` lists functions in, on a small tree written here: the most direct
first (fewest steps to the `.bind`), `jax.experimental` and the like after the rest,
then by module and name; the same in text, JSON and MCP, page after page."""

from __future__ import annotations

import json

import pytest
from inline import written_tree

from jaxmap.cli import main

_TREE = {
    "prim.py": "from jax._src import core\np_p = core.Primitive('p')\n",
    # alpha sorts first by module; its functions reach the bind through zeta's.
    "alpha.py": ("from zeta import direct\n"
                 "def far(x):\n  return near(x)\n"
                 "def near(x):\n  return direct(x)\n"),
    "zeta.py": ("from prim import p_p\n"
                "def direct(x):\n  return p_p.bind(x)\n"
                "def also(x):\n  return p_p.bind(x)\n"),
    "jax/__init__.py": "", "jax/experimental/__init__.py": "",
    "jax/experimental/fast.py": "from prim import p_p\ndef quick(x):\n  return p_p.bind(x)\n",
}
_ORDER = ["zeta.also", "zeta.direct", "alpha.near", "alpha.far", "jax.experimental.fast.quick"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return written_tree(tmp_path_factory, _TREE, "order")


def _json(capsys, tree, *argv) -> dict:
    assert main(["binds", "p", "--json", "--root", tree, *argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_lists_the_most_direct_first(tree, capsys):
    found = _json(capsys, tree)["found"]
    assert [f["name"] for f in found] == _ORDER
    assert [f["depth"] for f in found] == [1, 1, 2, 3, 1]


def test_text_lists_them_in_the_same_order(tree, capsys):
    assert main(["binds", "p", "--root", tree]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[1:1 + len(_ORDER)]] == _ORDER


def test_pages_follow_one_another(tree, capsys):
    pages = [_json(capsys, tree, "--limit", "2", "--offset", str(offset))
             for offset in (0, 2, 4)]
    assert [f["name"] for page in pages for f in page["found"]] == _ORDER
    assert [page["next_offset"] for page in pages] == [2, 4, None]


def test_the_mcp_tool_pages_alike(tree):
    from jaxmap import tools
    from jaxmap.session import Session

    with Session(tree) as session:
        first = json.loads(tools.call(session, "binds", {"name": "p", "limit": 2}))
        second = json.loads(tools.call(session, "binds", {"name": "p", "limit": 2,
                                                          "offset": first["next_offset"]}))
    assert [f["name"] for f in first["found"] + second["found"]] == _ORDER[:4]

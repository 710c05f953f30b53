"""The command table is the one source of every command's name, doc and parameters:
the CLI and MCP are built from it, and the README is held to it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jaxmap import tools
from jaxmap.cli import cli
from jaxmap.commands.registry import COMMANDS
from jaxmap.dispatch import load

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_every_row_names_functions_that_exist(command):
    assert callable(load(command.run))
    assert all(callable(load(reference)) for reference in command.render.values())
    assert "json" in command.render


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_the_cli_command_takes_every_cli_parameter_of_its_row(command):
    built = cli.get_command(None, command.name)
    names = {p.name for p in built.params}
    assert {p.name for p in command.params if p.cli} <= names
    assert built.help == command.doc


def test_mcp_serves_exactly_the_rows_marked_for_it():
    assert [t.name for t in tools.TOOLS] == [c.tool for c in COMMANDS if c.mcp]


def test_the_readme_lists_every_command():
    table = README[README.index("## What it answers"):README.index("Every command takes")]
    listed = set(re.findall(r"`jaxmap ([a-z-]+)", table))
    assert {c.name for c in COMMANDS} <= listed
    assert set(cli.list_commands(None)) <= listed | {"index"}


def test_the_readme_tool_table_gives_each_tools_arguments():
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| ([^|]*) \|", README, re.MULTILINE))
    for tool in tools.TOOLS:
        assert tool.name in rows, tool.name
        written = re.findall(r"`([a-z_]+)`", rows[tool.name])
        assert written == [p.name for p in tool.params], tool.name


def test_a_declared_minimum_is_checked_on_both_front_ends(capsys):
    from jaxmap.cli import main

    assert main(["callers", "jax.lax.psum", "--depth", "0"]) == 2
    assert "--depth" in capsys.readouterr().err
    with pytest.raises(Exception, match="depth must be at least 1"):
        tools.call(None, "callers", {"name": "jax.lax.psum", "depth": 0})


def test_the_readme_mcp_row_names_every_tool():
    row = next(line for line in README.splitlines() if line.startswith("| `jaxmap mcp"))
    served = row.split("|")[2]
    assert re.findall(r"`([a-z_]+)`", served) == [t.name for t in tools.TOOLS]


def test_the_readme_graph_row_names_every_format():
    from jaxmap.render.graphs import FORMATS

    row = next(line for line in README.splitlines() if line.startswith("| `jaxmap graph"))
    written = re.search(r"--format ([a-z\\|]+)\]", row).group(1).split("\\|")
    assert tuple(written) == FORMATS


def test_the_readme_says_which_options_new_primitive_has_and_new_lacks():
    """`jaxmap new primitive` was said to be "the same as" `new-primitive`, whose
    --linear, --arity, --params it does not take: the row names each of them."""
    def options(name):
        [command] = [c for c in COMMANDS if c.name == name]
        return {p.flag or "--" + p.name.replace("_", "-") for p in command.params
                if p.cli and not p.positional}

    row = next(line for line in README.splitlines() if line.startswith("| `primitive` |"))
    assert "the same as" not in row
    assert {o for o in options("new-primitive") - options("new") if f"`{o}`" not in row} \
        == set()

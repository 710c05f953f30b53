"""The public names a user imports that are not functions, for REPO-MAP-NAMES.md:
namespaces, classes and enums, tables and other values, by public module, each at its
definition; and the configuration options (`jax.config.update('jax_enable_x64', ...)`)
at the line that defines each.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from typing import NamedTuple

from jaxmap.knowledge.orientation import CONFIG_MODULE
from jaxmap.store.rows import shown_path

ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"})
# `enable_x64 = bool_state(` and the option name string a few lines below it
_OPTION = re.compile(r"^(\w+)\s*=\s*(?:\w+\.)?(?:\w+_state|define_\w+)\(")
_OPTION_NAME = re.compile(r"""['"](jax_\w+)['"]""")
_OPTION_LINES = 4  # lines after the assignment where its name string may be
_OPTION_CALL = re.compile(r"\w+_state|define_\w+")  # what `_OPTION` calls


class PublicName(NamedTuple):
    path: str  # its shortest public path
    kind: str  # namespace, enum, class, value
    file: str
    line: int


class ConfigOption(NamedTuple):
    name: str  # what jax.config.update takes, `jax_enable_x64`
    variable: str  # the module variable that holds its state, `enable_x64`
    file: str
    line: int


def public_names(index) -> tuple[tuple[str, tuple[PublicName, ...]], ...]:
    """(public module, the names it exports that are not functions), by module, each
    module's names by path."""
    enums = {f"{module}.{name}" for module, _file, name, _line, bases, _aliases
             in index.class_bases() if any(b.rpartition(".")[2] in ENUM_BASES for b in bases)}
    by_module: dict[str, list[PublicName]] = defaultdict(list)
    for d in index.public_definitions():
        if d.kind.value == "function" or not d.public_paths:
            continue
        path = shown_path(d.qualname, d.public_paths)
        kind = {"module": "namespace", "variable": "value"}.get(d.kind.value, "class")
        if d.qualname in enums:
            kind = "enum"
        by_module[path.rpartition(".")[0] or path].append(
            PublicName(path, kind, d.loc.file, d.loc.line))
    return tuple((module, tuple(sorted(set(names)))) for module, names
                 in sorted(by_module.items()))


def config_options(index) -> tuple[ConfigOption, ...]:
    """The options of CONFIG_MODULE, read off its source (none for a snapshot)."""
    variables = [d for d in index.definition_rows()
                 if d.module == CONFIG_MODULE and d.kind == "variable"]
    if not variables:
        return ()
    lines = _lines(os.path.join(str(index.root), variables[0].file))
    options = []
    for d in variables:
        text = lines[d.line - 1] if d.line <= len(lines) else ""
        if not _OPTION.match(text):
            continue
        named = _OPTION_NAME.search(_statement(lines, d.line))
        if named:
            options.append(ConfigOption(named.group(1), d.qualname.rpartition(".")[2],
                                        d.file, d.line))
    return tuple(sorted(options))


def unheld_options(index) -> tuple[ConfigOption, ...]:
    """The options CONFIG_MODULE defines by a top-level call whose result no variable
    holds (`optional_enum_state(name='jax_logging_level', ...)`), each at its call
    (`variable` empty), read off its source (none for a snapshot, or where it does not
    parse)."""
    import ast

    modules = [d for d in index.definitions_named(CONFIG_MODULE)
               if d.kind.value == "module" and d.qualname == CONFIG_MODULE]
    if not modules:
        return ()
    file = modules[0].loc.file
    try:
        tree = ast.parse(_source(os.path.join(str(index.root), file)))
    except (SyntaxError, ValueError):
        return ()
    calls = [node.value for node in tree.body
             if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)]
    return tuple(sorted(ConfigOption(name, "", file, call.lineno) for call in calls
                        if _OPTION_CALL.fullmatch(ast.unparse(call.func).rpartition(".")[2])
                        for name in [_option_named(call)] if name))


def _option_named(call) -> str | None:
    """The option name a call passes as `name=` or as its first argument, if it is a
    string `jax_...`."""
    import ast

    given = [k.value for k in call.keywords if k.arg == "name"] + call.args[:1]
    values = [g.value for g in given if isinstance(g, ast.Constant)]
    return next((v for v in values if isinstance(v, str) and v.startswith("jax_")), None)


def names_option(index, d, option: str) -> bool:
    """Whether the statement assigning definition `d` names config option `option`
    (`num_cpu_devices = config.int_state(name="jax_num_cpu_devices", ...)`)."""
    lines = _lines(os.path.join(str(index.root), d.loc.file))
    return any(named.group(1) == option
               for named in _OPTION_NAME.finditer(_statement(lines, d.loc.line)))


def _statement(lines: list[str], line: int) -> str:
    """The assignment at `line` (1-based) and the lines after it where an option's
    name may be, joined."""
    return " ".join(lines[line - 1:line + _OPTION_LINES])


def _lines(path: str) -> list[str]:
    return _source(path).split("\n")


def _source(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""

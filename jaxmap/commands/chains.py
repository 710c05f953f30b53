"""How each step of a chain happens, in the words that text, JSON and MCP all show:

- `calls`: a call written with the callee's own name;
- `dispatches through `x.f``: a call of a method or attribute (`self.f(...)`, an
  instance's `__call__`, a class's `__init__`);
- `hands `f` as `name=``, `hands `f` as the default of `name``, `hands `f` to `g``,
  `hands `f` in a list`, `hands `f` on`: a function handed as a value, naming the
  parameter, or the call or container it goes through;
- `binds `q_p`, which runs its impl rule` (or lowering rule, naming the rule function
  whose partial calls the next): a bind that runs a rule of another primitive;
- `interprets`: from a function of knowledge/interpreters.py's table;
- `binds`: the last step, to the `.bind`.
"""

from __future__ import annotations

import re

from jaxmap.knowledge.interpreters import is_interpreter
from jaxmap.models import HANDED, RESOLVED

CALLS, BINDS, INTERPRETS = "calls", "binds", "interprets"
_DUNDERS = ("__call__", "__init__")  # what calling an instance or a class runs
_LINES_AROUND = 8  # lines read each side of a handed function, for where it goes


def edge_words(index, pairs: set[tuple[int, int]], nodes: dict) -> dict[tuple[int, int], str]:
    """(caller, callee) -> the words of each call-graph step among `pairs` (a pair both
    called and handed on is called); `nodes`: id -> node of every id in them."""
    best: dict[tuple[int, int], tuple[str, str, int]] = {}
    for caller, callee, text, status, line in index.callees({a for a, _b in pairs}):
        pair = (caller, callee)
        if pair in pairs and status in (RESOLVED, HANDED) \
                and (pair not in best or best[pair][0] == HANDED and status == RESOLVED):
            best[pair] = (status, text, line)
    from jaxmap.commands.callgraph import _source_lines

    words, sources = {}, {}  # sources: each file's lines, read once
    for (caller, callee), (status, text, line) in best.items():
        if is_interpreter(nodes[caller].qualname):
            words[caller, callee] = INTERPRETS
        elif status == HANDED:
            file = nodes[caller].file
            if file not in sources:
                sources[file] = _source_lines(index, file)
            words[caller, callee] = handed_words(sources[file], line, text)
        else:
            words[caller, callee] = call_words(text, nodes[callee].qualname)
    return words


def call_words(text: str, callee: str) -> str:
    """`calls`, or `dispatches through ...` for a call of a method or attribute."""
    leaf = callee.rpartition(".")[2]
    base, _, written = text.rpartition(".")
    if base.split(".")[0] in ("self", "cls") or leaf in _DUNDERS and written != leaf:
        return f"dispatches through `{text}`"
    return CALLS


def handed_words(lines: list[str], line: int, text: str) -> str:
    """`hands `f` as `name=`` (or `as the default of `name``, `to `g``, `in a list`,
    `on`), read from a file's `lines` around `line`, where `f` is written."""
    before = " ".join(lines[max(0, line - 1 - _LINES_AROUND):max(0, line - 1)])
    source = before + " " + " ".join(lines[max(0, line - 1):line - 1 + _LINES_AROUND])
    written = re.compile(rf"(?<![\w.]){re.escape(text)}\b")
    place = written.search(source, len(before)) or written.search(source)
    if place is None:
        return f"hands `{text}` on"
    ahead = source[:place.start()]
    keyword = re.search(r"(\w+)\s*(:\s*[\w.]+(?:\[[^=()]*\])?\s*)=\s*$", ahead) \
        or re.search(r"(\w+)\s*()=\s*$", ahead)  # `name: Type[...] = f`, `name=f`
    kind, name = _enclosing(source, place.start())
    # `def f(x, op=g)`; `op: T = g` in a signature longer than the lines read
    if keyword and (kind == "def" or keyword.group(2) and not kind):
        return f"hands `{text}` as the default of `{keyword.group(1)}`"
    if keyword:
        return f"hands `{text}` as `{keyword.group(1)}{'=' if kind == 'call' else ''}`"
    if kind == "call":
        return f"hands `{text}` to `{name}`"
    return f"hands `{text}` {_CONTAINERS[kind]}" if kind in _CONTAINERS else \
        f"hands `{text}` on"


_CONTAINERS = {"[": "in a list", "{": "in a dict or set"}


def _enclosing(source: str, at: int) -> tuple[str, str]:
    """What the text at `at` is written inside: ("call", g) for an argument of a call
    of `g`, ("def", f) in the parameters of `def f`, ("[", "") or ("{", "") in a
    container, ("", "") at the top or in a bare tuple."""
    depth = 0
    for k in range(at - 1, -1, -1):
        if source[k] in ")]}":
            depth += 1
        elif source[k] in "([{" and depth:
            depth -= 1
        elif source[k] == "(":
            named = re.search(r"(def\s+)?([\w.]+)\s*$", source[:k])
            if named is None:
                return "", ""
            return ("def" if named.group(1) else "call"), named.group(2)
        elif source[k] in "[{":
            return source[k], ""
    return "", ""


def rule_words(prim: str, kind: str, caller: str | None) -> str:
    """A bind that runs a rule: `binds `q_p`, which runs its impl rule`."""
    words = f"binds `{prim}`, which runs its {kind} rule"
    return f"{words} `{caller}`, which calls" if caller else words

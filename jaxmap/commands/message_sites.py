"""JAX's user-facing error and warning messages, for REPO-MAP-MESSAGES.md: each with
its fixed text, its exception, the raise site in the function that checks, and the
public functions nearest to it in the call graph.

A message is user-facing when a public function reaches the function that raises it
(or is that function) within MAX_DEPTH calls; an `assert`-style AssertionError and a
message with less than MIN_LITERAL characters of fixed text are left out. Each site
goes to the page of orientation.MESSAGE_PAGES whose modules hold it (the first page
takes the rest), so that no page is too long to browse.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from jaxmap.knowledge.orientation import MESSAGE_PAGES
from jaxmap.store.message_patterns import MIN_LITERAL, fixed_length, template

MAX_DEPTH = 8  # calls from a public function to the raising function
REACHERS = 3  # public functions named per message, nearest first
LEFT_OUT = ("AssertionError",)


class MessageSite(NamedTuple):
    exception: str  # `warning` for warnings.warn
    text: str  # the fixed text, message_patterns.PLACEHOLDER where a value goes
    file: str
    line: int
    function: str  # qualified name of the function that raises it
    module: str
    reached_from: tuple[str, ...]  # public paths, nearest first
    page: str  # the page of MESSAGE_PAGES it is listed on


def message_sites(index, graph) -> tuple[MessageSite, ...]:
    """The user-facing messages, by module, file and line."""
    reachers: dict[int, tuple[str, ...]] = {}
    sites = []
    for file, line, function, exception, pieces, _returned in index.messages():
        did = graph.ids.get(function)
        if did is None or exception in LEFT_OUT or fixed_length(pieces) < MIN_LITERAL:
            continue
        if did not in reachers:
            reachers[did] = _public_callers(graph, did)
        if reachers[did]:
            module = _module_of(graph, did)
            sites.append(MessageSite(exception, _text(pieces), file, line, function, module,
                                     reachers[did], _page(module)))
    return tuple(sorted(sites, key=lambda s: (s.module, s.file, s.line)))


def _public_callers(graph, did: int) -> tuple[str, ...]:
    """The public paths of the REACHERS public functions nearest `did` up the graph."""
    found = [graph.public[did]] if did in graph.public else []
    for caller, _step in graph.levels(did, graph.up, MAX_DEPTH):
        if len(found) >= REACHERS:
            break
        if caller in graph.public:
            found.append(graph.public[caller])
    return tuple(found)


def _module_of(graph, did: int) -> str:
    """The module of a definition: the longest prefix of its name that is a module."""
    qualname = graph.places[did][0]
    while qualname and graph.places.get(graph.ids.get(qualname, -1), ("", ""))[1] != "module":
        qualname = qualname.rpartition(".")[0]
    return qualname


def _text(pieces: tuple[str, ...]) -> str:
    return template(tuple(re.sub(r"\s+", " ", piece) for piece in pieces)).strip()


def _page(module: str) -> str:
    for page, _title, modules in MESSAGE_PAGES:
        if any(module == m or module.startswith(m + ".") for m in modules):
            return page
    return MESSAGE_PAGES[0][0]

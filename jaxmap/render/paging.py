"""Sized JSON answers: one page of a document's long list, its items cut down to the
fields asked for, with the list's `total` and where the next page starts.

Every command whose `--json` (or MCP answer) can be large pages through here:
`paged(document, "primitives", paging)` keeps `limit` items from `offset`, each with
only `fields`, and, with `chars`, drops items from the end until the whole answer
fits (at least one item stays, so a page always moves on). It adds `total`, `offset`,
`truncated` (items remain after this page) and `next_offset` (null on the last page),
and `over_max_chars` (the answer's size) where the answer still passes `chars`.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import NamedTuple

from jaxmap.errors import ArgumentError


class Paging(NamedTuple):
    """How much of a long list to show: `limit` items (None: all) from `offset`, each
    with only `fields` (empty: every field), the whole answer within `chars`."""

    limit: int | None = None
    offset: int = 0
    fields: tuple[str, ...] = ()
    chars: int | None = None


EVERYTHING = Paging()


def taken(arguments: dict) -> Paging:
    """The page the paging arguments (`limit`, `offset`, `fields`, `max_chars`) ask for,
    taken out of `arguments`."""
    limit, offset = arguments.pop("limit", None), arguments.pop("offset", None)
    fields, chars = arguments.pop("fields", ()), arguments.pop("max_chars", None)
    return Paging(limit, offset or 0, tuple(fields), chars)


def paged(document: dict, key: str, paging: Paging = EVERYTHING) -> dict:
    """`document` with `document[key]` cut to one page, and the page's bookkeeping."""
    items = document[key]
    end = None if paging.limit is None else paging.offset + paging.limit
    window = [pick(item, paging.fields, key) for item in items[paging.offset:end]]

    def answer(kept: int) -> dict:
        following = paging.offset + kept
        more = following < len(items)
        return {**document, key: window[:kept], "total": len(items), "offset": paging.offset,
                "truncated": more, "next_offset": following if more else None}

    if paging.chars is None:
        return answer(len(window))
    fitted = answer(_fitted(window, answer, paging.chars))
    size = len(dump(fitted))
    # what is not paged (a primitive's rules in `locate`) can pass the bound alone: said
    return fitted if size <= paging.chars else {**fitted, "over_max_chars": size}


def capped(items: list, limit: int | None) -> list:
    """The first `limit` of a nested list (all with None); its owner records the total."""
    return items if limit is None else items[:limit]


def pick(item: dict, fields: tuple[str, ...], key: str) -> dict:
    """`item` of the list `key` with only `fields`, in the order asked; ArgumentError for
    a field it lacks."""
    if not fields:
        return item
    unknown = [f for f in fields if f not in item]
    if unknown:
        raise ArgumentError(f"no field {unknown[0]!r} in the items of {key!r}, the list "
                            f"fields cut; their fields are {', '.join(item)}")
    return {f: item[f] for f in fields}


# Whether documents are written without indentation: for MCP answers, which an
# agent's context pays for by the character (a fifth fewer than indented).
COMPACT: ContextVar[bool] = ContextVar("compact_json", default=False)


def dump(document: dict | list) -> str:
    """The JSON text every document is written as: indented, or compact (COMPACT)."""
    import json  # here, not above: `jaxmap locate` in text imports this module, not json

    if COMPACT.get():
        return json.dumps(document, separators=(",", ":"))
    return json.dumps(document, indent=1)


def _fitted(window: list, answer, chars: int) -> int:
    """How many items of `window` (at least one) `answer(kept)` can show within `chars`:
    estimated from each item's size, then settled on the answer's real size."""
    def size(kept: int) -> int:
        return len(dump(answer(kept)))

    used, kept = size(0) + 1, 0
    for item in window:  # two levels deep: each line indented two more, then ",\n"
        text = dump(item)
        used += len(text) + (0 if COMPACT.get() else 2 * (text.count("\n") + 1) + 2)
        if used > chars:
            break
        kept += 1
    while kept > 1 and size(kept) > chars:
        kept -= 1
    while kept < len(window) and size(kept + 1) <= chars:
        kept += 1
    return max(kept, min(1, len(window)))

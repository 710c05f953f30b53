"""User-facing messages a change adds, removes or rewords.

Only the changed files are read: a message elsewhere can move lines, not change. A
message is its exception and its literal pieces; one that both sides hold is
unchanged wherever its line went, even to another function or file. A removed and an added message
raised in the same function with the same exception are paired as reworded, the
nearest lines first; then those of one file and exception whose texts are mostly
alike (a renamed function); what is left is added or removed.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, NamedTuple

from jaxmap.store.message_patterns import template

if TYPE_CHECKING:
    from jaxmap.store.read import Index

_ALIKE = 0.6  # how alike two texts of a renamed function must be to pair (difflib's ratio)


class Message(NamedTuple):
    file: str
    line: int
    function: str
    exception: str
    text: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.file, self.function, self.exception, self.text


class MessageChange(NamedTuple):
    change: str  # added, removed, reworded
    old: Message | None
    new: Message | None


def compare(before: Index, after: Index, files: list[str]) -> list[MessageChange]:
    """How the messages raised in `files` differ from BASE to HEAD."""
    old, new = _messages(before, files), _messages(after, files)
    removed, added = _unmatched(old, new, lambda m: m.key)
    # the same text raised from another file or function: moved, not changed
    removed, added = _unmatched(removed, added, lambda m: (m.exception, m.text))
    changes = []
    for was, now in _pairs(removed, added):
        changes.append(MessageChange("reworded", was, now))
        removed.remove(was)
        added.remove(now)
    changes += [MessageChange("removed", m, None) for m in removed]
    changes += [MessageChange("added", None, m) for m in added]
    return sorted(changes, key=_place)


def _place(change: MessageChange) -> tuple[str, int]:
    message = change.new or change.old
    return (message.file, message.line) if message else ("", 0)


def _messages(index: Index, files: list[str]) -> list[Message]:
    wanted = set(files)
    return [Message(file, line, function or "", exception or "", template(pieces))
            for file, line, function, exception, pieces, _returned in index.messages()
            if file in wanted]


def _unmatched(old: list[Message], new: list[Message], key) -> tuple[list, list]:
    """The messages of each side that the other holds no more of under `key`."""
    kept = Counter(map(key, old)) & Counter(map(key, new))
    return _without(old, kept, key), _without(new, kept, key)


def _without(messages: list[Message], kept: Counter, key) -> list[Message]:
    """`messages` less as many of each key as `kept` counts (first ones first)."""
    left = Counter(kept)
    out = []
    for message in messages:
        if left[key(message)] > 0:
            left[key(message)] -= 1
        else:
            out.append(message)
    return out


def _pairs(removed: list[Message], added: list[Message]) -> list[tuple[Message, Message]]:
    """Removed and added messages of one function and exception, nearest lines first;
    then, of one file and exception, those whose texts are mostly alike (the function
    that raises them was renamed), the most alike first."""
    same_function = [(0, abs(was.line - now.line), i, j) for i, was in enumerate(removed)
                     for j, now in enumerate(added)
                     if (was.file, was.function, was.exception)
                     == (now.file, now.function, now.exception)]
    alike = [(1, -ratio, i, j) for i, was in enumerate(removed)
             for j, now in enumerate(added)
             if (was.file, was.exception) == (now.file, now.exception)
             and (ratio := _likeness(was.text, now.text)) >= _ALIKE]
    pairs, taken_old, taken_new = [], set(), set()
    for *_order, i, j in sorted(same_function + alike):
        if i not in taken_old and j not in taken_new:
            taken_old.add(i)
            taken_new.add(j)
            pairs.append((removed[i], added[j]))
    return pairs


def _likeness(old: str, new: str) -> float:
    from difflib import SequenceMatcher

    return SequenceMatcher(None, old, new, autojunk=False).ratio()

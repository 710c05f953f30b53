"""Sized answers: one page of a long list, chosen fields, a size cap, and the totals
that say what was left out."""

from __future__ import annotations

import json

import pytest

from jaxmap.errors import ArgumentError
from jaxmap.render.paging import Paging, dump, paged

ITEMS = [{"name": f"p{i}", "module": "m", "rules": ["x" * 50] * (i % 3)} for i in range(10)]


def page(paging: Paging) -> dict:
    return paged({"root": "/r", "items": ITEMS}, "items", paging)


@pytest.mark.parametrize("paging, names, next_offset", [
    (Paging(), [f"p{i}" for i in range(10)], None),
    (Paging(limit=3), ["p0", "p1", "p2"], 3),
    (Paging(limit=3, offset=8), ["p8", "p9"], None),
    (Paging(limit=4, offset=6), ["p6", "p7", "p8", "p9"], None),
    (Paging(offset=12), [], None),
])
def test_a_page_and_where_the_next_starts(paging, names, next_offset):
    answer = page(paging)
    assert [item["name"] for item in answer["items"]] == names
    assert answer["total"] == 10 and answer["offset"] == paging.offset
    assert answer["next_offset"] == next_offset
    assert answer["truncated"] is (next_offset is not None)
    assert answer["root"] == "/r"  # the rest of the document is kept


def test_fields_choose_what_each_item_shows():
    answer = page(Paging(limit=2, fields=("name",)))
    assert answer["items"] == [{"name": "p0"}, {"name": "p1"}]


def test_an_unknown_field_is_an_error_naming_the_fields():
    with pytest.raises(ArgumentError, match="no field 'nme' in the items of 'items', the list "
                                            "fields cut; their fields are name, module"):
        page(Paging(fields=("nme",)))


@pytest.mark.parametrize("chars", [300, 600, 1000, 5000])
def test_a_size_cap_drops_items_from_the_end_until_the_answer_fits(chars):
    answer = page(Paging(chars=chars))
    assert len(dump(answer)) <= chars
    shown = len(answer["items"])
    assert answer["next_offset"] == (shown if shown < 10 else None)
    if shown < 10:  # one more item would not have fitted
        bigger = {**answer, "items": ITEMS[:shown + 1]}
        assert len(dump(bigger)) > chars


def test_a_size_cap_keeps_one_item_so_paging_moves_on():
    answer = page(Paging(chars=10, offset=4))
    assert [item["name"] for item in answer["items"]] == ["p4"]
    assert answer["next_offset"] == 5
    # the answer still passes the cap, and says its size
    size = answer.pop("over_max_chars")
    assert size == len(dump(answer)) > 10


def test_an_answer_within_the_cap_says_nothing_of_it():
    assert "over_max_chars" not in page(Paging(chars=5000))
    assert "over_max_chars" not in page(Paging())


def test_pages_walk_the_whole_list_once():
    seen, offset = [], 0
    while offset is not None:
        answer = json.loads(dump(page(Paging(limit=4, offset=offset, chars=400))))
        seen += [item["name"] for item in answer["items"]]
        offset = answer["next_offset"]
    assert seen == [item["name"] for item in ITEMS]

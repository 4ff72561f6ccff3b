"""`_item_texts` (the record's lower bound of its items' JSON) against its definition."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from langchain_result_layer.core.view import ResultView, _item_texts

_VALUES = st.one_of(
    st.text(max_size=30),
    st.integers(),
    st.none(),
    st.lists(st.text(max_size=20), max_size=8),
    st.lists(st.one_of(st.text(max_size=20), st.integers(), st.none()), max_size=8),
)
_ITEMS = st.lists(st.dictionaries(st.sampled_from("abcdef"), _VALUES, max_size=6), max_size=6)


def _definition(view: ResultView) -> int:
    """Every text that is an item's value or an element of a list that is one, quoted; a
    list of texts only also with its brackets and separators."""
    total = 0
    for item in view.items:
        for value in item.values():
            if isinstance(value, str):
                total += len(value) + 2
            elif isinstance(value, list) and all(isinstance(x, str) for x in value):
                total += sum(len(x) for x in value) + 4 * len(value)
            elif isinstance(value, list):
                total += sum(len(x) + 2 for x in value if isinstance(x, str))
    return total


@given(items=_ITEMS)
def test_item_texts_counts_every_text_of_the_items(items: list[dict[str, Any]]) -> None:
    view = ResultView(kind="command", items=items)
    assert _item_texts(view) == _definition(view)


@given(items=_ITEMS)
def test_item_texts_never_exceed_the_record_json(items: list[dict[str, Any]]) -> None:
    """A lower bound: `compact` skips its exact measure only when the record is over."""
    view = ResultView(kind="command", items=items)
    assert _item_texts(view) <= len(json.dumps(items, ensure_ascii=False))
    assert _item_texts(view) <= view.record_size()

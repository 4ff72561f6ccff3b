"""`_item_texts` (the record's lower bound of its items' texts) against its definition."""

from __future__ import annotations

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


def _definition(view: ResultView) -> int:
    """Every text that is an item's value or an element of a list that is one."""
    values = [v for item in view.items for v in item.values()]
    texts = [v for v in values if isinstance(v, str)]
    texts += [x for v in values if isinstance(v, list) for x in v if isinstance(x, str)]
    return sum(map(len, texts))


@given(items=st.lists(st.dictionaries(st.sampled_from("abcdef"), _VALUES, max_size=6), max_size=6))
def test_item_texts_counts_every_text_of_the_items(items: list[dict[str, Any]]) -> None:
    view = ResultView(kind="command", items=items)
    assert _item_texts(view) == _definition(view)

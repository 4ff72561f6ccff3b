"""`ResultView.record_size` and `compact` measure the record exactly, field by field."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core import view as view_module
from langchain_result_layer.core.view import OmittedRange, ResultView

_KEYS = st.one_of(st.text(max_size=6), st.integers(-5, 5), st.booleans(), st.none())
_LEAVES = st.one_of(
    st.text(max_size=300), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none()
)
_JSONISH = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.tuples(inner, inner)
        | st.dictionaries(_KEYS, inner, max_size=5)
    ),
    max_leaves=20,
)
_RANGES = st.builds(
    OmittedRange,
    start_line=st.integers(1, 99),
    end_line=st.integers(1, 99),
    start_char=st.integers(0, 999),
    end_char=st.integers(0, 9_999),
    lines=st.integers(0, 99),
    partial_start=st.booleans(),
)
_VIEWS = st.builds(
    ResultView,
    kind=st.sampled_from(["text", "command", "json"]),
    summary=st.dictionaries(st.text(max_size=8), _JSONISH, max_size=6),
    items=st.lists(st.dictionaries(st.text(max_size=8), _JSONISH, max_size=6), max_size=80),
    observations=st.lists(st.text(max_size=50), max_size=4),
    references=st.dictionaries(st.text(max_size=8), st.text(max_size=40), max_size=3),
    omitted=st.lists(_RANGES, max_size=90),
    store_error=st.one_of(st.none(), st.text(max_size=30)),
    original_artifact=st.one_of(st.none(), st.text(max_size=30)),
)


def _json_size(view: ResultView) -> int:
    data = view.to_dict()
    data.pop("original_artifact", None)
    return len(json.dumps(data, ensure_ascii=False, default=str))


@settings(max_examples=300, deadline=None)
@given(view=_VIEWS)
def test_record_size_is_the_length_of_the_json(view: ResultView) -> None:
    assert view.record_size() == _json_size(view)


def _compact_by_definition(view: ResultView, limit: int) -> ResultView:
    """The steps of `compact`, each decided on the exact JSON size."""
    steps: list[Any] = [
        lambda v: setattr(v, "items", [view_module._without_texts(i, 200, False) for i in v.items]),
        lambda v: setattr(v, "observations", []),
        view_module._cut_ranges,
        lambda v: setattr(v, "items", [view_module._scalars(i) for i in v.items]),
        lambda v: setattr(v, "summary", view_module._scalars(v.summary)),
        view_module._runs,
        view_module._cut_items,
    ]
    for step in steps:
        if _json_size(view) <= limit:
            break
        view.compacted = True
        step(view)
    return view


@settings(max_examples=300, deadline=None)
@given(view=_VIEWS, limit=st.integers(0, 30_000))
def test_compact_takes_the_steps_the_exact_size_asks_for(view: ResultView, limit: int) -> None:
    expected = _compact_by_definition(copy.deepcopy(view), limit)
    assert view.compact(limit=limit).to_dict() == expected.to_dict()

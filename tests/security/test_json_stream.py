"""`?path=` fetches read one value of the record, not the whole parsed document (item 8)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_result_layer import ResultLayer
from langchain_result_layer.stores import InMemoryResultStore
from langchain_result_layer.views._json_stream import LazyArray, PathMissingError, value_at

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=3), c, max_size=4),
    max_leaves=15,
)


@given(value=json_values, indent=st.sampled_from([None, 1, 2]))
def test_value_at_agrees_with_json_loads(value: Any, indent: int | None) -> None:
    raw = json.dumps(value, indent=indent)
    got = value_at(raw, ())
    assert (got.decoded() if isinstance(got, LazyArray) else got) == value
    if isinstance(value, list):
        arr = value_at(raw, ())
        assert len(arr) == len(value)
        assert arr[1:3] == value[1:3]
        for i, element in enumerate(value):
            sub = value_at(raw, (i,))
            assert (sub.decoded() if isinstance(sub, LazyArray) else sub) == element
    if isinstance(value, dict):
        for key, element in value.items():
            if list(value).count(key) == 1:
                sub = value_at(raw, (key,))
                assert (sub.decoded() if isinstance(sub, LazyArray) else sub) == element


def test_missing_paths_say_how_far_they_got() -> None:
    raw = '{"a": [1, 2], "b": {"c": 3}}'
    with pytest.raises(PathMissingError, match=r"\$.a is an array of 2; \[5\] does not exist"):
        value_at(raw, ("a", 5))
    with pytest.raises(PathMissingError) as info:
        value_at(raw, ("z",))
    assert info.value.keys == ["a", "b"]
    with pytest.raises(ValueError, match="not valid JSON"):
        len(LazyArray("[1, 2", 0))


def _fetch(layer: ResultLayer, ref: str) -> Any:
    return layer.fetch_tool.invoke(
        {"type": "tool_call", "id": "f", "name": layer.fetch_tool.name, "args": {"ref": ref}}
    )


def test_pages_of_a_large_array_are_exact() -> None:
    doc = {"meta": {"n": 1}, "items": [{"id": i, "name": f"item {i}"} for i in range(60_000)]}
    raw = json.dumps(doc)
    layer = ResultLayer(
        context_window=128_000,
        store=InMemoryResultStore(max_record_size=None),
        token_counter="approximate",
    )
    meta = layer.store.put(raw, principal=layer.principal_for(None), kind="json")
    ref = f"ref://tool-result/{meta.record_id}/json"
    page = _fetch(layer, f"{ref}?path=$.items&page=1000&page_size=50")
    assert page.status == "success"
    assert "60,000 elements" in str(page.content)
    assert '[49950] {"id": 49950, "name": "item 49950"}' in str(page.content)
    value = _fetch(layer, f"{ref}?path=$.items[59999].name")
    assert '"item 59999"' in str(value.content)
    bad = _fetch(layer, f"{ref}?path=$.items[oops")
    assert bad.status == "error"
    assert "cannot read the JSON path" in str(bad.content)
    missing = _fetch(layer, f"{ref}?path=$.items[70000]")
    assert "an array of 60000" in str(missing.content)

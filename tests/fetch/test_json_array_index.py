"""Pages of a large JSON array reuse the element offsets an earlier fetch located.

The offsets are kept per record id *and* text (length and hash): a page served from them is
the page served without them, and a different text under the same id never uses them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import ToolMessage

from langchain_result_layer import ResultLayer
from langchain_result_layer.stores import InMemoryResultStore
from langchain_result_layer.views import json_view
from langchain_result_layer.views._json_stream import ArrayIndexCache, LazyArray, value_at

CFG = {"configurable": {"tenant_id": "acme", "user_id": "ada", "thread_id": "t1"}}
_NONCE_RE = re.compile(r"tool-output ([a-z2-9]{8})")


def _layer() -> ResultLayer:
    return ResultLayer(context_window=16_000, max_result_tokens=1_000, store=InMemoryResultStore())


def _fetch(layer: ResultLayer, ref: str) -> ToolMessage:
    call = {"type": "tool_call", "id": "f1", "name": "fetch_tool_result", "args": {"ref": ref}}
    message: ToolMessage = layer.fetch_tool.invoke(call, CFG)
    return message


def _same_text(content: Any) -> str:
    text = str(content)
    nonce = _NONCE_RE.search(text)
    return text.replace(nonce.group(1), "NONCE") if nonce else text


def test_pages_served_from_the_index_equal_pages_served_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    layer = _layer()
    doc = {"meta": {"n": 1}, "items": [{"id": i, "tags": ["a", i]} for i in range(30_000)]}
    raw = json.dumps(doc)
    msg = layer.process_tool_message(ToolMessage(content=raw, tool_call_id="c1", name="t"), CFG)
    record = layer.view_of(msg).record_id
    assert record is not None
    refs = [
        f"ref://tool-result/{record}/json?path=$.items&page={page}&page_size=40"
        for page in (1, 2, 750, 400)
    ] + [f"ref://tool-result/{record}/json?path=$.items[29999]"]
    cold = []
    for ref in refs:  # each fetch walks the array from scratch
        monkeypatch.setattr(json_view, "ARRAY_INDEX", ArrayIndexCache())
        cold.append(_same_text(_fetch(layer, ref).content))
    warm = [_same_text(_fetch(layer, ref).content) for ref in refs]  # one shared index
    assert warm == cold
    assert "[29999]" in cold[2]
    assert '"id": 29999' in cold[4]
    assert json_view.ARRAY_INDEX.arrays(record, raw)  # the index was kept
    another = raw.replace('"id": 7,', '"id": 8,', 1)
    assert len(another) == len(raw)
    assert not json_view.ARRAY_INDEX.arrays(record, another)  # only for the same text


def test_the_cache_keeps_large_arrays_of_recent_records_only() -> None:
    cache = ArrayIndexCache(max_records=2, min_elements=100)
    small, large = "[" + ",".join("1" * 50) + "]", "[" + ",".join(["2"] * 500) + "]"
    for record, text in [("AAAAAAAAAA", small), ("BBBBBBBBBB", large)]:
        arrays = cache.arrays(record, text)
        assert len(value_at(text, (), arrays)) > 0
        cache.keep(record, text, arrays)
    assert not cache.arrays("AAAAAAAAAA", small)  # too small to be worth keeping
    assert cache.arrays("BBBBBBBBBB", large)[0].located == 500
    for record in ("CCCCCCCCCC", "DDDDDDDDDD"):
        arrays = cache.arrays(record, large)
        value_at(large, (), arrays).locate(10**9)
        cache.keep(record, large, arrays)
    assert not cache.arrays("BBBBBBBBBB", large)  # the least recent went


_SCALARS = st.one_of(
    st.integers(), st.text(max_size=5), st.booleans(), st.none(), st.floats(allow_nan=False)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    elements=st.lists(_VALUES, max_size=30),
    indent=st.sampled_from([None, 1]),
    separators=st.sampled_from([(",", ":"), (", ", ": "), (" ,  ", " : ")]),
)
def test_element_spans_are_the_spans_the_scanner_finds(
    elements: list[Any], indent: int | None, separators: tuple[str, str]
) -> None:
    raw = json.dumps({"k": [0], "a": elements}, indent=indent, separators=separators)
    array = value_at(raw, ("a",))
    assert isinstance(array, LazyArray)
    wanted = range(len(elements) + 1)
    fast = json_view._element_spans(array, raw, wanted)
    slow = json_view._locate_spans(raw, [("a", i) for i in wanted])
    assert slow is not None
    assert {("a", i): span for i, span in fast.items()} == slow
    for i, (start, end) in fast.items():
        assert json.loads(raw[start:end]) == elements[i]

"""Bytes a tool returned reach the layer as their Python repr; they are shown as bytes."""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from langchain_result_layer import Principal, ResultLayer


def test_bytes_repr_gets_the_binary_view_and_the_bytes_are_stored() -> None:
    data = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 400
    layer = ResultLayer(context_window=16_000, max_result_tokens=500, store="memory")
    msg = layer.process_tool_message(ToolMessage(repr(data), tool_call_id="c1", name="img"))
    view = ResultLayer.view_of(msg)
    assert view is not None
    assert view.kind == "binary"
    assert "\\x00\\x01" not in str(msg.content)
    assert layer.store is not None
    assert view.record_id is not None
    stored = layer.store.read(view.record_id, principal=Principal())
    assert stored.data == data


def test_text_that_only_looks_like_a_repr_stays_text() -> None:
    layer = ResultLayer(context_window=16_000, max_result_tokens=500, store="memory")
    text = "b'" + "not really bytes " * 500 + "' and more"
    msg = layer.process_tool_message(ToolMessage(text, tool_call_id="c1", name="t"))
    view = ResultLayer.view_of(msg)
    assert view is not None
    assert view.kind != "binary"
